# What the agent leaves that the host must clean or hand back: folders it cannot read
# (mode 000) in a read-write folder and in the private home, a tree in the private home
# deeper than any walk's limit, links there to the person's home.  After close the
# private folder is gone (nothing in the state folder, nothing on the host's /tmp);
# under `account` the read-write folder's tree is the person's, so the person may
# remove it.  (That it also names no account inside a closed folder is a finding:
# test/attack-findings/closedacl.sh.)
ATTACKS="$ATTACKS leftover"

attack_leftover() {
	local out deep uid
	uid=$(id -u "$PERSON")
	deep=$(printf 'd/%.0s' $(seq 300))
	as_person rm -rf "$RW/lo"
	out=$(sbx -- sh -c "cd '$RW' && mkdir -p lo/z/y && touch lo/z/y/f && chmod 000 lo/z/y lo/z &&
		cd \"\$HOME\" && mkdir -p '$deep' && mkdir -p shut/in && touch shut/in/f &&
		chmod 000 shut/in shut && ln -s '$PHOME' home.lnk && ln -s / root.lnk &&
		mkfifo fifo && echo planted" 2>&1)
	like "$out" "planted" "$(tag) control: the agent leaves closed folders, a deep tree, links, a FIFO"
	if [ "$P" = landlock ]; then
		check "$(tag) after close, nothing under /tmp/owsandbox-$uid" test ! -e "/tmp/owsandbox-$uid"
	else
		for _ in $(seq 100); do
			[ -z "$(ls -A "$T/state/sandboxes" 2>/dev/null)" ] && break
			sleep 0.05
		done
		check "$(tag) after close, no private folder in the state folder" \
			test -z "$(ls -A "$T/state/sandboxes" 2>/dev/null)"
		out=$(find "$RW/lo" ! -user "$PERSON" 2>&1)
		check "$(tag) the closed folders the account made are the person's again" test -z "$out"
	fi
	check "$(tag) the person may open and remove what the agent closed" \
		as_person sh -c "chmod -R u+rwx '$RW/lo' && rm -rf '$RW/lo'"
	check "$(tag) the person's home is still there and theirs" \
		test "$(stat -c %U "$PHOME/.ssh/id_ed25519")" = "$PERSON"
}
