# Sourced by test/sh/account_*.sh and bench/account.sh: a throwaway account-provider
# machine, set up and removed by owsbx itself.
#
# A throwaway person (0700 home, fake key, 0644 ~/.bashrc, a running ssh-agent) is
# created, then the real `owsbx machine sandbox setup --yes --config CONF --for-user
# PERSON --launcher-source owsbx-launch` makes the two accounts, the group, the state
# folder, the launcher and its record, and the nftables table (all with an owstest_
# prefix), proves the wall as both accounts and chooses the provider in CONF.
# done_testing runs the real `owsbx machine sandbox remove --yes` and checks, byte for
# byte, that users, groups, the nft ruleset and the files are as before setup; then it
# deletes the person and checks the /etc/*- backups are as before the test.  A trap
# does the same (without the checks) when a test dies early.  An exclusive flock on /etc
# is held from the first snapshot to the last restore, as test/user.sh does.
#
# Provides: T HEX CLOSED OPEN GROUP PERSON PHOME CONF BIN TABLE, and
#   as_person CMD...   run CMD as the person, with OWSBX_CONFIG and the agent
#   owsbx ARGS...      `owsbx` as the person
#   machine ARGS...    `owsbx machine sandbox ARGS --config CONF` as root
#   ok/not_ok/skip/check/done_testing   TAP helpers
#   OPEN_PARTIAL       "open_without_scopes = partial" in CONF where Landlock has no scopes
#   need_landlock_abi N WHY COUNT, have_landlock_abi N, need_userns...   kernel guards
#                      (test/features.sh); the file-level form (no COUNT) tears the
#                      setup down on its way out

