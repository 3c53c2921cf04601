#!/bin/sh
# The Windows stage of CI: cross-build with mingw-w64 (mbedTLS and jansson
# from Debian's source packages first), then run test/win under Wine in a
# throwaway prefix that is removed on exit, whatever happens.
#
#   scripts/test-windows.sh
#
# Last line: "N passed, N failed, N skipped".  Exit 1 when anything failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
start=$(date +%s)

for tool in x86_64-w64-mingw32-gcc wine wineserver; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "test-windows: $tool is missing: make test-deps installs it" >&2
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	}
done
if ! scripts/windows-deps.sh || ! make -s windows >/dev/null; then
	echo "test-windows: the cross-build failed" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
built=$(date +%s)

WINEPREFIX=$(mktemp -d /tmp/owsandbox-wine.XXXXXX)
export WINEPREFIX WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
# wineserver keeps its socket in /tmp/wine-XXXXXX/server-<dev>-<inode of the prefix>.
server_dir=$(printf 'server-%x-%x' $(stat -c '%d %i' "$WINEPREFIX"))
cleanup() {
	wineserver -k >/dev/null 2>&1 || true
	wineserver -w >/dev/null 2>&1 || true
	rm -rf "$WINEPREFIX"
	for d in /tmp/wine-*/"$server_dir" /tmp/.wine-"$(id -u)"/"$server_dir"; do
		[ -d "$d" ] || continue
		rm -rf "$d"
		rmdir "$(dirname "$d")" 2>/dev/null || true
	done
}
trap cleanup EXIT INT TERM
# The server first, detached, or a pipe reading a test's output can hang.
wineserver -p </dev/null >/dev/null 2>&1
wine cmd /c exit 0 </dev/null >/dev/null 2>&1

test/win/run.sh
rc=$?
end=$(date +%s)
echo "# windows stage: build $((built - start)) s, wine tests $((end - built)) s" >&2
# run.sh's last line is the count line; repeat it last for .ci/run.
exit $rc
