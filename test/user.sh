# test/user.sh: a throwaway ordinary person for the wall's tests. Source after lib.sh, as root.
#
#   owstest_user_setup      creates the person and its fixture (see below), installs the
#                           cleanup trap; call once per test file
#   as_user CMD...          runs CMD as the person (setpriv, no PAM) with a clean environment
#                           (TU_ENV plus AS_USER_ENV[@]), in AS_USER_CWD (default /), under a
#                           timeout of AS_USER_TIMEOUT seconds (default 60)
#   as_user_bg CMD...       the same in the background, no timeout; AS_USER_PID is the pid of
#                           CMD itself (setpriv and env exec, so it is the pid of owsbx)
#   sbx ARGS...             as_user "$OWSBX" ARGS...; sets SBX_RC, SBX_OUT, SBX_ERR (strings)
#   owstest_fixture_pid PID a process of the person's that belongs to the fixture (agent,
#                           servers); everything else of the person's is a leftover
#   owstest_root_pid PID    a root helper (server) to kill at cleanup
#   owstest_user_procs      pids of the person's processes that are not fixture, not zombies
#   owstest_session_dirs    session folders left under /tmp/owsandbox-<uid>/
#   owstest_check_clean     TAP: nothing of a session left (no folder, no process)
#   owstest_cleanup         idempotent; runs from the EXIT trap, on failure too
#
# Where Landlock has no scopes (ABI < 6, before Linux 6.12), `open` runs only partial and
# only when the config says open_without_scopes = partial: the person's commands then get
# OWSBX_CONFIG naming a config that says so (TU_OPEN_PARTIAL is that line, empty on newer
# kernels, for tests that write configs of their own), so that the tests of `open` test the
# rest of its wall there. test/sh/open_partial.sh tests the refusal and the partial itself.
#
# The person: TU (owstest_<6 hex>), TU_UID, TU_GID, TU_HOME (0700) holding a fake
# ~/.ssh/id_ed25519 (loaded in a running ssh-agent), ~/.bashrc 0644 with TU_MARKER,
# ~/secret.txt with TU_SECRET, ~/project (TU_WORK, a folder to share rw) and ~/project-ro
# (TU_RO, to share ro, holding readme.txt). The agent listens on TU_AGENT_SOCK
# (/tmp/owstest-agent-XXXX/agent.sock, folder 0700 owned by the person). OWSBX is a copy of
# the binary in a world-readable temp folder (TU_BIN_DIR, on a mount that allows exec:
# test/places.sh).
#
# The machine is left as found: the agent and every process of the person are killed,
# `userdel -r` removes the account and home, and the /etc backups useradd/userdel rewrite
# (test/etc_backups.sh) are restored byte for byte from a snapshot taken before useradd,
# removed when they did not exist before; so are the mtimes of the primary files, /etc
# and /home. An exclusive lock
# on /etc (flock) is held from the snapshot to the restore so that two test runs cannot
# interleave their snapshots.

OWSTEST_ETC_FILES="passwd group shadow gshadow subuid subgid"
. "$(dirname "${BASH_SOURCE[0]}")/etc_backups.sh"
. "$(dirname "${BASH_SOURCE[0]}")/places.sh"
TU_FIXTURE_PIDS=""
TU_ROOT_PIDS=""
TU_CLEANED=0
TU_CREATED=0
TU_TMP=""
TU_AGENT_DIR=""
TU_BIN_DIR=""
TU_EXTRA_PATHS=()
AS_USER_ENV=()

owstest_fixture_pid() { TU_FIXTURE_PIDS="$TU_FIXTURE_PIDS $*"; }
owstest_root_pid() { TU_ROOT_PIDS="$TU_ROOT_PIDS $*"; }
# owstest_remove_at_exit PATH: a path this test created outside the person's home.
owstest_remove_at_exit() { TU_EXTRA_PATHS+=("$@"); }
# owstest_rmdir_at_exit DIR: remove DIR at exit only if it is empty (it may be shared).
TU_RMDIRS=()
owstest_rmdir_at_exit() { TU_RMDIRS+=("$@"); }

