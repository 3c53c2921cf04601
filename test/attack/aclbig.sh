# ACLs of any size: a file with about 500 ACL entries (what ext4 holds in a block; 128 was
# the reader's old limit) must neither refuse later sessions nor stop cleanup, and the
# account's entry must still come off it.  The agent makes one in a read-write folder
# (its own file: it may set any ACL there); the person has one of their own, 0640, that
# the account reaches only through the grant.  Under `landlock` there is no ACL walk: the
# same steps must simply work.
ATTACKS="$ATTACKS aclbig"

# Sets an access ACL of N named users (uids 300000...) on FILE: owner rw, mask r.
ACLBIG_SET='import os, struct, sys
e = [(1, 6, 0xffffffff)] + [(2, 4, 300000 + i) for i in range(int(sys.argv[2]))]
e += [(4, 0, 0xffffffff), (0x10, 4, 0xffffffff), (0x20, 0, 0xffffffff)]
os.setxattr(sys.argv[1], "system.posix_acl_access",
            struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))'

# Gives FILE as many named entries as its file system takes; prints how many.
ACLBIG_FILL='import os, struct, sys
def fits(n):
    e = [(1, 6, 0xffffffff)] + [(2, 4, 300000 + i) for i in range(n)]
    e += [(4, 0, 0xffffffff), (0x10, 4, 0xffffffff), (0x20, 0, 0xffffffff)]
    try:
        os.setxattr(sys.argv[1], "system.posix_acl_access",
                    struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))
        return True
    except OSError:
        return False
lo, hi = 1, 8187
while lo < hi:
    mid = (lo + hi + 1) // 2
    lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
fits(lo)
print(lo)'

aclbig_named() { # DIR: entries naming a sandbox account, one "file: entry" a line
	getfacl -RPp "$1" 2>/dev/null | awk -v c=":$CLOSED:" -v o=":$OPEN:" '
		/^# file: / { f = substr($0, 9); next }
		index($0, c) || index($0, o) { print f ": " $0 }'
}

attack_aclbig() {
	local d=$RW/aclbig out n
	as_person sh -c "rm -rf '$d'; umask 022; mkdir '$d'"
	out=$(sbx -- sh -c "cd '$d' && echo x > agent.txt && $PY -c '$ACLBIG_SET' agent.txt 490 &&
		getfacl -cn agent.txt | grep -c '^user:[0-9]'" 2>&1)
	if [ "$P" = landlock ] && [[ $out == *"Invalid argument"* ]]; then
		skip "$(tag) the agent cannot name other users in an ACL: its user namespace maps the person alone"
	else
		# seccomp skips setting any extended attribute inside: the agent's ACL is never set
		# (under account the file inherits the folder's entries for the account and the person)
		check "$(tag) the agent's 490 ACL entries on a file it made are not set" test "$out" -le 2
		[ "$out" -gt 2 ] 2>/dev/null && diag <<<"$out"
	fi
	out=$(sbx -- true 2>&1)
	check "$(tag) the next session opens" test $? = 0
	[ -n "$out" ] && diag <<<"$out"
	out=$(owsbx machine sandbox cleanup 2>&1)
	check "$(tag) \`owsbx machine sandbox cleanup\` succeeds" test $? = 0
	[ -n "$out" ] && diag <<<"$out"

	as_person sh -c "echo mine > '$d/mine.txt' && chmod 0640 '$d/mine.txt' &&
		$PY -c '$ACLBIG_SET' '$d/mine.txt' 490"
	n=$(getfacl -cn "$d/mine.txt" 2>/dev/null | grep -c '^user:[0-9]')
	check "$(tag) control: the person's file carries 490 entries" test "$n" = 490
	out=$(sbx -- cat "$d/mine.txt" 2>&1)
	check "$(tag) a session opens over it and the agent reads it through the grant" test "$out" = mine
	[ "$out" != mine ] && diag <<<"$out"
	out=$(aclbig_named "$d")
	check "$(tag) after close, nothing there names the account" test -z "$out"
	[ -n "$out" ] && sed -n '1,4p' <<<"$out" | diag
	n=$(getfacl -cn "$d/mine.txt" 2>/dev/null | grep -c '^user:[0-9]')
	check "$(tag) ... and the person's 490 entries are all still there" test "$n" = 490
	out=$(sbx -- true 2>&1)
	check "$(tag) and the next session opens" test $? = 0
	[ -n "$out" ] && diag <<<"$out"

	# A file whose ACL has no room left (as many entries as the file system holds): the
	# grant leaves it as it is, and the session opens over the rest of the folder.
	as_person rm -f "$d/mine.txt"
	as_person sh -c "echo full > '$d/full.txt' && chmod 0640 '$d/full.txt' && echo open > '$d/open.txt'"
	n=$(as_person "$PY" -c "$ACLBIG_FILL" "$d/full.txt")
	check "$(tag) control: the person's file holds all the entries it can ($n)" test "${n:-0}" -gt 400
	out=$(sbx -- sh -c "cat '$d/open.txt'; cat '$d/full.txt' 2>/dev/null || echo unread" 2>&1)
	if [ "$P" = landlock ]; then
		check "$(tag) a session opens over a file whose ACL is full" test "$out" = "open
full"
	else
		check "$(tag) a session opens over a file whose ACL is full; that file alone stays closed" \
			test "$out" = "open
unread"
	fi
	[ "$out" != "open
unread" ] && diag <<<"$out"
	out=$(aclbig_named "$d")
	check "$(tag) after close, nothing there names the account" test -z "$out"
	as_person rm -rf "$d"
}
