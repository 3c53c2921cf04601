#!/usr/bin/env python3
"""bpf.py FILTER NR ARCH [ARG0 ...]: runs a classic BPF seccomp filter (seccomp_dump's lines,
"code jt jf k") on one seccomp_data and prints the verdict: allow, kill, errno N, user_notif, or trap...
Only what lib/linux/wall/seccomp.c emits: ld W abs, jmp ja/jeq/jge/jgt/jset k, alu and k, ret k;
anything else is an error, so that a new instruction cannot pass unread."""
import struct
import sys

LD_W_ABS, RET_K, ALU_AND_K = 0x20, 0x06, 0x54
JA, JEQ, JGT, JGE, JSET = 0x05, 0x15, 0x25, 0x35, 0x45


def verdict(k):
    action = k & 0xFFFF0000
    if action == 0x7FFF0000:
        return "allow"
    if action in (0x80000000, 0x00000000):
        return "kill"
    if action == 0x00050000:
        return "errno %d" % (k & 0xFFFF)
    if action == 0x7FC00000:
        return "user_notif"
    return "action 0x%08x" % k


def run(prog, data):
    a, pc = 0, 0
    while pc < len(prog):
        code, jt, jf, k = prog[pc]
        pc += 1
        if code == LD_W_ABS:
            a = struct.unpack_from("<I", data, k)[0]
        elif code == ALU_AND_K:
            a &= k
        elif code == RET_K:
            return verdict(k)
        elif code == JA:
            pc += k
        elif code in (JEQ, JGT, JGE, JSET):
            taken = {JEQ: a == k, JGT: a > k, JGE: a >= k, JSET: a & k != 0}[code]
            pc += jt if taken else jf
        else:
            raise SystemExit("bpf.py: instruction %#x not read" % code)
    raise SystemExit("bpf.py: the program ran off its end")


def main():
    with open(sys.argv[1]) as f:
        prog = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
    nr, arch = int(sys.argv[2], 0), int(sys.argv[3], 0)
    args = [int(x, 0) for x in sys.argv[4:]] + [0] * (6 - len(sys.argv[4:]))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)  # struct seccomp_data
    print(run(prog, data))


main()
