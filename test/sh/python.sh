#!/bin/bash
# A Python host through ctypes (the package examples/python/owsandbox over libowsandbox.so), as
# the throwaway person: the session opens with a passed proof, a command runs inside
# with its exit status passed on, the host's secrets stay out, and a refusal arrives
# as a Python exception carrying the library's what/where/hint.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
[ -f "$OWSTEST_ROOT/libowsandbox.so" ] || skip_all "libowsandbox.so not built (make shared)"
owstest_user_setup

cp "$OWSTEST_ROOT/libowsandbox.so" "$TU_BIN_DIR/"
cp -r "$OWSTEST_ROOT/examples/python/owsandbox" "$TU_BIN_DIR/"
chmod -R u=rwX,go=rX "$TU_BIN_DIR/libowsandbox.so" "$TU_BIN_DIR/owsandbox"
AS_USER_ENV=("OWSANDBOX_LIB=$TU_BIN_DIR/libowsandbox.so" "PYTHONPATH=$TU_BIN_DIR")

out=$(AS_USER_CWD=$TU_WORK as_user "$PY" -B -m owsandbox "$TU_WORK" \
	sh -c 'echo "inside $PWD"; env; cat ~/../../.bashrc 2>&1; exit 5' 2>&1)
rc=$?
is "$rc" 5 "the command's exit status comes back through Python"
like "$out" "proof passed: True enforcement: full" "the session opened after a passed proof"
like "$out" "inside $TU_WORK" "the command ran in the session folder"
unlike "$out" "GITHUB_TOKEN|AWS_SECRET|MY_PASSWORD|SESSION_COOKIE|SSH_AUTH_SOCK" \
	"the Python host's secret variables are not inside"
unlike "$out" "$TU_MARKER" "the home's dotfiles are not readable"

out=$(as_user "$PY" -B -c '
import owsandbox
try:
    owsandbox.Session({"folders": [{"path": "relative/dir", "access": "rw"}]})
except owsandbox.Error as e:
    print(e.name, "|", e.where, "|", e.hint)
' 2>&1)
like "$out" "^OWS_EINVAL \\| relative/dir \\| give the folder as an absolute path" \
	"a refusal is an exception with what, where and the hint"
is "$(owstest_session_dirs)" "" "no session folder left"
ok "no process left" poll 5 owstest_no_user_procs
done_testing
