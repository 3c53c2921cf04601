#!/bin/bash
# test/helpers/apparmor4.sh: prints the path of an AppArmor 4 apparmor_parser, the first that
# knows the `userns,` rule of the profile make install writes; exits 1 with the reason on
# stderr when there is none.
#
# The system's parser when it is AppArmor 4 (Ubuntu 24.04, Debian 13). Debian 12 has 3.0.8, so
# there Debian 13's apparmor package and the libc it needs are fetched with `apt-get download`
# from this machine's own Debian archive (a private package list, nothing installed) and
# unpacked into a cache (OWS_APPARMOR4_CACHE, default build/apparmor4 of this checkout), with a
# wrapper that runs the parser under that libc's loader and with that package's
# /etc/apparmor.d (abi/4.0, tunables) as its base. The VM of scripts/kernel-vm.sh sees the
# cache too (it is under the checkout), so the same parser loads profiles in a guest kernel.
set -euo pipefail
PATH=$PATH:/usr/sbin:/sbin

major() { "$1" --version 2>/dev/null | sed -n '1s/.*version \([0-9][0-9]*\).*/\1/p'; }
sys=$(command -v apparmor_parser || true)
if [ -n "$sys" ] && [ "$(major "$sys")" -ge 4 ] 2>/dev/null; then
	echo "$sys"
	exit 0
fi

here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${OWS_APPARMOR4_CACHE:-$here/build/apparmor4}
wrapper=$cache/apparmor_parser
if [ -x "$wrapper" ] && [ "$(major "$wrapper")" -ge 4 ] 2>/dev/null; then
	echo "$wrapper"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "apparmor4: fetching needs root (apt-get)" >&2; exit 1; }

# The archive this machine's bookworm packages come from, asked for its next release.
# shellcheck disable=SC2016 # apt's own $(FIELD) syntax
uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk '$2 ~ /^[a-z]+$/ { print $1; exit }')
[ -n "$uri" ] || { echo "apparmor4: no Debian archive in apt's sources" >&2; exit 1; }
work=$cache.tmp
rm -rf "$work" "$cache"
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/root"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" >"$work/sources.list"
apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work" -o "Dir::Cache::archives=$work/archives"
	-o APT::Sandbox::User=root -q)
if ! apt-get "${apt[@]}" update >"$work/log" 2>&1; then
	echo "apparmor4: apt-get update of Debian 13's list failed: $(tail -1 "$work/log")" >&2
	exit 1
fi
(cd "$work" && apt-get "${apt[@]}" download apparmor libc6 >>"$work/log" 2>&1) || {
	echo "apparmor4: apt-get download failed: $(tail -1 "$work/log")" >&2
	exit 1
}
for deb in "$work"/*.deb; do
	dpkg-deb -x "$deb" "$work/root"
done
lib=$work/root/usr/lib/x86_64-linux-gnu
if [ ! -x "$work/root/usr/sbin/apparmor_parser" ] || [ ! -e "$lib/ld-linux-x86-64.so.2" ]; then
	echo "apparmor4: the packages hold no parser or loader" >&2
	exit 1
fi
rm -rf "$work/lists" "$work/archives" "$work"/*.deb
mv "$work" "$cache"
root=$cache/root
lib=$root/usr/lib/x86_64-linux-gnu
cat >"$wrapper" <<EOF
#!/bin/sh
# Debian 13's apparmor_parser under its own libc, with its own abi/ and tunables/.
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$root/usr/sbin/apparmor_parser" \\
	--base "$root/etc/apparmor.d" "\$@"
EOF
chmod 755 "$wrapper"
[ "$(major "$wrapper")" -ge 4 ] 2>/dev/null || { echo "apparmor4: the unpacked parser does not run" >&2; exit 1; }
echo "$wrapper"
