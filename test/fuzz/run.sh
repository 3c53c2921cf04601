#!/bin/sh
# test/fuzz/run.sh SECONDS: runs build/fuzz/proxy_fuzz (make build/fuzz/proxy_fuzz) for
# SECONDS from the seeds in test/fuzz/seeds; new inputs go to build/fuzz/corpus.
# Exit status non-zero when an input crashed it or broke an invariant.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-10}
bin=build/fuzz/proxy_fuzz
[ -x "$bin" ] || { echo "fuzz: build first: make $bin" >&2; exit 2; }
mkdir -p build/fuzz/corpus build/fuzz/crashes
if [ "$(cat "$bin.kind" 2>/dev/null)" = libfuzzer ]; then
	exec "$bin" -max_total_time="$secs" -max_len=20000 -print_final_stats=0 \
		-artifact_prefix=build/fuzz/crashes/ build/fuzz/corpus test/fuzz/seeds
else
	exec "$bin" "$secs" test/fuzz/seeds
fi
