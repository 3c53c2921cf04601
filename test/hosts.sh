# shellcheck shell=bash
# Finding the host process of a running session, to kill it as a crashing host would die.
# Sourced by lib.sh and account_lib.sh.

# session_host USER PATTERN: the pid of USER's owsbx host whose command line matches
# PATTERN (pgrep -f). Under the landlock provider the sandbox's init is a fork of the host
# and keeps its command line, so two processes match: the host is the one whose parent is
# not also a match. Not the lower pid: pids wrap.
session_host() {
	local c cands host=""
	cands=$(pgrep -u "$1" -f "$2") || return 1
	for c in $cands; do
		grep -qx "$(awk '/^PPid:/ {print $2}' "/proc/$c/status" 2>/dev/null)" <<<"$cands" ||
			host=$c
	done
	[ -n "$host" ] && echo "$host"
}

# sleepers_left USER: waits up to 5 s for USER's `sleep` processes (the daemons a test's
# session started) to go; prints the pids of those still there.
sleepers_left() {
	local left
	for _ in $(seq 100); do
		left=$(pgrep -u "$1" -x sleep) || return 0
		sleep 0.05
	done
	echo "$left"
}
