#!/bin/bash
# Session folders under the account provider, on a machine set up by `owsbx machine
# sandbox setup`: granted with ACL entries (journaled under the setup's journal/ folder,
# in the person's own journal/<uid>-<name>/), proved from inside, revoked at close, never
# widened by a symbolic link; a live session's grants survive another session's cleanup,
# a killed host's are revoked by the next open.
. "$(dirname "$0")/../account_lib.sh"

W=$PHOME/work R=$PHOME/ref
PUID=$(id -u "$PERSON")
acl_before_w=$(getfacl -p "$W" 2>/dev/null) acl_before_home=$(getfacl -p "$PHOME" 2>/dev/null)
out=$(owsbx run --provider account --rw "$W" --ro "$R" -- sh -c "
	echo made > $W/by-agent && cat $R/readme.txt && pwd" 2>&1)
if grep -q "^reference$" <<<"$out"; then
	ok "a read-write folder: the agent writes, the person reads"
else
	not_ok "a read-write folder: the agent writes, the person reads"
	diag <<<"$out"
fi
check "the file the agent made is in the folder" test -f "$W/by-agent"
check "the default working folder is the first read-write folder" grep -q "^$W$" <<<"$out"
check "the person's journal folder is theirs alone (journal/<uid>-<name>, 0700)" \
	test "$(stat -c '%U %a' "$T/state/journal/$PUID-$PERSON" 2>/dev/null)" = "$PERSON 700"
check "no journal is left after the session" \
	test -z "$(find "$T/state/journal/$PUID-$PERSON" -name '*.journal' 2>/dev/null)"
check "the person can edit what the agent made" as_person sh -c "echo edited >> $W/by-agent"
check "a read-only folder refuses writes" \
	owsbx run --provider account --ro "$R" -- sh -c "! touch $R/x 2>/dev/null"
check "git accepts the person's repository (safe.directory)" \
	owsbx run --provider account --rw "$W" -- sh -c "cd $W && git init -q . && git status >/dev/null"
check "~/.bashrc stays unreadable with the home traversable" \
	owsbx run --provider account --rw "$W" -- sh -c "! cat $PHOME/.bashrc 2>/dev/null"
check "the home stays unlistable" \
	owsbx run --provider account --rw "$W" -- sh -c "! ls $PHOME 2>/dev/null"
as_person ln -sfn "$PHOME/.ssh" "$W/keys"
check "a link in a folder leads nowhere outside it" \
	owsbx run --provider account --rw "$W" -- sh -c "! cat $W/keys/id_ed25519 2>/dev/null"
as_person rm -f "$W/keys"
as_person rm -rf "$W/.git" "$W/by-agent"
check "grants are revoked at close: the folder's ACL is as before" \
	test "$(getfacl -p "$W" 2>/dev/null)" = "$acl_before_w"
check "... and the home's" test "$(getfacl -p "$PHOME" 2>/dev/null)" = "$acl_before_home"

# host_of PATTERN: the pid of the person's owsbx host whose command line matches.
host_of() { session_host "$PERSON" "$1"; }
# gone PID: the process has exited (a zombie counts as gone: its descriptors are closed).
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)" = Z ]; }
poll() { # poll CMD...: up to 5 s
	for _ in $(seq 100); do "$@" && return 0; sleep 0.05; done
	return 1
}
granted() { getfacl -p "$W" 2>/dev/null | grep -q "user:$CLOSED:"; }

# A live session's grants: another session's open (which cleans up dead hosts) keeps them.
as_person "$BIN/owsbx" run --provider account --rw "$W" -- sleep 1000 >/dev/null 2>&1 &
check "a long session holds its grant" poll granted
owsbx run --provider account -- true >/dev/null 2>&1
check "another session's open leaves the live session's grant alone" granted
host=$(host_of "$BIN/owsbx run --provider account --rw $W -- sleep 1000")
check "the live session's journal is there" \
	test -n "$(find "$T/state/journal/$PUID-$PERSON" -name '*.journal' 2>/dev/null)"

# A host killed mid-session: the next session open revokes what it left.
[ -n "$host" ] && kill -9 "$host"
check "the killed host is gone" poll gone "${host:-0}"
check "the killed host's grant stays until the next open" granted
owsbx run --provider account -- true >/dev/null 2>&1
check "after kill -9 of the host, the next open revokes its grants" \
	test "$(getfacl -p "$W" 2>/dev/null)" = "$acl_before_w"
check "... and the home's" test "$(getfacl -p "$PHOME" 2>/dev/null)" = "$acl_before_home"
check "... and removes its journal" \
	test -z "$(find "$T/state/journal/$PUID-$PERSON" -name '*.journal' 2>/dev/null)"
done_testing
