#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# The private folders and their removal, in both places they can live: the sandbox's own
# tmpfs (the default: nothing on the machine's disk) and the machine's /tmp (a config with
# private_root = /tmp). Another local user who plants /tmp/owsandbox-<uid> first (a folder
# of theirs, or a symlink into the person's files; this machine has fs.protected_symlinks=0)
# gets nothing. Removing a session's folder, at close or as a stale folder after a SIGKILL,
# never follows a symlink the agent planted there into the person's files. One session
# opening or closing never removes another live session's folder. Another user cannot list,
# read or write a live session's folder. With /tmp itself a session folder (`--rw /tmp`), the
# private folder goes on a tmpfs of the sandbox's own under /run, and nothing is left in /tmp.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK H=$TU_HOME
P=/tmp/owsandbox-$TU_UID
NOBODY=$(id -u nobody)
CFG=$H/owsbx-disk.ini
printf '[sandbox]\nprivate_root = /tmp\n' >"$CFG"
chown "$TU_UID:$TU_GID" "$CFG"
snapshot_home() { (cd "$H" && find . -printf '%p %y %s\n' | grep -v '^\./project/' | sort); }
intact() {
	test -f "$H/.ssh/id_ed25519" && test -f "$H/.bashrc" && test -f "$H/secret.txt" &&
		test -f "$W/hello.txt" && test -f "$TU_RO/readme.txt"
}
as_nobody() { setpriv --reuid="$NOBODY" --regid="$(id -g nobody)" --clear-groups -- "$PY" -c "$PROBE" "$@"; }
# wait_file PATH: a session running in the background wrote PATH
wait_file() { poll 10 test -s "$1"; }

