# A group that opens the folder to others: the person is in supplementary groups shared
# with other local users (test/attack/groups.sh adds one, $SG).  A command that gives a
# file or folder of the session folder to such a group, with group write (which stays:
# Debian gives each person a private group), lets every member change it after the
# session: the person's sources, a folder in .git.  No command may give anything to a
# group other than the person's own.  A control: group write on the person's own group.
ATTACKS="$ATTACKS chgrp"

attack_chgrp() {
	local out
	out=$(sbx -- sh -c "mkdir -p shared && echo x > shared/f && chmod 775 shared &&
		chmod 664 shared/f && echo ctl; chgrp $SG shared shared/f a.txt .git/refs;
		chmod g+w a.txt .git/refs; python3 -c 'import os, sys; os.chown(sys.argv[1], -1, int(sys.argv[2]))' \
			.git/objects $(getent group "$SG" | cut -d: -f3); chmod g+w .git/objects" 2>&1)
	check "$(tag) control: group write on the person's own group works inside" \
		test "$(head -1 <<<"$out")" = ctl
	# account: the handback takes group write from what the account made (worldwrite.sh).
	if [ "$P" = landlock ]; then
		check "$(tag) control: ... and stays (775)" test "$(stat -c %a "$RW/shared")" = 775
	fi
	out=$(find "$RW" -group "$SG" -printf '%m %P\n' 2>&1)
	check "$(tag) nothing in the folder is given to another group of the person's (${out//$'\n'/, })" \
		test -z "$out"
	as_person rm -rf "$RW/shared"
	as_person chgrp -R "$(id -gn "$PERSON")" "$RW" 2>/dev/null
	as_person chmod -R g-w "$RW/.git/refs" "$RW/.git/objects" "$RW/a.txt" 2>/dev/null
}