# _owstest_snapshot DIR: the backups useradd and userdel rewrite (test/etc_backups.sh), and
# the mtimes of the account files, /etc and /home.
_owstest_snapshot() {
	local d=$1 f
	owstest_etc_snapshot "$d" || return 1
	for f in $OWSTEST_ETC_FILES; do
		[ -e "/etc/$f" ] && cp -a "/etc/$f" "$d/$f"
	done
	stat -c '%Y' /etc >"$d/etc.mtime"
	stat -c '%Y' /home >"$d/home.mtime"
}

# _owstest_restore DIR: put back the backups exactly, removing those that did not exist;
# the primary files only get their mtime back, and only when their content is what it
# was (someone else may have changed them meanwhile: then they are left alone).
_owstest_restore() {
	local d=$1 f
	[ -d "$d" ] || return 0
	owstest_etc_restore "$d"
	for f in $OWSTEST_ETC_FILES; do
		if [ -e "$d/$f" ] && cmp -s "$d/$f" "/etc/$f"; then
			touch -m -r "$d/$f" "/etc/$f"
		fi
	done
	[ -s "$d/etc.mtime" ] && touch -m -d "@$(cat "$d/etc.mtime")" /etc
	[ -s "$d/home.mtime" ] && touch -m -d "@$(cat "$d/home.mtime")" /home
	return 0
}

# owstest_rescue NAME UID SNAPDIR: what test/run.sh does when a test died without its
# cleanup (e.g. killed by its timeout): kill, userdel, restore.
owstest_rescue() {
	local name=$1 uid=$2 snap=$3 i p
	for ((i = 0; i < 50; i++)); do
		p=$(pgrep -u "$uid" 2>/dev/null) || break
		for p in $p; do kill -KILL "$p" 2>/dev/null; done
		sleep 0.1
	done
	if getent passwd "$name" >/dev/null; then
		userdel -r -f "$name" 2>/dev/null
	fi
	rm -rf "/tmp/owsandbox-$uid" "/run/user/$uid"
	_owstest_restore "$snap"
	rm -rf "$snap"
}

# The person's processes that are alive (zombies count as dead) and not part of the fixture.
owstest_user_procs() {
	local p st
	[ -n "$TU_UID" ] || return 0
	for p in $(pgrep -u "$TU_UID" 2>/dev/null); do
		case " $TU_FIXTURE_PIDS " in *" $p "*) continue ;; esac
		st=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
		[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] && continue
		echo "$p"
	done
}

owstest_user_procs_desc() {
	local p
	for p in $(owstest_user_procs); do
		printf '%s %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
}

# owstest_has_proc REGEX: a live, non-fixture process of the person's whose command line
# matches REGEX (pgrep -f).
owstest_has_proc() {
	local p
	for p in $(pgrep -u "$TU_UID" -f "$1" 2>/dev/null); do
		case " $TU_FIXTURE_PIDS " in *" $p "*) continue ;; esac
		[ "$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = Z ] && continue
		[ -e "/proc/$p" ] && return 0
	done
	return 1
}

owstest_no_user_procs() { [ -z "$(owstest_user_procs)" ]; }

owstest_session_dirs() {
	[ -n "$TU_UID" ] && [ -d "/tmp/owsandbox-$TU_UID" ] || return 0
	find "/tmp/owsandbox-$TU_UID" -mindepth 1 -maxdepth 1 2>/dev/null
}

# owstest_check_clean [WHAT]: TAP lines: no session folder, no proof canary in the home,
# no process left.
owstest_check_clean() {
	local what=${1:-the sessions}
	local left
	left=$(owstest_session_dirs)
	if [ -z "$left" ]; then
		pass "no session folder left after $what"
	else
		fail "no session folder left after $what" "left: $left"
	fi
	left=$(find "$TU_HOME" -maxdepth 1 -name '.owsandbox*' 2>/dev/null)
	is "$left" "" "no proof canary left in the person's home after $what"
	if poll 5 owstest_no_user_procs; then
		pass "no process of the person left after $what"
	else
		fail "no process of the person left after $what" "$(owstest_user_procs_desc)"
	fi
}

