#!/bin/bash
# The host's one proxy and per-call attribution, driven through the library by a stand-in
# host (test/sh/proxy_calls_host.c) as the throwaway person, on the landlock provider:
#  - two calls at once in one allowlist session, one refused a site (by a command it
#    started), one quiet: each call's blocked list and exit event name only its own, and
#    each call's proxy variables point at a port of its own;
#  - a command that listens on the next calls' ports does not take their way out;
#  - two sessions with different lists in one host share one proxy (the host's threads do
#    not grow with the second) and do not see each other's sites or refusals;
#  - ows_session_check_site for a listed, an unlisted, a private-resolving and an @group
#    entry, and ows_session_sites_json with each entry's source;
#  - RLIMIT_NOFILE is as the host set it after opening allowlist sessions;
#  - 120 allowlist sessions open at once in one host (more than the 100 ports of
#    47800-47899), and a request through the proxy works in each.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
[ -f "$OWSTEST_ROOT/libowsandbox.a" ] || skip_all "run make first"
command -v cc >/dev/null || skip_all "no C compiler"
owstest_user_setup

HOST=$TU_BIN_DIR/proxy_calls_host
cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -I"$OWSTEST_ROOT/lib" -o "$HOST" \
	"$OWSTEST_DIR/sh/proxy_calls_host.c" "$OWSTEST_ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto \
	-lpthread || bail_out "cannot build proxy_calls_host"
chmod 0755 "$HOST"

TOKEN=OWSTEST_UPSTREAM_$(rand_hex 4)
tcp_server "$TOKEN" || bail_out "no upstream server"
UP=$SRV_PORT
kv() { sed -n "s/^$1=//p" <<<"$OUT"; }
# host ARGS...: the stand-in host as the person; OUT, ERR, RC
host() {
	AS_USER_TIMEOUT=${HOST_TIMEOUT:-120} as_user "$HOST" "$@" >"$TU_TMP/host.out" 2>"$TU_TMP/host.err" </dev/null
	RC=$?
	OUT=$(cat "$TU_TMP/host.out")
	ERR=$(cat "$TU_TMP/host.err")
}
# json_field JSON EXPR: a Python expression over j, the parsed JSON
json_field() { "$PY" -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>&1; }

# --- two calls at once, one refused, one quiet
D=$TU_WORK/calls
as_user mkdir -p "$D"
host calls "$UP" "$D"
is "$RC" 0 "the host runs two calls at once in one allowlist session"
[ "$RC" = 0 ] || diag "$OUT" "$ERR"
is "$(kv quiet_exit)" 0 "the quiet call ends well"
is "$(cat "$D/quiet.code" 2>/dev/null)" 200 "the quiet call reaches its listed site"
is "$(cat "$D/loud.code" 2>/dev/null)" 403 "the loud call's command's child is refused an unlisted site"
is "$(kv loud_blocked)" owstest-loud-only.invalid "the loud call's blocked list names its site"
is "$(kv quiet_blocked)" "" "the quiet call's blocked list is empty, though the refusal came while it ran"
is "$(kv loud_exit_blocked)" owstest-loud-only.invalid "the loud call's exit event names its site"
is "$(kv quiet_exit_blocked)" "" "the quiet call's exit event names none"
is "$(kv session_blocked)" owstest-loud-only.invalid "the session's blocked list has it"
qp=$(cat "$D/quiet.proxy" 2>/dev/null) lp=$(cat "$D/loud.proxy" 2>/dev/null)
like "$qp" '^http://127\.0\.0\.1:478(0[1-9]|[1-9][0-9])$' "a call's proxy variables point at a port of its own in 47801-47899"
isnt "$qp" "$lp" "two calls at once have two ports"
like "$(cat "$D/third.proxy" 2>/dev/null)" '^http://127\.0\.0\.1:478(0[1-9]|[1-9][0-9])$' \
	"a later call has a port of its own too"
is "$(kv third_blocked)" "" "and a blocked list of its own: empty"

