#!/bin/bash
# The proxy's fuzz target (request parser, pattern matcher) for a few seconds; `make fuzz`
# runs it for longer.
cd "$(dirname "$0")/../.." || exit 2
if [ ! -x build/fuzz/proxy_fuzz ]; then
	echo "1..0 # SKIP build/fuzz/proxy_fuzz not built (make check builds it)"
	exit 0
fi
out=$(mktemp /tmp/owstest-fuzz-XXXXXX)
trap 'rm -f "$out"' EXIT
echo "1..1"
if test/fuzz/run.sh "${FUZZ_CHECK_SECONDS:-5}" >"$out" 2>&1; then
	echo "ok 1 - the request parser and pattern matcher survive $(cat build/fuzz/proxy_fuzz.kind) fuzzing"
else
	echo "not ok 1 - the fuzz target failed"
	tail -n 20 "$out" | sed 's/^/# /'
fi
