# ACL residue: nothing of a session may stay in the ACLs of a read-write folder once it
# has closed.  Under `account` what is made inside during a session inherits the grant's
# default entries (d:u:ACCOUNT, d:u:PERSON); revoke must take them off again, so that
# the account keeps no way in and what the person makes later inherits nothing of ours.
# Under `landlock` the sandbox is the person's own uid: no ACL of its may appear at all.
ATTACKS="$ATTACKS aclres"

# Entries naming the sandbox's accounts or the person under DIR, one "file: entry" a line.
aclres_named() {
	getfacl -RPp "$1" 2>/dev/null | awk -v c=":$CLOSED:" -v o=":$OPEN:" -v p=":$PERSON:" '
		/^# file: / { f = substr($0, 9); next }
		index($0, c) || index($0, o) || index($0, p) { print f ": " $0 }'
}

# Mode, owner and ACL xattrs of each NAME under DIR, in hex (byte-for-byte comparison).
aclres_state() {
	python3 - "$@" <<'PY'
import os, sys
root = sys.argv[1]
for n in sys.argv[2:]:
    p = os.path.join(root, n)
    st = os.lstat(p)
    out = [n, oct(st.st_mode), str(st.st_uid)]
    for x in ("system.posix_acl_access", "system.posix_acl_default"):
        try:
            out.append(x[-7:] + "=" + os.getxattr(p, x, follow_symlinks=False).hex())
        except OSError:
            pass
    print(" ".join(out))
PY
}

attack_aclres() {
	local d=$RW/aclres out old before after i
	as_person sh -c "umask 022; rm -rf '$d'; mkdir -p '$d/old/deep' && echo x > '$d/old/f' &&
		echo y > '$d/old/deep/g' && chmod 640 '$d/old/deep/g' &&
		echo z > '$d/acl.txt' && setfacl -m u:nobody:r '$d/acl.txt'"
	old="old old/f old/deep old/deep/g acl.txt"
	before=$(aclres_state "$d" $old)

	# The agent makes a/b, a/b/c, a/d; while the session waits, the person makes p/q,
	# p/q/r, p/s; then the session closes.
	as_person rm -f "$d/.ready" "$d/.go"
	sbx -- sh -c "cd '$d' && umask 022 && mkdir -p a/b && touch a/b/c a/d && touch .ready &&
		i=0; while [ ! -e .go ] && [ \$i -lt 300 ]; do sleep 0.05; i=\$((i + 1)); done" \
		>/dev/null 2>&1 &
	local job=$!
	for i in $(seq 300); do [ -e "$d/.ready" ] && break; sleep 0.05; done
	check "$(tag) control: the agent makes a/b/c and a/d in a read-write folder" \
		test -e "$d/a/b/c" -a -e "$d/a/d"
	check "$(tag) control: the person makes p/q/r and p/s while the session lives" \
		as_person sh -c "cd '$d' && umask 022 && mkdir -p p/q && touch p/q/r p/s .go"
	wait "$job"

	out=$(aclres_named "$d/p")
	if [ -z "$out" ]; then
		ok "$(tag) after close, nothing the person made names the sandbox or the person"
	else
		not_ok "$(tag) after close, nothing the person made names the sandbox or the person"
		diag <<<"$out"
	fi
	check "$(tag) p/s is a plain 644, as the umask made it" test "$(stat -c %a "$d/p/s")" = 644
	as_person sh -c "umask 022; touch '$d/p/q/later'"
	check "$(tag) a file the person makes in p/q afterwards inherits nothing" \
		test -z "$(aclres_named "$d/p/q/later")"
	after=$(aclres_state "$d" $old)
	if [ "$before" = "$after" ]; then
		ok "$(tag) what was there before is byte for byte as before"
	else
		not_ok "$(tag) what was there before is byte for byte as before"
		diff <(echo "$before") <(echo "$after") | diag
	fi
	if [ "$P" = landlock ]; then
		out=$(getfacl -RPps "$d" 2>/dev/null | sed -n 's/^# file: //p' | grep -v -x "$d/acl.txt")
		check "$(tag) no ACL anywhere in the folder but the person's own (acl.txt)" test -z "$out"
	else
		# The agent's own files are handed back to the person when the session ends
		# (the launcher), and the person's revoke then takes our entries off them.
		out=$(aclres_named "$d/a")
		if [ -z "$out" ]; then
			ok "$(tag) after close, nothing the agent made names the account or the person"
		else
			not_ok "$(tag) after close, nothing the agent made names the account or the person"
			diag <<<"$out"
		fi
		check "$(tag) ... and it is the person's again" \
			test "$(find "$d/a" ! -user "$PERSON" | wc -l)" = 0
		check "$(tag) ... so the person may change and remove it" \
			as_person sh -c "echo mine > '$d/a/b/c' && rm -r '$d/a/d'"
	fi
	as_person rm -rf "$d"
}
