# The host's own steps after a command and at close walk what the agent left in a
# read-write folder: the guard's sweep renames new guarded names, and under `account`
# the launcher hands the account's files back to the person and the person's revoke
# takes the session's ACL entries off.  Links planted there, pointing at the person's
# secrets (~/.ssh and its key) or at a file of the person's in the folder, must not turn
# any of these into a change elsewhere: afterwards the key has the same name, owner,
# mode, ACL and change time.  FIFOs there (the person's: the agent cannot make one,
# fifos.sh) must not wedge the open nor the close.
ATTACKS="$ATTACKS postwalk"

# Owner, mode, change time and ACL of each path (FMT: stat's format), without following
# the last link.
postwalk_state() {
	local f fmt=$1
	shift
	for f in "$@"; do
		printf '%s %s ' "$f" "$(stat -c "$fmt" "$f" 2>&1)"
		getfacl -cp "$f" 2>&1 | tr '\n' ' '
		echo
	done
}

attack_postwalk() {
	local key=$PHOME/.ssh/id_ed25519 before after out rc
	as_person sh -c "echo mine > '$RW/person.txt' && chmod 600 '$RW/person.txt'"
	# person.txt's change time moves with its link count: the agent may link it in the folder.
	before=$(postwalk_state '%u:%g %a %Z' "$PHOME/.ssh" "$key"; postwalk_state '%u:%g %a' "$RW/person.txt")
	sleep 1.1 # a change from now on shows in the change time
	as_person sh -c "cd '$RW' && mkdir -p pw/deep sub && mkfifo fifo .gitmodules pw/deep/fifo sub/.git"
	out=$(timeout -s KILL 60 runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$PHOME" USER="$PERSON" OWSBX_CONFIG="$CONF" "$BIN/owsbx" run --provider "$P" \
		--net "$NET" --rw "$RW" -- sh -c "cd '$RW' && umask 022 &&
		ln -s '$key' key.lnk && ln -s '$PHOME/.ssh' ssh.lnk && ln -s '$key' .envrc &&
		mkdir -p pw/deep && ln -s '$PHOME/.ssh' pw/deep/up && ln -s '$key' pw/.mcp.json &&
		ln person.txt person.hard 2>/dev/null; ln -s '$PHOME' .vscode &&
		echo planted" 2>&1 {OWS_LOCK_FD}<&-)
	rc=$?
	like "$out" "planted" "$(tag) control: the agent plants links and FIFOs in a read-write folder"
	check "$(tag) ... and the session closes (rc $rc)" test $rc = 0
	check "$(tag) control: the guard moved the new .envrc aside" \
		test -L "$(find "$RW" -maxdepth 1 -name '.envrc.owsbx-moved-*' | head -1)"
	check "$(tag) ... the link itself, not what it names: the key is where it was" \
		as_person test -f "$key" -a ! -L "$key"
	after=$(postwalk_state '%u:%g %a %Z' "$PHOME/.ssh" "$key"; postwalk_state '%u:%g %a' "$RW/person.txt")
	if [ "$before" = "$after" ]; then
		ok "$(tag) the person's ~/.ssh, key and own file are unchanged: owner, mode, ACL, ctime"
	else
		not_ok "$(tag) the person's ~/.ssh, key and own file are unchanged: owner, mode, ACL, ctime"
		diff <(echo "$before") <(echo "$after") | diag
	fi
	out=$(find "$PHOME" -path "$ATK" -prune -o ! -user "$PERSON" -print 2>&1)
	check "$(tag) nothing in the home outside the folders is owned by another" test -z "$out"
	out=$(getfacl -RPps "$PHOME" 2>/dev/null | sed -n 's/^# file: //p' | grep -v "^$ATK")
	check "$(tag) no ACL in the home outside the folders" test -z "$out"
	if [ "$P" = account ]; then
		check "$(tag) control: what the agent made is the person's again" \
			test "$(stat -c %U "$RW/pw/deep")" = "$PERSON"
	fi
	as_person rm -rf "$RW"/key.lnk "$RW"/ssh.lnk "$RW"/.envrc* "$RW"/pw "$RW"/person.* \
		"$RW"/.vscode* "$RW"/fifo "$RW"/.gitmodules* "$RW"/sub
}
