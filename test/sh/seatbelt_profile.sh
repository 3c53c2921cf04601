#!/bin/sh
# The macOS provider's Seatbelt profile, asked the promise questions on Linux: the
# renderer (lib/darwin/profile.c, built into build/test/seatbelt_profile) writes each
# representative session's profile and parameters, and the model of Seatbelt's rule
# matching (test/darwin/sbpl_model.py) answers for them (test/darwin/seatbelt_promises.py),
# with mutants that must fail.  What only a Mac can prove (that Seatbelt itself decides
# as the model does) is in scripts/macos-check.sh.  Needs no root.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/test/seatbelt_profile
if [ ! -x "$BIN" ]; then
	echo "1..0 # SKIP build/test/seatbelt_profile is not built (make build/test/seatbelt_profile)"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "1..0 # SKIP no python3 for the model"
	exit 0
fi
TMP=$(mktemp -d /tmp/owstest-seatbelt-XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
if ! "$BIN" --emit "$TMP"; then
	echo "1..1"
	echo "not ok 1 - the renderer writes the sessions' profiles"
	exit 1
fi
python3 "$ROOT/test/darwin/seatbelt_promises.py" "$TMP"
