# test/attack/lib.sh: what the fragments of test/sh/attacks.sh share.
#
# Set by the runner for each call of attack_NAME:
#   P      landlock | account
#   NET    none | allowlist | open
#   RW     a fresh read-write session folder in the person's home (a git repository)
#   RO     a fresh read-only session folder beside it, holding readme.txt
#   OUT    a folder of the person's outside every session folder
# Helpers:
#   sbx [OPTS] -- CMD...   `owsbx run --provider P --net NET --rw RW --ro RO OPTS -- CMD`
#                          as the person
#   probe OP...            the python PROBE (test/lib.sh) inside: one line per OP
#   tag                    "[P/NET]", to start every test name with
#   check / ok / not_ok / skip / diag   from account_lib.sh

PY=/usr/bin/python3
ATK=$PHOME/atk
# shellcheck disable=SC2034 # PROBE comes from test/lib.sh, sourced for its text only
PROBE_TEXT=$(. "$ROOT/test/lib.sh" >/dev/null; printf '%s' "$PROBE")

tag() { printf '[%s/%s]' "$P" "$NET"; }

attack_fresh() {
	as_person rm -rf "$ATK"
	as_person sh -c "umask 022; mkdir -p '$ATK/rw' '$ATK/ro' '$ATK/out' &&
		echo reference > '$ATK/ro/readme.txt' &&
		cd '$ATK/rw' && git init -q . && git config user.email t@example.com &&
		git config user.name t && echo hi > a.txt && git add a.txt &&
		git commit -qm init"
	RW=$ATK/rw RO=$ATK/ro OUT=$ATK/out
}

attack_cleanup() {
	local c
	as_person rm -rf "$ATK"
	for c in ${ATTACK_CLEANUPS:-}; do "$c"; done
}

sbx() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	owsbx run --provider "$P" --net "$NET" --rw "$RW" --ro "$RO" "${opts[@]}" -- "$@"
}

probe() { sbx -- /usr/bin/python3 -c "$PROBE_TEXT" "$@"; }

like() { if [[ $1 =~ $2 ]]; then ok "$3"; else not_ok "$3"; echo "got: $1" | diag; fi; }
unlike() { if [[ $1 =~ $2 ]]; then not_ok "$3"; echo "got: $1" | diag; else ok "$3"; fi; }
