#!/usr/bin/env python3
"""Raw requests through an injected tunnel, from inside the sandbox (test/sh/inject.sh).

    inject_attack.py OUTDIR PORT

For each attack, CONNECTs to localhost:PORT through $HTTPS_PROXY, speaks TLS trusting
$SSL_CERT_FILE (the session's CA), sends its bytes as they are ({PH} is the placeholder
read from $OWSTOOL_TOKEN_FILE, {HOST} localhost:PORT) and writes what came back, or
"tls-refused: ..." when the handshake failed, to OUTDIR/NAME.
"""
import os
import socket
import ssl
import sys
import urllib.parse

out, port = sys.argv[1], sys.argv[2]
ph = open(os.environ["OWSTOOL_TOKEN_FILE"]).read().strip()
host = "localhost:" + port
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
auth = "Authorization: Bearer " + ph + "\r\n"
get = "GET / HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n"
stored = auth + "\r\n"


def post(headers, body=""):
    return "POST /store HTTP/1.1\r\nHost: " + host + "\r\n" + headers + "\r\n" + body


ATTACKS = {
    # framing: the filter and the host must not frame one request two ways
    "lf_head_end": post("Content-Length: %d\r\nX-A: b\n" % len(stored), stored),
    "lf_length": post("X-A: b\nContent-Length: %d\r\n" % len(get), get),
    "cr_length": post("X-A: b\rContent-Length: %d\r\n" % len(get), get),
    "cl_te": post("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(get), get),
    "te_twice": post("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n", get),
    "te_list": post("Transfer-Encoding: identity, chunked\r\n", get),
    "te_space_name": post("Transfer-Encoding : chunked\r\nContent-Length: %d\r\n" % len(get), get),
    "cl_twice": post("Content-Length: 0\r\nContent-Length: %d\r\n" % len(get), get),
    # the host: the verified one, whatever a front end would route by
    "host_other": "GET / HTTP/1.1\r\nHost: other.example\r\n" + auth + "\r\n",
    "host_port": "GET / HTTP/1.1\r\nHost: localhost:1\r\n" + auth + "\r\n",
    "host_twice": "GET / HTTP/1.1\r\nHost: " + host + "\r\nHost: other.example\r\n" + auth + "\r\n",
    "url_other": "GET https://other.example/ HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n",
    "sni_other": get,
    # the same, well formed: it must still go through
    "plain": get,
}


def tunnel(name, data):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=5)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (host, host)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            return "no answer to CONNECT"
        head += b
    if b" 200 " not in head.split(b"\r\n")[0]:
        return head.decode("latin-1")
    ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    sni = "localhost"
    if name == "sni_other":
        ctx.check_hostname = False
        sni = "other.example"
    try:
        t = ctx.wrap_socket(s, server_hostname=sni)
    except (ssl.SSLError, OSError) as e:
        return "tls-refused: %s" % e
    t.sendall(data.replace("{PH}", ph).encode("latin-1"))
    got = b""
    try:
        while True:
            b = t.recv(65536)
            if not b:
                break
            got += b
            if name == "plain" and got.endswith(b"accepted\n"):
                break
    except (ssl.SSLError, OSError, socket.timeout):
        pass
    return got.decode("latin-1")


for name, data in ATTACKS.items():
    with open(os.path.join(out, name), "w") as f:
        f.write(tunnel(name, data))
