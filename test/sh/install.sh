#!/bin/bash
# make install into a DESTDIR: the library, the header, owsbx and a pkg-config
# file that a host can build against; the example host built that way runs a
# command behind the wall.  Everything lands under a temporary DESTDIR.
. "$(dirname "$0")/../lib.sh"

dest=$(mktemp -d /tmp/owstest-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/owstest

ok "make install succeeds" make -s -C "$OWSTEST_ROOT" install PREFIX=$prefix DESTDIR="$dest"
for f in lib/libowsandbox.a include/owsandbox.h bin/owsbx lib/pkgconfig/owsandbox.pc; do
	ok "installed $f" test -f "$dest$prefix/$f"
done
is "$(stat -c %a "$dest$prefix/bin/owsbx")" "755" "owsbx is executable"

pc="$dest$prefix/lib/pkgconfig"
flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs --static owsandbox)
like "$flags" "-lowsandbox" "pkg-config names the library"
like "$flags" "-ljansson" "and its dependencies for static linking"
ok "the example host builds against the installed files" \
	cc -o "$dest/example" "$OWSTEST_ROOT/examples/run.c" $flags
work=$(mktemp -d "$dest/work.XXXXXX")
chmod 777 "$work" "$dest"
out=$("$dest/example" "$work" -- /bin/sh -c 'echo inside > out; cat out' 2>/dev/null)
like "$out" "inside" "and runs a command behind the wall"
like "$out" '"passed":true' "after a proof that passed"
ok "the command wrote into its read-write folder" test -f "$work/out"

make -s -C "$OWSTEST_ROOT" uninstall PREFIX=$prefix DESTDIR="$dest"
not_ok "uninstall removes owsbx" test -e "$dest$prefix/bin/owsbx"
done_testing
