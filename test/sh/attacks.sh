#!/bin/bash
# The shared attack suite: every fragment in test/attack/*.sh, run for each Linux
# provider and each network mode, by a throwaway person from inside the sandbox.
# One wall with two identities must hold the same way under both; each attack sits
# next to a control that succeeds, so a wall that refuses everything fails too.
#
# A fragment adds its name to ATTACKS and defines attack_NAME, which is called once per
# (provider, mode) with P and NET set and fresh folders in place (test/attack/lib.sh).
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
trap 'attack_cleanup; teardown' EXIT
for P in landlock account; do
	for NET in none allowlist open; do
		attack_fresh
		for a in $ATTACKS; do
			"attack_$a"
		done
	done
done
attack_cleanup
done_testing
