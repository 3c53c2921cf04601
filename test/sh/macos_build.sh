#!/bin/bash
# make macos: the library, owsbx and the macOS test programs cross-built for aarch64-macos
# and x86_64-macos (Zig from npm, mbedTLS and jansson from Debian's sources,
# scripts/macos-deps.sh).  Each output is a 64-bit Mach-O of its arch (test/helpers/macho.py
# reads them; `file` agrees where it is installed); the whole library, every object of it,
# links into a macOS program with jansson and mbedcrypto (no call macOS lacks); and the
# library and the CLI import the macOS calls test/darwin/imports.list names, and none of the
# Linux calls it forbids.  Nothing here runs macOS code: scripts/macos-check.sh does, on a Mac.
# Skipped only when npm's registry or the Debian mirror cannot be reached.
. "$(dirname "$0")/../lib.sh"

cd "$OWSTEST_ROOT" || bail_out "no repository"
MACHO="python3 $OWSTEST_ROOT/test/helpers/macho.py"
LIST=$OWSTEST_ROOT/test/darwin/imports.list
command -v python3 >/dev/null || skip_all "no python3 to read the Mach-O files"
W=$(mktemp -d /tmp/owstest-macos.XXXXXX)
trap 'rm -rf "$W"' EXIT

scripts/macos-deps.sh >"$W/deps.log" 2>&1
rc=$?
[ "$rc" = 2 ] && skip_all "$(tail -1 "$W/deps.log")"
if [ "$rc" != 0 ]; then
	fail "scripts/macos-deps.sh builds Zig, mbedTLS and jansson for macOS" "$(tail -20 "$W/deps.log")"
	done_testing
fi
pass "scripts/macos-deps.sh: $(cat build/macdeps/ready)"
# Beside each macOS owsbx, the static Linux runner of its arch (OpenShell's container on
# that Mac): the other arch's needs the cross compiler and its libraries
# (test/sh/runner_cross.sh says more; the same skip reason).
other=$([ "$(uname -m)" = aarch64 ] && echo x86_64 || echo aarch64)
RUNNERS=yes
if ! command -v "$other-linux-gnu-gcc" >/dev/null || [ ! -f "/usr/lib/$other-linux-gnu/libjansson.a" ]; then
	RUNNERS=
	skip "the Linux runners beside the macOS builds: no $other-linux-gnu-gcc or its libraries (scripts/install-deps.sh --test)"
fi
if ! make -s macos MAC_LINUX_RUNNERS="$RUNNERS" >"$W/make.log" 2>&1; then
	fail "make macos builds with warnings as errors" "$(tail -30 "$W/make.log")"
	done_testing
fi
pass "make macos builds with warnings as errors"
unlike "$(grep -i 'warning' "$W/make.log")" . "and says no warning"

# has_arch FILE CPU: every Mach-O object in FILE is for CPU.
has_arch() { [ "$($MACHO arch "$1" 2>/dev/null)" = "$2" ]; }
# imports FILE: its imported symbols, one per line.
imports() { $MACHO undefined "$1"; }

tests=$(sed -n 's|^test/darwin/\(.*\)\.c$|\1|p' <<<"$(ls test/darwin/*.c 2>/dev/null)")
for arch in aarch64 x86_64; do
	cpu=$([ "$arch" = aarch64 ] && echo arm64 || echo x86_64)
	other=$([ "$arch" = aarch64 ] && echo x86_64 || echo arm64)
	out=build/mac/$arch
	for f in libowsandbox.a owsbx $(for t in $tests; do echo "test/$t"; done); do
		ok "$arch: $f is a Mach-O for $cpu" has_arch "$out/$f" "$cpu"
	done
	not_ok "control: $arch's owsbx is not read as $other" has_arch "$out/owsbx" "$other"
	if command -v file >/dev/null; then
		like "$(file -b "$out/owsbx")" "^Mach-O 64-bit $cpu executable" \
			"file(1) agrees: $arch's owsbx is a 64-bit $cpu Mach-O executable"
		elf=$([ "$arch" = aarch64 ] && echo "ARM aarch64" || echo "x86-64")
		[ -n "$RUNNERS" ] && like "$(file -b "$out/owsbx-linux-$arch" 2>&1)" \
			"^ELF 64-bit LSB executable, $elf, .*statically linked" \
			"beside it, owsbx-linux-$arch: OpenShell's runner, a static Linux $elf executable"
	fi

	# Every object of the library, not just what owsbx pulls in, links for macOS.
	mkdir -p "$W/$arch"
	(cd "$W/$arch" && "$OWSTEST_ROOT/build/zig/zig" ar x "$OWSTEST_ROOT/$out/libowsandbox.a")
	members=$(build/zig/zig ar t "$out/libowsandbox.a" | grep -c '\.o$')
	is "$(ls "$W/$arch" | grep -c '\.o$')" "$members" "$arch: the library's $members objects unpack, none sharing a name"
	printf 'int main(void) { return 0; }\n' >"$W/$arch/main.c"
	ok "$arch: the whole library links into a macOS program (no call macOS lacks)" \
		"build/zig/bin/$arch-macos-cc" -o "$W/$arch/whole" "$W/$arch/main.c" "$W/$arch"/*.o \
		-Lbuild/macdeps/$arch/lib -ljansson -lmbedtls -lmbedx509 -lmbedcrypto

	for f in libowsandbox.a owsbx; do
		imports "$out/$f" >"$W/$arch-$f.imports"
	done
	while read -r file sym when; do
		case $file in '' | '#'*) continue ;; esac
		got=$W/$arch-$file.imports
		if [ "${sym#!}" != "$sym" ]; then
			not_ok "$arch: $file does not import ${sym#!}" grep -qx -- "${sym#!}" "$got"
		elif [ -n "$when" ] && [ ! -f "$when" ]; then
			skip "$arch: $file imports $sym once $when exists (not on this branch)"
		else
			ok "$arch: $file imports $sym" grep -qx -- "$sym" "$got"
		fi
	done <"$LIST"
	not_ok "control: $arch's imports do not include a call nobody makes (_owstest_absent)" \
		grep -qx _owstest_absent "$W/$arch-libowsandbox.a.imports"
done
done_testing
