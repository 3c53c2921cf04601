# The guard, beyond the session folder's own repository: every repository git would find
# under a read-write folder, and the person's own git settings outside that point into it.
# Each attack leaves code for the person's git from inside; the person's git then runs
# OUTSIDE, as the person, after the session, and must not run it (no marker in $OUT).
ATTACKS="$ATTACKS repos"

# The person's git in `dir`: status (fsmonitor), then a commit (hooks), as after a `cd`.
repos_person_git() { # dir [env...]
	local dir=$1
	shift
	as_person env "$@" git -C "$dir" status --short >/dev/null 2>&1
	as_person env "$@" git -C "$dir" -c user.name=t -c user.email=t@e \
		commit -q --allow-empty -m outside >/dev/null 2>&1
}

repos_no_marker() { # name marker
	if [ -e "$OUT/m-$2" ]; then not_ok "$1"; else ok "$1"; fi
}

# A run of owsbx on a folder of its own, `--rw $1`, as sbx does for $RW.
repos_sbx() { # folder [env...] -- cmd...
	local folder=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	as_person env "${envs[@]}" "$BIN/owsbx" run --provider "$P" --net "$NET" \
		--rw "$folder" "$@"
}

attack_repos() {
	local m=$OUT/m- code=$ATK/code out
	# Run at the session folder's top: git inside refuses a nested repository that is not
	# the account's (safe.directory names the session folders), not a --file.
	fsmon() { printf "git config --file %s/.git/config core.fsmonitor 'touch %s%s; false'" "$1" "$m" "$2"; }
	partial files.git_guard "the guard of every repository in a read-write folder" && return 0

	# (1) --rw ~/code: several repositories in one folder that is in none.
	as_person sh -c "rm -rf '$code' && mkdir -p '$code' && cd '$code' && for r in a b; do
		git init -q \$r && git -C \$r -c user.name=t -c user.email=t@e commit -q \
			--allow-empty -m init; done"
	out=$(repos_sbx "$code" -- sh -c "$(fsmon a multi) &&
		printf '#!/bin/sh\ntouch ${m}multihook\n' > b/.git/hooks/pre-commit &&
		chmod +x b/.git/hooks/pre-commit; git init -q new && $(fsmon new newrepo)
		git init -q shut && $(fsmon shut shut) && chmod 0 shut; echo done" 2>&1)
	check "$(tag) control: git runs inside in each repository of the folder" \
		test "$(printf '%s' "$out" | tail -1)" = done
	repos_person_git "$code/a"
	repos_person_git "$code/b"
	repos_person_git "$code/new"
	# A folder closed even to its owner: the person opens it again before the `cd`.
	as_person chmod u+rwx "$code/shut"
	repos_person_git "$code/shut"
	repos_no_marker "$(tag) --rw over several repositories: one's core.fsmonitor stays the person's" multi
	repos_no_marker "$(tag) --rw over several repositories: another's hooks stay the person's" multihook
	repos_no_marker "$(tag) a repository the agent makes in a folder in no repository never runs outside" newrepo
	repos_no_marker "$(tag) nor one in a folder it closed to the person (chmod 0)" shut

	# (2) A repository recorded as a gitlink, with no .gitmodules.
	as_person sh -c "cd '$RW' && git init -q lib && git -C lib -c user.name=t \
		-c user.email=t@e commit -q --allow-empty -m lib && git add lib 2>/dev/null &&
		git commit -qm gitlink && ! [ -e .gitmodules ]" ||
		not_ok "$(tag) premise: a gitlink without .gitmodules"
	sbx -- sh -c "$(fsmon lib gitlink)" >/dev/null 2>&1
	repos_person_git "$RW"
	repos_no_marker "$(tag) a gitlink's repository (no .gitmodules) stays the person's" gitlink

	# (3) git init below the person's work tree, then a folder git takes for a bare
	# repository (HEAD, objects, refs) whose core.worktree brings fsmonitor back.
	out=$(sbx --events "$OUT/ev.json" -- sh -c "mkdir -p src && git init -q src &&
		$(fsmon src initsrc) && mkdir data && cp -a .git/HEAD .git/objects .git/refs data/ &&
		printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = $RW\n\tfsmonitor = \"touch ${m}bare; false\"\n' \
			> data/config && echo planted" 2>&1)
	check "$(tag) control: git init works inside" test "$out" = planted
	repos_person_git "$RW/src"
	repos_person_git "$RW/data"
	repos_no_marker "$(tag) git init in a folder below the person's work tree never runs outside" initsrc
	repos_no_marker "$(tag) a folder the agent shapes as a bare repository never runs outside" bare
	like "$(grep '"event": \?"exit"' "$OUT/ev.json" 2>/dev/null)" \
		'"moved_aside": ?\[[^]]*src/\.git' \
		"$(tag) the command's exit event names the repository moved aside"
	rm -f "$OUT/ev.json"

	# (4) The person's global, XDG and system git settings with paths into the folder:
	# a relative core.hooksPath, a relative core.fsmonitor, includes and an includeIf.
	local sys=$OUT/system.gitconfig
	as_person sh -c "mkdir -p '$PHOME/.config/git' &&
		printf '[core]\n\thooksPath = .githooks\n[include]\n\tpath = $RW/team.gitconfig\n' \
			> '$PHOME/.gitconfig' &&
		printf '[core]\n\tfsmonitor = tools/fsmon.sh\n' > '$PHOME/.config/git/config' &&
		printf '[includeIf \"gitdir:$ATK/\"]\n\tpath = $RW/sys.gitconfig\n' > '$sys'"
	# The environment variable names the system file, as git's own does; /etc/gitconfig is
	# the machine's and other tests' to read, not this test's to write.
	repos_sbx "$RW" GIT_CONFIG_SYSTEM="$sys" -- sh -c "mkdir -p .githooks tools &&
		printf '#!/bin/sh\ntouch ${m}globalhooks\n' > .githooks/pre-commit &&
		chmod +x .githooks/pre-commit &&
		printf '#!/bin/sh\ntouch ${m}xdgfsmon\nexit 1\n' > tools/fsmon.sh && chmod +x tools/fsmon.sh &&
		printf '[alias]\n\tst = !touch ${m}include\n' > team.gitconfig &&
		printf '[alias]\n\tsst = !touch ${m}sysinc\n' > sys.gitconfig" \
		>/dev/null 2>&1
	repos_person_git "$RW" GIT_CONFIG_SYSTEM="$sys"
	as_person env GIT_CONFIG_SYSTEM="$sys" git -C "$RW" st >/dev/null 2>&1
	as_person env GIT_CONFIG_SYSTEM="$sys" git -C "$RW" sst >/dev/null 2>&1
	repos_no_marker "$(tag) a relative core.hooksPath in ~/.gitconfig never runs the agent's hooks" globalhooks
	repos_no_marker "$(tag) a relative core.fsmonitor in ~/.config/git/config never runs the agent's" xdgfsmon
	repos_no_marker "$(tag) a file ~/.gitconfig includes from the folder stays the person's" include
	repos_no_marker "$(tag) a file the system config includes (includeIf) stays the person's" sysinc
	as_person rm -rf "$PHOME/.gitconfig" "$PHOME/.config/git"

	# (5) Guarded things keep their modes: a world-writable .git lets another local user
	# swap .git/config under the person.
	local before
	before=$(stat -c %a "$RW/.git" "$RW")
	# 775 first: a group-writable .git is the same hole where seccomp refuses 777.
	sbx --events "$OUT/ev.json" -- sh -c 'chmod 775 .git .; chmod 777 .git .' >/dev/null 2>&1
	check "$(tag) .git and the folder keep their modes (chmod 777 inside)" \
		test "$(stat -c %a "$RW/.git" "$RW")" = "$before"
	if [ "$P" = landlock ]; then
		like "$(grep '"event": \?"exit"' "$OUT/ev.json" 2>/dev/null)" \
			'"modes_restored": ?\[[^]]*\.git' \
			"$(tag) the exit event names the modes put back"
	fi
	rm -f "$OUT/ev.json"
	unset -f fsmon
	# What the account made may keep modes the person cannot remove (README): root clears.
	rm -rf "$ATK"
	attack_fresh
}
