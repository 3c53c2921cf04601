#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Processes. owsbx exits with the command's status (128+N for signal N), 71 when the
# command cannot start. Every process ends with the session: double-forked daemons, setsid,
# nohup, processes ignoring TERM/HUP, a python daemon that ignores every signal it can;
# also when owsbx itself is SIGKILLed mid-command. After that SIGKILL, the next session of
# the person removes the dead session's private folder.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK

# exit codes
sbx run -- /bin/sh -c 'exit 7'
is "$SBX_RC" 7 "the command's exit status is owsbx's"
sbx run -- /bin/true
is "$SBX_RC" 0 "true gives 0"
sbx run -- /bin/sh -c 'kill -TERM $$'
is "$SBX_RC" 143 "killed by SIGTERM gives 143"
sbx run -- /bin/sh -c 'kill -KILL $$'
is "$SBX_RC" 137 "killed by SIGKILL gives 137"
sbx run -- /nonexistent/owstest-cmd
is "$SBX_RC" 71 "a command that does not exist gives 71"
sbx run -- owstest-no-such-command-in-path
is "$SBX_RC" 71 "a command not in PATH gives 71"
as_user /bin/sh -c "printf '#!/bin/sh\necho ran\n' >'$W/noexec.sh'; chmod 0644 '$W/noexec.sh'"
sbx run --rw "$W" -- "$W/noexec.sh"
is "$SBX_RC" 71 "a command that is not executable gives 71"
unlike "$SBX_OUT" ran "and it did not run"
owstest_check_clean "the exit-code sessions"

# daemons that try to outlive the session, marked by a unique sleep length
tag=$((RANDOM % 9000 + 1000))
DAEMONS="
( sleep 1${tag}1 & ) &
( setsid sleep 1${tag}2 & ) &
nohup sleep 1${tag}3 >/dev/null 2>&1 &
( trap '' TERM HUP INT; exec sleep 1${tag}4 ) &
setsid sh -c 'trap \"\" TERM HUP INT; ( sleep 1${tag}5 & ); sleep 1${tag}6' >/dev/null 2>&1 &
$PY -c '
import os, signal, time
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
for s in range(1, 65):
    try: signal.signal(s, signal.SIG_IGN)
    except (OSError, ValueError, RuntimeError): pass
