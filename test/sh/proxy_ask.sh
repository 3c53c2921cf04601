#!/bin/bash
# The ask hook (ows_session_set_ask), driven through the library by a stand-in host
# (test/sh/proxy_ask_host.c) as the throwaway person, on the landlock provider: commands
# inside ask the proxy for http://127.0.0.1:UP/, which the session does not list, and the
# hook answers yes or no at once or later from another thread, or never (the deadline
# refuses); a denied address is never asked; four asks are held at once while a listed
# site's request goes through; the session closes while an ask is pending.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
[ -f "$OWSTEST_ROOT/libowsandbox.a" ] || skip_all "run make first"
command -v cc >/dev/null && command -v curl >/dev/null || skip_all "needs cc and curl"
owstest_user_setup

HOST=$TU_BIN_DIR/proxy_ask_host
cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -I"$OWSTEST_ROOT/lib" -o "$HOST" \
	"$OWSTEST_DIR/sh/proxy_ask_host.c" "$OWSTEST_ROOT/libowsandbox.a" -ljansson -linih \
	-lmbedtls -lmbedx509 -lmbedcrypto -lpthread || bail_out "cannot build proxy_ask_host"
chmod 0755 "$HOST"
tcp_server "OWSTEST_ASK_$(rand_hex 4)" || bail_out "no upstream server"
D=$TU_WORK/ask
as_user mkdir -p "$D"

AS_USER_TIMEOUT=170 as_user "$HOST" ask "$SRV_PORT" "$D" >"$TU_TMP/host.out" 2>"$TU_TMP/host.err" </dev/null
RC=$?
OUT=$(cat "$TU_TMP/host.out")
kv() { sed -n "s/^$1=//p" <<<"$OUT" | head -1; }
is "$RC" 0 "the host drives its session through every scene"
diag "$OUT" "$(tail -5 "$TU_TMP/host.err")"
is "$(kv nohook_code)" 403 "without a hook an unlisted site is refused at once"
is "$(kv yes_code)" 200 "a hook that says yes at once lets the request through"
is "$(kv yes_asked)" "1 host=127.0.0.1 port=$SRV_PORT" "the hook is asked once, with the host and port"
is "$(kv no_code)" 403 "a hook that says no: the 403"
is "$(kv no_blocked)" 1 "and the refusal is in the session's blocked list"
is "$(kv later_yes_code)" 200 "a yes given later, from another thread, by id"
is "$(kv later_no_code)" 403 "a no given later"
is "$(kv timeout_code)" 403 "no answer: refused when the deadline passes"
t=$(kv timeout_ms)
ok "after the 2 s deadline, not long after (${t} ms)" [ "${t:-0}" -ge 1900 ] && [ "${t:-0}" -lt 10000 ]
is "$(kv late_answer)" -10 "an answer after the deadline: OWS_ENOTFOUND"
is "$(sed -n 's/^denied_code=//p' <<<"$OUT")" "403 denied_asked=0" "a denied address is refused, never asked"
is "$(kv concurrent_pending)" 4 "four asks at once are pending together"
is "$(kv listed_meanwhile)" 200 "meanwhile a listed site's request goes through"
is "$(kv concurrent_answered)" 4 "each of the four is answered by its id"
is "$(kv concurrent_codes)" "200,200,200,200" "and all four go through"
is "$(kv close_pending)" 1 "an ask is pending when the session closes"
t=$(kv close_ms)
ok "the close does not wait for the ask (${t} ms)" [ -n "$t" ] && [ "$t" -lt 10000 ]
is "$(kv answer_after_close)" -10 "an answer after the close: OWS_ENOTFOUND"
is "$(kv hook_after_close)" 0 "the hook is not called after the close"
done_testing
