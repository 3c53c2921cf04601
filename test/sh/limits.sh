#!/bin/bash
# Limits (memory, processes, CPU) under the landlock provider, for real: a cgroup of the
# session's own, made in the cgroup v2 subtree systemd delegates to the person, or at the
# machine's roots (v2, else v1) under a root host; refused, naming what to do, where none
# can be had. In each: the limits read back inside, a fork bomb and a memory balloon stop
# at the limit, the CPU share is measured against a control, a double-forked daemon is
# gone at close, and no cgroup of ours is left.
#
# No systemd runs in the test VM (scripts/kernel-vm.sh), so the delegated case makes the
# delegation as systemd does for user@UID.service: a cgroup below the root owned by the
# person (the folder, cgroup.procs, cgroup.subtree_control, cgroup.threads), memory and
# pids enabled for its children (cpu is left for the provider to enable and take back),
# and the person's process in a leaf below it.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
. "$OWSTEST_DIR/limits_lib.sh"
owstest_user_setup

W=$TU_WORK
hx=$(rand_hex 4)
as_user sh -c "echo '{\"limits\": {\"memory_mb\": 64, \"processes\": 16, \"cpu_percent\": 50}}' >'$W/limits.json'"
as_user sh -c "echo '{\"run_as\": \"$TU\", \"limits\": {\"memory_mb\": 64, \"processes\": 16, \"cpu_percent\": 50}}' >'$W/root-limits.json'"
as_user sh -c "echo '{\"run_as\": \"$TU\"}' >'$W/root-none.json'"
V2=$(cg_v2_root)
V1_ALL=1
for c in memory pids cpu; do
	cg_v2_offers "$c" || [ -d "/sys/fs/cgroup/$c" ] || V1_ALL=0
done

# limited_checks LABEL OUT: what `show`, run inside a limited session, printed.
limited_checks() {
	local label=$1 out=$2 v
	v=$(awk '$1 == "mem" {print $2}' <<<"$out")
	ok "$label: processes limited (pids.max 16)" grep -qxE "pids v[12] 16" <<<"$out"
	ok "$label: memory limited (64 MiB)" grep -qxE "mem v[12] $((64 << 20))" <<<"$out"
	if [ "$v" = v2 ]; then
		ok "$label: no swap to escape into (memory.swap.max 0)" grep -qx "swap v2 0" <<<"$out"
	else
		ok "$label: no swap to escape into (memsw at the limit, or no swap accounting)" \
			grep -qxE "swap (v1 $((64 << 20))|-)" <<<"$out"
	fi
	ok "$label: cpu limited (50%: 50000 of 100000 us)" grep -qxE "cpu v[12] 50000 100000" <<<"$out"
	isnt "$(cgroups_of "$out")" "" "$label: the session runs in a cgroup of its own"
}

# limited_session LABEL RUN...: one session (run with RUN) reads its limits back, then runs a
# fork bomb and a memory balloon; another without limits and a third with them measure the
# CPU share and start a double-forked daemon.  Few sessions: each takes seconds in the VM.
limited_session() {
	local label=$1 n share ctl seen
	shift
	"$@" --policy "$POLICY" -- sh -c "'$PY' -c \"\$1\" show; '$PY' -c \"\$1\" forkbomb 40; exec '$PY' -c \"\$1\" balloon 256" sh "$LIMITS_PY"
	seen=$SBX_OUT
	is "$SBX_RC" 137 "$label: a 256 MiB balloon is killed at the 64 MiB limit (exit $SBX_RC)" ||
		diag "$(sbx_diag)"
	limited_checks "$label" "$SBX_OUT"
	n=$(grep -xE '[0-9]+' <<<"$SBX_OUT")
	ok "$label: a fork bomb stops at the limit (${n:-?} of 40 started)" test "${n:-99}" -lt 16
	unlike "$SBX_OUT" survived "$label: the balloon never completes ($(grep got <<<"$SBX_OUT" | tail -1))"
	like "$SBX_OUT" "got (8|16|24|32|40|48|56)$" "$label: ... after it got some memory"
	"$@" --policy "$CONTROL" -- "$PY" -c "$LIMITS_PY" spin 2
	ctl=$(sed -n 's/^share //p' <<<"$SBX_OUT")
	"$@" --policy "$POLICY" -- sh -c "'$PY' -c \"\$1\" show; '$PY' -c \"\$1\" spin 2; (setsid sleep 1000 &) ; (trap '' TERM HUP; nohup sleep 1001 >/dev/null 2>&1 &); echo started" sh "$LIMITS_PY"
	share=$(sed -n 's/^share //p' <<<"$SBX_OUT")
	seen="$seen"$'\n'"$SBX_OUT"
	if awk -v c="${ctl:-0}" 'BEGIN { exit !(c >= 0.85) }'; then
		ok "$label: CPU held to about half a core (share $share; without the limit $ctl)" \
			awk -v s="${share:-1}" 'BEGIN { exit !(s <= 0.70) }'
	else
		skip "the machine is too busy to measure: a spinner without the limit got only ${ctl:-?} of a core"
	fi
	like "$SBX_OUT" started "$label: a double-forked daemon started"
	ok "$label: ... and is gone after close" poll 5 owstest_no_user_procs
	ok "$label: every cgroup of these sessions is removed" poll 5 cgroups_gone "$seen"
}

