#!/bin/bash
# The run call under the account provider: the C host of test/sh/run_call.sh
# (test/sh/run_host.c) as the person of a throwaway account machine, its session on the
# person's ~/work; its TAP lines counted here.  The commands run as the closed account,
# so what the host sees of them (exit codes, the pipes, the timeout's kill of what they
# started) crosses the setuid launcher.
ROOT=${OWS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v cc >/dev/null || { echo "1..0 # SKIP no C compiler"; exit 0; }
[ -f "$ROOT/libowsandbox.a" ] || { echo "1..0 # SKIP build first (make)"; exit 0; }
. "$ROOT/test/account_lib.sh"
. "$ROOT/test/relay.sh"

# Not in $BIN: that folder is the launcher's, compared before and after setup.
HOSTBIN=$T/host
mkdir -m 0755 "$HOSTBIN"
if cc -std=c11 -O2 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/test/unit" -o "$HOSTBIN/run_host" \
	"$ROOT/test/sh/run_host.c" "$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread \
	2>"$T/cc.err"; then
	chmod 0755 "$HOSTBIN/run_host"
	timeout -k 5 150 runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$PHOME" USER="$PERSON" sh -c 'cd ~/work && exec "$@"' sh \
		"$HOSTBIN/run_host" account "$PHOME/work" "$CONF" </dev/null >"$T/host.tap" 2>"$T/host.err" \
		{OWS_LOCK_FD}<&-
	rc=$?
	relay_tap "$T/host.tap" ok not_ok skip
	check "the host exits 0 (not killed by SIGPIPE, no test failed; got $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || tail -5 "$T/host.err" | diag
else
	not_ok "run_host builds"
	diag <"$T/cc.err"
fi
done_testing
