# The session's init (PID 1 inside; the command's parent either way, also when the sandbox
# shares the host's namespaces) and the kernel's own surfaces: init holds the
# control socket and the host's descriptors, so nothing of it may be reached from a
# command (its fds through /proc or pidfd_getfd, refused outright; its memory, ptrace); a signal to it
# from inside does not end or wedge the session; /proc/sys, /sys and devices beyond the
# few bound are not writable or openable, and no device node (not even a whiteout) can
# be made in a folder; the calls that make namespaces, mounts or
# kernel objects are refused.  Each group has a control that works.
ATTACKS="$ATTACKS procinit"

# Runs each named step; prints "STEP OK[:data]" or "STEP <errno name>".
PROCINIT_PY='
import ctypes, errno, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
INIT = os.getppid()                          # the sessions init: PID 1 in its own namespace

def sc(*a):
    r = libc.syscall(*a)
    if r < 0:
        raise OSError(ctypes.get_errno(), "syscall")
    return r

def getfd_self():
    pfd = sc(434, os.getpid(), 0)
    os.close(sc(438, pfd, 1, 0))             # our own stdout, through our own pidfd

def getfd_any():
    pfd = sc(434, INIT, 0)                   # pidfd_open(init): allowed, it is only a handle
    got = []
    for n in range(64):
        try:
            got.append(str(n) + ">" + os.readlink("/proc/self/fd/%d" % sc(438, pfd, n, 0)))
        except OSError as e:
            if e.errno != errno.EPERM:
                got.append("%d:%s" % (n, errno.errorcode.get(e.errno)))
    if got:
        return "GOT " + " ".join(got)
    raise OSError(errno.EPERM, "pidfd_getfd")

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

def vm_read(pid):
    # process_vm_readv(pid, ...) at the address of a buffer of ours: mapped in us.
    buf, into = ctypes.create_string_buffer(b"owsbx-vm", 8), ctypes.create_string_buffer(8)
    local, remote = iovec(ctypes.addressof(into), 8), iovec(ctypes.addressof(buf), 8)
    one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)    # full-width: the call reads longs
    return sc(310, ctypes.c_long(pid), ctypes.byref(local), one, ctypes.byref(remote), one, zero)

def cgroup_limits():
    # The limits of our own cgroup (v1 and v2 paths) stay as the launcher set them.
    tried = []
    for line in open("/proc/self/cgroup"):
        _, ctrl, path = line.rstrip("\n").split(":", 2)
        # v2: unified at /sys/fs/cgroup, or beside v1 at /sys/fs/cgroup/unified
        bases = ["/sys/fs/cgroup/" + ctrl.replace("name=", "")] if ctrl else \
            ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        for p in (b + path + "/" + f for b in bases for f in
                  ("memory.max", "pids.max", "memory.limit_in_bytes", "cpu.max", "cgroup.procs")):
            if os.path.exists(p):
                tried.append(p)
                try:
                    write(p, b"max\n")
                    return "WROTE " + p
                except OSError as e:
                    last = e
    if not tried:
        raise OSError(errno.ENOENT, "no limit file")
    raise last

def write(path, data=b"1\n", flags=0):
    fd = os.open(path, os.O_WRONLY | flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)

def devopen(path):
    os.close(os.open(path, os.O_RDWR))

