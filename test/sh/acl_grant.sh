#!/bin/bash
# test/sh/acl_grant.sh: ACL grant and revoke for real, as a throwaway person, root only.
#
# A person (owstest_<hex>, 0700 home with a fake ~/.ssh/id_ed25519, a project tree, a
# folder shared read-only) and an account (owstest_acct_<hex>, system, no home) are
# created; a stand-in host (test/sh/acl_host.c, built here against libowsandbox.a) runs
# as the person and grants, revokes, closes, or is killed with SIGKILL.  Checks: the
# entries, what the account can and cannot do, a symlink to the key is never granted,
# two sessions sharing a folder, crash cleanup, and that revoke leaves every mode and
# ACL xattr of the home byte for byte as before.  Self-contained; prints TAP; leaves
# the machine as found (users removed, /etc/*- backups restored, temp folder gone).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/test/etc_backups.sh"
N=0 FAILED=0
pass() { N=$((N + 1)); echo "ok $N - $1"; }
fail() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; shift; for l in "$@"; do echo "$l" | sed 's/^/# /'; done; }
check() { local d=$1; shift; if "$@" >/dev/null 2>&1; then pass "$d"; else fail "$d" "command failed: $*"; fi; }
refute() { local d=$1; shift; if "$@" >/dev/null 2>&1; then fail "$d" "command succeeded: $*"; else pass "$d"; fi; }
is() { if [ "$1" = "$2" ]; then pass "$3"; else fail "$3" "got: $1" "expected: $2"; fi; }

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (creates throwaway users)"; exit 0; }
for tool in setpriv getfacl setfacl useradd userdel cc python3; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is missing"; exit 0; }
done
[ -f "$ROOT/libowsandbox.a" ] || { echo "1..0 # SKIP run make first"; exit 0; }

HEX=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
TU=owstest_$HEX
TA=owstest_acct_$HEX
WORK=$(mktemp -d /tmp/owstest-acl.XXXXXX)
chmod 0755 "$WORK"
HOSTS_PIDS=""

cleanup() {
	local p
	for p in $HOSTS_PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	if id "$TU" >/dev/null 2>&1; then
		pkill -9 -u "$TU" 2>/dev/null
		userdel -r "$TU" >/dev/null 2>&1
	fi
	id "$TA" >/dev/null 2>&1 && userdel "$TA" >/dev/null 2>&1
	getent group "$TA" >/dev/null && groupdel "$TA" >/dev/null 2>&1
	owstest_etc_restore "$WORK/etc"
	rm -rf "$WORK"
}
trap cleanup EXIT

# The same lock as test/user.sh: no other test snapshots /etc while ours is out.
exec {LOCK_FD}</etc
flock -w 600 "$LOCK_FD" || { echo "Bail out! cannot lock /etc for the account snapshot"; exit 255; }
owstest_etc_snapshot "$WORK/etc" || { echo "Bail out! cannot snapshot the /etc backups"; exit 255; }

useradd --create-home --shell /bin/bash "$TU" >/dev/null 2>&1 || { echo "Bail out! useradd $TU"; exit 255; }
useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "$TA" >/dev/null 2>&1 ||
	{ echo "Bail out! useradd $TA"; exit 255; }
TUID=$(id -u "$TU") TGID=$(id -g "$TU") AUID=$(id -u "$TA") AGID=$(id -g "$TA")
if [ -n "${OWSTEST_LEDGER:-}" ]; then # test/run.sh checks these users are gone afterwards
	echo "$TU $TUID $WORK/etc" >>"$OWSTEST_LEDGER"
	echo "$TA $AUID $WORK/etc" >>"$OWSTEST_LEDGER"
fi
H=$(getent passwd "$TU" | cut -d: -f6)
chmod 0700 "$H"

as_person() { setpriv --reuid="$TUID" --regid="$TGID" --init-groups env -i HOME="$H" PATH=/usr/bin:/bin "$@"; }
as_acct() { setpriv --reuid="$AUID" --regid="$AGID" --clear-groups env -i PATH=/usr/bin:/bin "$@"; }