# Bounded by time, not by rounds: on a slow machine (a kernel VM under TCG) a killed
# process can take seconds to go, and userdel refuses a user whose process remains.
_owstest_kill_user() {
	local p pids end
	[ -n "$TU_UID" ] || return 0
	end=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$end" ]; do
		pids=$(pgrep -u "$TU_UID" 2>/dev/null) || return 0
		for p in $pids; do kill -KILL "$p" 2>/dev/null; done
		# stop once only zombies remain (the host's init reaps them, slowly)
		[ -z "$(TU_FIXTURE_PIDS="" owstest_user_procs)" ] && return 0
		sleep 0.05
	done
}

owstest_cleanup() {
	local p
	[ "$TU_CLEANED" = 1 ] && return 0
	TU_CLEANED=1
	trap - EXIT INT TERM HUP
	for p in $TU_ROOT_PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $TU_ROOT_PIDS; do wait "$p" 2>/dev/null; done
	if [ -n "$TU_AGENT_PID" ]; then kill -KILL "$TU_AGENT_PID" 2>/dev/null; fi
	_owstest_kill_user
	# before userdel: once the uid is free, someone else may get it
	[ -n "$TU_UID" ] && rm -rf "/tmp/owsandbox-$TU_UID"
	if [ "$TU_CREATED" = 1 ] && [ -n "$TU" ]; then
		if getent passwd "$TU" >/dev/null; then
			userdel -r -f "$TU" 2>&1 | grep -v 'mail spool' >&2
		fi
		if getent group "$TU" >/dev/null; then groupdel "$TU" 2>/dev/null; fi
	fi
	for p in "${TU_EXTRA_PATHS[@]}"; do rm -rf "$p"; done
	for p in "${TU_RMDIRS[@]}"; do rmdir "$p" 2>/dev/null; done
	[ -n "$TU_AGENT_DIR" ] && rm -rf "$TU_AGENT_DIR"
	[ -n "$TU_BIN_DIR" ] && rm -rf "$TU_BIN_DIR"
	if [ -n "$TU_TMP" ]; then
		_owstest_restore "$TU_TMP/snap"
		rm -rf "$TU_TMP"
	fi
	if [ -n "$OWSTEST_LOCK_FD" ]; then
		exec {OWSTEST_LOCK_FD}<&-
		OWSTEST_LOCK_FD=""
	fi
	return 0
}

# as_user CMD...: see the top of the file.
as_user() {
	(
		cd "${AS_USER_CWD:-/}" || exit 125
		[ -n "$OWSTEST_LOCK_FD" ] && exec {OWSTEST_LOCK_FD}<&-
		exec timeout -k 5 "${AS_USER_TIMEOUT:-60}" \
			setpriv --reuid="$TU_UID" --regid="$TU_GID" --init-groups -- \
			env -i "${TU_ENV[@]}" "${AS_USER_ENV[@]}" "$@"
	)
}

as_user_bg() {
	(
		cd "${AS_USER_CWD:-/}" || exit 125
		[ -n "$OWSTEST_LOCK_FD" ] && exec {OWSTEST_LOCK_FD}<&-
		exec setpriv --reuid="$TU_UID" --regid="$TU_GID" --init-groups -- \
			env -i "${TU_ENV[@]}" "${AS_USER_ENV[@]}" "$@"
	) &
	AS_USER_PID=$!
}

# sbx ARGS...: owsbx as the person, output captured.
sbx() {
	as_user "$OWSBX" "$@" >"$TU_TMP/sbx.out" 2>"$TU_TMP/sbx.err" </dev/null
	SBX_RC=$?
	SBX_OUT=$(cat "$TU_TMP/sbx.out")
	SBX_ERR=$(cat "$TU_TMP/sbx.err")
}

# sbx_diag: the last run, for a failure's diagnostics.
sbx_diag() { printf 'rc=%s\nstdout: %s\nstderr: %s\n' "$SBX_RC" "$SBX_OUT" "$SBX_ERR"; }

# probe ARGS... -- PROBES...: owsbx run ARGS -- python3 -c "$PROBE" PROBES...; the results
# land in the array R (one per probe).
probe() {
	local args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	sbx run "${args[@]}" -- "$PY" -c "$PROBE" "$@"
	mapfile -t R <<<"$SBX_OUT"
}

