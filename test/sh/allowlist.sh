#!/bin/bash
# allowlist on the landlock provider, as the throwaway person: the only way out is the
# session's proxy, reached through a listener in the sandbox's own network. A listed
# site answers (curl, python, git's http client read the proxy variables); an unlisted
# one gets a 403 naming it and shows up in the exit event and on stderr; a program that
# ignores the proxy variables reaches nothing (TCP, UDP, IPv6, DNS, the host's loopback);
# a site added to a running session opens at once; a root host works too.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

TOKEN=OWSTEST_UPSTREAM_$(rand_hex 4)
tcp_server "$TOKEN" || bail_out "no upstream server"
UP=$SRV_PORT
EV=$(mktemp -d /tmp/owstest-al.XXXXXX)
owstest_remove_at_exit "$EV"
chown "$TU_UID:$TU_GID" "$EV"

sbx run --net allowlist --allow-site "localhost:$UP" --events "$EV/ev" -- /bin/sh -c "
	echo proxy=\$http_proxy
	echo curl=\$(curl -s -m 5 http://localhost:$UP/)
	echo py=\$($PY -c 'import urllib.request as u; print(u.urlopen(\"http://localhost:$UP/\", timeout=5).read().decode().strip())')
	echo refused=\$(curl -s -m 5 http://owstest-refused.invalid/)
	echo code=\$(curl -s -m 5 -o /dev/null -w '%{http_code}' http://owstest-refused.invalid/)"
kv() { sed -n "s/^$1=//p" <<<"$SBX_OUT"; }
is "$SBX_RC" 0 "an allowlist session runs" || diag "$(sbx_diag)"
like "$(kv proxy)" '^http://127\.0\.0\.1:478[0-9][0-9]$' "http_proxy points at the session's proxy in 47800-47899"
is "$(kv curl)" "$TOKEN" "curl reaches a listed site through the proxy"
is "$(kv py)" "$TOKEN" "python's urllib too"
is "$(kv code)" 403 "an unlisted site is refused with a 403"
like "$(kv refused)" "owstest-refused.invalid" "whose body names the site"
like "$SBX_ERR" "refused owstest-refused.invalid:80 .*--allow-site owstest-refused.invalid:80\$" \
	"owsbx says which site was refused and how to allow it"
blocked=$(grep '"event":"exit"' "$EV/ev" | "$PY" -c 'import json,sys; print(",".join(b["host"] for b in json.loads(sys.stdin.read()).get("blocked", [])))')
is "$blocked" "owstest-refused.invalid" "the exit event lists the refused site"

# A listed name that resolves to an address on this machine is refused unless listed with
# +private, and the hint says so (the name as listed would change nothing).
NAME=$(hostname)
ADDR=$(getent ahostsv4 "$NAME" | awk 'NR == 1 {print $1}')
if [[ "$ADDR" =~ ^(127|10)\. || "$ADDR" =~ ^192\.168\. ]] && [ "$NAME" != localhost ]; then
	sbx run --net allowlist --allow-site "$NAME:$UP" --events "$EV/ev2" -- /bin/sh -c "
		curl -s -m 5 http://$NAME:$UP/"
	like "$SBX_OUT" "resolves to $ADDR.*--allow-site $NAME:$UP\+private" \
		"a listed name resolving to $ADDR: the 403 asks for $NAME:$UP+private"
	like "$SBX_ERR" "refused $NAME:$UP .*private address.*--allow-site $NAME:$UP\+private\$" \
		"owsbx's report asks for $NAME:$UP+private, not the name already listed"
	allow=$(grep '"event":"exit"' "$EV/ev2" | "$PY" -c 'import json,sys; print(",".join(b["allow"] for b in json.loads(sys.stdin.read()).get("blocked", [])))')
	is "$allow" "$NAME:$UP+private" "the exit event's blocked entry gives the pattern to allow"
	sbx run --net allowlist --allow-site "$NAME:$UP+private" -- curl -s -m 5 "http://$NAME:$UP/"
	is "$SBX_OUT" "$TOKEN" "control: listed with +private, the name reaches its site"
else
	skip "this machine's name ($NAME) does not resolve to a private address ($ADDR)" 4
fi

# A program that ignores the proxy variables has no network at all.
PROBE_NET='import socket, sys, errno as E
def tcp(h, p, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(3)
    try: s.connect((h, p)); return "connected"
    except OSError as e: return E.errorcode.get(e.errno, str(e.errno)) if e.errno else "timeout"
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try: s.sendto(b"x", ("192.0.2.1", 53)); return "sent"
    except OSError as e: return E.errorcode.get(e.errno, str(e.errno))
def dns():
    try: socket.getaddrinfo("example.com", 443); return "resolved"
    except OSError as e: return "failed"
print("loopback=" + tcp("127.0.0.1", int(sys.argv[1])))
print("public=" + tcp("192.0.2.1", 443))
print("v6=" + tcp("::1", int(sys.argv[1]), socket.AF_INET6))
print("udp=" + udp())
print("dns=" + dns())
import os
print("proxy=" + tcp("127.0.0.1", int(os.environ["http_proxy"].rsplit(":", 1)[1])))'
# This session's own proxy port: every session has a proxy of its own.
sbx run --net allowlist --allow-site "localhost:$UP" -- "$PY" -c "$PROBE_NET" "$UP"
before=$(tcp_conns "$UP")
is "$(kv loopback)" ECONNREFUSED "the host's loopback server is not there (own network)"
is "$(kv public)" ENETUNREACH "a public address: no route"
is_one_of "$(kv v6)" "ECONNREFUSED ENETUNREACH EADDRNOTAVAIL" "IPv6 loopback: nothing"
is "$(kv udp)" ENETUNREACH "UDP: no route"
is "$(kv dns)" failed "no DNS inside: the proxy resolves names"
is "$(kv proxy)" connected "the proxy's port is the one way out"
is "$(tcp_conns "$UP")" "$before" "the upstream saw no direct connection"

# The proof, and a site opened for a running session without a restart.
sbx verify --net allowlist
is "$SBX_RC" 0 "the proof passes"
like "$SBX_OUT" "direct connection out refused" "and covers a direct connection out"
cp "$OWSTEST_ROOT/libowsandbox.so" "$TU_BIN_DIR/"
cp -r "$OWSTEST_ROOT/examples/python/owsandbox" "$TU_BIN_DIR/"
chmod -R u=rwX,go=rX "$TU_BIN_DIR/libowsandbox.so" "$TU_BIN_DIR/owsandbox"
AS_USER_ENV=("OWSANDBOX_LIB=$TU_BIN_DIR/libowsandbox.so" "PYTHONPATH=$TU_BIN_DIR")
out=$(as_user "$PY" -B -c "
import owsandbox
s = owsandbox.Session({'network': 'allowlist'})
cmd = ['curl', '-s', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', 'http://localhost:$UP/']
print(s.run(cmd).text)
s.allow_site('localhost:$UP')
print(s.run(cmd).text)
s.remove_site('localhost:$UP')
print(s.run(cmd).text)
print('blocked', ','.join(b.host for b in s.blocked()))
s.close()" 2>&1)
AS_USER_ENV=()
is "$(tr '\n' ' ' <<<"$out")" "403 200 403 blocked localhost " \
	"a site allowed while the session runs opens at once, and closes again"

# A shared entry brings its hosts: here a kubeconfig naming the upstream as its server.
as_user /bin/sh -c "mkdir -p '$TU_HOME/.kube' && printf 'clusters:\n- cluster:\n    server: http://localhost:$UP\n' > '$TU_HOME/.kube/config'"
cfg=$TU_BIN_DIR/kube.ini
printf '[credentials]\nenable = kubectl\n' >"$cfg"
chmod 0644 "$cfg"
AS_USER_ENV=("OWSBX_CONFIG=$cfg")
sbx run --net allowlist -- /bin/sh -c "curl -s -m 5 http://localhost:$UP/"
AS_USER_ENV=()
is "$SBX_OUT" "$TOKEN" "kubectl shared: the server its kubeconfig names is on the allow list"

# A root host (its proxy runs threads): commands still run as nobody, behind the proxy.
out=$(cd / && timeout 60 "$OWSBX" run --net allowlist --allow-site "localhost:$UP" -- \
	/bin/sh -c "id -u; curl -s -m 5 http://localhost:$UP/" 2>&1)
is "$(tr '\n' ' ' <<<"$out")" "65534 $TOKEN " "a root host's allowlist session works, as nobody"

is "$(owstest_session_dirs)" "" "nothing of the sessions is left"
ok "no process left" poll 5 owstest_no_user_procs
done_testing
