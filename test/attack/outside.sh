# Session folders outside the home (/srv/work, /data): the same under both providers.
ATTACKS="$ATTACKS outside"

OUTSIDE=/srv/owstest-$HEX
mkdir -p "$OUTSIDE" && chown "$PERSON:" "$OUTSIDE" && chmod 0755 "$OUTSIDE"
outside_cleanup() { rm -rf "$OUTSIDE"; }
ATTACK_CLEANUPS="${ATTACK_CLEANUPS:-} outside_cleanup"

attack_outside() {
	local out
	out=$(owsbx run --provider "$P" --net "$NET" --rw "$OUTSIDE" -- \
		sh -c "echo made-$P-$NET > '$OUTSIDE/f' && cat '$OUTSIDE/f' && ls /srv" 2>&1)
	like "$out" "^made-$P-$NET" "$(tag) a read-write folder outside the home is usable"
	check "$(tag) ... and what was made there is the person's to read" \
		as_person grep -q "made-$P-$NET" "$OUTSIDE/f"
	unlike "$out" "owstest-.*owstest-|lost\\+found" "$(tag) ... while its neighbours under /srv stay out of view"
	as_person rm -f "$OUTSIDE/f"
}