steps = {
    "ctl-self-status": lambda: open("/proc/self/status").read(10) and None,
    "ctl-self-fd": lambda: os.listdir("/proc/self/fd") and None,
    "ctl-pidfd-open-1": lambda: os.close(sc(434, INIT, 0)),
    "getfd-self": getfd_self,
    "init-getfd": getfd_any,
    "init-environ": lambda: open("/proc/%d/environ" % INIT, "rb").read(),
    "init-mem": lambda: open("/proc/%d/mem" % INIT, "rb").read(1),
    "init-maps": lambda: open("/proc/%d/maps" % INIT).read(),
    "init-fd": lambda: os.listdir("/proc/%d/fd" % INIT),
    "init-fd0": lambda: os.close(os.open("/proc/%d/fd/0" % INIT, os.O_RDONLY)),
    "init-cwd": lambda: os.readlink("/proc/%d/cwd" % INIT),
    "init-root": lambda: os.listdir("/proc/%d/root/" % INIT),
    "init-exe": lambda: open("/proc/%d/exe" % INIT, "rb").read(4),
    "init-ptrace": lambda: sc(101, 16, INIT, 0, 0),          # PTRACE_ATTACH
    "init-seize": lambda: sc(101, 0x4206, INIT, 0, 0),       # PTRACE_SEIZE
    "ctl-vmread-self": lambda: vm_read(os.getpid()),
    "init-vmread": lambda: vm_read(INIT),
    "ctl-write-rw": lambda: write(sys.argv[1] + "/procinit.txt", flags=os.O_CREAT),
    "ctl-write-devnull": lambda: write("/dev/null"),
    "sys-hostname": lambda: write("/proc/sys/kernel/hostname", b"x\n"),
    "sys-core-pattern": lambda: write("/proc/sys/kernel/core_pattern", b"|/tmp/x\n"),
    "sys-sysrq": lambda: write("/proc/sysrq-trigger", b"h"),
    "sys-drop-caches": lambda: write("/proc/sys/vm/drop_caches", b"3\n"),
    "sys-uevent-helper": lambda: write("/sys/kernel/uevent_helper", b"/tmp/x\n"),
    "cgroup-limits": cgroup_limits,
    "sys-cgroup": lambda: os.mkdir(("/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified")
                                    else "/sys/fs/cgroup") + "/owsbx-attack"),
    "self-oom": lambda: write("/proc/self/oom_score_adj", b"-1000\n"),
    "dev-fuse": lambda: devopen("/dev/fuse"),
    "dev-kvm": lambda: devopen("/dev/kvm"),
    "dev-tun": lambda: devopen("/dev/net/tun"),
    "dev-mem": lambda: devopen("/dev/mem"),
    "dev-kmsg": lambda: devopen("/dev/kmsg"),
    "dev-console": lambda: devopen("/dev/console"),
    "dev-vda": lambda: devopen("/dev/vda"),
    "mknod-chr": lambda: os.mknod(sys.argv[1] + "/procinit-null", stat.S_IFCHR | 0o666, os.makedev(1, 3)),
    "mknod-blk": lambda: os.mknod(sys.argv[1] + "/procinit-blk", stat.S_IFBLK | 0o666, os.makedev(254, 0)),
    "mknod-whiteout": lambda: os.mknod(sys.argv[1] + "/procinit-wo", stat.S_IFCHR | 0o600, 0),
    "rename-whiteout": lambda: (open(sys.argv[1] + "/procinit-from", "w").close(),
                                sc(316, -100, (sys.argv[1] + "/procinit-from").encode(), -100,
                                   (sys.argv[1] + "/procinit-to").encode(), 4)),
    "ctl-mkfifo": lambda: os.mkfifo(os.environ["TMPDIR"] + "/procinit-fifo"), # not in a session folder (fifos.sh)
    "ctl-memfd": lambda: os.close(sc(319, b"x", 0)),
    "ctl-getpid": lambda: sc(39),
    "unshare-user": lambda: sc(272, 0x10000000),
    "unshare-mount": lambda: sc(272, 0x00020000),
    "unshare-net": lambda: sc(272, 0x40000000),
    "chroot": lambda: sc(161, b"/tmp"),
    "mount-tmpfs": lambda: sc(165, b"none", b"/tmp", b"tmpfs", 0, 0),
    "umount-usr": lambda: sc(166, b"/usr", 2),
    "fsopen": lambda: sc(430, b"tmpfs", 0),
    "open-tree": lambda: sc(428, -100, b"/usr", 1),
    "setns": lambda: sc(308, os.open("/proc/self/ns/mnt", os.O_RDONLY), 0),
    "bpf": lambda: sc(321, 0, ctypes.create_string_buffer(64), 64),
    "userfaultfd": lambda: sc(323, 0),
    "fanotify": lambda: sc(300, 0, 0),
    "open-by-handle": lambda: sc(304, -100, ctypes.create_string_buffer(64), 0),
    "syslog": lambda: sc(103, 3, ctypes.create_string_buffer(100), 100),
    "keyctl": lambda: sc(250, 1, 0),
}
for name in sys.argv[2:]:
    try:
        r = steps[name]()
        print(name, "OK" if r is None or isinstance(r, int) else "OK:" + str(r)[:200])
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
'

attack_procinit() {
	local out step ctls refused
	ctls="ctl-mkfifo ctl-self-status ctl-self-fd ctl-pidfd-open-1 ctl-vmread-self ctl-write-rw ctl-write-devnull ctl-memfd ctl-getpid"
	# pidfd_getfd even of itself: Docker's default profile refuses it (CAP_SYS_PTRACE).
	refused="getfd-self init-getfd init-environ init-mem init-maps init-fd init-fd0 init-cwd init-root init-exe
		init-ptrace init-seize init-vmread sys-hostname sys-core-pattern sys-sysrq
		sys-drop-caches sys-uevent-helper sys-cgroup cgroup-limits dev-fuse dev-kvm dev-tun dev-mem dev-kmsg
		dev-console dev-vda mknod-chr mknod-blk mknod-whiteout rename-whiteout unshare-user unshare-mount unshare-net chroot
		mount-tmpfs umount-usr fsopen open-tree setns bpf userfaultfd fanotify open-by-handle
		syslog keyctl self-oom"
	# shellcheck disable=SC2086 # the lists are words
	out=$(sbx -- /usr/bin/python3 -c "$PROCINIT_PY" "$RW" $ctls $refused 2>&1)
	for step in $ctls; do
		check "$(tag) control: $step works inside" grep -qx "$step OK" <<<"$out"
	done
	for step in $refused; do
		like "$(grep "^$step " <<<"$out")" "^$step (EPERM|EACCES|ENOENT|ENOSYS|EROFS|ENXIO|ENODEV|ESRCH)$" \
			"$(tag) $step is refused"
	done
	check "$(tag) control: the file written inside is there outside" test -e "$RW/procinit.txt"
	# A whiteout is a character device 0:0, which Linux lets anyone make (since 5.8).
	out=$(find "$RW" -maxdepth 1 \( -type c -o -type b \) 2>&1)
	check "$(tag) no device node, whiteouts included, was made in the folder" test -z "$out"

	# Signals to init from inside: the kernel drops SIGKILL and SIGSTOP sent to a
	# namespace's init by its own members, and init ignores the rest; the command goes on
	# and the session ends as usual, nothing left.
	# shellcheck disable=SC2016 # for the sh inside
	out=$(timeout -s KILL 30 runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$PHOME" USER="$PERSON" OWSBX_CONFIG="$CONF" "$BIN/owsbx" run --provider "$P" \
		--net "$NET" --rw "$RW" -- sh -c 'for s in KILL STOP TERM INT HUP QUIT USR1 SEGV; do
			kill -s $s $PPID 2>/dev/null; kill -s $s -$PPID 2>/dev/null; done
			sleep 0.2; echo alive; exit 7' 2>&1 {OWS_LOCK_FD}<&-)
	local rc=$?
	like "$out" "alive" "$(tag) signals to init from inside: the command goes on"
	check "$(tag) ... and the session ends with the command's status (rc $rc)" test $rc = 7
	as_person rm -f "$RW"/procinit*
}
