#!/bin/bash
# Spawn cost of the account provider, side by side in one run with the
# landlock provider, bare /bin/true and bubblewrap: the median of a whole
# `owsbx run -- /bin/true` (session open with its proof, one command,
# close), as the throwaway person of the account tests.  Root only: it sets
# up a throwaway account machine (test/account_lib.sh) and removes it.
OWS_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export OWS_ROOT
# The fixture speaks TAP; here it only builds the machine.
. "$OWS_ROOT/test/account_lib.sh" >/dev/null
command -v hyperfine >/dev/null || { echo "bench/account.sh: hyperfine is not installed"; exit 0; }
RUNS=${RUNS:-40}
OUT=$PHOME/bench-account.json
as_person hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$OUT" \
	-n account "$BIN/owsbx run --provider account -- /bin/true" \
	-n landlock "$BIN/owsbx run --provider landlock -- /bin/true" \
	-n true "/bin/true" \
	-n bwrap "bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true" >/dev/null 2>&1 ||
	{ echo "bench/account.sh: hyperfine failed"; exit 1; }
/usr/bin/python3 - "$OUT" <<'EOF'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
med = {k: r["median"] * 1000 for k, r in res.items()}
print("spawn cost: median of `owsbx run -- /bin/true` (open + proof + command + close), %d runs" % len(res["true"]["times"]))
print("%-10s %10s %10s %12s" % ("", "median ms", "vs bwrap", "vs /bin/true"))
for k in ("account", "landlock", "bwrap", "true"):
    print("%-10s %10.1f %9.2fx %11.1fx" % (k, med[k], med[k] / med["bwrap"], med[k] / med["true"]))
EOF
