#!/bin/bash
# test/run.sh [TEST...]: run the unit tests (build/test/*, TAP) and the shell tests
# (test/sh/*.sh, TAP, root only), each under a timeout; print each test's tally and the
# failing lines; end with "N passed, N failed[, N skipped]" and exit non-zero when anything
# failed. Afterwards, check the machine: no owstest_ user, no process of a test user, no
# /tmp/owsandbox-<uid> of a test user, no owstest-* folder in /tmp or the other places tests
# use (test/places.sh), account files unchanged, and the /etc backups useradd and userdel
# rewrite byte for byte as before the run, absent ones absent (test/etc_backups.sh).
# Anything left counts as a failure (and is cleaned up).
#
#   V=1 test/run.sh            show every TAP line
#   OWSBX_SRC=/path/owsbx      the binary under test (default: ./owsbx of the repository)
#   UNIT_TIMEOUT=60 SH_TIMEOUT=600  (a file's limit: twice or more what the longest, attacks.sh, takes here)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
V=${V:-0}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-60}
SH_TIMEOUT=${SH_TIMEOUT:-600}
PASSED=0 FAILED=0 SKIPPED=0

WORK=$(mktemp -d /tmp/owsrun.XXXXXX) || exit 2
export OWSTEST_LEDGER=$WORK/ledger
: >"$OWSTEST_LEDGER"
trap 'rm -rf "$WORK"' EXIT

# Lines of test users in the account files and their backups (other people may add users
# meanwhile: only ours count).
machine_state() {
	local f
	for f in passwd group shadow gshadow subuid subgid; do
		grep -H '^owstest_' "/etc/$f" "/etc/$f-" 2>/dev/null
	done
}
STATE_BEFORE=$(machine_state)
USERS_BEFORE=$(getent passwd | cut -d: -f1 | grep '^owstest_' | sort)
. "$ROOT/test/places.sh"
. "$ROOT/test/etc_backups.sh"
# /tmp and the other places a test may make its folders (test/places.sh)
# shellcheck disable=SC2086 # the list of folders, split on purpose
temp_folders() { find $OWSTEST_SUID_BASES -maxdepth 1 -name 'owstest-*' 2>/dev/null | sort; }
TMP_BEFORE=$(temp_folders)
# The proof's named probe sockets, which a host killed while opening leaves behind.
probe_sockets() { find /dev/shm /tmp -maxdepth 1 -name '.owsandbox-probe-*' 2>/dev/null | sort; }
PROBES_BEFORE=$(probe_sockets)

# The account files and their backups, as the run found them: taken under the tests' /etc
# lock (test/user.sh), so that no test of another run is half-way through its users.
primaries_sum() { cat /etc/passwd /etc/group /etc/shadow /etc/gshadow /etc/subuid /etc/subgid 2>/dev/null | sha256sum; }
ETC_SNAPPED=0
if [ "$(id -u)" = 0 ]; then
	exec {ETC_LOCK}</etc
	if flock -w 600 "$ETC_LOCK" && owstest_etc_snapshot "$WORK/etc"; then
		ETC_SNAPPED=1
		PRIMARIES_BEFORE=$(primaries_sum)
	fi
	exec {ETC_LOCK}<&-
fi

# tally NAME FILE RC: count a TAP stream.
tally() {
	local name=$1 out=$2 rc=$3
	local p f s plan n
	p=$(grep -cE '^ok [0-9]+' "$out")
	s=$(grep -cE '^ok [0-9]+ (- )?# SKIP' "$out") # test/lib.sh's form, and account_lib.sh's
	f=$(grep -cE '^not ok [0-9]+' "$out")
	p=$((p - s))
	n=$((p + s + f))
	plan=$(grep -E '^1\.\.[0-9]+' "$out" | tail -1 | sed 's/^1\.\.\([0-9]*\).*/\1/')
	if grep -qE '^1\.\.0 # SKIP' "$out"; then
		s=$((s + 1))
		printf '%-28s skipped: %s\n' "$name" "$(sed -n 's/^1\.\.0 # SKIP //p' "$out")"
	else
		local why=""
		if grep -q '^Bail out!' "$out"; then
			why=$(grep -m1 '^Bail out!' "$out")
		elif [ -z "$plan" ]; then
			why="no plan (died after $n tests, rc $rc)"
		elif [ "$plan" != "$n" ]; then
			why="planned $plan, ran $n"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			why="timed out"
		elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			why="exit status $rc with no failing test"
		fi
		[ -n "$why" ] && f=$((f + 1))
		printf '%-28s %3d passed, %d failed, %d skipped%s\n' "$name" "$p" "$f" "$s" "${why:+  ($why)}"
		if [ "$V" = 1 ]; then
			sed 's/^/    /' "$out"
		elif [ "$f" -gt 0 ]; then
			# the failing lines and their diagnostics
			awk '/^not ok/ {show=1; print "    " $0; next} /^#/ && show {print "    " $0; next} {show=0}' "$out"
			[ -s "$out.err" ] && sed 's/^/    stderr: /' "$out.err" | tail -n 15
		fi
	fi
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	SKIPPED=$((SKIPPED + s))
}

