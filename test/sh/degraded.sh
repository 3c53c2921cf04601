#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# When the kernel cannot give what the wall needs. The missing kernel features are simulated by
# a seccomp filter put on owsbx itself before it starts (as the person, test/helpers/without.py):
# no Landlock (its three system calls fail with ENOSYS, as on a kernel built without it),
# Landlock built in but left out of lsm= at boot (EOPNOTSUPP, what such a kernel answers), no
# seccomp (seccomp(2) and prctl(PR_SET_SECCOMP)), no new namespaces at all (unshare, clone3,
# clone with CLONE_NEW*), no user namespace (only CLONE_NEWUSER refused, as
# user.max_user_namespaces=0 and Docker's default profile do).
#  - Without Landlock or seccomp the session is refused (70) with the reason, and never runs.
#  - Without user namespaces (either of the last two) the landlock provider runs in the host's
#    namespaces with Landlock and seccomp alone: the command runs, the wall holds (home
#    unreadable, agent unreachable, inet sockets refused, daemons end with the session), and
#    every event says "enforcement": "partial" with each promise kept only in part, as
#    `owsbx report` does; what cannot be kept (allowlist) is refused, naming what to do.
# The direct provider, asked for by name, still runs and says so.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
. "$OWSTEST_DIR/relay.sh"
owstest_user_setup

W=$TU_WORK
WITHOUT=$OWSTEST_DIR/helpers/without.py
without() { as_user "$PY" "$WITHOUT" "$@"; }
EVD=$(mktemp -d /tmp/owstest-ev.XXXX)
owstest_remove_at_exit "$EVD"
chown "$TU_UID:$TU_GID" "$EVD"

# control: the filter itself does what it says, outside the sandbox
without namespaces -- /usr/bin/unshare -Ur true 2>/dev/null
isnt "$?" 0 "control: under the namespaces filter, unshare -Ur fails"
without userns -- /usr/bin/unshare -Ur true 2>/dev/null
isnt "$?" 0 "control: under the userns filter, unshare -Ur fails"
if as_user /usr/bin/unshare -Ur true 2>/dev/null; then
	pass "control: without a filter, unshare -Ur works"
else
	skip "control: this kernel refuses user namespaces itself (user.max_user_namespaces=$(cat /proc/sys/user/max_user_namespaces))"
fi
without landlock -- "$PY" -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall.restype = ctypes.c_long; r = l.syscall(444, 0, 0, 1); print(r, ctypes.get_errno())' >"$TU_TMP/ll" 2>&1
is "$(cat "$TU_TMP/ll")" "-1 38" "control: under the landlock filter, landlock_create_ruleset gives ENOSYS"
as_user "$PY" -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall.restype = ctypes.c_long; print(l.syscall(444, 0, 0, 1))' >"$TU_TMP/ll" 2>&1
like "$(cat "$TU_TMP/ll")" '^[1-9][0-9]*$' "control: without the filter, the Landlock ABI is $(cat "$TU_TMP/ll")"

