#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run elsewhere
# Why the sandbox's user namespace is refused, said for real. The kernel is made to refuse it
# in each way this machine can, for the person only: the limit at 0 (user.max_user_namespaces,
# set in a throwaway user namespace of root's, never on the host), a seccomp filter refusing
# new namespaces (as Docker's default profile does), and filters that let the namespace be made
# but refuse one thing init then needs (a mount, loopback up: what Ubuntu's AppArmor restriction
# does to all of them). `owsbx report`'s namespaces row, and a refused session, name the cause
# and the fix, and never advise turning a restriction off. Debian's unprivileged_userns_clone
# and Ubuntu's AppArmor restriction are tested where the kernel has them (the VM, Ubuntu);
# test/unit/userns.c holds the wording of every case.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

# WITHOUT WHAT -- CMD...: exec CMD under a seccomp filter that takes WHAT away (namespaces,
# mount, loopback: test/helpers/without.py).
WITHOUT=$OWSTEST_DIR/helpers/without.py

# NESTED UID GID -- CMD... (as root): CMD as UID in a user namespace of root's whose limit of
# user namespaces is 0. Every id maps to itself; the host's own limit is not touched.
NESTED='
import ctypes, os, sys
uid, gid, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[4:]
libc = ctypes.CDLL(None, use_errno=True)
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(ready_r); os.close(go_w)
    if libc.unshare(0x10000000) != 0:
        print("unshare failed", ctypes.get_errno(), file=sys.stderr); os._exit(99)
    os.write(ready_w, b"u")
    os.read(go_r, 1)
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    os.setgroups([gid]); os.setresgid(gid, gid, gid); os.setresuid(uid, uid, uid)
    os.execv(cmd[0], cmd)
os.close(ready_w); os.close(go_r)
os.read(ready_r, 1)
for m in ("uid_map", "gid_map"):
    with open("/proc/%d/%s" % (pid, m), "w") as f:
        f.write("0 0 4294967295")
os.write(go_w, b"g")
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
'

# row: the namespaces row of the last report (SBX_OUT)
row() { grep '^namespaces ' <<<"$SBX_OUT"; }
# never_off DESC TEXT: no advice to switch a restriction off
never_off() { unlike "$2" 'sysctl( -w)? [a-z._]+=0|=0 ' "$1: no advice to turn a restriction off"; }

# A refused session says the same; since the landlock provider may run without user
# namespaces (with partial promises), a session that ran is fine too.
session_says() { # DESC REGEX, after sbx run
	if [ "$SBX_RC" = 70 ]; then
		like "$SBX_ERR" "$2" "$1: the refused session names the cause"
	else
		is "$SBX_RC" 0 "$1: the session ran without user namespaces, or was refused (70) with the cause"
	fi
}

# The machine itself.
sbx report
native=$(row)
if [[ $native == *" enforced "* ]]; then
	pass "this machine: namespaces enforced ($native)"
else
	like "$native" 'switched off|Debian|seccomp|AppArmor|without the capabilities|limit' \
		"this machine refuses them, and the row says why: $native"
fi

nested() { # owsbx ARGS in the namespace with the limit at 0
	"$PY" -c "$NESTED" "$TU_UID" "$TU_GID" -- /usr/bin/env -i "${TU_ENV[@]}" "$OWSBX" "$@" \
		>"$TU_TMP/sbx.out" 2>"$TU_TMP/sbx.err" </dev/null
	SBX_RC=$?
	SBX_OUT=$(cat "$TU_TMP/sbx.out")
	SBX_ERR=$(cat "$TU_TMP/sbx.err")
}
without() { # WHAT ARGS: owsbx ARGS as the person under the filter that takes WHAT away
	local what=$1
	shift
	as_user "$PY" "$WITHOUT" "$what" -- "$OWSBX" "$@" >"$TU_TMP/sbx.out" 2>"$TU_TMP/sbx.err" </dev/null
	SBX_RC=$?
	SBX_OUT=$(cat "$TU_TMP/sbx.out")
	SBX_ERR=$(cat "$TU_TMP/sbx.err")
}