# The person's files.
as_person bash -ec '
	umask 022
	mkdir -p ~/.ssh ~/project/sub/deep ~/docs
	chmod 700 ~/.ssh
	echo "-----FAKE KEY-----" > ~/.ssh/id_ed25519; chmod 600 ~/.ssh/id_ed25519
	echo secret > ~/secret.txt; chmod 600 ~/secret.txt
	echo a > ~/project/a.txt
	printf "#!/bin/sh\necho run\n" > ~/project/run.sh; chmod 755 ~/project/run.sh
	echo b > ~/project/sub/b.txt; chmod 600 ~/project/sub/b.txt
	echo c > ~/project/sub/deep/c.txt
	echo acl > ~/project/acl.txt; setfacl -m u:nobody:r,m::r ~/project/acl.txt
	echo zero > ~/project/zero.txt; chmod 000 ~/project/zero.txt
	mkfifo ~/project/fifo
	ln -s ~/.ssh/id_ed25519 ~/project/key-link
	ln -s ~/.ssh ~/project/ssh-link
	ln -s ~/.ssh ~/ssh-dir-link
	echo readme > ~/docs/readme.txt
' || { echo "Bail out! cannot make the person's files"; exit 255; }

# The host, the config and a state folder as machine setup leaves it.
cc -std=c11 -O2 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/lib" -o "$WORK/acl_host" \
	"$ROOT/test/sh/acl_host.c" "$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread ||
	{ echo "Bail out! cannot build acl_host"; exit 255; }
chmod 0755 "$WORK/acl_host"
mkdir -p "$WORK/state/journal"
chmod 0755 "$WORK/state"
chmod 1733 "$WORK/state/journal"
printf '[sandbox]\nstate_dir = %s/state\n' "$WORK" >"$WORK/config.ini"
chmod 0644 "$WORK/config.ini"

# snapshot [ROOT [NAME...]]: every node of the home (or of ROOT, or just ROOT's NAMEs)
# with its mode, owner and ACL xattrs, in hex.
snapshot() {
	python3 - "${1:-$H}" "${@:2}" <<'PY'
import os, stat, sys
root = sys.argv[1]
names = ("system.posix_acl_access", "system.posix_acl_default")
def show(p):
    st = os.lstat(p)
    out = [p, oct(st.st_mode), str(st.st_uid), str(st.st_gid)]
    if not stat.S_ISLNK(st.st_mode):
        for n in names:
            try:
                out.append(n[-7:] + "=" + os.getxattr(p, n, follow_symlinks=False).hex())
            except OSError:
                pass
    print(" ".join(out))
if len(sys.argv) > 2:
    for n in sys.argv[2:]:
        show(os.path.join(root, n))
    sys.exit(0)
show(root)
for dp, dns, fns in os.walk(root):
    for n in sorted(dns + fns):
        show(os.path.join(dp, n))
PY
}
BEFORE=$(snapshot)

# host_start NAME: starts a host as the person; host_cmd NAME CMD: one command, one answer.
declare -A HIN HOUT HPID
# host_start NAME root: the host runs as root instead.
host_start() {
	local name=$1
	mkfifo "$WORK/$name.in" "$WORK/$name.out"
	chmod 0666 "$WORK/$name.in" "$WORK/$name.out"
	# A simple command, not a function: $! is then the host itself (setpriv and env exec).
	if [ "${2:-}" = root ]; then
		env -i HOME=/root PATH=/usr/bin:/bin \
			"$WORK/acl_host" "$WORK/config.ini" <"$WORK/$name.in" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	else
		setpriv --reuid="$TUID" --regid="$TGID" --init-groups env -i HOME="$H" PATH=/usr/bin:/bin \
			"$WORK/acl_host" "$WORK/config.ini" <"$WORK/$name.in" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	fi
	HPID[$name]=$!
	HOSTS_PIDS="$HOSTS_PIDS $!"
	exec {fd_in}>"$WORK/$name.in"
	exec {fd_out}<"$WORK/$name.out"
	HIN[$name]=$fd_in
	HOUT[$name]=$fd_out
}
host_cmd() {
	local line=""
	echo "$2" >&"${HIN[$1]}"
	read -r -t 120 line <&"${HOUT[$1]}"
	echo "$line"
}
host_quit() {
	echo quit >&"${HIN[$1]}"
	exec {HIN[$1]}>&- {HOUT[$1]}<&-
	wait "${HPID[$1]}" 2>/dev/null
}
acl_of() { getfacl -cp "$1" 2>/dev/null; }
has_entry() { acl_of "$1" | grep -qx "$2"; }

