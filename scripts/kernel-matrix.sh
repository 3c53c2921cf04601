#!/bin/bash
# scripts/kernel-matrix.sh [--full] [CONFIG...]: the wall on the kernels people run.
#
# Boots each configuration in a throwaway VM (scripts/kernel-vm.sh), measures what each
# provider and network mode gets there (test/kernel/measure.sh: enforced, partial and why,
# refused and why) and runs tests there as root: a subset that fits CI by default, the whole
# Linux suite with --full (`make check-kernels`). Prints the measured table (also written to
# build/kernel-matrix/matrix.md, with each run's log beside it) and exits non-zero when a
# test failed or a VM did not run. Build first (`make all shared` and the unit tests).
#
# Configurations (default: all four):
#   6.1          Debian 12's stock kernel: Landlock ABI 2, cgroup v2
#   6.1-nouserns the same with user.max_user_namespaces=0 (Docker's seccomp, hardened distributions)
#   6.12         the 6.12 kernel Debian 12 also ships: Landlock ABI 6, cgroup v2
#   6.12-nosuid  the same with /tmp mounted nosuid, as Debian 13 does
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2

full=0
[ "${1:-}" = --full ] && { full=1; shift; }
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(6.1 6.1-nouserns 6.12 6.12-nosuid)

# The subsets, chosen per configuration to fit CI beside `make check` (about 30 minutes in
# all under TCG): what that kernel changes. The shared attack suite runs on each with --full.
#   6.1: the proof, the network and socket promises and the kernel's doors on Landlock ABI 2,
#     and the account provider's setup and wall there;
#   6.1-nouserns: the landlock provider in the host's namespaces (what it keeps and what it
#     refuses, and the attack suite against it), and the account provider, whose root
#     launcher needs no user namespace;
#   6.12: the cgroup v2 limits of both providers and the kernel's doors;
#   6.12-nosuid: what installs and runs the setuid launcher with /tmp nosuid.
subset() {
	case $1 in
	6.1) echo test/sh/verify.sh test/sh/net.sh test/sh/unix.sh test/sh/kernel.sh test/sh/inject.sh \
		test/sh/open_partial.sh test/sh/account_wall.sh ;;
	6.1-nouserns) echo test/sh/degraded.sh test/sh/attacks.sh test/sh/account_wall.sh ;;
	6.12) echo test/sh/kernel.sh test/sh/account_limits.sh test/sh/limits.sh ;;
	6.12-nosuid) echo test/sh/account_launcher.sh test/sh/machine_setup.sh ;;
	esac
}

# What a configuration sets for its tests. On 6.1 the set-user-ID launcher and its state
# folder go on the root's overlayfs (/var/lib; the guest's /tmp and /var/tmp are tmpfs), which
# has no O_TMPFILE before 6.6: the launcher's lock and the grant journal take their
# fallback there.
# Without user namespaces the attack suite runs against the landlock provider, the one
# that changes there (the account provider's root launcher makes the same namespaces).
test_env() {
	case $1 in
	6.1) echo "OWSTEST_SUID_BASES=/var/lib" ;;
	6.1-nouserns) echo "OWSTEST_PROVIDERS=landlock" ;;
	esac
}

out=$here/build/kernel-matrix
mkdir -p "$out"
failed=0

vm_args() {
	case $1 in
	6.1) echo "--kernel 6.1" ;;
	6.1-nouserns) echo "--kernel 6.1 --sysctl user.max_user_namespaces=0" ;;
	6.12) echo "--kernel 6.12" ;;
	6.12-nosuid) echo "--kernel 6.12 --nosuid-tmp" ;;
	*) return 1 ;;
	esac
}

for config in "${configs[@]}"; do
	args=$(vm_args "$config") || { echo "kernel-matrix: unknown configuration $config" >&2; exit 2; }
	tests=$(subset "$config")
	# The whole suite under TCG takes hours, not the half hour a subset is given.
	[ $full = 1 ] && { tests=""; args="$args --timeout 21600"; }
	echo "== $config ($args)"
	start=$(date +%s)
	# 125 is the VM's own failure (a download, qemu, the guest's boot, a guest kernel that
	# panicked: TCG has been seen to trip on 6.12 patching its own code, an int3 Oops in
	# enqueue_task_fair as a cgroup's cpu.max turned CFS bandwidth on), not a test's: the
	# configuration runs once more, and both logs' ends are printed.
	for try in 1 2; do
		# shellcheck disable=SC2086 # $args and $tests are word lists
		scripts/kernel-vm.sh $args -- bash -c \
			"test/kernel/measure.sh; $(test_env "$config") SH_TIMEOUT=2400 UNIT_TIMEOUT=600 test/run.sh $tests" \
			>"$out/$config.log" 2>&1 </dev/null
		rc=$?
		[ $rc -eq 125 ] || break
		echo "  ($config: the VM did not run (try $try of 2); the end of its log:)"
		grep -v '^$' "$out/$config.log" | tail -15 | sed 's/^/  | /'
		cp "$out/$config.log" "$out/$config.try$try.log"
	done
	end=$(date +%s)
	grep -E '^(MATRIX|[0-9]+ passed)' "$out/$config.log" | sed 's/^/  /'
	grep -E '^[a-z_0-9.]+ +(FAILED|failed)|^not ok' "$out/$config.log" | head -20 | sed 's/^/  /'
	# A run that ended early without its tally: show why, the log stays behind on CI's machine.
	grep -qE '^[0-9]+ passed' "$out/$config.log" || grep -v '^$' "$out/$config.log" | tail -15 | sed 's/^/  | /'
	echo "  ($config: exit $rc, $((end - start)) s; log: $out/$config.log)"
	[ "$rc" -eq 0 ] || failed=1
done

# The table: one row per configuration and provider, one column per mode.
{
	echo "| kernel | provider | none | allowlist | open | limits |"
	echo "|---|---|---|---|---|---|"
	for config in "${configs[@]}"; do
		[ -e "$out/$config.log" ] || continue
		python3 - "$config" "$out/$config.log" <<'PY'
import sys
config, log = sys.argv[1], sys.argv[2]
cells, kernel = {}, ""
for line in open(log, errors="replace"):
    line = line.rstrip("\n")
    if line.startswith("MATRIX-KERNEL|"):
        k = line.split("|")
        kernel = f"{config}: {k[1]}, {k[2]}, {k[3]}"
    elif line.startswith("MATRIX|"):
        _, prov, mode, status, why = (line.split("|", 4) + [""])[:5]
        cells[(prov, mode)] = status if not why else f"{status} ({why})"
for prov in ("landlock", "account"):
    row = [cells.get((prov, m), "not measured").replace("|", "/")
           for m in ("none", "allowlist", "open", "limits")]
    print(f"| {kernel or config} | {prov} | " + " | ".join(row) + " |")
PY
	done
} >"$out/matrix.md"
echo
cat "$out/matrix.md"
exit $failed
