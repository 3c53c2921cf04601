#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run in a shell of their own
# The Debian package: dpkg-buildpackage builds owsandbox, libowsandbox0.2 and libowsandbox-dev
# from a copy of the source (the worktree's build/ untouched), lintian finds no error, and the
# .debs install with apt on a clean Debian root (debootstrap --variant=minbase, cached under
# build/ by test/helpers/debroot.sh) where a person runs the README's first command with the
# installed owsbx. The root is entered with pivot_root in a mount and PID namespace of its
# own, not chroot: the kernel refuses user namespaces to a chrooted process, and the sandbox
# needs them. Purging removes what the packages installed.
. "$(dirname "$0")/../lib.sh"
export PATH=$PATH:/usr/sbin:/sbin

[ "$(id -u)" = 0 ] || skip_all "needs root (debootstrap, the clean root's mounts)"
for t in dpkg-buildpackage dh lintian debootstrap unshare; do
	command -v $t >/dev/null || skip_all "$t is not installed (scripts/install-deps.sh --test)"
done
need_userns "the sandbox in the clean root needs user namespaces"
work=$(mktemp -d /tmp/owstest-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
if ! tar=$("$OWSTEST_DIR/helpers/debroot.sh" 2>"$work/debroot.err"); then
	skip_all "no clean Debian root: $(tail -1 "$work/debroot.err")"
fi

# ------------------------------------------------------------------ build
# lintian and dpkg-buildpackage leave their scratch files (mldbm-elf-*...) in TMPDIR: ours.
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
src=$work/src/owsandbox
mkdir -p "$src"
if git -C "$OWSTEST_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$OWSTEST_ROOT" && git ls-files -co --exclude-standard -z | grep -zv '^build/' |
		xargs -0 cp --parents -t "$src")
else
	tar -C "$OWSTEST_ROOT" --exclude=./build -cf - . | tar -C "$src" -xf -
