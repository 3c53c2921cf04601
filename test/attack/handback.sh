# What the account made in a read-write folder is the person's again at close, all of it:
# a file with a second hard link and a folder nested 140 deep too, and none of it names
# the account (cli/launch/launcher.c hand_back, then the person's revoke).
ATTACKS="$ATTACKS handback"

attack_handback() {
	local deep out
	deep=$(printf 'd/%.0s' $(seq 140))
	as_person rm -rf "$RW/hb"
	check "$(tag) control: the agent makes a file, a linked pair and a deep folder" \
		sbx -- sh -c "cd '$RW' && mkdir hb && cd hb && echo a > single &&
			echo b > linked && ln linked linked.2 && mkdir -p '$deep' && touch '${deep}leaf'"
	[ "$P" = landlock ] && { ok "$(tag) (landlock: the files are the person's own)"; return; }
	check "$(tag) control: the single file is the person's again" \
		test "$(stat -c %U "$RW/hb/single")" = "$PERSON"
	out=$(find "$RW/hb" ! -user "$PERSON" -printf '%P %u\n' 2>&1 | sed -n '1,3p')
	check "$(tag) after close, nothing the account made is still the account's" test -z "$out"
	[ -n "$out" ] && diag <<<"$out"
	out=$(getfacl -RPp "$RW/hb" 2>/dev/null | awk -v c=":$CLOSED:" -v o=":$OPEN:" '
		/^# file: / { f = substr($0, 9); next }
		index($0, c) || index($0, o) { print f ": " $0 }')
	check "$(tag) after close, nothing the account made names the account" test -z "$out"
	[ -n "$out" ] && sed "s|$RW/hb/||; s|\(d/\)\{4,\}|d/.../|" <<<"$out" | sed -n '1,6p' | diag
	as_person rm -rf "$RW/hb"
}
