# The kernel's surface: every call Docker's default seccomp profile refuses (moby/profiles,
# seccomp/default.json, for a container without added capabilities) that the person
# reaches outside is refused inside.  Each call is made with harmless arguments: outside
# it does its work or fails on them (EINVAL, ENOENT...), which shows the kernel code is
# reachable; EPERM, EACCES and ENOSYS outside mean the person cannot reach it anyway.  The
# figure "N of M" counts the calls reachable inside among the M reachable outside.  Real
# programs that need calls near these (debuggers, compilers, package tools) are the
# controls, in the same sessions.
ATTACKS="$ATTACKS kernel"

# x86_64 numbers.  One line per call: NAME OK, or NAME and the errno's name.
KERNEL_PY='
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a
                                         for a in args])
    if r < 0:
        raise OSError(ctypes.get_errno(), "")
    return r
buf = ctypes.create_string_buffer(4096)
size = ctypes.c_uint64(4096)
here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
def pidfd():
    return sc(434, os.getpid(), 0)
def closing(fd):
    os.close(fd)
def in_child(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except OSError as e:
            os._exit(e.errno)
    _, st = os.waitpid(pid, 0)
    if os.WEXITSTATUS(st):
        raise OSError(os.WEXITSTATUS(st), "")
class timeval(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("us", ctypes.c_long)]
class io_uring_params(ctypes.Structure):
    _fields_ = [("pad", ctypes.c_char * 120)]
calls = {
    # the sixteen the issue measured
    "personality(ADDR_NO_RANDOMIZE)": lambda: sc(135, 0x0040000),
    "quotactl": lambda: sc(179, (0x800001 << 8), None, 0, None),
    "quotactl_fd": lambda: sc(443, here, (0x800004 << 8), 0, buf),
    "move_pages": lambda: sc(279, 0, 0, None, None, None, 0),
    "mbind": lambda: sc(237, 0, 0, 0, None, 0, 0),
    "set_mempolicy": lambda: sc(238, 0, None, 0),
    "get_mempolicy": lambda: sc(239, None, None, 0, None, 0),
    "migrate_pages": lambda: sc(256, 0, 0, None, None),
    "set_mempolicy_home_node": lambda: sc(450, 0, 0, 0, 0),
    "kcmp": lambda: sc(312, os.getpid(), os.getpid(), 1, 0, 0),
    "pidfd_getfd": lambda: closing(sc(438, pidfd(), 0, 0)),
    "process_madvise": lambda: sc(440, pidfd(), None, 0, 20, 0),
    "settimeofday": lambda: sc(164, ctypes.byref(timeval(0, 2000000)), None),
    "clock_settime": lambda: sc(227, 1, ctypes.byref(timeval(0, 0))),
    "ustat": lambda: sc(136, 0, buf),
    "sysfs": lambda: sc(139, 3),
    # the rest of what Docker refuses
    "io_uring_setup": lambda: closing(sc(425, 1, ctypes.byref(io_uring_params()))),
    "keyctl": lambda: sc(250, 0, -3, 0),
    "request_key": lambda: sc(249, b"user", b"owstest-none", None, 0),
    "userfaultfd": lambda: closing(sc(323, 1)),
    "setns": lambda: sc(308, os.open("/proc/self/ns/user", os.O_RDONLY), 0x10000000),
    "unshare(CLONE_NEWUSER)": lambda: in_child(lambda: sc(272, 0x10000000)),
    "clone3": lambda: sc(435, None, 0),
    "open_tree": lambda: closing(sc(428, -100, b".", 0o2000000)),
    "fanotify_init": lambda: closing(sc(300, 0x200, 0)),
    "lsm_list_modules": lambda: sc(461, buf, ctypes.byref(size), 0),
    "lsm_get_self_attr": lambda: sc(459, 100, buf, ctypes.byref(size), 0),
    "iopl": lambda: sc(172, 0),
    "ioperm": lambda: sc(173, 0, 0, 0),
    "syslog": lambda: sc(103, 10, None, 0),
    "perf_event_open": lambda: sc(298, buf, 0, -1, -1, 0),
    "bpf": lambda: sc(321, 0, buf, 0),
    "chroot": lambda: sc(161, b"."),
    "mount": lambda: sc(165, b"none", b".", b"tmpfs", 0, None),
    "umount2": lambda: sc(166, b"/proc", 0),
    "pivot_root": lambda: sc(155, b".", b"."),
    "acct": lambda: sc(163, None),
    "vhangup": lambda: sc(153),
    "sethostname": lambda: sc(170, b"x", 1),
    "swapon": lambda: sc(167, b"/nonexistent", 0),
    "reboot": lambda: sc(169, 0, 0, 0, None),
    "init_module": lambda: sc(175, None, 0, b""),
    "kexec_load": lambda: sc(246, 0, 0, None, 0),
    "open_by_handle_at": lambda: sc(304, here, buf, 0),
    "fsopen": lambda: sc(430, b"tmpfs", 0),
    "lookup_dcookie": lambda: sc(212, 0, None, 0),
    "uselib": lambda: sc(134, b"/nonexistent"),
}
for name, call in calls.items():
    try:
        call()
        print(name + "\tOK")
    except OSError as e:
        print(name + "\t" + errno.errorcode.get(e.errno, str(e.errno)))
'

# Whether a result shows the call reaching the kernel's own code.
kernel_reached() { case $1 in EPERM | EACCES | ENOSYS | "") return 1 ;; *) return 0 ;; esac; }

