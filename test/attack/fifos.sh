# FIFOs in session folders.  A FIFO is a pipe to whoever opens it: the person's reader
# (a log follower, `cat pipe`) or writer outside, or a tool of the person's that later
# opens a name the agent left as a FIFO and waits forever (`make` reading `Makefile`).
# Inside, no FIFO of a session folder may be opened, and none may be made there; the
# private folder keeps them (GNU make 4.4's jobserver makes its FIFO in TMPDIR).  The
# person's FIFOs are made writable by all (mode 0666), so that under `account` the
# account's default ACL entry would open them as far as the mode goes: only the wall
# refuses.
ATTACKS="$ATTACKS fifos"

# The person's end, outside, never blocking: `reader PATH OUT` opens the FIFO for reading
# and notes what arrives; `writer PATH OUT` opens it read-write and puts PERSON in it,
# then notes whether someone took it.  Makes PATH (0666) when missing; once WAIT exists
# when given (the session is open); until OUT.stop.
FIFO_PEER_PY='
import os, sys, time
op, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
wait = sys.argv[4] if len(sys.argv) > 4 else ""
while wait and not os.path.exists(wait) and not os.path.exists(out + ".stop"):
    time.sleep(0.02)
if not os.path.exists(path):
    os.mkfifo(path)
    os.chmod(path, 0o666)
fd = os.open(path, (os.O_RDONLY if op == "reader" else os.O_RDWR) | os.O_NONBLOCK)
if op == "writer":
    os.write(fd, b"PERSON\n")
open(out + ".ready", "w").close()
got = b""
while not os.path.exists(out + ".stop"):
    if op == "reader":
        try:
            got += os.read(fd, 100)
        except BlockingIOError:
            pass
    time.sleep(0.02)
if op == "writer":
    try:
        got = os.read(fd, 100)
    except BlockingIOError:
        got = b"TAKEN"
open(out, "w").write(got.decode(errors="replace").strip() or "NOTHING")
'
# Inside (or the person's control).  write PATH WHAT [WAIT] / read PATH [WAIT]: made WAIT,
# waits for PATH, opens it without blocking; mkfifo PATH; each prints one line: OK, OK:<read>,
# or the errno's name.
FIFO_IN_PY='
import errno, os, sys, time
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))
op, path = sys.argv[1], sys.argv[2]
wait = sys.argv[4] if op == "write" and len(sys.argv) > 4 else \
       sys.argv[3] if op == "read" and len(sys.argv) > 3 else ""
if wait:
    open(wait, "w").close()
    for _ in range(3000):
        if os.path.exists(path):
            break
        time.sleep(0.01)
    time.sleep(0.3) # the peer opens its end
try:
    if op == "mkfifo":
        os.mkfifo(path)
        print("OK")
    elif op == "write":
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, sys.argv[3].encode() + b"\n")
        print("OK")
    else:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        got = b""
        for _ in range(50):
            try:
                got += os.read(fd, 100)
            except BlockingIOError:
                pass
            time.sleep(0.01)
        print("OK:" + got.decode(errors="replace").strip())
except OSError as e:
    print(name(e))
'