# ---------------------------------------------------------- not delegated: refused
# The person's commands run in the cgroup of this root test: nothing of it is theirs.
sbx report
like "$SBX_OUT" "limits.memory_processes_cpu .*landlock: unavailable" \
	"report: landlock says why it has no cgroup for limits here"
like "$SBX_OUT" "limits.default +partial +a session without limits of its own: $DEFAULT_PROCESSES processes \(landlock: RLIMIT_NPROC" \
	"report: limits.default names the default caps and how landlock keeps them here"
like "$SBX_OUT" "limits.default .*memory \(landlock: not capped as a whole" \
	"report: ... and that memory is not capped as a whole without a cgroup"
sbx run --policy "$W/limits.json" -- /bin/true
is "$SBX_RC" 70 "no delegated cgroup: a session with limits is refused (exit 70)"
like "$SBX_ERR" "^owsbx: the landlock provider cannot enforce the limits: " "... saying why"
like "$SBX_ERR" "account provider" "... and naming what to do"
ok "... and leaves no process" poll 5 owstest_no_user_procs
is "$(owstest_session_dirs)" "" "... and no session folder"

# ------------------------------------- a default session: caps with or without a cgroup
# No limit in the policy: the default caps hold all the same (lib/linux/limits_plan.c). Here
# the person has no delegated cgroup: processes are capped by RLIMIT_NPROC in the session's
# own user namespace, memory only by the OOM killer's choice (partial), /tmp and /dev/shm by
# their size. Where a cgroup is delegated the caps are its pids.max and memory.max instead.
HB=$TU_HOME/owstest-hog
limits_hog_build "$HB" "$TU_UID:$TU_GID" || bail_out "cannot build test/sh/limits_hog.c"
HOG=$HB/limits_hog
EV=$HB/events
default_checks() { # label: after a DEFAULT_SHOW + show session
	local label=$1 tmp shm
	like "$SBX_OUT" "(^|$NL)(nproc $DEFAULT_PROCESSES|pids v[12] $DEFAULT_PROCESSES)($NL|$)" \
		"$label: processes capped at $DEFAULT_PROCESSES (RLIMIT_NPROC, or the cgroup's pids.max)"
	like "$SBX_OUT" "(^|$NL)oom 1000($NL|$)" "$label: oom_score_adj 1000: the OOM killer takes the sandbox first"
	like "$SBX_OUT" "(^|$NL)oom_lowered no($NL|$)" "$label: ... and nothing inside can lower it"
	tmp=$(awk '$1 == "size" && $2 == "/tmp" {print $3; exit}' <<<"$SBX_OUT")
	shm=$(awk '$1 == "size" && $2 == "/dev/shm" {print $3}' <<<"$SBX_OUT")
	ok "$label: /tmp is a quarter of the memory ($tmp of $DEFAULT_TMPFS bytes)" near "$tmp" "$DEFAULT_TMPFS"
	ok "$label: /dev/shm is a quarter of the memory ($shm)" near "$shm" "$DEFAULT_TMPFS"
	like "$(grep '"event": \?"proof"' "$EV")" '"memory file system sized /tmp"' \
		"$label: the proof checked the sizes from inside"
	like "$(grep '"event": \?"proof"' "$EV")" '"processes capped' \
		"$label: ... and the process cap"
}
NL=$'\n'
# Where the kernel gives no user namespace every session runs in the host's namespaces: the
# section without user namespaces below is then what holds.
USERNS=yes
as_user unshare -Ur true 2>/dev/null || USERNS=""
for mode in ${USERNS:+none allowlist open}; do
	as_user rm -f "$EV"
	sbx run --net "$mode" --events "$EV" -- bash -c "$DEFAULT_SHOW; '$PY' -c \"\$1\" show" sh "$LIMITS_PY"
	is "$SBX_RC" 0 "default, $mode: the session runs" || diag "$(sbx_diag)"
	default_checks "default, $mode"
	if ! grep -q '"limits.memory"' "$EV"; then
		mem=$(awk '$1 == "mem" {print $3}' <<<"$SBX_OUT")
		ok "default, $mode: memory capped by the session's cgroup (${mem:-?})" near "${mem:-0}" "$DEFAULT_MEMORY"
	else
		like "$(grep '"event": \?"open"' "$EV")" '"promise": ?"limits.memory", ?"why": ?"no cgroup' \
			"default, $mode: without a cgroup the memory cap is listed partial, with the reason"
		if [ "$mode" = open ] && [ -n "$TU_OPEN_PARTIAL" ]; then
			skip "open runs partial here anyway (no Landlock scopes): its enforcement says so"
		else
			like "$(grep '"event": \?"open"' "$EV")" '"enforcement": ?"full"' \
				"default, $mode: ... and the wall's enforcement stays full"
		fi
	fi
