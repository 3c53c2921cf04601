# FINDING (account provider; every network mode): a folder the agent closes (chmod 000)
# keeps the account's ACL entries on everything below it after close.  The launcher's
# hand_back (CAP_DAC_READ_SEARCH) makes it all the person's, but the person's revoke
# walk (lib/linux/acl_walk.c, without DAC override) cannot list a 000 folder, so
# lo/z/y and lo/z/y/f keep user:ACCOUNT:rwx and default:user:ACCOUNT:rwx.  README:
# "after close, what the account made in a read-write folder ... carries no entry of
# ours".  Not run by attacks.sh: copy it into test/attack/ to see it fail.
ATTACKS="$ATTACKS closedacl"

attack_closedacl() {
	local out
	as_person rm -rf "$RW/ca"
	check "$(tag) control: the agent makes ca/z/y/f and closes ca/z (mode 000)" \
		sbx -- sh -c "cd '$RW' && mkdir -p ca/z/y && touch ca/z/y/f && chmod 000 ca/z"
	if [ "$P" = account ]; then
		out=$(getfacl -RPp "$RW/ca" 2>/dev/null | awk -v c=":$CLOSED:" -v o=":$OPEN:" '
			/^# file: / { f = substr($0, 9); next }
			index($0, c) || index($0, o) { print f ": " $0 }')
		check "$(tag) after close, nothing below the closed folder names the account" test -z "$out"
		[ -n "$out" ] && diag <<<"${out//$RW\//}"
	fi
	as_person sh -c "chmod -R u+rwx '$RW/ca' && rm -rf '$RW/ca'"
}
