#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# The test person itself (test/user.sh): what every other test builds on. It must be what
# the attacks assume (0700 home, a key, a live agent holding it, the planted secrets readable
# by the person outside the sandbox) and its cleanup must leave the machine as found.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (creates a throwaway user)"

sums() {
	local f
	for f in passwd group shadow gshadow subuid subgid; do
		for f in "/etc/$f" "/etc/$f-"; do
			if [ -e "$f" ]; then
				printf '%s %s %s\n' "$(sha256sum <"$f")" "$(stat -c '%a %U:%G %Y' "$f")" "$f"
			else
				echo "absent $f"
			fi
		done
	done
	stat -c '%Y /etc' /etc
	stat -c '%Y /home' /home
}

# A whole create/cleanup cycle in a child, with the machine compared before and after.
# (Only this child holds the /etc lock; the lock is taken inside owstest_user_setup.)
primaries() { cat /etc/passwd /etc/group /etc/shadow /etc/gshadow /etc/subuid /etc/subgid 2>/dev/null; }
before=$(sums)
pbefore=$(primaries)
child_out=$(
	exec 3>&1 >/dev/null
	. "$OWSTEST_DIR/user.sh"
	owstest_user_setup
	echo "$TU $TU_UID $TU_AGENT_DIR $TU_BIN_DIR $TU_TMP" >&3
	as_user "$PY" -c "import time; time.sleep(600)" </dev/null 3>&- &
	owstest_cleanup
)
read -r cname cuid cagent cbin ctmp <<<"$child_out"
after=$(sums)
like "$cname" '^owstest_[0-9a-f]{6}$' "the person is named owstest_<6 hex>"
if [ "$before" = "$after" ]; then
	pass "account files and their backups restored byte for byte (and mtimes)"
elif [ "$pbefore" != "$(primaries)" ]; then
	skip "another process changed the account files meanwhile (a concurrent useradd): not comparable"
else
	fail "account files and their backups restored byte for byte (and mtimes)" \
		"$(diff <(echo "$before") <(echo "$after"))"
fi
not_ok "the person is gone after cleanup" getent passwd "$cname"
not_ok "the person's group is gone after cleanup" getent group "$cname"
not_ok "the person's home is gone" test -e "/home/$cname"
alive_of() {
	local p st
	for p in $(pgrep -u "$1"); do
		st=$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && echo "$p"
	done
}
none_alive_of() { [ -z "$(alive_of "$1")" ]; }
ok "no process of the person is left (the agent included; zombies count as dead)" poll 30 none_alive_of "$cuid"
for d in "$cagent" "$cbin" "$ctmp"; do
	not_ok "temp folder $d removed" test -e "$d"
done

# Now the fixture, for real, checked from the outside.
. "$OWSTEST_DIR/user.sh"
owstest_user_setup
is "$(stat -c '%a %U' "$TU_HOME")" "700 $TU" "home is 0700 and the person's"
is "$(stat -c '%a' "$TU_HOME/.bashrc")" 644 "~/.bashrc is 0644"
ok "~/.ssh/id_ed25519 is a private key" grep -q 'BEGIN OPENSSH PRIVATE KEY' "$TU_HOME/.ssh/id_ed25519"
is "$(stat -c '%a %U' "$TU_AGENT_DIR")" "700 $TU" "agent folder is 0700 and the person's"
ok "agent socket is a socket" test -S "$TU_AGENT_SOCK"
out=$(as_user ssh-add -l </dev/null 2>&1)
like "$out" 'ED25519' "the running agent holds the key (ssh-add -l as the person: $out)"
probe_out "read $TU_HOME/.bashrc" "read $TU_HOME/.ssh/id_ed25519" "listdir $TU_HOME" \
	"connect_unix $TU_AGENT_SOCK" "env GITHUB_TOKEN" "env SSH_AUTH_SOCK"
like "${R[0]}" "$TU_MARKER" "control: the person reads ~/.bashrc outside the sandbox"
like "${R[1]}" "OPENSSH PRIVATE KEY" "control: the person reads the key outside the sandbox"
like "${R[2]}" "secret.txt" "control: the person lists the home outside the sandbox"
is "${R[3]}" "OK:" "control: the person reaches the agent socket outside the sandbox"
is "${R[4]}" "ghp_fake" "control: the secret variables are in the person's environment"
is "${R[5]}" "$TU_AGENT_SOCK" "control: SSH_AUTH_SOCK is in the person's environment"
is "$(as_user id -u)" "$TU_UID" "as_user runs as the person"
ok "owsbx copy is executable by the person" as_user test -x "$OWSBX"
done_testing
