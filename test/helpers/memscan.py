#!/usr/bin/env python3
"""Reads the memory of a sandbox's processes, as root, for a secret (test/sh/*inject.sh).

    memscan.py ns PID SECRET    every process in PID's PID namespace (init included)
    memscan.py uid UID SECRET   every process of the account UID

Prints "PROCESSES HITS"; each hit (a readable mapping holding SECRET) on stderr.
"""
import os
import re
import sys

how, who, secret = sys.argv[1], sys.argv[2], sys.argv[3].encode()


def ours(p):
    if how == "ns":
        return os.readlink("/proc/%s/ns/pid" % p) == os.readlink("/proc/%s/ns/pid" % who)
    return os.stat("/proc/" + p).st_uid == int(who)


n = hits = 0
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        if not ours(p):
            continue
        maps = open("/proc/%s/maps" % p).read().splitlines()
        mem = open("/proc/%s/mem" % p, "rb", 0)
    except OSError:
        continue
    n += 1
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
        if not m:
            continue
        a, b = int(m.group(1), 16), int(m.group(2), 16)
        try:
            mem.seek(a)
            if secret in mem.read(b - a):
                hits += 1
                comm = open("/proc/%s/comm" % p).read().strip()
                print("hit in", p, comm, line, file=sys.stderr)
        except (OSError, OverflowError, ValueError):
            pass
print(n, hits)