for what in landlock landlock-off seccomp namespaces userns; do
	as_user rm -f "$W/ran" "$EVD/ev"
	without "$what" -- "$OWSBX" run --events "$EVD/ev" --rw "$W" -- "$PY" -c "$PROBE" \
		"create $W/ran" "read $TU_HOME/.bashrc" "connect_unix $TU_AGENT_SOCK" "socket inet stream" \
		"socket inet6 dgram" "read $TU_HOME/.ssh/id_ed25519" >"$TU_TMP/out" 2>"$TU_TMP/err" </dev/null
	rc=$?
	mapfile -t R <"$TU_TMP/out"
	case $what in
	landlock | landlock-off | seccomp)
		is "$rc" 70 "without $what: the session is refused (70)"
		not_ok "without $what: the command did not run" test -e "$W/ran"
		like "$(cat "$TU_TMP/err")" "^owsbx: " "without $what: owsbx says why: $(head -1 "$TU_TMP/err")"
		;;
	*)
		is "$rc" 0 "without $what: the landlock provider runs in the host's namespaces (rc $rc)"
		[ "$rc" = 0 ] || diag "$(cat "$TU_TMP/err")"
		is "${R[0]}" OK "without $what: the command ran"
		is_one_of "${R[1]}" "EACCES ENOENT" "without $what: ~/.bashrc still unreadable (${R[1]})"
		is_one_of "${R[2]}" "EPERM EACCES ENOENT" "without $what: the agent still unreachable (${R[2]})"
		is "${R[3]}" EPERM "without $what: inet sockets still refused (${R[3]})"
		is "${R[4]}" EPERM "without $what: inet6 sockets still refused (${R[4]})"
		is_one_of "${R[5]}" "EACCES ENOENT" "without $what: the key still unreadable (${R[5]})"
		like "$(grep '"event": \?"spawn"' "$EVD/ev")" '"enforcement": ?"partial"' \
			"without $what: the spawn event says enforcement partial"
		like "$(grep '"event": \?"spawn"' "$EVD/ev")" '"partial": ?\[\{"promise": ?"files.outside_metadata", ?"why": ?"no mount namespace' \
			"without $what: ... and lists each promise kept in part, with why"
		;;
	esac
	is "$(owstest_session_dirs)" "" "without $what: no session folder left"
done

# Without user namespaces: what else still holds, and what is said.
sbx_nouserns() { without userns -- "$OWSBX" "$@" </dev/null; }

sbx_nouserns verify --rw "$W" >"$TU_TMP/out" 2>&1
is "$?" 0 "without user namespaces: verify passes"
like "$(cat "$TU_TMP/out")" '"signal to the session.s init refused"' "... and proves init out of the commands' reach"

