#!/bin/bash
# Limits (memory, processes, CPU) under the account provider, for real: the launcher's
# cgroups at the machine's roots, cgroup v2 where its root offers a controller, else v1.
# The limits read back inside, a fork bomb and a memory balloon stop at the limit, the
# CPU share is measured against a control, a double-forked daemon is gone at close, a
# session without limits still gets a v2 group to be killed through, and no cgroup of
# ours is left.
ROOT=${OWS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/test/limits_lib.sh"
for c in memory pids cpu; do
	if ! cg_v2_offers "$c" && [ ! -d "/sys/fs/cgroup/$c" ]; then
		echo "1..0 # SKIP this kernel has no $c controller in cgroup v2 or v1"
		exit 0
	fi
done
. "$ROOT/test/account_lib.sh"
PY=/usr/bin/python3

inside() { owsbx run --provider account "$@"; }
policy() { # file json
	echo "$2" >"$1"
	chmod 0644 "$1"
}
policy "$T/limits.json" \
	'{"provider": "account", "limits": {"memory_mb": 64, "processes": 16, "cpu_percent": 50}}'
policy "$T/none.json" '{"provider": "account"}'

# Few sessions: each takes seconds in the test VM.
# ----------------------------------------- read back, fork bomb, balloon
out=$(inside --policy "$T/limits.json" -- sh -c "'$PY' -c \"\$1\" show; '$PY' -c \"\$1\" forkbomb 40; exec '$PY' -c \"\$1\" balloon 256" sh "$LIMITS_PY" 2>&1)
rc=$?
SEEN=$out
v=$(awk '$1 == "mem" {print $2}' <<<"$out")
want=v1
cg_v2_offers memory && want=v2
check "memory in cgroup $want, as this machine offers it (got $v)" test "$v" = "$want"
check "processes limited (pids.max 16)" grep -qxE "pids v[12] 16" <<<"$out"
check "memory limited (64 MiB)" grep -qxE "mem v[12] $((64 << 20))" <<<"$out"
if [ "$v" = v2 ]; then
	check "no swap to escape into (memory.swap.max 0, or no swap accounting)" \
		grep -qxE "swap (v2 0|-)" <<<"$out"
else
	check "no swap to escape into (memsw at the limit, or no swap accounting)" \
		grep -qxE "swap (v1 $((64 << 20))|-)" <<<"$out"
fi
check "cpu limited (50%: 50000 of 100000 us)" grep -qxE "cpu v[12] 50000 100000" <<<"$out"
if cg_v2_root >/dev/null; then
	check "the session has a cgroup v2 group (cgroup.kill ends its tree)" \
		grep -qE "^cgroup $(cg_v2_root)/owsandbox-[0-9a-f]{32}$" <<<"$out"
fi
n=$(grep -xE '[0-9]+' <<<"$out")
check "a fork bomb stops at the limit (${n:-?} of 40 started)" test "${n:-99}" -lt 16
check "a 256 MiB balloon is killed at the 64 MiB limit (exit $rc)" test "$rc" = 137
check "... and never completes ($(grep got <<<"$out" | tail -1))" sh -c '! grep -q survived' <<<"$out"

# ------------------------------ no limits: the kill group, and the control
out=$(inside --policy "$T/none.json" -- sh -c "'$PY' -c \"\$1\" show; exec '$PY' -c \"\$1\" spin 2" sh "$LIMITS_PY" 2>&1)
SEEN="$SEEN"$'\n'"$out"
ctl=$(sed -n 's/^share //p' <<<"$out")
if cg_v2_root >/dev/null; then
	check "without limits, the session still has a cgroup v2 group" \
		grep -qE "^cgroup $(cg_v2_root)/owsandbox-[0-9a-f]{32}$" <<<"$out"
else
	skip "no cgroup v2 hierarchy is mounted"
fi
check "without limits of its own, the session has the default process cap ($DEFAULT_PROCESSES)" \
	grep -qxE "pids v[12] $DEFAULT_PROCESSES" <<<"$out"

# ------------------------------------------------------- CPU and a daemon
out=$(inside --policy "$T/limits.json" -- sh -c "'$PY' -c \"\$1\" show; '$PY' -c \"\$1\" spin 2; (setsid sleep 1000 &); (trap '' TERM HUP; nohup sleep 1001 >/dev/null 2>&1 &); echo started" sh "$LIMITS_PY" 2>&1)
SEEN="$SEEN"$'\n'"$out"
share=$(sed -n 's/^share //p' <<<"$out")
if awk -v c="${ctl:-0}" 'BEGIN { exit !(c >= 0.85) }'; then
	check "CPU held to about half a core (share $share; without the limit $ctl)" \
		awk -v s="${share:-1}" 'BEGIN { exit !(s <= 0.70) }'
else
	skip "the machine is too busy to measure: a spinner without the limit got only ${ctl:-?} of a core"
fi
check "a double-forked daemon started" grep -q started <<<"$out"
for _ in $(seq 50); do [ -z "$(alive_of "$CLOSED")" ] && break; sleep 0.1; done
check "... and is gone after close" test -z "$(alive_of "$CLOSED")"

# ------------------------------------------- a default session, in every network mode
# No limit in the policy: the launcher's cgroup holds the default caps (4096 processes, half
# the memory), /tmp and /dev/shm are a quarter of the memory each, and so is TMPDIR: a tmpfs
# of the account's over the private folder's tmp, not the machine's disk.
HB=$PHOME/owstest-hog
limits_hog_build "$HB" "$PERSON:" || echo "Bail out! cannot build test/sh/limits_hog.c"
HOG=$HB/limits_hog
EV=$PHOME/owstest-events
for mode in none allowlist open; do
	as_person rm -f "$EV"
	out=$(inside --net "$mode" --events "$EV" -- bash -c "$DEFAULT_SHOW; '$PY' -c \"\$1\" show" sh "$LIMITS_PY" 2>&1)
	SEEN="$SEEN"$'\n'"$out"
	check "default, $mode: processes capped at $DEFAULT_PROCESSES (pids.max)" grep -qxE "pids v[12] $DEFAULT_PROCESSES" <<<"$out"
	mem=$(awk '$1 == "mem" {print $3}' <<<"$out")
	check "default, $mode: memory capped at half the machine's ($mem of $DEFAULT_MEMORY bytes)" \
		near "${mem:-0}" "$DEFAULT_MEMORY" $((1 << 20))
	check "default, $mode: oom_score_adj 1000: the OOM killer takes the sandbox first" \
		grep -qx "oom 1000" <<<"$out"
	check "default, $mode: ... and nothing inside lowers it" grep -qx "oom_lowered no" <<<"$out"
	for d in /tmp /dev/shm; do
		size=$(awk -v d="$d" '$1 == "size" && $2 == d {print $3; exit}' <<<"$out")
		check "default, $mode: $d is a quarter of the memory ($size)" near "$size" "$DEFAULT_TMPFS" $((1 << 20))
	done
	size=$(awk '$1 == "size" && $2 ~ /\/sandboxes\/[0-9a-f]+\/tmp$/ {print $3}' <<<"$out")
	check "default, $mode: TMPDIR is a sized tmpfs, not the disk (${size:-none})" near "${size:-0}" "$DEFAULT_TMPFS" $((1 << 20))
	check "default, $mode: the proof read the caps back from inside" \
		grep -q '"processes capped: pids.max .*"memory capped .*"memory file system sized /tmp' "$EV"
done

# A fork bomb in a default session stops at pids.max; the host stays responsive and the next
# session opens. RLIMIT_NPROC is lowered from outside to the cap plus 2500 (the accounts'
# processes count against it), so that code without the cap stops there too instead of
# taking every pid.
bound=$((DEFAULT_PROCESSES + 2500))
as_person prlimit --nproc=$bound:$bound "$BIN/owsbx" run --provider account --ro "$HB" -- \
	"$HOG" bomb 9000 6 >"$T/bomb.out" 2>&1 &
bomb=$!
for _ in $(seq 1200); do grep -q holding "$T/bomb.out" && break; sleep 0.1; done
n=$(awk '$1 == "forked" {print $2}' "$T/bomb.out")
check "a fork bomb stops below the cap (${n:-?} forked, cap $DEFAULT_PROCESSES)" test "${n:-99999}" -lt "$DEFAULT_PROCESSES"
check "... meanwhile the host forks and allocates (as the person, outside)" \
	as_person "$PY" -c 'import os; b = bytearray(64 << 20); pid = os.fork(); os._exit(0) if pid == 0 else os.waitpid(pid, 0)'
wait "$bomb"
check "... and the next session opens" inside -- /bin/true

# The config's [limits] is every such session's default: set small, a memory balloon and
# each memory file system's filler stop at it (each goes to twice the cap at most).
cp "$CONF" "$T/small.ini"
printf '[limits]\nmemory_mb = 256\ntmpfs_mb = 64\n' >>"$T/small.ini"
chmod 0644 "$T/small.ini"
out=$(inside --config "$T/small.ini" --ro "$HB" -- sh -c "'$HOG' fill /tmp/fill 128; '$HOG' fill /dev/shm/fill 128; '$HOG' fill \"\$TMPDIR/fill\" 128" 2>&1)
check "[limits] tmpfs_mb = 64: /tmp, /dev/shm and TMPDIR fillers stop at 64 MiB ($(tr '\n' ',' <<<"$out"))" \
	test "$(grep -cE '^filled 6[34] ENOSPC$' <<<"$out")" = 3
out=$(inside --config "$T/small.ini" -- "$PY" -c "$LIMITS_PY" balloon 512 2>&1)
rc=$?
check "[limits] memory_mb = 256: a 512 MiB balloon is killed ($rc, $(grep got <<<"$out" | tail -1))" test "$rc" = 137

# ------------------------------------------------------------ as found
for _ in $(seq 50); do cgroups_gone "$SEEN" && break; sleep 0.1; done
check "every cgroup of these sessions is removed ($(cgroups_of "$SEEN" | sort -u | wc -l) seen)" \
	cgroups_gone "$SEEN"
check "no controller was left enabled by us (no owsandbox+ marker)" \
	sh -c '! ls -d /sys/fs/cgroup/owsandbox+* /sys/fs/cgroup/unified/owsandbox+* 2>/dev/null | grep -q .'
check "no private folder left behind" test -z "$(ls "$T/state/sandboxes")"

done_testing
