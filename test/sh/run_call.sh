#!/bin/bash
# The run call (ows_session_run and its JSON form) from a C host, as the throwaway person on
# the landlock provider: test/sh/run_host.c, built here against libowsandbox.a, prints the
# TAP lines; they are counted here as this file's own.  Capture, caps, stdin, timeouts with
# double-forked daemons, exit codes and signals, streaming, JSON requests good and bad, and
# four threads at once on one session.  Nothing of the session is left afterwards.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
. "$OWSTEST_DIR/relay.sh"
command -v cc >/dev/null || skip_all "no C compiler"
[ -f "$OWSTEST_ROOT/libowsandbox.a" ] || skip_all "build first (make)"
owstest_user_setup

cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -I"$OWSTEST_ROOT/test/unit" \
	-o "$TU_BIN_DIR/run_host" "$OWSTEST_ROOT/test/sh/run_host.c" "$OWSTEST_ROOT/libowsandbox.a" \
	-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread || bail_out "cannot build run_host"
chmod 0755 "$TU_BIN_DIR/run_host"

# OWSTEST_RUN_TESTS: only these of the host's tests (run_host.c's names), for debugging.
# shellcheck disable=SC2086 # the list of names, split on purpose
AS_USER_TIMEOUT=150 AS_USER_CWD=$TU_WORK as_user "$TU_BIN_DIR/run_host" landlock "$TU_WORK" - \
	${OWSTEST_RUN_TESTS:-} \
	</dev/null >"$TU_TMP/host.tap" 2>"$TU_TMP/host.err"
rc=$?
relay_tap "$TU_TMP/host.tap" pass fail skip
is "$rc" 0 "the host exits 0 (not killed by SIGPIPE, no test failed)"
[ "$rc" = 0 ] || diag "$(tail -5 "$TU_TMP/host.err")"
owstest_check_clean "the run calls"
done_testing
