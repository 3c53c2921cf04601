#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# When the kernel cannot give what the wall needs, the session is refused (70) with the
# reason, and never runs open. The missing kernel features are simulated by a seccomp filter
# put on owsbx itself before it starts (as the person): no Landlock (its three system calls
# fail with ENOSYS, as on a kernel built without it), Landlock built in but left out of
# lsm= at boot (EOPNOTSUPP, what such a kernel answers), no seccomp (seccomp(2) and prctl(PR_SET_SECCOMP)), no new namespaces (unshare, clone3, clone with CLONE_NEW*
# fail with EPERM). Acceptable outcomes: refused (70, the command did not run), or the wall
# still holds in full (home unreadable, agent unreachable, inet sockets refused). The direct
# provider, asked for by name, still runs and says so.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK
# WITHOUT: python3 -c "$WITHOUT" WHAT -- CMD...: exec CMD under a filter that takes WHAT away
WITHOUT='
import ctypes, os, struct, sys
what, cmd = sys.argv[1], sys.argv[3:]
ENOSYS, EPERM, EOPNOTSUPP = 38, 1, 95
def stmt(code, k): return struct.pack("HBBI", code, 0, 0, k)
def jump(code, k, jt, jf): return struct.pack("HBBI", code, jt, jf, k)
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7fff0000, 0x00050000
deny = {"landlock": [(444, ENOSYS), (445, ENOSYS), (446, ENOSYS)],
        "landlock-off": [(444, EOPNOTSUPP), (445, EOPNOTSUPP), (446, EOPNOTSUPP)],
        "seccomp": [(317, ENOSYS)],
        "namespaces": [(272, EPERM), (435, ENOSYS)]}[what]
body = []
for nr, err in deny:
    body += [jump(JEQ, nr, 0, 1), stmt(RET, ERRNO | err)]
if what == "namespaces":
    # clone(2) (56) with any CLONE_NEW* flag in its first argument
    body += [jump(JEQ, 56, 0, 3), stmt(LD, 16), jump(JSET, 0x7E020000, 0, 1), stmt(RET, ERRNO | EPERM),
             stmt(LD, 0)]
if what == "seccomp":
    # prctl(PR_SET_SECCOMP) (157, option 22) too
    body += [jump(JEQ, 157, 0, 3), stmt(LD, 16), jump(JEQ, 22, 0, 1), stmt(RET, ERRNO | 22), stmt(LD, 0)]
prog = [stmt(LD, 4), jump(JEQ, 0xC000003E, 0, len(body) + 1), stmt(LD, 0)] + body + [stmt(RET, ALLOW)]
buf = ctypes.create_string_buffer(b"".join(prog))
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fp = Fprog(len(prog), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fp), 0, 0) != 0:
    print("filter failed", ctypes.get_errno(), file=sys.stderr); sys.exit(99)
os.execv(cmd[0], cmd)
'
# control: the filter itself does what it says, outside the sandbox
as_user "$PY" -c "$WITHOUT" namespaces -- /usr/bin/unshare -Ur true 2>/dev/null
isnt "$?" 0 "control: under the namespaces filter, unshare -Ur fails"
as_user "$PY" -c "$WITHOUT" landlock -- "$PY" -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall.restype = ctypes.c_long; r = l.syscall(444, 0, 0, 1); print(r, ctypes.get_errno())' >"$TU_TMP/ll" 2>&1
is "$(cat "$TU_TMP/ll")" "-1 38" "control: under the landlock filter, landlock_create_ruleset gives ENOSYS"
as_user "$PY" -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall.restype = ctypes.c_long; print(l.syscall(444, 0, 0, 1))' >"$TU_TMP/ll" 2>&1
like "$(cat "$TU_TMP/ll")" '^[1-9][0-9]*$' "control: without the filter, the Landlock ABI is $(cat "$TU_TMP/ll")"

for what in landlock landlock-off seccomp namespaces; do
	as_user rm -f "$W/ran"
	as_user "$PY" -c "$WITHOUT" "$what" -- "$OWSBX" run --rw "$W" -- "$PY" -c "$PROBE" \
		"create $W/ran" "read $TU_HOME/.bashrc" "connect_unix $TU_AGENT_SOCK" "socket inet stream" "socket inet6 dgram" \
		>"$TU_TMP/out" 2>"$TU_TMP/err" </dev/null
	rc=$?
	mapfile -t R <"$TU_TMP/out"
	if [ "$rc" = 70 ]; then
		pass "without $what: the session is refused (70)"
		not_ok "without $what: the command did not run" test -e "$W/ran"
		like "$(cat "$TU_TMP/err")" "^owsbx: " "without $what: owsbx says why: $(head -1 "$TU_TMP/err")"
	else
		is "$rc" 0 "without $what: refused (70) or ran with the wall holding (rc $rc)"
		is "${R[0]}" OK "without $what: the command ran"
		is_one_of "${R[1]}" "EACCES ENOENT" "without $what: ~/.bashrc still unreadable (${R[1]})"
		is "${R[2]}" ENOENT "without $what: the agent still unreachable (${R[2]})"
		is "${R[3]}" EPERM "without $what: inet sockets still refused (${R[3]})"
		is "${R[4]}" EPERM "without $what: inet6 sockets still refused (${R[4]})"
	fi
	is "$(owstest_session_dirs)" "" "without $what: no session folder left"
done

# verify and report say so
as_user "$PY" -c "$WITHOUT" landlock -- "$OWSBX" verify >"$TU_TMP/out" 2>&1 </dev/null
is "$?" 70 "without Landlock: verify does not pass (70)"
as_user "$PY" -c "$WITHOUT" landlock -- "$OWSBX" report >"$TU_TMP/out" 2>&1 </dev/null
row=$(grep -i '^landlock.filesystem' "$TU_TMP/out")
like "$row" "unavailable" "without Landlock: report says landlock.filesystem unavailable"
like "$row" "CONFIG_SECURITY_LANDLOCK" "without Landlock (ENOSYS): the row names the kernel option to build with"
as_user "$PY" -c "$WITHOUT" landlock-off -- "$OWSBX" report >"$TU_TMP/out" 2>&1 </dev/null
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
EVD=$(mktemp -d /tmp/owstest-ev.XXXX)
owstest_remove_at_exit "$EVD"
chown "$TU_UID:$TU_GID" "$EVD"
as_user "$PY" -c "$WITHOUT" landlock -- "$OWSBX" run --provider direct --events "$EVD/ev" -- /bin/true </dev/null
is "$?" 0 "without Landlock: --provider direct still runs"
like "$(cat "$EVD/ev" 2>/dev/null)" '"enforcement": ?"none"' "and its events say enforcement none"

owstest_check_clean
done_testing