done

# A fork bomb in a default session stops at the cap; the host stays responsive and the next
# session opens. The person's own RLIMIT_NPROC is lowered from outside to the cap plus 2500, so
# that code without the cap (which would take every pid: RLIMIT_NPROC is above pid_max) stops
# there too.
bound=$((DEFAULT_PROCESSES + 2500))
as_user_bg prlimit --nproc=$bound:$bound "$OWSBX" run --ro "$HB" -- "$HOG" bomb 9000 6 \
	>"$TU_TMP/bomb.out" 2>&1
bomb_pid=$AS_USER_PID
poll 120 grep -q holding "$TU_TMP/bomb.out"
n=$(awk '$1 == "forked" {print $2}' "$TU_TMP/bomb.out")
ok "a fork bomb stops below the cap (${n:-?} forked, cap $DEFAULT_PROCESSES)" test "${n:-99999}" -lt "$DEFAULT_PROCESSES"
ok "... at the kernel's refusal (EAGAIN)" grep -q "forked [0-9]* EAGAIN" "$TU_TMP/bomb.out"
ok "... meanwhile the host forks and allocates (as the person, outside)" \
	poll 10 as_user "$PY" -c 'import os; b = bytearray(64 << 20); pid = os.fork(); os._exit(0) if pid == 0 else os.waitpid(pid, 0)'
diag <<<"pids in use during the bomb: $(ls -d /proc/[0-9]* | wc -l) processes of pid_max $(cat /proc/sys/kernel/pid_max)"
wait "$bomb_pid"
sbx run -- /bin/true
is "$SBX_RC" 0 "... and the next session opens"

# A person who set a lower process limit of their own (ulimit -u) keeps it: the session runs
# (raising a hard limit back is refused to them) and its commands see theirs, not the cap.
low=$((DEFAULT_PROCESSES / 4))
out=$(as_user prlimit --nproc=$low:$low "$OWSBX" run --ro "$HB" -- bash -c 'ulimit -Hu' 2>&1)
is "$?:$out" "0:$low" "a person's own lower process limit ($low) is kept and the session runs"

[ -n "$USERNS" ] || skip "this kernel gives the person no user namespace: a default session runs in the host's namespaces (checked below)" 30

# The config's [limits] is the default of every session without limits of its own: set
# small, a memory file system filler stops at it. (Each fills at most twice the size.)
CFG=$HB/small.ini
printf '[sandbox]\n%s\n[limits]\ntmpfs_mb = 64\n' "$TU_OPEN_PARTIAL" >"$CFG"
chmod 0644 "$CFG"
if [ -n "$USERNS" ]; then
	sbx run --config "$CFG" --ro "$HB" -- sh -c "'$HOG' fill /tmp/fill 128; '$HOG' fill /dev/shm/fill 128"
	like "$SBX_OUT" "^filled 6[34] ENOSPC" "[limits] tmpfs_mb = 64: a /tmp filler stops at 64 MiB ($(head -1 <<<"$SBX_OUT"))"
	like "$SBX_OUT" "${NL}filled 6[34] ENOSPC" "... and a /dev/shm filler ($(tail -1 <<<"$SBX_OUT"))"
else
	skip "no user namespace: no /tmp or /dev/shm of the sandbox's own to fill" 2
fi

