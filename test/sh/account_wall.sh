#!/bin/bash
# The account provider's wall, attacked from inside by a throwaway person's
# sandbox: files, /proc, network (the firewall by uid), vsock, processes
# (also after `kill -9` of the host), and what is left afterwards.  Limits: account_limits.sh.
. "$(dirname "$0")/../account_lib.sh"
PY=/usr/bin/python3

# Listeners on the host: one outside the proxy range (v4 and v6), one inside.
$PY - "$T" <<'EOF' &
import socket, sys, threading
outs = []
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.bind((addr, 0 if fam == socket.AF_INET else outs[0].getsockname()[1]))
    s.listen(16)
    outs.append(s)
inside = socket.socket()
for port in range(47850, 47900):
    try:
        inside.bind(("127.0.0.1", port)); break
    except OSError:
        pass
inside.listen(16)
open(sys.argv[1] + "/ports", "w").write("%d %d\n" % (outs[0].getsockname()[1], inside.getsockname()[1]))
threading.Event().wait()  # until the EXIT trap kills it, however slow the machine
EOF
LISTENER=$!
trap 'kill $LISTENER 2>/dev/null; teardown' EXIT
for _ in $(seq 50); do [ -s "$T/ports" ] && break; sleep 0.1; done
read -r PORT_OUT PORT_IN <"$T/ports"

inside() { owsbx run --provider account "$@"; }

# ------------------------------------------------------------------ proof
out=$(owsbx verify --provider account 2>&1)
check "the closed account's proof passes" grep -q '"passed": true' <<<"$out"
# The same proof as the landlock provider's: the same wall, another identity.
for c in "network socket tcp" "network socket udp" "network socket vsock" "io_uring" \
	"abstract socket unreachable" "home not listable"; do
	check "proof checks: $c" grep -q "\"$c" <<<"$out"
done
out=$(owsbx verify --provider account --net open 2>&1)
check "the open account's proof passes" grep -q '"passed": true' <<<"$out"
# Where Landlock has no scopes (ABI < 6) `open` runs partial, only when the config says so
# (CONF does there, see account_lib.sh), and says so; without the setting it is refused
# before the launcher runs, as under landlock (test/sh/open_partial.sh).
abi=$(landlock_abi)
if have_landlock_abi 6; then
	check "ABI $abi: the open account's proof has no partial check" \
		test "$(grep -c '"partial"' <<<"$out")" = 0
else
	check "ABI $abi: the open account's proof marks its abstract socket check partial" \
		grep -q '"partial": true' <<<"$out"
	grep -v '^open_without_scopes' "$CONF" >"$T/strict.ini"
	chmod 0644 "$T/strict.ini"
	out=$(owsbx run --provider account --net open --config "$T/strict.ini" -- /bin/true 2>&1)
	check "ABI $abi: without open_without_scopes, open is refused (exit 70)" test $? = 70
	check "ABI $abi: naming the setting" grep -q "open_without_scopes = partial" <<<"$out"
	as_person rm -f "$PHOME/ev.jsonl"
	owsbx run --provider account --net open --events "$PHOME/ev.jsonl" -- /bin/true
	ev=$(as_person $PY -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] in ("open", "spawn"):
        print(e["event"], e["enforcement"], ",".join(p["promise"] for p in e.get("partial", [])))
' "$PHOME/ev.jsonl" 2>&1)
	check "ABI $abi: with it, the open and spawn events say partial, and which promise" \
		test "$ev" = $'open partial unix_sockets.outside\nspawn partial unix_sockets.outside'
	as_person rm -f "$PHOME/ev.jsonl"
fi

# --------------------------------------------------------------- identity
check "runs as the closed account" test "$(inside -- id -u 2>&1)" = "$(id -u "$CLOSED")"
check "runs as the open account with --net open" \
	test "$(inside --net open -- id -u 2>&1)" = "$(id -u "$OPEN")"
check "no supplementary group of the person's" test "$(inside -- id -G 2>&1)" = "$(id -g "$CLOSED")"
check "empty capability sets inside" \
	test "$(inside -- sh -c 'grep ^CapEff /proc/self/status' | awk '{print $2}')" = 0000000000000000

# ------------------------------------------------------------------ files
# What ACL grants add: traverse on the home.  From here the account could read
# any "other"-readable file there by name, unless Landlock hides it.
setfacl -m "u:$CLOSED:--x" "$PHOME"
check "premise: outside the sandbox the account reads ~/.bashrc by name" \
	setpriv --reuid="$CLOSED" --regid="$CLOSED" --clear-groups sh -c "cat $PHOME/.bashrc >/dev/null"
check "~/.bashrc not readable inside" \
	inside -- sh -c "! cat $PHOME/.bashrc 2>/dev/null"
check "the ssh key not readable inside" \
	inside -- sh -c "! cat $PHOME/.ssh/id_ed25519 2>/dev/null"
