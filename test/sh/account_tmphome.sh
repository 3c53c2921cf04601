#!/bin/bash
# A person whose home is under /tmp (a live system, a CI runner): sessions open under
# both providers, the home stays hidden, and the folders in it are usable.
OWSTEST_HOME_BASE=$(mktemp -d /tmp/owstest-homes.XXXXXX)
chmod 0755 "$OWSTEST_HOME_BASE"
. "$(dirname "$0")/../account_lib.sh"
trap 'teardown; rm -rf "$OWSTEST_HOME_BASE"' EXIT

hidden() { ! grep -q 'SECRET_TOKEN\|^work$' <<<"$1"; }
for p in landlock account; do
	for net in none allowlist open; do
		out=$(owsbx run --provider "$p" --net "$net" --rw "$PHOME/work" -- \
			sh -c "echo ok > '$PHOME/work/f' && cat '$PHOME/work/f'; ls '$PHOME' 2>&1; cat '$PHOME/.bashrc' 2>&1" 2>&1)
		check "[$p/$net] a home under /tmp: the session opens and the folder is usable" \
			grep -q "^ok$" <<<"$out"
		check "[$p/$net] ... while the home stays unlistable and its files unreadable" \
			hidden "$out"
	done
done
done_testing
