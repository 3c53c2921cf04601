#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run inside the sandbox, with their own $
#
# test/darwin/attacks.sh [OWSBX]: the seatbelt provider attacked from inside, on a Mac.
# scripts/macos-check.sh runs it with the owsbx it built; it cannot run on Linux.
#
# Each attack runs as the person (never root) with `owsbx run --provider seatbelt` and
# prints TAP: ok / not ok, then 1..N; the exit status is the number of failures (capped).
# Every attack command first does something the wall allows and prints "alive": an
# attack that fails because nothing runs at all is not counted as the wall holding
# (a sanity test up front stops the run when nothing runs).  What an attack could
# leave is looked for on the host, not only in what the command says.
#
# Throwaway things: a folder under /tmp (owstest-attacks.*) and one under the home
# (owstest-secret.*) holding a fake key; both are removed at the end, and so is every
# background helper this script starts.
set -u
OWSBX=${1:-${OWSBX:-./owsbx}}
case $OWSBX in /*) ;; *) OWSBX=$PWD/$OWSBX ;; esac
[ -x "$OWSBX" ] || { echo "Bail out! $OWSBX is not an executable owsbx"; exit 2; }
[ "$(uname -s)" = Darwin ] || { echo "Bail out! the seatbelt attacks run on macOS only"; exit 2; }
[ "$(id -u)" != 0 ] || { echo "Bail out! run as yourself, not root"; exit 2; }

N=0 FAILED=0 WORK='' SECRET_DIR=''
HELPERS=()
ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; [ -n "${2:-}" ] && echo "# $2"; }
check() { # check DESCRIPTION CONDITION-STATUS [DIAGNOSTIC]
	if [ "$2" = 0 ]; then ok "$1"; else not_ok "$1" "${3:-}"; fi
}
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local p
	for p in "${HELPERS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$WORK" ] && rm -rf "$WORK"
	[ -n "$SECRET_DIR" ] && rm -rf "$SECRET_DIR"
}

# Canonical paths (/tmp is /private/tmp): Seatbelt matches what the kernel sees.
trap cleanup EXIT
WORK=$(cd -P "$(mktemp -d /tmp/owstest-attacks.XXXXXX)" && pwd -P) || exit 2
SECRET_DIR=$(cd -P "$(mktemp -d "$HOME/owstest-secret.XXXXXX")" && pwd -P) || exit 2
RW=$WORK/rw RO=$WORK/ro OUT=$WORK/outside
mkdir -p "$RW" "$RO" "$OUT"
SECRET="owstest-secret-$$-$RANDOM$RANDOM"
printf '%s\n' "$SECRET" >"$SECRET_DIR/id_ed25519"
chmod 600 "$SECRET_DIR/id_ed25519"
echo readable >"$RO/file"
echo mine >"$RW/file"

# sbx NET CMD...: runs CMD in a seatbelt session with the rw and ro folders; sets OUT_TEXT, RC.
sbx() {
	local net=$1
	shift
	OUT_TEXT=$(cd "$RW" && "$OWSBX" run --provider seatbelt --net "$net" --rw "$RW" --ro "$RO" \
		-- "$@" 2>&1)
	RC=$?
}
# inside NET SCRIPT [ARG]...: /bin/sh -c SCRIPT in the session, after the allowed step.
inside() {
	local net=$1 script=$2
	shift 2
	sbx "$net" /bin/sh -c 'cat "$0/file" >/dev/null && echo alive; '"$script" "$RO" "$@"
}
alive() { grep -q '^alive$' <<<"$OUT_TEXT"; }
said() { grep -q "$1" <<<"$OUT_TEXT"; }
# held DESCRIPTION HOST-CHECK-STATUS: the command ran, did not say ESCAPED, and the host saw nothing.
held() {
	if ! alive; then
		not_ok "$1" "the command did not run: $(head -c 400 <<<"$OUT_TEXT")"
	elif said ESCAPED || [ "$2" != 0 ]; then
		not_ok "$1" "$(head -c 400 <<<"$OUT_TEXT")"
	else
		ok "$1"
	fi
}
free_port() { echo $((20000 + RANDOM % 20000)); }

# ------------------------------------------------------------------ sanity
"$OWSBX" verify --provider seatbelt --net none --rw "$RW" --ro "$RO" >"$WORK/proof.json" 2>&1
check "the proof passes from inside" $? "$(head -c 600 "$WORK/proof.json")"
inside none 'echo new >"$PWD/made" && cat "$PWD/made"'
if alive && said '^new$' && [ -f "$RW/made" ]; then
	ok "sanity: a command runs, reads the ro folder and writes the rw folder"
else
	not_ok "sanity: a command runs, reads the ro folder and writes the rw folder" "$OUT_TEXT"
	echo "Bail out! nothing runs under the seatbelt provider: the attacks would prove nothing"
	echo "1..$N"
	exit 1
fi

# ------------------------------------------------------------------ files
inside none 'cat "$1" && echo ESCAPED' "$SECRET_DIR/id_ed25519"
! said "$SECRET"
held "a secret planted under the home cannot be read" $?

inside none 'ls "$1" && echo ESCAPED' "$HOME"
held "the home cannot be listed" 0

inside none 'echo x >"$1/escape" && echo ESCAPED' "$OUT"
[ ! -e "$OUT/escape" ]
held "nothing can be written outside the rw folder" $?

inside none 'echo x >"$1/escape" && echo ESCAPED; echo x >>"$1/file" && echo ESCAPED' "$RO"
[ ! -e "$RO/escape" ] && [ "$(cat "$RO/file")" = readable ]
held "the ro folder cannot be written" $?

echo keep >"$RW/moveme"
inside none 'mv "$PWD/moveme" "$1/moved" && echo ESCAPED' "$OUT"
[ ! -e "$OUT/moved" ] && [ -f "$RW/moveme" ]
held "a file cannot be renamed out of the rw folder" $?

inside none 'mv "$PWD/file" "$1/taken" && echo ESCAPED' "$RO"
[ ! -e "$RO/taken" ]
held "a file cannot be renamed into the ro folder" $?

# A FIFO of the host's outside: writing into it would reach whoever reads it.
mkfifo "$OUT/hostfifo"
cat "$OUT/hostfifo" >"$WORK/fifo-got" 2>/dev/null &
HELPERS+=($!)
inside none 'mkfifo "$1/newfifo" && echo ESCAPED; echo owstest >"$1/hostfifo" && echo ESCAPED' "$OUT"
kill "${HELPERS[${#HELPERS[@]} - 1]}" 2>/dev/null
[ ! -e "$OUT/newfifo" ] && [ ! -s "$WORK/fifo-got" ]
held "no FIFO outside can be made or written" $?

inside none 'ln "$PWD/file" "$1/hardlink" && echo ESCAPED; ln "$2" "$PWD/stolen" && echo ESCAPED
cat "$PWD/stolen" 2>/dev/null' "$OUT" "$SECRET_DIR/id_ed25519"
! said "$SECRET" && [ ! -e "$OUT/hardlink" ] && [ ! -e "$RW/stolen" ]
held "no hard link leads out of the rw folder or brings a secret in" $?

inside none 'ln -s "$1" "$PWD/key" && cat "$PWD/key"; ln -s "$2" "$PWD/out" &&
echo x >"$PWD/out/via-link" && echo ESCAPED' "$SECRET_DIR/id_ed25519" "$OUT"
! said "$SECRET" && [ ! -e "$OUT/via-link" ]
held "a symbolic link in the rw folder reaches nothing outside" $?
rm -f "$RW/key" "$RW/out"

# ---------------------------------------------------------------- network
PORT=$(free_port)
nc -l 127.0.0.1 "$PORT" >"$WORK/tcp-got" 2>/dev/null &
HELPERS+=($!)
inside allowlist 'printf owstest | /usr/bin/nc -w 2 127.0.0.1 "$1" && echo ESCAPED' "$PORT"
[ ! -s "$WORK/tcp-got" ]
held "allowlist: a loopback port other than the proxy's cannot be reached" $?

inside allowlist '/usr/bin/nc -z -G 3 -w 3 1.1.1.1 443 && echo ESCAPED'
held "allowlist: a host outside cannot be reached directly" 0

inside allowlist 'curl -s -o /dev/null -m 10 https://example.com/ && echo ESCAPED'
held "allowlist: a site not on the list is refused by the proxy" 0

inside none '/usr/bin/nc -z -G 3 -w 3 1.1.1.1 443 && echo ESCAPED'
held "none: a host outside cannot be reached" 0

UPORT=$(free_port)
nc -u -l 127.0.0.1 "$UPORT" >"$WORK/udp-got" 2>/dev/null &
HELPERS+=($!)
inside allowlist 'printf owstest | /usr/bin/nc -u -w 1 127.0.0.1 "$1"; printf owstest |
/usr/bin/nc -u -w 1 1.1.1.1 53 && echo sent' "$UPORT"
[ ! -s "$WORK/udp-got" ]
held "allowlist: no UDP datagram reaches a loopback port" $?

nc -lU "$OUT/host.sock" >"$WORK/unix-got" 2>/dev/null &
HELPERS+=($!)
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$OUT/host.sock" ] && break; sleep 0.2; done
inside open 'printf owstest | /usr/bin/nc -w 2 -U "$1" && echo ESCAPED
[ -n "$2" ] && /usr/bin/nc -w 2 -U "$2" </dev/null && echo ESCAPED' "$OUT/host.sock" "${SSH_AUTH_SOCK:-}"
[ ! -s "$WORK/unix-got" ]
held "open: no unix socket of the host (nor the ssh agent) can be reached" $?

# --------------------------------------------------------------- processes
sleep 600 &
VICTIM=$!
HELPERS+=("$VICTIM")
inside none 'kill -0 "$1" && echo ESCAPED; kill -TERM "$1" && echo ESCAPED' "$VICTIM"
kill -0 "$VICTIM" 2>/dev/null
held "a process outside cannot be signalled" $?

# gone: the pid is no process, or a zombie its new parent (launchd) has yet to reap.
gone() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -z "$st" ] || [ "${st#Z}" != "$st" ]; }
DAEMON='use POSIX; my $f = shift; exit 0 if fork; POSIX::setsid(); exit 0 if fork;
open(my $h, ">", $f) or die; print $h "$$\n"; close $h; sleep 1 while 1;'
rm -f "$RW/daemon.pid"
inside none '/usr/bin/perl -e "$1" "$PWD/daemon.pid" </dev/null >/dev/null 2>&1
i=0; while [ ! -s "$PWD/daemon.pid" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done' \
	"$DAEMON"
DPID=$(cat "$RW/daemon.pid" 2>/dev/null)
if [ -z "$DPID" ]; then
	not_ok "a double-forked setsid daemon is gone once the session closed" "it did not start: $OUT_TEXT"
elif gone "$DPID"; then
	ok "a double-forked setsid daemon is gone once the session closed"
else
	kill -9 "$DPID" 2>/dev/null
	not_ok "a double-forked setsid daemon is gone once the session closed" "pid $DPID still runs"
fi

# The host killed: its daemon outlives it (the partial promise) until cleanup ends it.
rm -f "$RW/daemon.pid"
(cd "$RW" && exec "$OWSBX" run --provider seatbelt --net none --rw "$RW" --ro "$RO" -- /bin/sh -c \
	'/usr/bin/perl -e "$0" "$PWD/daemon.pid" </dev/null >/dev/null 2>&1; exec sleep 600' "$DAEMON" \
	>/dev/null 2>&1) &
HOST=$!
for _ in $(seq 1 100); do [ -s "$RW/daemon.pid" ] && break; sleep 0.1; done
kill -9 "$HOST" 2>/dev/null
wait "$HOST" 2>/dev/null
DPID=$(cat "$RW/daemon.pid" 2>/dev/null)
"$OWSBX" machine sandbox cleanup >"$WORK/cleanup.out" 2>&1
CRC=$?
if [ -z "$DPID" ]; then
	not_ok "cleanup ends the daemon of a host killed with SIGKILL" "it did not start"
elif [ "$CRC" = 0 ] && gone "$DPID"; then
	ok "cleanup ends the daemon of a host killed with SIGKILL"
else
	kill -9 "$DPID" 2>/dev/null
	not_ok "cleanup ends the daemon of a host killed with SIGKILL" \
		"status $CRC, pid $DPID: $(cat "$WORK/cleanup.out")"
fi

# ---------------------------------------------------------------- terminals
# Another terminal (a pty made outside, as a Terminal tab's is) cannot be opened: its
# input would be readable.  A pty made inside (script(1) calls openpty) works.
OTHER_TTY=$WORK/other.tty
/usr/bin/python3 -c 'import os, pty, sys, time
m, s = pty.openpty()
open(sys.argv[1], "w").write(os.ttyname(s))
time.sleep(300)' "$OTHER_TTY" </dev/null >/dev/null 2>&1 &
HELPERS+=("$!")
for _ in $(seq 1 100); do [ -s "$OTHER_TTY" ] && break; sleep 0.1; done
TTY=$(cat "$OTHER_TTY" 2>/dev/null)
if [ -z "$TTY" ]; then
	not_ok "another terminal cannot be opened" "no pty could be made outside for the attack"
else
	inside none '/usr/bin/perl -e "use Fcntl; sysopen(my \$f, \$ARGV[0], O_RDONLY|O_NONBLOCK) and print qq(ESCAPED\n)" "$1"
/usr/bin/perl -e "use Fcntl; sysopen(my \$f, \$ARGV[0], O_WRONLY|O_NONBLOCK) and print qq(ESCAPED\n)" "$1"' "$TTY"
	held "another terminal ($TTY) cannot be opened for reading or writing" 0
fi
inside none '/usr/bin/script -q /dev/null /bin/echo pty-made-inside </dev/null'
if alive && said pty-made-inside; then
	ok "a pseudo-terminal made inside works (script(1))"
else
	not_ok "a pseudo-terminal made inside works (script(1))" "$(head -c 400 <<<"$OUT_TEXT")"
fi

# ---------------------------------------------------------- two sessions
# A session running while another opens and closes keeps its folders and finishes.
rm -f "$RW/first.done"
(cd "$RW" && exec "$OWSBX" run --provider seatbelt --net none --rw "$RW" --ro "$RO" -- /bin/sh -c \
	'sleep 3; cat "$0/file" >/dev/null && echo done >"$PWD/first.done"' "$RO" >/dev/null 2>&1) &
FIRST=$!
inside none 'echo second >"$PWD/second.done"'
wait "$FIRST"
FRC=$?
if alive && [ -f "$RW/second.done" ] && [ "$FRC" = 0 ] && [ -f "$RW/first.done" ]; then
	ok "two sessions at once: the second opens and closes, the first still reads and writes"
else
	not_ok "two sessions at once: the second opens and closes, the first still reads and writes" \
		"first: status $FRC, $(ls "$RW")"
fi

# ------------------------------------------------------------- profiles
# Every golden profile compiles in Seatbelt itself (an unknown operation, filter or name
# is refused by sandbox-exec): what the model on Linux cannot prove.
GOLDEN=$(cd "$(dirname "$0")/../golden" && pwd)
for sb in "$GOLDEN"/seatbelt_*.sb; do
	params=()
	while IFS= read -r ln; do
		[ -n "$ln" ] && params+=(-D "$(printf '%b' "$ln")")
	done <"${sb%.sb}.params"
	if out=$(/usr/bin/sandbox-exec -f "$sb" "${params[@]}" /usr/bin/true 2>&1); then
		ok "$(basename "$sb") compiles and runs /usr/bin/true"
	else
		not_ok "$(basename "$sb") compiles and runs /usr/bin/true" "$out"
	fi
done

# ------------------------------------------------------------- environment
OUT_TEXT=$(cd "$RW" && OWSTEST_API_TOKEN="$SECRET" GITHUB_TOKEN="$SECRET" "$OWSBX" run \
	--provider seatbelt --net none --rw "$RW" -- /usr/bin/env 2>&1)
if grep -q '^PATH=' <<<"$OUT_TEXT" && ! grep -q "$SECRET" <<<"$OUT_TEXT"; then
	ok "a secret-looking variable of the host is not passed"
else
	not_ok "a secret-looking variable of the host is not passed" "$OUT_TEXT"
fi

"$OWSBX" run --provider seatbelt --net none --rw "$RW" --env OWSTEST_TOKEN=x -- /usr/bin/true \
	>/dev/null 2>&1
[ $? = 2 ]
check "a secret-looking variable asked for with --env is refused" $?

# ------------------------------------------------------------------ nesting
OUT_TEXT=$(/usr/bin/sandbox-exec -p '(version 1) (allow default)' "$OWSBX" run --provider seatbelt \
	--net none --rw "$RW" -- /usr/bin/true 2>&1)
RC=$?
if [ "$RC" = 70 ] && grep -qi "nest" <<<"$OUT_TEXT"; then
	ok "inside another sandbox the session is refused, saying macOS does not nest them"
else
	not_ok "inside another sandbox the session is refused, saying macOS does not nest them" \
		"status $RC: $OUT_TEXT"
fi

echo "1..$N"
[ "$FAILED" -lt 100 ] || FAILED=100
exit "$FAILED"
