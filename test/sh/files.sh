#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Files: only the session's folders. The home is neither listable nor readable (dotfiles,
# the ssh key, a planted secret), not through symlinks, hard links or an inherited
# descriptor either; rw folders take writes at their own paths, ro folders refuse them;
# the system is read-only; /tmp is private; the private folder (HOME, TMPDIR) is the
# session's own and is removed at exit. Every refusal has a control showing the same
# operation works on an allowed target (or outside the sandbox).
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

H=$TU_HOME W=$TU_WORK RO=$TU_RO
hx=$(rand_hex 4)
DENY="EACCES ENOENT"          # absent, or present but refused
DENYW="EACCES EROFS ENOENT EPERM" # a write refused (Landlock says EACCES, a ro mount EROFS)

# planted by the person, outside, before the session: links from the shared folder into the home
as_user ln -s "$H/.ssh/id_ed25519" "$W/link-key"
as_user ln -s "$H/.bashrc" "$W/link-bashrc"
as_user ln -s "$H" "$W/link-home"
# a folder the person owns outside the home and outside the session
OPT=/opt/owstest-$hx
mkdir -m 0755 "$OPT" && chown "$TU_UID:$TU_GID" "$OPT"
owstest_remove_at_exit "$OPT"
VIS=/tmp/owstest-vis-$hx
as_user touch "$VIS"
owstest_remove_at_exit "$VIS" "/var/tmp/owstest-$hx" "/dev/shm/owstest-$hx" "/tmp/owstest-in-$hx"

# controls, outside the sandbox, as the person
probe_out "listdir $H" "read $H/.bashrc" "read $W/link-key" "create $OPT/control" \
	"stat $VIS" "create /var/tmp/owstest-ctl-$hx" "read /etc/shadow"
like "${R[0]}" "secret.txt" "control: outside, the person lists the home"
like "${R[1]}" "$TU_MARKER" "control: outside, ~/.bashrc is readable"
like "${R[2]}" "PRIVATE KEY" "control: outside, the planted symlink leads to the key"
is "${R[3]}" OK "control: outside, the person writes in $OPT"
is "${R[4]}" OK "control: outside, $VIS exists"
is "${R[5]}" OK "control: outside, the person writes in /var/tmp"
is "${R[6]}" EACCES "control: /etc/shadow is not the person's to read anyway"
rm -f "$OPT/control" "/var/tmp/owstest-ctl-$hx"

AS_USER_CWD=$W probe --rw "$W" --ro "$RO" -- \
	"listdir $H" "read $H/.bashrc" "read $H/.ssh/id_ed25519" "read $H/secret.txt" \
	"listdir $H/.ssh" "stat $H/.ssh/id_ed25519" "stat $H/secret.txt" \
	"read $W/hello.txt" "create $W/new-$hx" "read $RO/readme.txt" \
	"create $RO/new-$hx" "unlink $RO/readme.txt" "rename $RO/readme.txt $W/moved-$hx" \
	"read $W/link-key" "read $W/link-bashrc" "listdir $W/link-home" \
	"link $H/secret.txt $W/hard-$hx" "symlink $H/secret.txt $W/sym-$hx" "read $W/sym-$hx" \
	"create $OPT/inside" "create /var/tmp/owstest-$hx" "create /dev/shm/owstest-$hx" \
	"stat $VIS" "create /tmp/owstest-in-$hx" "read /etc/os-release" \
	"read /etc/shadow" "listdir /root" "append $W/hello.txt" "mkdir $W/dir-$hx" \
	"chmod $RO/readme.txt 666" "create /usr/owstest-$hx" "create /etc/owstest-$hx" \
	"write $RO/readme.txt" "utime $RO/readme.txt" "link $RO/readme.txt $W/hl-ro-$hx" "utime $W/hello.txt"
