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
	check "... with nothing limited in it" grep -qxE "pids (v2 max|-)" <<<"$out"
else
	skip "no cgroup v2 hierarchy is mounted" 2
fi

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

# ------------------------------------------------------------ as found
for _ in $(seq 50); do cgroups_gone "$SEEN" && break; sleep 0.1; done
check "every cgroup of these sessions is removed ($(cgroups_of "$SEEN" | sort -u | wc -l) seen)" \
	cgroups_gone "$SEEN"
check "no controller was left enabled by us (no owsandbox+ marker)" \
	sh -c '! ls -d /sys/fs/cgroup/owsandbox+* /sys/fs/cgroup/unified/owsandbox+* 2>/dev/null | grep -q .'
check "no private folder left behind" test -z "$(ls "$T/state/sandboxes")"

done_testing
