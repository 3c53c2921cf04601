#!/bin/bash
# The account provider, as offline.sh and plan.sh test landlock: under none a command that
# fails after asking for an internet socket is told once that the network is off (the
# launcher's init counts it in the call's reaper); one that succeeds is not; --dry-run
# names the provider, the account commands run as and the folder, and runs nothing.
. "$(dirname "$0")/../account_lib.sh"
PY=/usr/bin/python3

out=$(owsbx run --provider account -- "$PY" -c 'import socket, sys
try:
    socket.create_connection(("192.0.2.7", 80), 3)
except OSError as e:
    print(e.errno)
sys.exit(3)' 2>"$T/err")
rc=$?
check "a refused internet socket, then exit 3 (got $rc)" test "$rc" = 3
check "the socket is refused with EPERM (got $out)" test "$out" = 1
check "owsbx says the network is off, once" test "$(grep -c 'the network is off (--net none)' "$T/err")" = 1
[ "$(grep -c 'the network is off' "$T/err")" = 1 ] || diag <"$T/err"

owsbx run --provider account -- "$PY" -c 'import socket
try:
    socket.socket()
except OSError:
    pass' 2>"$T/err"
check "a command that succeeded is not told" test ! -s "$T/err"

out=$(owsbx run --provider account --dry-run --rw "$PHOME/work" -- touch "$PHOME/work/ran" 2>&1)
rc=$?
check "run --dry-run under account exits 0 (got $rc)" test "$rc" = 0
check "and names the provider" grep -q "provider: account" <<<"$out"
check "and the account commands run as ($CLOSED)" grep -q "runs as: $CLOSED " <<<"$out"
check "and the folder" grep -q "folder: $PHOME/work (read-write)" <<<"$out"
check "and runs nothing" test ! -e "$PHOME/work/ran"
done_testing
