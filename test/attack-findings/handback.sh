# FINDING (account provider; every network mode): what the account made in a read-write
# folder does not always become the person's again at close.  cli/launcher.c hand_back()
# leaves a regular file with more than one link, and folders nested deeper than 128
# levels, owned by the account; the agent makes both with `ln` and `mkdir -p`.
# README: "after close, what the account made in a read-write folder is the person's
# again and carries no entry of ours".  Not run by attacks.sh: source it as a fragment
# (copy it into test/attack/) to see it fail.
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
