# test/attack/lib.sh: what the fragments of test/sh/attacks.sh share.
#
# Set by the runner for each call of attack_NAME:
#   P      landlock | account
#   NET    none | allowlist | open
#   RW     a fresh read-write session folder in the person's home (a git repository)
#   RO     a fresh read-only session folder beside it, holding readme.txt
#   OUT    a folder of the person's outside every session folder
#   ATK_HOST_NS  1 when this provider's sandbox shares the host's namespaces (no user
#                namespace to be had: Landlock and seccomp alone), else empty
#   ATK_PARTIAL  promise -> why, for each promise this (P, NET) keeps only in part, as the
#                session's events list it (the report's reasons)
# Helpers:
#   sbx [OPTS] -- CMD...   `owsbx run --provider P --net NET --rw RW --ro RO OPTS -- CMD`
#                          as the person
#   probe OP...            the python PROBE (test/lib.sh) inside: one line per OP
#   tag                    "[P/NET]", to start every test name with
#   partial PROMISE WHAT   when this session keeps PROMISE only in part: a skip line for
#                          WHAT with the reason, and true (the attack on it is left out)
#   check / ok / not_ok / skip / diag   from account_lib.sh

PY=/usr/bin/python3
ATK=$PHOME/atk
# shellcheck disable=SC2034 # PROBE comes from test/lib.sh, sourced for its text only
PROBE_TEXT=$(. "$ROOT/test/lib.sh" >/dev/null; printf '%s' "$PROBE")

tag() { printf '[%s/%s%s]' "$P" "$NET" "${ATK_HOST_NS:+, host namespaces}"; }

declare -A ATK_PARTIAL=()
ATK_HOST_NS=
ATK_REFUSED=

# What this (P, NET) is here: refused (ATK_REFUSED, why), or run in the host's namespaces
# (ATK_HOST_NS), and the promises its events say it keeps only in part (ATK_PARTIAL).
attack_mode() {
	local ev=$OUT/.mode.ev out promise why
	ATK_PARTIAL=() ATK_HOST_NS='' ATK_REFUSED=''
	out=$(owsbx run --provider "$P" --net "$NET" --events "$ev" --rw "$RW" -- true 2>&1)
	if [ $? = 70 ]; then
		ATK_REFUSED=$(head -1 <<<"$out")
		ATK_REFUSED=${ATK_REFUSED#owsbx: }
		rm -f "$ev"
		return
	fi
	while IFS=$'\t' read -r promise why; do
		if [ "$promise" = HOST_NS ]; then ATK_HOST_NS=1; continue; fi
		[ -n "$promise" ] && ATK_PARTIAL[$promise]=$why
	done < <("$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "proof" and any(c["name"].startswith("processes a child of")
                                         for c in e.get("checks", [])):
        print("HOST_NS\t")
    if e.get("event") == "spawn":
        for p in e.get("partial", []):
            print("%s\t%s" % (p["promise"], p["why"]))' "$ev")
	rm -f "$ev"
}

partial() { # PROMISE WHAT
	[ -n "${ATK_PARTIAL[$1]:-}" ] || return 1
	skip "$(tag) $2: $1 is kept only in part here: ${ATK_PARTIAL[$1]}"
}

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
