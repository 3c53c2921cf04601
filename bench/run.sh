#!/bin/sh
# Spawn cost of a command behind the wall, side by side with its peers, in
# one run: /bin/true alone, `owsbx run` (landlock, none and open), bubblewrap
# with everything unshared, and firejail.  Prints medians and ratios.
#
# Run as root it measures as `nobody` (setpriv), the way a person would run
# it; nothing is installed or left behind.
set -eu
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (make bench-deps)" >&2; exit 1; }
[ -x ./owsbx ] || { echo "bench: build first (make)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/owsbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cp owsbx "$tmp/owsbx"
as=""
if [ "$(id -u)" -eq 0 ]; then
	as="setpriv --reuid=65534 --regid=65534 --clear-groups --"
fi
runs=${BENCH_RUNS:-60}

set -- \
	-n "/bin/true" "$as /bin/true" \
	-n "owsbx run (landlock, none)" "$as $tmp/owsbx run -- /bin/true" \
	-n "owsbx run (landlock, open)" "$as $tmp/owsbx run --net open -- /bin/true" \
	-n "bwrap --unshare-all" "$as bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true"
if command -v firejail >/dev/null && $as firejail --quiet --noprofile /bin/true 2>/dev/null; then
	set -- "$@" -n "firejail --noprofile" "$as firejail --quiet --noprofile /bin/true"
fi

hyperfine -N --style none --warmup 5 --runs "$runs" --export-json "$tmp/spawn.json" "$@" \
	>/dev/null 2>"$tmp/hyperfine.err" || { cat "$tmp/hyperfine.err" >&2; exit 1; }

python3 - "$tmp/spawn.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
med = {r["command"]: r["median"] * 1000 for r in rows}
bwrap = med.get("bwrap --unshare-all")
true = med["/bin/true"]
print("spawn cost, median of %d runs each (ms)" % len(rows[0]["times"]))
print("%-30s %9s %10s %10s" % ("command", "median", "vs true", "vs bwrap"))
for name, ms in med.items():
    print("%-30s %9.2f %9.2fx %9.2fx" % (name, ms, ms / true, ms / bwrap if bwrap else float("nan")))
ours = med["owsbx run (landlock, none)"]
print("goal: owsbx run no slower than bwrap: %s (%.2fx)" % ("met" if ours <= bwrap else "NOT met", ours / bwrap))
PY

# A host that keeps its session open pays only the spawn per command.
echo
cp build/bench/session_spawn "$tmp/session_spawn"
$as "$tmp/session_spawn" "$runs"

# The same session from several threads at once, with and without a host lock.
echo
cp build/bench/session_threads "$tmp/session_threads"
$as "$tmp/session_threads"

# Opening files inside: every open goes through the call's reaper (a FIFO check,
# docs/promises.md).  The same loop in bwrap and outside, then what it comes to for a
# command that opens many files: grep -r over /usr/include.
echo
mkdir "$tmp/w"
[ -n "$as" ] && chown 65534:65534 "$tmp/w"
opens='
import os, sys, time
n, at = 20000, sys.argv[1]
def loop(flags):
    t = time.perf_counter()
    for _ in range(n):
        os.close(os.open(at, flags, 0o644))
    return (time.perf_counter() - t) / n * 1e6
w = loop(os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
print("%.2f %.2f" % (w, loop(os.O_RDONLY)))'
py=/usr/bin/python3 # the system's: root's PATH may lead to a python nobody cannot run
plain=$($as $py -c "$opens" "$tmp/w/f")
ours=$($as "$tmp/owsbx" run --rw "$tmp/w" -- $py -c "$opens" "$tmp/w/f")
bw=$($as bwrap --unshare-all --die-with-parent --ro-bind / / --bind "$tmp/w" "$tmp/w" $py -c "$opens" "$tmp/w/f")
python3 - "$plain" "$ours" "$bw" <<'PY'
import sys
rows = [("outside", sys.argv[1]), ("owsbx run (landlock, none)", sys.argv[2]),
        ("bwrap --unshare-all", sys.argv[3])]
vals = {name: [float(x) for x in v.split()] for name, v in rows}
bw = vals["bwrap --unshare-all"]
print("an open() and close() inside, mean of 20,000 (us)")
print("%-30s %9s %9s %10s %10s" % ("where", "write", "read", "write/bwrap", "read/bwrap"))
for name, (w, r) in vals.items():
    print("%-30s %9.2f %9.2f %9.2fx %9.2fx" % (name, w, r, w / bw[0], r / bw[1]))
PY

hyperfine -N --style none --warmup 2 --runs 10 --export-json "$tmp/grep.json" -i \
	-n "outside" "$as grep -r owstest-nothing /usr/include" \
	-n "owsbx run (landlock, none)" "$as $tmp/owsbx run -- grep -r owstest-nothing /usr/include" \
	-n "bwrap --unshare-all" "$as bwrap --unshare-all --die-with-parent --ro-bind / / grep -r owstest-nothing /usr/include" \
	>/dev/null 2>"$tmp/hyperfine.err" || { cat "$tmp/hyperfine.err" >&2; exit 1; }
python3 - "$tmp/grep.json" "$(find /usr/include -type f | wc -l)" <<'PY'
import json, sys
med = {r["command"]: r["median"] * 1000 for r in json.load(open(sys.argv[1]))["results"]}
bw = med["bwrap --unshare-all"]
print("grep -r over /usr/include (%s files), median of 10 (ms, with the spawn)" % sys.argv[2])
for name, ms in med.items():
    print("%-30s %9.1f %9.2fx bwrap" % (name, ms, ms / bw))
PY

# The account provider's parts, in the same run: ACL grant and revoke on 100,000 files
# against setfacl -R, and the account provider's spawn cost next to bwrap (both root only:
# they create a throwaway tree, and a throwaway person and machine setup).
if [ "$(id -u)" -eq 0 ]; then
	echo
	bench/acl.sh
	echo
	bench/account.sh
else
	echo
	echo "bench: skipping bench/acl.sh and bench/account.sh (they need root)"
fi
