#!/usr/bin/python3
# without.py WHAT -- CMD...: exec CMD under a seccomp filter that takes WHAT away, to test
# how owsbx does on a kernel without it (the filter stays on CMD and all it starts):
#   landlock    its three system calls fail with ENOSYS (a kernel built without it)
#   landlock-off  they fail with EOPNOTSUPP (built in, left out of lsm= at boot)
#   seccomp     seccomp(2) and prctl(PR_SET_SECCOMP) fail (ENOSYS, EINVAL)
#   namespaces  unshare, and clone with any CLONE_NEW* flag, fail with EPERM; clone3 ENOSYS
#   userns      only a user namespace is refused (unshare or clone with CLONE_NEWUSER:
#               EPERM; clone3: ENOSYS, which glibc answers with clone), as Docker's default
#               profile and user.max_user_namespaces=0 (ENOSPC) do; without one, an
#               unprivileged process gets no other namespace either
#   mount       fsopen and mount fail with EPERM: a namespace made without CAP_SYS_ADMIN
#   loopback    ioctl(SIOCSIFFLAGS) fails with EPERM: no CAP_NET_ADMIN there (both are what
#               Ubuntu's AppArmor restriction does to a namespace it lets be made)
import ctypes, os, struct, sys

what, cmd = sys.argv[1], sys.argv[3:]
ENOSYS, EPERM, EOPNOTSUPP = 38, 1, 95
CLONE_NEWUSER, CLONE_NEW_ALL = 0x10000000, 0x7E020000


def stmt(code, k):
    return struct.pack("HBBI", code, 0, 0, k)


def jump(code, k, jt, jf):
    return struct.pack("HBBI", code, jt, jf, k)


LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
deny = {"landlock": [(444, ENOSYS), (445, ENOSYS), (446, ENOSYS)],
        "landlock-off": [(444, EOPNOTSUPP), (445, EOPNOTSUPP), (446, EOPNOTSUPP)],
        "seccomp": [(317, ENOSYS)],
        "namespaces": [(272, EPERM), (435, ENOSYS)],
        "userns": [(435, ENOSYS)],
        "mount": [(430, EPERM), (165, EPERM)],
        "loopback": []}[what]
body = []
for nr, err in deny:
    body += [jump(JEQ, nr, 0, 1), stmt(RET, ERRNO | err)]


def flagged(nr, flags):
    # nr (x86_64) with any of `flags` in its first argument
    return [jump(JEQ, nr, 0, 3), stmt(LD, 16), jump(JSET, flags, 0, 1), stmt(RET, ERRNO | EPERM),
            stmt(LD, 0)]


if what == "namespaces":
    body += flagged(56, CLONE_NEW_ALL)
if what == "userns":
    body += flagged(56, CLONE_NEWUSER) + flagged(272, CLONE_NEWUSER)
if what == "loopback":
    # ioctl (16) with SIOCSIFFLAGS (0x8914) as its request
    body += [jump(JEQ, 16, 0, 3), stmt(LD, 24), jump(JEQ, 0x8914, 0, 1), stmt(RET, ERRNO | EPERM),
             stmt(LD, 0)]
if what == "seccomp":
    # prctl(PR_SET_SECCOMP) (157, option 22) too
    body += [jump(JEQ, 157, 0, 3), stmt(LD, 16), jump(JEQ, 22, 0, 1), stmt(RET, ERRNO | 22),
             stmt(LD, 0)]
prog = [stmt(LD, 4), jump(JEQ, 0xC000003E, 0, len(body) + 1), stmt(LD, 0)] + body + [stmt(RET, ALLOW)]
buf = ctypes.create_string_buffer(b"".join(prog))


class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


fp = Fprog(len(prog), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fp), 0, 0) != 0:
    print("filter failed", ctypes.get_errno(), file=sys.stderr)
    sys.exit(99)
os.execv(cmd[0], cmd)