# Memory without a cgroup: not capped as a whole, but the OOM killer takes the sandbox's
# processes before the person's. An outer memory cgroup of 640 MiB holds the host, a program
# of the person's with 360 MiB, and a default session whose balloon grows: the kernel's OOM
# kill must take the balloon, never the person's program (bigger, and chosen without the
# sandbox's oom_score_adj).
OOM_CG=""
if [ -d /sys/fs/cgroup/memory ] && [ "$(stat -f -c %T /sys/fs/cgroup/memory)" = cgroupfs ]; then
	OOM_CG=/sys/fs/cgroup/memory/owstest-oom-$hx LIMIT_FILE=memory.limit_in_bytes
	OOM_BACK=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
elif cg_v2_offers memory && [ -n "$V2" ]; then
	OOM_CG=$V2/owstest-oom-$hx LIMIT_FILE=memory.max
	OOM_BACK=$V2$(sed -n 's/^0:://p' /proc/self/cgroup)
fi
if [ -n "$OOM_CG" ]; then
	mkdir "$OOM_CG"
	owstest_rmdir_at_exit "$OOM_CG"
	echo $((640 << 20)) >"$OOM_CG/$LIMIT_FILE"
	echo $$ >"$OOM_CG/cgroup.procs"
	as_user_bg "$PY" -c 'import time; b = bytearray(360 << 20); print("held", flush=True); time.sleep(60)' \
		>"$TU_TMP/held"
	bystander=$AS_USER_PID
	poll 30 grep -q held "$TU_TMP/held"
	sbx run --ro "$HB" -- "$PY" -c "$LIMITS_PY" balloon 1024
	echo $$ >"$OOM_BACK/cgroup.procs"
	is "$SBX_RC" 137 "OOM in a default session: the balloon is killed ($(grep got <<<"$SBX_OUT" | tail -1))"
	ok "... and the person's bigger program outside is not" alive "$bystander"
	kill "$bystander" 2>/dev/null
	wait "$bystander" 2>/dev/null
	poll 10 sh -c "[ -z \"\$(cat '$OOM_CG/cgroup.procs')\" ]"
else
	skip "no memory controller to make an outer memory cgroup with" 2
fi

# Without user namespaces (the host's namespaces): RLIMIT_NPROC counts the person's other
# processes too, so it is what they had plus the cap (partial); TMPDIR is on disk (partial).
WITHOUT=$OWSTEST_DIR/helpers/without.py
as_user rm -f "$EV"
as_user prlimit --nproc=$bound:$bound "$PY" "$WITHOUT" userns -- "$OWSBX" run --events "$EV" \
	--ro "$HB" -- bash -c 'ulimit -Hu; "$1" bomb 9000 0' sh "$HOG" >"$TU_TMP/bomb.out" 2>&1
n=$(awk '$1 == "forked" {print $2}' "$TU_TMP/bomb.out")
lim=$(head -1 "$TU_TMP/bomb.out")
ok "no user namespace: RLIMIT_NPROC is the person's processes plus the cap ($lim)" \
	test "${lim:-0}" -gt "$DEFAULT_PROCESSES" -a "${lim:-0}" -lt $((DEFAULT_PROCESSES + 1000))
ok "no user namespace: a fork bomb stops below the cap (${n:-?} forked)" test "${n:-99999}" -lt "$DEFAULT_PROCESSES"
for promise in limits.processes limits.memory limits.tmpfs; do
	like "$(grep '"event": \?"open"' "$EV")" "\"promise\": ?\"$promise\"" "no user namespace: $promise is listed partial"
done

# ------------------------------------------------ root host: at the machine's roots
if [ "$V1_ALL" = 1 ]; then
	POLICY=$W/root-limits.json CONTROL=$W/root-none.json
	root_sbx() { # as root, the command runs as the person (run_as)
		"$OWSBX" "$@" >"$TU_TMP/sbx.out" 2>"$TU_TMP/sbx.err" </dev/null
		SBX_RC=$?
		SBX_OUT=$(cat "$TU_TMP/sbx.out")
		SBX_ERR=$(cat "$TU_TMP/sbx.err")
	}
	out=$("$OWSBX" report 2>&1)
	like "$out" "limits.memory_processes_cpu .*landlock: cgroup v[12] \(" \
		"root host: report names the hierarchy landlock uses"
	limited_session "root host" root_sbx run
else
	skip "this kernel lacks the memory, pids or cpu controller in cgroup v2 and v1" 15
fi

