#!/bin/sh
# For a Mac owner: builds owsandbox natively with the Mac's own compiler (Xcode's command
# line tools), then runs what only a Mac can prove: the macOS test programs
# (test/darwin/*.c) and the attack tests (test/darwin/attacks.sh) against the real Seatbelt.
# Prints a summary; exit 1 when anything failed.  See docs/macos.md.
#
#   scripts/macos-check.sh
#
# jansson and mbedTLS come from Homebrew when it has them (brew install jansson mbedtls),
# else from Debian's source tarballs (the ones the Linux and cross builds use, checked
# against their SHA-256 here), built with cc, make and cmake.  inih is lib/inih/ini.c, the
# reader the cross builds use too.  It changes nothing outside the repository's build/.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ "$(uname -s)" = Darwin ] || { echo "macos-check: run it on a Mac (on Linux: make macos)" >&2; exit 1; }
command -v cc >/dev/null 2>&1 && cc --version >/dev/null 2>&1 ||
	{ echo "macos-check: no C compiler: xcode-select --install" >&2; exit 1; }
case $(uname -m) in
arm64) arch=aarch64 ;;
x86_64) arch=x86_64 ;;
*) echo "macos-check: unknown CPU $(uname -m)" >&2; exit 1 ;;
esac
deps=$top/build/macdeps
out=$deps/$arch
tmp=$(mktemp -d /tmp/owsandbox-maccheck.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Debian's tarballs: what `apt-get source` fetched for the cross build, pinned.
MBEDTLS_TAR=mbedtls_2.28.3.orig.tar.gz
MBEDTLS_SHA=3b4953aa55a681e084d31892d9904cc5328d6b4958ea57b90ae4b4f94ae69a8d
JANSSON_TAR=jansson_2.14.orig.tar.gz
JANSSON_SHA=c739578bf6b764aa0752db9a2fdadcfe921c78f1228c7ec0bb47fa804c55d17b
POOL=https://deb.debian.org/debian/pool/main

# Homebrew's static libraries, linked into build/macdeps so that -L picks them, not a .dylib.
from_homebrew() {
	command -v brew >/dev/null 2>&1 || return 1
	ja=$(brew --prefix jansson 2>/dev/null) && mb=$(brew --prefix mbedtls 2>/dev/null) || return 1
	[ -f "$ja/lib/libjansson.a" ] && [ -f "$mb/lib/libmbedtls.a" ] || return 1
	mkdir -p "$out/include" "$out/lib"
	ln -sf "$ja"/include/jansson*.h "$out/include/"
	ln -sf "$mb/include/mbedtls" "$out/include/mbedtls"
	[ ! -d "$mb/include/psa" ] || ln -sf "$mb/include/psa" "$out/include/psa"
	ln -sf "$ja/lib/libjansson.a" "$mb/lib/libmbedcrypto.a" "$mb/lib/libmbedx509.a" \
		"$mb/lib/libmbedtls.a" "$out/lib/"
	echo "Homebrew's jansson $(basename "$(readlink "$ja" || echo "$ja")"), mbedtls $(basename "$(readlink "$mb" || echo "$mb")")"
}

fetch() { # path-in-pool sha256
	curl -fsSL -o "$tmp/$(basename "$1")" "$POOL/$1" ||
		{ echo "macos-check: cannot download $POOL/$1" >&2; exit 1; }
	[ "$(shasum -a 256 "$tmp/$(basename "$1")" | cut -d' ' -f1)" = "$2" ] ||
		{ echo "macos-check: $(basename "$1") does not match its SHA-256" >&2; exit 1; }
	mkdir -p "$tmp/src"
	tar -xzf "$tmp/$(basename "$1")" -C "$tmp/src"
}

from_debian_sources() {
	command -v cmake >/dev/null 2>&1 ||
		{ echo "macos-check: needs cmake (brew install cmake), or brew install jansson mbedtls" >&2; exit 1; }
	fetch "m/mbedtls/$MBEDTLS_TAR" "$MBEDTLS_SHA"
	fetch "j/jansson/$JANSSON_TAR" "$JANSSON_SHA"
	mb=$(ls -d "$tmp"/src/*mbedtls*/ | head -1)
	ja=$(ls -d "$tmp"/src/jansson-*/ | head -1)
	mkdir -p "$out/include" "$out/lib"
	make -C "$mb/library" libmbedcrypto.a libmbedx509.a libmbedtls.a CC=cc CFLAGS=-O2 >"$tmp/mbedtls.log" 2>&1 ||
		{ tail -30 "$tmp/mbedtls.log" >&2; exit 1; }
	cp -R "$mb/include/mbedtls" "$out/include/"
	[ ! -d "$mb/include/psa" ] || cp -R "$mb/include/psa" "$out/include/"
	cp "$mb/library/libmbedcrypto.a" "$mb/library/libmbedx509.a" "$mb/library/libmbedtls.a" "$out/lib/"
	{ cmake -S "$ja" -B "$tmp/ja" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out" \
		-DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF -DJANSSON_WITHOUT_TESTS=ON \
		-DJANSSON_EXAMPLES=OFF && cmake --build "$tmp/ja" && cmake --install "$tmp/ja"; } \
		>"$tmp/jansson.log" 2>&1 || { tail -30 "$tmp/jansson.log" >&2; exit 1; }
	rm -rf "$out/lib/cmake" "$out/lib/pkgconfig"
	echo "Debian's $MBEDTLS_TAR and $JANSSON_TAR, built with cc"
}

rm -rf "$out" "$deps/ready"
if ! libs=$(from_homebrew); then
	rm -rf "$out"
	libs=$(from_debian_sources)
fi
echo "$libs" >"$deps/ready"
echo "macos-check: libraries: $libs"

# The same Makefile rules as the cross build, with the Mac's compiler for its own arch.
build_log=$tmp/build.log
if make macos MAC_ARCHS="$arch" MAC_CC=cc MAC_AR=ar >"$build_log" 2>&1; then
	built="built (cc $(cc -dumpversion), $arch, warnings as errors)"
else
	tail -40 "$build_log" >&2
	echo "macos-check: the native build failed" >&2
	exit 1
fi
bin=$top/build/mac/$arch

# TAP lines of one test: counts into the totals, failing lines shown.
passed=0 failed=0 skipped=0 report=
tally() { # name file rc
	p=$(grep -c '^ok ' "$2" | tr -d ' ') || true
	s=$(grep -c '^ok .*# SKIP' "$2" | tr -d ' ') || true
	f=$(grep -c '^not ok ' "$2" | tr -d ' ') || true
	if [ "$3" != 0 ] && [ "$f" = 0 ]; then
		f=1 # it ended badly without saying why in TAP
	fi
	passed=$((passed + p - s)) skipped=$((skipped + s)) failed=$((failed + f))
	report="$report$(printf '%-28s %s passed, %s failed, %s skipped' "$1" $((p - s)) "$f" "$s")
"
	grep '^not ok ' "$2" >&2 || true
}

for t in "$bin"/test/*; do
	[ -x "$t" ] || continue
	rc=0
	"$t" >"$tmp/t.tap" 2>&1 || rc=$?
	tally "test/darwin/$(basename "$t")" "$tmp/t.tap" "$rc"
done
if [ -f test/darwin/attacks.sh ]; then
	rc=0
	OWSBX="$bin/owsbx" sh test/darwin/attacks.sh >"$tmp/attacks.tap" 2>&1 || rc=$?
	tally test/darwin/attacks.sh "$tmp/attacks.tap" "$rc"
else
	report="${report}test/darwin/attacks.sh       not in this tree
"
fi

echo
echo "macos-check: macOS $(sw_vers -productVersion 2>/dev/null || echo '?'), $(uname -m)"
echo "  build: $built"
printf '%s' "$report" | sed 's/^/  /'
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
