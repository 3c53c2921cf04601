# Sourced by test/sh/account_*.sh: a throwaway account-provider machine.
#
# Until `owsbx machine sandbox setup` lands, the tests set the machine up
# themselves, the way setup will: two system accounts and a group
# (owstest_ prefix), the launcher installed root:group 4750 with its record
# beside it, a state folder, an nftables table of our own for the closed
# uid, and a throwaway person (0700 home, fake key, 0644 ~/.bashrc, a
# running ssh-agent) who is in the group.  Everything is undone by a trap,
# on success or failure: users, groups, the table, temp folders, cgroups,
# and the /etc/*- backups useradd and userdel rewrite.
#
# Provides: T HEX CLOSED OPEN GROUP PERSON PHOME CONF BIN, and
#   as_person CMD...   run CMD as the person, with OWSBX_CONFIG and the agent
#   owsbx ARGS...      `owsbx` as the person
#   ok/not_ok/skip/plan   TAP helpers

set -u
ROOT=${OWS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
N=0
FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $*"; }
skip() { N=$((N + 1)); echo "ok $N - # SKIP $*"; }
check() { # check "name" cmd...: ok when cmd succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
done_testing() { echo "1..$N"; exit $FAILED; }

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the account tests need root (they create throwaway users)"
	exit 0
fi
for tool in useradd nft setfacl ssh-agent runuser; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
[ -x "$ROOT/owsbx" ] && [ -x "$ROOT/owsbx-launch" ] ||
	{ echo "1..0 # SKIP build first (make)"; exit 0; }

HEX=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
CLOSED=owstest_c$HEX OPEN=owstest_o$HEX GROUP=owstest_g$HEX PERSON=owstest_p$HEX
TABLE=owstest_$HEX
T=$(mktemp -d /tmp/owstest-XXXXXX)
chmod 0755 "$T"
BIN=$T/bin CONF=$T/config.ini PHOME=/home/$PERSON
ETC_BACKUPS="passwd- group- shadow- gshadow- subuid- subgid-"
mkdir -p "$T/etc-backup"
for f in $ETC_BACKUPS; do
	[ -e "/etc/$f" ] && cp -a "/etc/$f" "$T/etc-backup/$f"
done
ls -d /sys/fs/cgroup/*/owsandbox-* 2>/dev/null | sort >"$T/cgroups-before"
AGENT_PID=

teardown() {
	set +e
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	# Anything the person or the accounts still run (a failed test) goes first.
	for u in "$PERSON" "$CLOSED" "$OPEN"; do
		id -u "$u" >/dev/null 2>&1 && pkill -KILL -u "$(id -u "$u")" 2>/dev/null
	done
	sleep 0.2
	nft delete table inet "$TABLE" 2>/dev/null
	for d in $(ls -d /sys/fs/cgroup/*/owsandbox-* 2>/dev/null | sort | comm -13 "$T/cgroups-before" -); do
		rmdir "$d" 2>/dev/null
	done
	userdel -r "$PERSON" 2>/dev/null
	userdel "$CLOSED" 2>/dev/null
	userdel "$OPEN" 2>/dev/null
	groupdel "$CLOSED" 2>/dev/null
	groupdel "$OPEN" 2>/dev/null
	groupdel "$GROUP" 2>/dev/null
	for f in $ETC_BACKUPS; do
		if [ -e "$T/etc-backup/$f" ]; then cp -a "$T/etc-backup/$f" "/etc/$f"; else rm -f "/etc/$f"; fi
	done
	rm -rf "$T"
}
trap teardown EXIT
trap 'exit 130' INT TERM

groupadd --system "$GROUP"
for u in "$CLOSED" "$OPEN"; do
	useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$u"
done
useradd --create-home --home-dir "$PHOME" --shell /bin/sh --groups "$GROUP" "$PERSON"
chmod 0700 "$PHOME"
CUID=$(id -u "$CLOSED") OUID=$(id -u "$OPEN") GGID=$(getent group "$GROUP" | cut -d: -f3)

# The person's secrets and folders.
runuser -u "$PERSON" -- sh -c '
	umask 022
	mkdir -p ~/.ssh ~/work ~/ref && chmod 700 ~/.ssh
	echo "-----BEGIN OPENSSH PRIVATE KEY----- fake" > ~/.ssh/id_ed25519 && chmod 600 ~/.ssh/id_ed25519
	echo "export SECRET_TOKEN=hunter2" > ~/.bashrc && chmod 644 ~/.bashrc
	echo reference > ~/ref/readme.txt'
eval "$(runuser -u "$PERSON" -- ssh-agent -s)" >/dev/null
AGENT_PID=$SSH_AGENT_PID

# What setup installs: the launcher, root:group 4750, and its record.
mkdir -p "$BIN" "$T/state/sandboxes" "$T/state/journal"
chmod 0755 "$BIN" "$T/state"
chmod 0711 "$T/state/sandboxes"
install -m 0755 "$ROOT/owsbx" "$BIN/owsbx"
install -o root -g "$GROUP" -m 4750 "$ROOT/owsbx-launch" "$BIN/owsbx-launch"
cat >"$BIN/owsbx-launch.conf" <<EOF
# written by the account tests, as owsbx machine sandbox setup does
closed_uid=$CUID
closed_gid=$(id -g "$CLOSED")
open_uid=$OUID
open_gid=$(id -g "$OPEN")
group_gid=$GGID
state_dir=$T/state
EOF
chmod 0644 "$BIN/owsbx-launch.conf"
cat >"$CONF" <<EOF
[sandbox]
provider = account
state_dir = $T/state
[account]
closed_user = $CLOSED
open_user = $OPEN
group = $GROUP
launcher = $BIN/owsbx-launch
nft_table = $TABLE
EOF
chmod 0644 "$CONF"

# The closed account's wall: loopback 47800-47899 only, the rest refused at once.
nft -f - <<EOF
add table inet $TABLE
delete table inet $TABLE
table inet $TABLE {
	chain output {
		type filter hook output priority 0; policy accept;
		meta skuid $CUID ct state established,related accept
		meta skuid $CUID oifname "lo" ip daddr 127.0.0.1 tcp dport 47800-47899 accept
		meta skuid $CUID meta l4proto tcp reject with tcp reset
		meta skuid $CUID reject with icmpx admin-prohibited
	}
}
EOF

as_person() {
	runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$PHOME" \
		USER="$PERSON" SSH_AUTH_SOCK="$SSH_AUTH_SOCK" OWSBX_CONFIG="$CONF" "$@"
}
owsbx() { as_person "$BIN/owsbx" "$@"; }
