#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Signals and process visibility. A process of the person's outside the sandbox cannot be
# signalled from inside (another PID namespace: ESRCH; the Landlock signal scope: EPERM) and
# survives, also `kill -9 -1` from inside. /proc inside shows only the sandbox's processes.
# Controls: outside, the person can signal its own process; inside, a child can be signalled.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

as_user_bg /bin/sleep 1000
VICTIM=$AS_USER_PID
owstest_fixture_pid "$VICTIM"
is_sleep() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ]; }
poll 5 is_sleep "$VICTIM" || fail "the victim started"
is "$(stat -c %u "/proc/$VICTIM")" "$TU_UID" "the victim is the person's"

probe_out "kill $VICTIM 0"
is "${R[0]}" OK "control: outside, the person may signal its own process"

probe -- "kill $VICTIM 15" "kill $VICTIM 9" "kill $VICTIM 0" "kill $TU_AGENT_PID 9" "stat /proc/$VICTIM"
is "$SBX_RC" 0 "the probe runs" || diag "$(sbx_diag)"
is_one_of "${R[0]}" "ESRCH EPERM" "SIGTERM to the person's process outside fails (${R[0]})"
is_one_of "${R[1]}" "ESRCH EPERM" "SIGKILL to the person's process outside fails (${R[1]})"
is_one_of "${R[2]}" "ESRCH EPERM" "even probing it with signal 0 fails (${R[2]})"
is_one_of "${R[3]}" "ESRCH EPERM" "SIGKILL to the ssh-agent fails (${R[3]})"
is "${R[4]}" ENOENT "the outside process is not in /proc inside"
ok "the victim survived" alive "$VICTIM"
ok "the agent survived" alive "$TU_AGENT_PID"

# kill -9 -1 from inside: everything the sandbox may signal; nothing outside
sbx run -- /bin/sh -c 'kill -9 -1; echo after'
ok "the victim survived kill -9 -1 from inside" alive "$VICTIM"
ok "the agent survived kill -9 -1 from inside" alive "$TU_AGENT_PID"
diag "kill -9 -1 inside: rc=$SBX_RC"

# a signal to the owsbx process itself (its pid as the host sees it)
AS_USER_CWD=/ as_user_bg "$OWSBX" run -- /bin/sh -c 'sleep 1000' </dev/null >/dev/null 2>&1
host=$AS_USER_PID
ok "that session's sleep is running" poll 10 owstest_has_proc '^sleep 1000$'
probe -- "kill $host 9" "kill $host 15"
is_one_of "${R[0]}" "ESRCH EPERM" "SIGKILL to another session's owsbx fails (${R[0]})"
is_one_of "${R[1]}" "ESRCH EPERM" "SIGTERM to another session's owsbx fails (${R[1]})"
ok "that owsbx survived" alive "$host"
kill -TERM "$host" 2>/dev/null
wait "$host" 2>/dev/null

# control inside: a child of the sandbox can be signalled
# shellcheck disable=SC2016
sbx run -- /bin/sh -c 'sleep 1000 & p=$!; kill -TERM $p && echo killed-child; wait $p; echo "rc=$?"'
mapfile -t L <<<"$SBX_OUT"
is "${L[0]}" killed-child "control: inside, a child can be signalled"
is "${L[1]}" "rc=143" "control: and it died of SIGTERM"

# /proc inside: only the sandbox's processes
# shellcheck disable=SC2016
sbx run -- "$PY" -c '
import os
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print(len(pids))
print(" ".join(open("/proc/%s/comm" % p).read().strip() for p in pids if os.path.exists("/proc/%s/comm" % p)))'
mapfile -t L <<<"$SBX_OUT"
outside=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
ok "/proc inside lists a handful of processes (${L[0]}: ${L[1]}; the machine has $outside)" test "${L[0]:-999}" -le 5
unlike "${L[1]}" "sleep|ssh-agent|systemd|init\\b" "no process of the machine or the person is visible inside"

owstest_fixture_pid "$VICTIM"
kill -KILL "$VICTIM" 2>/dev/null
wait "$VICTIM" 2>/dev/null
owstest_check_clean
done_testing
