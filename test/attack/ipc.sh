# SysV IPC and abstract sockets: what one session makes must not outlive it, nor be
# seen by the next.  Every session has its own IPC namespace; one in the host's
# namespaces (no user namespace) is refused SysV IPC altogether (seccomp).
ATTACKS="$ATTACKS ipc"

IPC_PY='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key = int(sys.argv[2], 16)
if sys.argv[1] == "make":
    shm = libc.shmget(key, 4096, 0o1000 | 0o666)
    msq = libc.msgget(key, 0o1000 | 0o666)
    addr = libc.shmat(shm, None, 0)
    ok = shm >= 0 and msq >= 0 and addr not in (None, ctypes.c_void_p(-1).value)
    if ok:
        ctypes.memmove(addr, b"left-behind", 11)
    print("MADE" if ok else "FAILED %d" % ctypes.get_errno())
else:
    shm = libc.shmget(key, 0, 0)
    msq = libc.msgget(key, 0)
    print("SHM %s MSQ %s" % ("found" if shm >= 0 else "absent", "found" if msq >= 0 else "absent"))
'

attack_ipc() {
	local key out
	key=$(printf '%x' $((0x4f570000 + RANDOM)))
	out=$(sbx -- /usr/bin/python3 -c "$IPC_PY" make "$key" 2>&1)
	if [ -n "$ATK_HOST_NS" ]; then
		check "$(tag) SysV IPC is refused in the host's namespaces (EPERM)" test "$out" = "FAILED 1"
	else
		check "$(tag) control: a session makes SysV shared memory and a message queue" \
			test "$out" = MADE
	fi
	out=$(sbx -- /usr/bin/python3 -c "$IPC_PY" find "$key" 2>&1)
	check "$(tag) the next session finds neither" test "$out" = "SHM absent MSQ absent"
	out=$(as_person /usr/bin/python3 -c "$IPC_PY" find "$key" 2>&1)
	check "$(tag) nor does the person outside, after the session" \
		test "$out" = "SHM absent MSQ absent"
	# The host's own segment stays out of reach of the sandbox.
	out=$(as_person /usr/bin/python3 -c "$IPC_PY" make "${key}1" 2>&1)
	if [ "$out" = MADE ]; then
		out=$(sbx -- /usr/bin/python3 -c "$IPC_PY" find "${key}1" 2>&1)
		check "$(tag) the person's own segments are not visible inside" \
			test "$out" = "SHM absent MSQ absent"
		ipcrm -M "0x${key}1" -Q "0x${key}1" 2>/dev/null
	else
		not_ok "$(tag) premise: the person makes a segment outside ($out)"
	fi
}
