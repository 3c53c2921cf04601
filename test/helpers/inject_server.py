#!/usr/bin/env python3
"""A throwaway HTTPS server for test/sh/inject.sh, on 127.0.0.1 with the test's own CA.

    inject_server.py CERT KEY LOG PORTFILE TOKEN

GET /        200 "accepted" when the Authorization header is "Bearer TOKEN", else 401
GET /echo    the Authorization header it got, as the body (a host that echoes it)
GET /echo-gzip     the same, gzip-compressed when the request's Accept-Encoding allows it
GET /gzip-always   the same, gzip-compressed whatever the request asked
GET /echo-chunked  the same, chunked, a chunk boundary in the middle of the header's value
GET /echo-split    the same, the value's second half written 300 ms after its first
POST /post   records the body, 200
POST /store  keeps the body; GET /read gives back everything kept (a host that stores
             what it is sent and serves it again, also under its second name, 127.0.0.1)
Each request's Host and Authorization headers and body are appended to LOG as JSON lines.
Heads are framed by Python's http.server, as loosely as many servers: a bare LF ends a
line and a bare CR splits a header in two.
"""
import gzip
import http.server
import json
import socketserver
import ssl
import sys
import time

cert, key, log, portfile, token = sys.argv[1:6]
kept = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body=b""):
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization", ""),
                                "host": self.headers.get("Host", ""),
                                "body": body.decode("latin-1")}) + "\n")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def echo(self, how, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        if how == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            cut = len(body) - len(token) // 2
            for part in (body[:cut], body[cut:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        if how == "gzip":
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if how == "split":
            cut = len(body) - len(token) // 2
            self.wfile.write(body[:cut])
            self.wfile.flush()
            time.sleep(0.3)
            body = body[cut:]
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        auth = self.headers.get("Authorization", "")
        echoed = ("you sent: " + auth + "\n").encode()
        if self.path == "/echo":
            self.answer(200, echoed)
        elif self.path == "/echo-gzip":
            self.echo("gzip" if "gzip" in self.headers.get("Accept-Encoding", "") else "", echoed)
        elif self.path == "/gzip-always":
            self.echo("gzip", echoed)
        elif self.path == "/echo-chunked":
            self.echo("chunked", echoed)
        elif self.path == "/echo-split":
            self.echo("split", echoed)
        elif self.path == "/read":
            self.answer(200, b"kept: " + b"|".join(kept))
        elif auth == "Bearer " + token:
            self.answer(200, b"accepted\n")
        else:
            self.answer(401, b"refused\n")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self.record(body)
        if self.path == "/store":
            kept.append(body)
            self.answer(200, b"stored\n")
        else:
            self.answer(200, b"posted\n")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
