#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Unix sockets. Pathname sockets outside the session's folders (the person's ssh-agent,
# the session bus /run/user/<uid>/bus, a docker socket /run/docker.sock) do not exist inside:
# connect fails with ENOENT, in both network modes. Abstract sockets outside the sandbox
# are unreachable (Landlock scope: EPERM; or another network namespace: ECONNREFUSED);
# in `open` without Landlock scopes (ABI < 6) they are reachable, and the session says so
# (test/sh/open_partial.sh).
# A socket the person serves in the shared folder is refused too (EACCES: the sandbox did
# not bind it; test/attack/sockets.sh attacks it further).
# Controls: all of them answer the person outside; an abstract socket made inside the
# sandbox answers inside.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK
hx=$(rand_hex 4)

# the session bus
BUS_DIR=/run/user/$TU_UID
if [ ! -e "$BUS_DIR" ]; then
	mkdir -p /run/user 2>/dev/null
	mkdir -m 0700 "$BUS_DIR" && chown "$TU_UID:$TU_GID" "$BUS_DIR"
	owstest_remove_at_exit "$BUS_DIR"
fi
unix_server_as_user "$BUS_DIR/bus" "bus-$hx" || fail "bus server started"
# a docker socket (root's, 0666 like a docker group member would see it)
DOCKER=/run/docker.sock
if [ -e "$DOCKER" ]; then
	DOCKER=/run/owstest-docker-$hx.sock
fi
owstest_remove_at_exit "$DOCKER"
unix_server_as_root "$DOCKER" "docker-$hx" || fail "docker socket server started"
# a socket the person serves in the shared folder (there inside, but not the sandbox's)
unix_server_as_user "$W/ctl-$hx.sock" "ctl-$hx" || fail "shared-folder socket server started"
# an abstract socket of the person's
unix_server_as_user "@owstest-abs-$hx" "abs-$hx" || fail "abstract socket server started"

PROBES=("connect_unix $TU_AGENT_SOCK" "connect_unix $BUS_DIR/bus" "connect_unix $DOCKER"
	"connect_unix $W/ctl-$hx.sock" "connect_abstract owstest-abs-$hx")
probe_out "${PROBES[@]}"
is "${R[0]}" "OK:" "control: outside, the person reaches the ssh-agent"
is "${R[1]}" "OK:bus-$hx" "control: outside, the person reaches the session bus"
is "${R[2]}" "OK:docker-$hx" "control: outside, the person reaches the docker socket"
is "${R[3]}" "OK:ctl-$hx" "control: outside, the person reaches the shared-folder socket"
is "${R[4]}" "OK:abs-$hx" "control: outside, the person reaches the abstract socket"

# an abstract server made inside, connected to from inside: scope allows its own domain
# shellcheck disable=SC2016
INNER='
import socket, threading, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0owstest-inner-" + sys.argv[1]); s.listen(1)
def serve():
    c, _ = s.accept(); c.sendall(b"inner\n"); c.close()
threading.Thread(target=serve, daemon=True).start()
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.settimeout(3)
c.connect("\0owstest-inner-" + sys.argv[1]); print(c.recv(10).decode().strip())
'

for net in none open; do
	probe --net "$net" --rw "$W" -- "${PROBES[@]}"
	is "$SBX_RC" 0 "net $net: the probe runs" || diag "$(sbx_diag)"
	is "${R[0]}" ENOENT "net $net: the ssh-agent socket does not exist inside (ENOENT)"
	is "${R[1]}" ENOENT "net $net: the session bus does not exist inside (ENOENT)"
	is "${R[2]}" ENOENT "net $net: the docker socket does not exist inside (ENOENT)"
	is "${R[3]}" EACCES "net $net: the person's socket in the shared folder is refused (EACCES)"
	if [ "$net" = none ]; then
		is_one_of "${R[4]}" "EPERM ECONNREFUSED" "net none: the person's abstract socket is unreachable (${R[4]})"
	elif need_landlock_abi 6 "without scopes, open runs partial (open_partial.sh)" 1; then
		is "${R[4]}" EPERM "net open: the person's abstract socket is refused by the Landlock scope (EPERM)"
	fi
	sbx run --net "$net" -- "$PY" -c "$INNER" "$hx"
	is "$SBX_OUT" inner "control: net $net: an abstract socket made inside answers inside"
done

# ssh-add inside, with the agent's path handed in through the command line
sbx run -- /bin/sh -c 'SSH_AUTH_SOCK="$1" ssh-add -l; echo "rc=$?"' sh "$TU_AGENT_SOCK"
unlike "$SBX_OUT" "ED25519" "ssh-add inside lists no key even with the agent's path"
like "$SBX_OUT$SBX_ERR" "rc=2" "ssh-add inside cannot reach the agent (rc 2: $SBX_ERR)"

owstest_check_clean
done_testing
