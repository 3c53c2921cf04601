# What the person's allowed .envrc loads by name: direnv runs it on `cd`, outside the wall,
# with no new `direnv allow` (only the .envrc itself is hashed).  `dotenv_if_exists
# .env.local` (a PATH that puts the agent's git first) and `source_env_if_exists
# .envrc.private` (shell code) name files not on the guard's list: what an .envrc names
# stays the person's.  A control: the agent still writes a file the .envrc does not name.
ATTACKS="$ATTACKS envrc"

attack_envrc() {
	local m=$OUT/m-envrc- out
	if ! command -v direnv >/dev/null; then
		skip "$(tag) direnv: not installed (scripts/install-deps.sh installs it)"
		return 0
	fi
	partial files.git_guard "the guard of other tools' files in a read-write folder" && return 0
	as_person sh -c "cd '$RW' && printf 'dotenv_if_exists .env.local\nsource_env_if_exists \"cfg/.envrc.private\"\n' > .envrc &&
		direnv allow . >/dev/null 2>&1" || not_ok "$(tag) premise: an allowed .envrc"
	out=$(sbx -- sh -c "echo 'touch ${m}private' > .envrc.private; mkdir -p bin cfg &&
		echo 'touch ${m}private' > cfg/.envrc.private &&
		printf '#!/bin/sh\ntouch %s\n' ${m}dotenv > bin/git && chmod +x bin/git &&
		echo 'PATH=$RW/bin:/usr/bin:/bin' > .env.local && echo mine > .env.other && echo done" 2>&1)
	check "$(tag) control: the agent writes in the folder" test "$(printf '%s' "$out" | tail -1)" = "done"
	check "$(tag) control: ... a file the .envrc does not name stays" \
		test "$(cat "$RW/.env.other" 2>&1)" = mine
	as_person sh -c "direnv exec '$RW' git --version" >/dev/null 2>&1
	repos_no_marker "$(tag) a .env.local an allowed .envrc loads (dotenv_if_exists) stays the person's" envrc-dotenv
	repos_no_marker "$(tag) a file an allowed .envrc sources (source_env_if_exists) stays the person's" envrc-private
	as_person rm -rf "$PHOME/.local/share/direnv" "$RW/.envrc" "$RW"/.env* "$RW"/bin* "$RW"/cfg* "$OUT"/m-envrc-*
}
