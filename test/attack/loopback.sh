# Loopback: in none and allowlist the only thing a session reaches is its own proxy.
# Not the person's services on loopback (in 47800-47899 or outside it), not another
# session's proxy, not a socket under /run that a system service left writable.
ATTACKS="$ATTACKS loopback"

LOOP_DIR=$T/loop
mkdir -p "$LOOP_DIR"
# The person's own services: one in the proxy range, one outside; and a system service's
# world-writable socket under /run.
LOOP_SOCK=/run/owstest-$HEX.sock
$PY - "$LOOP_DIR" "$LOOP_SOCK" <<'PYEOF' &
import os, socket, sys, threading, time
d, path = sys.argv[1], sys.argv[2]
inside = socket.socket()
for port in range(47899, 47799, -1):
    try:
        inside.bind(("127.0.0.1", port)); break
    except OSError:
        pass
inside.listen(64)
outside = socket.socket()
outside.bind(("127.0.0.1", 0)); outside.listen(64)
u = socket.socket(socket.AF_UNIX)
u.bind(path); os.chmod(path, 0o666); u.listen(64)
def serve(s):
    while True:
        c = s.accept()[0]
        try:
            c.sendall(b"SERVICE\n")
        finally:
            c.close()
for s in (inside, outside, u):
    threading.Thread(target=serve, args=(s,), daemon=True).start()
open(d + "/ports.tmp", "w").write("%d %d\n" % (inside.getsockname()[1], outside.getsockname()[1]))
os.rename(d + "/ports.tmp", d + "/ports")
# Until loop_cleanup kills it: a fixed lifetime ran out before the account rounds
# in a 6.1 VM under TCG, and their controls failed.
threading.Event().wait()
PYEOF
LOOP_PID=$!
for _ in $(seq 100); do [ -s "$LOOP_DIR/ports" ] && break; sleep 0.05; done
read -r LOOP_IN LOOP_OUT <"$LOOP_DIR/ports"
loop_cleanup() { kill "$LOOP_PID" 2>/dev/null; rm -f "$LOOP_SOCK"; }
ATTACK_CLEANUPS="${ATTACK_CLEANUPS:-} loop_cleanup"

LOOP_PY='
import os, socket, sys
def tcp(port, greeting=True):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(("127.0.0.1", int(port)))
        return "REACHED:" + (s.recv(16).decode().strip() if greeting else "")
    except OSError as e:
        return e.__class__.__name__
def unix(path):
    s = socket.socket(socket.AF_UNIX); s.settimeout(3)
    try:
        s.connect(path); return "REACHED:" + s.recv(16).decode().strip()
    except OSError as e:
        return e.__class__.__name__
out = []
for a in sys.argv[1:]:
    kind, arg = a.split("=", 1)
    if kind == "scan":
        # the port of this call and the port of the session (47800): both lead to its proxy
        p = os.environ.get("HTTPS_PROXY", "").rsplit(":", 1)[-1].strip("/")
        hits = [str(q) for q in range(47800, 47900)
                if str(q) not in (p, "47800") and tcp(q, False).startswith("REACHED")]
        out.append("HIT:" + ",".join(hits) if hits else "ONLY-OWN")
        continue
    if kind == "proxy":
        p = os.environ.get("HTTPS_PROXY", "")
        arg = p.rsplit(":", 1)[-1].strip("/") if p else "0"
        r = tcp(arg, False)
        out.append("PROXY:" + ("REACHED" if r.startswith("REACHED") else r))
        continue
    out.append(tcp(arg) if kind == "tcp" else unix(arg))
print(" ".join(out))
'

attack_loopback() {
	local out
	check "$(tag) control: the person outside reaches the services" \
		test "$(as_person /usr/bin/python3 -c "$LOOP_PY" "tcp=$LOOP_IN" "tcp=$LOOP_OUT" "unix=$LOOP_SOCK")" \
		= "REACHED:SERVICE REACHED:SERVICE REACHED:SERVICE"
	out=$(sbx -- /usr/bin/python3 -c "$LOOP_PY" "unix=$LOOP_SOCK" 2>&1)
	unlike "$out" "REACHED" "$(tag) a world-writable system socket under /run is out of reach"
	[ "$NET" = open ] && return 0
	out=$(sbx -- /usr/bin/python3 -c "$LOOP_PY" "tcp=$LOOP_IN" "tcp=$LOOP_OUT" 2>&1)
	unlike "$out" "REACHED" "$(tag) the person's loopback services (in 47800-47899 and outside) are out of reach"
	if [ "$NET" = allowlist ]; then
		out=$(sbx -- /usr/bin/python3 -c "$LOOP_PY" "proxy=" 2>&1)
		check "$(tag) control: the session's own proxy is reachable" test "$out" = "PROXY:REACHED"
		# Other sessions' proxies: a second session stays open while this one scans
		# the whole range; only its own ports may answer (the call's, and the session's
		# 47800).
		rm -f "$OUT/up"
		as_person "$BIN/owsbx" run --provider "$P" --net allowlist --rw "$OUT" -- \
			sh -c "touch '$OUT/up'; sleep 4" >/dev/null 2>&1 &
		local other=$!
		for _ in $(seq 100); do [ -e "$OUT/up" ] && break; sleep 0.05; done
		out=$(sbx -- /usr/bin/python3 -c "$LOOP_PY" scan= 2>&1)
		check "$(tag) in 47800-47899 only the session's own proxy answers ($out)" test "$out" = "ONLY-OWN"
		wait "$other"
	fi
}
