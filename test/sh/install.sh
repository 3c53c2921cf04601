#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run in a shell of their own
# make install into a DESTDIR: the static and shared libraries (the shared one
# by its version, with its soname and dev links), the header, owsbx, its man
# page and a pkg-config file that a host can build against, statically or
# not; the example host built either way runs a command behind the wall.
# Everything lands under a temporary DESTDIR.
. "$(dirname "$0")/../lib.sh"

dest=$(mktemp -d /tmp/owstest-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/owstest

ok "make install succeeds" make -s -C "$OWSTEST_ROOT" install PREFIX=$prefix DESTDIR="$dest"
hv() { sed -n "s/^#define OWS_VERSION_$1 \([0-9]*\)$/\1/p" "$OWSTEST_ROOT/include/owsandbox.h"; }
version=$(hv MAJOR).$(hv MINOR).$(hv PATCH)
if [ "$(hv MAJOR)" = 0 ]; then soname=libowsandbox.so.0.$(hv MINOR); else soname=libowsandbox.so.$(hv MAJOR); fi
for f in lib/libowsandbox.a "lib/libowsandbox.so.$version" include/owsandbox.h bin/owsbx \
	lib/pkgconfig/owsandbox.pc share/man/man1/owsbx.1; do
	ok "installed $f" test -f "$dest$prefix/$f"
done
is "$(stat -c %a "$dest$prefix/bin/owsbx")" "755" "owsbx is executable"
# The launcher as setup's source (cli/main.c looks for it from bin/), not at the launcher path:
# setup's setuid copy there is its own, which no reinstall replaces.
is "$(stat -c %a "$dest$prefix/lib/owsandbox/owsbx-launch")" "755" "the launcher is installed in lib/owsandbox/, not setuid"
not_ok "and not at the launcher path (setup's)" test -e "$dest$prefix/libexec/owsandbox/owsbx-launch"
not_ok "owsbx is installed stripped" sh -c "readelf -S '$dest$prefix/bin/owsbx' | grep -q '\.symtab'"
# The completion scripts, printed by the installed owsbx from its own tables.
bc=$dest$prefix/share/bash-completion/completions/owsbx zc=$dest$prefix/share/zsh/vendor-completions/_owsbx
ok "the bash completion is installed and parses" bash -n "$bc"
like "$(head -1 "$zc")" "^#compdef owsbx" "the zsh completion is installed, marked for compinit"
comp() { bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _owsbx; echo "${COMPREPLY[*]}"' sh "$bc" "$@"; }
like "$(comp owsbx r)" "^run report runner$" "it completes the commands (owsbx r: run report runner)"
is "$(comp owsbx run --net "")" "none allowlist open" "and an option's values (run --net)"
is "$(comp owsbx machine sandbox re)" "remove" "and the machine's verbs"
like "$(comp owsbx run --a)" "--allow-site --allow-sites-file" "and a command's options"
if command -v zsh >/dev/null; then
	out=$(zsh -c 'autoload -U compinit && compinit -u -D; . "$1" && echo loaded' zsh "$zc" 2>&1)
	is "$out" "loaded" "zsh loads the zsh completion"
else
	skip "zsh is not installed" 1
fi
runner=bin/owsbx-linux-$(uname -m)
is "$(stat -c %a "$dest$prefix/$runner")" "755" "the OpenShell tool runner is installed beside owsbx"
like "$(LC_ALL=C readelf -h "$dest$prefix/$runner")" "Type: +EXEC" "... a static executable" # not DYN/PIE
unlike "$(LC_ALL=C readelf -l "$dest$prefix/$runner")" "program interpreter" "... that needs no loader"
is "$(stat -c %a "$dest$prefix/share/man/man1/owsbx.1")" "644" "the man page is readable by all"
is "$(readlink "$dest$prefix/lib/$soname")" "libowsandbox.so.$version" "the soname link $soname names the library"
is "$(readlink "$dest$prefix/lib/libowsandbox.so")" "$soname" "the dev link libowsandbox.so names the soname"
is "$(readelf -d "$dest$prefix/lib/libowsandbox.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" \
	"$soname" "the installed library carries that soname"
ok "the installed page is the source's" cmp -s "$dest$prefix/share/man/man1/owsbx.1" "$OWSTEST_ROOT/cli/owsbx.1"

pc="$dest$prefix/lib/pkgconfig"
is "$(PKG_CONFIG_PATH=$pc pkg-config --modversion owsandbox)" "$version" "pkg-config says the header's version"
flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs --static owsandbox)
like "$flags" "-lowsandbox" "pkg-config names the library"
like "$flags" "-ljansson" "and its dependencies for static linking"
# Linked in: -Bstatic makes the linker take libowsandbox.a over the .so beside it.
ok "the example host builds against the installed files, linked in" \
	cc -o "$dest/example" "$OWSTEST_ROOT/examples/run.c" -Wl,-Bstatic $flags -Wl,-Bdynamic
work=$(mktemp -d "$dest/work.XXXXXX")
chmod 777 "$work" "$dest"
out=$("$dest/example" "$work" -- /bin/sh -c 'echo inside > out; cat out' 2>/dev/null)
like "$out" "inside" "and runs a command behind the wall"
like "$out" '"passed":true' "after a proof that passed"
ok "the command wrote into its read-write folder" test -f "$work/out"
not_ok "the static host needs no libowsandbox.so" grep -q libowsandbox < <(readelf -d "$dest/example")

# Linked dynamically: pkg-config without --static, the library found by its soname.
dflags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs owsandbox)
unlike "$dflags" "-ljansson" "without --static pkg-config names the library alone"
ok "the example host builds against the installed shared library" \
	cc -o "$dest/example-so" "$OWSTEST_ROOT/examples/run.c" $dflags