# ------------------------------------------- delegated: the person's own cgroup v2
if [ -n "$V2" ] && cg_v2_offers memory pids cpu &&
	[ "$(stat -c %u "$V2")" = 0 ]; then
	D=$V2/owstest-deleg-$hx LEAF=$V2/owstest-deleg-$hx/leaf
	ORIG=$V2$(sed -n 's/^0:://p' /proc/self/cgroup)
	mkdir "$D"
	owstest_rmdir_at_exit "$LEAF" "$D"
	for f in memory pids cpu; do
		grep -qw "$f" "$V2/cgroup.subtree_control" || echo "+$f" >"$V2/cgroup.subtree_control"
	done
	chown "$TU_UID:$TU_GID" "$D" "$D/cgroup.procs" "$D/cgroup.subtree_control" "$D/cgroup.threads"
	echo "+memory +pids" >"$D/cgroup.subtree_control"
	mkdir "$LEAF"
	chown "$TU_UID:$TU_GID" "$LEAF" "$LEAF/cgroup.procs" "$LEAF/cgroup.threads"
	# in_leaf CMD...: CMD (and what it starts) in the person's leaf; this shell back after.
	in_leaf() {
		local rc
		echo $$ >"$LEAF/cgroup.procs" || return 125
		"$@"
		rc=$?
		echo $$ >"$ORIG/cgroup.procs"
		return $rc
	}
	leaf_sbx() { in_leaf sbx "$@"; }
	as_user sh -c "echo '{}' >'$W/none.json'"
	POLICY=$W/limits.json CONTROL=$W/none.json

	in_leaf sbx report
	like "$SBX_OUT" "limits.memory_processes_cpu .*landlock: cgroup v2 \(memory, pids, cpu\) delegated at $D" \
		"delegated: report says landlock has cgroup v2 (memory, pids, cpu) delegated at the person's cgroup"
	in_leaf sbx run --policy "$POLICY" -- "$PY" -c "$LIMITS_PY" show
	like "$(cgroups_of "$SBX_OUT")" "^$D/owsandbox-[0-9a-f]{32}$" \
		"delegated: the session's cgroup is beside the person's leaf, in their delegated cgroup"
	ok "delegated: ... and gone after close" cgroups_gone "$SBX_OUT"
	limited_session "delegated" leaf_sbx run
	is "$(cat "$D/cgroup.subtree_control")" "memory pids" \
		"delegated: cpu, enabled for the sessions, is taken back: the person's cgroup is as found"
	is "$(cd "$D" && ls -d owsandbox* 2>/dev/null)" "" "delegated: nothing of ours is left in it"

	# A host killed with SIGKILL leaves its (empty) cgroup; the next session sweeps it.
	echo $$ >"$LEAF/cgroup.procs"
	as_user_bg "$OWSBX" run --policy "$POLICY" -- sleep 1000
	echo $$ >"$ORIG/cgroup.procs"
	poll 10 sh -c "ls -d '$D'/owsandbox-* >/dev/null 2>&1 && pgrep -u $TU_UID -x sleep >/dev/null"
	ok "delegated: a session runs in its cgroup" sh -c "ls -d '$D'/owsandbox-* >/dev/null 2>&1"
	kill -9 "$AS_USER_PID"
	ok "delegated: after kill -9 of the host, its commands are gone" poll 5 owstest_no_user_procs
	ok "delegated: ... and its cgroup stays behind, empty" sh -c "ls -d '$D'/owsandbox-* >/dev/null 2>&1"
	in_leaf sbx run --policy "$POLICY" -- /bin/true
	is "$SBX_RC" 0 "delegated: the next session runs"
	is "$(cd "$D" && ls -d owsandbox* 2>/dev/null)" "" "delegated: ... and swept the stale cgroup"

	# Not the person's: the leaf's parent given back to root refuses, naming what to do.
	chown 0:0 "$D" "$D/cgroup.procs"
	in_leaf sbx run --policy "$POLICY" -- /bin/true
	is "$SBX_RC" 70 "delegated to nobody: refused (exit 70)"
	like "$SBX_ERR" "not delegated to the person" "... saying the cgroup is not the person's"
	like "$SBX_ERR" "systemd-run --user --scope" "... and naming what to do"
	chown "$TU_UID:$TU_GID" "$D" "$D/cgroup.procs"
else
	skip "cgroup v2 here lacks the memory, pids or cpu controller (a hybrid machine keeps them in v1, which delegates nothing): the delegated case needs a cgroup v2 kernel (scripts/kernel-vm.sh)" 26
fi

owstest_check_clean
done_testing
