#!/bin/sh
# Fetches and unpacks Debian source packages into a folder, for the cross
# builds (scripts/windows-deps.sh, scripts/macos-deps.sh): Debian ships no
# mingw or macOS builds of the libraries, but its sources are the ones the
# Linux build links against.
#
# The sources come from deb-src through a private, temporary apt
# configuration (its own sources list, package lists and cache under a
# temporary folder): the machine's /etc/apt is read, never written.  The
# temporary folder is removed on exit; only the unpacked trees stay in DEST.
#
#   scripts/debian-source.sh DEST PACKAGE...
#
# Exit 0 when every package is unpacked in DEST (DEST/NAME-VERSION/);
# 2 when the mirror cannot be reached (a caller may skip with that reason);
# 1 on any other failure.  Needs apt-get and dpkg-source (dpkg-dev).
set -eu

[ $# -ge 2 ] || { echo "usage: $0 DEST PACKAGE..." >&2; exit 1; }
dest=$1
shift
for tool in apt-get dpkg-source; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "debian-source: $tool is missing (make test-deps installs it)" >&2
		exit 1
	}
done
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

tmp=$(mktemp -d /tmp/owsandbox-debsrc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# deb-src lines for the suites the machine already uses, in a list of our own.
mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/src"
sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list 2>/dev/null >"$tmp/apt/src.list" || true
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	# deb822: the Debian stanzas, as deb-src.
	awk 'BEGIN{RS=""; ORS="\n\n"} /Types:[^\n]*deb/ && /debian\.org/ {
		gsub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
done >"$tmp/apt/src.sources"
if ! grep -q 'deb-src' "$tmp/apt/src.list" "$tmp/apt/src.sources"; then
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' \
		>"$tmp/apt/src.sources"
fi
apt_opts="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$tmp/apt
	-o Dir::State::Lists=$tmp/apt/lists -o Dir::Cache=$tmp/apt/cache
	-o APT::Sandbox::User=root -q"
echo "debian-source: fetching $* (private apt lists in $tmp)"
# An update that reached no mirror still exits 0, with Err lines: those decide between
# "unreachable" (2) and any other failure (1) once the download has failed.
# shellcheck disable=SC2086 # the options, split on purpose (no spaces in $tmp)
apt-get $apt_opts update >"$tmp/apt-update.log" 2>&1 || { cat "$tmp/apt-update.log" >&2; exit 1; }
# shellcheck disable=SC2086
if ! (cd "$tmp/src" && apt-get $apt_opts source --download-only "$@" >"$tmp/apt-source.log" 2>&1); then
	cat "$tmp/apt-update.log" "$tmp/apt-source.log" >&2
	if grep -q '^\(Err\|W: Failed to fetch\)' "$tmp/apt-update.log"; then
		echo "debian-source: the Debian mirror cannot be reached" >&2
		exit 2
	fi
	exit 1
fi
for dsc in "$tmp"/src/*.dsc; do
	(cd "$tmp/src" && dpkg-source -q -x "$dsc" >/dev/null 2>&1) ||
		{ echo "debian-source: cannot unpack $(basename "$dsc")" >&2; exit 1; }
done
# Only the trees: the tarballs and .dsc files stay behind in $tmp.
for tree in "$tmp"/src/*/; do
	rm -rf "$dest/$(basename "$tree")"
	mv "$tree" "$dest/"
done