is "$(readelf -d "$dest/example-so" | sed -n 's/.*(NEEDED).*\[\(libowsandbox[^]]*\)\]/\1/p')" "$soname" \
	"it needs libowsandbox by its soname"
rm -f "$work/out"
out=$(LD_LIBRARY_PATH="$dest$prefix/lib" "$dest/example-so" "$work" -- /bin/sh -c 'echo shared > out; cat out' 2>/dev/null)
like "$out" "shared" "and runs a command behind the wall with the installed library"
like "$out" '"passed":true' "after a proof that passed"

make -s -C "$OWSTEST_ROOT" uninstall PREFIX=$prefix DESTDIR="$dest"
not_ok "uninstall removes owsbx" test -e "$dest$prefix/bin/owsbx"
not_ok "... and the tool runner" test -e "$dest$prefix/$runner"
not_ok "... and the launcher" test -e "$dest$prefix/lib/owsandbox/owsbx-launch"
left=$(find "$dest$prefix" -name 'libowsandbox*' -o -name 'owsbx.1' -o -name owsandbox.h -o -name owsandbox.pc)
is "$left" "" "and the libraries, links, header, page and pkg-config file"

# The AppArmor profile (scripts/apparmor.sh): Ubuntu 24.04 gives programs no profile names user
# namespaces without capabilities. AppArmor before 4 has neither the `userns,` rule nor that
# restriction: its parser cannot read the profile, so none is installed there.
export PATH=$PATH:/usr/sbin:/sbin
profile=$dest/etc/apparmor.d/owstest-owsbx
aa=(APPARMOR_NAME=owstest-owsbx APPARMOR_DIR=/etc/apparmor.d) # /opt is no system prefix: asked for
sys_parser=$(command -v apparmor_parser || true)
sys_major=$([ -n "$sys_parser" ] && "$sys_parser" --version | sed -n '1s/.*version \([0-9]*\).*/\1/p')
if [ -n "$sys_parser" ] && [ "${sys_major:-0}" -lt 4 ]; then
	out=$(make -s -C "$OWSTEST_ROOT" install PREFIX=$prefix DESTDIR="$dest" "${aa[@]}" 2>&1)
	like "$out" "predates the userns rule" "AppArmor $sys_major: make install says why it installs no profile"
	not_ok "and installs none" test -e "$profile"
	make -s -C "$OWSTEST_ROOT" uninstall PREFIX=$prefix DESTDIR="$dest" "${aa[@]}"
elif [ -z "$sys_parser" ] && [ ! -e /sys/kernel/security/apparmor ]; then
	make -s -C "$OWSTEST_ROOT" install PREFIX=$prefix DESTDIR="$dest" "${aa[@]}" >/dev/null 2>&1
	not_ok "no AppArmor here: make install installs no profile" test -e "$profile"
	make -s -C "$OWSTEST_ROOT" uninstall PREFIX=$prefix DESTDIR="$dest" "${aa[@]}"