# Each cause made for real, on a machine whose namespaces work: 16 tests.
simulated() {
	# The limit at 0, in a throwaway user namespace of root's: clone gives ENOSPC.
	local host_limit
	host_limit=$(cat /proc/sys/user/max_user_namespaces)
	"$PY" -c "$NESTED" "$TU_UID" "$TU_GID" -- /usr/bin/env -i "${TU_ENV[@]}" /usr/bin/unshare -U true \
		>/dev/null 2>"$TU_TMP/nested.err"
	isnt "$?" 0 "control: in the namespace with the limit at 0, unshare -U fails ($(tail -1 "$TU_TMP/nested.err"))"
	is "$(cat /proc/sys/user/max_user_namespaces)" "$host_limit" "and the host's limit is untouched ($host_limit)"
	nested report
	like "$(row)" 'unavailable +user namespaces are switched off here \(user.max_user_namespaces is 0\): clone: No space left on device' \
		"limit 0: the row names user.max_user_namespaces and ENOSPC"
	like "$(row)" 'account provider.*sudo owsbx machine sandbox setup' "and the fix: the account provider"
	never_off "limit 0" "$(row)"
	nested run -- /bin/true
	session_says "limit 0" 'user.max_user_namespaces is 0'
	is "$(owstest_session_dirs)" "" "limit 0: no session folder left"

	# A seccomp filter refusing new namespaces, as Docker's default profile: clone gives EPERM.
	as_user "$PY" "$WITHOUT" namespaces -- /usr/bin/unshare -U true 2>/dev/null
	isnt "$?" 0 "control: under the namespaces filter, unshare -U fails"
	without namespaces report
	like "$(row)" 'unavailable +a seccomp filter on this process refuses new namespaces \(as Docker.s default profile does\): clone: Operation not permitted' \
		"seccomp: the row names the filter and EPERM"
	never_off "seccomp" "$(row)"
	without namespaces run -- /bin/true
	session_says "seccomp" 'seccomp filter on this process refuses new namespaces'

	# The namespace is made, but without what init needs next: as under Ubuntu's restriction,
	# the probe must go past clone to see it. Before it did, these rows said "enforced".
	as_user "$PY" "$WITHOUT" mount -- /usr/bin/unshare -Urm mount -t tmpfs none /tmp 2>/dev/null
	isnt "$?" 0 "control: under the mount filter, a tmpfs cannot be mounted in a new namespace"
	as_user "$PY" "$WITHOUT" mount -- /usr/bin/unshare -U true
	is "$?" 0 "control: but the namespace itself is made"
	without mount report
	like "$(row)" 'unavailable +user namespaces are created without the capabilities the sandbox needs .*: mounting a tmpfs: Operation not permitted' \
		"a namespace where nothing mounts: the row says so, and which step"
	without loopback report
	like "$(row)" 'unavailable +user namespaces are created without the capabilities .*: bringing loopback up: Operation not permitted' \
		"a namespace where loopback stays down (bwrap's RTM_NEWADDR): the row says so"
	never_off "no capabilities" "$(row)"
}
if [[ $native == *" enforced "* ]]; then
	simulated
else
	skip "this machine refuses user namespaces already: its own cause is tested below" 16
fi

# The limit at 0 on the machine itself (the VM run with --sysctl user.max_user_namespaces=0).
if [ "$(cat /proc/sys/user/max_user_namespaces)" = 0 ]; then
	like "$native" 'user namespaces are switched off here \(user.max_user_namespaces is 0\)' \
		"user.max_user_namespaces 0: the row names it"
	never_off "limit 0 here" "$native"
	sbx run -- /bin/true
	session_says "limit 0 here" 'user.max_user_namespaces is 0'
else
	skip "user.max_user_namespaces is $(cat /proc/sys/user/max_user_namespaces) here (the VM run sets it to 0)" 3
fi

# Debian's knob, where the kernel has it (Debian's kernels; the VM run sets it to 0).
knob=$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo absent)
if [ "$knob" = 0 ]; then
	like "$native" "only root may create user namespaces here \\(Debian's kernel.unprivileged_userns_clone is 0\\)" \
		"unprivileged_userns_clone 0: the row names Debian's knob"
	never_off "Debian's knob" "$native"
	sbx run -- /bin/true
	session_says "Debian's knob" "kernel.unprivileged_userns_clone is 0"
else
	skip "kernel.unprivileged_userns_clone is $knob here (the VM run sets it to 0)" 3
fi

# Ubuntu's AppArmor restriction, where the kernel has it: the row names it and the profile
# that lifts it; with that profile loaded for this owsbx, the namespaces work.
restrict=$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo absent)
parser=$("$OWSTEST_DIR/helpers/apparmor4.sh" 2>/dev/null || true)
if [ "$restrict" != 1 ]; then
	skip "kernel.apparmor_restrict_unprivileged_userns is $restrict here (Ubuntu's kernels have it)" 5
elif [ -z "$parser" ]; then
	skip "Ubuntu's restriction is on, but there is no AppArmor 4 parser to load the profile" 5
else
	like "$native" "Ubuntu's AppArmor restriction .*writing its uid_map" "the restriction: the row names it"
	like "$native" "owsbx apparmor-profile $OWSBX \\| sudo tee /etc/apparmor.d/owsbx" "and the profile that lifts it"
	never_off "AppArmor" "$native"
	name=owstest-owsbx-$(rand_hex 4)
	"$OWSBX" apparmor-profile --name "$name" "$OWSBX" >"$TU_TMP/profile"
	trap 'echo -n "$name" >/sys/kernel/security/apparmor/.remove 2>/dev/null; owstest_cleanup' EXIT
	"$parser" -r "$TU_TMP/profile"
	sbx report
	like "$(row)" " enforced +unprivileged user" "with the profile loaded, the namespaces work"
	echo -n "$name" >/sys/kernel/security/apparmor/.remove
	sbx run -- /bin/true
	is "$SBX_RC" 0 "and a session runs"
fi

owstest_check_clean
done_testing
