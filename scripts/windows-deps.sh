#!/bin/sh
# Builds mbedTLS and jansson as static Windows (x86_64, mingw-w64) libraries
# from Debian's own source packages, into build/windeps/{include,lib}.
#
# Debian ships no mingw builds of them.  scripts/debian-source.sh fetches
# the sources through a private apt configuration (the machine's /etc/apt is
# read, never written).  Everything temporary is removed on exit.
#
#   scripts/windows-deps.sh            build unless already built
#   scripts/windows-deps.sh --force    build again
#
# Needs: gcc-mingw-w64-x86-64, cmake, make, dpkg-dev (dpkg-source), apt.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/build/windeps"
CROSS=${CROSS:-x86_64-w64-mingw32}

if [ "${1:-}" != "--force" ] && [ -f "$out/lib/libmbedcrypto.a" ] && [ -f "$out/lib/libjansson.a" ]; then
	echo "windows-deps: already built in $out (--force to rebuild)"
	exit 0
fi
for tool in "$CROSS-gcc" "$CROSS-ar" cmake make; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "windows-deps: $tool is missing (make test-deps installs it)" >&2
		exit 1
	}
done

tmp=$(mktemp -d /tmp/owsandbox-windeps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

"$top/scripts/debian-source.sh" "$tmp/src" mbedtls jansson
mb=$(ls -d "$tmp"/src/mbedtls-*/ | head -1)
ja=$(ls -d "$tmp"/src/jansson-*/ | head -1)
[ -d "$mb" ] && [ -d "$ja" ] || { echo "windows-deps: sources not unpacked" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/include" "$out/lib"
jobs=$(nproc 2>/dev/null || echo 2)

echo "windows-deps: mbedTLS from $(basename "$mb")"
make -C "$mb" -j"$jobs" lib CC="$CROSS-gcc" AR="$CROSS-ar" WINDOWS_BUILD=1 \
	CFLAGS="-O2" >"$tmp/mbedtls.log" 2>&1 || { tail -40 "$tmp/mbedtls.log" >&2; exit 1; }
cp -r "$mb/include/mbedtls" "$out/include/"
[ -d "$mb/include/psa" ] && cp -r "$mb/include/psa" "$out/include/"
cp "$mb"/library/libmbedtls.a "$mb"/library/libmbedx509.a "$mb"/library/libmbedcrypto.a "$out/lib/"

echo "windows-deps: jansson from $(basename "$ja")"
cmake -S "$ja" -B "$tmp/jansson-build" -DCMAKE_SYSTEM_NAME=Windows \
	-DCMAKE_C_COMPILER="$CROSS-gcc" -DCMAKE_RC_COMPILER="$CROSS-windres" \
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out" \
	-DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF \
	-DJANSSON_WITHOUT_TESTS=ON -DJANSSON_EXAMPLES=OFF >"$tmp/jansson.log" 2>&1 &&
	cmake --build "$tmp/jansson-build" -j"$jobs" >>"$tmp/jansson.log" 2>&1 &&
	cmake --install "$tmp/jansson-build" >>"$tmp/jansson.log" 2>&1 ||
	{ tail -40 "$tmp/jansson.log" >&2; exit 1; }
rm -rf "$out/lib/cmake" "$out/lib/pkgconfig"
echo "windows-deps: built into $out:" $(cd "$out/lib" && ls)