else
	skip "the system's apparmor_parser is AppArmor ${sys_major:-?}: tested below" 2
fi

# With AppArmor 4's parser (the system's, or Debian 13's unpacked: test/helpers/apparmor4.sh).
if ! parser=$("$OWSTEST_DIR/helpers/apparmor4.sh" 2>"$dest/aa4.err"); then
	skip "no AppArmor 4 parser: $(tail -1 "$dest/aa4.err")" 9
else
	aa+=(APPARMOR_PARSER="$parser")
	ok "AppArmor 4: make install succeeds" make -s -C "$OWSTEST_ROOT" install PREFIX=$prefix DESTDIR="$dest" "${aa[@]}"
	ok "and installs the profile under DESTDIR" test -f "$profile"
	is "$(stat -c %a "$profile" 2>/dev/null)" 644 "readable by all, written by root"
	like "$(cat "$profile")" "profile owstest-owsbx $prefix/bin/owsbx flags=\(unconfined\) \{" \
		"it names the installed owsbx, not the DESTDIR copy"
	ok "the installed profile parses (apparmor_parser -Q -K)" "$parser" -Q -K "$profile"
	sed 's/^  userns,$/  userns bogus,/' "$profile" >"$dest/broken"
	not_ok "control: with a broken rule it does not" "$parser" -Q -K "$dest/broken"
	# owsbx apparmor-profile writes what make install installs: one template.
	"$OWSTEST_ROOT/owsbx" apparmor-profile --name owstest-owsbx "$prefix/bin/owsbx" >"$dest/rendered"
	ok "it is what owsbx apparmor-profile writes" cmp -s "$dest/rendered" "$profile"
	make -s -C "$OWSTEST_ROOT" uninstall PREFIX=$prefix DESTDIR="$dest" "${aa[@]}"
	not_ok "uninstall removes the profile" test -e "$profile"
	"$OWSTEST_ROOT/owsbx" apparmor-profile /opt/owstest/bin/owsbx >"$dest/golden"
	ok "the profile is the golden one (test/golden/apparmor_owsbx.profile)" \
		cmp -s "$dest/golden" "$OWSTEST_ROOT/test/golden/apparmor_owsbx.profile"
fi

# A prefix of one's own writes nothing outside it: the AppArmor profile (in /etc) and
# ldconfig's cache are for the system prefixes, /usr and /usr/local. ldconfig and
# apparmor_parser are stand-ins first on the PATH that log their calls (the parser claims
# AppArmor 4, so that a profile would be written if install meant to): the real ones would
# be the only writers outside, and other helpers' apt runs change ld.so.cache meanwhile.
fake=$(mktemp -d /tmp/owstest-fakebin.XXXXXX)
calls=$fake/calls
: >"$calls"
chmod 755 "$fake" && chmod 666 "$calls"
for t in ldconfig apparmor_parser; do
	printf '#!/bin/sh\necho "%s $*" >>%s\necho "AppArmor parser version 4.0.1"\n' "$t" "$calls" >"$fake/$t"
	chmod 755 "$fake/$t"
done
mine=$(mktemp -d /tmp/owstest-prefix.XXXXXX)
aaname=owstest-mine-$(rand_hex 4)
trap 'rm -rf "$dest" "$fake" "$mine" "/etc/apparmor.d/$aaname"' EXIT
chown nobody "$mine"
person() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	env -i HOME=/nonexistent PATH="$fake:/usr/bin:/bin" "$@"; }
out=$(person make -s -C "$OWSTEST_ROOT" install PREFIX="$mine/p" APPARMOR_NAME="$aaname" 2>&1)
rc=$?
[ $rc = 0 ] || diag "$out"
is "$rc" 0 "an ordinary user installs into a prefix of their own"
ok "owsbx lands there" test -x "$mine/p/bin/owsbx"
ok "and the library" test -f "$mine/p/lib/libowsandbox.so.$version"
not_ok "owsbx is installed stripped" sh -c "readelf -S '$mine/p/bin/owsbx' | grep -q '\.symtab'"
like "$out" "apparmor: no profile installed \($mine/p is not a system prefix" "make install says why no profile"
is "$(cat "$calls")" "" "neither ldconfig nor apparmor_parser runs"
is "$(find "$mine" ! -user nobody)" "" "everything in the prefix is the person's"
out=$(PATH="$fake:$PATH" make -s -C "$OWSTEST_ROOT" install PREFIX="$mine/root" APPARMOR_NAME="$aaname" 2>&1)
rc=$?
[ $rc = 0 ] || diag "$out"
is "$rc" 0 "root installs into a prefix that is no system one"
is "$(cat "$calls")" "" "and runs neither ldconfig nor apparmor_parser"
not_ok "nor writes a profile in /etc/apparmor.d" test -e "/etc/apparmor.d/$aaname"
dry=$(make -s -n -C "$OWSTEST_ROOT" install PREFIX=/usr/local APPARMOR_NAME="$aaname")
like "$dry" "apparmor\.sh install .* /usr/local/bin/owsbx /etc/apparmor\.d/$aaname" \
	"PREFIX=/usr/local is a system prefix: install would write the profile (make -n)"
