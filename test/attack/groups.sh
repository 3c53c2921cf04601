# Supplementary groups: under the landlock provider a command runs as the person, in a
# user namespace that cannot drop the person's supplementary groups (setgroups is
# denied).  What the person reads only as a member of a group (the ssl-cert group's
# /etc/ssl/private) must not be readable inside; what others may read stays readable.
# The account provider runs as an account of its own, which is in none of the groups.
ATTACKS="$ATTACKS groups"

SG=owstest_sg$HEX SG_DIR=/opt/owstest-$HEX
groupadd "$SG" && usermod -a -G "$SG" "$PERSON"
# A folder only the group searches, with a secret in it; beside it a secret file of the
# group's and a file others may read.
install -d -m 0710 -o root -g "$SG" "$SG_DIR"
echo owstest-secret >"$SG_DIR/secret.txt"
echo owstest-key >"$SG_DIR.key"
echo owstest-public >"$SG_DIR.pub"
chown root:"$SG" "$SG_DIR/secret.txt" "$SG_DIR.key" "$SG_DIR.pub"
chmod 0640 "$SG_DIR/secret.txt" "$SG_DIR.key"
chmod 0644 "$SG_DIR.pub"

# Gone at the end, before done_testing compares the groups with its snapshots; the
# /etc/*- backups groupadd and usermod rewrote are put back by done_testing itself.
groups_cleanup() {
	rm -rf "$SG_DIR" "$SG_DIR.key" "$SG_DIR.pub"
	if getent group "$SG" >/dev/null; then groupdel "$SG"; fi
}
ATTACK_CLEANUPS="${ATTACK_CLEANUPS:-} groups_cleanup"

attack_groups() {
	local out
	out=$(as_person cat "$SG_DIR/secret.txt" "$SG_DIR.key" 2>&1)
	check "$(tag) premise: the person reads the group's files outside" \
		test "$out" = "owstest-secret
owstest-key"
	out=$(probe "read $SG_DIR.pub" 2>&1)
	like "$out" "^OK:owstest-public$" "$(tag) control: a file others may read stays readable inside"
	out=$(probe "read $SG_DIR/secret.txt" 2>&1)
	unlike "$out" "owstest-secret" \
		"$(tag) a file in a folder only a supplementary group searches is not readable inside"
	out=$(probe "read $SG_DIR.key" 2>&1)
	unlike "$out" "owstest-key" "$(tag) a file only a supplementary group reads is not readable inside"
}
