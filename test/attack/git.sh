# The guard: what other tools run later must not be the agent's to write.
# Each attack leaves, from inside, code for the person's own git (a hook, core.hooksPath,
# core.fsmonitor, a redirected git folder) or for the person's shell and editor; then the
# person's own git runs OUTSIDE, as the person, and must not run it (no marker in $OUT).
# Controls: git status, add and commit inside work, and the person's git outside too.
ATTACKS="$ATTACKS git"

# A fresh repository in $RW, made by the person outside; `$1` runs in it afterwards.
# Root empties the folder first: under `account` a copy the agent made with its modes
# may not be the person's to remove (README, known limits).
git_fresh() {
	find "$RW" -mindepth 1 -delete
	rm -f "$OUT"/m-*
	as_person sh -c "cd '$RW' && umask 022 &&
		git init -q . && git config user.email t@example.com && git config user.name t &&
		echo hi > a.txt && git add a.txt && git commit -qm init && ${1:-true}" ||
		not_ok "$(tag) premise: a fresh repository for the next attack"
}

# The person's git outside: status, then a commit (hooks run), then a status again.
git_outside() {
	as_person git -C "$RW" status --short >/dev/null 2>&1
	as_person git -C "$RW" commit -q --allow-empty -m outside >/dev/null 2>&1
	as_person git -C "$RW" status --short >/dev/null 2>&1
}

# Checks that the attack's marker did not appear when the person's git ran outside.
git_no_marker() { # name marker
	git_outside
	if [ -e "$OUT/m-$2" ]; then not_ok "$1"; else ok "$1"; fi
}

