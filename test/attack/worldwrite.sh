# Modes that open the folder to other local users: a world-writable .git (or any guarded
# name) would let another user swap .git/config under the person, and a world-writable
# file or folder stays open after the session.  No command may make one: chmod, fchmod,
# fchmodat and fchmodat2 with S_IWOTH are refused (seccomp, both providers), and init hands
# S_IWOTH on in the umask, so that creations with 0666 or 0777 stay closed to others even
# when the person's umask is 0; a command cannot take it out either: a umask without it
# goes to the call's reaper, which answers with the mask as it is and leaves it (pip, tar
# and coreutils read the umask by setting 0 and back, and still read it right); in the
# host's namespaces no reaper stands between, and that attack is skipped.  Group write goes the
# same way where the person's primary group has another account in it, and stays where it is
# the person's own (Debian's default).  An ACL
# entry for others or another user opens a file as well: no extended attribute is set inside
# (the call is skipped and returns 0, so that cp -a of a file with an ACL still works).
ATTACKS="$ATTACKS worldwrite"

# Runs each named step in the folder argv[1]; prints "STEP OK" or "STEP <errno name>"
# (or "STEP FAIL" for a command that exits non-zero).
WORLDWRITE_PY='
import ctypes, errno, os, subprocess, sys
os.chdir(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)

def touch(name, mode=0o644):
    os.close(os.open(name, os.O_CREAT | os.O_WRONLY | os.O_EXCL, mode))

def fchmod(name, mode):
    fd = os.open(name, os.O_RDONLY)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)

def fchmodat2(name, mode):
    if libc.syscall(452, -100, name.encode(), mode, 0) != 0:
        raise OSError(ctypes.get_errno(), "fchmodat2")

def umask_read():
    old = os.umask(0)
    os.umask(old)
    if not old & 0o002:
        raise OSError(errno.EINVAL, "umask %o hands write for others on" % old)

def umask0_creates():
    os.umask(0)
    touch("u0-file", 0o666)
    os.mkdir("u0-dir", 0o777)
    again = os.umask(0)
    if not again & 0o002:
        raise OSError(errno.EINVAL, "umask %o after umask(0): write for others handed on" % again)

def inherited_creates():
    touch("inh-file", 0o666)
    os.mkdir("inh-dir", 0o777)

def umask002_creates():
    os.umask(0o002)
    touch("u2-file", 0o666)
    os.mkdir("u2-dir", 0o777)

