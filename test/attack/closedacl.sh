# A folder the agent closes (chmod 000) keeps nothing of ours below it after close: the
# launcher's hand_back opens it to the person again (u+rx), so the person's revoke walks
# it and takes the account's entries off lo/z/y and lo/z/y/f.
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
