#!/bin/bash
# Credentials kept outside (landlock): an entry marked `inject` reaches the sandbox as a
# placeholder of the secret's length; for the entry's host only, the session's proxy ends
# TLS with the session's CA (which the tools inside trust through SSL_CERT_FILE and the
# like), puts the real token in the Authorization header, and speaks TLS again to the host,
# verifying it (here a throwaway HTTPS server on loopback with a CA of the test's own).
# The host accepts the real token only; a placeholder sent to another listed host, in a
# body, or echoed back stays a placeholder; the token is in no file, variable or process
# memory of the sandbox; entries that cannot be injected are refused with the reason.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
command -v openssl >/dev/null && command -v curl >/dev/null || skip_all "needs openssl and curl"
owstest_user_setup
H=$TU_HOME
W=$(mktemp -d /tmp/owstest-inject.XXXXXX)
owstest_remove_at_exit "$W"
chmod 755 "$W"

. "$OWSTEST_DIR/inject_certs.sh"
inject_certs "$W" || bail_out "cannot make the test's certificates"
TOKEN=owstest_$(openssl rand -hex 24)

serve() { # NAME: its port lands in $W/NAME.port
	"$PY" "$OWSTEST_ROOT/test/helpers/inject_server.py" "$W/srv.pem" "$W/srv.key" \
		"$W/$1.log" "$W/$1.port" "$TOKEN" >/dev/null 2>&1 &
	owstest_root_pid $!
	for _ in $(seq 100); do [ -s "$W/$1.port" ] && break; sleep 0.05; done
}
serve injected
serve other
PA=$(cat "$W/injected.port")
PB=$(cat "$W/other.port")
[ -n "$PA" ] && [ -n "$PB" ] || bail_out "the test's HTTPS servers did not start"

as_user /bin/sh -c "mkdir -p $H/.config/owstool && umask 077 && printf '%s\n' '$TOKEN' >$H/.config/owstool/token &&
	printf 'notes: the token is %s\n' '$TOKEN' >$H/.config/owsnotes.txt"
cfg=$TU_BIN_DIR/inject.ini
write_cfg() { printf '%s\n' "$@" >"$cfg"; chmod 0644 "$cfg"; }
entry=("[credential owstool]" "path = .config/owstool/token" "kind = credential"
	"hosts = localhost:$PA" "env = OWSTOOL_TOKEN_FILE" "lets = call the owstool API")
# owsnotes, shared as a copy, holds the token too: it must not take it in
notes=("[credential owsnotes]" "path = .config/owsnotes.txt" "kind = configuration")
write_cfg "[credentials]" "enable = owstool, owsnotes" "inject = owstool" "upstream_ca = $W/ca.pem" \
	"${entry[@]}" "${notes[@]}"
AS_USER_ENV=("OWSBX_CONFIG=$cfg")
OUT=$TU_WORK/out
as_user mkdir -p "$OUT"
# what the sandbox needs of the test's files, in its read-write folder
cp "$W/ca.pem" "$TU_WORK/test-ca.pem"

# The memory probe: keeps what it sent and got in memory, says so, and waits for the host
# to have looked at every process of the sandbox.
cat >"$TU_WORK/probe.py" <<'PYEOF'
import os, sys, time, urllib.request
out, port = sys.argv[2], sys.argv[3]
tok = open(os.environ["OWSTOOL_TOKEN_FILE"]).read().strip()
req = urllib.request.Request("https://localhost:%s/echo" % port,
                             headers={"Authorization": "Bearer " + tok})
kept = urllib.request.urlopen(req, timeout=20).read()
open(out + "/probe.txt", "wb").write(kept)
open(out + "/ready", "w").close()
for _ in range(600):
    if os.path.exists(out + "/go"):
        break
    time.sleep(0.05)
PYEOF
chmod 644 "$TU_WORK/probe.py" "$TU_WORK/test-ca.pem"

