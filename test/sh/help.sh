#!/bin/bash
# owsbx's help and man page. `owsbx --help` is an overview (each command on a line, examples),
# `owsbx help all` lists every command and option; `owsbx help CMD`
# and `owsbx CMD --help` print that command's usage and options (the same text) and exit 0;
# -V, --version and version print the header's version; an unknown option names itself and
# `owsbx help CMD`. cli/owsbx.1 renders without a warning (man -l, else groff), names every
# command and every option the help lists, and no long option the CLI does not accept.
# Every list here is taken from `owsbx help all`, not copied by hand.
. "$(dirname "$0")/../lib.sh"

OWSBX=$OWSTEST_ROOT/owsbx
MAN=$OWSTEST_ROOT/cli/owsbx.1
W=$(mktemp -d /tmp/owstest-help.XXXXXX)
trap 'rm -rf "$W"' EXIT

# The header's version, from its three macros.
hv() { sed -n "s/^#define OWS_VERSION_$1 \([0-9]*\)$/\1/p" "$OWSTEST_ROOT/include/owsandbox.h"; }
VERSION=$(hv MAJOR).$(hv MINOR).$(hv PATCH)
like "$VERSION" '^[0-9]+\.[0-9]+\.[0-9]+$' "the header says its version ($VERSION)"

# ---------------------------------------------------------------- the overview
timeout 10 "$OWSBX" --help >"$W/overview" 2>"$W/help.err"
is "$?" 0 "owsbx --help exits 0"
is "$(cat "$W/help.err")" "" "and prints nothing on stderr"
for ask in help -h; do
	timeout 10 "$OWSBX" "$ask" >"$W/help2" 2>&1
	ok "owsbx $ask prints the same" cmp -s "$W/overview" "$W/help2"
done
n=$(wc -l <"$W/overview")
ok "the overview fits a screen ($n lines)" test "$n" -le 40
like "$(cat "$W/overview")" "Examples:" "the overview has examples"

# ---------------------------------------------------------------- the whole help
timeout 10 "$OWSBX" help all >"$W/help" 2>"$W/help.err"
is "$?" 0 "owsbx help all exits 0"
is "$(cat "$W/help.err")" "" "and prints nothing on stderr"