steps = {
    "ctl-chmod755": lambda: (touch("ctl755", 0o600), os.chmod("ctl755", 0o755)),
    "ctl-chmod775": lambda: (touch("ctl775", 0o600), os.chmod("ctl775", 0o775)),
    "ctl-fchmod640": lambda: (touch("ctl640"), fchmod("ctl640", 0o640)),
    "ctl-umask077": lambda: (os.umask(0o077), touch("ctl077", 0o666), os.umask(0o022)),
    "chmod-777-git": lambda: os.chmod(".git", 0o777),
    "chmod-666-git-config": lambda: os.chmod(".git/config", 0o666),
    "chmod-666-file": lambda: os.chmod("a.txt", 0o666),
    "fchmod-646-new": lambda: (touch("fchmod-new"), fchmod("fchmod-new", 0o646)),
    "fchmodat-777-dir": lambda: (os.mkdir("chmod-dir", 0o755),
                                  os.chmod("chmod-dir", 0o777, dir_fd=os.open(".", os.O_RDONLY))),
    "fchmodat2-602-new": lambda: (touch("fchmodat2-new"), fchmodat2("fchmodat2-new", 0o602)),
    "chmod-1777-dir": lambda: (os.mkdir("sticky-dir", 0o755), os.chmod("sticky-dir", 0o1777)),
    "ctl-umask-read": umask_read,
    "inherited-creates": inherited_creates,
    "umask0-creates": umask0_creates,
    "umask002-creates": umask002_creates,
    "chmod-664-new": lambda: (touch("gw-new"), os.chmod("gw-new", 0o664)),
    "fchmod-775-dir": lambda: (os.mkdir("gw-dir", 0o755), fchmod("gw-dir", 0o775)),
}
commands = {
    "ctl-coreutils-chmod755": ["sh", "-c", "touch cu-ctl && chmod 600 cu-ctl && chmod 755 cu-ctl"],
    "coreutils-chmod-777-git": ["chmod", "777", ".git"],
    "coreutils-chmod-ow-git-config": ["chmod", "o+w", ".git/config"],
    "coreutils-chmod-ow-file": ["chmod", "o+w", "a.txt"],
    "coreutils-chmod-R-ow": ["chmod", "-R", "o+w", "."],
    "setfacl-other-rw": ["sh", "-c", "touch acl-o && setfacl -m o::rw acl-o"],
    "setfacl-nobody-rw": ["sh", "-c", "touch acl-u && setfacl -m u:nobody:rw acl-u"],
    "setfacl-default-nobody": ["sh", "-c", "mkdir -p acl-d && setfacl -d -m u:nobody:rwx acl-d"],
}
for name in sys.argv[2:]:
    if name in commands:
        p = subprocess.run(commands[name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(name, "OK" if p.returncode == 0 else "FAIL")
        continue
    try:
        steps[name]()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
'

# What the person sees outside: the octal mode, or "absent".
worldwrite_mode() { as_person stat -c %a "$RW/$1" 2>/dev/null || echo absent; }

attack_worldwrite() {
	local out step file mode
	local -A controls=(
		[ctl-chmod755]=ctl755:755 [ctl-fchmod640]=ctl640:640
		[ctl-coreutils-chmod755]=cu-ctl:755
	)
	# account: the handback takes group write from what the account made (its group is not
	# the person's), and a folder with a default ACL takes modes from it, not the umask.
	if [ "$P" = landlock ]; then
		controls[ctl-chmod775]=ctl775:775 controls[ctl-umask077]=ctl077:600
	fi
	local -A refused=(
		[chmod-777-git]=.git [chmod-666-git-config]=.git/config [chmod-666-file]=a.txt
		[fchmod-646-new]=fchmod-new [fchmodat-777-dir]=chmod-dir
		[fchmodat2-602-new]=fchmodat2-new [chmod-1777-dir]=sticky-dir
		[coreutils-chmod-777-git]=.git [coreutils-chmod-ow-git-config]=.git/config
		[coreutils-chmod-ow-file]=a.txt [coreutils-chmod-R-ow]=.
		[setfacl-other-rw]=acl-o [setfacl-nobody-rw]=acl-u [setfacl-default-nobody]=acl-d
	)
	out=$(sbx -- /usr/bin/python3 -c "$WORLDWRITE_PY" "$RW" "${!controls[@]}" ctl-umask-read 2>&1)
	check "$(tag) control: umask(0) and back reads a umask with S_IWOTH inside" \
		grep -qx "ctl-umask-read OK" <<<"$out"
	for step in $(printf '%s\n' "${!controls[@]}" | sort); do
		file=${controls[$step]%%:*} mode=${controls[$step]#*:}
		check "$(tag) control: $step works inside" grep -qx "$step OK" <<<"$out"
		check "$(tag) control: $step leaves mode $mode outside" \
			test "$(worldwrite_mode "$file")" = "$mode"
	done
	out=$(sbx -- /usr/bin/python3 -c "$WORLDWRITE_PY" "$RW" "${!refused[@]}" 2>&1)
	for step in $(printf '%s\n' "${!refused[@]}" | sort); do
		case $step in
		setfacl-*) ;; # skipped inside (it says it worked): the ACL checks below see the effect
		*) check "$(tag) $step is refused" grep -qxE "$step (EPERM|FAIL)" <<<"$out" ;;
		esac
	done
	# The person's umask of 0 is not handed in: creations with 0666 and 0777 stay closed.
	out=$(as_person sh -c 'umask 0 && exec "$@"' sh "$BIN/owsbx" run --provider "$P" \
		--net "$NET" --rw "$RW" -- /usr/bin/python3 -c "$WORLDWRITE_PY" "$RW" \
		inherited-creates 2>&1)
	check "$(tag) control: with the person's umask 0, a command creates" \
		grep -qx "inherited-creates OK" <<<"$out"
	# A command's own umask(0) does not take: what it makes stays closed to others.
	if [ -n "$ATK_HOST_NS" ]; then
		skip "$(tag) umask(0) inside: in the host's namespaces no reaper answers it, it takes"
	else
		out=$(sbx -- /usr/bin/python3 -c "$WORLDWRITE_PY" "$RW" umask0-creates 2>&1)
		check "$(tag) after its own umask(0), a command creates and still reads a umask with S_IWOTH" \
			grep -qx "umask0-creates OK" <<<"$out"
		[ "$(grep -c . <<<"$out")" = 1 ] || diag <<<"$out"
		out="$(worldwrite_mode u0-file) $(worldwrite_mode u0-dir)"
		check "$(tag) after umask(0), a 0666 file and a 0777 folder are closed to others ($out)" \
			test -z "$(as_person find "$RW/u0-file" "$RW/u0-dir" -perm -o+w 2>&1)"
		check "$(tag) ... and are there" test "${out#*absent}" = "$out"
	fi
	# Whatever the steps did, nothing in the folder is writable by others now, and no ACL
	# inside names nobody.
	out=$(as_person find "$RW" -perm -o+w -printf '%m %P\n' 2>&1)
	check "$(tag) nothing in the folder is writable by others (${out//$'\n'/, })" test -z "$out"
	out=$(getfacl -RPp "$RW" 2>/dev/null | grep -E '^(default:)?user:nobody:')
	check "$(tag) no ACL entry inside names another user (${out//$'\n'/, })" test -z "$out"
	out=$(getfacl -Pp "$RW/acl-o" 2>/dev/null | grep '^other::')
	check "$(tag) setfacl -m o::rw left other without write ($out)" test "$out" = "other::r--"
	as_person chmod -R o-w "$RW" 2>/dev/null
	as_person rm -rf "$RW"/ctl* "$RW"/cu-ctl "$RW"/fchmod*-new "$RW"/chmod-dir "$RW"/sticky-dir \
		"$RW"/inh-* "$RW"/acl-* "$RW"/u0-* 2>/dev/null
	[ "$P" = landlock ] && [ -z "$ATK_HOST_NS" ] && attack_worldwrite_group
}

# The person's primary group shared with another account (a distribution's `users`, or a
# team's group): group write opens a file to that account as write for others does, so it
# goes the same way.  (Debian gives each person a group of their own, where it stays: the
# controls above.)  The account provider's group is the account's own.
attack_worldwrite_group() {
	local mate=owstest_gm$HEX out mode
	if ! useradd -M -N -g "$PERSON" -s /usr/sbin/nologin "$mate"; then
		not_ok "$(tag) premise: another account with the person's group"
		return
	fi
	out=$(sbx -- /usr/bin/python3 -c "$WORLDWRITE_PY" "$RW" chmod-664-new fchmod-775-dir \
		umask002-creates 2>&1)
	check "$(tag) a shared group: chmod g+w of a file is refused" grep -qx "chmod-664-new EPERM" <<<"$out"
	check "$(tag) a shared group: fchmod g+w of a folder is refused" grep -qx "fchmod-775-dir EPERM" <<<"$out"
	check "$(tag) a shared group: control: after umask(002), a command creates" \
		grep -qx "umask002-creates OK" <<<"$out"
	mode="$(worldwrite_mode u2-file) $(worldwrite_mode u2-dir)"
	check "$(tag) a shared group: after umask(002), a 0666 file and a 0777 folder are closed to the group ($mode)" \
		test "$mode" = "644 755"
	out=$(as_person find "$RW" -perm -g+w -printf '%m %P\n' 2>&1)
	check "$(tag) a shared group: nothing in the folder is writable by the group (${out//$'\n'/, })" test -z "$out"
	userdel "$mate"
	as_person rm -rf "$RW"/gw-* "$RW"/u2-* 2>/dev/null
}
