#!/bin/bash
# Sessions opening at the same time, as the throwaway person on the landlock provider.
# An allowlist session's proxy listens nowhere on the host (its listener is in the
# sandbox's own network), so parallel openings do not race for host ports: 24 at once
# all open and reach a listed site, three rounds over. Two sessions opening the same rw
# folder at once both pass the proof (its probe file there is named per session), 30
# pairs over.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

TOKEN=OWSTEST_UPSTREAM_$(rand_hex 4)
tcp_server "$TOKEN" || bail_out "no upstream server"
UP=$SRV_PORT
R=$TU_TMP/runs
mkdir "$R" && chown "$TU_UID:$TU_GID" "$R"

# start N ARGS...: N sessions of `owsbx ARGS...` at once, in the background; their pids in
# PIDS, their output in $R/<i>.out and .err
start() {
	local n=$1 i
	shift
	PIDS=()
	for ((i = 0; i < n; i++)); do
		as_user_bg timeout 150 "$OWSBX" "$@" </dev/null >"$R/$i.out" 2>"$R/$i.err"
		PIDS+=("$AS_USER_PID")
	done
}
# finish WANT: waits for them all; FAILED lists "i:rc" for each that did not exit 0 with
# WANT as its output, FIRST_ERR the first such one's stderr
finish() {
	local want=$1 i rc
	FAILED="" FIRST_ERR=""
	for i in "${!PIDS[@]}"; do
		wait "${PIDS[$i]}"
		rc=$?
		if [ "$rc" != 0 ] || [ "$(cat "$R/$i.out")" != "$want" ]; then
			FAILED="$FAILED $i:$rc"
			[ -n "$FIRST_ERR" ] || FIRST_ERR=$(head -3 "$R/$i.err")
		fi
	done
}

# The proxy of a running allowlist session has no listening socket on the host.
as_user rm -f "$TU_WORK/go"
as_user_bg "$OWSBX" run --net allowlist --allow-site "localhost:$UP" --rw "$TU_WORK" -- /bin/sh -c '
	curl -s -m 5 "http://localhost:$2/" >"$1/token"
	i=0; while [ ! -e "$1/go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done' sh "$TU_WORK" "$UP" \
	</dev/null >/dev/null 2>&1
host=$AS_USER_PID
if poll 15 test -s "$TU_WORK/token"; then
	is "$(cat "$TU_WORK/token")" "$TOKEN" "control: the running session reaches its listed site"
	is "$(ss -Hltnp | grep -c "pid=$host,")" 0 "its proxy listens nowhere on the host's network"
else
	fail "control: the running session reaches its listed site"
fi
as_user touch "$TU_WORK/go"
wait "$host"
is "$?" 0 "the session ends normally"
as_user rm -f "$TU_WORK/go" "$TU_WORK/token"
# the control: `owsbx proxy`, for clients on the host, does listen there
as_user_bg "$OWSBX" proxy --allow-site "localhost:$UP" </dev/null >"$R/proxy.out" 2>&1
px=$AS_USER_PID
if poll 10 test -s "$R/proxy.out"; then
	port=$(head -1 "$R/proxy.out")
	like "$(ss -Hltnp "sport = :$port")" "pid=$px," "control: owsbx proxy listens on the host (port $port)"
else
	fail "control: owsbx proxy listens on the host" "$(cat "$R/proxy.out")"
fi
kill "$px"
wait "$px" 2>/dev/null

# 24 allowlist sessions opening at once, three rounds.
for round in 1 2 3; do
	start 24 run --net allowlist --allow-site "localhost:$UP" -- curl -s -m 30 "http://localhost:$UP/"
	finish "$TOKEN"
	is "$FAILED" "" "round $round: 24 allowlist sessions opening at once all run and reach the site" ||
		diag "$FIRST_ERR"
done
owstest_check_clean "the parallel allowlist sessions"

# Two sessions opening the same rw folder at once, 30 pairs.
bad=""
for pair in $(seq 30); do
	start 2 run --rw "$TU_WORK" -- /bin/echo ran
	finish ran
	[ -n "$FAILED" ] && bad="$bad pair $pair:$FAILED" && [ -z "$bad_err" ] && bad_err=$FIRST_ERR
done
is "$bad" "" "30 pairs of sessions opening the same rw folder at once all pass their proof" ||
	diag "${bad_err:-}"
is "$(find "$TU_WORK" -name '.owsandbox-probe-*' | wc -l)" 0 "no probe file is left in the folder"
owstest_check_clean "the paired sessions"
done_testing
