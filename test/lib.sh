# test/lib.sh: TAP helpers for the shell tests. Source it first: . "$(dirname "$0")/../lib.sh"
# shellcheck disable=SC2089,SC2090 # PROBE is a python program, passed whole
#
#   pass DESC                      an "ok" line
#   fail DESC [DIAG...]            a "not ok" line, with diagnostics
#   ok DESC CMD...                 passes when CMD exits 0
#   not_ok DESC CMD...             passes when CMD exits non-zero
#   is GOT EXPECTED DESC           string equality
#   isnt GOT UNEXPECTED DESC
#   is_one_of GOT "A B C" DESC     GOT is one of the words
#   like GOT REGEX DESC            bash ERE match
#   unlike GOT REGEX DESC
#   skip REASON [N]                N skipped tests (default 1)
#   diag MSG...                    "# MSG" lines
#   skip_all REASON                "1..0 # SKIP REASON", exit 0
#   bail_out REASON                "Bail out! REASON", exit 255
#   done_testing                   prints the plan "1..N", exits 1 if anything failed
#   need_landlock_abi N WHY [COUNT], need_userns WHY [COUNT], need_legacy_tiocsti WHY [COUNT]
#                                  skip the file (no COUNT) or COUNT tests, with the reason,
#                                  where the kernel lacks it; landlock_abi, have_userns...
#                                  (test/features.sh)
#
# The output is plain TAP (version 12): test/run.sh counts the lines.

TAP_N=0
TAP_FAIL=0
TAP_SKIP=0

OWSTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OWSTEST_ROOT=$(cd "$OWSTEST_DIR/.." && pwd)
export OWSTEST_DIR OWSTEST_ROOT

# The system python, never a shim from root's PATH: it is what the sandbox sees too.
PY=/usr/bin/python3

. "$OWSTEST_DIR/features.sh"
. "$OWSTEST_DIR/hosts.sh"

diag() {
	local l
	for l in "$@"; do
		while IFS= read -r line; do
			printf '# %s\n' "$line"
		done <<<"$l"
	done
}

pass() {
	TAP_N=$((TAP_N + 1))
	printf 'ok %d - %s\n' "$TAP_N" "$1"
}