[ "${#R[@]}" -ge 36 ] || fail "the probe ran inside the sandbox" "$(sbx_diag)"
is "$SBX_RC" 0 "the probe session exits 0"
is_one_of "${R[0]}" "$DENY" "home not listable inside (${R[0]})"
is_one_of "${R[1]}" "$DENY" "~/.bashrc not readable inside (${R[1]})"
is_one_of "${R[2]}" "$DENY" "~/.ssh/id_ed25519 not readable inside (${R[2]})"
is_one_of "${R[3]}" "$DENY" "~/secret.txt not readable inside (${R[3]})"
is_one_of "${R[4]}" "$DENY" "~/.ssh not listable inside (${R[4]})"
is_one_of "${R[5]}" "$DENY" "~/.ssh/id_ed25519 cannot even be stat()ed inside (${R[5]})"
is_one_of "${R[6]}" "$DENY" "~/secret.txt cannot even be stat()ed inside (${R[6]})"
is "${R[7]}" "OK:project file" "control: a file of the rw folder is readable at its own path"
is "${R[8]}" OK "control: the rw folder takes a new file"
is "$(stat -c %u "$W/new-$hx" 2>&1)" "$TU_UID" "the new file is outside too, owned by the person"
is "${R[9]}" "OK:project-ro readme" "control: the ro folder is readable at its own path"
is_one_of "${R[10]}" "$DENYW" "the ro folder refuses a new file (${R[10]})"
not_ok "and no file appeared outside" test -e "$RO/new-$hx"
is_one_of "${R[11]}" "$DENYW" "the ro folder refuses unlink (${R[11]})"
ok "and the file is still there" test -f "$RO/readme.txt"
is_one_of "${R[12]}" "$DENYW EXDEV" "a file cannot be moved out of the ro folder (${R[12]})"
is_one_of "${R[13]}" "$DENY" "a symlink planted in the rw folder does not lead to the key (${R[13]})"
is_one_of "${R[14]}" "$DENY" "a symlink planted in the rw folder does not lead to ~/.bashrc (${R[14]})"
is_one_of "${R[15]}" "$DENY" "a symlink to the home does not list it (${R[15]})"
is_one_of "${R[16]}" "$DENY EXDEV EPERM" "no hard link to ~/secret.txt from inside (${R[16]})"
not_ok "and no hard link exists outside" test -e "$W/hard-$hx"
is "${R[17]}" OK "control: a symlink can be made in the rw folder"
is_one_of "${R[18]}" "$DENY" "a symlink made inside does not lead to ~/secret.txt (${R[18]})"
is_one_of "${R[19]}" "$DENYW" "a folder the person owns elsewhere (/opt) is not writable (${R[19]})"
not_ok "and nothing landed in $OPT" test -e "$OPT/inside"
if [ "${R[20]}" = OK ]; then
	not_ok "/var/tmp inside is not the machine's /var/tmp" test -e "/var/tmp/owstest-$hx"
else
	is_one_of "${R[20]}" "$DENYW" "/var/tmp is refused inside (${R[20]})"
fi
if [ "${R[21]}" = OK ]; then
	not_ok "/dev/shm inside is not the machine's /dev/shm" test -e "/dev/shm/owstest-$hx"
else
	is_one_of "${R[21]}" "$DENYW" "/dev/shm is refused inside (${R[21]})"