# ---------------------------------------------------------------- one session
host_start h1
is "$(host_cmd h1 "open S1")" "ok 0" "the host opens a session journal as the person"
is "$(host_cmd h1 "grant S1 $TA $H/project rw $H")" "ok 0" "grant read-write on ~/project"
is "$(host_cmd h1 "grant S1 $TA $H/docs ro $H")" "ok 0" "grant read-only on ~/docs"
ls "$WORK/state/journal/$TUID-$TU/S1.journal" >/dev/null 2>&1 && pass "the journal is under state_dir/journal/<uid>-<name>" ||
	fail "the journal is under state_dir/journal/<uid>-<name>" "$(ls -laR "$WORK/state/journal")"

check "project: user:$TA:rwx" has_entry "$H/project" "user:$TA:rwx"
check "project: default:user:$TA:rwx" has_entry "$H/project" "default:user:$TA:rwx"
check "project: default:user:$TU:rwx (the person edits what the agent makes)" has_entry "$H/project" "default:user:$TU:rwx"
check "a.txt: user:$TA:rw- (no x on a plain file)" has_entry "$H/project/a.txt" "user:$TA:rw-"
check "run.sh: user:$TA:rwx (x kept on an executable)" has_entry "$H/project/run.sh" "user:$TA:rwx"
check "sub/deep/c.txt granted" has_entry "$H/project/sub/deep/c.txt" "user:$TA:rw-"
check "zero.txt (mode 000) granted" has_entry "$H/project/zero.txt" "user:$TA:rw-"
check "home: traverse only, user:$TA:--x" has_entry "$H" "user:$TA:--x"
check "docs/readme.txt: user:$TA:r--" has_entry "$H/docs/readme.txt" "user:$TA:r--"
refute "docs: no default entries for a read-only folder" has_entry "$H/docs" "default:user:$TA:r-x"
check "a.txt: group entry untouched (r--)" has_entry "$H/project/a.txt" "group::r--"
check "acl.txt: the person's own entry kept" has_entry "$H/project/acl.txt" "user:nobody:r--"
check "acl.txt: mask widened for the account" has_entry "$H/project/acl.txt" "mask::rw-"
refute "the key behind ~/project/key-link is not granted" bash -c "getfacl -cp '$H/.ssh/id_ed25519' | grep -q '$TA'"
refute "~/.ssh behind ~/project/ssh-link is not granted" bash -c "getfacl -cp '$H/.ssh' | grep -q '$TA'"
refute "~/secret.txt is not granted" bash -c "getfacl -cp '$H/secret.txt' | grep -q '$TA'"

check "the account creates a file in ~/project" as_acct touch "$H/project/new.txt"
check "the account reads sub/b.txt (0600 to the group and others)" as_acct cat "$H/project/sub/b.txt"
check "the person can write what the account created" as_person bash -c "echo more >> '$H/project/new.txt'"
check "the account reads ~/docs/readme.txt" as_acct cat "$H/docs/readme.txt"
refute "the account cannot write in ~/docs" as_acct touch "$H/docs/x"
refute "the account cannot list the home" as_acct ls "$H"
refute "the account cannot read ~/secret.txt" as_acct cat "$H/secret.txt"
refute "the account cannot read the key" as_acct cat "$H/.ssh/id_ed25519"
refute "the account cannot read the key through the link" as_acct cat "$H/project/key-link"

