#!/bin/bash
# What `owsbx run` starts before its command (issue 26's speed): init's own clone is the one
# user namespace a run makes; the throwaway probe of them (a second user, PID, mount and
# network namespace, made and torn down) runs only when init could not set up in them.
# Counted with strace, as the person. Where user namespaces are refused (degraded.sh: the
# session then runs in the host's namespaces) the probe still decides.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
command -v strace >/dev/null || skip_all "no strace (scripts/install-deps.sh --test installs it)"
owstest_user_setup

W=$TU_WORK
WITHOUT=$OWSTEST_DIR/helpers/without.py
count_userns() { grep -c 'CLONE_NEWUSER' "$1"; }
ST=$(mktemp -d /tmp/owstest-strace.XXXX) # strace writes its log as the person
owstest_remove_at_exit "$ST"
chown "$TU_UID:$TU_GID" "$ST"

as_user strace -f -qq -e trace=clone,clone3,unshare -o "$ST/trace" "$OWSBX" run --rw "$W" \
	-- /bin/sh -c 'echo ran' >"$TU_TMP/out" 2>"$TU_TMP/err" </dev/null
rc=$?
is "$rc" 0 "owsbx run under strace: the command ran (rc $rc)"
[ "$rc" = 0 ] || diag "$(cat "$TU_TMP/err")"
is "$(cat "$TU_TMP/out")" ran "... and wrote its output"
is "$(count_userns "$ST/trace")" 1 "one user namespace per run: init's own, no probe before it"
is "$(grep -c 'CLONE_NEWNET' "$ST/trace")" 1 "one network namespace per run"

# Refused: the probe runs after init's refusal, and the run goes on in the host's namespaces.
# (strace outside the filter, which without.py puts on owsbx alone.)
as_user strace -f -qq -e trace=clone,clone3,unshare -o "$ST/trace2" \
	"$PY" "$WITHOUT" userns -- "$OWSBX" run --rw "$W" -- /bin/sh -c 'echo ran' \
	>"$TU_TMP/out" 2>"$TU_TMP/err" </dev/null
rc=$?
is "$rc" 0 "without user namespaces: the run goes on in the host's namespaces (rc $rc)"
[ "$rc" = 0 ] || diag "$(cat "$TU_TMP/err")"
is "$(cat "$TU_TMP/out")" ran "... and the command ran"
is "$(count_userns "$ST/trace2")" 2 "... after init's refused clone and the probe's, both refused"
done_testing
