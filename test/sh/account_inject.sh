#!/bin/bash
# Credentials kept outside under the account provider: an injected entry's copy in the
# closed account's private home holds a placeholder; the session's proxy (in the host)
# puts the real token in the header for the entry's host only, which accepts it; another
# listed host gets the placeholder; no process the closed account runs holds the token.
. "$(dirname "$0")/../account_lib.sh"
PY=/usr/bin/python3
command -v openssl >/dev/null && command -v curl >/dev/null ||
	{ echo "# needs openssl and curl"; done_testing; exit 0; }
W=$T/inject
mkdir -p "$W"
. "$ROOT/test/inject_certs.sh"
inject_certs "$W" || { echo "Bail out! cannot make the test's certificates"; exit 255; }
chmod 755 "$W"
TOKEN=owstest_$(openssl rand -hex 24)
SERVERS=()
for name in injected other; do
	$PY "$ROOT/test/helpers/inject_server.py" "$W/srv.pem" "$W/srv.key" "$W/$name.log" \
		"$W/$name.port" "$TOKEN" >/dev/null 2>&1 &
	SERVERS+=($!)
	for _ in $(seq 100); do [ -s "$W/$name.port" ] && break; sleep 0.05; done
done
trap 'kill "${SERVERS[@]}" 2>/dev/null; teardown' EXIT
PA=$(cat "$W/injected.port") PB=$(cat "$W/other.port")

runuser -u "$PERSON" -- sh -c "mkdir -p ~/.config/owstool ~/work && umask 077 &&
	printf '%s\n' '$TOKEN' > ~/.config/owstool/token"
cp -p "$CONF" "$T/config.before-inject"
printf '%s\n' "[credentials]" "enable = owstool" "inject = owstool" "upstream_ca = $W/ca.pem" \
	"[credential owstool]" "path = .config/owstool/token" "kind = credential" \
	"hosts = localhost:$PA" "env = OWSTOOL_TOKEN_FILE" >>"$CONF"
cp "$W/ca.pem" "$PHOME/work/test-ca.pem"
chown "$PERSON" "$PHOME/work/test-ca.pem"

as_person "$BIN/owsbx" run --provider account --net allowlist --allow-site "127.0.0.1:$PB" \
	--rw "$PHOME/work" -- /bin/sh -c '
	t=$(cat "$OWSTOOL_TOKEN_FILE")
	echo "ph=$t"
	echo "user=$(id -un)"
	echo "a=$(curl -sS -H "Authorization: Bearer $t" https://localhost:'$PA'/ 2>&1)"
	echo "b=$(curl -sS --cacert '$PHOME'/work/test-ca.pem -H "Authorization: Bearer $t" https://127.0.0.1:'$PB'/ 2>&1)"
	env > '$PHOME'/work/env.txt
	cp -r "$HOME" '$PHOME'/work/home-copy
	touch '$PHOME'/work/ready
	for i in $(seq 200); do [ -e '$PHOME'/work/go ] && break; sleep 0.05; done' \
	>"$W/run.out" 2>&1 &
RUN=$!
for _ in $(seq 400); do [ -e "$PHOME/work/ready" ] && break; sleep 0.05; done
# every process the closed account runs now, read as root
hits=$($PY "$ROOT/test/helpers/memscan.py" uid "$(id -u "$CLOSED")" "$TOKEN")
touch "$PHOME/work/go"
wait "$RUN"
rc=$?
out=$(cat "$W/run.out")
kv() { sed -n "s/^$1=//p" <<<"$out"; }
check "a session with an injected login runs as the closed account ($(kv user))" \
	[ "$rc" = 0 ] && [ "$(kv user)" = "$CLOSED" ]
[ "$rc" = 0 ] || diag <<<"$out"
ph=$(kv ph)
check "its copy holds a placeholder of the token's length, not the token" \
	[ "${#ph}" = "${#TOKEN}" ] && [ "$ph" != "$TOKEN" ]
check "the injected host accepts: the proxy put the real token in" [ "$(kv a)" = accepted ]
check "another listed host is sent the placeholder, and refuses it" [ "$(kv b)" = refused ] &&
	grep -qF "\"Bearer $ph\"" "$W/other.log"
read -r nproc nhits <<<"$hits"
check "the memory of the closed account's $nproc processes holds no token" \
	[ "${nproc:-0}" -ge 2 ] && [ "$nhits" = 0 ]
check "no variable inside holds it" sh -c "! grep -qF -- '$TOKEN' '$PHOME/work/env.txt'"
check "no file of the private home holds it" sh -c "! grep -rqF -- '$TOKEN' '$PHOME/work/home-copy'"
check "the trust bundle is in the private home" test -s "$PHOME/work/home-copy/.owsandbox/ca-bundle.pem"
check "nothing of the session is left in sandboxes/" sh -c "[ -z \"\$(ls -A '$T/state/sandboxes')\" ]"

# The attacks of inject.sh on the injected tunnel, from inside the closed account: framing
# (bare LF/CR, CL/TE variants), Host/URL/SNI naming another host (test/helpers/inject_attack.py).
mkdir -p "$PHOME/work/attacks"
cp "$ROOT/test/helpers/inject_attack.py" "$PHOME/work/attack.py"
chown -R "$PERSON" "$PHOME/work/attacks" "$PHOME/work/attack.py"
: >"$W/injected.log"
as_person "$BIN/owsbx" run --provider account --net allowlist --rw "$PHOME/work" -- \
	/usr/bin/python3 "$PHOME/work/attack.py" "$PHOME/work/attacks" "$PA" >"$W/attack.out" 2>&1
A=$PHOME/work/attacks
for a in lf_head_end lf_length cr_length cl_te te_twice te_list te_space_name cl_twice \
	host_other host_port host_twice url_other; do
	check "account: $a is refused with a 400 inside TLS" grep -q "^HTTP/1.1 400 " "$A/$a"
done
check "account: a TLS hello naming another host is refused" grep -q "^tls-refused" "$A/sni_other"
check "account: a well-formed request still gets the token in" grep -q "accepted" "$A/plain"
check "account: the host never got the token outside the header" \
	sh -c "! $PY -c 'import json,sys; [print(json.loads(l)[\"body\"]) for l in open(sys.argv[1])]' '$W/injected.log' | grep -qF -- '$TOKEN'"
rm -rf "$PHOME/work"
cp -p "$T/config.before-inject" "$CONF"
done_testing