# Commands: the lines "owsbx NAME USAGE"; the name is the words before the first that is
# upper-case or bracketed.
mapfile -t CMDS < <(sed -n 's/^owsbx //p' "$W/help" | awk '{
	n = ""; for (i = 1; i <= NF; i++) { if ($i ~ /^[[A-Z]/) break; n = n (n ? " " : "") $i }
	print n }')
like "${CMDS[*]}" "^run verify .*machine sandbox setup.* proxy connect apparmor-profile completion runner help version$" \
	"the help lists the commands (${CMDS[*]})"
for c in $(printf '%s\n' "${CMDS[@]}" | cut -d' ' -f1 | sort -u); do
	like "$(cat "$W/overview")" "
  $c " "the overview names $c"
done
# Options: indented lines that start with one; "-y, --yes" counts both.
opts_of() { grep -oE '^    (-[a-zA-Z], )?--[a-z][a-z-]*' | tr -d ' ' | tr ',' '\n' | sort -u; }
ALL_OPTS=$(opts_of <"$W/help")
n=$(wc -l <<<"$ALL_OPTS")
ok "the help lists options ($n)" test "$n" -ge 20
# every option line has its meaning beside it
bare=$(grep -E '^    (-[a-zA-Z], )?--[a-z][a-z-]*( [A-Z:=]+)? *$' "$W/help")
is "$bare" "" "every option in the help has its meaning on its line"
like "$(cat "$W/help")" "Exit status:.*70.*71" "the help says the exit statuses"
like "$(cat "$W/help")" "Environment: OWSBX_CONFIG" "and the environment"

# ---------------------------------------------------------- each command's help
for c in "${CMDS[@]}"; do
	# shellcheck disable=SC2086 # the command's words, split on purpose
	timeout 10 "$OWSBX" help $c >"$W/one" 2>&1 </dev/null
	rc=$?
	is "$rc" 0 "owsbx help $c exits 0"
	is "$(head -1 "$W/one" | awk -v n="$(wc -w <<<"$c")" '{ s = $2; for (i = 3; i <= n + 2; i++) s = s " " $i; print s }')" \
		"owsbx $c" "owsbx help $c starts with its usage"
	# shellcheck disable=SC2086
	timeout 10 "$OWSBX" $c --help >"$W/one2" 2>&1 </dev/null
	is "$?" 0 "owsbx $c --help exits 0"
	ok "owsbx $c --help prints what owsbx help $c does" cmp -s "$W/one" "$W/one2"
	# the command's options, as the whole help lists them under it
	want=$(awk -v c="owsbx $c" 'index($0, c " ") == 1 || $0 == c { on = 1; next } /^owsbx / || /^In place/ { on = 0 } on' "$W/help" | opts_of)
	got=$(grep -vE '^    -h, --help' "$W/one" | opts_of)
	is "$got" "$want" "owsbx help $c lists its options ($(echo $want))"
	grep -q -- '--help' "$W/one"
	is "$?" 0 "owsbx help $c mentions --help"
done
timeout 10 "$OWSBX" help machine >"$W/machine" 2>&1
is "$(grep -c '^owsbx machine sandbox\|^usage: owsbx machine sandbox' "$W/machine")" 4 \
	"owsbx help machine shows its four verbs"

# ------------------------------------------------------------------- version
for ask in -V --version version; do
	is "$(timeout 10 "$OWSBX" "$ask" 2>&1)" "owsbx $VERSION" "owsbx $ask prints the header's version"
done

# ------------------------------------------------------------ unknown options
for c in "${CMDS[@]}"; do
	[ "$c" = help ] && continue
	args=()
	[ "$c" = run ] && args=(-- /bin/true)
	# shellcheck disable=SC2086
	timeout 10 "$OWSBX" $c --owstest-bogus "${args[@]}" >"$W/out" 2>"$W/err" </dev/null
	rc=$?
	is "$rc" 2 "owsbx $c --owstest-bogus: exit 2"
	like "$(cat "$W/err")" "unknown option: --owstest-bogus" "it names the option"
	like "$(cat "$W/err")" "owsbx help $c" "and says owsbx help $c"
done
timeout 10 "$OWSBX" help owstest-nope >"$W/out" 2>"$W/err"
is "$?" 2 "owsbx help of no command: exit 2"
like "$(cat "$W/err")" "no such command: owstest-nope" "and says so"

# ------------------------------------------------------------------ the man page
ok "cli/owsbx.1 is there" test -s "$MAN"
# render CMD FILE: the page as text, its warnings in $W/warn
if command -v man >/dev/null && man --version >/dev/null 2>&1; then
	render() { LC_ALL=C MANWIDTH=100 man --warnings -l "$1" 2>"$W/warn" | col -b; }
	how="man -l"
elif command -v groff >/dev/null; then
	render() { LC_ALL=C groff -man -ww -Tascii -P-c -P-b -P-u "$1" 2>"$W/warn"; }
	how="groff"
else
	render() { return 1; }
	how=""
fi
if [ -z "$how" ]; then
	skip "neither man nor groff here (make test-deps installs man-db)" 10
else
	render "$MAN" >"$W/man.txt"
	is "$(cat "$W/warn")" "" "$how renders owsbx.1 without warnings"
	# control: the same renderer warns about a page with a broken macro
	sed 's/^\.SH DESCRIPTION$/.SH DESCRIPTION\n.owstestbogus/' "$MAN" >"$W/broken.1"
	render "$W/broken.1" >/dev/null
	isnt "$(cat "$W/warn")" "" "control: $how warns about an unknown macro"
	ok "the page has its sections" grep -qE '^NAME' "$W/man.txt"
	for s in SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES; do
		grep -q "^$s" "$W/man.txt" || fail "the page has $s"
	done
	pass "the page has SYNOPSIS, DESCRIPTION, COMMANDS, OPTIONS, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES"
	like "$(head -1 "$W/man.txt")$(tail -1 "$W/man.txt")" "owsandbox $VERSION" "its version is the header's"
	missing=""
	for c in "${CMDS[@]}"; do
		grep -qE "^ +owsbx $c( |$)" "$W/man.txt" || missing="$missing '$c'"
	done
	is "$missing" "" "every command of the help has its section in the page"
	missing=""
	for o in $ALL_OPTS; do
		grep -qE -- "(^|[^-a-z])$o([^-a-z]|$)" "$W/man.txt" || missing="$missing $o"
	done
	is "$missing" "" "every option of the help is in the page"
	extra=$(grep -oE -- '(^|[^-a-z])--[a-z][a-z-]*' "$W/man.txt" | sed 's/^[^-]*//' | sort -u |
		comm -23 - <(echo "$ALL_OPTS"))
	is "$extra" "" "and the page names no long option the CLI does not accept"
	# control: both checks see a change
	sed 's/^\.BI \\-\\-rw " dir"$/.BI \\-\\-owstest-rw " dir"/' "$MAN" >"$W/renamed.1"
	render "$W/renamed.1" >"$W/renamed.txt"
	ok "control: a renamed option shows up as one the CLI does not accept" \
		grep -q -- '--owstest-rw' "$W/renamed.txt"
	for s in "EXIT STATUS" FILES; do
		ok "the page's $s names the statuses and paths" grep -q "^$s" "$W/man.txt"
	done
	for code in 2 70 71; do
		grep -qE "^ +$code( |$)" "$W/man.txt" || fail "EXIT STATUS explains $code"
	done
	pass "EXIT STATUS explains 2, 70 and 71"
	ok "FILES names the config" grep -q '/etc/owsandbox/config.ini' "$W/man.txt"
fi
done_testing