inside='
t=$(cat "$OWSTOOL_TOKEN_FILE")
echo "ph=$t"
echo "a=$(curl -sS -H "Authorization: Bearer $t" https://localhost:'$PA'/ 2>&1)"
echo "echo=$(curl -sS -H "Authorization: Bearer $t" https://localhost:'$PA'/echo 2>&1)"
echo "post=$(curl -sS -H "Authorization: Bearer $t" --data "Authorization: Bearer $t" https://localhost:'$PA'/post 2>&1)"
echo "upg=$(curl -sS -H "Upgrade: websocket" -H "Authorization: Bearer $t" https://localhost:'$PA'/ 2>&1)"
echo "b=$(curl -sS --cacert '$TU_WORK'/test-ca.pem -H "Authorization: Bearer $t" https://127.0.0.1:'$PB'/ 2>&1)"
echo "bundle=$SSL_CERT_FILE"
echo "node=$NODE_EXTRA_CA_CERTS"
echo "notes=$(cat "$HOME/.config/owsnotes.txt")"
env >'$OUT'/env.txt
cp -r "$HOME" '$OUT'/home-copy 2>/dev/null
cat /proc/1/environ >'$OUT'/init-environ 2>/dev/null && echo "init_env=read" || echo "init_env=refused"
head -c 1 /proc/1/mem >/dev/null 2>&1 && echo "init_mem=read" || echo "init_mem=refused"
/usr/bin/python3 '$TU_WORK'/probe.py owstest-inject-probe '$OUT' '$PA' && echo probe=done'
as_user_bg "$OWSBX" run --net allowlist --allow-site "127.0.0.1:$PB" --rw "$TU_WORK" -- \
	/bin/sh -c "$inside" >"$W/run.out" 2>"$W/run.err" </dev/null
RUN_PID=$AS_USER_PID
for _ in $(seq 600); do [ -e "$OUT/ready" ] && break; kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.05; done
ok "the sandbox's probe got its answer through the proxy" [ -e "$OUT/ready" ]

# Every process of the sandbox (its PID namespace), init included, read as root.
probe=""
for p in $(pgrep -f "probe.py owstest-inject-probe"); do
	[ "$(readlink "/proc/$p/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] && probe=$p
done
isnt "$probe" "" "the probe runs in a PID namespace of its own"
scan=$("$PY" "$OWSTEST_ROOT/test/helpers/memscan.py" ns "$probe" "$TOKEN")
touch "$OUT/go"
wait "$RUN_PID"
RUN_RC=$?
R=$(cat "$W/run.out")
kv() { sed -n "s/^$1=//p" <<<"$R"; }
is "$RUN_RC" 0 "a session with an injected login runs" || diag "$R" "$(cat "$W/run.err")"
read -r nproc hits <<<"$scan"
ok "the memory of the sandbox's $nproc processes was read (init, shell, probe...)" [ "${nproc:-0}" -ge 3 ]
is "$hits" 0 "no process of the sandbox holds the token in its memory"

ph=$(kv ph)
is "${#ph}" "${#TOKEN}" "the copy holds a placeholder of the token's length"
isnt "$ph" "$TOKEN" "and not the token"
like "$ph" '^owstest_[A-Za-z0-9]+$' "the placeholder keeps the token's type prefix"
is "$(kv a)" "accepted" "the host accepts the request: the proxy put the real token in"
got=$("$PY" -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["path"] == "/" and json.loads(l)["auth"] == "Bearer " + sys.argv[2]))' "$W/injected.log" "$TOKEN")
is "$got" 1 "the injected host saw the real token in the header"
is "$(kv echo)" "you sent: Bearer $ph" "a host that echoes the header hands back the placeholder, not the token"
is "$(kv post)" "posted" "a request with a body goes through"
body=$("$PY" -c 'import json,sys; print([json.loads(l)["body"] for l in open(sys.argv[1]) if json.loads(l)["path"] == "/post"][0])' "$W/injected.log")
is "$body" "Authorization: Bearer $ph" "a placeholder in the body stays a placeholder"
is "$(kv upg)" "owsbx proxy: a protocol upgrade inside an injected tunnel in a request to localhost" \
	"a request the proxy will not frame gets its 400 inside TLS, and the host never sees it"
is "$(kv b)" "refused" "another listed host refuses the placeholder"
bauth=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["auth"])' "$W/other.log")
is "$bauth" "Bearer $ph" "and was sent the placeholder, never the token"
like "$(kv bundle)" "/home/.owsandbox/ca-bundle.pem\$" "SSL_CERT_FILE names the session's trust bundle"
like "$(kv node)" "/home/.owsandbox/ca.pem\$" "NODE_EXTRA_CA_CERTS names the session's CA"
is "$(kv init_mem)" "refused" "init's memory cannot be read from inside"
is "$(kv notes)" "notes: the token is $ph" "another entry's copy gets the placeholder too"
unlike "$(cat "$OUT/env.txt")" "$TOKEN" "the token is in no variable of the sandbox"
is "$(grep -rlF -- "$TOKEN" "$OUT" 2>/dev/null)" "" "nor in any file of the private home (copied out whole)"
ok "the probe's answer holds the placeholder" grep -qF -- "$ph" "$OUT/probe.txt"
ok "the original is untouched" grep -qxF -- "$TOKEN" "$H/.config/owstool/token"

# A variable the host passes with the token in it (on its own command line here, so apart
# from the memory scan above: landlock's init is a copy of the host's memory).
sbx run --net allowlist --env "OWSTEST_PASSED=$TOKEN" -- /bin/sh -c 'echo "$OWSTEST_PASSED"'
isnt "$SBX_OUT" "$TOKEN" "a variable the host passes with the token in it does not carry it in"
like "$SBX_OUT" "^owstest_[A-Za-z0-9]{$((${#ph} - 8))}\$" "it carries a placeholder of the same form"

