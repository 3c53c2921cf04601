"""Inside a sandbox (test/sh/proxy_relays.sh): N CONNECTs at once through the session's proxy to
the injected host, none ever starting TLS; counts the 200s and 503s into DIR/held,
holds them until DIR/release appears, then closes them all.

    proxy_burst.py DIR PORT N
"""
import os
import socket
import sys
import time

d, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
proxy = os.environ["http_proxy"].rsplit("/", 1)[-1]
phost, pport = proxy.rsplit(":", 1)
held, codes = [], {}
# all at once: every relay does its upstream handshake at the same moment
for _ in range(n):
    s = socket.create_connection((phost, int(pport)), timeout=20)
    s.sendall(b"CONNECT localhost:%d HTTP/1.1\r\nHost: localhost:%d\r\n\r\n" % (port, port))
    held.append(s)
for s in held:
    line = b""
    while not line.endswith(b"\n"):
        try:
            b = s.recv(1)
        except OSError:
            b = b""
        if not b:
            break
        line += b
    code = line.split(b" ")[1].decode() if line.count(b" ") else "none"
    codes[code] = codes.get(code, 0) + 1
with open(d + "/held", "w") as f:
    f.write("%d %d\n" % (codes.get("200", 0), codes.get("503", 0)))
for _ in range(1200):
    if os.path.exists(d + "/release"):
        break
    time.sleep(0.05)
for s in held:
    s.close()
