#!/bin/bash
# The shared attack suite: every fragment in test/attack/*.sh, run for each Linux
# provider and each network mode, by a throwaway person from inside the sandbox.
# One wall with two identities must hold the same way under both; each attack sits
# next to a control that succeeds, so a wall that refuses everything fails too.
#
# A fragment adds its name to ATTACKS and defines attack_NAME, which is called once per
# (provider, mode) with P and NET set and fresh folders in place (test/attack/lib.sh).
# A (provider, mode) this machine refuses (allowlist without user namespaces) skips each
# attack with the reason; an attack on a promise the session keeps only in part skips
# with the reason its events give (`partial`, test/attack/lib.sh).
#
#   OWSTEST_NOUSERNS=1           the person's owsbx runs under a seccomp filter that
#                                refuses user namespaces (test/helpers/without.py), as
#                                user.max_user_namespaces=0 would: the landlock provider
#                                alone (the filter's no_new_privs disarms the account's
#                                setuid launcher), in the host's namespaces
#   OWSTEST_PROVIDERS="landlock" the providers to attack (default: landlock account)
#   OWSTEST_ATTACKS="ro loopback" the fragments to run, in that order (default: all)
# The account provider's machine is set up only when it is attacked.
[[ " ${OWSTEST_PROVIDERS:-landlock account} " == *" account "* ]] && [ "${OWSTEST_NOUSERNS:-}" != 1 ] ||
	export OWSTEST_ACCOUNT=0
. "$(dirname "$0")/../account_lib.sh"
ATTACK_DIR=$(cd "$(dirname "$0")/../attack" && pwd)
. "$ATTACK_DIR/lib.sh"
ATTACKS=""
for frag in "$ATTACK_DIR"/[a-z]*.sh; do
	# shellcheck disable=SC1090
	. "$frag"
done
# OWSTEST_ATTACKS="lifetime ipc": only those (while working on one; the suite runs them all).
ATTACKS=${OWSTEST_ATTACKS:-$ATTACKS}
PROVIDERS=${OWSTEST_PROVIDERS:-landlock account}

# The simulation: the person's owsbx is a wrapper that execs the real one under the filter;
# the real one is put back before done_testing compares the launcher's folder.
# (The real one keeps its name, in a folder of its own: pgrep -f "owsbx run" finds it.)
nouserns_off() {
	[ -e "$BIN/real/owsbx" ] && mv -f "$BIN/real/owsbx" "$BIN/owsbx" && rmdir "$BIN/real"
	return 0
}
if [ "${OWSTEST_NOUSERNS:-}" = 1 ]; then
	PROVIDERS=landlock
	mkdir -m 0755 "$BIN/real" && mv "$BIN/owsbx" "$BIN/real/owsbx"
	printf '#!/bin/sh\nexec /usr/bin/python3 %s userns -- %s "$@"\n' \
		"$ROOT/test/helpers/without.py" "$BIN/real/owsbx" >"$BIN/owsbx"
	chmod 0755 "$BIN/owsbx"
	diag <<<"OWSTEST_NOUSERNS=1: owsbx runs without user namespaces"
fi
trap 'attack_cleanup; nouserns_off; teardown' EXIT
for P in $PROVIDERS; do
	for NET in none allowlist open; do
		attack_fresh
		attack_mode
		for a in $ATTACKS; do
			if [ -n "$ATK_REFUSED" ]; then
				skip "$(tag) $a: this machine refuses the mode: $ATK_REFUSED"
				continue
			fi
			"attack_$a"
		done
	done
done
attack_cleanup
nouserns_off
done_testing