# --- a command inside holds the ports the next call would get
D=$TU_WORK/squat
as_user mkdir -p "$D"
as_user tee "$D/squat.py" >/dev/null <<'PY'
import os, socket, sys, time
port = int(os.environ["http_proxy"].rsplit(":", 1)[1])
held = []
for p in (port + 1, port + 2):
    l = socket.socket()
    l.bind(("127.0.0.1", p))
    l.listen(1)
    held.append(l)
open(sys.argv[1] + "/squatting", "w").write("%d %d\n" % (port + 1, port + 2))
for _ in range(600):
    if os.path.exists(sys.argv[1] + "/squat.done"):
        break
    time.sleep(0.05)
PY
host squat "$UP" "$D"
is "$RC" 0 "a session runs a command that listens on the next calls' proxy ports"
[ "$RC" = 0 ] || diag "$OUT" "$ERR"
read -r sq1 sq2 <<<"$(kv squatted)"
np=$(cat "$D/next.proxy" 2>/dev/null)
like "$np" '^http://127\.0\.0\.1:478(0[1-9]|[1-9][0-9])$' "the next call gets a port of its own all the same ($np)"
unlike "$np" ":($sq1|$sq2)\$" "not one that the command inside holds ($sq1 $sq2)"
is "$(cat "$D/next.code" 2>/dev/null)" 200 "and reaches its listed site through it"
is "$(kv next_blocked)" owstest-next-only.invalid "and is told its own refusal"
is "$(kv squatter_blocked)" "" "the call beside it is not"

# --- two sessions in one host, different lists
NAME=$(hostname)
ADDR=$(getent ahostsv4 "$NAME" | awk 'NR == 1 {print $1}')
host two "$UP" "$NAME"
is "$RC" 0 "one host opens two allowlist sessions with different lists"
[ "$RC" = 0 ] || diag "$OUT" "$ERR"
read -r t0 t1 t2 <<<"$(kv threads)"
ok "the second session adds no thread: one proxy serves both ($t0 $t1 $t2)" [ $((t2 - t1)) -eq 0 ]
ok "the first adds the proxy's threads only ($t0 -> $t1)" [ $((t1 - t0)) -le 5 ]
is "$(kv threads_after)" "$t0" "the proxy's threads end with the last session"
read -r nf0 nf1 <<<"$(kv nofile)"
is "$nf1" "$nf0" "RLIMIT_NOFILE is as the host set it after opening allowlist sessions"
is "$(kv one_listed)" 200 "the session that lists the site reaches it"
is "$(kv two_unlisted)" 403 "the other session, which does not, is refused it by the same proxy"
is "$(kv one_blocked)" owstest-one-only.invalid "each session's blocked list has its own refusals"
is "$(kv two_blocked)" localhost "and only its own"

