# The guard of a folder whose repository's git folder lies outside it: a folder inside the
# person's repository (`--rw ~/proj/sub`), or a linked worktree of a repository elsewhere
# (`git worktree add ~/proj-agent`, `--rw ~/proj-agent`).  git run there reads that
# repository's config, which is outside the folder but may name paths inside it: a
# core.hooksPath relative to the work tree (the linked worktree's own top), an include
# relative to the git folder.  What it names in the folder is the person's: the agent's
# hooks and config there never run outside.  A control: the agent still writes elsewhere.
ATTACKS="$ATTACKS above"

# The agent's hook at HOOKS/pre-commit and a config at CFG, in the folder; then the
# person's commit and alias in REPO, outside.  Marker names: TAG-hook, TAG-include.
above_plant() { # folder hooks cfg repo tag
	local m=$OUT/m-$5 out
	out=$(as_person "$BIN/owsbx" run --provider "$P" --net "$NET" --rw "$1" -- sh -c "
		mkdir -p '$2' && printf '#!/bin/sh\ntouch ${m}-hook\n' > '$2/pre-commit' &&
		chmod +x '$2/pre-commit' && printf '[alias]\n\tst = !touch ${m}-include\n' > '$3';
		echo mine > mine.txt && echo done" 2>&1)
	check "$(tag) control: the agent writes in the folder ($5)" \
		test "$(printf '%s' "$out" | tail -1)" = "done"
	check "$(tag) control: ... and its file stays ($5)" test "$(cat "$1/mine.txt" 2>&1)" = mine
	as_person git -C "$4" -c user.name=t -c user.email=t@e commit -q --allow-empty \
		-m outside >/dev/null 2>&1
	as_person git -C "$4" st >/dev/null 2>&1
}

attack_above() {
	local sub=$RW/sub wt=$ATK/wt
	# (1) --rw ~/proj/sub: the repository above's own config.
	as_person sh -c "mkdir -p '$sub' && cd '$RW' &&
		git config core.hooksPath sub/hooks && git config include.path ../sub/team.gitconfig"
	above_plant "$sub" hooks team.gitconfig "$RW" above
	# repos_no_marker: test/attack/repos.sh
	repos_no_marker "$(tag) the repository above's relative core.hooksPath into the folder runs no hook of the agent's" above-hook
	repos_no_marker "$(tag) a file the repository above's config includes from the folder stays the person's" above-include
	as_person sh -c "cd '$RW' && git config --unset core.hooksPath; git config --unset include.path"
	as_person rm -rf "$sub"

	# (2) --rw a linked worktree: the common config outside, its hooksPath the worktree's.
	as_person sh -c "cd '$RW' && git worktree add -q '$wt' 2>/dev/null &&
		git config core.hooksPath .githooks &&
		git config include.path '$wt/team.gitconfig'" ||
		not_ok "$(tag) premise: a linked worktree outside the repository"
	above_plant "$wt" .githooks team.gitconfig "$wt" linked
	repos_no_marker "$(tag) a linked worktree: the common config's relative core.hooksPath runs no hook of the agent's" linked-hook
	repos_no_marker "$(tag) a linked worktree: a file the common config includes from it stays the person's" linked-include
	as_person sh -c "cd '$RW' && git config --unset core.hooksPath; git config --unset include.path;
		git worktree remove --force '$wt'; rm -rf '$wt'"
}