like_err() { case "$1" in err*) pass "$2" ;; *) fail "$2" "got: $1" ;; esac; }
like_err "$(host_cmd h1 "grant S1 $TA $H/ssh-dir-link rw $H")" "a symbolic link as the folder is refused"
like_err "$(host_cmd h1 "grant S1 $TA $H/project/ssh-link/. rw $H")" "a path through a link is refused"
like_err "$(host_cmd h1 "grant S1 $TA /tmp rw $H")" "a folder outside the home root is refused"
like_err "$(host_cmd h1 "grant S1 $TA $H rw $H")" "the home itself is refused"
refute "after the refusals, ~/.ssh carries no entry" bash -c "getfacl -cp '$H/.ssh' '$H/.ssh/id_ed25519' | grep -q '$TA'"

# ---------------------------------------------------------- a second session
host_start h2
is "$(host_cmd h2 "open S2")" "ok 0" "a second host opens its session"
is "$(host_cmd h2 "grant S2 $TA $H/project ro $H")" "ok 0" "the second session shares ~/project read-only"
is "$(host_cmd h2 "grant S2 $TA $H/project ro $H")" "ok 0" "granting again on an unchanged tree"
check "the shared grant keeps read-write while the first session lives" has_entry "$H/project/a.txt" "user:$TA:rw-"
is "$(host_cmd h1 "close S1")" "ok 0" "the first session closes"
check "the account still reads ~/project (the second session's grant)" as_acct cat "$H/project/a.txt"
refute "but no longer writes there (read-only now)" as_acct touch "$H/project/new2.txt"
check "a.txt is down to user:$TA:r--" has_entry "$H/project/a.txt" "user:$TA:r--"
refute "the read-write default entries are gone" has_entry "$H/project" "default:user:$TA:rwx"
check "the home keeps its traverse entry" has_entry "$H" "user:$TA:--x"
refute "~/docs (only the first session's) is revoked" has_entry "$H/docs/readme.txt" "user:$TA:r--"
is "$(host_cmd h2 "close S2")" "ok 0" "the second session closes"
host_quit h1
host_quit h2

rm -f "$H/project/new.txt" # what the agent made; the rest must be as before
AFTER=$(snapshot)
if [ "$BEFORE" = "$AFTER" ]; then
	pass "after both closes every mode and ACL xattr of the home is byte for byte as before"
else
	fail "after both closes every mode and ACL xattr of the home is byte for byte as before" \
		"$(diff <(echo "$BEFORE") <(echo "$AFTER") | head -20)"
fi
is "$(find "$WORK/state/journal/$TUID-$TU" -name '*.journal' | wc -l)" 0 "no journal left after close"

# ------------------------------------------------------------- a crashed host
host_start h3
host_cmd h3 "open S3" >/dev/null
is "$(host_cmd h3 "grant S3 $TA $H/project rw $H")" "ok 0" "a third host grants ~/project"
is "$(host_cmd h3 "grant S3 $TA $H/docs ro $H")" "ok 0" "and ~/docs"
host_start h4
host_cmd h4 "open S4" >/dev/null
is "$(host_cmd h4 "cleanup")" "ok 0" "cleanup leaves a live host's grants alone"
check "the live host's grant is still there" has_entry "$H/project/a.txt" "user:$TA:rw-"
kill -9 "${HPID[h3]}"
wait "${HPID[h3]}" 2>/dev/null
check "the killed host's grant stays until cleanup" has_entry "$H/project/a.txt" "user:$TA:rw-"
# Where the file system has no O_TMPFILE a journal is made under a temporary name and
# then linked (lib/posix/fs.c); a host killed in between leaves that name behind.
TMPJ=$WORK/state/journal/$TUID-$TU/.S9.journal.0a1b2c
as_person sh -c "printf 'owsj1 $TUID\n' > '$TMPJ'"
is "$(host_cmd h4 "cleanup")" "ok 2" "cleanup by the next host revokes the dead host's 2 grants"
check "cleanup removes a half-made journal a killed host left under its temporary name" test ! -e "$TMPJ"
AFTER=$(snapshot)
if [ "$BEFORE" = "$AFTER" ]; then
	pass "after cleanup the home is byte for byte as before"
