#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Bad input and refused sessions. Exit 2 for bad usage (missing, relative folders, the home,
# /, a parent of the home, a symlink to the home, an unreadable policy, a policy with an
# unknown key or bad JSON, an unknown flag); 70 when the wall cannot give what is asked
# (memory limits on landlock). Each refusal: "owsbx: <what>: <where>" plus a
# hint on stderr, the command never ran, no session folder and no process left.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK H=$TU_HOME
hx=$(rand_hex 4)
RAN=$W/ran-$hx
as_user ln -s "$H" "$W/link-to-home"
as_user ln -s / "$W/link-to-root"
as_user mkdir "$W/unreadable-dir"
as_user /bin/sh -c "echo '{}' >'$W/noread.json'; chmod 000 '$W/noread.json'"
as_user /bin/sh -c "echo '{\"network\": \"none\", \"bogus_key\": 1}' >'$W/unknown.json'"
as_user /bin/sh -c "echo '{\"folders\": [{\"path\": \"$W\", \"access\": \"rw\", \"colour\": \"red\"}]}' >'$W/unknown-nested.json'"
as_user /bin/sh -c "echo '{\"network\": \"none\",' >'$W/broken.json'"
as_user /bin/sh -c "echo '{\"limits\": {\"memory_mb\": 100}}' >'$W/limits.json'"
as_user /bin/sh -c "echo '{\"folders\": [{\"path\": \"$H\", \"access\": \"ro\"}]}' >'$W/home.json'"
as_user /bin/sh -c "echo '{\"folders\": [{\"path\": \"relative/dir\", \"access\": \"rw\"}]}' >'$W/relative.json'"
as_user /bin/sh -c "echo '{\"network\": \"open\", \"folders\": [{\"path\": \"$W\", \"access\": \"rw\"}], \"env\": {\"OWSTEST_POL\": \"yes\"}}' >'$W/good.json'"

# refused CODE DESC ARGS...: owsbx run ARGS -- touch RAN must be refused with CODE, leave
# nothing behind and not run the command.
refused() {
	local code=$1 desc=$2
	shift 2
	as_user rm -f "$RAN"
	AS_USER_CWD=$W sbx run "$@" -- /usr/bin/touch "$RAN"
	is "$SBX_RC" "$code" "$desc: exit $code" || diag "$(sbx_diag)"
	like "$SBX_ERR" "^owsbx: [^:]+: " "$desc: 'owsbx: <what>: <where>' on stderr"
	like "$(wc -l <<<"$SBX_ERR")" "^[2-9]|^[1-9][0-9]" "$desc: a hint line follows"
	is "$SBX_OUT" "" "$desc: nothing on stdout"
	not_ok "$desc: the command did not run" test -e "$RAN"
	is "$(owstest_session_dirs)" "" "$desc: no session folder left"
	ok "$desc: no process left" poll 5 owstest_no_user_procs
}

# control: the same shape of command works
as_user rm -f "$RAN"
AS_USER_CWD=$W sbx run --rw "$W" -- /usr/bin/touch "$RAN"
is "$SBX_RC" 0 "control: a good session runs the command"
ok "control: and the command ran" test -e "$RAN"
AS_USER_CWD=$W sbx run --policy "$W/good.json" -- /bin/sh -c "touch '$RAN' && echo \$OWSTEST_POL"
is "$SBX_RC" 0 "control: a good policy runs the command"
is "$SBX_OUT" yes "control: the good policy's env is passed"

refused 2 "a missing folder" --rw "/nonexistent-$hx"
refused 2 "a missing ro folder" --ro "$W/missing-$hx"
refused 2 "a relative folder" --rw project
refused 2 "a relative ./ folder" --rw ./
refused 2 "the home itself (rw)" --rw "$H"
refused 2 "the home itself (ro)" --ro "$H"
refused 2 "the home with a trailing slash" --rw "$H/"
refused 2 "the home through .." --rw "$W/.."
refused 2 "a symlink to the home" --rw "$W/link-to-home"
refused 2 "/" --rw /
refused 2 "/ (ro)" --ro /
refused 2 "a symlink to /" --ro "$W/link-to-root"
refused 2 "/home, a parent of the home" --ro /home
refused 2 "a file, not a folder" --rw "$W/hello.txt"
refused 2 "a missing policy file" --policy "$W/missing-$hx.json"
refused 2 "an unreadable policy file" --policy "$W/noread.json"
refused 2 "a policy with an unknown key" --policy "$W/unknown.json"
refused 2 "a policy with an unknown nested key" --policy "$W/unknown-nested.json"
refused 2 "a policy that is not JSON" --policy "$W/broken.json"
refused 2 "a policy sharing the home" --policy "$W/home.json"
refused 2 "a policy with a relative folder" --policy "$W/relative.json"
refused 2 "an unknown flag" --owstest-bogus
refused 2 "an unknown network mode" --net sideways
refused 2 "an unknown provider" --provider owstest-nope
refused 2 "an allow-list site that is no host" --net allowlist --allow-site 'bad host!'
refused 70 "a policy asking for a memory limit" --policy "$W/limits.json"
refused 2 "a site given as a URL" --net allowlist --allow-site https://example.com/x
like "$SBX_ERR" "not a URL.*drop the scheme" "a URL for a site: the hint says to drop the scheme"
refused 2 "an unknown provider (its hint)" --provider owstest-nope
like "$SBX_ERR" "use one of: landlock, account, direct, openshell$" \
	"an unknown provider: the hint names this platform's providers only"

# Started outside every session folder, at a terminal, owsbx says where the command runs;
# into a pipe it says nothing (a script reads the command's own output).
out=$(AS_USER_CWD=/ as_user script -qec "$OWSBX run --rw $W -- /bin/pwd" /dev/null </dev/null 2>&1 | tr -d '\r')
like "$out" "owsbx: / is in no session folder: the command runs in $W" \
	"at a terminal, outside every session folder: stderr says where the command runs"
AS_USER_CWD=/ sbx run --rw "$W" -- /bin/pwd
is "$SBX_ERR" "" "into a pipe: nothing said"
is "$SBX_OUT" "$W" "and the command ran in the first read-write folder"

# A site under --net none opens nothing: the command runs, and stderr says so once.
AS_USER_CWD=$W sbx run --rw "$W" --net none --allow-site example.com -- /bin/true
is "$SBX_RC" 0 "--allow-site with --net none: the command runs"
like "$SBX_ERR" "^owsbx: --allow-site has no effect with --net none" "and stderr says the site opens nothing"
is "$(grep -c 'no effect' <<<"$SBX_ERR")" 1 "once"

# usage errors without a session at all
AS_USER_CWD=$W sbx run
is "$SBX_RC" 2 "run without a command: exit 2"
AS_USER_CWD=$W sbx run --rw "$W"
is "$SBX_RC" 2 "run with folders and no command: exit 2"
AS_USER_CWD=$W sbx owstest-no-such-subcommand
is "$SBX_RC" 2 "an unknown subcommand: exit 2"
like "$SBX_ERR" "^owsbx: " "an unknown subcommand says so on stderr"

owstest_check_clean
done_testing
