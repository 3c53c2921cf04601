# Unix sockets in session folders that lead to the person's programs.  A pathname socket
# is found by its inode from any namespace, and the kernel asks only for write permission
# on it: a server of the person's whose socket lies in a read-write folder (tmux -S, whose
# run-shell runs anything as the person), or one made there or in a read-only folder after
# the session opened, must be out of reach from inside, by name, through a link, through
# /proc/self/fd, and by datagram; the sandbox's own servers stay usable.  The person's
# sockets are made writable by all (chmod 666), so that under `account` the account's
# default ACL entry lets it connect as far as the file's mode goes: only the wall refuses.
ATTACKS="$ATTACKS sockets"

# The person's end, outside: a stream server (answers PERSON and notes each connection),
# or a datagram one (notes what it receives); once WAIT exists when given (the inside
# command made it: the session is open), until OUT.stop.
SOCK_PEER_PY='
import os, socket, sys, time
kind, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
wait = sys.argv[4] if len(sys.argv) > 4 else ""
while wait and not os.path.exists(wait) and not os.path.exists(out + ".stop"):
    time.sleep(0.02)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
if kind == "stream":
    s.listen(8)
open(out + ".ready", "w").close()
s.settimeout(0.05)
got = []
while not os.path.exists(out + ".stop"):
    try:
        if kind == "stream":
            c = s.accept()[0]
            got.append("CONNECTED")
            c.sendall(b"PERSON\n")
            c.close()
        else:
            got.append(s.recv(100).decode(errors="replace"))
    except socket.timeout:
        pass
open(out, "w").write(" ".join(got) or "NOTHING")
'
# Inside.  connect PATH [WAIT]: made WAIT (the person may now make PATH), waits for PATH,
# connects; sendto PATH; procfd PATH: connects through /proc/self/fd of an O_PATH
# descriptor; serve DIR: a server and its client, both inside, by relative and absolute
# name and through /proc/self/fd, stream and seqpacket, then 300 connections in a row.  One line each: OK:<reply> or the errno's name.
SOCK_IN_PY='
import errno, os, socket, sys, threading, time
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if isinstance(e, OSError) and e.errno else repr(e)
def connect(path):
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(path)
        return "OK:" + c.recv(100).decode().strip()
    except OSError as e:
        return name(e)
op = sys.argv[1]
if op == "connect":
    if len(sys.argv) > 3:
        open(sys.argv[3], "w").close()
        for _ in range(6000):
            if os.path.exists(sys.argv[2]):
                break
            time.sleep(0.01)
    r = connect(sys.argv[2])
    for _ in range(500): # bound, not yet listening
        if r != "ECONNREFUSED":
            break
        time.sleep(0.01)
        r = connect(sys.argv[2])
    print(r)
elif op == "procfd":
    fd = os.open(sys.argv[2], os.O_PATH)
    print(connect("/proc/self/fd/%d" % fd))
elif op == "sendto":
    try:
        d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        d.sendto(b"owstest-leak", sys.argv[2])
        print("SENT")
    except OSError as e:
        print(name(e))
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b"owstest-leak", sys.argv[2])
        print("SENT")
    except OSError as e:
        print(name(e))
elif op == "serve":
    os.chdir(sys.argv[2])
    res = []
    for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
        for path in ("own.sock", os.path.join(sys.argv[2], "own.sock"), "/proc/self/fd/"):
            s = socket.socket(socket.AF_UNIX, kind)
            s.bind("own.sock")
            if path.startswith("/proc"):
                path += str(os.open("own.sock", os.O_PATH))
            s.listen(2)
            def serve():
                c = s.accept()[0]
                c.send(b"INSIDE")
                c.close()
            t = threading.Thread(target=serve)
            t.start()
            c = socket.socket(socket.AF_UNIX, kind)
            try:
                c.connect(path)
                res.append("OK:" + c.recv(100).decode())
            except OSError as e:
                res.append(name(e))
            t.join(5)
            s.close()
            os.unlink("own.sock")
    # Many in a row, while the sockets they leave come and go: none refused.
    s = socket.socket(socket.AF_UNIX)
    s.bind("own.sock")
    s.listen(64)
    def drain():
        for _ in range(300):
            s.accept()[0].close()
    t = threading.Thread(target=drain, daemon=True)
    t.start()
    n = 0
    for _ in range(300):
        c = socket.socket(socket.AF_UNIX)
        try:
            c.connect("own.sock")
            n += 1
        except OSError as e:
            res.append(name(e))
            break
        c.close()
    res.append("%d/300" % n)
    os.unlink("own.sock")
    print(" ".join(res))
'