else
	fail "after cleanup the home is byte for byte as before" "$(diff <(echo "$BEFORE") <(echo "$AFTER") | head -20)"
fi
is "$(find "$WORK/state/journal/$TUID-$TU" -name '*.journal' | wc -l)" 1 "only the live host's journal is left"
is "$(host_cmd h4 "close S4")" "ok 0" "the last host closes"
host_quit h4
exec {HIN[h3]}>&- {HOUT[h3]}<&-

# A nested folder: traverse entries on every folder between it and the home.
host_start h5
host_cmd h5 "open S5" >/dev/null
is "$(host_cmd h5 "grant S5 $TA $H/project/sub/deep ro $H")" "ok 0" "grant a nested folder read-only"
check "~/project: traverse only" has_entry "$H/project" "user:$TA:--x"
check "~/project/sub: traverse only" has_entry "$H/project/sub" "user:$TA:--x"
check "the account reads the nested folder" as_acct cat "$H/project/sub/deep/c.txt"
refute "the account cannot list ~/project/sub" as_acct ls "$H/project/sub"
refute "a file beside the chain gets no entry" has_entry "$H/project/sub/b.txt" "user:$TA:r--"
as_person mkdir "$H/gone"
is "$(host_cmd h5 "grant S5 $TA $H/gone rw $H")" "ok 0" "grant a folder the person then deletes"
as_person rmdir "$H/gone"
is "$(host_cmd h5 "close S5")" "ok 0" "close with a granted folder gone"
host_quit h5
AFTER=$(snapshot)
if [ "$BEFORE" = "$AFTER" ]; then
	pass "after the nested grant the home is byte for byte as before"
else
	fail "after the nested grant the home is byte for byte as before" "$(diff <(echo "$BEFORE") <(echo "$AFTER") | head -20)"
fi

# ------------------------------------------------- nothing of ours stays behind
# What the agent (as the account) and the person make in a granted read-write folder
# during a session inherits the default entries; revoke takes them off again, and the
# nodes that were there before are byte for byte as they were.
has_xattr() { python3 -c 'import os, sys; os.getxattr(sys.argv[1], sys.argv[2], follow_symlinks=False)' "$@"; }
named() { getfacl -RPp "$1" 2>/dev/null | grep -e ":$2:" -e "^# file"; }
no_entry() { # desc dir name
	local out
	out=$(named "$2" "$3" | grep -B1 -e ":$3:")
	if [ -z "$out" ]; then pass "$1"; else fail "$1" "$out"; fi
}
residue_tree() { # dir: files and folders of the person's, some with ACLs of their own
	as_person bash -ec "
		umask 022
		mkdir -p '$1/old/deep' '$1/owndef'
		echo x > '$1/old/f'; echo y > '$1/old/deep/g'; chmod 640 '$1/old/deep/g'
		echo z > '$1/acl.txt'; setfacl -m u:nobody:r '$1/acl.txt'
		setfacl -m d:u:nobody:rx '$1/owndef'"
}
RES_OLD="old old/f old/deep old/deep/g acl.txt owndef"

as_person mkdir "$H/res"
residue_tree "$H/res"
RBEFORE=$(snapshot "$H/res" $RES_OLD)
# Root closes this one: the agent's own nodes need the account's rights or root's.
host_start r1 root
host_cmd r1 "open R1" >/dev/null
is "$(host_cmd r1 "grant R1 $TA $H/res rw $H")" "ok 0" "residue: grant ~/res read-write"
ls -d "$WORK/state/journal/0-root" >/dev/null 2>&1 && pass "root's journal is under journal/0-root" ||
	fail "root's journal is under journal/0-root" "$(ls -la "$WORK/state/journal")"
