# shellcheck shell=sh
# test/features.sh: what this kernel has, for tests that need it. POSIX sh: sourced by
# test/lib.sh and test/account_lib.sh, whose `skip REASON` the need_* guards call.
#
# A test that needs a kernel feature guards on it and is skipped, with the reason, where
# the kernel lacks it (Debian 12's 6.1 has Landlock ABI 2; Debian's 6.12 has
# dev.tty.legacy_tiocsti=0; hardened machines have no unprivileged user namespaces):
#
#   need_landlock_abi N WHY [COUNT]
#   need_userns WHY [COUNT]
#   need_legacy_tiocsti WHY [COUNT]
#       Without COUNT, at the top of a file: when the kernel lacks it, the whole file is
#       skipped ("1..0 # SKIP needs ...: WHY", which test/run.sh prints as "skipped: ...")
#       and the script exits 0. With COUNT, around a block: when the kernel lacks it,
#       COUNT tests are skipped with that reason and the guard returns 1, else 0:
#           if need_landlock_abi 6 "abstract sockets are scoped" 3; then ...3 tests...; fi
#
#   landlock_abi              the Landlock ABI (0: none, or switched off at boot)
#   have_landlock_abi N       it is N or more
#   have_userns               an unprivileged process may make a user namespace, map its
#                             uid and make a network namespace in it (off when
#                             user.max_user_namespaces=0, under Docker's default seccomp
#                             profile, under Ubuntu's AppArmor restriction)
#   have_legacy_tiocsti       an unprivileged TIOCSTI may push a keystroke into a terminal
#                             (dev.tty.legacy_tiocsti, Linux 6.2+; always before)

# Never taken from the environment: a test's answer is the kernel's.
OWSTEST_LANDLOCK_ABI=""
OWSTEST_USERNS=""

# Probed once per shell (the guards call it outside $(...), so the answer is kept).
_owstest_landlock_probe() {
	[ -n "${OWSTEST_LANDLOCK_ABI:-}" ] && return 0
	OWSTEST_LANDLOCK_ABI=$(/usr/bin/python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
print(r if r > 0 else 0)' 2>/dev/null) || OWSTEST_LANDLOCK_ABI=0
	[ -n "$OWSTEST_LANDLOCK_ABI" ] || OWSTEST_LANDLOCK_ABI=0
}

landlock_abi() {
	_owstest_landlock_probe
	echo "$OWSTEST_LANDLOCK_ABI"
}

have_landlock_abi() {
	_owstest_landlock_probe
	[ "$OWSTEST_LANDLOCK_ABI" -ge "$1" ]
}

have_userns() {
	if [ -z "${OWSTEST_USERNS:-}" ]; then
		OWSTEST_USERNS=no
		# as nobody: what root may do says nothing about an ordinary person
		(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- \
			unshare --user --map-root-user --net true) >/dev/null 2>&1 && OWSTEST_USERNS=yes
	fi
	[ "$OWSTEST_USERNS" = yes ]
}

have_legacy_tiocsti() { [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" != 0 ]; }

# _owstest_need HAVE REASON [COUNT]: the guards' common part (see the top).
_owstest_need() {
	_have=$1 _reason=$2
	shift 2
	if [ "$_have" = yes ]; then
		return 0
	fi
	if [ $# = 0 ]; then
		printf '1..0 # SKIP %s\n' "$_reason"
		exit 0
	fi
	_n=$1
	while [ "$_n" -gt 0 ]; do
		skip "$_reason"
		_n=$((_n - 1))
	done
	return 1
}

need_landlock_abi() {
	_want=$1 _why=$2
	shift 2
	_has=no
	have_landlock_abi "$_want" && _has=yes
	_owstest_need "$_has" "needs Landlock ABI $_want, this kernel has $(landlock_abi): $_why" "$@"
}

need_userns() {
	_why=$1
	shift
	_has=no
	have_userns && _has=yes
	_owstest_need "$_has" "needs unprivileged user namespaces, which this machine refuses: $_why" "$@"
}

need_legacy_tiocsti() {
	_why=$1
	shift
	_has=no
	have_legacy_tiocsti && _has=yes
	_owstest_need "$_has" "needs dev.tty.legacy_tiocsti=1, this kernel has 0: $_why" "$@"
}
