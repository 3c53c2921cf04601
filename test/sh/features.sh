#!/bin/bash
# The kernel guards of test/features.sh: what they find agrees with the library's own
# probe and the kernel's settings, and a guard that fails skips with the reason, the whole
# file or the COUNT tests of a block.
. "$(dirname "$0")/../lib.sh"

abi=$(landlock_abi)
like "$abi" '^[0-9]+$' "landlock_abi is a number ($abi)"
report_abi=$("$OWSTEST_ROOT/owsbx" report --json 2>/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["landlock_abi"])')
is "$abi" "$report_abi" "landlock_abi agrees with owsbx report"
ok "have_landlock_abi $abi" have_landlock_abi "$abi"
not_ok "have_landlock_abi $((abi + 1))" have_landlock_abi $((abi + 1))

# a block: COUNT skip lines with the reason, and false
out=$(need_landlock_abi $((abi + 1)) "the block's reason" 2; echo "rc=$?")
is "$out" "ok $((TAP_N + 1)) # SKIP needs Landlock ABI $((abi + 1)), this kernel has $abi: the block's reason
ok $((TAP_N + 2)) # SKIP needs Landlock ABI $((abi + 1)), this kernel has $abi: the block's reason
rc=1" "a block the kernel cannot run: skipped with the reason, and the guard is false"
out=$(need_landlock_abi "$abi" "met" 2; echo "rc=$?")
is "$out" "rc=0" "a block it can run: nothing printed, and the guard is true"
# a file: the plan of a skipped file, and exit 0
out=$(need_landlock_abi $((abi + 1)) "the file's reason"; echo "not reached")
is "$out" "1..0 # SKIP needs Landlock ABI $((abi + 1)), this kernel has $abi: the file's reason" \
	"a file the kernel cannot run: skipped whole, with the reason"

t=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo absent)
if [ "$t" = 0 ]; then not_ok "have_legacy_tiocsti follows dev.tty.legacy_tiocsti ($t)" have_legacy_tiocsti
else ok "have_legacy_tiocsti follows dev.tty.legacy_tiocsti ($t)" have_legacy_tiocsti; fi

# user namespaces: the guard against what nobody gets from unshare
if (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -Urn true) 2>/dev/null; then
	ok "have_userns: nobody makes a user namespace here" have_userns
else
	not_ok "have_userns: nobody cannot make a user namespace here" have_userns
fi
done_testing
