# Proxies on the host: an allowlist session's proxy listens only inside that session's
# own network, so a session in `open` mode (which shares the host's network)
# cannot use it to reach the sites it lists. A proxy that does listen on the host
# (`owsbx proxy`) is found by the same scan: the control.
ATTACKS="$ATTACKS proxyhost"

# Each proxy lists a marker site of its own: a proxy that lists it answers a CONNECT to
# it with something other than a 403 (the name does not resolve), whoever started it.
PH_SESSION=owstest-sess-$HEX.invalid
PH_HOSTPROXY=owstest-host-$HEX.invalid
PH_PY='
import socket, sys
found = set()
for port in range(47800, 47900):
    for name in sys.argv[1:]:
        s = socket.socket(); s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(("CONNECT %s:1 HTTP/1.1\r\nHost: %s:1\r\n\r\n" % (name, name)).encode())
            r = s.recv(512).decode("latin-1")
            if "owsbx proxy" in r and not r.startswith("HTTP/1.1 403"):
                found.add(name)
        except OSError:
            pass
        finally:
            s.close()
print(" ".join(n.split("-")[1] for n in sys.argv[1:] if n in found) or "NONE")
'

attack_proxyhost() {
	[ "$NET" = open ] || return 0
	local out other host
	as_person "$BIN/owsbx" proxy --allow-site "$PH_HOSTPROXY:1" >"$OUT/proxy.port" 2>/dev/null &
	host=$!
	rm -f "$OUT/up"
	as_person "$BIN/owsbx" run --provider "$P" --net allowlist --allow-site "$PH_SESSION:1" \
		--rw "$OUT" -- sh -c "touch '$OUT/up'; sleep 6" >/dev/null 2>&1 &
	other=$!
	for _ in $(seq 100); do [ -e "$OUT/up" ] && [ -s "$OUT/proxy.port" ] && break; sleep 0.05; done
	out=$(sbx -- /usr/bin/python3 -c "$PH_PY" "$PH_HOSTPROXY" "$PH_SESSION" 2>&1)
	check "$(tag) control: a proxy listening on the host is found from an open session" \
		test "${out%% *}" = host
	unlike "$out" "sess" "$(tag) an allowlist session's proxy is not reachable from an open session"
	kill "$host" 2>/dev/null
	wait "$other" "$host" 2>/dev/null
}
