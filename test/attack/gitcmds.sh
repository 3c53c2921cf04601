# The commands the person's git config names by a path relative to the work tree: a clean
# filter (`git status`), a diff textconv (`git diff`), the editor (`git commit`), an alias
# (`!tools/st.sh`), and the template folder `git init` copies hooks from.  git runs each from the top of the work tree, outside the wall, on a
# plain action; the agent, which may write .gitattributes, plants the scripts.  What
# those paths name in the folder is the person's: none of the agent's runs outside.  A
# control: a command git looks up in PATH (no `/`) guards nothing, and the agent's files
# elsewhere stay.
ATTACKS="$ATTACKS gitcmds"

attack_gitcmds() {
	local m=$OUT/m-gitcmd- out k
	as_person sh -c "cd '$RW' && git config filter.strip.clean tools/clean.sh &&
		git config diff.tc.textconv tools/textconv.sh && git config core.editor tools/editor.sh &&
		git config filter.plain.clean cat &&
		printf '[alias]\n\tst = !tools/st.sh\n' > '$PHOME/.gitconfig'"
	out=$(sbx -- sh -c "mkdir -p tools && for k in clean textconv editor st; do
		printf '#!/bin/sh\ntouch %s\ncat\n' ${m}\$k > tools/\$k.sh && chmod +x tools/\$k.sh; done &&
		printf '*.txt filter=strip diff=tc\n' > .gitattributes && echo changed >> a.txt &&
		echo mine > cat && echo done" 2>&1)
	check "$(tag) control: the agent writes .gitattributes and changes a file" \
		test "$(printf '%s' "$out" | tail -1)" = "done"
	check "$(tag) control: ... which stay" grep -q filter=strip "$RW/.gitattributes"
	check "$(tag) control: a name the config runs from PATH (clean = cat) stays the agent's to write" \
		test "$(cat "$RW/cat" 2>&1)" = mine
	as_person git -C "$RW" status --short >/dev/null 2>&1
	as_person git -C "$RW" diff >/dev/null 2>&1
	as_person git -C "$RW" -c user.name=t -c user.email=t@e commit -q --allow-empty \
		</dev/null >/dev/null 2>&1
	as_person git -C "$RW" st >/dev/null 2>&1
	for k in clean textconv editor; do
		repos_no_marker "$(tag) the repository config's core.editor, clean filter, textconv by a relative path: the agent's $k never runs" "gitcmd-$k"
	done
	repos_no_marker "$(tag) an alias (!tools/st.sh) in ~/.gitconfig never runs the agent's script" gitcmd-st
	as_person sh -c "cd '$RW' && git config --remove-section filter.strip; git config --remove-section filter.plain
		git config --remove-section diff.tc; git config --unset core.editor; rm -f '$PHOME/.gitconfig'"
	as_person rm -rf "$RW/tools" "$RW"/tools.owsbx-moved-* "$RW/.gitattributes" "$RW/cat" "$OUT"/m-gitcmd-*
	as_person git -C "$RW" checkout -q a.txt

	# The person's init.templateDir in the folder: `git init` and `git clone` copy its hooks
	# into every new repository, where the person's next commit runs them.
	as_person sh -c "printf '[init]\n\ttemplateDir = $RW/tmpl\n' > '$PHOME/.gitconfig'"
	sbx -- sh -c "mkdir -p tmpl/hooks && printf '#!/bin/sh\ntouch %s\n' ${m}tmpl \
		> tmpl/hooks/pre-commit && chmod +x tmpl/hooks/pre-commit" >/dev/null 2>&1
	as_person sh -c "git init -q '$OUT/new' && git -C '$OUT/new' -c user.name=t -c user.email=t@e \
		commit -q --allow-empty -m x" >/dev/null 2>&1
	repos_no_marker "$(tag) init.templateDir in ~/.gitconfig: git init copies no hook of the agent's" gitcmd-tmpl
	as_person rm -rf "$PHOME/.gitconfig" "$OUT/new" "$RW/tmpl" "$RW"/tmpl.owsbx-moved-* "$OUT"/m-gitcmd-*
}