attack_git() {
	local out m
	m="$OUT/m-"
	hook() { printf '#!/bin/sh\ntouch %s%s\n' "$m" "$1"; }

	git_fresh
	out=$(sbx -- sh -c 'echo more >> a.txt && git status --short && git add a.txt &&
		git commit -qm inside && git log --oneline | wc -l' 2>&1)
	check "$(tag) control: git status, add and commit inside a guarded repository" \
		test "$(printf '%s' "$out" | tail -1)" = 2
	check "$(tag) control: the person's git outside sees the commit" \
		test "$(as_person git -C "$RW" log --oneline | wc -l)" = 2
	partial files.git_guard "the guard of what git and shells run later, outside" && return 0

	# (1) A hook in the existing hooks folder; the config edited, appended and set.
	sbx -- sh -c "printf '%s' '$(hook hook)' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
		printf '[core]\n\tfsmonitor = \"touch ${m}fsmon; false\"\n' >> .git/config
		git config core.hooksPath /tmp; sed -i 's/^/#/' .git/config" >/dev/null 2>&1
	git_no_marker "$(tag) a hook, core.fsmonitor and core.hooksPath written inside never run outside" hook
	git_no_marker "$(tag) core.fsmonitor appended to .git/config never runs outside" fsmon
	check "$(tag) .git/config is as the person left it" \
		test "$(as_person git -C "$RW" config user.name)" = t

	# (2) .git renamed away and a new one made, with a hook and an fsmonitor of the agent's.
	git_fresh
	sbx -- sh -c "mv .git .git-old && cp -a .git-old .git &&
		printf '%s' '$(hook rename)' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit &&
		printf '[core]\n\tfsmonitor = \"touch ${m}rename; false\"\n' >> .git/config" >/dev/null 2>&1
	git_no_marker "$(tag) .git cannot be renamed away and replaced" rename
	check "$(tag) control: the person's repository is still the one at .git" \
		test "$(as_person git -C "$RW" log --oneline | wc -l)" -ge 1

	# (3) commondir: git takes config and hooks from the folder it names.
	git_fresh
	out=$(sbx --events "$OUT/ev.json" -- sh -c "cp -a .git evil &&
		printf '[core]\n\tfsmonitor = \"touch ${m}common; false\"\n' >> evil/config &&
		printf '%s' '$(hook common)' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit &&
		echo '$RW/evil' > .git/commondir && echo planted" 2>&1)
	if [ "$out" = planted ]; then
		git_no_marker "$(tag) a .git/commondir written inside is moved aside before git runs outside" common
		like "$(grep '"event": \?"exit"' "$OUT/ev.json" 2>/dev/null)" \
			'"moved_aside": ?\[[^]]*commondir' \
			"$(tag) the command's exit event names what was moved aside"
		check "$(tag) and keeps it beside, for the person to look at" \
			sh -c "ls -d '$RW'/.git/commondir.owsbx-moved-* >/dev/null"
	else
		git_no_marker "$(tag) a .git/commondir cannot be planted" common
	fi
	rm -f "$OUT/ev.json"

	# (4) A repository without a hooks folder: the agent makes .git/hooks/pre-commit.
	git_fresh "rm -rf .git/hooks"
	sbx -- sh -c "mkdir -p .git/hooks; printf '%s' '$(hook nohooks)' > .git/hooks/pre-commit;
		chmod +x .git/hooks/pre-commit" >/dev/null 2>&1
	git_no_marker "$(tag) hooks planted in a repository that had no hooks folder never run" nohooks

	# (5) A .git file (gitdir: redirect) rewritten to a git folder of the agent's.
	git_fresh "mv .git .repo && echo 'gitdir: .repo' > .git"
	sbx -- sh -c "cp -a .repo evil && printf '[core]\n\tfsmonitor = \"touch ${m}gitfile; false\"\n' \
		>> evil/config && echo 'gitdir: evil' > .git" >/dev/null 2>&1
	git_no_marker "$(tag) a gitdir: file cannot be pointed at the agent's git folder" gitfile
	git_fresh "mv .git .repo && echo 'gitdir: .repo' > .git"
	sbx -- sh -c "printf '%s' '$(hook gitdirhook)' > .repo/hooks/pre-commit
		chmod +x .repo/hooks/pre-commit" >/dev/null 2>&1
	git_no_marker "$(tag) nor can hooks be planted in the folder it names" gitdirhook

	# (6) core.hooksPath set by the person to a folder in the project (husky's way).
	git_fresh "mkdir -p tools/hooks && printf '#!/bin/sh\ntrue\n' > tools/hooks/pre-commit &&
		chmod +x tools/hooks/pre-commit && git config core.hooksPath tools/hooks"
	out=$(sbx -- sh -c 'echo x >> a.txt && git commit -qam inside && echo committed' 2>&1)
	check "$(tag) control: commit inside runs the person's hooks there" test "$out" = committed
	sbx -- sh -c "echo 'touch ${m}hookspath' >> tools/hooks/pre-commit" >/dev/null 2>&1
	git_no_marker "$(tag) the person's core.hooksPath folder in the project is read-only inside" hookspath

	# (7) Where the person's config sends git: an included file and a hooks folder not made yet.
	git_fresh "echo '[user]' > project.gitconfig && git config include.path ../project.gitconfig &&
		git config core.hooksPath .githooks"
	sbx -- sh -c "printf '[core]\n\tfsmonitor = \"touch ${m}include; false\"\n' >> project.gitconfig
		mkdir -p .githooks && printf '%s' '$(hook newhooks)' > .githooks/pre-commit
		chmod +x .githooks/pre-commit" >/dev/null 2>&1
	git_no_marker "$(tag) a file the person's config includes is read-only inside" include
	git_no_marker "$(tag) a core.hooksPath folder made inside is moved aside" newhooks

	# (8) Submodules: the submodule's .git file, its git folder, and .git/modules renamed away.
	as_person sh -c "rm -rf '$OUT/subrepo' && git init -q '$OUT/subrepo' &&
		cd '$OUT/subrepo' && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m s"
	local set="core.fsmonitor 'touch ${m}sub; false'" what attack
	for what in "its .git file" "its config" "its git folder renamed away"; do
		git_fresh "git -c protocol.file.allow=always submodule -q add '$OUT/subrepo' sub \
			>/dev/null 2>&1 && git commit -qm sub"
		if ! [ -f "$RW/sub/.git" ]; then
			not_ok "$(tag) premise: the person adds a submodule outside"
			continue
		fi
		case $what in
		*file) attack="cp -a .git/modules/sub evil && git config --file evil/config \
			core.worktree ../sub && git config --file evil/config $set &&
			echo 'gitdir: ../evil' > sub/.git" ;;
		*config) attack="git config --file .git/modules/sub/config $set" ;;
		*) attack="mv .git/modules .git/modules-old && cp -a .git/modules-old .git/modules &&
			git config --file .git/modules/sub/config $set" ;;
		esac
		sbx -- sh -c "$attack" >/dev/null 2>&1
		as_person git -C "$RW/sub" status --short >/dev/null 2>&1
		git_no_marker "$(tag) a submodule stays the person's: $what" sub
	done

	# (9) A session folder below the person's work tree: a .git made in it would shadow the
	# person's repository there.
	git_fresh "mkdir sub && echo s > sub/s.txt"
	as_person "$BIN/owsbx" run --provider "$P" --net "$NET" --rw "$RW/sub" -- sh -c "
		git init -q . && git config core.fsmonitor 'touch ${m}shadow; false'" >/dev/null 2>&1
	as_person git -C "$RW/sub" status --short >/dev/null 2>&1
	check "$(tag) a .git made in a folder below the person's work tree is moved aside" \
		sh -c "! [ -e '$m'shadow ] && ! [ -e '$RW/sub/.git' ]"

	# (10) Files other tools run: existing ones stay as they are, new ones are moved aside.
	git_fresh "echo 'echo rc' > .bashrc && echo 'export A=1' > .envrc &&
		mkdir .vscode && echo '{}' > .vscode/settings.json && git add -A && git commit -qm tools"
	sbx -- sh -c "echo 'touch ${m}rc' >> .bashrc; echo 'touch ${m}envrc' >> .envrc
		echo '{\"x\": 1}' > .vscode/settings.json; rm -f .envrc .bashrc; mv .vscode .vscode-old
		printf '[submodule \"x\"]\n\tpath = x\n\turl = /tmp/x\n' > .gitmodules
		mkdir -p .idea && echo evil > .idea/workspace.xml; echo evil > .mcp.json" >/dev/null 2>&1
	check "$(tag) .bashrc, .envrc and .vscode/settings.json in the folder are unchanged" \
		test "$(as_person cat "$RW/.bashrc" "$RW/.envrc" "$RW/.vscode/settings.json" 2>&1)" \
		= "$(printf 'echo rc\nexport A=1\n{}')"
	check "$(tag) a new .gitmodules, .idea and .mcp.json are moved aside at close" \
		sh -c "! [ -e '$RW/.gitmodules' ] && ! [ -e '$RW/.idea' ] && ! [ -e '$RW/.mcp.json' ] &&
			ls -d '$RW'/.gitmodules.owsbx-moved-* >/dev/null"
	out=$(sbx -- sh -c 'echo notes > NOTES.md && mkdir -p lib && echo x > lib/y && cat NOTES.md' 2>&1)
	check "$(tag) control: other files in the folder are written as before" test "$out" = notes
	check "$(tag) control: and stay" test -e "$RW/NOTES.md" -a -e "$RW/lib/y"
	unset -f hook
	# The next fragment gets the folders as attack_fresh made them.
	as_person rm -rf "$OUT/subrepo"
	git_fresh
}
