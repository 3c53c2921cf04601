#!/bin/sh
# scripts/apparmor.sh install|uninstall OWSBX PROGRAM FILE: the AppArmor half of make install.
#
# Ubuntu 24.04 (kernel.apparmor_restrict_unprivileged_userns = 1) gives a program that no
# profile names user namespaces without capabilities, and the sandbox needs them. Where this
# machine has AppArmor 4 (the first with the `userns,` rule, and with the restriction), install
# writes FILE (under $DESTDIR) with the profile `OWSBX apparmor-profile` renders for PROGRAM,
# the installed owsbx, checks that it parses, and loads it when AppArmor is on and nothing is
# staged ($DESTDIR empty). Older AppArmor cannot parse the rule and has no restriction to lift:
# nothing is installed there. uninstall unloads and removes FILE. $APPARMOR_PARSER names the
# parser (default apparmor_parser).
set -eu
PATH=$PATH:/usr/sbin:/sbin
[ $# -eq 4 ] || { echo "usage: $0 install|uninstall OWSBX PROGRAM FILE" >&2; exit 2; }
verb=$1 owsbx=$2 program=$3 file=$4
dest=${DESTDIR:-}$file
name=${file##*/}
parser=${APPARMOR_PARSER:-apparmor_parser}
say() { echo "apparmor: $*"; }

# AppArmor in the running kernel, switched on, with its file system mounted.
enabled() {
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] &&
		[ -e /sys/kernel/security/apparmor/profiles ]
}

# The major version of the parser, 0 when it has none.
parser_major() {
	"$parser" --version 2>/dev/null | sed -n '1s/.*version \([0-9][0-9]*\).*/\1/p' | grep . || echo 0
}

install_profile() {
	if ! command -v "$parser" >/dev/null 2>&1; then
		[ -e /sys/kernel/security/apparmor ] &&
			say "the kernel has AppArmor but $parser is missing: no profile installed"
		return 0
	fi
	if [ "$(parser_major)" -lt 4 ]; then
		say "$("$parser" --version | head -1) predates the userns rule (AppArmor 4)," \
			"and so Ubuntu's user-namespace restriction: no profile installed"
		return 0
	fi
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	"$owsbx" apparmor-profile --name "$name" "$program" >"$tmp"
	if [ -z "${DESTDIR:-}" ] && [ "$(id -u)" -ne 0 ]; then
		say "not root: no profile installed; to grant $program user namespaces:" \
			"$owsbx apparmor-profile $program | sudo tee $file && sudo apparmor_parser -r $file"
		return 0
	fi
	if ! out=$("$parser" -Q -K "$tmp" 2>&1); then
		say "the profile for $program does not parse:"
		printf '%s\n' "$out" >&2
		exit 1
	fi
	install -d "${dest%/*}"
	install -m 0644 "$tmp" "$dest"
	say "$dest: $program may create user namespaces"
	[ -z "${DESTDIR:-}" ] && enabled || return 0
	if out=$("$parser" -r "$dest" 2>&1); then
		say "loaded profile $name"
	else
		printf '%s\n' "$out" >&2
		say "not loaded; it loads at the next boot, or now: sudo apparmor_parser -r $dest"
	fi
}

uninstall_profile() {
	[ -e "$dest" ] || return 0
	if [ -z "${DESTDIR:-}" ] && enabled && command -v "$parser" >/dev/null 2>&1 &&
		grep -q "^$name " /sys/kernel/security/apparmor/profiles; then
		"$parser" -R "$dest" || say "could not unload profile $name"
	fi
	rm -f "$dest"
}

case $verb in
install) install_profile ;;
uninstall) uninstall_profile ;;
*) echo "$0: unknown verb $verb" >&2; exit 2 ;;
esac
