#!/usr/bin/env python3
"""A throwaway HTTPS server for test/sh/inject.sh, on 127.0.0.1 with the test's own CA.

    inject_server.py CERT KEY LOG PORTFILE TOKEN

GET /        200 "accepted" when the Authorization header is "Bearer TOKEN", else 401
GET /echo    the Authorization header it got, as the body (a host that echoes it)
POST /post   records the body, 200
Each request's Authorization header and body are appended to LOG as JSON lines.
"""
import http.server
import json
import socketserver
import ssl
import sys

cert, key, log, portfile, token = sys.argv[1:6]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body=b""):
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization", ""),
                                "body": body.decode("latin-1")}) + "\n")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        auth = self.headers.get("Authorization", "")
        if self.path == "/echo":
            self.answer(200, ("you sent: " + auth + "\n").encode())
        elif auth == "Bearer " + token:
            self.answer(200, b"accepted\n")
        else:
            self.answer(401, b"refused\n")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.record(self.rfile.read(n))
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
