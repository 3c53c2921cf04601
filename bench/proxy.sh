#!/bin/bash
# The allow-list proxy side by side with tinyproxy, in one run, on loopback:
#   bulk throughput through a CONNECT tunnel vs a direct connection (goal >= 0.9x),
#   tunnels opened per second and their latency (goal >= 2x tinyproxy's rate),
#   memory (RSS) of the proxy holding 1,000 open tunnels (goal < 64 MiB).
# Needs tinyproxy (apt-get install tinyproxy) for the comparison; without it, ours alone.
# BENCH_BYTES (default 4 GiB), BENCH_SECS (default 3), BENCH_WORKERS (default 4).
set -u
cd "$(dirname "$0")/.." || exit 1
[ -x ./owsbx ] || { echo "bench: build first (make)" >&2; exit 1; }
BYTES=${BENCH_BYTES:-4294967296}
SECS=${BENCH_SECS:-3}
W=${BENCH_WORKERS:-4}
TMP=$(mktemp -d /tmp/owsbench-proxy.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
cc -O2 -o "$TMP/pb" bench/proxy_bench.c -lpthread || exit 1
ulimit -n "$(ulimit -Hn)"

"$TMP/pb" sink >"$TMP/sink" & PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/sink" ] && break; sleep 0.1; done
SINK=$(cat "$TMP/sink")

./owsbx proxy --allow-site "127.0.0.1:$SINK" >"$TMP/ours" 2>/dev/null & OURS_PID=$!; PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/ours" ] && break; sleep 0.1; done
OURS=$(cat "$TMP/ours")

TINY=""
if command -v tinyproxy >/dev/null; then
	TINY=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$TMP/tiny.conf" <<EOF2
Port $TINY
Listen 127.0.0.1
Timeout 600
MaxClients 4096
LogLevel Critical
ConnectPort $SINK
Allow 127.0.0.1
EOF2
	tinyproxy -d -c "$TMP/tiny.conf" >/dev/null 2>&1 & TINY_PID=$!; PIDS+=($!)
	sleep 0.5
fi

best() { # best of 3 runs of a command printing one number
	local b=0 v
	for _ in 1 2 3; do v=$("$@"); [ "${v%% *}" -gt "$b" ] && b=${v%% *}; done
	echo "$b"
}
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($14 + $15) * 1000 / hz }' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "bulk throughput, $((BYTES >> 20)) MiB one way, best of 3 (MB/s)"
direct=$(best "$TMP/pb" send "$SINK" "$BYTES")
c0=$(cpu_ms "$OURS_PID")
ours=$(best "$TMP/pb" send "$SINK" "$BYTES" "$OURS")
ours_cpu=$(( $(cpu_ms "$OURS_PID") - c0 ))
printf '  %-28s %8s\n' "direct loopback" "$direct"
printf '  %-28s %8s  %sx direct\n' "owsbx proxy (CONNECT)" "$ours" "$(ratio "$ours" "$direct")"
if [ -n "$TINY" ]; then
	c0=$(cpu_ms "$TINY_PID")
	tiny=$(best "$TMP/pb" send "$SINK" "$BYTES" "$TINY")
	tiny_cpu=$(( $(cpu_ms "$TINY_PID") - c0 ))
	printf '  %-28s %8s  %sx direct\n' "tinyproxy (CONNECT)" "$tiny" "$(ratio "$tiny" "$direct")"
fi
gib=$(awk -v b="$BYTES" 'BEGIN { print 3 * b / 1073741824 }')
echo "  proxy CPU per GiB relayed: owsbx $(awk -v c="$ours_cpu" -v g="$gib" 'BEGIN { printf "%.0f", c / g }') ms${TINY:+, tinyproxy $(awk -v c="${tiny_cpu:-0}" -v g="$gib" 'BEGIN { printf "%.0f", c / g }') ms}"
echo "  ($(nproc) CPUs: sender, proxy and receiver share them; the proxy's time is almost all in the kernel)"
r=$(ratio "$ours" "$direct")
echo "  goal: >= 0.9x direct: $(awk -v r="$r" 'BEGIN { print (r >= 0.9) ? "met" : "NOT met" }') (${r}x)"

echo
echo "tunnels opened per second, $W workers for ${SECS}s (open, 200, close)"
printf '  %-28s %10s %12s %12s %16s\n' "" "tunnels/s" "median ms" "p99 ms" "CPU/1000 tunnels"
c0=$(cpu_ms "$OURS_PID")
read -r o_rate o_med o_p99 < <("$TMP/pb" open "$SINK" "$OURS" "$SECS" "$W")
o_cpu=$(awk -v c="$(( $(cpu_ms "$OURS_PID") - c0 ))" -v n="$o_rate" -v s="$SECS" 'BEGIN { printf "%.0f ms", c * 1000 / (n * s) }')
printf '  %-28s %10s %12s %12s %16s\n' "owsbx proxy" "$o_rate" "$o_med" "$o_p99" "$o_cpu"
if [ -n "$TINY" ]; then
	c0=$(cpu_ms "$TINY_PID")
	read -r t_rate t_med t_p99 < <("$TMP/pb" open "$SINK" "$TINY" "$SECS" "$W")
	t_cpu=$(awk -v c="$(( $(cpu_ms "$TINY_PID") - c0 ))" -v n="$t_rate" -v s="$SECS" 'BEGIN { printf "%.0f ms", c * 1000 / (n * s) }')
	printf '  %-28s %10s %12s %12s %16s\n' "tinyproxy" "$t_rate" "$t_med" "$t_p99" "$t_cpu"
	r=$(ratio "$o_rate" "$t_rate")
	echo "  goal: >= 2x tinyproxy's rate: $(awk -v r="$r" 'BEGIN { print (r >= 2) ? "met" : "NOT met" }') (${r}x)"
fi

echo
echo "memory with 1,000 open tunnels (RSS, MiB)"
mem() { # pid port -> "before after"
	local before after
	before=$(rss_kib "$1")
	mkfifo "$TMP/hold.$2"
	"$TMP/pb" hold "$SINK" "$2" 1000 <"$TMP/hold.$2" >"$TMP/held.$2" & local h=$!
	exec {fd}>"$TMP/hold.$2"
	for _ in $(seq 300); do grep -q held "$TMP/held.$2" 2>/dev/null && break; sleep 0.1; done
	after=$(rss_kib "$1")
	exec {fd}>&-
	wait "$h"
	awk -v a="$before" -v b="$after" 'BEGIN { printf "%.1f %.1f", a / 1024, b / 1024 }'
}
read -r ob oa < <(mem "$OURS_PID" "$OURS")
printf '  %-28s idle %6s  with 1,000 tunnels %6s\n' "owsbx proxy (whole owsbx)" "$ob" "$oa"
if [ -n "$TINY" ]; then
	read -r tb ta < <(mem "$TINY_PID" "$TINY")
	printf '  %-28s idle %6s  with 1,000 tunnels %6s  (main process only)\n' "tinyproxy" "$tb" "$ta"
fi
echo "  goal: < 64 MiB: $(awk -v a="$oa" 'BEGIN { print (a < 64) ? "met" : "NOT met" }')"
