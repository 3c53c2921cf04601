#!/bin/bash
# Injected tunnels' relay threads are bounded per session and give their memory back
# (landlock, through the library, test/sh/proxy_relays_host.c): session A's command opens
# 70 CONNECTs to the injected host and never starts TLS on them; A gets its share of the
# host's relay threads and a 503 for the rest, session B's injected request succeeds
# meanwhile, and once they are gone the host's threads are as before and its RSS is
# within 8 MiB of before (it was 39 MB more: glibc kept each thread's arena).
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
[ -f "$OWSTEST_ROOT/libowsandbox.a" ] || skip_all "run make first"
command -v cc >/dev/null && command -v curl >/dev/null && command -v openssl >/dev/null ||
	skip_all "needs cc, curl and openssl"
owstest_user_setup
H=$TU_HOME
W=$(mktemp -d /tmp/owstest-relays.XXXXXX)
owstest_remove_at_exit "$W"
chmod 755 "$W"
. "$OWSTEST_DIR/inject_certs.sh"
inject_certs "$W" || bail_out "cannot make the test's certificates"
TOKEN=owstest_$(openssl rand -hex 24)
"$PY" "$OWSTEST_ROOT/test/helpers/inject_server.py" "$W/srv.pem" "$W/srv.key" \
	"$W/srv.log" "$W/srv.port" "$TOKEN" >/dev/null 2>&1 &
owstest_root_pid $!
for _ in $(seq 100); do [ -s "$W/srv.port" ] && break; sleep 0.05; done
PA=$(cat "$W/srv.port")
[ -n "$PA" ] || bail_out "the test's HTTPS server did not start"

as_user /bin/sh -c "mkdir -p $H/.config/owstool && umask 077 && printf '%s\n' '$TOKEN' >$H/.config/owstool/token"
cfg=$TU_BIN_DIR/relays.ini
printf '%s\n' "[credentials]" "enable = owstool" "inject = owstool" "upstream_ca = $W/ca.pem" \
	"[credential owstool]" "path = .config/owstool/token" "kind = credential" \
	"hosts = localhost:$PA" "env = OWSTOOL_TOKEN_FILE" "lets = call the owstool API" >"$cfg"
chmod 0644 "$cfg"

HOST=$TU_BIN_DIR/proxy_relays_host
cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -I"$OWSTEST_ROOT/lib" -o "$HOST" \
	"$OWSTEST_DIR/sh/proxy_relays_host.c" "$OWSTEST_ROOT/libowsandbox.a" -ljansson -linih \
	-lmbedtls -lmbedx509 -lmbedcrypto -lpthread || bail_out "cannot build proxy_relays_host"
chmod 0755 "$HOST"
D=$TU_WORK/relays
as_user mkdir -p "$D"
cp "$OWSTEST_ROOT/test/helpers/proxy_burst.py" "$D/burst.py"
chmod 644 "$D/burst.py"

N=70
AS_USER_ENV=("OWSBX_CONFIG=$cfg")
AS_USER_TIMEOUT=170 as_user "$HOST" burst "$PA" "$D" "$N" >"$TU_TMP/host.out" 2>"$TU_TMP/host.err" </dev/null
RC=$?
OUT=$(cat "$TU_TMP/host.out")
kv() { sed -n "s/^$1=//p" <<<"$OUT"; }
is "$RC" 0 "the host ran the burst"
diag "$OUT" "$(tail -5 "$TU_TMP/host.err")"
is "$(cat "$D/warm_a" 2>/dev/null)" accepted "an injected request works (session A)"
read -r got busy <"$D/held"
is "$got" 32 "session A gets its share of relay threads: 32"
is "$busy" $((N - 32)) "and a 503 at once for the rest"
held=$(( $(kv held_threads) - $(kv base_threads) ))
ok "the host runs at most 32 relay threads for A (${held} more threads)" [ "$held" -le 32 ]
is "$(cat "$D/b_meanwhile" 2>/dev/null)" accepted "session B's injected request succeeds meanwhile"
is "$(kv burst_exit)" 0 "A's command ends"
is "$(kv after_threads)" "$(kv base_threads)" "the relay threads are gone once their clients are"
grew=$(( ($(kv after_rss_kb) - $(kv base_rss_kb)) / 1024 ))
diag "RSS: before $(( $(kv base_rss_kb) / 1024 )) MiB, held $(( $(kv held_rss_kb) / 1024 )) MiB, after $(( $(kv after_rss_kb) / 1024 )) MiB"
ok "their memory goes back: RSS within 8 MiB of before (${grew} MiB more)" [ "$grew" -lt 8 ]
done_testing
