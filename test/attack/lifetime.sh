# The host killed with SIGKILL mid-session: every process of the session ends, and
# nothing of it stays on the machine (no private folder, no skeleton on the host's /tmp;
# in the host's namespaces, where the private folder is on disk, once the next opens).
ATTACKS="$ATTACKS lifetime"

attack_lifetime() {
	local uid host pids i
	uid=$(id -u "$PERSON")
	[ "$P" = account ] && uid=$(id -u "$([ "$NET" = open ] && echo "$OPEN" || echo "$CLOSED")")
	rm -f "$OUT/up"
	as_person "$BIN/owsbx" run --provider "$P" --net "$NET" --rw "$OUT" -- sh -c "
		(setsid sleep 300 &) ; nohup sleep 300 >/dev/null 2>&1 &
		touch '$OUT/up'; sleep 300" >/dev/null 2>&1 &
	local job=$!
	for _ in $(seq 200); do [ -e "$OUT/up" ] && break; sleep 0.05; done
	check "$(tag) control: the session started its daemons" test -e "$OUT/up"
	host=$(session_host "$(id -u "$PERSON")" "owsbx run --provider $P --net $NET --rw $OUT")
	[ -n "$host" ] && kill -KILL "$host"
	pids=$(sleepers_left "$uid")
	check "$(tag) after SIGKILL of the host, no process of the session is left" test -z "$pids"
	[ -z "$pids" ] || ps -o pid=,ppid=,etimes=,args= -p "$(echo $pids | tr ' ' ,)" 2>&1 | diag
	if [ -n "$ATK_HOST_NS" ]; then
		# On disk in the host's namespaces: what a killed host left, the next open removes.
		owsbx run --provider "$P" --net "$NET" -- true >/dev/null 2>&1
		check "$(tag) ... and the next session removes the private folder it left" \
			test -z "$(ls -A "/tmp/owsandbox-$uid" 2>/dev/null)"
	elif [ "$P" = landlock ]; then
		check "$(tag) ... and nothing under /tmp/owsandbox-$uid" test ! -e "/tmp/owsandbox-$uid"
	else
		for i in $(seq 100); do
			[ -z "$(ls -A "$T/state/sandboxes" 2>/dev/null)" ] && break
			sleep 0.05
		done
		check "$(tag) ... and no private folder in the state folder" \
			test -z "$(ls -A "$T/state/sandboxes" 2>/dev/null)"
	fi
	wait "$job" 2>/dev/null
}