attack_kernel() {
	local out in name res reach=0 inside=0 tried=0 names=""
	local -A outside=() within=()
	out=$(cd "$RW" && as_person /usr/bin/python3 -c "$KERNEL_PY" 2>&1)
	while IFS=$'\t' read -r name res; do
		[ -n "$res" ] && outside[$name]=$res
	done <<<"$out"
	in=$(sbx -- /usr/bin/python3 -c "$KERNEL_PY" 2>&1)
	while IFS=$'\t' read -r name res; do
		[ -n "$res" ] && within[$name]=$res
	done <<<"$in"
	check "$(tag) control: the probe ran outside and inside" \
		test "${#outside[@]}" -gt 40 -a "${#within[@]}" = "${#outside[@]}"
	for name in "${!outside[@]}"; do
		tried=$((tried + 1))
		kernel_reached "${outside[$name]}" || continue
		reach=$((reach + 1))
		if kernel_reached "${within[$name]:-}"; then
			inside=$((inside + 1))
			names="$names $name(${within[$name]})"
		fi
	done
	diag <<<"$(tag) kernel surface: $inside reachable inside of the $reach calls Docker refuses that the person reaches outside ($tried tried)${names:+:$names}"
	check "$(tag) control: the person reaches at least 16 of them outside ($reach)" test "$reach" -ge 16
	check "$(tag) none of the $reach is reachable inside ($inside${names:+:$names})" test "$inside" = 0
	for name in "personality(ADDR_NO_RANDOMIZE)" sysfs kcmp get_mempolicy; do
		if kernel_reached "${outside[$name]:-}"; then
			check "$(tag) $name refused inside (${within[$name]:-none})" \
				test "${within[$name]:-}" = EPERM
		fi
	done
	kernel_tools
}

# Ordinary programs still work under the filter: each prints "NAME ok" when it did its job.
KERNEL_TOOLS='
set -u
cd "$1"
ok() { echo "$1 ok"; }
printf "int main(void){return 42;}\n" > t.c
gcc -o t t.c 2>/dev/null; ./t; [ $? = 42 ] && ok gcc
printf "all:\n\t@echo made\n" > Makefile
[ "$(make -s 2>/dev/null)" = made ] && ok make
python3 -c "import subprocess, multiprocessing, tempfile, os, sys
if not sys.argv[1]:  # a pool needs POSIX semaphores, refused in the host namespaces (README)
    with multiprocessing.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
with tempfile.TemporaryDirectory(dir=\".\") as d: open(os.path.join(d, \"f\"), \"w\").write(\"x\")
sys.exit(subprocess.run([\"true\"]).returncode)" "$2" && ok python3
git status --porcelain >/dev/null && git add t.c && git commit -qm t && ok git
mkdir -p tardir/sub && echo x > tardir/sub/f && chmod 755 tardir/sub/f &&
	tar -cf t.tar tardir && rm -rf tardir && tar -xf t.tar &&
	[ "$(stat -c %a tardir/sub/f)" = 755 ] && ok tar
[ -n "$(ps -e -o pid= | head -1)" ] && ok ps
strace -f -o /dev/null true 2>/dev/null && ok strace
gdb -q -batch -ex run --args ./t >/dev/null 2>&1 && ok gdb
curl -sS "file://$1/t.c" | grep -q main && ok curl
if command -v node >/dev/null; then node -e "require(\"child_process\").execSync(\"true\")" && ok node; fi
cp -a t.c t2.c && install -m 644 t.c t3.c && mkdir -p d1/d2 && ok coreutils
'

kernel_tools() {
	local out tool
	out=$(sbx -- /bin/bash -c "$KERNEL_TOOLS" tools "$RW" "$ATK_HOST_NS" 2>&1)
	for tool in gcc make python3 git tar ps strace gdb curl coreutils; do
		check "$(tag) control: $tool works inside" grep -qx "$tool ok" <<<"$out"
	done
	if command -v node >/dev/null; then
		check "$(tag) control: node works inside" grep -qx "node ok" <<<"$out"
	fi
	as_person rm -rf "$RW"/t "$RW"/t.c "$RW"/t2.c "$RW"/t3.c "$RW"/Makefile "$RW"/tardir \
		"$RW"/t.tar "$RW"/d1 2>/dev/null
}