fifo_peer_start() { # reader|writer PATH OUT [WAIT]: the person's end, in the background
	rm -f "$3" "$3.ready" "$3.stop"
	as_person "$PY" -c "$FIFO_PEER_PY" "$@" &
	FIFO_PEER=$!
	[ $# -gt 3 ] && return 0 # made once the session is open
	for _ in $(seq 200); do [ -e "$3.ready" ] && return 0; sleep 0.05; done
	return 1
}
fifo_peer_stop() { # OUT: FIFO_GOT, what the person's end got (or whether PERSON was taken)
	as_person touch "$1.stop"
	wait "$FIFO_PEER" 2>/dev/null
	FIFO_GOT=$(cat "$1" 2>/dev/null)
	rm -f "$1" "$1.ready" "$1.stop"
}

fifo_in() { sbx -- "$PY" -c "$FIFO_IN_PY" "$@" 2>&1; }

attack_fifos() {
	local out got dir
	as_person mkdir -p "$RW/sub"

	# The person's FIFOs, there before the session opened: a reader and a writer.
	if fifo_peer_start reader "$RW/sub/log.fifo" "$OUT/rd.out"; then
		out=$(as_person "$PY" -c "$FIFO_IN_PY" write "$RW/sub/log.fifo" CONTROL 2>&1)
		check "$(tag) control: the person writes into the FIFO outside ($out)" test "$out" = OK
		if partial files.read_write_fifos "a FIFO of the person's in the read-write folder"; then
			:
		else
			out=$(fifo_in write "$RW/sub/log.fifo" owstest-leak)
			check "$(tag) a FIFO of the person's in the read-write folder cannot be written into ($out)" \
				test "$out" = EACCES
		fi
		fifo_peer_stop "$OUT/rd.out"; got=$FIFO_GOT
		check "$(tag) ... and its reader outside got only the person's line ($got)" test "$got" = CONTROL
	else
		not_ok "$(tag) premise: the person reads a FIFO in the read-write folder"
	fi
	if fifo_peer_start writer "$RW/feed.fifo" "$OUT/wr.out"; then
		if ! partial files.read_write_fifos "a FIFO of the person's in the read-write folder"; then
			out=$(fifo_in read "$RW/feed.fifo")
			check "$(tag) a FIFO of the person's in the read-write folder cannot be read from ($out)" \
				test "$out" = EACCES
		fi
		fifo_peer_stop "$OUT/wr.out"; got=$FIFO_GOT
		check "$(tag) ... and what its writer outside put in stays there ($got)" test "$got" = PERSON
	else
		not_ok "$(tag) premise: the person writes into a FIFO in the read-write folder"
	fi
	as_person rm -f "$RW/sub/log.fifo" "$RW/feed.fifo"

	# Left behind by the agent under a name the person's tools open: none can be made,
	# directly, in a new folder, or made in the private folder and moved in.
	out=$(fifo_in mkfifo "$RW/Makefile")
	check "$(tag) the agent cannot make a FIFO in the read-write folder ($out)" test "$out" = EACCES
	out=$(sbx -- sh -c 'mkdir -p "$1/new" && mkfifo "$1/new/package.json" 2>&1; echo "rc=$?"' sh "$RW")
	like "$out" "rc=1" "$(tag) ... nor in a folder it makes there ($(tr '\n' ' ' <<<"$out"))"
	out=$(sbx -- sh -c 'mkfifo "$TMPDIR/jobserver" && echo made && mv "$TMPDIR/jobserver" "$1/moved" 2>&1; echo "rc=$?"' sh "$RW")
	like "$out" "made" "$(tag) control: a FIFO is made in the private folder (TMPDIR), as make's jobserver does"
	like "$out" "rc=1" "$(tag) ... but cannot be moved into the read-write folder ($(tr '\n' ' ' <<<"$out"))"
	if [ -z "$ATK_HOST_NS" ]; then # else /tmp is the host's, out of reach
		out=$(sbx -- sh -c 'mkfifo /tmp/owstest-fifo && echo made; rm -f /tmp/owstest-fifo' 2>&1)
		check "$(tag) control: a FIFO is made in /tmp ($out)" test "$out" = made
	fi
	got=$(as_person find "$RW" -type p)
	check "$(tag) no FIFO is left in the read-write folder (${got:-none})" test -z "$got"
	as_person rm -rf "$RW/new" "$RW/Makefile" "$RW/moved"

	# A read-write folder under /tmp: the sandbox's /tmp lies above it, so /tmp loses the
	# right too, and the private folder (TMPDIR, in /tmp) keeps it by a rule of its own.
	dir=$(as_person mktemp -d /tmp/owstest-fifos.XXXXXX)
	out=$(timeout -s KILL 60 runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$PHOME" USER="$PERSON" OWSBX_CONFIG="$CONF" "$BIN/owsbx" run --provider "$P" \
		--net "$NET" --rw "$dir" -- sh -c 'mkfifo "$TMPDIR/a" && echo tmpdir-ok
			mkfifo "$1/b" 2>/dev/null || echo folder-refused
			mkfifo /tmp/c 2>/dev/null || echo tmp-refused' sh "$dir" 2>&1 {OWS_LOCK_FD}<&-)
	check "$(tag) a read-write folder under /tmp: no FIFO in it nor in /tmp, one in TMPDIR ($(tr '\n' ' ' <<<"$out"))" \
		test "$(tr '\n' ' ' <<<"$out")" = "tmpdir-ok folder-refused tmp-refused "
	as_person rm -rf "$dir"

	# Made by the person after the session opened, while a command runs: no mount can
	# cover it any more.  Opening it is refused: for writing in the read-only folder by
	# Landlock too, otherwise by the command's reaper, which makes its opens.
	local where promise
	for where in "$RO" "$RW"; do
		promise=files.read_write_fifos
		[ "$where" = "$RO" ] && promise=files.read_only_channels
		fifo_peer_start reader "$where/late.fifo" "$OUT/late.out" "$RW/.owstest-waiting"
		out=$(fifo_in write "$where/late.fifo" owstest-leak "$RW/.owstest-waiting")
		fifo_peer_stop "$OUT/late.out"; got=$FIFO_GOT
		as_person rm -f "$where/late.fifo" "$RW/.owstest-waiting"
		# Landlock alone refuses writing in the read-only folder.
		if [ "$where" = "$RO" ] || ! partial $promise "a FIFO made in the ${where##*/} folder while a command runs"; then
			check "$(tag) a FIFO the person makes in the ${where##*/} folder while a command runs cannot be written into ($out)" \
				test "$out" = EACCES
			check "$(tag) ... and its reader got nothing ($got)" test "$got" = NOTHING
		fi
		partial $promise "reading a FIFO made in the ${where##*/} folder while a command runs" && continue
		fifo_peer_start writer "$where/late.fifo" "$OUT/late.out" "$RW/.owstest-waiting"
		out=$(fifo_in read "$where/late.fifo" "$RW/.owstest-waiting")
		fifo_peer_stop "$OUT/late.out"; got=$FIFO_GOT
		as_person rm -f "$where/late.fifo" "$RW/.owstest-waiting"
		check "$(tag) a FIFO the person makes in the ${where##*/} folder while a command runs cannot be read from ($out)" \
			test "$out" = EACCES
		check "$(tag) ... and what its writer put in stays there ($got)" test "$got" = PERSON
	done
	[ -z "$ATK_HOST_NS" ] && attack_fifos_reaper
}

# The opens that the reaper makes for a command: the command's own /dev/stdout, pipes and
# FIFOs still open as they did, a FIFO of its own makes its writer wait for a reader and
# its reader for a writer, what /proc/self leads to is the command's own, and nothing
# leads to the reaper's own /proc entries (its memory is a copy of the host's): not by
# number, and not through a link to /proc/self, which the reaper resolves as itself.
attack_fifos_reaper() {
	local out
	# Its stdout a pipe made inside: one of the harness's (root's, mode 0600) is not the
	# person's to open again.
	out=$(sbx -- bash -c '{ echo own-stdout > /dev/stdout; echo own-stderr > /dev/stderr
		echo fd1 >> /proc/self/fd/1; echo sub > >(cat); wait
		mkfifo "$TMPDIR/q"; (sleep 0.3; cat "$TMPDIR/q") & echo waited > "$TMPDIR/q"; wait
		} 2>&1 | cat' 2>&1)
	check "$(tag) control: the command writes into its own stdout, stderr, pipes and FIFOs ($(tr '\n' ' ' <<<"$out"))" \
		test "$(tr '\n' ' ' <<<"$out")" = "own-stdout own-stderr fd1 sub waited "
	# Readers: one that waits for its writer, two FIFOs that answer each other (each
	# side's open must return when the other end comes, not when data does), stdin.
	out=$(sbx -- bash -c 'cd "$TMPDIR" && mkfifo a f1 f2
		(sleep 0.3; echo late-writer > a) & cat a; wait
		(exec 3<f1 4>f2; read -r x <&3; echo "answer-$x" >&4) &
		(exec 5>f1 6<f2; echo ping >&5; read -r y <&6; echo "$y"); wait
		echo stdin | cat /dev/stdin' 2>&1)
	check "$(tag) control: readers of the command's own FIFOs wait for their writer, as outside ($(tr '\n' ' ' <<<"$out"))" \
		test "$(tr '\n' ' ' <<<"$out")" = "late-writer answer-ping stdin "
	# Links into /proc/self lead to the command's own entries, as they do for it.
	out=$(sbx -- "$PY" -c '
import os
own = open("/proc/self/mounts").read()
same = open("/etc/mtab").read() == own and open("/proc/mounts").read() == own
print("same" if same else "differ", open("/proc/net/dev").readline().split()[0],
      os.path.realpath("/proc/self") == "/proc/%d" % os.getpid())' 2>&1)
	check "$(tag) control: /etc/mtab, /proc/mounts and /proc/net read as the command's own ($out)" \
		test "$out" = "same Inter-| True"
	# The reaper resolves names for the command: a magic link of /proc (a process's
	# descriptors, executable, folders) it follows only for a process the command may
	# look into, never its own, not through a link planted in the folder nor a second
	# magic link; the command's own and a sibling's it may.
	out=$(sbx -- "$PY" -c '
import os, subprocess, sys
me = os.getpid()
sib = subprocess.Popen(["sleep", "30"], stdout=open(sys.argv[1] + "/sib.out", "w"))
got = [open("/proc/self/exe", "rb").read(4) == b"\x7fELF",
       open("/proc/%d/cwd/sib.out" % me).read() == "",
       os.path.exists("/proc/%d/fd/1" % sib.pid) and open("/proc/%d/fd/1" % sib.pid).read() == "",
       open("/proc/%d/root/etc/hostname" % me).read() != ""]
sib.kill()
print(" ".join(str(g) for g in got))' "$RW" 2>&1)
	check "$(tag) control: the command reads through its own and a sibling's /proc links ($out)" \
		test "$out" = "True True True True"
	as_person rm -f "$RW/sib.out"
	as_person ln -sfn /proc/self/mem "$RW/selfmem"
	as_person ln -sfn /proc/self/environ "$RW/selfenv"
	out=$(sbx -- "$PY" -c '
import os, sys
rw, reaper = sys.argv[1], os.getppid()
os.symlink("/proc/%d/exe" % reaper, rw + "/rexe")
os.symlink("/proc/%d/root/etc/hostname" % reaper, rw + "/rroot")
names = ["/proc/%d/mem" % reaper, "/proc/%d/task/%d/mem" % (reaper, reaper),
         "/proc/%d/environ" % reaper, rw + "/selfmem", rw + "/selfenv",
         "/proc/%d/exe" % reaper, "/proc/%d/task/%d/exe" % (reaper, reaper),
         "/proc/%d/cwd/." % reaper, "/proc/%d/root/etc/hostname" % reaper,
         "/proc/%d/map_files" % reaper, "/proc/self/root/proc/%d/exe" % reaper,
         "/proc/1/exe", "/proc/1/root/etc/hostname", rw + "/rexe", rw + "/rroot"]
names += ["/proc/%d/fd/%d" % (reaper, fd) for fd in range(16)]
opened, own = [], []
for name in names:
    for flags in (os.O_RDONLY, os.O_RDWR, os.O_WRONLY, os.O_WRONLY | os.O_CREAT):
        try:
            fd = os.open(name, flags)
        except OSError:
            continue
        at = os.readlink("/proc/self/fd/%d" % fd)
        (own if at.startswith("/proc/%d/" % os.getpid()) else opened).append(name)
        os.close(fd)
print(" ".join(opened) or "none", "own" if rw + "/selfmem" in own and rw + "/selfenv" in own else own)' "$RW" 2>&1)
	check "$(tag) the reaper's memory, environment, executable, folders and descriptors cannot be opened; links to /proc/self open the command's own ($out)" \
		test "$out" = "none own"
	as_person rm -f "$RW/selfmem" "$RW/selfenv" "$RW/rexe" "$RW/rroot"
	# openat2 keeps its flags in memory, out of a filter's sight: refused as unknown.
	out=$(sbx -- "$PY" -c '
import ctypes, errno, struct
libc = ctypes.CDLL(None, use_errno=True)
how = struct.pack("QQQ", 1, 0, 0) # O_WRONLY
nr = {"x86_64": 437, "aarch64": 437}[__import__("platform").machine()]
r = libc.syscall(nr, -100, b"/dev/null", how, len(how))
print(errno.errorcode.get(ctypes.get_errno(), r) if r < 0 else "opened")' 2>&1)
	check "$(tag) openat2 is refused as unknown, ENOSYS, and its callers use openat ($out)" test "$out" = ENOSYS
}
