#!/bin/sh
# Installs the Debian packages owsandbox needs to build, test and benchmark.
# Run as root on Debian 12 or later.  qemu, busybox-static, kmod and cpio boot the other
# kernels of the matrix (scripts/kernel-vm.sh); man-db and groff-base render owsbx.1
# (test/sh/help.sh).  mercurial and direnv are the person's tools the guard's attacks run
# outside after a session (test/attack/tools.sh).  python3-pytest runs test/python; venv, setuptools, wheel and
# wheel-whl let its install test pip-install the package offline; python3-yaml reads the
# OpenShell policies (test/openshell/validate_policy.py).  cmake and dpkg-dev build the
# cross builds' libraries from Debian's sources; file reads their outputs.  npm fetches Zig, the
# macOS cross compiler (scripts/macos-deps.sh): Debian's npm only where none is installed (a
# Node.js from NodeSource brings its own, and Debian's npm would conflict with it).
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root: sudo $0" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
	build-essential pkg-config \
	libmbedtls-dev libjansson-dev libinih-dev \
	acl libacl1-dev nftables iproute2 passwd util-linux procps apparmor \
	openssh-client openssh-server git curl openssl python3 python3-pip ca-certificates \
	python3-pytest python3-venv python3-setuptools python3-wheel python3-wheel-whl python3-yaml \
	netcat-openbsd clang libclang-rt-14-dev jq \
	bubblewrap firejail hyperfine tinyproxy haproxy \
	gcc-mingw-w64-x86-64 wine wine64 cmake dpkg-dev \
	qemu-system-x86 busybox-static kmod cpio e2fsprogs xz-utils zstd file \
	man-db groff-base mercurial direnv
command -v npm >/dev/null 2>&1 || apt-get install -y -q --no-install-recommends npm
