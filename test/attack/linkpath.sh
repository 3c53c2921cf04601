# A session folder named through a link the agent planted in an earlier session is
# refused: session 1 (--rw RW) makes RW/lp a link to ~/.ssh; session 2, `--rw RW/lp`,
# must not get ~/.ssh (ows_policy_add_folder refuses a folder reached through a link
# that is not root's, naming the real path).
ATTACKS="$ATTACKS linkpath"

linkpath_run() { # FOLDER CMD: a session with FOLDER read-write, as the person
	local f=$1
	shift
	as_person "$BIN/owsbx" run --provider "$P" --net "$NET" --rw "$f" -- sh -c "$1" 2>&1
}

attack_linkpath() {
	local out
	as_person sh -c "rm -rf '$RW/lp' '$RW/real' && mkdir '$RW/real'"
	out=$(linkpath_run "$RW/real" "echo x > '$RW/real/f' && echo WROTE")
	like "$out" "WROTE" "$(tag) control: a subfolder given by its own path is granted"
	check "$(tag) control: the agent makes RW/lp a link to ~/.ssh" \
		sbx -- ln -s "$PHOME/.ssh" "$RW/lp"
	out=$(linkpath_run "$RW/lp" "cat '$PHOME/.ssh/id_ed25519'; echo x > '$PHOME/.ssh/planted' && echo WROTE")
	unlike "$out" "PRIVATE KEY" "$(tag) --rw RW/lp does not open the key the link leads to"
	unlike "$out" "WROTE" "$(tag) ... nor let a file be written in ~/.ssh"
	as_person rm -rf "$RW/lp" "$RW/real" "$PHOME/.ssh/planted"
}
