#!/bin/bash
# test/kernel/measure.sh: what this kernel gives each provider and network mode, measured by
# running a command in a sandbox as an ordinary person (a throwaway owstestvm_ account), and
# the same for a session with limits. Prints one line per cell:
#   MATRIX|PROVIDER|MODE|enforced|
#   MATRIX|PROVIDER|MODE|partial|PROMISE: WHY; ...
#   MATRIX|PROVIDER|MODE|refused|THE REASON GIVEN
# The account provider is set up for the person first (and removed after). Run as root in a
# throwaway VM (scripts/kernel-vm.sh): it changes the machine's sandbox setup.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OWSBX=$ROOT/owsbx
[ "$(id -u)" -eq 0 ] || { echo "measure.sh: run as root" >&2; exit 2; }
[ "${OWSVM:-}" = 1 ] || [ "$(hostname)" = owsvm ] ||
	{ echo "measure.sh: runs in the VM only (it sets up the account provider)" >&2; exit 2; }

user=owstestvm_$$
useradd -m -s /bin/bash "$user" || exit 2
work=$(mktemp -d /tmp/owstest-measure.XXXXXX)
chown "$user:" "$work"
cleanup() {
	"$OWSBX" machine sandbox remove --yes >/dev/null 2>&1
	userdel -r "$user" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# The launcher must be where setuid works and the person can reach it.
if ! "$OWSBX" machine sandbox setup --for-user "$user" --yes >"$work/setup.out" 2>&1; then
	account_refused=$(grep -m1 '^owsbx: ' "$work/setup.out" | sed 's/^owsbx: //')
	account_refused=${account_refused:-$(grep -v '^$' "$work/setup.out" | tail -1)}
fi

# cell PROVIDER MODE [POLICY]: one line for one sandboxed `true` as the person.
cell() {
	local provider=$1 mode=$2 ev=$work/ev.$1.$2 err=$work/err.$1.$2 rc
	if [ "$provider" = account ] && [ -n "${account_refused:-}" ]; then
		echo "MATRIX|$provider|$mode|refused|setup: $account_refused"
		return
	fi
	rm -f "$ev"
	local args=(run --provider "$provider" --events "$ev")
	if [ "$mode" = limits ]; then
		printf '{"limits": {"memory_mb": 256, "processes": 64, "cpu_percent": 50}}\n' >"$work/limits.json"
		chmod 644 "$work/limits.json"
		args+=(--policy "$work/limits.json" --net none)
	else
		args+=(--net "$mode")
	fi
	(cd "$work" && su "$user" -s /bin/sh -c "$(printf '%q ' "$OWSBX" "${args[@]}") -- /bin/true" \
		</dev/null >/dev/null 2>"$err")
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "MATRIX|$provider|$mode|refused|$(grep -v '^$' "$err" | head -1 | sed 's/^owsbx: //')"
		return
	fi
	python3 - "$ev" "$provider" "$mode" <<'EOF'
import json, sys
spawn = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "spawn"]
e = spawn[-1] if spawn else {}
partial = e.get("partial") or []
if e.get("enforcement") == "full" and not partial:
    print(f"MATRIX|{sys.argv[2]}|{sys.argv[3]}|enforced|")
else:
    why = "; ".join(f"{p.get('promise')}: {p.get('why')}" for p in partial)
    print(f"MATRIX|{sys.argv[2]}|{sys.argv[3]}|partial|{why or e.get('enforcement')}")
EOF
}

echo "MATRIX-KERNEL|$(uname -r)|landlock ABI $("$OWSBX" report --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["landlock_abi"])')|$(stat -fc %T /sys/fs/cgroup)|user.max_user_namespaces=$(cat /proc/sys/user/max_user_namespaces)"
for provider in landlock account; do
	for mode in none allowlist open limits; do
		cell "$provider" "$mode"
	done
done
