#!/usr/bin/env python3
"""A session that tries to starve the others (test/sh/proxy_flood.sh), inside the sandbox.

    proxy_flood.py DIR UPSTREAM_PORT N

Opens N connections to the session's proxy ($HTTP_PROXY), each with a request head begun and
never ended; counts those the proxy answers at once (503) and those it holds, writes
"HELD REFUSED" to DIR/held, then sends one byte more a second on every held one, until the
proxy has ended them all or 90 s pass; writes to DIR/trickle "ENDED SECONDS", SECONDS
being the time from the heads' first bytes to the end of the last held one.
"""
import os
import select
import socket
import sys
import time
import urllib.parse

out, up, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
start = time.monotonic()
socks = []
for _ in range(n):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=10)
    s.sendall(b"GET http://localhost:%s/ HTTP/1.1\r\n" % up.encode())
    socks.append(s)



def readable(group, ms):
    """Those of `group` with something to read (an answer, or the end), within ms."""
    p = select.poll()
    by_fd = {s.fileno(): s for s in group}
    for fd in by_fd:
        p.register(fd, select.POLLIN)
    return [by_fd[fd] for fd, _ in p.poll(ms)]


# The proxy answers a connection over its limit at once; wait until the count settles.
refused, last, still = set(), -1, 0
while still < 20:
    for s in readable([s for s in socks if s not in refused], 100):
        refused.add(s)
    still = still + 1 if len(refused) == last else 0
    last = len(refused)
held = [s for s in socks if s not in refused]
for s in refused:
    s.close()
with open(os.path.join(out, "held.tmp"), "w") as f:
    f.write("%d %d\n" % (len(held), len(refused)))
os.rename(os.path.join(out, "held.tmp"), os.path.join(out, "held"))

alive = set(held)
while alive and time.monotonic() - start < 90:
    for s in list(alive):
        try:
            s.send(b"X")
        except OSError:
            alive.discard(s)
            s.close()
    for s in readable(list(alive), 1000):  # an answer or the end: either way the proxy let it go
        alive.discard(s)
        s.close()
with open(os.path.join(out, "trickle"), "w") as f:
    f.write("%d %d\n" % (len(held) - len(alive), int(time.monotonic() - start)))