for MODE in tmpfs disk; do
	if [ "$MODE" = disk ]; then C=(--config "$CFG"); else C=(); fi
	M="[$MODE]"

	# 1) another user's folder at /tmp/owsandbox-<uid>; the session keeps a file in its HOME
	rm -rf "$P"
	mkdir -m 0777 "$P" && chown "$NOBODY" "$P"
	as_user rm -f "$W/go" "$W/home-path"
	as_user_bg "$OWSBX" run "${C[@]}" --rw "$W" -- /bin/sh -c '
		echo agent-data >"$HOME/agent-file"; echo "$HOME" >"$1/home-path.tmp"; mv "$1/home-path.tmp" "$1/home-path"
		i=0; while [ ! -e "$1/go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done' sh "$W" \
		</dev/null >/dev/null 2>"$TU_TMP/err1"
	pid=$AS_USER_PID
	if wait_file "$W/home-path"; then
		found=$(grep -rl agent-data "$P" 2>/dev/null)
		is "$found" "" "$M a /tmp/owsandbox-<uid> of another user's holds none of the session's files"
		as_user touch "$W/go"
		wait "$pid"
		is "$?" 0 "$M the session ran to its end"
	else
		wait "$pid"
		rc=$?
		is "$rc" 70 "$M a /tmp/owsandbox-<uid> of another user's refuses the session (70)"
		like "$(cat "$TU_TMP/err1")" "^owsbx: " "$M and says why: $(head -1 "$TU_TMP/err1")"
	fi
	is "$(find "$P" -mindepth 1 2>/dev/null | wc -l)" 0 "$M nothing was left in the other user's folder"
	rm -rf "$P"

	# 2) a symlink at /tmp/owsandbox-<uid>, planted by another user, into the person's work
	before=$(snapshot_home)
	lsw_before=$(ls -A "$W")
	ln -s "$W" "$P" && chown -h "$NOBODY" "$P"
	sbx run "${C[@]}" -- /bin/sh -c 'echo "$HOME"'
	is_one_of "$SBX_RC" "0 70" "$M a symlinked /tmp/owsandbox-<uid>: the session runs or is refused (rc $SBX_RC)"
	is "$(ls -A "$W")" "$lsw_before" "$M nothing was created in the folder the symlink points to"
	is "$(snapshot_home)" "$before" "$M nothing in the person's home changed"
	rm -f "$P"

	# 3) at close: symlinks planted in the private folder lead back to the person's files
	before=$(snapshot_home)
	sbx run "${C[@]}" --rw "$W" -- /bin/sh -c '
		ln -s "$1" "$HOME/to-home"; ln -s "$1/.ssh" "$HOME/to-ssh"; ln -s "$2" "$TMPDIR/to-work"
		ln -s "$2/hello.txt" "$HOME/to-hello"; mkdir -p "$XDG_CACHE_HOME/d"; ln -s "$1" "$XDG_CACHE_HOME/d/to-home"
		echo planted' sh "$H" "$W"
	is "$SBX_OUT" planted "$M the agent planted symlinks to the home and the work in its private folder"
	ok "$M the person's files survive the close" intact
	is "$(snapshot_home)" "$before" "$M nothing in the person's home changed"
	is "$(owstest_session_dirs)" "" "$M no session folder left after the close"

	# 4) the same in a session killed with SIGKILL: nothing of it stays on disk past the next open
	as_user rm -f "$W/home-path"
	as_user_bg "$OWSBX" run "${C[@]}" --rw "$W" -- /bin/sh -c '
		ln -s "$1" "$HOME/to-home"; ln -s "$2" "$TMPDIR/to-work"; ln -s "$1/.ssh/id_ed25519" "$HOME/to-key"
		echo "$HOME" >"$2/home-path.tmp"; mv "$2/home-path.tmp" "$2/home-path"; exec sleep 1000' sh "$H" "$W" \
		</dev/null >/dev/null 2>&1
	host=$AS_USER_PID
	if wait_file "$W/home-path" && poll 5 owstest_has_proc '^sleep 1000$'; then
		pass "$M control: the session that planted the symlinks is running"
	else
		fail "$M control: the session that planted the symlinks is running"
	fi
	stale=$(dirname "$(cat "$W/home-path" 2>/dev/null)")
	if [ "$MODE" = disk ]; then
		ok "$M control: the session's folder is on the machine's disk ($stale)" test -d "$stale"
	else
		not_ok "$M the session's folder is not on the machine's disk" test -e "$stale"
	fi
	kill -KILL "$host"
	wait "$host" 2>/dev/null
	ok "$M its processes end" poll 5 owstest_no_user_procs
	as_user rm -f "$W/home-path"
	before=$(snapshot_home)
	sbx run "${C[@]}" -- /bin/true
	is "$SBX_RC" 0 "$M the next session runs"
	not_ok "$M no stale folder remains after the next open" test -e "$stale"
	ok "$M the person's files survive the stale folder's removal" intact
	is "$(snapshot_home)" "$before" "$M nothing in the person's home changed"
	is "$(owstest_session_dirs)" "" "$M no session folder left"

	# 5) two live sessions: B's open and close leave A's folder alone; others get nothing
	as_user rm -f "$W/a-home" "$W/a-go" "$W/a-result"
	as_user_bg "$OWSBX" run "${C[@]}" --rw "$W" -- /bin/sh -c '
		echo a-secret >"$HOME/a-file"; echo "$HOME" >"$1/a-home.tmp"; mv "$1/a-home.tmp" "$1/a-home"
		i=0; while [ ! -e "$1/a-go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
		cat "$HOME/a-file" >"$1/a-result" 2>&1' sh "$W" </dev/null >/dev/null 2>&1
	apid=$AS_USER_PID
	if wait_file "$W/a-home"; then
		ahome=$(cat "$W/a-home")
		sdir=$(dirname "$ahome")
		mapfile -t R < <(as_nobody "listdir $P" "listdir $sdir" "read $ahome/a-file" "create $sdir/intruder" </dev/null 2>&1)
		if [ "$MODE" = disk ]; then
			ok "$M control: A's private file is on disk" test -f "$ahome/a-file"
			is "${R[0]}" EACCES "$M another user cannot list /tmp/owsandbox-<uid>"
			is "${R[1]}" EACCES "$M another user cannot list a session's folder"
			is "${R[2]}" EACCES "$M another user cannot read a session's private file"
			is "${R[3]}" EACCES "$M another user cannot write in a session's folder"
		else
			not_ok "$M A's private file is not on the machine's disk" test -e "$ahome/a-file"
			is_one_of "${R[2]}" "ENOENT EACCES" "$M another user cannot read a session's private file (${R[2]})"
		fi
		sbx run "${C[@]}" -- /bin/true
		is "$SBX_RC" 0 "$M session B runs while A is alive"
		[ "$MODE" = disk ] && ok "$M A's private file survives B's open and close" test -f "$ahome/a-file"
	else
		fail "$M session A started"
	fi
	as_user touch "$W/a-go"
	wait "$apid"
	is "$?" 0 "$M session A ends normally"
	is "$(cat "$W/a-result" 2>/dev/null)" a-secret "$M A still read its own file at its end"
	owstest_check_clean "the $MODE sessions"
done

# 6) /tmp itself a session folder (`--rw /tmp`): the private folder goes on a tmpfs of the
# sandbox's own, nothing is left in the machine's /tmp, and the next such session opens.
# (The person's ssh-agent socket is in /tmp, so inside a read-write folder: the proof refuses
# such a session, rightly; these run without it.)
rm -rf "$P"
for i in 1 2; do
	out=$(as_user env -u SSH_AUTH_SOCK "$OWSBX" run --rw /tmp -- /bin/sh -c 'echo "$HOME"; echo x >"$HOME/f" && cat "$HOME/f"' </dev/null 2>&1)
	rc=$?
	is "$rc" 0 "[--rw /tmp] session $i runs${out:+: $(tail -1 <<<"$out")}"
	like "$(head -1 <<<"$out")" "^/run/owsandbox-$TU_UID/" "[--rw /tmp] session $i's HOME is on a tmpfs of its own, not in the shared /tmp"
	not_ok "[--rw /tmp] session $i left no $P behind" test -e "$P"
done
rm -rf "$P"
as_user env -u SSH_AUTH_SOCK "$OWSBX" verify --rw /tmp </dev/null >/dev/null 2>&1
is "$?" 0 "[--rw /tmp] verify passes"
not_ok "[--rw /tmp] verify left no $P behind" test -e "$P"
rm -rf "$P"

done_testing