j=$(kv check_listed)
is "${j%% *}" 1 "check_site: a listed site is allowed"
is "$(json_field "${j#* }" 'j["allowed"], j["pattern"]')" "(True, 'localhost:$UP')" \
	"check_site names the entry that allows it"
j=$(kv check_unlisted)
is "${j%% *}" 0 "check_site: a site the session does not list is refused"
is "$(json_field "${j#* }" 'j["reason"], j["allow"], j["pattern"]')" "('not listed', 'localhost:$UP', None)" \
	"check_site says why, and what would allow it"
is "$(json_field "$(kv check_other_port | cut -d' ' -f2-)" 'j["reason"]')" "not listed" \
	"check_site: the listed host on another port is not listed"
if [[ "$ADDR" =~ ^(127|10)\. || "$ADDR" =~ ^192\.168\. ]] && [ "$NAME" != localhost ]; then
	j=$(kv check_private)
	is "${j%% *}" 0 "check_site: a listed name that resolves to $ADDR is refused"
	is "$(json_field "${j#* }" 'j["reason"], j["allow"], j["address"], j["pattern"]')" \
		"('private address', '$NAME:$UP+private', '$ADDR', '$NAME:$UP')" \
		"check_site says so, with the address and the +private entry that would allow it"
else
	skip "this machine's name ($NAME) does not resolve to a private address ($ADDR)" 2
fi
j=$(kv check_group)
is "$(json_field "${j#* }" 'j["pattern"]')" "pypi.org:443" "check_site: a host of an @group entry is matched by the group's entry"
is_one_of "$(json_field "${j#* }" '(str(j["allowed"]) + "/" + str(j.get("reason"))).replace(" ", "_")')" \
	"True/None False/does_not_resolve" \
	"and allowed, or refused only because this machine cannot resolve it (as the proxy would)"
is "$(json_field "$(kv check_case | cut -d' ' -f2-)" 'j["host"], j["pattern"]')" \
	"('owstest-two-only.example', 'owstest-two-only.example:443')" \
	"check_site normalises the host as the proxy does (case, trailing dot)"
is "$(json_field "$(kv check_added | cut -d' ' -f2-)" 'j["pattern"], j.get("reason")')" \
	"('owstest-added.example:8443', 'does not resolve')" \
	"check_site sees a site allowed while the session runs (and, as the proxy, resolves it)"
is "$(kv check_null)" OWS_EINVAL "check_site on a NULL session is OWS_EINVAL"
is "$(kv check_bad)" OWS_EINVAL "check_site on a malformed host is OWS_EINVAL"

is "$(json_field "$(kv one_sites)" '",".join(e["pattern"]+"/"+e["source"] for e in j)')" \
	"localhost:$UP/policy,$NAME:$UP/policy,owstest-added.example:8443/session" \
	"sites_json lists each entry with its source (policy, session)"
is "$(json_field "$(kv two_sites)" '",".join(e["pattern"]+"/"+e["source"] for e in j)')" \
	"owstest-two-only.example:443/policy,@package-registries/policy" \
	"the other session's sites are its own, a group as listed"
is "$(json_field "$(kv one_sites_removed)" '",".join(e["source"] for e in j)')" "policy,policy" \
	"a site removed leaves the list"

# The machine's sites and a shared login's host, from the config.
CFG=$TU_BIN_DIR/proxy_calls.ini
as_user mkdir -p "$TU_HOME/.config/owstest-tool"
as_user sh -c "echo token >'$TU_HOME/.config/owstest-tool/token'"
printf '[sandbox]\nhosts = owstest-machine.example:443\n%s\n[credentials]\nenable = owstest-tool\n[credential owstest-tool]\npath = .config/owstest-tool/token\nkind = credential\nhosts = owstest-cred.example:443\nlets = test the credential source\n' \
	"$TU_OPEN_PARTIAL" >"$CFG"
chmod 0644 "$CFG"
AS_USER_ENV=("OWSBX_CONFIG=$CFG")
host two "$UP" "$NAME"
AS_USER_ENV=()
is "$RC" 0 "sessions open with machine sites and a shared login"
[ "$RC" = 0 ] || diag "$OUT" "$ERR"
is "$(json_field "$(kv two_sites)" '",".join(e["pattern"]+"/"+e["source"] for e in j)')" \
	"owstest-two-only.example:443/policy,@package-registries/policy,owstest-machine.example:443/machine,owstest-cred.example:443/credential" \
	"sites_json: the machine's sites are 'machine', a shared login's host 'credential'"

# --- more sessions at once than the proxy range has ports
HOST_TIMEOUT=170 host many 120 "$UP"
is "$(kv opened)" 120 "120 allowlist sessions are open at once in one host"
[ "$(kv opened)" = 120 ] || diag "$(kv open_failed_at)" "$ERR"
is "$(kv requests_ok)" 120 "a request through the proxy works in each"
read -r nf0 nf1 <<<"$(kv nofile)"
is "$nf1" "$nf0" "RLIMIT_NOFILE unchanged with 120 sessions open"
read -r t0 t1 <<<"$(kv threads)"
ok "120 sessions cost the host the proxy's threads only ($t0 -> $t1)" [ $((t1 - t0)) -le 5 ]
diag "per session: $(kv per_session)"
done_testing