# /proc/PID/cmdline and environ of every process inside, init and the call's reaper
# included: init is a clone of the host (owsbx run here), whose command line holds the token.
cat >"$TU_WORK/procs.sh" <<'SHEOF'
out=$1
/usr/bin/python3 -c 'import time; time.sleep(60)' owstest-proc-probe &
n=0
for d in /proc/[0-9]*; do
	n=$((n + 1))
	{ tr '\0' ' ' <"$d/cmdline"; echo; } >>"$out/cmdlines" 2>/dev/null
	{ tr '\0' ' ' <"$d/environ"; echo; } >>"$out/environs" 2>/dev/null
done
tr '\0' ' ' </proc/1/cmdline >"$out/init-cmdline"
echo "$n" >"$out/nproc"
touch "$out/ready"
for _ in $(seq 600); do [ -e "$out/go" ] && break; sleep 0.05; done
kill $!
SHEOF
chmod 644 "$TU_WORK/procs.sh"
P=$OUT/procs
as_user mkdir -p "$P"
as_user_bg "$OWSBX" run --net allowlist --env "OWSTEST_PASSED=$TOKEN" --rw "$TU_WORK" -- \
	/bin/sh "$TU_WORK/procs.sh" "$P" >"$W/procs.out" 2>&1 </dev/null
RUN_PID=$AS_USER_PID
for _ in $(seq 600); do [ -e "$P/ready" ] && break; kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.05; done
# the same, read as root from outside: every process of the sandbox's PID namespace
probe=$(pgrep -f "owstest-proc-probe" | while read -r q; do
	[ "$(readlink "/proc/$q/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] && echo "$q"; done | head -1)
rootseen=0 roothits=0
if [ -n "$probe" ]; then
	ns=$(readlink "/proc/$probe/ns/pid")
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/ns/pid" 2>/dev/null)" = "$ns" ] || continue
		rootseen=$((rootseen + 1))
		cat "$d/cmdline" "$d/environ" 2>/dev/null | grep -qaF -- "$TOKEN" && roothits=$((roothits + 1))
	done
fi
touch "$P/go"
wait "$RUN_PID"
ok "inside, every process's command line was read ($(cat "$P/nproc" 2>/dev/null) processes)" \
	[ "$(cat "$P/nproc" 2>/dev/null || echo 0)" -ge 4 ]
is "$(grep -caF -- "$TOKEN" "$P/cmdlines" "$P/environs" | awk -F: '{s += $2} END {print s}')" 0 \
	"no process inside shows the token in its command line or environment"
unlike "$(cat "$P/cmdlines")" "--env|OWSTEST_PASSED=" "nor the host's command line at all"
like "$(cat "$P/init-cmdline")" "^owsbx-init *\$" "init's command line is its own name"
ok "as root, the sandbox's $rootseen processes were read" [ "$rootseen" -ge 4 ]
is "$roothits" 0 "none of them shows the token in its command line or environment"

# The proxy verifies the real host: without the test's CA, the host does not verify.
write_cfg "[credentials]" "enable = owstool" "inject = owstool" "${entry[@]}"
sbx run --net allowlist -- /usr/bin/python3 -c '
import os, socket, urllib.parse
p = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
s = socket.create_connection((p.hostname, p.port))
s.sendall(b"CONNECT localhost:'$PA' HTTP/1.1\r\nHost: localhost:'$PA'\r\n\r\n")
print(s.recv(4096).decode())'
like "$SBX_OUT" "502 Bad Gateway" "a host whose certificate does not verify: the CONNECT gets a 502"
like "$SBX_OUT" "does not verify" "which says why" || diag "$SBX_OUT"
lines=$(wc -l <"$W/injected.log")
is "$lines" 4 "and is never reached with one"

# Attacks on the injected tunnel, from inside. The host (Python's http.server) frames heads
# loosely, as many servers do: a request the filter framed one way and the host another
# would carry the token into a body the host keeps and serves again, here also under its
# second, listed name (127.0.0.1), whose tunnel is not scrubbed.
write_cfg "[credentials]" "enable = owstool" "inject = owstool" "upstream_ca = $W/ca.pem" "${entry[@]}"
cp "$OWSTEST_ROOT/test/helpers/inject_attack.py" "$TU_WORK/attack.py"
chmod 644 "$TU_WORK/attack.py"
as_user mkdir -p "$OUT/attacks"
: >"$W/injected.log"
t='$(cat "$OWSTOOL_TOKEN_FILE")'
sbx run --net allowlist --allow-site "127.0.0.1:$PA" --rw "$TU_WORK" -- /bin/sh -c '
/usr/bin/python3 '$TU_WORK'/attack.py '$OUT'/attacks '$PA'
a="Authorization: Bearer '"$t"'"
for e in echo-gzip gzip-always echo-chunked echo-split; do
	echo "$e=$(curl -sS --compressed -H "$a" https://localhost:'$PA'/$e 2>&1)"
