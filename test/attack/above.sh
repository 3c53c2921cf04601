# The guard of a folder inside the person's repository (`--rw ~/proj/sub`): git run there,
# and in the work tree above, reads that repository's own config, which lies outside the
# folder but may name paths inside it (a core.hooksPath relative to the work tree, an
# include relative to the git folder).  What it names in the folder is the person's: the
# agent's hooks and config there never run outside.  A control: the agent still writes
# elsewhere in the folder.
ATTACKS="$ATTACKS above"

attack_above() {
	local m=$OUT/m-above sub=$RW/sub out
	as_person sh -c "mkdir -p '$sub' && cd '$RW' &&
		git config core.hooksPath sub/hooks && git config include.path ../sub/team.gitconfig"
	out=$(as_person "$BIN/owsbx" run --provider "$P" --net "$NET" --rw "$sub" -- sh -c "
		mkdir -p hooks && printf '#!/bin/sh\ntouch ${m}-hook\n' > hooks/pre-commit &&
		chmod +x hooks/pre-commit &&
		printf '[alias]\n\tst = !touch ${m}-include\n' > team.gitconfig;
		echo mine > mine.txt && echo done" 2>&1)
	check "$(tag) control: the agent writes in a folder below the person's work tree" \
		test "$(printf '%s' "$out" | tail -1)" = done
	check "$(tag) control: ... and its file stays" test "$(cat "$sub/mine.txt" 2>&1)" = mine
	as_person git -C "$RW" -c user.name=t -c user.email=t@e commit -q --allow-empty \
		-m outside >/dev/null 2>&1
	as_person git -C "$RW" st >/dev/null 2>&1
	# repos_no_marker: test/attack/repos.sh
	repos_no_marker "$(tag) the repository above's relative core.hooksPath into the folder runs no hook of the agent's" above-hook
	repos_no_marker "$(tag) a file the repository above's config includes from the folder stays the person's" above-include
	as_person sh -c "cd '$RW' && git config --unset core.hooksPath; git config --unset include.path"
	as_person rm -rf "$sub" "${m}-hook" "${m}-include"
}
