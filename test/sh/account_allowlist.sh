#!/bin/bash
# allowlist on the account provider: the closed account, in a network namespace of its
# own whose one way out is the session's proxy, listening there as under landlock. A listed
# site answers through it; an unlisted one gets the proxy's 403; a program that ignores
# the proxy variables reaches nothing; the proof reaches the proxy.
. "$(dirname "$0")/../account_lib.sh"
PY=/usr/bin/python3

# An upstream on the host's loopback, outside the proxy range: the account may not
# reach it directly, only through the proxy.
$PY - "$T" <<'UPSTREAM_PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + "/up", "w").write("%d\n" % s.getsockname()[1])
body = b"OWSTEST_ACCOUNT_UPSTREAM\n"
while True:
    c, _ = s.accept()
    try:
        c.settimeout(2); c.recv(4096)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    c.close()
UPSTREAM_PY
UPSTREAM=$!
trap 'kill $UPSTREAM 2>/dev/null; teardown' EXIT
for _ in $(seq 50); do [ -s "$T/up" ] && break; sleep 0.1; done
read -r UP <"$T/up"

out=$(owsbx verify --provider account --net allowlist 2>&1)
check "the closed account's allowlist proof passes" grep -q '"passed": true' <<<"$out"
check "it reaches the proxy, handed into its own network" \
	grep -q '"proxy reachable on 127.0.0.1 port' <<<"$out"

out=$(owsbx run --provider account --net allowlist --allow-site "localhost:$UP" -- /bin/sh -c "
	echo proxy=\$http_proxy
	echo user=\$(id -un)
	echo via=\$(curl -s -m 5 http://localhost:$UP/)
	echo refused=\$(curl -s -m 5 -o /dev/null -w '%{http_code}' http://owstest-refused.invalid/)
	echo direct=\$(curl -s -m 5 --noproxy '*' http://127.0.0.1:$UP/ >/dev/null 2>&1; echo \$?)" 2>&1)
kv() { sed -n "s/^$1=//p" <<<"$out"; }
check "commands run as the closed account ($(kv user))" [ "$(kv user)" = "$CLOSED" ]
check "http_proxy points into 47800-47899 ($(kv proxy))" \
	grep -Eq '^http://127\.0\.0\.1:478[0-9][0-9]$' <<<"$(kv proxy)"
check "a listed site answers through the proxy" [ "$(kv via)" = OWSTEST_ACCOUNT_UPSTREAM ]
check "an unlisted site gets the proxy's 403" [ "$(kv refused)" = 403 ]
check "a direct connection is refused (own network) (curl exit $(kv direct))" \
	[ "$(kv direct)" = 7 ]
check "owsbx names the refused site and how to allow it" \
	grep -q "refused owstest-refused.invalid:80" <<<"$out"

# Two calls at once in one session, through the library (test/sh/proxy_calls_host.c): the one
# whose command's child is refused a site is told so, the quiet one beside it is not.
cc -std=c11 -O2 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/lib" -o "$BIN/proxy_calls_host" \
	"$ROOT/test/sh/proxy_calls_host.c" "$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread
chmod 0755 "$BIN/proxy_calls_host"
as_person mkdir -p "$PHOME/calls"
out=$(as_person env OWSTEST_PROVIDER=account "$BIN/proxy_calls_host" calls "$UP" "$PHOME/calls" 2>&1)
check "the host runs two calls at once in one account session" [ "$(kv loud_exit)" = 0 ]
[ "$(kv loud_exit)" = 0 ] || diag <<<"$out"
check "the loud call's blocked list and exit event name its site" \
	[ "$(kv loud_blocked) $(kv loud_exit_blocked)" = "owstest-loud-only.invalid owstest-loud-only.invalid" ]
check "the quiet call's name none, though the refusal came while it ran" \
	[ "$(kv quiet_blocked)$(kv quiet_exit_blocked)" = "" ]
check "the quiet call reached its listed site" [ "$(as_person cat "$PHOME/calls/quiet.code")" = 200 ]
check "each call's proxy variables point at a port of its own" \
	[ "$(as_person cat "$PHOME/calls/quiet.proxy")" != "$(as_person cat "$PHOME/calls/loud.proxy")" ]
rm -f "$BIN/proxy_calls_host" # the setup's files are compared with what it found
done_testing
