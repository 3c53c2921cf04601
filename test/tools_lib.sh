# test/tools_lib.sh: local stand-ins for the outside world, for the tools tests
# (test/sh/tools_*.sh). Source after setting S (a root-owned folder the test removes) and PY.
#
#   serve MODE ARGS...   a root server on 127.0.0.1:<free port>; sets SRV_PORT. Its pid is
#                        in TOOLS_PIDS (and given to owstest_root_pid when that exists)
#   requests PORT        the requests a server saw, one "METHOD PATH" a line
#   tools_stop           kills the servers (idempotent)

# One server program, run as root on 127.0.0.1 (a port the kernel picks):
#   static DIR             GET/HEAD of files under DIR (a folder: its index.html or index.json)
#   git ROOT               git's smart HTTP: `git http-backend` as a CGI, repositories under ROOT
#   tls DIR CERT KEY       static over TLS
# Once listening it writes its port to DIR/port.<pid> and then logs each request to
# DIR/log.<port>.
# shellcheck disable=SC2016
SERVER='
import os, sys, ssl, socket, subprocess, urllib.parse, http.server, socketserver
d, mode = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
log = None
TYPES = {".html": "text/html", ".json": "application/json", ".tgz": "application/octet-stream",
         ".whl": "application/octet-stream", "": "application/json"}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, fmt, *a):
        with open(log, "a") as f:
            f.write("%s %s\n" % (self.command, self.path))
    def reply(self, code, body, ctype="text/plain", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))
    def static(self):
        u = urllib.parse.urlsplit(self.path)
        p = os.path.normpath(os.path.join(args[0], urllib.parse.unquote(u.path).lstrip("/")))
        if not p.startswith(args[0]):
            return self.reply(403, b"no\n")
        if os.path.isdir(p):
            for i in ("index.html", "index.json"):
                if os.path.isfile(os.path.join(p, i)):
                    p = os.path.join(p, i)
                    break
        if not os.path.isfile(p):
            return self.reply(404, b"not found\n")
        with open(p, "rb") as f:
            data = f.read()
        self.reply(200, data, TYPES.get(os.path.splitext(p)[1], "application/octet-stream"))
    def git(self):
        u = urllib.parse.urlsplit(self.path)
        env = {"PATH": "/usr/bin:/bin", "GIT_PROJECT_ROOT": args[0], "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": urllib.parse.unquote(u.path), "QUERY_STRING": u.query,
               "REQUEST_METHOD": self.command, "REMOTE_ADDR": "127.0.0.1",
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "HOME": args[0],
               "GIT_CONFIG_NOSYSTEM": "1"}
        data = self.body() if self.command == "POST" else b""
        env["CONTENT_LENGTH"] = str(len(data))
        r = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True)
        out = r.stdout
        sep = out.find(b"\r\n\r\n")
        head, rest = (out[:sep], out[sep + 4:]) if sep >= 0 else (out[:out.find(b"\n\n")], out[out.find(b"\n\n") + 2:])
        code, ctype, extra = 200, "text/plain", []
        for line in head.decode().splitlines():
            k, _, v = line.partition(":")
            v = v.strip()
            if k.lower() == "status":
                code = int(v.split()[0])
            elif k.lower() == "content-type":
                ctype = v
            elif k:
                extra.append((k, v))
        self.reply(code, rest, ctype, extra)
    def do_GET(self):
        self.git() if mode == "git" else self.static()
    do_HEAD = do_GET
    def do_POST(self):
        self.git() if mode == "git" else self.reply(405, b"no\n")
class Srv(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
srv = Srv(("127.0.0.1", 0), H)
port = srv.server_address[1]
log = "%s/log.%d" % (d, port)
if mode == "tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args[1], args[2])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open("%s/port.%d.tmp" % (d, os.getpid()), "w") as f:
    f.write("%d\n" % port)
os.rename("%s/port.%d.tmp" % (d, os.getpid()), "%s/port.%d" % (d, os.getpid()))
srv.serve_forever()
'

TOOLS_PIDS=""
# serve MODE ARGS...: start SERVER; sets SRV_PORT.
serve() {
	local pid i
	"$PY" -c "$SERVER" "$S" "$@" </dev/null >>"$S/server.err" 2>&1 &
	pid=$!
	TOOLS_PIDS="$TOOLS_PIDS $pid"
	if declare -F owstest_root_pid >/dev/null; then owstest_root_pid "$pid"; fi
	for ((i = 0; i < 100; i++)); do
		if [ -s "$S/port.$pid" ]; then
			read -r SRV_PORT <"$S/port.$pid"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
requests() { cat "$S/log.$1" 2>/dev/null; }
tools_stop() {
	local p
	for p in $TOOLS_PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $TOOLS_PIDS; do wait "$p" 2>/dev/null; done
	TOOLS_PIDS=""
}
