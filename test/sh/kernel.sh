#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Kernel doors around the wall: the person's user keyring (a key stored outside is neither
# readable nor findable inside), the terminal (TIOCSTI cannot push keystrokes into the
# person's terminal; the control that the person can do it outside needs
# dev.tty.legacy_tiocsti=1, which Debian's 6.12 has off), new namespaces (unshare, clone3) refused, no capabilities and no_new_privs inside, /proc/1 of the sandbox gives no
# way to the machine's root or descriptors. Controls: each works for the person outside.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

hx=$(rand_hex 4)
KEYDESC=owstest-key-$hx
KEYVAL=owstest-keyval-$hx

# the keyring
probe_out "keyadd $KEYDESC $KEYVAL"
serial=${R[0]#OK:}
like "${R[0]}" '^OK:[0-9]+$' "control: the person stores a key in the user keyring (${R[0]})"
probe_out "keyread $serial" "keysearch $KEYDESC"
is "${R[0]}" "OK:$KEYVAL" "control: outside, the person reads the key back"
is "${R[1]}" "OK:$serial" "control: outside, the person finds the key by name"
probe -- "keyread $serial" "keysearch $KEYDESC" "keyadd owstest-in-$hx x"
is "$SBX_RC" 0 "the keyring probe runs" || diag "$(sbx_diag)"
is_one_of "${R[0]}" "EPERM EACCES ENOKEY ENOSYS" "the person's key is not readable inside (${R[0]})"
is_one_of "${R[1]}" "EPERM EACCES ENOKEY ENOSYS" "the person's key is not findable inside (${R[1]})"
diag "adding a key inside: ${R[2]}"
probe_out "keyinvalidate $serial"

# the terminal: the person's command runs on a pty that is its controlling terminal
PTY='import pty, sys; pty.spawn(sys.argv[1:])'
as_user "$PY" -c "$PTY" "$PY" -c "$PROBE" "isatty 0" "tiocsti 0 x" >"$TU_TMP/pty.out" 2>&1 </dev/null
mapfile -t R < <(tr -d '\r' <"$TU_TMP/pty.out" | sed 's/^x*//' | grep .)
is "${R[0]}" yes "control: outside, stdin is the pty"
# Where the kernel refuses TIOCSTI to everyone but CAP_SYS_ADMIN (legacy_tiocsti=0), the
# control has nothing to show; the check inside still runs.
if need_legacy_tiocsti "the control pushes a keystroke outside" 1; then
	is "${R[1]}" OK "control: outside, TIOCSTI pushes a keystroke (legacy_tiocsti is on)"
fi
as_user "$PY" -c "$PTY" "$OWSBX" run -- "$PY" -c "$PROBE" "isatty 0" "tiocsti 0 x" >"$TU_TMP/pty.out" 2>&1 </dev/null
# (at a terminal outside every session folder owsbx says where the command runs: not a probe's line)
mapfile -t R < <(tr -d '\r' <"$TU_TMP/pty.out" | sed 's/^x*//' | grep . | grep -v '^owsbx: ')
is "${R[0]}" yes "inside, stdin is still the person's terminal"
is_one_of "${R[1]}" "EPERM EIO ENOTTY" "TIOCSTI into the person's terminal fails inside (${R[1]})"

# namespaces, capabilities, no_new_privs
if need_userns "the control makes one outside" 1; then
	probe_out "unshare 0x10000000"
	is "${R[0]}" OK "control: outside, the person may unshare a user namespace"
fi
probe -- "unshare 0x10000000" "unshare 0x00020000" "unshare 0x40000000" "clone3 0x10000000" \
	"clone3 0x00020000" "clone3 0" "status CapInh" "status CapPrm" "status CapEff" "status CapBnd" \
	"status CapAmb" "status NoNewPrivs" "status Seccomp"
is "${R[0]}" EPERM "unshare(CLONE_NEWUSER) refused inside"
is "${R[1]}" EPERM "unshare(CLONE_NEWNS) refused inside"
is "${R[2]}" EPERM "unshare(CLONE_NEWNET) refused inside"
is_one_of "${R[3]}" "EPERM ENOSYS" "clone3(CLONE_NEWUSER) refused inside (${R[3]})"
is_one_of "${R[4]}" "EPERM ENOSYS" "clone3(CLONE_NEWNS) refused inside (${R[4]})"
diag "clone3 without namespace flags: ${R[5]} (ENOSYS is how a seccomp filter makes libc fall back to clone)"
i=6
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	is "${R[i]}" 0000000000000000 "$c is 0 inside"
	i=$((i + 1))
done
is "${R[11]}" 1 "no_new_privs is set inside"
is "${R[12]}" 2 "a seccomp filter is on inside"

# the sandbox's init: no way out through /proc/1
probe --rw "$TU_WORK" -- "listdir /proc/1/root" "read /proc/1/root$TU_HOME/.bashrc" \
	"connect_unix /proc/1/root$TU_AGENT_SOCK" "listdir /proc/1/fd" "listdir /proc/1/cwd" \
	"read /proc/1/environ" "listdir /proc/self/root$TU_WORK"
is_one_of "${R[0]}" "EACCES ENOENT" "/proc/1/root is not listable (${R[0]})"
is_one_of "${R[1]}" "EACCES ENOENT" "~/.bashrc is not readable through /proc/1/root (${R[1]})"
is_one_of "${R[2]}" "EACCES ENOENT" "the agent is not reachable through /proc/1/root (${R[2]})"
is_one_of "${R[3]}" "EACCES ENOENT" "/proc/1/fd is not listable (${R[3]})"
is_one_of "${R[4]}" "EACCES ENOENT" "/proc/1/cwd is not listable (${R[4]})"
unlike "${R[5]}" "ghp_fake|SSH_AUTH_SOCK" "/proc/1/environ holds no secret (${R[5]:0:60})"
like "${R[6]}" "^OK:.*hello.txt" "control: /proc/self/root leads to the shared folder"

owstest_check_clean
done_testing