check "the home not listable inside" inside -- sh -c "! ls $PHOME 2>/dev/null"
setfacl -x "u:$CLOSED" "$PHOME"
for d in /etc /usr /var/tmp "$PHOME" "$T/state" "$T/state/sandboxes"; do
	check "writing in $d refused" inside -- sh -c "! touch $d/owstest-probe 2>/dev/null"
done
check "the private home is writable" inside -- sh -c 'echo x > "$HOME/f" && test -s "$HOME/f"'
check "/tmp is private: written inside, absent outside" \
	inside -- sh -c 'echo x > /tmp/owstest-inside-probe'
check "... and absent on the host" test ! -e /tmp/owstest-inside-probe
check "the test's folder on the host ($T) is not visible" inside -- sh -c "! test -e $T/ports"
check "premise: the ssh-agent answers outside" \
	as_person sh -c 'ssh-add -l >/dev/null 2>&1; test $? = 1'
check "the ssh-agent is unreachable" \
	inside --env AGENT="$SSH_AUTH_SOCK" -- sh -c '! SSH_AUTH_SOCK=$AGENT ssh-add -l >/dev/null 2>&1'
check "other people's other-readable files are hidden (/var)" \
	inside -- sh -c '! ls /var/log >/dev/null 2>&1'

# ------------------------------------------------------------------- /proc
# init, the call's reaper, sh, ls and grep
n=$(inside -- sh -c 'ls /proc | grep -c "^[0-9]"')
check "/proc shows only the sandbox ($n processes)" test "$n" -le 5
check "the host's processes are not in /proc" \
	inside -- sh -c "! test -e /proc/$LISTENER"

# ----------------------------------------------------------------- network
check "a loopback port outside 47800-47899 is refused" \
	inside -- sh -c "! timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$PORT_OUT' 2>/dev/null"
check "[::1] is refused" \
	inside -- sh -c "! timeout 5 bash -c 'exec 3<>/dev/tcp/::1/$PORT_OUT' 2>/dev/null"
check "a loopback port in 47800-47899 of the host is out of reach too (own network)" \
	inside -- sh -c "! timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$PORT_IN' 2>/dev/null"
check "in allowlist too, the host's loopback is out of reach (only the proxy, handed in)" \
	inside --net allowlist -- sh -c "! timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$PORT_IN' 2>/dev/null"
# Refused, not dropped: the connection fails on its own (1), it is not timeout's 124. No
# clock is read: a slow machine (a VM under TCG) must not fail this.
rc=$(inside -- sh -c "timeout 10 bash -c 'exec 3<>/dev/tcp/192.0.2.1/443' 2>/dev/null; echo \$?")
check "a public address is refused, not left to time out (exit $rc)" \
	test "$rc" -ne 0 -a "$rc" -ne 124
check "UDP is refused" inside -- sh -c "! bash -c 'echo x > /dev/udp/192.0.2.1/53' 2>/dev/null"
check "MPTCP is refused" inside --net allowlist -- $PY -c "
import socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
except PermissionError:
    sys.exit(0)
s.settimeout(3)
sys.exit(0 if s.connect_ex(('192.0.2.1', 443)) else 1)"
check "vsock is refused" inside -- $PY -c "
import socket, sys
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
except PermissionError:
    sys.exit(0)
sys.exit(1)"
check "with allowlist, a server started inside may listen in the sandbox's own network" \
	inside --net allowlist -- $PY -c "
import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=3)"
check "the open account reaches a port outside the range" \
	inside --net open -- timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT_OUT"

# --------------------------------------------------------------- processes
alive() { # processes of uid $1 that are not zombies
	ps -o stat= -u "$1" 2>/dev/null | grep -vc '^Z'
}
CUID=$(id -u "$CLOSED")
inside -- sh -c '
	trap "" TERM HUP
	(sleep 1000 &) ; setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 &
	(trap "" TERM HUP; exec sleep 1000) &
	sleep 0.2' >/dev/null 2>&1
check "every process ends with the session (double fork, setsid, nohup)" test "$(alive "$CUID")" = 0

as_person "$BIN/owsbx" run --provider account -- sh -c \
	'(sleep 1000 &); setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & sleep 1000' \
	>/dev/null 2>&1 &
for _ in $(seq 100); do [ "$(alive "$CUID")" -ge 4 ] && break; sleep 0.1; done
host=$(session_host "$PERSON" "$BIN/owsbx run")
check "the session runs before the kill ($(alive "$CUID") processes)" test "$(alive "$CUID")" -ge 4
kill -9 "$host"
for _ in $(seq 50); do [ "$(alive "$CUID")" = 0 ] && break; sleep 0.1; done
check "after kill -9 of the host, every process is gone" test "$(alive "$CUID")" = 0
for _ in $(seq 50); do [ -z "$(ls "$T/state/sandboxes")" ] && break; sleep 0.1; done
check "after kill -9 of the host, the private folder is gone" test -z "$(ls "$T/state/sandboxes")"

check "no private folder left behind" test -z "$(ls "$T/state/sandboxes")"

done_testing
