# What the host reads in a read-write folder before the next session starts: the git
# guard parses the `.gitmodules` of each submodule a repository names (to guard that
# submodule's `.git` too).  A submodule's own `.gitmodules` is not a guarded name, so the
# agent may leave there whatever it likes: a FIFO (an open that waits for a writer
# forever) or a link to /dev/zero (a line reader that never reaches the end).  Either
# must not stop the person's next session from starting; a plain one is still read.
ATTACKS="$ATTACKS hostread"

hostread_run() { # the next session's `true`, bounded so that a hang is a failure
	timeout -s KILL 8 runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$PHOME" USER="$PERSON" OWSBX_CONFIG="$CONF" "$BIN/owsbx" run --provider "$P" \
		--net "$NET" --rw "$RW" -- true >/dev/null 2>&1 {OWS_LOCK_FD}<&-
}

attack_hostread() {
	local kind rc
	as_person sh -c "cd '$RW' && mkdir -p sub && printf '[submodule \"sub\"]\n\tpath = sub\n\turl = ./x\n' > .gitmodules &&
		git add .gitmodules && git commit -qm sub"
	check "$(tag) control: a session starts in a repository naming a submodule" hostread_run
	check "$(tag) control: the agent writes a plain sub/.gitmodules" \
		sbx -- sh -c "printf '[submodule \"n\"]\n\tpath = n\n' > '$RW/sub/.gitmodules'"
	check "$(tag) control: ... and the next session starts" hostread_run
	for kind in fifo zero; do
		as_person rm -f "$RW/sub/.gitmodules"
		if [ $kind = fifo ]; then
			# The agent cannot make one there (fifos.sh); the person may have.
			as_person mkfifo "$RW/sub/.gitmodules"
		else
			sbx -- ln -s /dev/zero "$RW/sub/.gitmodules"
		fi
		check "$(tag) control: a $kind is left at sub/.gitmodules" \
			as_person test -e "$RW/sub/.gitmodules" -o -L "$RW/sub/.gitmodules"
		hostread_run
		rc=$?
		check "$(tag) a $kind at sub/.gitmodules does not stop the next session (rc $rc)" test $rc = 0
	done
	as_person sh -c "cd '$RW' && rm -rf sub .gitmodules && git rm -q --cached .gitmodules 2>/dev/null; git commit -qm unsub 2>/dev/null" >/dev/null 2>&1
	true
}
