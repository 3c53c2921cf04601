#!/bin/bash
# One account-provider session used from several threads at once, with no lock of the
# host's: the C host of test/sh/threads.sh (threads_host.c) run as the throwaway person
# on a machine test/account_lib.sh sets up. The commands are children of the launcher's
# init, not of the host: ows_proc_fd() still becomes readable when one exits. Close while
# threads wait or spawn, double close, use after close and NULL, as on landlock.
ROOT=${OWS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/test/account_lib.sh"

if ! cc -std=c11 -O2 -g -D_GNU_SOURCE -I"$ROOT/include" -o "$BIN/threads_host" \
	"$ROOT/test/sh/threads_host.c" "$ROOT/libowsandbox.a" \
	-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread; then
	not_ok "threads_host builds"
	done_testing
fi
chmod 0755 "$BIN/threads_host"

out=$(timeout 170 runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
	HOME="$PHOME" USER="$PERSON" "$BIN/threads_host" "$CONF" \
	'{"provider": "account", "network": "none"}' 8 2>&1 {OWS_LOCK_FD}<&-)
rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "account: ${line#ok - }" ;;
	"not ok - "*) not_ok "account: ${line#not ok - }" ;;
	"#"*) echo "$line" ;;
	esac
done <<<"$out"
check "account: the host exits 0 (no failure, no crash, no hang; rc $rc)" test "$rc" = 0
rm -f "$BIN/threads_host"
done_testing
