#!/bin/bash
# Opens, made by the call's reaper (lib/linux/wall/channels.c): a command sees what it
# would see outside.  One script of cases (flags, modes and umask, links,
# folders by dirfd and by working folder, /dev/fd, pipes, a FIFO of its own whose writer
# waits for its reader, errors, descriptor limits, threads) runs as the person outside,
# the control, and inside a session on the same kind of folder; each case must answer
# the same.  Only what the reaper cannot do differs, and is checked as such: a process
# that is not dumpable cannot open by name (EACCES).
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK

OPENS_PY='
import ctypes, errno, os, platform, resource, stat, sys, threading, time
base = sys.argv[1]
os.chdir(base)
libc = ctypes.CDLL(None, use_errno=True)
W, C, T, A = os.O_WRONLY, os.O_CREAT, os.O_TRUNC, os.O_APPEND

def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def case(label, fn):
    try:
        print(label, fn())
    except OSError as e:
        print(label, name(e))

def write(path, data, flags=W | C | T, mode=0o666, **kw):
    fd = os.open(path, flags, mode, **kw)
    os.write(fd, data)
    os.close(fd)

def read(path):
    with open(path, "rb") as f:
        return f.read().decode()

def created_mode():
    os.umask(0o027)
    write("made", b"x", mode=0o666)
    os.umask(0o022)
    return oct(stat.S_IMODE(os.stat("made").st_mode))

def appended():
    write("log", b"a\n")
    write("log", b"b\n", W | A)
    return read("log").replace("\n", ",")

def truncated():
    write("t", b"long content")
    write("t", b"s")
    return read("t")

def rdwr():
    write("rw", b"0123456789")
    fd = os.open("rw", os.O_RDWR)
    first = os.read(fd, 3)
    os.write(fd, b"X")
    os.close(fd)
    return first.decode() + ":" + read("rw")

def by_dirfd():
    os.makedirs("sub/deeper", exist_ok=True)
    d = os.open("sub", os.O_RDONLY | os.O_DIRECTORY)
    write("deeper/f", b"via dirfd", dir_fd=d)
    os.close(d)
    return read("sub/deeper/f")

def by_cwd():
    os.makedirs("cwd", exist_ok=True)
    os.chdir("cwd")
    try:
        write("f", b"via cwd")
    finally:
        os.chdir(base)
    return read("cwd/f")

def nofollow():
    if not os.path.lexists("lnk"):
        os.symlink("target", "lnk")
    os.open("lnk", W | C | os.O_NOFOLLOW)

def through_dangling():
    if not os.path.lexists("dangling"):
        os.symlink("made-through-link", "dangling")
    write("dangling", b"through")
    return read("made-through-link")

def cloexec():
    # openat itself: os.open adds O_CLOEXEC to every open
    nr = {"x86_64": 257, "aarch64": 56}[platform.machine()]
    a = libc.syscall(nr, -100, b"ce", W | C | os.O_CLOEXEC, 0o644)
    b = libc.syscall(nr, -100, b"ce", W, 0)
    if a < 0 or b < 0:
        raise OSError(ctypes.get_errno(), "openat")
    r = "%d%d" % (os.get_inheritable(a), os.get_inheritable(b))
    os.close(a)
    os.close(b)
    return r

def read_only_file():
    write("ro-file", b"x")
    os.chmod("ro-file", 0o444)
    try:
        os.open("ro-file", W)
    finally:
        os.chmod("ro-file", 0o644)

def dev_fd():
    r, w = os.pipe()
    write("/dev/fd/%d" % w, b"dev-fd ", W)
    write("/proc/self/fd/%d" % w, b"proc-self", W)
    os.close(w)
    got = os.read(r, 100).decode()
    os.close(r)
    write("/dev/null", b"gone")
    return got

def fifo_waits():
    p = os.path.join(os.environ.get("TMPDIR", "/tmp"), "opens-fifo")
    if os.path.exists(p):
        os.unlink(p)
    os.mkfifo(p)
    got = []
    def reader():
        time.sleep(0.3)
        with open(p, "rb") as f:
            got.append(f.read())
    th = threading.Thread(target=reader)
    th.start()
    write(p, b"waited", W)
    th.join()
    try:
        os.open(p, W | os.O_NONBLOCK)
        nonblock = "opened"
    except OSError as e:
        nonblock = name(e)
    os.unlink(p)
    return got[0].decode() + "," + nonblock

def reader_waits():
    # The reader of a FIFO of its own waits for its writer; one without O_NONBLOCK
    # returns at once.
    p = os.path.join(os.environ.get("TMPDIR", "/tmp"), "opens-rfifo")
    if os.path.exists(p):
        os.unlink(p)
    os.mkfifo(p)
    def writer():
        time.sleep(0.3)
        write(p, b"came", W)
    th = threading.Thread(target=writer)
    th.start()
    with open(p, "rb") as f:
        got = f.read().decode()
    th.join()
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    try:
        empty = os.read(fd, 10)
    finally:
        os.close(fd)
    os.unlink(p)
    return got + "," + (empty.decode() or "eof")

def reads():
    write("r", b"text")
    d = os.open("sub", os.O_RDONLY) # a folder, without O_DIRECTORY
    os.close(d)
    got = [read("r"), read("/proc/self/comm").strip() != "", read("/dev/null") == ""]
    for path, flags in (("lnk", os.O_RDONLY | os.O_NOFOLLOW), ("nothing-here", os.O_RDONLY),
                        ("x" * 5000, os.O_RDONLY)):
        try:
            os.close(os.open(path, flags))
            got.append("opened")
        except OSError as e:
            got.append(name(e))
    return ",".join(str(g) for g in got)