check "residue: the agent makes a/b, a/b/c, a/d" as_acct sh -c "cd '$H/res' && umask 022 && mkdir -p a/b && touch a/b/c a/d"
check "residue: the person makes p/q, p/q/r, p/s and owndef/n" \
	as_person sh -c "cd '$H/res' && umask 022 && mkdir -p p/q && touch p/q/r p/s owndef/n"
check "residue: the person can write the agent's a/d" as_person sh -c "echo hi > '$H/res/a/d'"
check "residue (premise): a/b/c carries the account's inherited entry" bash -c "getfacl -cp '$H/res/a/b/c' | grep -q '^user:$TA:rwx'"
is "$(host_cmd r1 "close R1")" "ok 0" "residue: the session closes"
host_quit r1
no_entry "residue: getfacl -R finds no entry naming the account" "$H/res" "$TA"
no_entry "residue: nor any entry for the person planted by the grant" "$H/res/p" "$TU"
refute "residue: the agent's folder a/b keeps no default ACL" has_xattr "$H/res/a/b" system.posix_acl_default
refute "residue: the person's folder p/q keeps no default ACL" has_xattr "$H/res/p/q" system.posix_acl_default
is "$(stat -c %a "$H/res/p/s" "$H/res/p/q")" "$(printf '644\n755')" \
	"residue: what the person made is a plain mode, as the umask would have made it"
refute "residue: p/s keeps no ACL xattr" has_xattr "$H/res/p/s" system.posix_acl_access
check "residue: the person still writes what the agent made" as_person sh -c "echo more >> '$H/res/a/d'"
as_person sh -c "umask 022; touch '$H/res/a/b/later' '$H/res/p/q/later'"
no_entry "residue: a file the person makes afterwards in a/b names no account" "$H/res/a/b/later" "$TA"
no_entry "residue: nor in p/q" "$H/res/p/q/later" "$TA"
check "residue: owndef/n keeps the person's own inherited entry" bash -c "getfacl -cp '$H/res/owndef/n' | grep -q '^user:nobody:r-x'"
RAFTER=$(snapshot "$H/res" $RES_OLD)
if [ "$RBEFORE" = "$RAFTER" ]; then
	pass "residue: what was there before is byte for byte as before"
else
	fail "residue: what was there before is byte for byte as before" "$(diff <(echo "$RBEFORE") <(echo "$RAFTER"))"
fi

# The same as the person, with a second session sharing the folder read-only.
as_person mkdir "$H/res2"
residue_tree "$H/res2"
RBEFORE=$(snapshot "$H/res2" $RES_OLD)
host_start r2
host_start r3
host_cmd r2 "open R2" >/dev/null
host_cmd r3 "open R3" >/dev/null
is "$(host_cmd r2 "grant R2 $TA $H/res2 rw $H")" "ok 0" "residue, shared: one session grants ~/res2 read-write"
is "$(host_cmd r3 "grant R3 $TA $H/res2 ro $H")" "ok 0" "residue, shared: another read-only"
as_person sh -c "cd '$H/res2' && umask 022 && mkdir -p p/q && touch p/q/r p/s"
is "$(host_cmd r2 "close R2")" "ok 0" "residue, shared: the read-write session closes"
check "residue, shared: the account still reads p/q/r (the other session's grant)" as_acct cat "$H/res2/p/q/r"
refute "residue, shared: but no longer writes there" as_acct touch "$H/res2/p/q/x"
refute "residue, shared: p/q has no default ACL left" has_xattr "$H/res2/p/q" system.posix_acl_default
is "$(host_cmd r3 "close R3")" "ok 0" "residue, shared: the read-only session closes"
host_quit r2
host_quit r3
no_entry "residue, shared: nothing under ~/res2 names the account" "$H/res2" "$TA"
no_entry "residue, shared: nor the person" "$H/res2/p" "$TU"
is "$(stat -c %a "$H/res2/p/s")" 644 "residue, shared: p/s is back to a plain 644"
RAFTER=$(snapshot "$H/res2" $RES_OLD)
if [ "$RBEFORE" = "$RAFTER" ]; then
	pass "residue, shared: what was there before is byte for byte as before"
