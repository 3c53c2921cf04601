#!/bin/bash
# The setuid launcher takes a closed set of requests and re-checks each; the
# host refuses to start on a broken setup with the command that fixes it.
. "$(dirname "$0")/../account_lib.sh"

L=$BIN/owsbx-launch
ID=0123456789abcdef0123456789abcdef
PUID=$(id -u "$PERSON") PGID=$(id -g "$PERSON")
refused() { # refused "pattern" ARGS...: the launcher, as the person, refuses with pattern
	local pat=$1; shift
	local out
	out=$(as_person "$L" "$@" 2>&1)
	[ $? != 0 ] && grep -q -- "$pat" <<<"$out"
}

# ----------------------------------------------------------------- setup
out=$(setpriv --reuid="$PUID" --regid="$PGID" --clear-groups env OWSBX_CONFIG="$CONF" \
	"$BIN/owsbx" run --provider account -- true 2>&1)
check "outside the group: refused with the command that fixes it" \
	grep -q "not in the group.*\|machine sandbox setup --for-user $PERSON" <<<"$out"
check "outside the group: the launcher cannot even be run" \
	sh -c "! setpriv --reuid=$PUID --regid=$PGID --clear-groups $L cleanup --session $ID 2>/dev/null"

# The setup broken, one piece at a time: refused with the command that repairs it, then
# repaired by that command.
FIX="sudo owsbx machine sandbox setup --config $CONF"
repair() { # desc
	local out
	out=$(machine setup --yes 2>&1)
	if [ $? = 0 ] && owsbx run --provider account -- true >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1"
		diag <<<"$out"
	fi
}
kill_all_of "$CLOSED"
userdel "$CLOSED"
out=$(owsbx run --provider account -- true 2>&1)
check "the closed account deleted: the session is refused" grep -q "closed account $CLOSED is missing" <<<"$out"
check "... with the command that sets the machine up again" grep -qF "$FIX" <<<"$out"
repair "setup re-creates the account, and sessions run again"
check "the launcher's record follows the re-created account" \
	grep -qx "closed_uid=$(id -u "$CLOSED")" "$BIN/owsbx-launch.conf"
[ -n "${OWSTEST_LEDGER:-}" ] && echo "$CLOSED $(id -u "$CLOSED") $SNAP/etc" >>"$OWSTEST_LEDGER"

chmod 0755 "$L"
out=$(owsbx run --provider account -- true 2>&1)
check "a launcher that is not setuid root: refused" grep -q "launcher is missing or not root-owned" <<<"$out"
check "... with the command that sets the machine up again" grep -qF "$FIX" <<<"$out"
out=$(as_person "$L" cleanup --session $ID 2>&1)
check "the launcher refuses to run without setuid root" grep -q "not installed setuid root" <<<"$out"
repair "setup puts the launcher's mode back"

rm -f "$BIN/owsbx-launch.conf"
out=$(owsbx run --provider account -- true 2>&1)
check "the launcher's record deleted: refused" grep -q "launcher's record is missing" <<<"$out"
check "... with the command that sets the machine up again" grep -qF "$FIX" <<<"$out"
repair "setup writes the launcher's record again"

chmod 0664 "$BIN/owsbx-launch.conf"
check "a record others may write is refused" refused "not a root-owned file" cleanup --session $ID
chmod 0644 "$BIN/owsbx-launch.conf"
echo "extra=1" >>"$BIN/owsbx-launch.conf"
check "an unknown key in the record is refused" refused "unknown or repeated key" cleanup --session $ID
sed -i '/^extra=/d' "$BIN/owsbx-launch.conf"
chmod 0777 "$BIN"
check "a launcher in a folder others may write is refused" refused "untrusted folder" cleanup --session $ID
chmod 0755 "$BIN"

# --------------------------------------------------------------- requests
check "an unknown request" refused "unknown request" exec --session $ID
check "an unknown option" refused "unknown or repeated option" session --account closed --session $ID --exec /bin/sh
check "a repeated option" refused "unknown or repeated option" session --account closed --account open --session $ID
check "an account that setup did not record" refused "neither closed nor open" session --account root --session $ID
check "a session id that is not 32 hex digits" refused "not 32 hex" session --account closed --session ../../etc
check "a relative folder" refused "absolute, canonical" session --account closed --net none --session $ID --rw work
check "a folder with .." refused "absolute, canonical" session --account closed --net none --session $ID --rw "$PHOME/work/../.ssh"
check "someone else's folder" refused "must belong to the caller" session --account closed --net none --session $ID --ro /etc
check "the state folder" refused "state folder cannot" session --account closed --net none --session $ID --rw "$T/state/sandboxes"
check "a parent of the state folder" refused "state folder cannot" session --account closed --net none --session $ID --ro "$T"
check "a kernel interface" refused "kernel interface" session --account closed --net none --session $ID --rw /proc/self
as_person ln -s "$PHOME/.ssh" "$PHOME/work/keys"
check "a folder through a symbolic link" refused "passes through a link" session --account closed --net none --session $ID --rw "$PHOME/work/keys"
mkdir -m 0700 "$T/hidden" && mkdir "$T/hidden/dir"
check "paths are looked up with the caller's access (no oracle for root's view)" \
	refused "does not exist or passes through a link" session --account closed --net none --session $ID --ro "$T/hidden/dir"
