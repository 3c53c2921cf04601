#!/bin/bash
# What a host killed while its session opened leaves of the proof's probes (the canary in
# the home, the named probe socket in /dev/shm or /tmp), the next session removes: the
# person's own, a minute old, whose id has no abstract probe listening. A live session's
# probes (its abstract probe listens), young ones, and other people's files stay.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

SHM=/dev/shm
[ -d "$SHM" ] && [ "$(stat -c %a "$SHM")" = 1777 ] || SHM=/tmp
dead=$(rand_hex 16) live=$(rand_hex 16) young=$(rand_hex 16) theirs=$(rand_hex 16)
sock() { "$PY" -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$1"; }

# A dead session's canary and socket, two minutes old; a young dead one; a live one.
for id in "$dead" "$young" "$live"; do
	as_user sh -c "printf %s $id > '$TU_HOME/.owsandbox-canary-$id'"
	as_user "$PY" -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
		"$SHM/.owsandbox-probe-$id.sock"
done
for id in "$dead" "$live"; do
	touch -h -d '2 minutes ago' "$TU_HOME/.owsandbox-canary-$id" "$SHM/.owsandbox-probe-$id.sock"
done
# The live session: its abstract probe listens (as the person, in this network namespace).
as_user_bg "$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("\0owsandbox-probe-" + sys.argv[1]); s.listen(1)
open(sys.argv[2], "w").close(); time.sleep(86400)' "$live" "$TU_WORK/listening"
listener=$AS_USER_PID
poll 5 test -e "$TU_WORK/listening"
ok "control: the live session's abstract probe listens" grep -q "@owsandbox-probe-$live\$" /proc/net/unix
# Someone else's, dead and old: root's.
sock "$SHM/.owsandbox-probe-$theirs.sock"
touch -h -d '2 minutes ago' "$SHM/.owsandbox-probe-$theirs.sock"

sbx run -- true
is "$SBX_RC" 0 "a session opens and runs beside the leftovers"
ok "the dead session's canary is gone" test ! -e "$TU_HOME/.owsandbox-canary-$dead"
ok "... and its probe socket" test ! -e "$SHM/.owsandbox-probe-$dead.sock"
ok "a live session's canary stays" test -e "$TU_HOME/.owsandbox-canary-$live"
ok "... and its probe socket" test -S "$SHM/.owsandbox-probe-$live.sock"
ok "a young one stays (its session may be opening)" test -e "$TU_HOME/.owsandbox-canary-$young"
ok "... its socket too" test -S "$SHM/.owsandbox-probe-$young.sock"
ok "someone else's stays" test -S "$SHM/.owsandbox-probe-$theirs.sock"

kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
for id in "$dead" "$live" "$young" "$theirs"; do
	rm -f "$TU_HOME/.owsandbox-canary-$id" "$SHM/.owsandbox-probe-$id.sock"
done
done_testing
