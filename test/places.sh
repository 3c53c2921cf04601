# shellcheck shell=sh
# test/places.sh: where a test may put a set-user-ID program. POSIX sh: sourced by
# test/account_lib.sh, test/run.sh and the sh test machine_setup.sh.
#
# The account provider's launcher is set-user-ID root, and the test person runs it. /tmp
# will not do everywhere: Debian 13 mounts it nosuid (the launcher then runs as the
# person and refuses), and some machines mount it noexec. So the tests' folders that hold
# a launcher go under the first of OWSTEST_SUID_BASES whose mount honours set-user-ID bits
# and exec, and that everyone may traverse (the test person and the accounts run what is
# in it); the kernel matrix sets OWSTEST_SUID_BASES to put them on a file system of its
# choosing. Each test removes its own folder; test/run.sh reports any left under the bases.
#
#   owstest_suid_base          prints that base folder; fails when none is usable
#   owstest_suid_tmpdir NAME   mktemp -d BASE/NAME.XXXXXX, mode 0755; prints its path

OWSTEST_SUID_BASES=${OWSTEST_SUID_BASES:-"/tmp /var/tmp /var/lib /usr/local/lib"}

owstest_suid_base() {
	# shellcheck disable=SC2086 # the list of folders, split on purpose
	/usr/bin/python3 -c '
import os, stat, sys
for base in sys.argv[1:]:
    try:
        flags = os.statvfs(base).f_flag
    except OSError:
        continue
    if flags & (os.ST_NOSUID | os.ST_NOEXEC | os.ST_RDONLY):
        continue
    # every folder from / down to the base must be searchable by others
    p, ok = base, True
    while ok:
        st = os.stat(p)
        ok = stat.S_ISDIR(st.st_mode) and bool(st.st_mode & stat.S_IXOTH)
        if p == "/":
            break
        p = os.path.dirname(p)
    if ok:
        print(base)
        sys.exit(0)
sys.exit(1)
' $OWSTEST_SUID_BASES
}

owstest_suid_tmpdir() {
	_base=$(owstest_suid_base) || {
		echo "no folder of $OWSTEST_SUID_BASES is on a mount that allows set-user-ID programs" >&2
		return 1
	}
	_dir=$(mktemp -d "$_base/$1.XXXXXX") || return 1
	chmod 0755 "$_dir" && echo "$_dir"
}