else
	fail "residue, shared: what was there before is byte for byte as before" "$(diff <(echo "$RBEFORE") <(echo "$RAFTER"))"
fi

# ------------------------------------------------------------- a recycled uid
# Journals are kept per <uid>-<name>: a person deleted with a dead host's journal left
# behind, whose uid is given to someone new, hands nothing to the newcomer.  The layout
# before (<uid>) is still cleaned, of the grants that lie in the person's own home.
J=$WORK/state/journal
dead_journal() { # name id path access home dest-folder: a host grants, is killed, its journal moves
	host_start "$1"
	host_cmd "$1" "open $2" >/dev/null
	is "$(host_cmd "$1" "grant $2 $TA $3 $4 $5")" "ok 0" "recycled: a host grants $3"
	kill -9 "${HPID[$1]}"
	wait "${HPID[$1]}" 2>/dev/null
	exec {HIN[$1]}>&- {HOUT[$1]}<&-
	install -d -o "$TUID" -g "$TGID" -m 0700 "$J/$6"
	mv "$J/$TUID-$TU/$2.journal" "$J/$6/$2.journal"
}
install -d -o "$TUID" -g "$TGID" -m 0755 "$WORK/dead" "$WORK/dead/proj" "$WORK/dead/proj2"
dead_journal d1 D1 "$WORK/dead/proj" rw "$WORK/dead" "$TUID"                 # a deleted person's, old layout
dead_journal d2 D2 "$H/docs" ro "$H" "$TUID"                                 # the person's own, old layout
dead_journal d3 D3 "$WORK/dead/proj2" ro "$WORK/dead" "$TUID-owstest_gone_$HEX" # a deleted person's, new layout
host_start d4
is "$(host_cmd d4 "cleanup")" "ok 1" "recycled: the person's cleanup takes only their own dead grant"
refute "recycled: ~/docs, the person's own, is revoked" has_entry "$H/docs/readme.txt" "user:$TA:r--"
check "recycled: the deleted person's grant (old layout) is not inherited" has_entry "$WORK/dead/proj" "user:$TA:rwx"
check "recycled: nor is the one under another name (new layout)" has_entry "$WORK/dead/proj2" "user:$TA:r-x"
is "$(find "$J/$TUID" "$J/$TUID-owstest_gone_$HEX" -name "*.journal" | wc -l)" 2 "recycled: their journals are left whole"
host_quit d4
host_start d5 root
is "$(host_cmd d5 "cleanup")" "ok 2" "recycled: root's cleanup revokes the deleted person's grants"
host_quit d5
refute "recycled: ~/dead/proj is revoked" has_entry "$WORK/dead/proj" "user:$TA:rwx"
refute "recycled: ~/dead/proj2 is revoked" has_entry "$WORK/dead/proj2" "user:$TA:r-x"
is "$(find "$J" -name '*.journal' | wc -l)" 0 "recycled: no journal is left"

# A host that is not set up: a clear error naming the setup command.
printf '[sandbox]\nstate_dir = %s/nowhere\n' "$WORK" >"$WORK/bad.ini"
chmod 0644 "$WORK/bad.ini"
out=$(printf 'open S9\nquit\n' | as_person "$WORK/acl_host" "$WORK/bad.ini")
case "$out" in
*OWS_ESETUP*"owsbx machine sandbox setup"*) pass "a missing journal folder names \`owsbx machine sandbox setup\`" ;;
*) fail "a missing journal folder names \`owsbx machine sandbox setup\`" "got: $out" ;;
esac

echo "1..$N"
[ "$FAILED" = 0 ]
