#!/bin/sh
# test/helpers/debroot.sh: print the path of a tarball of a minimal Debian root (debootstrap
# --variant=minbase, the suite and mirror this machine's apt uses), made once and cached under
# build/. On failure, print why on stderr (the last line is the reason) and exit non-zero.
#   DEBROOT_SUITE=bookworm DEBROOT_MIRROR=http://deb.debian.org/debian
set -eu
PATH=$PATH:/usr/sbin:/sbin
root=$(cd "$(dirname "$0")/../.." && pwd)
# The suite and mirror from apt's own sources: the archive this machine is known to reach.
sources() { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null; }
suite=${DEBROOT_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}
mirror=${DEBROOT_MIRROR:-$(sources | sed -n 's,^URIs: *\(http[^ ]*/debian\)/*$,\1,p; s,^deb  *\(http[^ ]*/debian\)/* .*,\1,p' | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}
tar=$root/build/debroot-$suite-$(dpkg --print-architecture).tar
[ -s "$tar" ] && { echo "$tar"; exit 0; }
command -v debootstrap >/dev/null || { echo "debootstrap is not installed (scripts/install-deps.sh --test)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 1; }
mkdir -p "$root/build"
work=$(mktemp -d "$root/build/debroot.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! debootstrap --variant=minbase "$suite" "$work/root" "$mirror" >"$work/log" 2>&1; then
	tail -5 "$work/log" >&2
	echo "debootstrap $suite from $mirror failed (is the mirror reachable?)" >&2
	exit 1
fi
rm -rf "$work/root/var/cache/apt/archives"/*.deb
tar -C "$work/root" -cf "$tar.part" . && mv "$tar.part" "$tar"
echo "$tar"