sock_peer_start() { # stream|dgram PATH OUT [WAIT]: the person's end, in the background
	rm -f "$3" "$3.ready" "$3.stop"
	as_person /usr/bin/python3 -c "$SOCK_PEER_PY" "$@" &
	SOCK_PEER=$!
	[ $# -gt 3 ] && return 0 # made once the session is open
	for _ in $(seq 200); do [ -e "$3.ready" ] && return 0; sleep 0.05; done
	return 1
}
sock_peer_stop() { # OUT: SOCK_GOT, what the person's end got
	as_person touch "$1.stop"
	wait "$SOCK_PEER" 2>/dev/null
	SOCK_GOT=$(cat "$1" 2>/dev/null)
}

sock_in() { sbx -- /usr/bin/python3 -c "$SOCK_IN_PY" "$@" 2>&1; }

attack_sockets() {
	local out got
	if [ -n "$ATK_HOST_NS" ]; then
		out=$(sock_in serve "$RW")
		like "$out" "Operation not permitted" "$(tag) in the host's namespaces no unix socket can be made (seccomp)"
		return
	fi
	out=$(sock_in serve "$RW")
	local want="OK:INSIDE OK:INSIDE OK:INSIDE OK:INSIDE OK:INSIDE OK:INSIDE 300/300"
	check "$(tag) control: a server inside and its client, stream and seqpacket, by relative and absolute name and through /proc/self/fd; 300 connections in a row" \
		test "$out" = "$want"
	[ "$out" = "$want" ] || echo "got: $out" | diag

	# The person's server, there before the session opened.
	if sock_peer_start stream "$RW/person.sock" "$OUT/rw.out"; then
		out=$(as_person /usr/bin/python3 -c "$SOCK_IN_PY" connect "$RW/person.sock" 2>&1)
		check "$(tag) control: the person reaches the socket outside" test "$out" = OK:PERSON
		out=$(sock_in connect "$RW/person.sock")
		check "$(tag) a socket of the person's in the read-write folder cannot be connected to ($out)" \
			test "$out" = EACCES
		as_person ln -sfn person.sock "$RW/link.sock"
		out=$(sbx -- sh -c "cd '$RW' && ln -sfn person.sock agent.lnk && /usr/bin/python3 -c \"\$1\" connect agent.lnk" sh "$SOCK_IN_PY" 2>&1)
		check "$(tag) ... nor through a link the agent makes, by a relative name ($out)" test "$out" = EACCES
		out=$(sock_in procfd "$RW/person.sock")
		check "$(tag) ... nor through /proc/self/fd of an O_PATH descriptor ($out)" test "$out" = EACCES
		sock_peer_stop "$OUT/rw.out"; got=$SOCK_GOT
		check "$(tag) the person's server saw only the person's connection ($got)" test "$got" = CONNECTED
	else
		not_ok "$(tag) premise: the person listens on a socket in the read-write folder"
	fi
	as_person rm -f "$RW/person.sock" "$RW/link.sock" "$RW/agent.lnk"

	# Made by the person after the session opened, in the read-write and read-only folders.
	local dir
	for dir in "$RW" "$RO"; do
		sock_peer_start stream "$dir/late.sock" "$OUT/late.out" "$RW/.owstest-waiting"
		out=$(sock_in connect "$dir/late.sock" "$RW/.owstest-waiting")
		sock_peer_stop "$OUT/late.out"; got=$SOCK_GOT
		check "$(tag) a socket the person makes in $(basename "$dir") after the session opened cannot be connected to ($out)" \
			test "$out" = EACCES
		check "$(tag) ... and its server saw no connection ($got)" test "$got" = NOTHING
		as_person rm -f "$dir/late.sock" "$RW/.owstest-waiting"
	done

	# A datagram socket follows any name it is given, connected or not: none can be made.
	if sock_peer_start dgram "$RW/log.sock" "$OUT/dgram.out"; then
		out=$(sock_in sendto "$RW/log.sock" | tr '\n' ' ')
		sock_peer_stop "$OUT/dgram.out"; got=$SOCK_GOT
		check "$(tag) no datagram reaches the person's socket, by socket() or socketpair() ($out)" \
			test "$out" = "EPERM EPERM "
		check "$(tag) ... and the person's datagram socket received nothing ($got)" test "$got" = NOTHING
	else
		not_ok "$(tag) premise: the person binds a datagram socket in the read-write folder"
	fi
	as_person rm -f "$RW/log.sock"

	# The real thing: the person's tmux, whose run-shell runs anything outside.  Under
	# `account` tmux itself refuses a client of another uid; under `landlock` only the
	# wall stands between.
	if ! command -v tmux >/dev/null; then
		skip "$(tag) the person's tmux: tmux is not installed (scripts/install-deps.sh)"
	elif as_person tmux -S "$RW/tmux.sock" new-session -d -s owstest sleep 600 2>/dev/null; then
		as_person tmux -S "$RW/tmux.sock" run-shell "touch '$OUT/tmux-control'"
		check "$(tag) control: the person's tmux runs what it is asked" test -e "$OUT/tmux-control"
		out=$(sbx -- tmux -S "$RW/tmux.sock" run-shell "touch '$OUT/tmux-pwned'" 2>&1)
		check "$(tag) the person's tmux socket in the read-write folder runs nothing from inside" \
			test ! -e "$OUT/tmux-pwned"
		[ -e "$OUT/tmux-pwned" ] && echo "got: $out" | diag
		as_person tmux -S "$RW/tmux.sock" kill-server 2>/dev/null
	else
		not_ok "$(tag) premise: the person starts tmux with its socket in the read-write folder"
	fi
	as_person rm -f "$RW/tmux.sock" "$OUT/tmux-control" "$OUT/tmux-pwned"
}
