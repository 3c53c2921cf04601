# What the agent sets on what it made must not outlive the session.  Under `account` the
# launcher hands the account's files back to the person at close; an ACL entry the agent
# added there naming another local user (here `nobody` and `nogroup`), above all a
# default entry, would keep that user reading (or writing) what the person puts there
# later, and a mode the agent opened (chmod 777, a default `o::rwx`) would keep it open
# to everyone.  After close an agent-made node keeps only what the person's own default
# ACL above it gives, and its permissions lose the bits the person's umask (022 here)
# clears.  A control: entries the person's own default ACL gives stay.
# Under `landlock` the agent is the person's own uid and what it sets is the person's.
ATTACKS="$ATTACKS aclkeep"

aclkeep_foreign() { # DIR: entries naming nobody or nogroup, one "file: entry" a line
	getfacl -RPp "$1" 2>/dev/null | awk '
		/^# file: / { f = substr($0, 9); next }
		/:nobody:|:nogroup:/ { print f ": " $0 }'
}

attack_aclkeep() {
	local d=$RW/aclkeep out
	if [ "$P" = landlock ]; then
		skip "$(tag) aclkeep: the agent runs as the person, its files are the person's own (account only)"
		return
	fi
	# The person's folder `inh` gives nobody r-x by default: that much the agent's files keep.
	as_person sh -c "rm -rf '$d'; umask 022; mkdir -p '$d/inh' && setfacl -d -m u:nobody:rx '$d/inh'"
	# Each step on its own (;): seccomp refuses chmod o+w and skips setting an ACL, so the
	# first layer already keeps these out; the handback below is the second.
	out=$( (umask 022; sbx -- sh -c "cd '$d'; umask 0; mkdir -p share/sub;
		echo s > share/secret; echo w > share/open; chmod 0777 share/open share/sub;
		setfacl -m u:nobody:rwx,g:nogroup:rwx share share/secret share/sub;
		setfacl -d -m u:nobody:rwx,g:nogroup:rwx,o::rwx share share/sub;
		echo i > inh/f; setfacl -m u:nobody:rwx,g:nogroup:rw inh/f;
		getfacl -c share/sub | grep -c nobody") 2>&1)
	check "$(tag) inside, the agent's entries for nobody and nogroup do not take" test "$(tail -1 <<<"$out")" = 0
	[ "$(tail -1 <<<"$out")" != 0 ] && diag <<<"$out"
	out=$(aclkeep_foreign "$d/share")
	check "$(tag) after close, nothing the agent made names another user or group" test -z "$out"
	[ -n "$out" ] && sed -n '1,6p' <<<"$out" | diag
	as_person sh -c "umask 022; echo later > '$d/share/later' && echo later > '$d/share/sub/later' &&
		mkdir '$d/share/sub/dir'"
	out=$(aclkeep_foreign "$d/share")
	check "$(tag) what the person writes there later names no other user or group" test -z "$out"
	[ -n "$out" ] && sed -n '1,6p' <<<"$out" | diag
	out=$(find "$d/share" -perm -o+w -printf '%P %m\n')
	check "$(tag) nothing there is writable by others, before or after the person wrote" test -z "$out"
	[ -n "$out" ] && diag <<<"$out"
	out=$(getfacl -cpd "$d/share/sub" 2>/dev/null | grep -v '^$')
	check "$(tag) an agent-made folder passes no 'other' write on by default" \
		test -z "$(grep '^other::.w' <<<"$out")"
	out=$(getfacl -cpE "$d/inh/f" | grep -E 'nobody|nogroup' | tr '\n' ' ')
	check "$(tag) in the person's folder, the agent's file keeps what its default ACL gives, no more (r-x)" \
		test "$out" = "user:nobody:r-x "
	[ "$out" != "user:nobody:r-x " ] && diag <<<"$out"
	aclkeep_handback "$d"
	as_person rm -rf "$d"
}

# The handback on its own, the second layer: entries an agent that got past seccomp would
# have set are planted from outside (as root) on what the account made, while its command
# waits; after close, none is left and nothing is writable by others.
aclkeep_handback() { # DIR
	local d=$1/hb pid i out
	as_person mkdir -p "$d"
	sbx -- sh -c "cd '$d' && mkdir sub && echo s > sub/f && : > .ready &&
		i=0; while [ ! -e .go ] && [ \$i -lt 2400 ]; do sleep 0.05; i=\$((i + 1)); done" \
		>/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 2400; i++)); do [ -e "$d/.ready" ] && break; sleep 0.05; done
	setfacl -m u:nobody:rwx,g:nogroup:rwx "$d/sub" "$d/sub/f" 2>/dev/null
	setfacl -d -m u:nobody:rwx,o::rwx "$d/sub" 2>/dev/null
	chmod o+w "$d/sub/f" 2>/dev/null
	out=$(aclkeep_foreign "$d")
	check "$(tag) control: entries planted from outside on the account's files took" test -n "$out"
	as_person touch "$d/.go"
	wait "$pid"
	out=$(aclkeep_foreign "$d")
	check "$(tag) after close, the handback left no planted entry" test -z "$out"
	[ -n "$out" ] && sed -n '1,6p' <<<"$out" | diag
	out=$(find "$d" -perm -o+w -printf '%P %m\n')
	check "$(tag) after close, nothing the account made is writable by others" test -z "$out"
	[ -n "$out" ] && diag <<<"$out"
}
