#!/bin/sh
# Many allowlist sessions in one host process (bench/sessions.c): N (default 500) landlock
# sessions open at once, served by the host's one proxy; prints threads and descriptors
# per open session, open time per session, and a request through the proxy in each.
# Figures only, never a pass or fail on a time.
#
# The host raises its own soft RLIMIT_NOFILE for this (BENCH_NOFILE, default 4096): each
# open session holds two descriptors in the host and the library never raises the limit.
# Run as root it measures as `nobody` (setpriv); nothing is installed or left behind.
#   BENCH_SESSIONS=500 BENCH_NOFILE=4096 bench/sessions.sh
set -eu
cd "$(dirname "$0")/.."
[ -f libowsandbox.a ] || { echo "bench: build first (make)" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench: needs curl" >&2; exit 1; }
n=${BENCH_SESSIONS:-500}
nofile=${BENCH_NOFILE:-4096}

tmp=$(mktemp -d /tmp/owsbench-sessions.XXXXXX)
up=""
trap '[ -n "$up" ] && kill "$up" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -o "$tmp/sessions" bench/sessions.c libowsandbox.a \
	-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread

# A listed site: an HTTP server on the host's loopback, reached only through the proxy.
python3 - "$tmp/port" <<'PY' &
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "3"); self.end_headers()
        self.wfile.write(b"ok\n")
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 512
s = S(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write("%d\n" % s.server_address[1])
s.serve_forever()
PY
up=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port")

as=""
if [ "$(id -u)" -eq 0 ]; then
	as="setpriv --reuid=65534 --regid=65534 --clear-groups --"
fi
ulimit -Hn "$nofile" 2>/dev/null || true
echo "bench/sessions: $n allowlist sessions in one host process, $(uname -r), $(nproc) CPUs"
$as "$tmp/sessions" "$n" "http://localhost:$port/" "localhost:$port" "$nofile"