def creat():
    if platform.machine() != "x86_64":
        return "not-x86-64" # creat(2) is x86-64s alone
    fd = libc.syscall(85, b"creat-file", 0o640)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "creat")
    os.close(fd)
    return oct(stat.S_IMODE(os.stat("creat-file").st_mode))

def fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (16, hard))
    fds = []
    try:
        while True:
            fds.append(os.open("many", W | C))
    except OSError as e:
        return name(e)
    finally:
        for fd in fds:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

def threads():
    bad = []
    def worker(i):
        for j in range(200):
            try:
                write("th-%d" % i, b"%d" % j)
            except OSError as e:
                bad.append(name(e))
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return "ok" if not bad and all(read("th-%d" % i) == "199" for i in range(8)) else bad[:3]

case("created-mode", created_mode)
case("appended", appended)
case("truncated", truncated)
case("read-write", rdwr)
case("by-dirfd", by_dirfd)
case("by-cwd", by_cwd)
case("nofollow-link", nofollow)
case("through-dangling-link", through_dangling)
case("cloexec", cloexec)
case("a-folder", lambda: os.open("sub", W))
case("missing", lambda: os.open("nothing-here", W))
case("missing-folder", lambda: os.open("no-such-dir/f", W | C))
case("read-only-file", read_only_file)
case("too-long", lambda: os.open("x" * 5000, W | C))
case("dev-fd", dev_fd)
case("own-fifo", fifo_waits)
case("own-fifo-reader", reader_waits)
case("reads", reads)
case("creat", creat)
case("fd-limit", fd_limit)
case("threads", threads)
case("exclusive", lambda: (write("excl", b"x", W | C | os.O_EXCL), "made")[1])
'

as_user mkdir -p "$W/outside/tmp" "$W/inside"
as_user env TMPDIR="$W/outside/tmp" "$PY" -c "$OPENS_PY" "$W/outside" >"$TU_TMP/out.txt" 2>&1
control=$(cat "$TU_TMP/out.txt")
like "$control" "^created-mode 0o640" "control: the cases run outside ($(head -1 <<<"$control"))"
is "$(grep -c . <<<"$control")" 22 "control: all 22 cases answer outside"

sbx run --rw "$W" -- "$PY" -c "$OPENS_PY" "$W/inside"
inside=$SBX_OUT
is "$SBX_RC" 0 "the cases run inside" || sbx_diag | diag
while read -r label want; do
	got=$(awk -v l="$label" '$1 == l { $1 = ""; sub(/^ /, ""); print }' <<<"$inside")
	is "$got" "$want" "inside, as outside: $label ($want)"
done <<<"$control"

# The reaper reads each name in its caller's memory, which the kernel refuses for a
# process that is not dumpable.  prctl(PR_SET_DUMPABLE, 0) is skipped and says it worked,
# so such a process (ssh-agent) goes on opening; one that runs a program it may not read
# (mode 0111) is not dumpable whatever it asks, and its every open by name is refused.
sbx run --rw "$W" -- "$PY" -c '
import ctypes, os
libc = ctypes.CDLL(None)
print(libc.prctl(4, 0, 0, 0, 0), libc.prctl(3, 0, 0, 0, 0)) # PR_SET_DUMPABLE, PR_GET_
for flags in (os.O_WRONLY | os.O_CREAT, os.O_RDONLY):
    try:
        os.close(os.open("nd", flags))
        print("opened")
    except OSError as e:
        print(e.strerror)'
is "$(tr '\n' ' ' <<<"$SBX_OUT")" "0 1 opened opened " \
	"prctl(PR_SET_DUMPABLE, 0) says it worked, the process stays dumpable and opens"
# A Landlock domain the command adds would not bind the reaper that makes its opens: a
# tool that asks is told Landlock is off, as by a kernel booted without it.
LL_PY='import ctypes; l = ctypes.CDLL(None, use_errno=True); l.syscall.restype = ctypes.c_long
r = l.syscall(444, None, 0, 1); print(r if r >= 0 else "errno-%d" % ctypes.get_errno())'
control=$(as_user "$PY" -c "$LL_PY" 2>&1)
sbx run --rw "$W" -- "$PY" -c "$LL_PY"
if [[ "$control" =~ ^[0-9]+$ ]]; then
	is "$SBX_OUT" "errno-95" "Landlock is off inside (EOPNOTSUPP), where outside it is ABI $control"
else
	skip "Landlock inside: outside it answers $control, not an ABI"
fi
sbx run --rw "$W" -- sh -c 'cp /bin/cat "$TMPDIR/cat" && chmod 0111 "$TMPDIR/cat" &&
	"$TMPDIR/cat" /etc/hostname >/dev/null 2>&1; echo "rc=$?"'
is "$SBX_OUT" "rc=127" \
	"a program it may not read (mode 0111) is not dumpable: its opens by name are refused"
sbx run --rw "$W" -- sh -c 'cp /bin/cat "$TMPDIR/cat" && chmod 0500 "$TMPDIR/cat" &&
	"$TMPDIR/cat" /etc/hostname >/dev/null 2>&1; echo "rc=$?"'
is "$SBX_OUT" "rc=0" "control: the same program, readable (mode 0500), runs"

done_testing