run_one() {
	local kind=$1 t=$2 name out rc
	name=${t#"$ROOT"/}
	out=$WORK/$(echo "$name" | tr '/' '_').tap
	if [ "$kind" = unit ]; then
		timeout -k 5 "$UNIT_TIMEOUT" "$t" >"$out" 2>"$out.err" </dev/null
	else
		timeout -k 10 "$SH_TIMEOUT" bash "$t" >"$out" 2>"$out.err" </dev/null
	fi
	rc=$?
	tally "$name" "$out" "$rc"
}

if [ $# -gt 0 ]; then
	TESTS=("$@")
else
	TESTS=()
	for t in build/test/*; do [ -f "$t" ] && [ -x "$t" ] && TESTS+=("$t"); done
	for t in test/sh/*.sh; do [ -f "$t" ] && TESTS+=("$t"); done
fi

for t in "${TESTS[@]}"; do
	case "$t" in
	*.sh)
		if [ "$(id -u)" != 0 ]; then
			printf '%-28s skipped: needs root (creates throwaway users)\n' "$t"
			SKIPPED=$((SKIPPED + 1))
			continue
		fi
		run_one sh "$t"
		;;
	*) run_one unit "$t" ;;
	esac
done

# The machine after the tests.
leftover() {
	printf '%-28s LEFTOVER: %s\n' "machine check" "$1"
	FAILED=$((FAILED + 1))
}
if [ "$(id -u)" = 0 ]; then
	. "$ROOT/test/lib.sh" >/dev/null
	. "$ROOT/test/user.sh"
	while read -r name uid snap; do
		[ -n "$name" ] || continue
		dirty=0
		if getent passwd "$name" >/dev/null; then
			leftover "user $name still exists"
			dirty=1
		fi
		# the uid may belong to someone else by now (uids are reused): then its processes
		# and folders are not ours to judge or touch
		owner=$(getent passwd "$uid" | cut -d: -f1)
		if [ -z "$owner" ] || [ "$owner" = "$name" ]; then
			# A process still on its way out is not a leftover: poll, bounded.
			for _ in $(seq 50); do
				live=""
				for p in $(pgrep -u "$uid" 2>/dev/null); do
					st=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)
					[ -z "$st" ] || [ "$st" = Z ] && continue
					live="$live $p($(cat "/proc/$p/comm" 2>/dev/null))"
				done
				[ -z "$live" ] && break
				sleep 0.1
			done
			if [ -n "$live" ]; then
				leftover "processes of test uid $uid:$live"
				dirty=1
			fi
			if [ -e "/tmp/owsandbox-$uid" ]; then
				leftover "/tmp/owsandbox-$uid: $(find "/tmp/owsandbox-$uid" -maxdepth 1 | tr '\n' ' ')"
				dirty=1
			fi
		fi
		if [ -e "$snap" ]; then
			leftover "the test of $name did not clean up (snapshot $snap still there)"
			dirty=1
		fi
		if [ "$dirty" = 1 ]; then
			if [ -z "$owner" ] || [ "$owner" = "$name" ]; then
				owstest_rescue "$name" "$uid" "$snap"
			else
				rm -rf "$snap"
			fi
		fi
	done <"$OWSTEST_LEDGER"
	users_after=$(getent passwd | cut -d: -f1 | grep '^owstest_' | sort)
	new_users=$(comm -13 <(echo "$USERS_BEFORE") <(echo "$users_after"))
	[ -n "$new_users" ] && leftover "owstest_ users that appeared during the run: ${new_users//$'\n'/ } (not in this run's ledger: left alone)"
	old_users=$(comm -12 <(echo "$USERS_BEFORE") <(echo "$users_after"))
	[ -n "$old_users" ] && printf '%-28s note: owstest_ users from before this run: %s\n' "machine check" "${old_users//$'\n'/ }"
	stray=$(comm -13 <(echo "$TMP_BEFORE") <(temp_folders))
	if [ -n "$stray" ]; then
		leftover "new temp folders: ${stray//$'\n'/ }"
	fi
	stray=$(comm -13 <(echo "$PROBES_BEFORE") <(probe_sockets))
	[ -n "$stray" ] && leftover "new probe sockets: ${stray//$'\n'/ }"
	STATE_AFTER=$(machine_state)
	added=$(diff <(echo "$STATE_BEFORE") <(echo "$STATE_AFTER") | grep '^> .' | grep -v -e "${new_users:-^$}" | tr '\n' ' ')
	[ -n "$added" ] && leftover "test users' lines added to the account files: $added"
	# The backups, byte for byte, unless someone changed the account files themselves
	# meanwhile (a real useradd outside the tests rewrites the backups, rightly).
	exec {ETC_LOCK}</etc
	if [ "$ETC_SNAPPED" = 1 ] && flock -w 600 "$ETC_LOCK"; then
		if [ "$(primaries_sum)" != "$PRIMARIES_BEFORE" ]; then
			printf '%-28s note: the account files changed during the run: their backups not compared\n' "machine check"
		else
			changed=$(owstest_etc_diff "$WORK/etc")
			if [ -n "$changed" ]; then
				while IFS= read -r line; do leftover "$line"; done <<<"$changed"
				owstest_etc_restore "$WORK/etc"
			fi
		fi
	elif [ "$ETC_SNAPPED" = 1 ]; then
		leftover "could not take the /etc lock to compare the account files' backups"
	fi
	exec {ETC_LOCK}<&-
fi

if [ "$SKIPPED" -gt 0 ]; then
	printf '%d passed, %d failed, %d skipped\n' "$PASSED" "$FAILED" "$SKIPPED"
else
	printf '%d passed, %d failed\n' "$PASSED" "$FAILED"
fi
[ "$FAILED" -eq 0 ]
