# Read-only folders: nothing goes out through them.  A read-only mount stops writes to
# files, not a write to a FIFO nor a connect to a unix socket, and Landlock has no right
# for connecting to a pathname socket: a FIFO or a listening socket of the person's in a
# --ro folder must be out of reach from inside, while the folder's files stay readable.
ATTACKS="$ATTACKS ro"

# The person's end of the FIFOs and the socket, outside the sandbox: reads a FIFO (opened
# without waiting for a writer) until told to stop, or serves a unix socket.
RO_PEER_PY='
import os, socket, sys, time
op, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
if op == "fifo":
    os.mkfifo(path, 0o600)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    got = b""
    open(out + ".ready", "w").close()
    while not os.path.exists(out + ".stop"):
        try:
            got += os.read(fd, 100)
        except BlockingIOError:
            pass
        time.sleep(0.02)
    try:
        got += os.read(fd, 100)
    except BlockingIOError:
        pass
    open(out, "w").write(got.decode(errors="replace").strip() or "NOTHING")
else:
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(8)
    open(out + ".ready", "w").close()
    s.settimeout(0.1)
    while not os.path.exists(out + ".stop"):
        try:
            c = s.accept()[0]
        except socket.timeout:
            continue
        c.sendall(b"SERVICE\n")
        c.close()
'
# Inside: open a FIFO for writing without waiting, and write to it.
RO_WRITE_PY='
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
    os.write(fd, b"owstest-leak\n")
    print("WROTE")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
'

ro_peer_start() { # fifo|sock PATH OUT: the person's end, in the background, once ready
	rm -f "$3" "$3.ready" "$3.stop"
	as_person /usr/bin/python3 -c "$RO_PEER_PY" "$1" "$2" "$3" &
	RO_PEER=$!
	for _ in $(seq 100); do [ -e "$3.ready" ] && return 0; sleep 0.05; done
	return 1
}
ro_peer_stop() { # OUT
	as_person touch "$1.stop"
	wait "$RO_PEER" 2>/dev/null
}

attack_ro() {
	local out got
	out=$(probe "read $RO/readme.txt" 2>&1)
	like "$out" "^OK:reference$" "$(tag) control: a file in the read-only folder is readable"

	# A FIFO in the read-write folder: test/attack/fifos.sh.

	if ro_peer_start fifo "$RO/ro.fifo" "$OUT/rofifo.out"; then
		out=$(sbx -- /usr/bin/python3 -c "$RO_WRITE_PY" "$RO/ro.fifo" 2>&1)
		ro_peer_stop "$OUT/rofifo.out"
		got=$(cat "$OUT/rofifo.out" 2>/dev/null)
		unlike "$out" "WROTE" "$(tag) a FIFO in the read-only folder cannot be opened for writing"
		check "$(tag) nothing reaches the person reading that FIFO outside" test "$got" = NOTHING
		# Landlock refuses the write by itself (no write right there); the view also
		# covers the FIFO, as it covers sockets, which Landlock cannot refuse (in the
		# host's namespaces nothing is mounted: no unix socket can be made instead).
		if [ "$P" = landlock ] && [ -z "$ATK_HOST_NS" ]; then
			out=$(sbx -- /usr/bin/stat -c %F "$RO/ro.fifo" 2>&1)
			check "$(tag) inside, the FIFO is covered by an empty file" \
				test "$out" = "regular empty file"
		fi
	else
		not_ok "$(tag) premise: the person reads a FIFO in the read-only folder"
	fi

	if ro_peer_start sock "$RO/ro.sock" "$OUT/sock.out"; then
		out=$(as_person /usr/bin/python3 -c "$PROBE_TEXT" "connect_unix $RO/ro.sock" 2>&1)
		like "$out" "^OK:SERVICE$" "$(tag) control: the person reaches the socket in the read-only folder"
		out=$(probe "connect_unix $RO/ro.sock" 2>&1)
		unlike "$out" "OK" "$(tag) a listening socket in the read-only folder cannot be connected to"
		ro_peer_stop "$OUT/sock.out"
	else
		not_ok "$(tag) premise: the person listens on a socket in the read-only folder"
	fi
	as_person rm -f "$RO/ro.fifo" "$RO/ro.sock"
}
