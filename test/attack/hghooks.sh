# Mercurial's hooks by a path: the person's hgrc names a shell hook relative to the
# repository's root (`pre-status = tools/hgpre.sh`), which `hg status` runs, outside the
# wall, from the root.  In the folder's own repository, and in the repository above a
# folder inside it (`--rw ~/proj/sub`), whose hgrc lies outside.  The agent's script at
# that path never runs.  A control: a hook found in PATH (no `/`) guards nothing.
ATTACKS="$ATTACKS hghooks"

attack_hghooks() {
	local m=$OUT/m-hg- out
	if ! command -v hg >/dev/null; then
		skip "$(tag) Mercurial: hg is not installed (scripts/install-deps.sh installs it)"
		return 0
	fi
	partial files.git_guard "the guard of other tools' files in a read-write folder" && return 0
	as_person sh -c "cd '$RW' && hg init && mkdir -p sub &&
		printf '[hooks]\npre-status = tools/hgpre.sh\npre-status.sub = sub/hgsub.sh\npre-status.path = true\n' >> .hg/hgrc" ||
		not_ok "$(tag) premise: the person's hg repository with hooks"
	out=$(sbx -- sh -c "mkdir -p tools && printf '#!/bin/sh\ntouch %s\n' ${m}own > tools/hgpre.sh &&
		chmod +x tools/hgpre.sh && echo mine > true && echo done" 2>&1)
	check "$(tag) control: the agent writes in the folder" test "$(printf '%s' "$out" | tail -1)" = "done"
	check "$(tag) control: a hook's name found in PATH (true) stays the agent's to write" \
		test "$(cat "$RW/true" 2>&1)" = mine
	owsbx run --provider "$P" --net "$NET" --rw "$RW/sub" -- sh -c \
		"printf '#!/bin/sh\ntouch %s\n' ${m}above > hgsub.sh && chmod +x hgsub.sh" >/dev/null 2>&1
	as_person sh -c "cd '$RW' && hg status" >/dev/null 2>&1
	repos_no_marker "$(tag) a shell hook the repository's hgrc names by a relative path never runs the agent's" hg-own
	repos_no_marker "$(tag) ... nor the hgrc of the repository above a folder inside it" hg-above
	as_person rm -rf "$RW/.hg" "$RW/tools" "$RW"/tools.owsbx-moved-* "$RW/sub" "$RW/true" "$OUT"/m-hg-*
}