fi
(cd "$src" && make -s clean) # a copy of a built tree would package stale objects
if ! (cd "$src" && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	fail "dpkg-buildpackage -us -uc -b builds the packages" "$(tail -20 "$work/build.log")"
	done_testing
fi
pass "dpkg-buildpackage -us -uc -b builds the packages"
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=()
for p in owsandbox libowsandbox0.2 libowsandbox-dev; do
	ok "it builds $p" test -f "$work/src/${p}_"*"_$arch.deb"
	debs+=("$(ls "$work/src/${p}_"*"_$arch.deb")")
done
contents() { dpkg-deb -c "$1" | awk '{print $6}'; }
like "$(contents "${debs[1]}")" "\./usr/lib/$ma/libowsandbox\.so\.0\.2\.[0-9]+" "libowsandbox0.2 holds the shared library"
like "$(contents "${debs[2]}")" "\./usr/lib/$ma/pkgconfig/owsandbox\.pc" "libowsandbox-dev holds the .pc file"
like "$(contents "${debs[2]}")" "\./usr/lib/$ma/libowsandbox\.a" "... the static library"
like "$(contents "${debs[2]}")" "\./usr/include/owsandbox\.h" "... and the header"
unlike "$(contents "${debs[0]}")" "etc/apparmor" "owsandbox ships no AppArmor profile in /etc (the postinst writes it on AppArmor 4)"
lint=$(lintian --tag-display-limit 0 "$work/src/"*.changes 2>&1)
unlike "$lint" "(^|$'\n')E: " "lintian finds no error"
diag "lintian: ${lint:-nothing}"

# ------------------------------------------------------------------ the clean root
root=$work/root
mkdir -p "$root/debs"
tar -C "$root" -xf "$tar"
cp "${debs[@]}" "$root/debs/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# apt's lists from this machine (same suite, same mirror): no `apt-get update` to wait for.
rm -f "$root/etc/apt/sources.list"
cp -a /etc/apt/sources.list* "$root/etc/apt/" 2>/dev/null
find /var/lib/apt/lists -maxdepth 1 -type f ! -name lock -exec cp -t "$root/var/lib/apt/lists/" {} +

# inroot CMD...: CMD as root in the clean root, its own mounts and processes (all gone when
# it returns).
inroot() {
	unshare --mount --pid --fork --propagation private -- /bin/sh -c '
		root=$1; shift
		mount --bind "$root" "$root" && mount -t proc proc "$root/proc" &&
		mount --rbind /sys "$root/sys" && mount --rbind /dev "$root/dev" &&
		cd "$root" && mkdir -p .oldroot && pivot_root . .oldroot && umount -l /.oldroot &&
		rmdir /.oldroot && exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"' \
		sh "$root" "$@"
}
install_debs() {
	inroot apt-get install -y -q --no-install-recommends "/debs/${debs[0]##*/}" \
		"/debs/${debs[1]##*/}" curl nftables >>"$work/apt.log" 2>&1
}
# This machine's lists may name versions the mirror has dropped since: then fetch them anew.
if ! install_debs && ! { inroot apt-get update -q >>"$work/apt.log" 2>&1 && install_debs; }; then
	fail "apt installs the packages in the clean root" "$(tail -15 "$work/apt.log")"
	done_testing
fi
pass "apt installs owsandbox and libowsandbox0.2 in the clean root"
ok "owsbx is on the PATH there" test -x "$root/usr/bin/owsbx"
ok "the man page is installed" test -f "$root/usr/share/man/man1/owsbx.1.gz"
ok "the bash completion" test -f "$root/usr/share/bash-completion/completions/owsbx"
ok "the zsh completion" test -f "$root/usr/share/zsh/vendor-completions/_owsbx"
is "$(stat -c %a "$root/usr/lib/owsandbox/owsbx-launch")" 755 "the launcher, not setuid (setup copies it)"
# The account provider's setup takes the package's launcher as the one to copy setuid to its
# own path (the package's file stays a plain one dpkg may replace). Not answered: no change.
out=$(inroot owsbx machine sandbox setup </dev/null 2>&1)
like "$out" "install /usr/lib/owsandbox/owsbx-launch as /usr/local/libexec/owsandbox/owsbx-launch" \
	"machine setup would copy the package's launcher setuid to the launcher path"
not_ok "and, not answered, installs nothing" test -e "$root/usr/local/libexec/owsandbox/owsbx-launch"
needed=$(readelf -d "$root/usr/bin/owsbx" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
like "$needed" "libmbedtls\.so" "owsbx links mbedTLS dynamically (security updates reach it)"
unlike "$needed" "libjansson|libinih" "and jansson and inih in"
like "$(inroot dpkg -s owsandbox)" "Depends:.*libmbedtls" "the package depends on mbedTLS"

# The README's first command, as a person in a project folder of their own.
inroot sh -c 'useradd -m -s /bin/sh owstest_deb && mkdir /srv/project && cd /srv/project &&
	touch alpha beta gamma && chown -R owstest_deb: /srv/project'
first='cd /srv/project && owsbx run --ro "$PWD" -- sh -c "ls $PWD | head -3; ls $HOME; cat /etc/shadow; curl -sI http://example.com"; echo "exit $?"'
out=$(inroot runuser -l owstest_deb -c "$first" 2>&1)
diag "the README's first command in the clean root:" "$out"
like "$out" "alpha"$'\n'"beta"$'\n'"gamma" "the installed owsbx lists the folder"
like "$out" "cannot access '/home/owstest_deb'" "finds no home"
like "$out" "/etc/shadow: (Permission denied|No such file)" "is refused /etc/shadow"
unlike "$out" "root:[^ ]*:[0-9]+:" "and reads nothing of it"
unlike "$out" "HTTP/" "curl finds no network"
like "$out" "exit [1-9]" "and the command's failure is the exit status"
report=$(inroot runuser -l owstest_deb -c 'owsbx report' 2>&1)
like "$report" "landlock" "owsbx report runs there"

# The AppArmor profile: none from the postinst with no parser (as in most containers) or
# AppArmor 3 (Debian 12, which cannot parse the userns rule); with AppArmor 4's parser (Debian
# 13's, unpacked by test/helpers/apparmor4.sh, copied into the root at its own path) the
# postinst writes /etc/apparmor.d/owsbx for /usr/bin/owsbx. This kernel may have AppArmor off:
# loading is test/sh/install.sh's.
not_ok "no AppArmor parser: the postinst writes no profile" test -e "$root/etc/apparmor.d/owsbx"
if ! parser=$("$OWSTEST_DIR/helpers/apparmor4.sh" 2>"$work/aa4.err"); then
	skip "no AppArmor 4 parser: $(tail -1 "$work/aa4.err")" 6
else
	aa=$(dirname "$parser")
	mkdir -p "$root$aa"
	cp -a "$aa/." "$root$aa/"
	ln -sf "$parser" "$root/usr/sbin/apparmor_parser"
	mkdir -p "$root/usr/local/libexec/owsandbox" # setup's launcher from an older package
	echo old >"$root/usr/local/libexec/owsandbox/owsbx-launch"
	out=$(inroot dpkg-reconfigure owsandbox 2>&1)
	like "$out" "owsbx-launch is not this package's launcher: run sudo owsbx machine sandbox setup" \
		"the postinst says when setup's launcher is older than the package's"
	rm -r "$root/usr/local/libexec/owsandbox"
	like "$out" "apparmor: /etc/apparmor.d/owsbx: /usr/bin/owsbx may create user namespaces" \
		"AppArmor 4: the postinst writes the profile"
	like "$(cat "$root/etc/apparmor.d/owsbx" 2>&1)" "profile owsbx /usr/bin/owsbx flags=\(unconfined\)" \
		"for the installed owsbx"
	ok "and it parses" inroot apparmor_parser -Q -K /etc/apparmor.d/owsbx
	quiet() { "$@" >/dev/null 2>&1; }
	ok "removing owsandbox succeeds" quiet inroot dpkg --remove owsandbox
	not_ok "and removes the profile (prerm)" test -e "$root/etc/apparmor.d/owsbx"
fi

# Purge: the files go, and the profile where the postinst wrote one.
inroot dpkg --purge owsandbox libowsandbox0.2 >"$work/purge.log" 2>&1
not_ok "dpkg --purge removes owsbx" test -e "$root/usr/bin/owsbx"
not_ok "... the launcher" test -e "$root/usr/lib/owsandbox/owsbx-launch"
not_ok "... the library" test -e "$root/usr/lib/$ma/libowsandbox.so.0.2"
not_ok "... and any AppArmor profile" test -e "$root/etc/apparmor.d/owsbx"
done_testing