fi
is "${R[22]}" ENOENT "the person's file in the machine's /tmp is not there inside (/tmp is private)"
is "${R[23]}" OK "control: /tmp inside takes a new file"
not_ok "and it did not land in the machine's /tmp" test -e "/tmp/owstest-in-$hx"
like "${R[24]}" "^OK:.*(ID|NAME)=" "control: the system is readable (/etc/os-release)"
is "${R[25]}" EACCES "/etc/shadow not readable inside (EACCES)"
is_one_of "${R[26]}" "$DENY" "/root not listable inside (${R[26]})"
is "${R[27]}" OK "control: appending to a file of the rw folder works"
is "${R[28]}" OK "control: mkdir in the rw folder works"
is_one_of "${R[29]}" "$DENYW" "chmod in the ro folder refused (${R[29]})"
is "$(stat -c %a "$RO/readme.txt")" 644 "and the mode is unchanged outside"
is_one_of "${R[30]}" "$DENYW" "/usr is not writable (${R[30]})"
is_one_of "${R[31]}" "$DENYW" "/etc is not writable (${R[31]})"
is_one_of "${R[32]}" "$DENYW" "a file of the ro folder cannot be truncated (${R[32]})"
is "$(cat "$RO/readme.txt")" "project-ro readme" "and its content is intact outside"
is_one_of "${R[33]}" "$DENYW" "utime on a file of the ro folder refused (${R[33]})"
ok "and its mtime is intact outside" test "$(stat -c %Y "$RO/readme.txt")" -gt 0
if [ "${R[34]}" = OK ]; then
	as_user /bin/sh -c "echo changed >'$W/hl-ro-$hx'" 2>/dev/null
	fail "no hard link from the rw folder to a file of the ro folder" "link made: OK"
else
	is_one_of "${R[34]}" "$DENYW EXDEV" "no hard link from the rw folder to a file of the ro folder (${R[34]})"
fi
is "${R[35]}" OK "control: utime on a file of the rw folder works"

# A read-only folder inside a read-write one stays read-only (and the reverse is writable).
as_user mkdir -p "$W/sub-ro" "$RO/sub-rw"
as_user /bin/sh -c "echo keep >'$W/sub-ro/f'; echo keep >'$RO/sub-rw/f'"
probe --rw "$W" --ro "$W/sub-ro" -- "create $W/sub-ro/new" "write $W/sub-ro/f" "create $W/x-$hx"
is_one_of "${R[0]}" "$DENYW" "--ro of a folder inside a --rw folder: no new file there (${R[0]})"
is_one_of "${R[1]}" "$DENYW" "--ro of a folder inside a --rw folder: no write there (${R[1]})"
is "$(cat "$W/sub-ro/f")" keep "and the file is intact outside"
is "${R[2]}" OK "control: the rest of the --rw folder is writable"
probe --ro "$RO" --rw "$RO/sub-rw" -- "create $RO/sub-rw/new-$hx" "create $RO/new2-$hx"
is "${R[0]}" OK "--rw of a folder inside a --ro folder is writable"
is_one_of "${R[1]}" "$DENYW" "and the rest of the --ro folder is not (${R[1]})"

# The working folder: the session folder at its own path.
AS_USER_CWD=$W sbx run --rw "$W" -- /bin/pwd
is "$SBX_OUT" "$W" "cwd inside is the shared folder's own path"

# An inherited descriptor on the home opened by the person before owsbx: no way in.
as_user /bin/bash -c 'exec 5<"$HOME"; exec "$0" run --rw "$1" -- "$2" -c "$3" "fd 5" "fdread 5 .ssh/id_ed25519" "fdread 5 secret.txt"' \
	"$OWSBX" "$W" "$PY" "$PROBE" >"$TU_TMP/fd.out" 2>&1 </dev/null
mapfile -t R <"$TU_TMP/fd.out"
is "${R[0]}" EBADF "a descriptor on the home inherited from the person is closed inside (${R[0]})"
unlike "${R[1]}" "^OK" "the key is not readable through an inherited descriptor (${R[1]})"
unlike "${R[2]}" "^OK" "~/secret.txt is not readable through an inherited descriptor (${R[2]})"

# The private folder: HOME and TMPDIR under /tmp/owsandbox-<uid>/<session>/, on the
# sandbox's own /tmp, which holds the private folder and nothing of the host's /tmp.
# shellcheck disable=SC2016
sbx run --rw "$W" -- /bin/sh -c '
	echo "home=$HOME"; echo "tmpdir=$TMPDIR"
	touch "$HOME/h" && echo home_w=yes
	touch "$TMPDIR/t" && echo tmpdir_w=yes
	[ "$(df --output=target "$TMPDIR" | tail -1)" = /tmp ] && echo tmpdir_on_tmp=yes
	echo "tmp_ls=$(ls -A /tmp | tr "\n" " ")"
	echo "owner=$(stat -c "%u" "$(dirname "$HOME")")"
	echo "ls=$(ls -A "$HOME" | tr "\n" " ")"'