set -u
ROOT=${OWS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "${BASH_SOURCE[0]}")/etc_backups.sh"
. "$(dirname "${BASH_SOURCE[0]}")/places.sh"
. "$(dirname "${BASH_SOURCE[0]}")/features.sh"
. "$(dirname "${BASH_SOURCE[0]}")/hosts.sh"
N=0
FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $*"; }
skip() { N=$((N + 1)); echo "ok $N - # SKIP $*"; }
check() { # check "name" cmd...: ok when cmd succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
diag() { sed 's/^/# /'; }

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the account tests need root (they create throwaway users)"
	exit 0
fi
for tool in useradd nft setfacl ssh-agent runuser flock; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
[ -x "$ROOT/owsbx" ] && [ -x "$ROOT/owsbx-launch" ] ||
	{ echo "1..0 # SKIP build first (make)"; exit 0; }

HEX=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
CLOSED=owstest_c$HEX OPEN=owstest_o$HEX GROUP=owstest_g$HEX PERSON=owstest_p$HEX
TABLE=owstest_$HEX
# The launcher is set-user-ID root: its folder must be on a mount that honours that
# (test/places.sh; /tmp is nosuid on Debian 13).
T=$(owstest_suid_tmpdir owstest-acct) || { echo "Bail out! no folder for a set-user-ID launcher"; exit 255; }
BIN=$T/bin CONF=$T/config.ini PHOME=${OWSTEST_HOME_BASE:-/home}/$PERSON SNAP=$T/.snap
AGENT_PID=
SET_UP=0
TORN_DOWN=0

# Other tests (or another engineer's run) may add their own owstest_ entries meanwhile:
# only ours count.
lib_snapshot() { # dir
	mkdir -p "$1"
	getent passwd | { grep -v owstest; getent passwd | grep -- "$HEX"; } | sort >"$1/passwd"
	getent group | { grep -v owstest; getent group | grep -- "$HEX"; } | sort >"$1/group"
	nft list ruleset | awk -v h="$TABLE" '
		/^table / { skip = ($3 ~ /^owstest/ && $3 != h) }
		!skip { print }
		/^}/ { skip = 0 }' >"$1/nft"
	# The files setup touches: the config, the launcher's folder, the state folder.
	{
		find "$BIN" "$T/state" -printf '%p %m %u %g %s\n' 2>/dev/null
		sha256sum "$CONF" "$BIN"/* 2>/dev/null
	} | sort >"$1/files"
}
lib_same() { # desc snapA snapB
	local d=0 f
	for f in passwd group nft files; do
		if ! cmp -s "$2/$f" "$3/$f"; then
			d=1
			echo "differs: $f" | diag
			diff "$2/$f" "$3/$f" | head -20 | diag
		fi
	done
	if [ $d = 0 ]; then ok "$1"; else not_ok "$1"; fi
}

machine() { "$BIN/owsbx" machine sandbox "$@" --config "$CONF"; }

# The live (not zombie) processes of a user; nothing when the user does not exist.
alive_of() { # user
	local uid p
	uid=$(id -u "$1" 2>/dev/null) || return 0
	for p in $(pgrep -u "$uid" 2>/dev/null); do
		[ "$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = Z ] || echo "$p"
	done
}
# Kills a user's processes and waits (bounded) until none is left alive.
kill_all_of() { # user
	local i
	for i in $(seq 100); do
		[ -z "$(alive_of "$1")" ] && return 0
		pkill -KILL -u "$(id -u "$1")" 2>/dev/null
		sleep 0.05
	done
	return 1
}

# Deletes the person and puts the /etc/*- backups back; checks when asked to.
lib_undo_person() { # [check]
	local left
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	AGENT_PID=
	kill_all_of "$PERSON"
	getent passwd "$PERSON" >/dev/null && userdel -r "$PERSON" 2>/dev/null
	getent group "$PERSON" >/dev/null && groupdel "$PERSON" 2>/dev/null
	owstest_etc_restore "$SNAP/etc"
	if [ "${1:-}" = check ]; then
		lib_snapshot "$SNAP/s_end"
		lib_same "at the end, the machine is as the test found it" "$SNAP/s0" "$SNAP/s_end"
		left=$(owstest_etc_diff "$SNAP/etc")
		check "the /etc backups are byte for byte as before (absent ones absent)" test -z "$left"
		[ -n "$left" ] && diag <<<"$left"
	fi
}

teardown() {
	set +e
	[ "$TORN_DOWN" = 1 ] && return 0
	TORN_DOWN=1
	# Anything the person or the accounts still run (a failed test) goes first.
	for u in "$PERSON" "$CLOSED" "$OPEN"; do kill_all_of "$u"; done
	if [ "$SET_UP" = 1 ]; then
		machine remove --yes >/dev/null 2>&1 ||
			echo "# account_lib: remove failed; taking the setup apart by hand" >&2
		# What a failed remove may have left: never leave the machine changed.
		nft delete table inet "$TABLE" 2>/dev/null
		for u in "$CLOSED" "$OPEN"; do getent passwd "$u" >/dev/null && userdel "$u" 2>/dev/null; done
		for g in "$CLOSED" "$OPEN" "$GROUP"; do getent group "$g" >/dev/null && groupdel "$g" 2>/dev/null; done
	fi
	lib_undo_person
	rm -rf "$T"
	[ -n "${OWS_LOCK_FD:-}" ] && exec {OWS_LOCK_FD}<&-
}
trap teardown EXIT
trap 'exit 130' INT TERM

# remove, checked against the machine before setup; then the person goes.  Prints the plan.
done_testing() {
	local out
	# Sessions end with their host; wait (bounded) for the last to be gone.
	for _ in $(seq 100); do
		[ -z "$(alive_of "$CLOSED")$(alive_of "$OPEN")" ] && break
		sleep 0.05
	done
	if [ "$SET_UP" = 0 ]; then
		: # OWSTEST_ACCOUNT=0: nothing was set up
	elif out=$(machine remove --yes 2>&1); then
		SET_UP=0
		ok "owsbx machine sandbox remove --yes"
	else
		not_ok "owsbx machine sandbox remove --yes"
		diag <<<"$out"
	fi
	lib_snapshot "$SNAP/s_rm"
	lib_same "after setup and remove: users, groups, nft ruleset and files as before setup" \
		"$SNAP/s1" "$SNAP/s_rm"
	lib_undo_person check
	echo "1..$N"
	exit $FAILED
}

# The lock: no other test snapshots /etc while ours is out.
exec {OWS_LOCK_FD}</etc
flock -w 600 "$OWS_LOCK_FD" || { echo "Bail out! cannot lock /etc for the account snapshot"; exit 255; }
mkdir -p "$SNAP/etc" "$BIN"
chmod 0700 "$SNAP"
chmod 0755 "$BIN"
owstest_etc_snapshot "$SNAP/etc" || { echo "Bail out! cannot snapshot the /etc backups"; exit 255; }
install -m 0755 "$ROOT/owsbx" "$BIN/owsbx"
# Where Landlock has no scopes (ABI < 6), `open` runs partial only when the config says so
# (see test/user.sh): the tests of `open` then test the rest of the open account's wall.
OPEN_PARTIAL=""
have_landlock_abi 6 || OPEN_PARTIAL="open_without_scopes = partial"
cat >"$CONF" <<EOF
; a throwaway machine config for the account tests
[sandbox]
state_dir = $T/state
$OPEN_PARTIAL
[account]
closed_user = $CLOSED
open_user = $OPEN
group = $GROUP
launcher = $BIN/owsbx-launch
nft_table = $TABLE
EOF
chmod 0644 "$CONF"
cp "$CONF" "$SNAP/config.orig"
lib_snapshot "$SNAP/s0"

useradd --create-home --home-dir "$PHOME" --shell /bin/sh "$PERSON"
chmod 0700 "$PHOME"
# test/run.sh checks the person is gone afterwards (and rescues the machine if not).
[ -n "${OWSTEST_LEDGER:-}" ] && echo "$PERSON $(id -u "$PERSON") $SNAP/etc" >>"$OWSTEST_LEDGER"

# The person's secrets and folders.
runuser -u "$PERSON" -- sh -c '
	umask 022
	mkdir -p ~/.ssh ~/work ~/ref && chmod 700 ~/.ssh
	echo "-----BEGIN OPENSSH PRIVATE KEY----- fake" > ~/.ssh/id_ed25519 && chmod 600 ~/.ssh/id_ed25519
	echo "export SECRET_TOKEN=hunter2" > ~/.bashrc && chmod 644 ~/.bashrc
	echo reference > ~/ref/readme.txt' {OWS_LOCK_FD}<&-
# The agent's socket in our own folder: a killed agent leaves no /tmp/ssh-* behind.
mkdir -m 0700 "$T/agent" && chown "$PERSON:" "$T/agent"
eval "$(runuser -u "$PERSON" -- ssh-agent -s -a "$T/agent/sock" {OWS_LOCK_FD}<&-)" >/dev/null
AGENT_PID=$SSH_AGENT_PID
lib_snapshot "$SNAP/s1"

# The real setup, proof included.
# OWSTEST_ACCOUNT=0: the person alone, no machine setup (a test of the landlock provider
# only, test/sh/attacks.sh, on a kernel where setup's proof may not pass).
if [ "${OWSTEST_ACCOUNT:-1}" = 1 ]; then
	SET_UP=1
	if ! machine setup --yes --for-user "$PERSON" --launcher-source "$ROOT/owsbx-launch" \
		>"$T/setup.out" 2>&1 {OWS_LOCK_FD}<&-; then
		echo "Bail out! owsbx machine sandbox setup failed: $(tail -3 "$T/setup.out" | tr '\n' ' ')"
		exit 255
	fi
	CUID=$(id -u "$CLOSED") OUID=$(id -u "$OPEN") GGID=$(getent group "$GROUP" | cut -d: -f3)
	for u in "$CLOSED" "$OPEN"; do
		[ -n "${OWSTEST_LEDGER:-}" ] && echo "$u $(id -u "$u") $SNAP/etc" >>"$OWSTEST_LEDGER"
	done
fi

as_person() {
	runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$PHOME" \
		USER="$PERSON" SSH_AUTH_SOCK="$SSH_AUTH_SOCK" OWSBX_CONFIG="$CONF" "$@" {OWS_LOCK_FD}<&-
}
owsbx() { as_person "$BIN/owsbx" "$@"; }
