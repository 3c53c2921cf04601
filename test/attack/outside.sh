# Abstract unix sockets and processes outside: a server the person listens on at an
# abstract name, and a process of the person's, are out of reach from inside in every
# mode, kept by Landlock's scopes (ABI 6) or, where there are none, by the sandbox's own
# network (none, allowlist) and PID (every mode) namespaces. `open` without scopes shares
# the host's abstract sockets: it runs only partial (CONF chooses it there) and says so on
# its spawn event; that the socket is reachable then is checked too, since it is said.
# In the host's namespaces (no user namespace) no unix socket can be made at all, in every
# mode; a signal outside is kept by the scope alone (its attack skips without one, with the
# reason the session gives).
ATTACKS="$ATTACKS outside"

OUTSIDE_SERVER='
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1]); s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept(); c.sendall((sys.argv[1] + "\n").encode()); c.close()
'
OUTSIDE_EVENTS='
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "spawn":
        # limits.* name what the default caps lack on this kernel (tests of their own)
        print(e["enforcement"], ",".join(p["promise"] for p in e.get("partial", [])
                                         if not p["promise"].startswith("limits.")) or "-")
'

attack_outside() {
	local name=owstest-out-$HEX-$RANDOM srv victim bg out partial=no ev=$OUT/events.jsonl
	[ "$NET" = open ] && ! have_landlock_abi 6 && [ -z "$ATK_HOST_NS" ] && partial=yes
	rm -f "$OUT/srv.ready" "$OUT/srv.pid" "$OUT/victim.pid"
	# Each writes its own pid: as_person is a function, so $! is a subshell, and runuser
	# forks below it; only the processes themselves are the server and the victim.
	# shellcheck disable=SC2016 # the program's own $1..$4
	as_person sh -c 'echo $$ >"$1"; exec "$2" -c "$3" "$4"' sh "$OUT/srv.pid" "$PY" \
		"$OUTSIDE_SERVER" "$name" >"$OUT/srv.ready" 2>/dev/null &
	bg=$!
	# shellcheck disable=SC2016
	as_person sh -c 'echo $$ >"$1"; exec sleep 300' sh "$OUT/victim.pid" &
	bg="$bg $!"
	for _ in $(seq 200); do
		grep -q ready "$OUT/srv.ready" 2>/dev/null && [ -s "$OUT/victim.pid" ] && break
		sleep 0.05
	done
	srv=$(cat "$OUT/srv.pid" 2>/dev/null)
	victim=$(cat "$OUT/victim.pid" 2>/dev/null)
	out=$(as_person "$PY" -c "$PROBE_TEXT" "connect_abstract $name" 2>&1)
	check "$(tag) control: outside, the person reaches its abstract socket" test "$out" = "OK:$name"

	as_person rm -f "$ev"
	out=$(sbx --events "$ev" -- "$PY" -c "$PROBE_TEXT" "connect_abstract $name" "kill $victim 0" 2>&1)
	mapfile -t R <<<"$out"
	if [ $partial = yes ]; then
		check "$(tag) ABI $(landlock_abi), no scopes: the abstract socket is reachable, as the session says" \
			test "${R[0]}" = "OK:$name"
		check "$(tag) ABI $(landlock_abi), no scopes: the spawn event says partial, unix_sockets.outside" \
			test "$(as_person "$PY" -c "$OUTSIDE_EVENTS" "$ev" 2>&1)" = "partial unix_sockets.outside"
	else
		check "$(tag) the person's abstract socket is unreachable (${R[0]})" \
			grep -qxE 'EPERM|ECONNREFUSED' <<<"${R[0]}"
		if [ -n "$ATK_HOST_NS" ]; then
			out=$(as_person "$PY" -c "$OUTSIDE_EVENTS" "$ev" 2>&1)
			like "$out" "^partial " "$(tag) the spawn event says partial (the host's namespaces)"
			unlike "$out" "unix_sockets.outside" "$(tag) ... but not for unix sockets outside"
		else
			check "$(tag) the spawn event says full" \
				test "$(as_person "$PY" -c "$OUTSIDE_EVENTS" "$ev" 2>&1)" = "full -"
		fi
	fi
	partial signals.outside "a signal to the person's process outside" ||
		check "$(tag) the person's process outside cannot be signalled (${R[1]})" \
			grep -qxE 'ESRCH|EPERM' <<<"${R[1]}"
	check "$(tag) and it lives" test "$(awk '/^State:/ {print $2}' "/proc/$victim/status" 2>/dev/null)" = S
	# The victim must not outlive the attack: a sleep left running as the person reads as
	# a process of a later session.
	kill -KILL "$srv" "$victim" 2>/dev/null
	# shellcheck disable=SC2086
	wait $bg 2>/dev/null
	as_person rm -f "$ev"
}