check "a port outside the proxy range as --proxy-port" refused "proxy-port" session --account closed --net allowlist --session $ID --proxy-port 22
check "--net that does not go with the account" refused "does not go with --account" session --account closed --net open --session $ID
check "--open-without-scopes with a value but partial" refused "takes only partial" session --account open --net open --session $ID --open-without-scopes yes
check "--open-without-scopes without --net open" refused "with --net open only" session --account closed --net none --session $ID --open-without-scopes partial
check "a guarded path outside every read-write folder" refused "not inside a read-write folder" session --account closed --net none --session $ID --ro "$PHOME/work" --guard "$PHOME/work/x"
check "an overlong argument" refused "too long" session --account closed --net none --session $ID --rw "/$(head -c 5000 /dev/zero | tr '\0' a)"
check "cleanup takes only --session" refused "only --session" cleanup --session $ID --rw "$PHOME/work"
check "a session without the control socket on 3" refused "descriptor 3" session --account closed --net none --session $ID

# ---------------------------------------------------------- broken setup
# The closed account runs in a network namespace of its own: the table is a second
# layer, whose loss status reports, while the session's own network still holds.
nft delete table inet "$TABLE"
out=$(owsbx run --provider account -- /usr/bin/python3 -c "
import socket
try:
    socket.create_connection(('192.0.2.1', 443), timeout=3); print('CONNECTED')
except OSError as e:
    print('REFUSED', e.__class__.__name__)" 2>&1)
check "without the firewall table the closed account still reaches nothing" \
	grep -q "^REFUSED" <<<"$out"
check "... and leaves no private folder" test -z "$(ls "$T/state/sandboxes")"
check "the open account still works without the table" owsbx run --provider account --net open -- true
out=$(machine status 2>&1)
fw_row_fails() { grep -A1 "^FAIL  firewall" <<<"$out" | grep -qF "fix: $FIX"; }
check "status fails the firewall row, with the fix" fw_row_fails
repair "setup loads the table again"

out=$(as_person "$BIN/owsbx" report 2>&1)
check "owsbx report: the account provider is enforced here" grep -q "^provider.account *enforced" <<<"$out"
out=$(setpriv --reuid="$PUID" --regid="$PGID" --clear-groups env OWSBX_CONFIG="$CONF" \
	"$BIN/owsbx" report 2>&1)
check "owsbx report outside the group: the account provider is unavailable" \
	grep -q "^provider.account *unavailable.*not in the group" <<<"$out"
printf '[sandbox]\nstate_dir = %s/nowhere\n' "$T" >"$T/none.ini" && chmod 0644 "$T/none.ini"
out=$(as_person env OWSBX_CONFIG="$T/none.ini" "$BIN/owsbx" report 2>&1)
check "owsbx report on a machine not set up: unavailable" grep -q "^provider.account *unavailable" <<<"$out"

# ------------------------------------------------------ what crosses over
out=$(as_person env LD_LIBRARY_PATH=/nonexistent OWSBX_PROBE_VAR=1 "$BIN/owsbx" run \
	--provider account -- sh -c 'env; echo fds $(ls /proc/self/fd | wc -l)' 2>&1)
no_leak() { ! grep -q -e OWSBX_CONFIG -e SSH_AUTH_SOCK -e LD_LIBRARY_PATH -e OWSBX_PROBE_VAR <<<"$out"; }
check "no host variable the session did not choose" no_leak
check "the session's own environment" grep -q "^OWSANDBOX_PROVIDER=account" <<<"$out"
check "HOME is the private home" grep -q "^HOME=$T/state/sandboxes/[0-9a-f]\{32\}/home$" <<<"$out"
check "only stdio (and ls's own) descriptors inside" grep -q "^fds 4$" <<<"$out"

# ----------------------------------------------- cleanup leaves live ones
as_person "$BIN/owsbx" run --provider account -- sleep 3 >/dev/null 2>&1 &
bg=$!
for _ in $(seq 50); do [ -n "$(ls "$T/state/sandboxes" | grep -v lock)" ] && break; sleep 0.1; done
live=$(ls "$T/state/sandboxes" | grep -v lock | head -1)
as_person "$L" cleanup --session "$live" >/dev/null 2>&1
check "cleanup leaves a live session's private folder" test -d "$T/state/sandboxes/$live"
wait "$bg"
check "the session removed it when it ended" test ! -e "$T/state/sandboxes/$live"

# A session whose launcher and init were both killed: cleanup removes it.
mkdir -m 0700 "$T/state/sandboxes/$ID" && chown "$CLOSED" "$T/state/sandboxes/$ID"
as_person "$L" cleanup --session "$ID" >/dev/null 2>&1
check "cleanup removes what a dead session left" test ! -e "$T/state/sandboxes/$ID"

done_testing
