#!/bin/bash
# The allow-list proxy, for real: upstream servers on loopback and in a network namespace
# this test makes (addresses in 10.77.0.0/24, nothing leaves the machine), a hosts file
# that maps test names onto them (the proxy's test-only resolver override), and real
# clients (curl, python, git, nc -X connect, owsbx connect).  Checks allowed, refused (403
# naming the host), bad requests (400), unreachable (502), slow (504), DNS rebinding,
# wildcards, deny entries (--deny-site: a deny wins over a wildcard), keep-alive re-checks,
# runtime add/remove and the blocked log.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OWSBX=${OWSBX_SRC:-$ROOT/owsbx}
PY=/usr/bin/python3
N=0
FAILED=0
pass() { N=$((N + 1)); echo "ok $N - $1"; }
fail() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done; }
like() { if [[ $1 =~ $2 ]]; then pass "$3"; else fail "$3" "got: $1" "want: /$2/"; fi; }
unlike() { if [[ $1 =~ $2 ]]; then fail "$3" "got: $1" "unwanted: /$2/"; else pass "$3"; fi; }
is() { if [ "$1" = "$2" ]; then pass "$3"; else fail "$3" "got: '$1'" "want: '$2'"; fi; }
skip() { N=$((N + 1)); echo "ok $N # SKIP $1"; }

for t in curl git nc; do
	command -v $t >/dev/null || { echo "1..0 # SKIP needs $t (apt-get install curl git netcat-openbsd)"; exit 0; }
done
[ -x "$OWSBX" ] || { echo "1..0 # SKIP build owsbx first (make)"; exit 0; }

TMP=$(mktemp -d /tmp/owstest-proxy-XXXXXX)
NS=owstest_px$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip link del "${NS:0:10}h" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! cc -I"$ROOT/include" -I"$ROOT/lib" -D_GNU_SOURCE -o "$TMP/proxy_host" \
	"$ROOT/test/helpers/proxy_host.c" "$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread; then
	echo "1..0 # SKIP cannot build the host helper (make first)"
	exit 0
fi

# Upstreams: an HTTP/1.1 keep-alive server, an echo server, a server that never answers.
cat >"$TMP/upstream.py" <<'PY'
import http.server, socket, socketserver, sys, threading, os
bind = sys.argv[1]
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0], 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b""): pass
                    break
                data += self.rfile.read(n); self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"got %d bytes: " % len(data) + data[:9]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
