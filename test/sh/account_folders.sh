#!/bin/bash
# Session folders under the account provider: granted with ACL entries
# (ows_acl_grant), proved from inside, revoked at close, and never widened by
# a symbolic link.  Needs the ACL grants: skipped, saying so, while
# ows_acl_grant reports OWS_ENOSYS.
. "$(dirname "$0")/../account_lib.sh"

W=$PHOME/work R=$PHOME/ref
acl_before_w=$(getfacl -p "$W" 2>/dev/null) acl_before_home=$(getfacl -p "$PHOME" 2>/dev/null)
out=$(owsbx run --provider account --rw "$W" --ro "$R" -- sh -c "
	echo made > $W/by-agent && cat $R/readme.txt && pwd" 2>&1)
if grep -q "not available in this version\|OWS_ENOSYS" <<<"$out"; then
	sed "s/^/# /" <<<"ows_acl_grant is not in this build yet: $out"
	skip "session folders need ACL grants (ows_acl_grant returns OWS_ENOSYS until the acl branch lands)"
	out=$(owsbx run --provider account --rw "$W" -- true 2>&1)
	check "without grants, a session with folders is refused, not run open" \
		grep -q "owsbx:" <<<"$out"
	check "... and leaves no private folder" test -z "$(ls "$T/state/sandboxes")"
	done_testing
fi
check "a read-write folder: the agent writes, the person reads" grep -q "^reference$" <<<"$out"
check "the file the agent made is in the folder" test -f "$W/by-agent"
check "the default working folder is the first read-write folder" grep -q "^$W$" <<<"$out"
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

# A host killed mid-session: the next session open revokes what it left.
as_person "$BIN/owsbx" run --provider account --rw "$W" -- sleep 1000 >/dev/null 2>&1 &
for _ in $(seq 50); do getfacl -p "$W" 2>/dev/null | grep -q "$CLOSED" && break; sleep 0.1; done
host=$(pgrep -u "$PERSON" -f "$BIN/owsbx run" | head -1)
kill -9 "$host"
sleep 0.5
owsbx run --provider account -- true >/dev/null 2>&1
check "after kill -9 of the host, the next open revokes its grants" \
	test "$(getfacl -p "$W" 2>/dev/null)" = "$acl_before_w"
done_testing
