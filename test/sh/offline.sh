#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run inside
# Under --net none (the default) a command that fails after reaching for the network is told
# so, once, on stderr: "the network is off (--net none) ... --allow-site HOST". Its internet
# sockets go to its reaper (seccomp user notification), which refuses them as before (EPERM)
# and counts them for the exit (channels.c). Reached for by curl, by `getent hosts` (the
# resolver's socket) and by a python socket, also from a child. Not said: when the command
# succeeds anyway, when it fails without a network call, with unix sockets alone, outside
# none. The socket is still refused with EPERM, and the command cannot take the calls from
# its reaper with a seccomp listener of its own.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

OFF="the network is off \(--net none\)"
said_once() { [ "$(grep -c 'the network is off' <<<"$SBX_ERR")" = 1 ]; }

if command -v curl >/dev/null; then
	sbx run -- curl -sS --max-time 5 http://192.0.2.7/
	isnt "$SBX_RC" 0 "curl to an outside address fails under none"
	like "$SBX_ERR" "$OFF: the command's network call" \
		"and owsbx says the network is off" || sbx_diag
	like "$SBX_ERR" "to allow a site: --net allowlist --allow-site HOST" "with the way to allow a site"
	ok "once" said_once
	sbx run -- curl -sS --max-time 5 https://example.com/
	isnt "$SBX_RC" 0 "curl to a name fails under none"
	like "$SBX_ERR" "$OFF" "and owsbx says the network is off" || sbx_diag
else
	skip "curl is not installed" 5
fi

if grep -q '^nameserver' /etc/resolv.conf 2>/dev/null; then
	sbx run -- getent hosts example.com
	isnt "$SBX_RC" 0 "getent hosts fails under none"
	like "$SBX_ERR" "$OFF" "owsbx says the lookup met a network that is off" || sbx_diag
	ok "once" said_once
else
	skip "no name server in /etc/resolv.conf" 3
fi

PYCONNECT='import socket, sys
for port in (80, 443, 8080):
    try:
        socket.create_connection(("192.0.2.9", port), 3)
    except OSError:
        pass
sys.exit(int(sys.argv[1]))'
sbx run -- "$PY" -c "$PYCONNECT" 1
is "$SBX_RC" 1 "a python socket's refused connects, then exit 1"
like "$SBX_ERR" "$OFF: the command's network calls \(3, .*were refused" \
	"owsbx counts the three" || sbx_diag
ok "once for three connects" said_once
EVD=$(mktemp -d /tmp/owstest-offline.XXXX)
owstest_remove_at_exit "$EVD"
chown "$TU_UID:$TU_GID" "$EVD"
sbx run --events "$EVD/ev.jsonl" -- "$PY" -c "$PYCONNECT" 1
is "$(grep '"event": *"exit"' "$EVD/ev.jsonl" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read())["offline_calls"])')" 3 \
	"the exit event counts them too (offline_calls)"
sbx run -- "$PY" -c "$PYCONNECT" 0
is "$SBX_RC" 0 "the same connects, then exit 0"
is "$SBX_ERR" "" "a command that succeeded is not told"

sbx run -- sh -c 'exit 3'
is "$SBX_RC" 3 "a command failing without a network call"
is "$SBX_ERR" "" "is not told about the network"

# Unix sockets are no network call; an internet socket is refused as ever (EPERM).
sbx run -- "$PY" -c 'import socket, sys
a, b = socket.socketpair()
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("/nonexistent.sock")
except OSError:
    sys.exit(4)'
is "$SBX_RC" 4 "a failed unix socket connect"
is "$SBX_ERR" "" "is not taken for the network being off"
sbx run -- "$PY" -c 'import socket, sys
try:
    socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
except OSError as e:
    print(e.errno)'
is "$SBX_OUT" "1" "an internet socket is still refused with EPERM"

# A seccomp listener of the command'\''s own would take its sockets from the reaper.
sbx run -- "$PY" -c 'import ctypes, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
class F(ctypes.Structure): _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class P(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(F))]
allow = (F * 1)(F(0x06, 0, 0, 0x7fff0000))
prog = P(1, allow)
libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
nr = {"x86_64": 317, "aarch64": 277}[platform.machine()]
r = libc.syscall(nr, 1, 8, ctypes.byref(prog))  # seccomp(SET_MODE_FILTER, NEW_LISTENER)
print(ctypes.get_errno() if r < 0 else "listener")'
is "$SBX_OUT" "1" "the command cannot make a seccomp listener of its own (EPERM)" || sbx_diag

# What the command started counts as the command: its connects go to the same reaper.
sbx run -- sh -c '"$0" -c "import socket
try:
    socket.create_connection((\"192.0.2.11\", 80), 3)
except OSError:
    pass"; exit 5' "$PY"
is "$SBX_RC" 5 "a child's refused connect, then the command fails"
like "$SBX_ERR" "$OFF" "is told too" || sbx_diag

sbx run --net open -- "$PY" -c 'import sys; sys.exit(6)'
is "$SBX_ERR" "" "--net open says nothing of it"

owstest_check_clean
done_testing
