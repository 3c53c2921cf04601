#!/bin/bash
# One session used from several threads at once, as a real host does: a C host
# (test/sh/threads_host.c, built here against libowsandbox.a) run as the throwaway person,
# on the landlock provider and on direct. 4 and 8 threads spawn and wait in one session
# with no lock of the host's, many rounds over (before each command had its own status
# channel, four threads hung in 6 runs of 7); a thread blocked in a wait holds up nobody;
# ows_proc_fd() waited on with poll(); close while threads wait or spawn; double close,
# use after close and NULL get OWS_ESTATE or OWS_EINVAL. A watchdog in the host turns a
# hang into a failing test.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

cc -std=c11 -O2 -g -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -o "$TU_BIN_DIR/threads_host" \
	"$OWSTEST_DIR/sh/threads_host.c" "$OWSTEST_ROOT/libowsandbox.a" \
	-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread || bail_out "cannot build threads_host"
chmod 0755 "$TU_BIN_DIR/threads_host"

# relay PROVIDER OUT: the host's "ok - X" / "not ok - X" lines as this file's tests.
relay() {
	local provider=$1 line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) pass "$provider: ${line#ok - }" ;;
		"not ok - "*) fail "$provider: ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <<<"$2"
}

for provider in landlock direct; do
	out=$(AS_USER_TIMEOUT=170 as_user "$TU_BIN_DIR/threads_host" - \
		"{\"provider\": \"$provider\", \"network\": \"none\"}" 15 2>&1)
	rc=$?
	relay "$provider" "$out"
	is "$rc" 0 "$provider: the host exits 0 (no failure, no crash, no hang)"
	owstest_check_clean "the $provider sessions of the threaded host"
done
done_testing
