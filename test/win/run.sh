#!/bin/sh
# Runs every Windows test program (build/win/test/*.exe) under Wine and
# tallies its TAP lines.  Expects WINEPREFIX set and a wineserver running
# (scripts/test-windows.sh does both).  Prints one line per program and a
# last line "N passed, N failed, N skipped"; exits 1 when anything failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0 skipn=0
for exe in "$top"/build/win/test/*.exe; do
	name=$(basename "$exe" .exe)
	out=$(cd "$top/build/win" && timeout 300 wine "$exe" </dev/null 2>"$top/build/win/test/$name.stderr" | tr -d '\r')
	rc=$?
	p=$(printf '%s\n' "$out" | grep -c '^ok .*' | tr -d ' ')
	s=$(printf '%s\n' "$out" | grep -c '^ok .*# SKIP' | tr -d ' ')
	f=$(printf '%s\n' "$out" | grep -c '^not ok' | tr -d ' ')
	p=$((p - s))
	plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
	if [ -z "$plan" ]; then
		f=$((f + 1))
		echo "    not ok - $name ended without its plan (exit $rc)"
	fi
	printf '%-28s %3d passed, %d failed, %d skipped\n' "test/win/$name" "$p" "$f" "$s"
	printf '%s\n' "$out" | grep -E '^not ok|# SKIP' | sed 's/^/    /'
	pass=$((pass + p)) fail=$((fail + f)) skipn=$((skipn + s))
done
echo "$pass passed, $fail failed, $skipn skipped"
[ "$fail" -eq 0 ]