kv() { sed -n "s/^$1=//p" <<<"$SBX_OUT"; }
home=$(kv home)
like "$home" "^/tmp/owsandbox-$TU_UID/[^/]+/home\$" "HOME is /tmp/owsandbox-<uid>/<session>/home ($home)"
like "$(kv tmpdir)" "^/tmp/owsandbox-$TU_UID/[^/]+/tmp\$" "TMPDIR is /tmp/owsandbox-<uid>/<session>/tmp ($(kv tmpdir))"
is "$(kv home_w)" yes "HOME is writable"
is "$(kv tmpdir_w)" yes "TMPDIR is writable"
is "$(kv tmpdir_on_tmp)" yes "TMPDIR lives on the sandbox's own /tmp"
is "$(kv tmp_ls)" "owsandbox-$TU_UID " "the sandbox's /tmp holds only the private folder"
is "$(kv owner)" "$TU_UID" "the private folder is the person's"
is "$(kv ls)" "h " "the private HOME holds nothing of the person's home"
sess=$(dirname "$home")
if [ -n "$home" ]; then
	not_ok "the private folder is removed when owsbx exits ($sess)" test -e "$sess"
else
	fail "the private folder is removed when owsbx exits" "no HOME seen: $(sbx_diag)"
fi

# Another session's private folder: session A keeps a file in its HOME; B cannot read it.
as_user rm -f "$W/a-home" "$W/a-go"
# shellcheck disable=SC2016
as_user_bg "$OWSBX" run --rw "$W" -- /bin/sh -c '
	echo a-secret >"$HOME/a-file"; echo "$HOME" >"$1/a-home.tmp"; mv "$1/a-home.tmp" "$1/a-home"
	i=0; while [ ! -e "$1/a-go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done' sh "$W" \
	</dev/null >/dev/null 2>&1
apid=$AS_USER_PID
if poll 10 test -s "$W/a-home"; then
	ahome=$(cat "$W/a-home")
	if [ -e "$ahome" ]; then
		# the private folder is on the machine's disk (a private_root config): closed to others
		po=$(stat -c '%a' "$(dirname "$(dirname "$ahome")")") so=$(stat -c '%a' "$(dirname "$ahome")")
		if (((8#$po & 7) == 0 || (8#$so & 7) == 0)); then
			pass "outside: the private folders are closed to other users ($po, $so)"
		else
			fail "outside: the private folders are closed to other users" "modes $po $so"
		fi
	else
		pass "outside: session A's private folder is not on the machine's disk at all"
	fi
	probe --rw "$W" -- "read $ahome/a-file" "listdir $(dirname "$(dirname "$ahome")")"
	is_one_of "${R[0]}" "$DENY" "session B cannot read session A's private file (${R[0]})"
	unlike "${R[1]}" "$(basename "$(dirname "$ahome")")" "session B does not see session A's folder (${R[1]})"
else
	fail "session A started" "no $W/a-home"
	skip "session A did not start" 4
fi
as_user touch "$W/a-go"
wait "$apid"
is "$?" 0 "session A exits 0"

# /dev is minimal: no block devices inside (the machine has some: loop, disks).
outside=$(find /dev -maxdepth 1 -type b | wc -l)
sbx run -- /bin/sh -c 'find /dev -maxdepth 1 -type b | wc -l; echo x >/dev/null && echo null-ok; head -c 4 /dev/urandom | wc -c'
mapfile -t L <<<"$SBX_OUT"
if [ "$outside" -gt 0 ]; then
	is "${L[0]}" 0 "no block device in /dev inside (the machine has $outside)"
else
	skip "the machine has no block device in /dev"
fi
is "${L[1]}" null-ok "control: /dev/null works inside"
is "${L[2]}" 4 "control: /dev/urandom works inside"

owstest_check_clean
done_testing