class TS(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
os.chdir(sys.argv[2])
web = TS((bind, 0), H)
class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            d = self.request.recv(65536)
            if not d: break
            self.request.sendall(d)
class ETS(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
echo = ETS((bind, 0), Echo)
slow = socket.socket(); slow.bind((bind, 0)); slow.listen(16)
held = []
def hold():
    while True:
        c, _ = slow.accept(); held.append(c)
for s in (web.serve_forever, echo.serve_forever, hold):
    threading.Thread(target=s, daemon=True).start()
print(web.server_address[1], echo.server_address[1], slow.getsockname()[1], flush=True)
threading.Event().wait()
PY
mkdir -p "$TMP/www"
echo "hello from upstream" >"$TMP/www/index.html"
mkfifo "$TMP/never"
exec {NEVER}<>"$TMP/never"
git init -q --bare "$TMP/www/repo.git"
git clone -q "$TMP/www/repo.git" "$TMP/src" 2>/dev/null
(cd "$TMP/src" && echo readme >README && git add README && git -c user.name=t -c user.email=t@t commit -qm one && git push -q origin HEAD:master) 2>/dev/null
git -C "$TMP/www/repo.git" update-server-info
# a port with nothing listening: bind one, close it
DEAD=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

$PY "$TMP/upstream.py" 127.0.0.1 "$TMP/www" >"$TMP/upstream.ports" &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$TMP/upstream.ports" ] && break; sleep 0.1; done
read -r WEB ECHO SLOW <"$TMP/upstream.ports"

cat >"$TMP/hosts" <<EOF2
127.0.0.1 up.test rebind.test a.wild.test b.wild.test wild.test
10.77.0.2 ns.test
10.77.0.99 silent.test
EOF2
cat >"$TMP/sites" <<EOF2
# the test's allow list
up.test:$WEB+private      # an internal site, opted in
up.test:$ECHO+private
rebind.test:$WEB          # listed, but resolves to loopback: refused
*.wild.test:$WEB+private
127.0.0.1:$SLOW           # an address, listed exactly
127.0.0.1:$DEAD
ns.test:8080+private
silent.test:8080+private
EOF2

"$OWSBX" proxy --port 0 --hosts-file "$TMP/hosts" --allow-sites-file "$TMP/sites" \
	--allow-site @package-registries --deny-site b.wild.test --connect-timeout-ms 1500 \
	--response-timeout-ms 1000 >"$TMP/port" 2>"$TMP/proxy.err" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
P=$(head -1 "$TMP/port")
PX=http://127.0.0.1:$P
like "$P" '^478[0-9][0-9]$' "owsbx proxy prints a port in 47800-47899"

C="curl -sS --max-time 10 -x $PX"
out=$($C "http://up.test:$WEB/index.html" 2>&1)
is "$out" "hello from upstream" "curl: a listed site over plain http"
out=$($C -p "http://UP.test.:$WEB/index.html" 2>&1)
is "$out" "hello from upstream" "curl: a listed site through a CONNECT tunnel, name normalised"
out=$($C -d 'some body' "http://up.test:$WEB/post" 2>&1)
is "$out" "got 9 bytes: some body" "curl: a POST body is relayed"
head -c 3000000 /dev/zero | tr '\0' 'y' >"$TMP/big"
out=$($C -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/big" "http://up.test:$WEB/post" 2>&1)
is "$out" "got 3000000 bytes: yyyyyyyyy" "curl: a 3 MB chunked POST body is relayed"

out=$($C -i "http://example.com/" 2>&1)
like "$out" "^HTTP/1.1 403" "an unlisted site gets 403"
like "$out" "example.com:80.*allow-site example.com:80" "the 403 names the host and how to allow it"
out=$($C -p "https://blocked.test/" 2>&1)
like "$out" "403" "an unlisted CONNECT gets 403"
out=$($C -i "http://127.0.0.1:$WEB/" 2>&1)
like "$out" "^HTTP/1.1 403" "an unlisted IP literal is refused"
out=$($C -i "http://localhost:$WEB/" 2>&1)
like "$out" "^HTTP/1.1 403" "unlisted localhost is refused"
out=$($C -i "http://up.test:$SLOW/" 2>&1)
like "$out" "^HTTP/1.1 403" "a listed host on another port is refused"

out=$(printf 'HELLO\r\n\r\n' | nc -w 3 127.0.0.1 "$P")
like "$out" "^HTTP/1.1 400" "garbage gets 400"
out=$(printf '\x16\x03\x01\x00\x05hello' | nc -w 3 127.0.0.1 "$P")
like "$out" "^HTTP/1.1 400" "a TLS hello sent to the proxy gets 400"
out=$(printf 'GET / HTTP/1.1\r\nHost: up.test\r\n\r\n' | nc -w 3 127.0.0.1 "$P")
like "$out" "^HTTP/1.1 400.*absolute" "an origin-form request gets 400"

out=$($C -i "http://127.0.0.1:$DEAD/" 2>&1)
like "$out" "^HTTP/1.1 502" "an unreachable upstream gets 502"
start=$(date +%s%N)
out=$($C -i "http://127.0.0.1:$SLOW/" 2>&1)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
like "$out" "^HTTP/1.1 504" "an upstream that does not answer gets 504 (after ${ms} ms)"

out=$($C -i "http://rebind.test:$WEB/" 2>&1)
like "$out" "^HTTP/1.1 403" "DNS rebinding: a listed name resolving to 127.0.0.1 is refused"
like "$out" "127.0.0.1.*\+private" "the refusal names the address and the opt-in"
out=$($C -p -i "https://rebind.test:$WEB/" 2>&1)
like "$out" "403" "DNS rebinding through CONNECT is refused too"

out=$($C "http://a.wild.test:$WEB/index.html" 2>&1)
is "$out" "hello from upstream" "a wildcard covers a subdomain"
out=$($C -i "http://wild.test:$WEB/index.html" 2>&1)
like "$out" "^HTTP/1.1 403" "a wildcard does not cover the apex"
out=$($C -i "http://b.wild.test:$WEB/index.html" 2>&1)
like "$out" "^HTTP/1.1 403" "--deny-site refuses a subdomain the wildcard allows"
like "$out" "denied by this sandbox's list \(entry !b.wild.test:\*\)" "its 403 names the deny entry"
unlike "$out" "allow-site" "and suggests no allow entry"
out=$($C -p "https://b.wild.test:$WEB/" 2>&1)
like "$out" "CONNECT tunnel failed, response 403" "a CONNECT to it is refused too"

# keep-alive: every request on one connection is checked
out=$($PY - "$P" "$WEB" <<'PY'
import socket, sys
p, web = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", p))
f = s.makefile("rb")
def ask(url):
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % url).encode())
    status = f.readline().decode().strip()
    n = 0
    while True:
        l = f.readline().decode()
        if l in ("\r\n", ""): break
        if l.lower().startswith("content-length:"): n = int(l.split(":")[1])
    f.read(n)
    return status
print(ask("http://up.test:%s/index.html" % web))
print(ask("http://up.test:%s/index.html" % web))
s.sendall(("POST http://up.test:%s/p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
           "3\r\nabc\r\n0\r\n\r\n" % web).encode())
print(f.readline().decode().strip()); [f.readline() for _ in range(3)]; f.read(len("got 3 bytes: abc"))
print(ask("http://blocked.test/"))
PY
)
like "$out" "200 OK.*200 OK.*200 OK.*403 Forbidden" "keep-alive: two GETs, a chunked POST, then a refused request on the same connection"
out=$(curl -sS -v --max-time 10 -x "$PX" "http://up.test:$WEB/index.html" "http://evil.test/" 2>&1)
like "$out" "hello from upstream.*X-Owsbx-Blocked: evil.test:80" "curl: a second URL on a reused connection is checked"

out=$(echo ping | timeout 5 nc -X connect -x "127.0.0.1:$P" up.test "$ECHO")
is "$out" "ping" "nc -X connect accepts the proxy's 200 (netcat-openbsd)"
out=$(echo ping | timeout 5 "$OWSBX" connect up.test "$ECHO" --proxy "127.0.0.1:$P" 2>&1)
is "$out" "ping" "owsbx connect tunnels stdin/stdout"
# Small reads go through a copy buffer, a read that fills it moves the tunnel to a pipe:
# 5 MiB each way must come back byte for byte across that switch.
head -c 5242880 /dev/urandom >"$TMP/random"
timeout 20 "$OWSBX" connect up.test "$ECHO" --proxy "127.0.0.1:$P" <"$TMP/random" >"$TMP/random.back" 2>&1
is "$(cmp "$TMP/random" "$TMP/random.back" 2>&1 && echo same)" "same" \
	"a CONNECT tunnel carries 5 MiB of random bytes there and back unchanged"
out=$(echo ping | OWSBX_PROXY=$PX timeout 5 "$OWSBX" connect blocked.test 22 2>&1)
rc=$?
like "$rc:$out" "^1:.*blocked.test:22" "owsbx connect refused: exit 1, names the host"
out=$(timeout 10 ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
	-o ProxyCommand="$OWSBX connect %h %p --proxy 127.0.0.1:$P" -p "$ECHO" x@up.test true 2>&1)
if command -v ssh >/dev/null; then
	like "$out" "banner|protocol|Connection closed|kex_exchange" "ssh through owsbx connect reaches the server (an echo server, not sshd)"
else
	skip "no ssh client"
fi

out=$(cd "$TMP" && timeout 20 git -c http.proxy="$PX" clone -q "http://up.test:$WEB/repo.git" clone 2>&1 && cat clone/README)
is "$out" "readme" "git clones through http.proxy"
out=$(cd "$TMP" && timeout 20 git -c http.proxy="$PX" clone -q "http://github.evil.test/repo.git" c2 2>&1)
like "$out" "403" "git is refused an unlisted site"

out=$(http_proxy=$PX $PY -c "
import urllib.request
print(urllib.request.urlopen('http://up.test:$WEB/index.html', timeout=5).read().decode().strip())" 2>&1)
is "$out" "hello from upstream" "python urllib through http_proxy"
out=$($PY -c "
import http.client
c = http.client.HTTPConnection('127.0.0.1', $P, timeout=5)
c.set_tunnel('up.test', $WEB)
c.request('GET', '/index.html')
print(c.getresponse().read().decode().strip())
c.request('GET', '/index.html')
print(c.getresponse().status)" 2>&1)
like "$out" "hello from upstream.200" "python http.client through a CONNECT tunnel, two requests"

# an upstream in a network namespace, on a private address
if ip netns add "$NS" 2>/dev/null; then
	H=${NS:0:10}h
	ip link add "$H" type veth peer name "${NS:0:10}n" &&
		ip link set "${NS:0:10}n" netns "$NS" &&
		ip addr add 10.77.0.1/24 dev "$H" && ip link set "$H" up &&
		ip -n "$NS" addr add 10.77.0.2/24 dev "${NS:0:10}n" &&
		ip -n "$NS" link set "${NS:0:10}n" up && ip -n "$NS" link set lo up
	ip netns exec "$NS" $PY -m http.server 8080 --bind 10.77.0.2 --directory "$TMP/www" >/dev/null 2>&1 &
	PIDS+=($!)
	for _ in $(seq 50); do curl -s --noproxy '*' -o /dev/null http://10.77.0.2:8080/ && break; sleep 0.1; done
	out=$($C "http://ns.test:8080/index.html" 2>&1)
	is "$out" "hello from upstream" "an opted-in private site in another namespace (10.77.0.2)"
	start=$(date +%s%N)
	out=$($C -p -i "https://silent.test:8080/" 2>&1)
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	like "$out" "504|502" "a CONNECT to an address that never answers ends in 504 or 502 (${ms} ms)"
else
	skip "cannot make a network namespace" 2
	N=$((N + 1))
fi

# runtime changes and the blocked log, through the library API
coproc HOST { exec "$TMP/proxy_host" --hosts-file "$TMP/hosts"; }
PIDS+=("$HOST_PID")
read -r HP <&"${HOST[0]}"
ask() { echo "$*" >&"${HOST[1]}"; local l; read -r l <&"${HOST[0]}"; echo "$l"; }
T0=$(ask now)
H="curl -sS --max-time 5 -x http://127.0.0.1:$HP"
out=$($H -i "http://up.test:$WEB/index.html" 2>&1)
like "$out" "^HTTP/1.1 403" "runtime: nothing is allowed at first"
is "$(ask allow "up.test:$WEB+private")" "ok" "runtime: allow a site"
out=$($H "http://up.test:$WEB/index.html" 2>&1)
is "$out" "hello from upstream" "runtime: the site is reachable at once, no restart"
is "$(ask disallow "up.test:$WEB+private")" "ok" "runtime: remove it"
out=$($H -i "http://up.test:$WEB/index.html" 2>&1)
like "$out" "^HTTP/1.1 403" "runtime: refused again"
like "$(ask allow 'not a host')" "^error" "runtime: a bad pattern is an error"
is "$(ask allow @search-apis)" "ok" "runtime: a named group"
T1=$(ask now)
$H -s -o /dev/null "http://late.test/" 2>/dev/null
json=$(ask blocked "$T0")
like "$json" '"host":"up.test","port":'"$WEB"',"count":2' "the blocked log counts refusals per site"
like "$json" '"first_ms":[0-9]+,"last_ms":[0-9]+,"reason":"not listed"' "with first and last time and the reason"
json=$(ask blocked "$T1")
like "$json" '^\[\{"host":"late.test","port":80,[^]]*\}\]$' "blocked since a time: only what was refused after it"
exec {HOST[1]}>&-

# bounded connections: the third of two allowed gets a 503
"$TMP/proxy_host" --max-conns 2 <"$TMP/never" >"$TMP/mc.port" 2>/dev/null &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/mc.port" ] && break; sleep 0.1; done
MC=$(cat "$TMP/mc.port")
out=$($PY - "$MC" <<'PY'
import socket, sys, time
p = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", p)) for _ in range(2)]
time.sleep(0.3)
third = socket.create_connection(("127.0.0.1", p))
third.settimeout(3)
print(third.recv(200).decode().splitlines()[0])
PY
)
like "$out" "503" "past the connection bound a client gets 503"

# The descriptor limit is the host's: the proxy leaves it as it found it (soft 40 here,
# under a hard limit it could raise) and, out of descriptors, answers 503 and goes on.
prlimit --nofile=40:4096 "$TMP/proxy_host" <"$TMP/never" >"$TMP/fd.port" 2>/dev/null &
FDP=$!
PIDS+=($FDP)
for _ in $(seq 50); do [ -s "$TMP/fd.port" ] && break; sleep 0.1; done
is "$(awk '/^Max open files/ {print $4}' "/proc/$FDP/limits")" 40 \
	"the proxy leaves RLIMIT_NOFILE's soft limit as the host set it"
out=$($PY - "$(cat "$TMP/fd.port")" <<'PY'
import socket, sys, time
p = int(sys.argv[1])
held, answers = [], []
for _ in range(60):
    s = socket.create_connection(("127.0.0.1", p))
    s.settimeout(0.3)
    try:
        answers.append(s.recv(200).decode().split("\r\n")[0])
    except socket.timeout:
        held.append(s)  # accepted: the proxy waits for a request head
print("held=%d" % len(held))
print("first_answer=%s" % (answers[0] if answers else ""))
for s in held:
    s.close()
# The proxy sees the closes when it next polls: until then it may still be out of them.
for _ in range(50):
    again = socket.create_connection(("127.0.0.1", p))
    again.settimeout(5)
    again.sendall(b"GET http://owstest-fd.invalid/ HTTP/1.1\r\nHost: owstest-fd.invalid\r\n\r\n")
    after = again.recv(200).decode().split("\r\n")[0]
    again.close()
    if " 503 " not in after:
        break
    time.sleep(0.1)
print("after=%s" % after)
PY
)
like "$out" "first_answer=HTTP/1.1 503" "out of descriptors, a connection is answered 503"
like "$out" "held=[1-9]" "after some were accepted"
like "$out" "after=HTTP/1.1 403" "and once descriptors are free again, the proxy serves (a 403 here)"
big=$(head -c 20000 /dev/zero | tr '\0' a)
out=$(printf 'GET http://up.test/ HTTP/1.1\r\nX: %s\r\n\r\n' "$big" | nc -w 3 127.0.0.1 "$P")
like "$out" "^HTTP/1.1 400.*too large" "a request head over 16 KiB gets 400"

like "$(cat "$TMP/proxy.err")" "refused example.com:80" "owsbx proxy reports refusals on stderr"
like "$(cat "$TMP/proxy.err")" "refused b.wild.test:$WEB \(denied by !b.wild.test:\*," \
	"and a denied site with its deny entry"
kill "${PIDS[1]}" 2>/dev/null
echo "1..$N"
[ "$FAILED" -eq 0 ]