done
echo "read=$(curl -sS --cacert '$TU_WORK'/test-ca.pem https://127.0.0.1:'$PA'/read 2>&1)"'
is "$SBX_RC" 0 "the attacks ran"
A=$OUT/attacks
for a in lf_head_end lf_length cr_length cl_te te_twice te_list te_space_name cl_twice; do
	like "$(head -1 "$A/$a")" "^HTTP/1.1 400 " "framing: $a is refused with a 400 inside TLS" ||
		diag "$(cat "$A/$a")"
done
like "$(cat "$A/lf_length")" "CR LF" "a bare LF: the answer says why"
like "$(cat "$A/cr_length")" "CR without LF" "a bare CR: the answer says why"
for a in host_other host_port host_twice; do
	like "$(cat "$A/$a")" "^HTTP/1.1 400 .*Host header names another host" \
		"a Host not the injected host ($a) is refused" || diag "$(cat "$A/$a")"
done
like "$(cat "$A/url_other")" "^HTTP/1.1 400 .*URL names another host" \
	"an absolute URL for another authority is refused" || diag "$(cat "$A/url_other")"
like "$(cat "$A/sni_other")" "^tls-refused" "a TLS hello naming another host (SNI) is refused" ||
	diag "$(cat "$A/sni_other")"
like "$(cat "$A/plain")" "accepted" "a well-formed request on the same path still gets the token in"
hosts=$("$PY" -c 'import json,sys; print(" ".join(sorted({json.loads(l)["host"] for l in open(sys.argv[1]) if json.loads(l)["path"] != "/read"})))' "$W/injected.log")
is "$hosts" "localhost:$PA" "the host was only ever asked for itself" || diag "$hosts"
kept=$(grep -c -F -- "$TOKEN" <(
	"$PY" -c 'import json,sys; [print(json.loads(l)["body"]) for l in open(sys.argv[1])]' "$W/injected.log"))
is "$kept" 0 "the host never got the token outside the header the entry names"
R=$SBX_OUT
like "$(kv read)" "^kept: " "what the host keeps is read back under its second name"
unlike "$(kv read)" "$TOKEN" "and holds no token"
ph_re="Bearer owstest_[A-Za-z0-9]{$((${#ph} - 8))}"
echoed_placeholder() { [ "${1#*Bearer }" != "$TOKEN" ] && [[ $1 =~ ^you\ sent:\ $ph_re$ ]]; }
for e in echo-gzip echo-chunked echo-split; do
	ok "an echo ($e) comes back with the placeholder, not the token" \
		echoed_placeholder "$(kv $e)"
done
like "$(kv gzip-always)" "compressed" "a host that compresses what was asked as identity: refused" ||
	diag "$(kv gzip-always)"
unlike "$R" "$TOKEN" "no echo hands the token in"

# What cannot be injected is refused, with the reason, before anything starts.
refused() { # DESC REGEX CONFIG-LINES...
	local desc=$1 re=$2
	shift 2
	write_cfg "$@"
	sbx run --net allowlist -- /bin/true
	isnt "$SBX_RC" 0 "$desc: refused"
	like "$SBX_ERR" "$re" "$desc: says why" || diag "$SBX_ERR"
}
refused "ssh" "cannot be injected: an SSH key signs" "[credentials]" "enable = ssh" "inject = ssh"
refused "AWS keys" "SigV4" "[credentials]" "enable = aws-credentials" "inject = aws-credentials"
refused "a wildcard host" "named exactly" "[credentials]" "enable = owstool" "inject = owstool" \
	"[credential owstool]" "path = .config/owstool/token" "hosts = *.owstool.invalid:443"
refused "inject without enable" "enable does not" "[credentials]" "inject = owstool" "${entry[@]}"
as_user /bin/sh -c "printf 'user: someone\n' >$H/.config/owstool/settings"
refused "no secret where the key says" "no secret to inject was found" "[credentials]" \
	"enable = owstool" "inject = owstool" "[credential owstool]" \
	"path = .config/owstool/settings" "hosts = localhost:$PA" "secret_key = token"
refused "a file that is not one token" "not one token" "[credentials]" "enable = owstool" \
	"inject = owstool" "[credential owstool]" "path = .config/owstool/settings" "hosts = localhost:$PA"
owstest_check_clean "after the injected sessions"
done_testing
