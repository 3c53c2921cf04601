# Descriptors and programs of the host: a descriptor the caller happens to hold open
# (here fd 5 on the person's key, fd 6 on the home folder) must not reach the command,
# and the host's own programs seen inside (the owsbx a proxy command names, the
# setuid launcher) give no way out: no nested session, no privilege.
ATTACKS="$ATTACKS hostfd"

attack_hostfd() {
	local out
	# shellcheck disable=SC2016 # for the sh that holds the descriptors
	out=$(runuser -u "$PERSON" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$PHOME" \
		USER="$PERSON" OWSBX_CONFIG="$CONF" sh -c '"$0" run --provider "$1" --net "$2" \
		--rw "$3" -- sh -c "ls /proc/self/fd; cat /proc/self/fd/5 /proc/self/fd/6/.ssh/id_ed25519" \
		5<"$4" 6<"$5"' "$BIN/owsbx" "$P" "$NET" "$RW" "$PHOME/.ssh/id_ed25519" "$PHOME" \
		2>&1 {OWS_LOCK_FD}<&-)
	like "$out" "(^|[[:space:]])0[[:space:]]+1[[:space:]]+2" "$(tag) control: the command has its fds 0, 1, 2"
	unlike "$out" "(^|[[:space:]])[56]([[:space:]]|$)" "$(tag) the caller's fds 5 and 6 do not reach the command"
	unlike "$out" "PRIVATE KEY" "$(tag) ... nor the key they hold"
	# The host's programs inside: owsbx itself, and the launcher when it is in view.
	out=$(sbx -- sh -c "'$BIN/owsbx' --version >/dev/null 2>&1 && echo version-ok
		'$BIN/owsbx' run --provider '$P' --net none --rw /tmp -- id -u 2>/dev/null && echo nested-ran
		if [ -x '$BIN/owsbx-launch' ]; then '$BIN/owsbx-launch' session --account closed --net none \
			--session 00000000000000000000000000000000 --home '$PHOME' -- id -u 2>/dev/null &&
			echo launch-ran; fi; true" 2>&1)
	unlike "$out" "nested-ran" "$(tag) owsbx inside starts no nested session"
	unlike "$out" "launch-ran" "$(tag) the setuid launcher inside runs nothing"
}