sbx_nouserns report --json >"$TU_TMP/report" 2>&1
row() { "$PY" -c 'import json, sys
for c in json.load(open(sys.argv[1]))["capabilities"]:
    if c["name"] == sys.argv[2]:
        print(c["status"], c["why"])' "$TU_TMP/report" "$1"; }
like "$(row provider.landlock)" '^partial .*user namespace' "report: provider.landlock partial, and why: $(row provider.landlock | cut -c1-80)"
like "$(row network.none)" '^enforced ' "report: network.none enforced"
like "$(row network.allowlist)" '^unavailable ' "report: network.allowlist unavailable"
like "$(row files.git_guard)" '^partial no mount namespace' "report: files.git_guard partial, with the reason"
like "$(row unix_sockets.outside)" '^enforced seccomp' "report: unix_sockets.outside enforced by seccomp"
like "$(row files.outside_metadata)" '^partial ' "report: files.outside_metadata partial"
like "$(row files.read_only_channels)" '^partial .*no command.s opens are made by its reaper' \
	"report: files.read_only_channels partial: no reaper makes the opens"
# The same reasons on the events as in the report.
why=$(row files.git_guard | cut -d' ' -f2-)
grep -qF "\"why\": \"$why\"" "$EVD/ev" || grep -qF "\"why\":\"$why\"" "$EVD/ev"
is "$?" 0 "the spawn event's reason for files.git_guard is the report's"

out=$(sbx_nouserns run --net allowlist --rw "$W" -- true 2>&1)
is "$?" 70 "without user namespaces: --net allowlist is refused (70)"
like "$out" "network namespace.*account provider" "... naming what to do: $(head -1 <<<"$out" | cut -c1-70)"

out=$(sbx_nouserns run --net open --rw "$W" -- "$PY" -c "$PROBE" "socket inet stream" "socket unix stream" 2>&1)
is "$out" "OK
EPERM" "without user namespaces: --net open runs, inet sockets allowed, unix ones refused"

# Daemons end with the session, also when the host is killed.
as_user rm -f "$W/up"
without userns -- "$OWSBX" run --rw "$W" -- sh -c "(setsid sleep 300 &) ; nohup sleep 301 >/dev/null 2>&1 &
	touch '$W/up'; sleep 302" >/dev/null 2>&1 </dev/null &
job=$!
for _ in $(seq 200); do [ -e "$W/up" ] && break; sleep 0.05; done
ok "control: the session started its daemons" test -e "$W/up"
host=$(session_host "$TU_UID" "owsbx run --rw $W -- sh -c")
[ -n "$host" ] && kill -KILL "$host"
left=$(sleepers_left "$TU_UID")
is "$left" "" "without user namespaces, after SIGKILL of the host: no process of the session is left"
wait "$job" 2>/dev/null
sbx_nouserns run --rw "$W" -- true
is "$(owstest_session_dirs)" "" "... and the next session removes the private folder it left"

# Without user namespaces, the run call's timeout from a C host (test/sh/run_host.c, its
# timeout tests): no PID namespace holds a call's processes together, its reaper does; the
# timeout ends the daemons a command started (setsid, double fork, nohup) and no other call's.
if command -v cc >/dev/null && cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" \
	-I"$OWSTEST_ROOT/test/unit" -o "$TU_BIN_DIR/run_host" "$OWSTEST_ROOT/test/sh/run_host.c" \
	"$OWSTEST_ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread 2>"$TU_TMP/cc.err"; then
	chmod 0755 "$TU_BIN_DIR/run_host"
	AS_USER_TIMEOUT=150 AS_USER_CWD=$W without userns -- "$TU_BIN_DIR/run_host" landlock "$W" - \
		timeout timeout_tree daemon </dev/null >"$TU_TMP/host.tap" 2>"$TU_TMP/host.err"
	rc=$?
	relay_tap "$TU_TMP/host.tap" pass fail skip
	is "$rc" 0 "without user namespaces: the run host exits 0 (no test failed)"
	[ "$rc" = 0 ] || diag "$(tail -5 "$TU_TMP/host.err")"
else
	skip "without user namespaces: the run host: no C compiler or no libowsandbox.a"
fi

# verify and report say so
without landlock -- "$OWSBX" verify >"$TU_TMP/out" 2>&1 </dev/null
is "$?" 70 "without Landlock: verify does not pass (70)"
without landlock -- "$OWSBX" report >"$TU_TMP/out" 2>&1 </dev/null
row=$(grep -i '^landlock.filesystem' "$TU_TMP/out")
like "$row" "unavailable" "without Landlock: report says landlock.filesystem unavailable"
like "$row" "CONFIG_SECURITY_LANDLOCK" "without Landlock (ENOSYS): the row names the kernel option to build with"
without landlock-off -- "$OWSBX" report >"$TU_TMP/out" 2>&1 </dev/null
row=$(grep -i '^landlock.filesystem' "$TU_TMP/out")
like "$row" "unavailable.*not enabled at boot.*add landlock to the kernel's lsm= boot parameter" \
	"Landlock off at boot (EOPNOTSUPP): the row says to add landlock to lsm="
# the list to extend: securityfs's, else the lsm= of the kernel's command line
lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)
[ -n "$lsm" ] || lsm=$(sed 's/ -- .*//' /proc/cmdline | tr ' ' '\n' | sed -n 's/^lsm=//p' | tail -1)
if [ -n "$lsm" ]; then
	like "$row" "lsm=$lsm,landlock" "... with the current list ($lsm) and landlock added"
else
	like "$row" "/sys/kernel/security/lsm" "... and where the current list is (no securityfs, no lsm= at boot)"
fi

# direct, by name, still runs and says so
without landlock -- "$OWSBX" run --provider direct --events "$EVD/evd" -- /bin/true </dev/null
is "$?" 0 "without Landlock: --provider direct still runs"
like "$(cat "$EVD/evd" 2>/dev/null)" '"enforcement": ?"none"' "and its events say enforcement none"

owstest_check_clean
done_testing
