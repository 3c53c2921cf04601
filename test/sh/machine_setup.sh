#!/bin/sh
# owsbx machine sandbox setup|status|remove, for real, as root, with
# throwaway names: accounts, group, person, nft table, launcher and state
# folder all carry a random suffix.  Leaves the machine as it found it:
# users, groups, nft ruleset, files, and the /etc/*- backups that useradd
# and userdel rewrite.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/test/etc_backups.sh"
. "$ROOT/test/places.sh"
OWSBX=$ROOT/owsbx
PY=/usr/bin/python3
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # desc command...
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
diag() { sed 's/^/# /'; }
. "$ROOT/test/features.sh"

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root: creates throwaway accounts, a group and an nft table"
	exit 0
fi
for tool in useradd userdel groupadd gpasswd nft setpriv runuser "$PY"; do
	if ! command -v "$tool" > /dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed"
		exit 0
	fi
done
[ -x "$OWSBX" ] && [ -x "$ROOT/owsbx-launch" ] ||
	{ echo "1..0 # SKIP build owsbx and owsbx-launch first (make)"; exit 0; }
# The same lock as test/user.sh: no other test snapshots /etc while ours is out.
exec 9< /etc
flock -w 600 9 || { echo "Bail out! cannot lock /etc for the account snapshot"; exit 255; }

H=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
C=owstest_c_$H
O=owstest_o_$H
G=owstest_g_$H
P=owstest_p_$H
TABLE=owstest_$H
# The launcher setup installs is set-user-ID root: its folder must be on a mount that
# honours that (test/places.sh; /tmp is nosuid on Debian 13).
T=$(owstest_suid_tmpdir owstest-setup) || { echo "Bail out! no folder for a set-user-ID launcher"; exit 255; }
CFG=$T/config.ini
STATE=$T/state
LAUNCHER=$T/libexec/owsbx-launch
W=$T/.w
SNAP=$W/snap
mkdir -p "$SNAP/etc" && chmod 755 "$W"
owstest_etc_snapshot "$SNAP/etc" || { echo "Bail out! cannot snapshot the /etc backups"; exit 255; }
PIDS=""

cleanup() {
	for pid in $PIDS; do kill "$pid" 2> /dev/null; done
	for u in "$C" "$O" "$P"; do getent passwd "$u" > /dev/null && userdel "$u" 2> /dev/null; done
	for g in "$G" "${G}x" "$C" "$O" "$P"; do getent group "$g" > /dev/null && groupdel "$g" 2> /dev/null; done
	nft list table inet "$TABLE" > /dev/null 2>&1 && nft delete table inet "$TABLE"
	owstest_etc_restore "$SNAP/etc"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

# Other tests may run at the same time: their throwaway entries ("owstest"
# without our suffix) are left out of the comparison; everything else counts.
others() { grep -v owstest | cat; grep owstest | grep -- "$H" | cat; }
snapshot() { # dir
	mkdir -p "$1"
	getent passwd | sort > "$1/passwd"
	getent group | sort > "$1/group"
	nft list ruleset | awk -v h="$TABLE" '
		/^table / { skip = ($3 ~ /^owstest/ && $3 != h) }
		!skip { print }
		/^}/ { skip = 0 }' > "$1/nft"
	{ grep -v owstest "$1/passwd"; grep -- "$H" "$1/passwd"; } > "$1/passwd.f" || true
	{ grep -v owstest "$1/group"; grep -- "$H" "$1/group"; } > "$1/group.f" || true
	find "$T" -path "$W" -prune -o -printf '%p %m %u %g %s\n' | sort > "$1/files"
	find "$T" -path "$W" -prune -o -type f -exec sha256sum {} + | sort > "$1/sums"
	ls -la /etc/owsandbox > "$1/etc_owsandbox" 2>&1
}
same() { # desc snapA snapB
	d=0
	for f in passwd.f group.f nft files sums etc_owsandbox; do
		if ! cmp -s "$2/$f" "$3/$f"; then
			d=1
			echo "differs: $f" | diag
			diff "$2/$f" "$3/$f" | head -20 | diag
		fi
	done
	[ $d = 0 ] && ok "$1" || not_ok "$1"
}

