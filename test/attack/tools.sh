# The guard's list of other tools that run code on a plain action in a folder (guard.c's
# table): what the agent leaves for them from inside must not run when the person acts
# OUTSIDE after the session: `hg status` (Mercurial's .hg/hgrc hooks and extensions), a
# `cd` with direnv (what an allowed .envrc loads), pre-commit's and lefthook's configs.
ATTACKS="$ATTACKS tools"

attack_tools() {
	local m=$OUT/m- out
	partial files.git_guard "the guard of other tools' files in a read-write folder" && return 0

	# (1) Mercurial: the person's repository's hgrc, and a repository the agent makes.
	if command -v hg >/dev/null; then
		as_person sh -c "cd '$RW' && hg init && mkdir -p sub && echo x > sub/x" ||
			not_ok "$(tag) premise: the person's hg repository"
		out=$(sbx -- sh -c "printf '[hooks]\npre-status = touch ${m}hgrc\n' >> .hg/hgrc &&
			mkdir -p sub && cd sub && hg init && printf '[hooks]\npre-status = touch ${m}hgnew\n[extensions]\nevil = $RW/sub/evil.py\n' > .hg/hgrc &&
			printf 'open(\"${m}hgext\", \"w\")\n' > evil.py && echo planted" 2>&1)
		check "$(tag) control: hg init inside" test "$out" = planted
		as_person sh -c "cd '$RW' && hg status" >/dev/null 2>&1
		as_person sh -c "cd '$RW/sub' && hg status" >/dev/null 2>&1
		if [ -e "$OUT/m-hgrc" ]; then not_ok "$(tag) .hg/hgrc hooks written inside never run on hg status"
		else ok "$(tag) .hg/hgrc hooks written inside never run on hg status"; fi
		if [ -e "$OUT/m-hgnew" ] || [ -e "$OUT/m-hgext" ]; then
			not_ok "$(tag) an .hg the agent makes (hooks, extensions) never runs outside"
		else ok "$(tag) an .hg the agent makes (hooks, extensions) never runs outside"; fi
	else
		skip "$(tag) Mercurial: hg is not installed (scripts/install-deps.sh installs it)"
	fi

	# (2) direnv: the person allowed an .envrc that loads .envrc.local and .env; the agent
	# writes both (a command, and a PATH that puts its own git first).
	if command -v direnv >/dev/null; then
		as_person sh -c "cd '$RW' && printf 'source_env_if_exists .envrc.local\ndotenv_if_exists\n' > .envrc &&
			direnv allow . >/dev/null 2>&1" || not_ok "$(tag) premise: an allowed .envrc"
		sbx -- sh -c "echo 'touch ${m}envrclocal' > .envrc.local; mkdir -p bin &&
			printf '#!/bin/sh\ntouch ${m}dotenv\n' > bin/git && chmod +x bin/git &&
			echo 'PATH=$RW/bin:/usr/bin:/bin' > .env" >/dev/null 2>&1
		as_person sh -c "direnv exec '$RW' git --version" >/dev/null 2>&1
		if [ -e "$OUT/m-envrclocal" ]; then not_ok "$(tag) an .envrc.local an allowed .envrc loads stays the person's"
		else ok "$(tag) an .envrc.local an allowed .envrc loads stays the person's"; fi
		if [ -e "$OUT/m-dotenv" ]; then not_ok "$(tag) a .env (PATH) an allowed .envrc loads stays the person's"
		else ok "$(tag) a .env (PATH) an allowed .envrc loads stays the person's"; fi
		as_person rm -rf "$PHOME/.local/share/direnv"
	else
		skip "$(tag) direnv: not installed (scripts/install-deps.sh installs it)"
	fi

	# (3) Hook managers' configs: the person's stay as they are, new ones are moved aside.
	as_person sh -c "cd '$RW' && echo 'repos: []' > .pre-commit-config.yaml"
	sbx -- sh -c "echo 'repos: [{repo: local, hooks: [{id: x, entry: touch ${m}pc}]}]' \
		> .pre-commit-config.yaml; printf 'pre-commit:\n  commands:\n    x:\n      run: touch ${m}lh\n' \
		> lefthook.yml; mkdir -p .lefthook/pre-commit && echo 'touch ${m}lh' > .lefthook/pre-commit/x.sh" \
		>/dev/null 2>&1
	check "$(tag) the person's .pre-commit-config.yaml is unchanged" \
		test "$(cat "$RW/.pre-commit-config.yaml")" = 'repos: []'
	check "$(tag) a new lefthook.yml and .lefthook/ are moved aside" \
		sh -c "! [ -e '$RW/lefthook.yml' ] && ! [ -e '$RW/.lefthook' ] &&
			ls -d '$RW'/lefthook.yml.owsbx-moved-* >/dev/null"

	rm -rf "$ATK"
	attack_fresh
}
