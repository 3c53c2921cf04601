#!/bin/bash
# A configured private_root ([sandbox] private_root) that does not exist yet is made, like
# mkdir -p, with 0755 for the folders made whatever the person's umask. A private_root
# through a link, or under a folder anyone may write in without the sticky bit (where
# another user could put a folder of theirs in its place), is refused and nothing is made.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

B=$(mktemp -d /tmp/owstest-pr.XXXXXX)
owstest_remove_at_exit "$B"
chmod 0755 "$B"
chown "$TU_UID:$TU_GID" "$B"
# cfg NAME ROOT: a config file with private_root = ROOT, in the person's home
cfg() {
	printf '[sandbox]\nprivate_root = %s\n' "$2" >"$TU_HOME/$1.ini"
	chown "$TU_UID:$TU_GID" "$TU_HOME/$1.ini"
	echo "$TU_HOME/$1.ini"
}
# run_umask MASK ARGS...: sbx with the person's umask set to MASK
run_umask() {
	local m=$1
	shift
	(umask "$m" && sbx "$@"
	 printf '%s\n' "$SBX_RC" >"$TU_TMP/rc")
	SBX_RC=$(cat "$TU_TMP/rc") SBX_OUT=$(cat "$TU_TMP/sbx.out") SBX_ERR=$(cat "$TU_TMP/sbx.err")
}

# 1) a missing private_root, three folders deep, under a strict umask
run_umask 077 run --config "$(cfg deep "$B/a/b/c")" -- /bin/sh -c 'echo "$HOME"'
is "$SBX_RC" 0 "a private_root that does not exist is made and the session runs" || diag "$(sbx_diag)"
like "$SBX_OUT" "^$B/a/b/c/owsandbox-$TU_UID/[0-9a-f]+/home$" "the private folder is under it ($SBX_OUT)"
is "$(stat -c '%a %U' "$B/a" "$B/a/b" "$B/a/b/c" | sort -u)" "755 $TU" \
	"the folders made are 0755 and the person's, whatever the umask"
is "$(find "$B/a" -mindepth 4 2>/dev/null | wc -l)" 0 "the session's folder is gone after the close"
run_umask 077 run --config "$TU_HOME/deep.ini" -- /bin/true
is "$SBX_RC" 0 "control: the next session with the same private_root runs"

# 2) a link on the way to it
mkdir "$B/real"
chown "$TU_UID:$TU_GID" "$B/real"
ln -s "$B/real" "$B/link"
sbx run --config "$(cfg link "$B/link/x")" -- /bin/true
isnt "$SBX_RC" 0 "a private_root through a link is refused"
like "$SBX_ERR" "^owsbx: .*link" "and says why: $(head -1 <<<"$SBX_ERR")"
is "$(ls -A "$B/real")" "" "nothing was made where the link points"
sbx run --config "$(cfg real "$B/real/x")" -- /bin/true
is "$SBX_RC" 0 "control: the same folder without the link works"

# 3) under a folder anyone may write in: refused without the sticky bit, taken with it
mkdir -m 0777 "$B/open"
mkdir -m 1777 "$B/sticky"
chmod 0777 "$B/open"
chmod 1777 "$B/sticky"
sbx run --config "$(cfg open "$B/open/x")" -- /bin/true
isnt "$SBX_RC" 0 "a private_root under a folder anyone may write in is refused"
like "$SBX_ERR" "^owsbx: .*writable by everyone" "and says why: $(head -1 <<<"$SBX_ERR")"
is "$(ls -A "$B/open")" "" "nothing was made in it"
sbx run --config "$(cfg open2 "$B/open")" -- /bin/true
isnt "$SBX_RC" 0 "nor is such a folder itself a private_root"
sbx run --config "$(cfg sticky "$B/sticky/x")" -- /bin/true
is "$SBX_RC" 0 "control: under a sticky folder anyone may write in (like /tmp), it works"

owstest_check_clean "the private_root sessions"
done_testing