fail() {
	local d=$1
	shift
	TAP_N=$((TAP_N + 1))
	TAP_FAIL=$((TAP_FAIL + 1))
	printf 'not ok %d - %s\n' "$TAP_N" "$d"
	[ $# -gt 0 ] && diag "$@"
	return 0
}

ok() {
	local d=$1
	shift
	if "$@"; then pass "$d"; else fail "$d" "command failed ($?): $*"; fi
}

not_ok() {
	local d=$1
	shift
	if "$@"; then fail "$d" "command unexpectedly succeeded: $*"; else pass "$d"; fi
}

is() {
	if [ "$1" = "$2" ]; then pass "$3"; else fail "$3" "     got: '$1'" "expected: '$2'"; fi
}

isnt() {
	if [ "$1" != "$2" ]; then pass "$3"; else fail "$3" "     got: '$1'" "expected anything else"; fi
}

is_one_of() {
	local w
	for w in $2; do
		if [ "$1" = "$w" ]; then
			pass "$3"
			return 0
		fi
	done
	fail "$3" "     got: '$1'" "expected one of: $2"
}

like() {
	if [[ $1 =~ $2 ]]; then pass "$3"; else fail "$3" "     got: '$1'" "expected to match: $2"; fi
}

unlike() {
	if [[ $1 =~ $2 ]]; then fail "$3" "     got: '$1'" "expected not to match: $2"; else pass "$3"; fi
}

skip() {
	local n=${2:-1} i
	for ((i = 0; i < n; i++)); do
		TAP_N=$((TAP_N + 1))
		TAP_SKIP=$((TAP_SKIP + 1))
		printf 'ok %d # SKIP %s\n' "$TAP_N" "$1"
	done
}

skip_all() {
	printf '1..0 # SKIP %s\n' "$1"
	exit 0
}

bail_out() {
	printf 'Bail out! %s\n' "$1"
	exit 255
}

done_testing() {
	printf '1..%d\n' "$TAP_N"
	[ "$TAP_FAIL" -eq 0 ] || exit 1
	exit 0
}

# poll SECONDS CMD...: run CMD every 50 ms until it succeeds or the deadline passes.
# Bounded, never a fixed sleep for correctness.
poll() {
	local secs=$1 end
	shift
	end=$(($(date +%s%N) + secs * 1000000000))
	while :; do
		"$@" && return 0
		[ "$(date +%s%N)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# alive PID: the process exists and is not a zombie (kill -0 says yes to zombies).
alive() {
	local st
	st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# rand_port: a port in 20000-40000 nobody listens on right now.
rand_port() {
	local p i
	for ((i = 0; i < 50; i++)); do
		p=$((20000 + RANDOM % 20001))
		if ! ss -Htan "sport = :$p" 2>/dev/null | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	echo $((20000 + RANDOM % 20001))
}

rand_hex() { od -An -N"${1:-3}" -tx1 /dev/urandom | tr -d ' \n'; }

# PROBE: a python program run inside the sandbox for precise attacks. Each argument is one
# probe ("op arg..."); it prints one line per probe, in order: "OK", "OK:<data>" or the
# errno name (EPERM, EACCES, ENOENT...). Raw syscalls go through ctypes so that python's
# own socket module adds nothing.
#   socket FAMILY TYPE[|nonblock|cloexec] [PROTO]   families: unix inet inet6 packet netlink vsock or a number
#   uring                         io_uring_setup(1, params) (syscall 425)
#   unshare FLAGS                 unshare(2) with a number, e.g. 0x40000000 (CLONE_NEWNET)
#   connect_unix PATH | connect_abstract NAME | connect_tcp HOST PORT | connect_tcp6 HOST PORT
#   send_udp HOST PORT
#   read PATH | write PATH | create PATH | append PATH | listdir PATH | stat PATH | lstat PATH
#   mkdir PATH | unlink PATH | rename FROM TO | link FROM TO | symlink TARGET PATH | chmod PATH MODE
#   int80 NR [ARGS] | x32 NR [ARGS]   an i386 (int 0x80) or x32 system call, in a child:
#                                 OK, the errno name, or SIG<n> when the child was killed
#   utime PATH                    set atime/mtime to 0 (Landlock has no right for it)
#   kill PID SIG                  os.kill
#   fd N                          what inherited descriptor N is (readlink) or EBADF
#   fdread N REL                  openat(N, REL) and read
#   setuid UID
#   env NAME                      value of NAME or UNSET
#   clone3 FLAGS                  raw clone3 (the child exits at once), e.g. 0x10000000 (NEWUSER)
#   keyadd DESC DATA | keyread SERIAL | keysearch DESC | keyinvalidate SERIAL   user keyring
#   tiocsti FD CHAR | isatty FD   push a character into the terminal's input
#   status KEY                    the value of KEY in /proc/self/status
# shellcheck disable=SC2016
PROBE='
import os, sys, socket, errno, ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
FAM = {"unix": 1, "inet": 2, "inet6": 10, "packet": 17, "netlink": 16, "vsock": 40,
       "bluetooth": 31, "can": 29, "alg": 38, "xdp": 44, "tipc": 30, "rds": 21,
       "key": 15, "qipcrtr": 42, "smc": 43, "rxrpc": 33, "llc": 26, "ax25": 3}
TYP = {"stream": 1, "dgram": 2, "raw": 3, "seqpacket": 5, "nonblock": 0o4000,
       "cloexec": 0o2000000}
def en(n):
    return errno.errorcode.get(n, "E%d" % n)
def num(s, table):
    v = 0
    for part in s.split("|"):
        v |= table[part] if part in table else int(part, 0)
    return v
def recvs(s):
    s.settimeout(1)
    try:
        d = s.recv(200)
    except OSError:
        d = b""
    return " ".join(d.decode(errors="replace").split())
def probe(a):
    op = a[0]
    if op == "socket":
        fd = libc.socket(num(a[1], FAM), num(a[2], TYP), int(a[3], 0) if len(a) > 3 else 0)
        if fd < 0:
            return en(ctypes.get_errno())
        os.close(fd)
        return "OK"
    if op == "uring":
        params = ctypes.create_string_buffer(120)
        fd = libc.syscall(425, 1, params)
        if fd < 0:
            return en(ctypes.get_errno())
        os.close(fd)
        return "OK"
    if op == "unshare":
        r = libc.unshare(int(a[1], 0))
        return "OK" if r == 0 else en(ctypes.get_errno())
    if op == "connect_unix" or op == "connect_abstract":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(a[1] if op == "connect_unix" else "\0" + a[1])
        return "OK:" + recvs(s)
    if op == "connect_tcp" or op == "connect_tcp6":
        s = socket.socket(socket.AF_INET if op == "connect_tcp" else socket.AF_INET6, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect((a[1], int(a[2])))
        return "OK:" + recvs(s)
    if op == "send_udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"owstest", (a[1], int(a[2])))
        return "OK"
    if op == "read":
        with open(a[1], "rb") as f:
            return "OK:" + f.read(300).decode(errors="replace").replace("\n", " ").strip()
    if op == "write":
        with open(a[1], "w") as f:
            f.write("owstest\n")
        return "OK"
    if op == "append":
        with open(a[1], "a") as f:
            f.write("owstest\n")
        return "OK"
    if op == "create":
        os.close(os.open(a[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        return "OK"
    if op == "listdir":
        return "OK:" + " ".join(sorted(os.listdir(a[1])))
    if op == "stat":
        os.stat(a[1])
        return "OK"
    if op == "lstat":
        os.lstat(a[1])
        return "OK"
    if op == "mkdir":
        os.mkdir(a[1])
        return "OK"
    if op == "unlink":
        os.unlink(a[1])
        return "OK"
    if op == "rename":
        os.rename(a[1], a[2])
        return "OK"
    if op == "link":
        os.link(a[1], a[2])
        return "OK"
    if op == "symlink":
        os.symlink(a[1], a[2])
        return "OK"
    if op == "chmod":
        os.chmod(a[1], int(a[2], 8))
        return "OK"
    if op == "int80" or op == "x32":
        # a 32-bit (int 0x80) or x32 system call, in a child so that a seccomp kill shows
        nr, args = int(a[1], 0), [int(x, 0) for x in a[2:]] + [0, 0, 0]
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            if op == "x32":
                r = libc.syscall(0x40000000 | nr, args[0], args[1], args[2])
                r = r if r >= 0 else -ctypes.get_errno()
            else:
                import mmap, struct
                code = (b"\x53\xb8" + struct.pack("<i", nr) + b"\xbb" + struct.pack("<i", args[0]) +
                        b"\xb9" + struct.pack("<i", args[1]) + b"\xba" + struct.pack("<i", args[2]) +
                        b"\xcd\x80\x5b\xc3")
                m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
                m.write(code)
                r = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
            os.write(wfd, str(r).encode())
            os._exit(0)
        os.close(wfd)
        out = os.read(rfd, 64).decode()
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st):
            return "SIG%d" % os.WTERMSIG(st)
        r = int(out)
        return "OK" if r >= 0 else en(-r)
    if op == "utime":
        os.utime(a[1], (0, 0))
        return "OK"
    if op == "kill":
        os.kill(int(a[1]), int(a[2]))
        return "OK"
    if op == "fd":
        return "OK:" + os.readlink("/proc/self/fd/%d" % int(a[1])) if os.fstat(int(a[1])) else "OK"
    if op == "fdread":
        fd = os.open(a[2], os.O_RDONLY, dir_fd=int(a[1]))
        return "OK:" + os.read(fd, 300).decode(errors="replace").replace("\n", " ").strip()
    if op == "setuid":
        os.setuid(int(a[1]))
        return "OK"
    if op == "env":
        return os.environ.get(a[1], "UNSET")
    if op == "clone3":
        # struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal, stack,
        # stack_size, tls, set_tid, set_tid_size, cgroup (11 x u64)
        args = (ctypes.c_uint64 * 11)(int(a[1], 0), 0, 0, 0, 17, 0, 0, 0, 0, 0, 0)
        r = libc.syscall(435, ctypes.byref(args), 88)
        if r == 0:
            os._exit(0)
        if r < 0:
            return en(ctypes.get_errno())
        os.waitpid(r, 0)
        return "OK"
    if op == "keyadd":
        r = libc.syscall(248, b"user", a[1].encode(), a[2].encode(), len(a[2]), -4)
        return ("OK:%d" % r) if r >= 0 else en(ctypes.get_errno())
    if op == "keyread":
        buf = ctypes.create_string_buffer(256)
        r = libc.syscall(250, 11, int(a[1]), buf, 256)
        return ("OK:" + buf.raw[:r].decode(errors="replace")) if r >= 0 else en(ctypes.get_errno())
    if op == "keysearch":
        r = libc.syscall(250, 10, -4, b"user", a[1].encode(), 0)
        return ("OK:%d" % r) if r >= 0 else en(ctypes.get_errno())
    if op == "keyinvalidate":
        r = libc.syscall(250, 21, int(a[1]))
        return "OK" if r >= 0 else en(ctypes.get_errno())
    if op == "tiocsti":
        import fcntl, termios
        fcntl.ioctl(int(a[1]), termios.TIOCSTI, a[2].encode()[:1])
        return "OK"
    if op == "status":
        for l in open("/proc/self/status"):
            if l.startswith(a[1] + ":"):
                return l.split(":", 1)[1].strip()
        return "NONE"
    if op == "isatty":
        return "yes" if os.isatty(int(a[1])) else "no"
    return "BADPROBE"
for arg in sys.argv[1:]:
    try:
        r = probe(arg.split(" "))
    except OSError as e:
        r = en(e.errno) if e.errno else type(e).__name__
    except Exception as e:
        r = "EXC:" + type(e).__name__
    print(r, flush=True)
'
export PROBE PY