# The real launcher, so that setup's proof runs for real; a second build differs by a
# trailing byte (an ELF file ignores it); a broken one cannot prove anything.
cp "$ROOT/owsbx-launch" "$W/src-launch"
# The person runs owsbx too: a copy here, where the person can reach it (a checkout may
# be in a private folder, such as root's home).
install -m 0755 "$ROOT/owsbx" "$W/owsbx"
OWSBX=$W/owsbx
{ cat "$ROOT/owsbx-launch"; printf '\0'; } > "$W/src-launch2"
printf 'int main(void) { return 1; }\n' > "$W/broken.c"
cc -o "$W/src-broken" "$W/broken.c"
cat > "$CFG" << EOF
; throwaway machine config for machine_setup.sh
[sandbox]
state_dir = $STATE
network = none

[account]
closed_user = $C
open_user = $O
group = $G
launcher = $LAUNCHER
nft_table = $TABLE
EOF
chmod 644 "$CFG"
cp "$CFG" "$W/config.orig"

snapshot "$SNAP/s0"
useradd --no-create-home --home-dir /nonexistent --shell /bin/sh "$P"
snapshot "$SNAP/s1"

M() { "$OWSBX" machine sandbox "$@" --config "$CFG"; }
# What the account provider is told (ows__machine_check), through a helper.
CHECK=$W/machine_render
cc -I"$ROOT/include" -I"$ROOT/lib" -D_GNU_SOURCE -o "$CHECK" "$ROOT/test/helpers/machine_render.c" \
	"$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto || CHECK=""
