# Set-user-ID and set-group-ID files: one made inside a session folder would run outside
# the wall later, as its owner (the person, or the sandbox account), for whoever runs it.
# Every way to set S_ISUID/S_ISGID from inside is refused (the seccomp filter, for both
# providers); plain modes and the sticky bit still work.  Not here, as they cannot set
# the bits anyway: chown and writes (they clear them), an ACL through setxattr (the
# kernel keeps the set-ID bits out of the mode it derives), io_uring (refused), cp -p
# of root's set-ID programs (cp drops the bits when it cannot keep the owner).  A file
# capability, the other way a file gains privilege, is tried too.
ATTACKS="$ATTACKS setid"

# Runs each named step in the folder argv[1]; prints "STEP OK" or "STEP <errno name>"
# (or "STEP FAIL" for a command that exits non-zero).
SETID_PY='
import ctypes, errno, os, stat, struct, subprocess, sys
os.chdir(sys.argv[1])
os.umask(0o022)
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

def at(name, fn):
    d = os.open(".", os.O_PATH | os.O_DIRECTORY)
    try:
        fn(d)
    finally:
        os.close(d)

# A v2 file capability granting CAP_NET_RAW (13): the other way a file gains privilege.
CAP = struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0)

steps = {
    "ctl-chmod755": lambda: (touch("ctl755"), os.chmod("ctl755", 0o755)),
    "ctl-chmod644": lambda: (touch("ctl644", 0o600), os.chmod("ctl644", 0o644)),
    "ctl-fchmod755": lambda: (touch("ctlf755"), fchmod("ctlf755", 0o755)),
    "ctl-open644": lambda: touch("ctlopen"),
    "ctl-mknod644": lambda: os.mknod("ctlnod", stat.S_IFREG | 0o644),
    "ctl-mkdir755": lambda: os.mkdir("ctldir", 0o755),
    "ctl-sticky": lambda: (os.mkdir("ctlsticky", 0o755), os.chmod("ctlsticky", 0o1755)),
    "chmod-suid": lambda: (touch("chmod-suid", 0o755), os.chmod("chmod-suid", 0o4755)),
    "chmod-sgid": lambda: (touch("chmod-sgid", 0o755), os.chmod("chmod-sgid", 0o2755)),
    "fchmodat-suid": lambda: (touch("fchmodat-suid", 0o755),
                              at("x", lambda d: os.chmod("fchmodat-suid", 0o4755, dir_fd=d))),
    "fchmodat2-suid": lambda: (touch("fchmodat2-suid", 0o755),
                               fchmodat2("fchmodat2-suid", 0o4755)),
    "fchmod-suid": lambda: (touch("fchmod-suid", 0o755), fchmod("fchmod-suid", 0o4755)),
    "fchmod-sgid": lambda: (touch("fchmod-sgid", 0o755), fchmod("fchmod-sgid", 0o2755)),
    "open-suid": lambda: touch("open-suid", 0o4755),
    "openat-sgid": lambda: at("x", lambda d: os.close(
        os.open("openat-sgid", os.O_CREAT | os.O_WRONLY, 0o2755, dir_fd=d))),
    "mknod-suid": lambda: os.mknod("mknod-suid", stat.S_IFREG | 0o4755),
    "mkdir-sgid": lambda: os.mkdir("mkdir-sgid", 0o2755),
    "dir-chmod-sgid": lambda: (os.mkdir("dir-chmod-sgid", 0o755),
                               os.chmod("dir-chmod-sgid", 0o2755)),
    "setcap": lambda: (touch("setcap", 0o755), os.setxattr("setcap", "security.capability", CAP)),
}
commands = {
    "ctl-coreutils-chmod": ["sh", "-c", "touch cu-ctl && chmod 644 cu-ctl && chmod u+x,g+x cu-ctl"],
    "ctl-install755": ["sh", "-c", "touch src && install -m 755 src inst-ctl"],
    "coreutils-chmod-us": ["sh", "-c", "touch cu-us && chmod 755 cu-us && chmod u+s cu-us"],
    "coreutils-chmod-gs": ["sh", "-c", "touch cu-gs && chmod 755 cu-gs && chmod g+s cu-gs"],
    "coreutils-chmod-gs-dir": ["sh", "-c", "mkdir cu-gsdir && chmod g+s cu-gsdir"],
    "coreutils-mkdir-m2755": ["mkdir", "-m", "2755", "cu-mkdir"],
    "install-m4755": ["sh", "-c", "touch src2 && install -m 4755 src2 inst-suid"],
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
setid_mode() { as_person stat -c %a "$RW/$1" 2>/dev/null || echo absent; }

attack_setid() {
	local out ctl file mode step
	local -A refused=(
		[chmod-suid]=chmod-suid [chmod-sgid]=chmod-sgid [fchmodat-suid]=fchmodat-suid
		[fchmodat2-suid]=fchmodat2-suid [fchmod-suid]=fchmod-suid
		[fchmod-sgid]=fchmod-sgid [open-suid]=open-suid [openat-sgid]=openat-sgid
		[mknod-suid]=mknod-suid [mkdir-sgid]=mkdir-sgid [dir-chmod-sgid]=dir-chmod-sgid
		[coreutils-chmod-us]=cu-us [coreutils-chmod-gs]=cu-gs
		[coreutils-chmod-gs-dir]=cu-gsdir [coreutils-mkdir-m2755]=cu-mkdir
		[install-m4755]=inst-suid
	)
	local -A controls=(
		[ctl-chmod755]=ctl755:755 [ctl-chmod644]=ctl644:644 [ctl-fchmod755]=ctlf755:755
		[ctl-open644]=ctlopen:644 [ctl-mknod644]=ctlnod:644 [ctl-mkdir755]=ctldir:755
		[ctl-sticky]=ctlsticky:1755 [ctl-coreutils-chmod]=cu-ctl:754
		[ctl-install755]=inst-ctl:755
	)
	out=$(sbx -- /usr/bin/python3 -c "$SETID_PY" "$RW" "${!controls[@]}" "${!refused[@]}" \
		setcap 2>&1)
	for step in $(printf '%s\n' "${!controls[@]}" | sort); do
		ctl=${controls[$step]}
		file=${ctl%%:*} mode=${ctl#*:}
		check "$(tag) control: $step works inside" grep -qx "$step OK" <<<"$out"
		check "$(tag) control: $step leaves mode $mode outside" \
			test "$(setid_mode "$file")" = "$mode"
	done
	for step in $(printf '%s\n' "${!refused[@]}" | sort); do
		file=${refused[$step]}
		check "$(tag) $step is refused" grep -qxE "$step (EPERM|FAIL)" <<<"$out"
		mode=$(setid_mode "$file")
		if [ "$mode" = absent ] || (((8#$mode & 8#6000) == 0)); then
			ok "$(tag) $step leaves no set-ID bit outside ($mode)"
		else
			not_ok "$(tag) $step leaves no set-ID bit outside ($mode)"
		fi
	done
	# A file capability needs CAP_SETFCAP, which no sandboxed process holds.
	# (No extended attribute is set inside at all: the call is skipped, seccomp.c; the
	# check below sees that nothing was set.)
	check "$(tag) setting a file capability is refused or skipped" grep -qxE "setcap (EPERM|OK)" <<<"$out"
	out=$(as_person /usr/bin/python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' \
		"$RW/setcap" 2>&1)
	unlike "$out" "security.capability" "$(tag) and leaves no file capability outside"
	out=$(as_person find "$RW" -perm /6000 2>&1)
	check "$(tag) nothing in the folder carries a set-ID bit" test -z "$out"
	as_person rm -rf "$RW"/ctl* "$RW"/chmod-* "$RW"/fchmod* "$RW"/open* "$RW"/mknod-* \
		"$RW"/mkdir-* "$RW"/dir-* "$RW"/setcap "$RW"/cu-* "$RW"/src* "$RW"/inst-* 2>/dev/null
}