os.execvp(\"sleep\", [\"sleep\", \"1${tag}7\"])' &
"
MARKS="1${tag}1 1${tag}2 1${tag}3 1${tag}4 1${tag}5 1${tag}6 1${tag}7"
alive_marks() {
	local m n=0
	for m in $MARKS; do owstest_has_proc "^sleep $m\$" && n=$((n + 1)); done
	echo "$n"
}
all_alive() { [ "$(alive_marks)" = 7 ]; }
all_alive_all() { [ "$(alive_marks)" = 8 ]; }
none_alive() { [ "$(alive_marks)" = 0 ]; }
# inside: count the daemons in the sandbox's own /proc
COUNT_INSIDE="n=0; for m in $MARKS; do pgrep -f \"^sleep \$m\\\$\" >/dev/null && n=\$((n+1)); done; echo \$n"

# 1) the command exits normally, leaving its daemons behind
# shellcheck disable=SC2016
sbx run -- /bin/sh -c "$DAEMONS
i=0; while [ \"\$($COUNT_INSIDE)\" != 7 ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done
echo \"daemons=\$($COUNT_INSIDE)\"; exit 0"
is "$SBX_RC" 0 "the daemon-spawning command exits 0"
is "$SBX_OUT" "daemons=7" "control: all 7 daemons were running inside before the command exited"
if poll 5 none_alive; then
	pass "no daemon outlives the session after a normal exit"
else
	fail "no daemon outlives the session after a normal exit" "$(alive_marks) alive" "$(owstest_user_procs_desc)"
fi
owstest_check_clean "a normal exit with daemons"

# 2) owsbx is SIGKILLed while the command and its daemons run
as_user rm -f "$W/home-path"
as_user_bg "$OWSBX" run --rw "$W" -- /bin/sh -c "echo \"\$HOME\" >$W/home-path; $DAEMONS exec sleep 1${tag}8" \
	</dev/null >/dev/null 2>&1
host=$AS_USER_PID
MARKS_ALL="$MARKS 1${tag}8"
if poll 10 all_alive && poll 5 owstest_has_proc "^sleep 1${tag}8\$"; then
	pass "control: the command and its 7 daemons are running (seen from outside)"
else
	fail "control: the command and its 7 daemons are running (seen from outside)" "$(alive_marks) alive" "$(owstest_user_procs_desc)"
fi
is "$(cat "/proc/$host/comm" 2>/dev/null)" owsbx "the background pid is owsbx itself"
kill -KILL "$host"
wait "$host" 2>/dev/null
MARKS=$MARKS_ALL
if poll 5 none_alive; then
	pass "after SIGKILL of owsbx, nothing of the session remains within 5 s"
else
	fail "after SIGKILL of owsbx, nothing of the session remains within 5 s" "$(alive_marks) alive" "$(owstest_user_procs_desc)"
fi
ok "no process of the person left at all" poll 5 owstest_no_user_procs
dead_home=$(cat "$W/home-path" 2>/dev/null)
dead=$(dirname "$dead_home")
like "$dead_home" "^/tmp/owsandbox-$TU_UID/" "the killed session had its private folder ($dead_home)"
sbx run -- /bin/true
is "$SBX_RC" 0 "the next session opens"
if [ -n "$dead_home" ]; then
	not_ok "the next session removed the killed session's private folder" test -e "$dead"
fi

# 3) owsbx is told to stop (SIGTERM, SIGHUP, SIGINT: a closed terminal, a Ctrl-C): it
# exits, nothing of the session remains, and its private folder is removed as it exits.
for sig in TERM HUP INT; do
	as_user rm -f "$W/home-path"
	as_user_bg "$OWSBX" run --rw "$W" -- /bin/sh -c "echo \"\$HOME\" >$W/home-path; $DAEMONS exec sleep 1${tag}8" \
		</dev/null >/dev/null 2>&1
	host=$AS_USER_PID
	MARKS=$MARKS_ALL
	if poll 10 all_alive_all; then
		pass "SIG$sig: control: the command and its daemons are running"
	else
		fail "SIG$sig: control: the command and its daemons are running" "$(alive_marks) alive"
	fi
	kill -"$sig" "$host"
	if poll 10 eval '! alive "$host"'; then
		pass "SIG$sig: owsbx exits"
	else
		fail "SIG$sig: owsbx exits" "still running after 10 s"
		kill -KILL "$host"
	fi
	wait "$host" 2>/dev/null
	rc=$?
	diag "SIG$sig: owsbx exit status $rc"
	if poll 5 none_alive; then
		pass "SIG$sig: nothing of the session remains"
	else
		fail "SIG$sig: nothing of the session remains" "$(alive_marks) alive" "$(owstest_user_procs_desc)"
	fi
	h=$(cat "$W/home-path" 2>/dev/null)
	if [ -n "$h" ]; then
		not_ok "SIG$sig: the private folder was removed as owsbx exited" test -e "$(dirname "$h")"
	else
		fail "SIG$sig: the session wrote its HOME"
	fi
done

# stdio passes through
out=$(echo owstest-stdin | as_user "$OWSBX" run -- /bin/cat 2>/dev/null)
is "$out" owstest-stdin "stdin reaches the command"
out=$(as_user "$OWSBX" run -- /bin/sh -c 'echo to-out; echo to-err >&2' 2>/dev/null)
is "$out" to-out "stdout is the command's stdout"
out=$(as_user "$OWSBX" run -- /bin/sh -c 'echo to-out; echo to-err >&2' 2>&1 >/dev/null)
like "$out" "to-err" "stderr is the command's stderr"

owstest_check_clean
done_testing
