#!/bin/bash
# One session cannot starve another of the host's one proxy (landlock, through the library):
# session A opens 4200 connections to its proxy (more than the proxy's 4096), each with a
# request head begun and a byte more every second; it is given its quota (1024) and the rest
# get a 503 at once; session B's 20 requests meanwhile all succeed; and each of A's held
# connections is ended once its head is not whole 30 s after it began, however it trickles.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
[ -f "$OWSTEST_ROOT/libowsandbox.a" ] || skip_all "run make first"
command -v cc >/dev/null && command -v curl >/dev/null || skip_all "needs cc and curl"
owstest_user_setup

HOST=$TU_BIN_DIR/proxy_calls_host
cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -I"$OWSTEST_ROOT/lib" -o "$HOST" \
	"$OWSTEST_DIR/sh/proxy_calls_host.c" "$OWSTEST_ROOT/libowsandbox.a" -ljansson -linih \
	-lmbedtls -lmbedx509 -lmbedcrypto -lpthread || bail_out "cannot build proxy_calls_host"
chmod 0755 "$HOST"
tcp_server "OWSTEST_FLOOD_$(rand_hex 4)" || bail_out "no upstream server"
D=$TU_WORK/flood
as_user mkdir -p "$D"
cp "$OWSTEST_ROOT/test/helpers/proxy_flood.py" "$D/flood.py"
chmod 644 "$D/flood.py"

AS_USER_TIMEOUT=170 as_user "$HOST" flood "$SRV_PORT" "$D" "$D/flood.py" 4200 \
	>"$TU_TMP/host.out" 2>"$TU_TMP/host.err" </dev/null
RC=$?
OUT=$(cat "$TU_TMP/host.out")
is "$RC" 0 "the two sessions ran"
diag "$OUT" "$(tail -5 "$TU_TMP/host.err")"
read -r held refused <"$D/held"
is "$held" 1024 "session A holds its quota of the proxy's connections"
is "$refused" $((4200 - 1024)) "and the rest get a 503 at once"
is "$(cat "$D/b_ok" 2>/dev/null)" 20 "session B's 20 requests all succeed meanwhile"
read -r ended secs <"$D/trickle"
ok "every trickling head is ended, a byte a second notwithstanding" [ "${ended:-0}" -gt 0 ] && [ "$ended" = "$held" ]
diag "the last ended ${secs}s after the heads began (the deadline is 30 s from a head's first byte)"
done_testing