like "$dry" "ldconfig" "and run ldconfig"
make -s -C "$OWSTEST_ROOT" uninstall PREFIX="$mine/root" >/dev/null 2>&1
not_ok "uninstall from that prefix removes owsbx" test -e "$mine/root/bin/owsbx"
is "$(cat "$calls")" "" "and runs no apparmor_parser either"

# mbedTLS linked dynamically (the Debian package's build, test/sh/deb.sh runs it); a typo is
# refused before anything is built.
out=$(make -s -n -C "$OWSTEST_ROOT" owsbx MBEDTLS_LINK=shared 2>&1)
like "$out" "MBEDTLS_LINK=shared: write static or dynamic" "MBEDTLS_LINK takes static or dynamic, and says so"
like "$(make -s -n -B -C "$OWSTEST_ROOT" owsbx MBEDTLS_LINK=dynamic)" \
	"-Bstatic -ljansson -linih -Wl,-Bdynamic -lmbedtls -lmbedx509 -lmbedcrypto" \
	"MBEDTLS_LINK=dynamic links jansson and inih in, mbedTLS shared"

# Loaded into the running kernel, when it has AppArmor on: make install with no DESTDIR loads
# the profile, the installed owsbx runs under it, uninstall unloads it. Everything under a
# temporary prefix and profile folder, with a profile name of its own.
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] ||
	[ ! -e /sys/kernel/security/apparmor/profiles ]; then
	skip "AppArmor is not on in this kernel ($(cat /sys/kernel/security/lsm 2>/dev/null || echo no securityfs)): profile loading not tested" 6
elif [ -z "${parser:-}" ]; then
	skip "AppArmor is on, but there is no AppArmor 4 parser" 6
else
	live=$(mktemp -d /tmp/owstest-aalive.XXXXXX)
	chmod 755 "$live"
	name=owstest-owsbx-$(rand_hex 4)
	trap 'echo -n "$name" >/sys/kernel/security/apparmor/.remove 2>/dev/null; rm -rf "$dest" "$live" "$fake" "$mine"' EXIT
	live_aa=(PREFIX="$live" APPARMOR_DIR="$live/apparmor.d" APPARMOR_NAME="$name" APPARMOR_PARSER="$parser")
	out=$(make -s -C "$OWSTEST_ROOT" install "${live_aa[@]}" 2>&1)
	like "$out" "loaded profile $name" "make install loads the profile"
	like "$(cat /sys/kernel/security/apparmor/profiles)" "(^|$'\n')$name \(unconfined\)" "the kernel lists it"
	label=$("$live/bin/owsbx" run --provider direct -- /bin/sh -c 'cat /proc/$PPID/attr/current' 2>&1)
	is "$label" "$name (unconfined)" "the installed owsbx runs under it"
	label=$(cp "$live/bin/owsbx" "$live/other" && "$live/other" run --provider direct -- /bin/sh -c 'cat /proc/$PPID/attr/current' 2>&1)
	is "$label" "unconfined" "control: a copy elsewhere does not"
	make -s -C "$OWSTEST_ROOT" uninstall "${live_aa[@]}"
	unlike "$(cat /sys/kernel/security/apparmor/profiles)" "(^|$'\n')$name " "make uninstall unloads it"
	not_ok "and removes its file" test -e "$live/apparmor.d/$name"
fi
done_testing