machine_check() { # [user]
	if [ -z "$CHECK" ]; then echo "no helper"; return; fi
	if [ $# = 1 ]; then runuser -u "$1" -- "$CHECK" check "$CFG"; else "$CHECK" check "$CFG"; fi
}
SETUP_ARGS="--for-user $P --launcher-source $W/src-launch"

# ------------------------------------------------------------------- plan
M setup $SETUP_ARGS < /dev/null > "$W/out" 2> "$W/err"
rc=$?
check "setup without --yes and no answer exits non-zero" [ $rc != 0 ]
check "the plan lists the accounts, group, launcher and firewall" \
	sh -c "grep -q 'create hidden system account $C' '$W/out' &&
	       grep -q 'create hidden system account $O' '$W/out' &&
	       grep -q 'groupadd --system $G' '$W/out' && grep -q 'add $P to $G' '$W/out' &&
	       grep -q 'install $W/src-launch' '$W/out' && grep -q 'table inet $TABLE' '$W/out'"
check "no answer says nothing was changed" grep -q "nothing was changed" "$W/err"
snapshot "$SNAP/s_plan"
same "nothing changed without --yes" "$SNAP/s1" "$SNAP/s_plan"
echo n | M setup $SETUP_ARGS > /dev/null 2>&1
snapshot "$SNAP/s_no"
same "answering no changes nothing" "$SNAP/s1" "$SNAP/s_no"

# ------------------------------------------------------------ not root
runuser -u "$P" -- "$OWSBX" machine sandbox setup --config "$CFG" \
	--launcher-source "$W/src-launch" < /dev/null > "$W/out" 2> "$W/err"
rc=$?
check "setup as a person exits non-zero" [ $rc != 0 ]
check "setup as a person prints the command for an administrator" \
	grep -qF "sudo owsbx machine sandbox setup --config $CFG --for-user $P --launcher-source $W/src-launch" "$W/err"
snapshot "$SNAP/s_user"
same "setup as a person changes nothing" "$SNAP/s1" "$SNAP/s_user"

# ------------------------------------------------------------ setup
# A launcher that cannot start a sandbox: setup does everything else, but the proof fails,
# so the config is left alone and status says the wall is unproven.
M setup --for-user "$P" --launcher-source "$W/src-broken" --yes > "$W/out" 2> "$W/err"
rc=$?
check "setup fails when the wall cannot be proved" [ $rc != 0 ]
check "... says so, keeps the record and leaves the config" \
	sh -c "grep -q 'could not be proved' '$W/err' && [ -f '$STATE/setup.json' ] && cmp -s '$CFG' '$W/config.orig'"
M status --json > "$W/status.json"
check "... and status fails the proof row" \
	"$PY" -c 'import json,sys
r=[r for r in json.load(open(sys.argv[1]))["rows"] if r["item"]=="proof"][0]
sys.exit(0 if r["state"]=="fail" else 1)' "$W/status.json"

M setup $SETUP_ARGS --yes > "$W/out" 2> "$W/err"
rc=$?
if [ $rc = 0 ]; then ok "setup proved the wall as both accounts"; else not_ok "setup proved the wall as both accounts"; diag < "$W/err"; fi
# Without Landlock scopes (ABI < 6) the open account's proof runs partial: its abstract
# socket check is recorded, not demanded, and setup says `open` needs the config's choice.
open_tail='checks passed$'
have_landlock_abi 6 ||
	open_tail='checks passed; partial (recorded, not demanded): abstract socket unreachable owsandbox-probe-[0-9a-f]*: connected: partial'
check "the person opened the proof's sessions, through the setuid launcher, not root" \
	grep -q "proof: $P opens a throwaway sandbox as the closed account (network none) through the setuid launcher" "$W/out"
check "the proof ran as both accounts" \
	sh -c "grep -q 'proof (closed): [0-9]* of [0-9]* checks passed$' '$W/out' && grep -q 'proof (open): [0-9]* of [0-9]* $open_tail' '$W/out'"
if have_landlock_abi 6; then
	check "Landlock ABI $(landlock_abi): setup says nothing of partial" sh -c "! grep -q partial '$W/out'"
else
	check "Landlock ABI $(landlock_abi): setup says open sessions need open_without_scopes = partial" \
		grep -q 'proof (open): .open. sessions on this kernel run only when the config says open_without_scopes = partial' "$W/out"
fi
check "the machine's config now chooses the account provider" grep -q "^provider = account" "$CFG"
check "the record says the proof passed" \
	"$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["proof"]["passed"] else 1)' "$STATE/setup.json"

check "closed account exists, system, nologin" \
	sh -c "getent passwd $C | grep -q ':/nonexistent:/usr/sbin/nologin$'"
check "closed account is locked" sh -c "getent shadow $C | cut -d: -f2 | grep -q '^[!*]'"
check "open account exists, nologin" sh -c "getent passwd $O | grep -q ':/usr/sbin/nologin$'"
check "the person is in the group" sh -c "id -nG $P | tr ' ' '\n' | grep -qx $G"
check "launcher is root:$G 4750" [ "$(stat -c '%a %U %G' "$LAUNCHER")" = "4750 root $G" ]
check "sandboxes/ is 711 root:$G (only the launcher, as root, writes there)" [ "$(stat -c '%a %U %G' "$STATE/sandboxes")" = "711 root $G" ]
check "journal/ is 1770 root:$G" [ "$(stat -c '%a %U %G' "$STATE/journal")" = "1770 root $G" ]
check "the record is world-readable" [ "$(stat -c '%a %U' "$STATE/setup.json")" = "644 root" ]
check "the launcher's record is 644 root:root" [ "$(stat -c '%a %U %G' "$LAUNCHER.conf")" = "644 root root" ]
printf 'closed_uid=%s\nclosed_gid=%s\nopen_uid=%s\nopen_gid=%s\ngroup_gid=%s\nstate_dir=%s\n' \
	"$(id -u "$C")" "$(id -g "$C")" "$(id -u "$O")" "$(id -g "$O")" \
	"$(getent group "$G" | cut -d: -f3)" "$STATE" > "$W/conf.want"
check "the launcher's record holds exactly the six keys it reads" \
	sh -c "grep -v '^#' '$LAUNCHER.conf' | cmp -s - '$W/conf.want'"
check "the setup record keeps the launcher record's hash" \
	"$PY" -c 'import json,sys,hashlib
r=json.load(open(sys.argv[1]))["launcher_conf"]
sys.exit(0 if r["sha256"]==hashlib.sha256(open(sys.argv[2],"rb").read()).hexdigest() and r["created"] else 1)' \
	"$STATE/setup.json" "$LAUNCHER.conf"
CUID=$(id -u "$C")
nft list table inet "$TABLE" > "$W/table" 2>&1
check "the firewall table is keyed on the closed account's uid" grep -q "meta skuid $CUID jump closed" "$W/table"

status_rows() { # json-file -> "item state" lines
	"$PY" -c 'import json,sys
for r in json.load(open(sys.argv[1]))["rows"]: print(r["item"].replace(" ","_"), r["state"], r.get("fix",""))' "$1"
}
M status --json > "$W/status.json"
rc=$?
status_rows "$W/status.json" > "$W/rows"
check "status passes every row and exits 0" sh -c "[ $rc = 0 ] && ! grep -v ' ok' '$W/rows'"
check "status has a row for the launcher's record" grep -q "^launcher_record ok" "$W/rows"
grep -v ' ok' "$W/rows" | diag

r=$(machine_check)
check "the provider's check passes as root ($r)" sh -c "echo '$r' | grep -q '^ok closed=$CUID '"
r=$(machine_check "$P")
check "the provider's check passes as the person, in the group" sh -c "echo '$r' | grep -q '^ok closed=$CUID '"

# ------------------------------------------------------- twice: no change
cp "$STATE/setup.json" "$W/record.1"
snapshot "$SNAP/s_set"
M setup $SETUP_ARGS --yes > "$W/out" 2> "$W/err"
rc=$?
check "setup again succeeds" [ $rc = 0 ]
check "setup again has nothing to change" grep -q "Nothing to change" "$W/out"
check "setup again leaves the record identical" cmp -s "$STATE/setup.json" "$W/record.1"
snapshot "$SNAP/s_set2"
same "setup again changes nothing on the machine" "$SNAP/s_set" "$SNAP/s_set2"

sed "s/^group = $G\$/group = ${G}x/" "$CFG" > "$W/renamed.ini"
"$OWSBX" machine sandbox setup --config "$W/renamed.ini" $SETUP_ARGS --yes > /dev/null 2> "$W/err"
check "a config that renames what setup recorded is refused" \
	sh -c "[ $? != 0 ] && grep -q 'not the one setup recorded' '$W/err' && ! getent group ${G}x"

# ------------------------------------------------------ status as a person
runuser -u "$P" -- "$OWSBX" machine sandbox status --json --config "$CFG" > "$W/pstatus.json" 2> "$W/err"
status_rows "$W/pstatus.json" > "$W/prows"
check "status as the person: the firewall cannot be checked without root, with the command" \
	grep -q "^firewall skipped sudo owsbx machine sandbox status --config $CFG" "$W/prows"
check "status as the person: membership passes" grep -q "^membership ok" "$W/prows"
check "status as the person: the launcher passes (the group may read it)" grep -q "^launcher ok" "$W/prows"

# ----------------------------------------------------------- the firewall
# Listeners run as root; clients run as the accounts.
free_port() { # lo hi
	"$PY" -c 'import socket,sys
for p in range(int(sys.argv[1]), int(sys.argv[2])):
    s=socket.socket()
    try: s.bind(("127.0.0.1",p)); print(p); break
    except OSError: pass
    finally: s.close()' "$1" "$2"
}
listen() { # port [greeting]
	"$PY" -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c,_=s.accept()
    if len(sys.argv) > 2: c.sendall(sys.argv[2].encode())
    c.close()' "$@" &
	PIDS="$PIDS $!"
}
as_user() { # user python-code args...
	u=$1
	shift
	(cd / && setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups \
		"$PY" -c "$@")
}
TCP='import socket,sys,time
s=socket.socket(); s.settimeout(8); t=time.time()
try: s.connect(("127.0.0.1", int(sys.argv[1]))); print("connected")
except ConnectionRefusedError: print("refused %.1f" % (time.time()-t))
except socket.timeout: print("timeout")
except OSError as e: print("error", e.errno)'
UDP='import socket,sys
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try: s.sendto(b"x", ("127.0.0.1", 53)); print("sent")
except PermissionError: print("EPERM")
except OSError as e: print("error", e.errno)'
OUT_PORT=$(free_port 41000 41999)
IN_PORT=$(free_port 47890 47900)
SRV_PORT=$(free_port 42000 42999)
listen "$OUT_PORT"
[ -n "$IN_PORT" ] && listen "$IN_PORT"
# Until both listen: polled, not slept.
for port in $OUT_PORT $IN_PORT; do
	for _ in $(seq 100); do [ -n "$(ss -Hltn "sport = :$port")" ] && break; sleep 0.05; done
done
r=$(as_user "$C" "$TCP" "$OUT_PORT")
check "closed account: 127.0.0.1:$OUT_PORT refused at once ($r)" \
	sh -c "echo '$r' | grep -Eq '^refused 0\.[0-9]$'"
if [ -n "$IN_PORT" ]; then
	r=$(as_user "$C" "$TCP" "$IN_PORT")
	check "closed account: 127.0.0.1:$IN_PORT (proxy range) connects ($r)" [ "$r" = connected ]
else
	ok "closed account: proxy range connects # SKIP no free port in 47890-47899"
fi
r=$(as_user "$C" "$UDP")
check "closed account: UDP sendto is refused with EPERM ($r)" [ "$r" = EPERM ]
r=$(as_user "$C" 'import socket
s=socket.socket(socket.AF_INET6); s.settimeout(8)
try: s.connect(("::1", 22)); print("connected")
except ConnectionRefusedError: print("refused")
except OSError as e: print("error", e.errno)')
check "closed account: [::1] refused ($r)" sh -c "[ '$r' = refused ] || [ '$r' = 'error 99' ]"
r=$(as_user "$O" "$TCP" "$OUT_PORT")
check "open account: 127.0.0.1:$OUT_PORT connects ($r)" [ "$r" = connected ]
r=$(cd / && "$PY" -c "$TCP" "$OUT_PORT")
check "root is not affected by the table ($r)" [ "$r" = connected ]
# A server the closed account runs may answer connections made to it.
(cd / && setpriv --reuid="$CUID" --regid="$(id -g "$C")" --clear-groups "$PY" -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4)
c,_=s.accept(); c.sendall(b"hello from the sandbox"); c.close()' "$SRV_PORT") &
PIDS="$PIDS $!"
# Poll until it listens: a fixed sleep is a race on a loaded machine.
r=$("$PY" -c 'import socket,sys,time
for _ in range(100):
    try:
        s=socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); print(s.recv(100).decode()); break
    except ConnectionRefusedError:
        time.sleep(0.05)' "$SRV_PORT" 2>&1)
check "a server the closed account runs answers ($r)" [ "$r" = "hello from the sandbox" ]
for pid in $PIDS; do kill "$pid" 2> /dev/null; done
# The account must have no process left before it is deleted below.
pkill -KILL -u "$CUID" 2> /dev/null
for pid in $PIDS; do wait "$pid" 2> /dev/null; done
for _ in $(seq 100); do pgrep -u "$CUID" > /dev/null || break; sleep 0.05; done
PIDS=""

# ------------------------------------------------- break each item, repair
row_of() { # item -> "state fix"
	M status --json > "$W/s.json" 2> /dev/null
	status_rows "$W/s.json" | grep "^$1 " | cut -d' ' -f2-
}
FIX="sudo owsbx machine sandbox setup --config $CFG"
repair() { # desc
	M setup $SETUP_ARGS --yes > "$W/out" 2> "$W/err"
	rc=$?
	M status --json > "$W/s.json" 2> /dev/null
	status_rows "$W/s.json" | grep -v ' ok' > "$W/bad"
	if [ $rc = 0 ] && [ ! -s "$W/bad" ]; then ok "$1"; else not_ok "$1"; diag < "$W/err"; diag < "$W/bad"; fi
}

userdel "$C"
check "closed account deleted: status fails it with the fix" [ "$(row_of closed_account)" = "fail $FIX" ]
r=$(machine_check "$P")
check "closed account deleted: sessions are refused with the way to set up again" \
	sh -c "printf '%s' '$r' | grep -q '^OWS_ESETUP.*closed account $C is missing.*$FIX'"
M status > /dev/null 2>&1
check "closed account deleted: status exits 1" [ $? = 1 ]
repair "setup repairs a deleted closed account"
check "the firewall follows the re-created account's uid" \
	sh -c "nft list table inet $TABLE | grep -q \"meta skuid \$(id -u $C) jump closed\""

chmod 700 "$STATE/sandboxes"
r=$(machine_check "$P")
check "a state folder broken: sessions are refused" sh -c "printf '%s' '$r' | grep -q '^OWS_ESETUP'"
repair "setup repairs the private folders' mode"

nft delete table inet "$TABLE"
check "firewall table gone: status fails it with the fix" [ "$(row_of firewall)" = "fail $FIX" ]
repair "setup repairs the firewall table"

nft add rule inet "$TABLE" closed accept
check "firewall table changed: status fails it" [ "$(row_of firewall)" = "fail $FIX" ]
repair "setup repairs a changed firewall table"

chmod 755 "$LAUNCHER"
check "launcher mode wrong: status fails it" [ "$(row_of launcher)" = "fail $FIX" ]
repair "setup repairs the launcher's mode"

M setup --for-user "$P" --launcher-source "$W/src-launch2" --yes > /dev/null 2>&1
check "a new launcher build replaces the installed one" cmp -s "$LAUNCHER" "$W/src-launch2"
cp "$W/src-launch" "$LAUNCHER"
check "launcher content swapped: status fails it" [ "$(row_of launcher)" = "fail $FIX" ]
repair "setup re-installs the launcher"
check "the launcher is the given build again" cmp -s "$LAUNCHER" "$W/src-launch"

echo "closed_uid=0" >> "$LAUNCHER.conf"
check "launcher record edited: status fails it" [ "$(row_of launcher_record)" = "fail $FIX" ]
r=$(machine_check "$P")
has() { printf '%s' "$1" | grep -q "$2"; }
check "launcher record edited: sessions are refused with the way to set up again" \
	has "$r" "^OWS_ESETUP.*launcher.s record.*$FIX"
repair "setup rewrites the launcher's record"
rm -f "$LAUNCHER.conf"
check "launcher record deleted: status fails it" [ "$(row_of launcher_record)" = "fail $FIX" ]
repair "setup writes the launcher's record again"

chmod 777 "$STATE/journal"
check "journal mode wrong: status fails it" [ "$(row_of grant_journal)" = "fail $FIX" ]
repair "setup repairs the journal's mode"

gpasswd -d "$P" "$G" > /dev/null
r=$(machine_check "$P")
check "person not in the group: the provider's check says how to get in" \
	sh -c "printf '%s' '$r' | grep -q '^OWS_EPERM.*--for-user $P, then log in again'"
runuser -u "$P" -- "$OWSBX" machine sandbox status --json --config "$CFG" > "$W/pstatus.json" 2> /dev/null
check "person not in the group: status fails membership with --for-user" \
	sh -c "status_rows() { :; }; \"$PY\" -c 'import json,sys
r=[r for r in json.load(open(sys.argv[1]))[\"rows\"] if r[\"item\"]==\"membership\"][0]
sys.exit(0 if r[\"state\"]==\"fail\" and r[\"fix\"]==sys.argv[2] else 1)' '$W/pstatus.json' '$FIX --for-user $P'"
repair "setup puts the person back in the group"
check "the record lists the person once" \
	"$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["group"]["members_added"]==[sys.argv[2]] else 1)' "$STATE/setup.json" "$P"

cp "$STATE/setup.json" "$W/record.good"
sed -i "s/\"uid\": $CUID/\"uid\": 4242/" "$STATE/setup.json"
r=$(row_of setup_record)
check "a tampered record is detected" [ "$r" = "fail $FIX" ]
M status 2> /dev/null | grep -q "does not match its checksum"
check "status says the checksum does not match" [ $? = 0 ]
M setup $SETUP_ARGS --yes > /dev/null 2> "$W/err"
check "setup refuses to work from a tampered record" sh -c "[ $? != 0 ] && grep -q checksum '$W/err'"
M remove --yes > /dev/null 2> "$W/err"
check "remove refuses to work from a tampered record" sh -c "[ $? != 0 ] && getent passwd $C > /dev/null"
cp "$W/record.good" "$STATE/setup.json"

# --------------------------------------------------------------- remove
RESIGN=$ROOT/test/helpers/record_resign.py
check "the record's checksum is SHA-256 of its sorted compact form" "$PY" "$RESIGN" "$STATE/setup.json" verify
check "(before remove) the config chooses the account provider" grep -q "^provider = account" "$CFG"
echo n | M remove > /dev/null 2>&1
check "remove asks, and no answer keeps the setup" [ -f "$STATE/setup.json" ]
M remove --yes > "$W/out" 2> "$W/err"
check "remove succeeds" [ $? = 0 ]
diag < "$W/err"
snapshot "$SNAP/s_rm"
same "after setup and remove the machine is as before (users, groups, nft, files)" \
	"$SNAP/s1" "$SNAP/s_rm"
check "the config file is byte-for-byte as before" cmp -s "$CFG" "$W/config.orig"
M remove --yes > "$W/out" 2>&1
check "remove again: nothing to remove" sh -c "[ $? = 0 ] && grep -q 'nothing to remove' '$W/out'"
M status > /dev/null 2>&1
check "status after remove exits 1" [ $? = 1 ]

# ------------------------------------- what was there before setup stays
groupadd --system "$G"
useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$O"
snapshot "$SNAP/s2"
M setup $SETUP_ARGS --yes > "$W/out" 2> "$W/err"
check "setup uses a group and an account that were there before" sh -c \
	"[ $? = 0 ] && grep -q 'group $G exists already' '$W/out' && grep -q 'open account $O exists already' '$W/out'"
check "... and proves the wall with them" grep -q "^provider = account" "$CFG"
echo "; a line the person added after setup" >> "$CFG"
M remove --yes > /dev/null 2> "$W/err"
check "remove after setup on pre-existing group and account succeeds" [ $? = 0 ]
{ cat "$W/config.orig"; echo "; a line the person added after setup"; } > "$W/cfg.want"
check "a config edited since setup: remove takes back only the provider line" cmp -s "$CFG" "$W/cfg.want"
cp "$W/config.orig" "$CFG"
snapshot "$SNAP/s2_rm"
same "the pre-existing group and account stay, the person is taken out again" "$SNAP/s2" "$SNAP/s2_rm"
check "the pre-existing group still exists" sh -c "getent group '$G' > /dev/null"
userdel "$O"
getent group "$G" > /dev/null && groupdel "$G"

# -------------------------------------------------------------- the end
userdel "$P"
owstest_etc_restore "$SNAP/etc"
snapshot "$SNAP/s_end"
same "at the end the machine is as the test found it" "$SNAP/s0" "$SNAP/s_end"
left=$(owstest_etc_diff "$SNAP/etc")
check "the /etc backups are byte-for-byte as before (absent ones absent)" [ -z "$left" ]
[ -n "$left" ] && echo "$left" | diag

echo "1..$n"
[ "$failed" = 0 ]