# probe_out PROBES...: the same probes outside the sandbox, as the person (the controls).
probe_out() {
	as_user "$PY" -c "$PROBE" "$@" >"$TU_TMP/probe.out" 2>&1 </dev/null
	mapfile -t R <"$TU_TMP/probe.out"
}

# owsbx_binary: the binary under test: $OWSBX_SRC, else the repository's ./owsbx.
owsbx_binary() { echo "${OWSBX_SRC:-$OWSTEST_ROOT/owsbx}"; }

owstest_user_setup() {
	local src home
	[ "$(id -u)" = 0 ] || skip_all "needs root (creates a throwaway user)"
	src=$(owsbx_binary)
	if [ ! -x "$src" ]; then
		printf '1..1\nnot ok 1 - owsbx is built (%s)\n' "$src"
		exit 1
	fi
	trap owstest_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP

	exec {OWSTEST_LOCK_FD}</etc
	flock -w 600 "$OWSTEST_LOCK_FD" || bail_out "could not lock /etc for the account snapshot"
	TU_TMP=$(mktemp -d /tmp/owstest-t.XXXXXX) || bail_out "mktemp"
	chmod 0700 "$TU_TMP"
	_owstest_snapshot "$TU_TMP/snap"

	TU=owstest_$(rand_hex 3)
	TU_CREATED=1
	useradd --create-home --shell /bin/bash --user-group -K HOME_MODE=0700 "$TU" ||
		bail_out "useradd $TU failed"
	TU_UID=$(id -u "$TU")
	TU_GID=$(id -g "$TU")
	TU_HOME=$(getent passwd "$TU" | cut -d: -f6)
	home=$TU_HOME
	# run.sh's ledger: enough to rescue the machine if this test dies without its trap
	[ -n "$OWSTEST_LEDGER" ] && echo "$TU $TU_UID $TU_TMP/snap" >>"$OWSTEST_LEDGER"
	chmod 0700 "$home"

	TU_MARKER="OWSTEST_BASHRC_MARKER_$(rand_hex 4)"
	TU_SECRET="OWSTEST_SECRET_$(rand_hex 4)"
	TU_WORK=$home/project
	TU_RO=$home/project-ro
	TU_AGENT_DIR=$(mktemp -d /tmp/owstest-agent-XXXX)
	TU_AGENT_SOCK=$TU_AGENT_DIR/agent.sock
	chown "$TU_UID:$TU_GID" "$TU_AGENT_DIR"
	chmod 0700 "$TU_AGENT_DIR"
	# where the person may exec (and dlopen) what it holds: /tmp unless it is noexec
	TU_BIN_DIR=$(owstest_suid_tmpdir owstest-bin) || bail_out "no folder the person may run programs from"
	cp "$src" "$TU_BIN_DIR/owsbx"
	chmod 0755 "$TU_BIN_DIR/owsbx"
	OWSBX=$TU_BIN_DIR/owsbx

	TU_ENV=(
		"HOME=$home" "USER=$TU" "LOGNAME=$TU" "SHELL=/bin/bash"
		"PATH=/usr/local/bin:/usr/bin:/bin" "LANG=C.UTF-8" "TERM=xterm" "TZ=UTC"
		"SSH_AUTH_SOCK=$TU_AGENT_SOCK"
		"GITHUB_TOKEN=ghp_fake" "AWS_SECRET_ACCESS_KEY=fake" "MY_PASSWORD=fake"
		"SESSION_COOKIE=fake"
	)
	TU_OPEN_PARTIAL=""
	if ! have_landlock_abi 6; then
		TU_OPEN_PARTIAL="open_without_scopes = partial"
		printf '[sandbox]\n%s\n' "$TU_OPEN_PARTIAL" >"$TU_BIN_DIR/config.ini"
		chmod 0644 "$TU_BIN_DIR/config.ini"
		TU_ENV+=("OWSBX_CONFIG=$TU_BIN_DIR/config.ini")
	fi

	{
		printf '# ~/.bashrc of a throwaway test person\n%s\n' "$TU_MARKER" >"$home/.bashrc"
		chmod 0644 "$home/.bashrc"
		printf '%s\n' "$TU_SECRET" >"$home/secret.txt"
		chmod 0600 "$home/secret.txt"
		mkdir -m 0700 "$home/.ssh"
		mkdir -m 0755 "$TU_WORK" "$TU_RO"
		echo "project-ro readme" >"$TU_RO/readme.txt"
		echo "project file" >"$TU_WORK/hello.txt"
		chown -R "$TU_UID:$TU_GID" "$home"
	} || bail_out "fixture files"
	as_user ssh-keygen -q -t ed25519 -N '' -C owstest -f "$home/.ssh/id_ed25519" </dev/null ||
		bail_out "ssh-keygen as $TU failed"

	local out
	out=$(as_user ssh-agent -s -a "$TU_AGENT_SOCK" </dev/null) || bail_out "ssh-agent failed"
	TU_AGENT_PID=$(sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p' <<<"$out")
	[ -n "$TU_AGENT_PID" ] || bail_out "no agent pid in: $out"
	owstest_fixture_pid "$TU_AGENT_PID"
	as_user ssh-add -q "$home/.ssh/id_ed25519" </dev/null 2>/dev/null ||
		bail_out "ssh-add failed"
	export TU TU_UID TU_GID TU_HOME TU_WORK TU_RO TU_AGENT_SOCK OWSBX TU_OPEN_PARTIAL
}

# tcp_server TOKEN: a root TCP server on 127.0.0.1:<random port> that sends TOKEN to each
# client and counts connections in $TU_TMP/tcp.<port>.log. Sets SRV_PORT.
tcp_server() {
	local token=$1 i
	for ((i = 0; i < 5; i++)); do
		SRV_PORT=$(rand_port)
		rm -f "$TU_TMP/tcp.$SRV_PORT.ready"
		"$PY" -c '
import socket, sys
port, token, log, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
body = (token + "\n").encode()
reply = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", port))
except OSError:
    sys.exit(3)
s.listen(16)
open(ready, "w").close()
while True:
    c, _ = s.accept()
    with open(log, "a") as f:
        f.write("conn\n")
    try:
        c.settimeout(0.5)
        c.recv(4096)
    except OSError:
        pass
    try:
        c.sendall(reply)
    except OSError:
        pass
    c.close()
' "$SRV_PORT" "$token" "$TU_TMP/tcp.$SRV_PORT.log" "$TU_TMP/tcp.$SRV_PORT.ready" </dev/null >/dev/null 2>&1 &
		local pid=$!
		owstest_root_pid "$pid"
		if poll 5 test -e "$TU_TMP/tcp.$SRV_PORT.ready"; then
			SRV_PID=$pid
			return 0
		fi
	done
	return 1
}

tcp_conns() { if [ -f "$TU_TMP/tcp.$1.log" ]; then wc -l <"$TU_TMP/tcp.$1.log"; else echo 0; fi; }

# unix_server_as_user ADDR TOKEN: the person serves TOKEN on a unix socket; ADDR is a path,
# or @NAME for an abstract name. A fixture process.
unix_server_as_user() {
	local addr=$1 token=$2 ready
	ready=$TU_TMP/unix.$(rand_hex 4).ready
	# the person cannot write in TU_TMP (0700 root): the server says "ready" on stdout
	as_user_bg "$PY" -c '
import socket, sys, os
addr, token = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
if not addr.startswith("@"):
    os.chmod(addr, 0o666)
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    try:
        c.sendall((token + "\n").encode())
    except OSError:
        pass
    c.close()
' "$addr" "$token" >"$ready" 2>&1 </dev/null
	owstest_fixture_pid "$AS_USER_PID"
	poll 5 grep -q ready "$ready"
}

# unix_server_as_root PATH TOKEN: root serves TOKEN on PATH (mode 0666), like a docker socket.
unix_server_as_root() {
	local path=$1 token=$2 ready
	ready=$TU_TMP/rootunix.$(rand_hex 4).ready
	"$PY" -c '
import socket, sys, os
path, token = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    try:
        c.sendall((token + "\n").encode())
    except OSError:
        pass
    c.close()
' "$path" "$token" >"$ready" 2>&1 </dev/null &
	owstest_root_pid $!
	poll 5 grep -q ready "$ready"
}
