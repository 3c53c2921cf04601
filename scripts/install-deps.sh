#!/bin/sh
# Installs the Debian packages owsandbox needs, by what they are for:
#
#   scripts/install-deps.sh          building and running: a compiler, the three libraries,
#                                    libacl, nftables (the account provider's setup), curl and
#                                    the CA store (the README's first command fetches a page)
#   scripts/install-deps.sh --test   and what the tests need (make check)
#   scripts/install-deps.sh --bench  and what the benchmarks run beside ours (make bench)
#
# For the tests: acl, iproute2, openssh and git drive the wall as a person would; python3
# with pytest, venv, setuptools, wheel and wheel-whl runs test/python and pip-installs the
# package offline; python3-yaml reads the OpenShell policies (test/openshell/
# validate_policy.py); clang and libclang-rt-14-dev fuzz the proxy; qemu, busybox-static,
# kmod, cpio, e2fsprogs, xz-utils and zstd boot the other kernels of the matrix
# (scripts/kernel-vm.sh); mingw-w64 and wine cross-build and run the Windows back end;
# cmake, dpkg-dev and file build and read the cross builds' libraries; man-db and
# groff-base render owsbx.1 (test/sh/help.sh); tmux is the person's server that
# test/attack/sockets.sh attacks; mercurial and direnv are the person's tools that the
# guard's attacks run outside after a session (test/attack/tools.sh); npm fetches Zig, the macOS cross compiler
# (scripts/macos-deps.sh): Debian's npm only where none is installed (a Node.js from
# NodeSource brings its own, and Debian's npm would conflict with it);
# gcc-aarch64-linux-gnu with libc6-dev, libjansson-dev, libinih-dev and libmbedtls-dev for
# arm64 (multiarch: the arm64 architecture is added to dpkg) cross-build OpenShell's aarch64
# runner, and qemu-user runs it (test/sh/runner_cross.sh): about 75 MB to fetch, 320 MB
# installed, against wine's and mingw-w64's far more; podman and runc run owsbx in a
# container as a CI job would (test/sh/container.sh); debhelper, lintian and debootstrap
# build the Debian package, check it and install it on a clean root (test/sh/deb.sh).
# Run as root on Debian 12 or later.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root: sudo $0 $*" >&2
	exit 1
fi
BUILD="gcc make libc6-dev pkg-config libmbedtls-dev libjansson-dev libinih-dev libacl1-dev
	nftables curl ca-certificates"
TEST="acl iproute2 passwd util-linux procps apparmor openssh-client openssh-server git openssl
	zsh python3 python3-pip python3-pytest python3-venv python3-setuptools python3-wheel
	python3-wheel-whl python3-yaml tmux netcat-openbsd clang libclang-rt-14-dev jq
	gcc-mingw-w64-x86-64 wine wine64 cmake dpkg-dev
	qemu-system-x86 busybox-static kmod cpio e2fsprogs xz-utils zstd file man-db groff-base mercurial direnv
	podman runc debhelper lintian debootstrap strace"
BENCH="bubblewrap firejail hyperfine tinyproxy haproxy"
WANT=$BUILD
for arg in "$@"; do
	case $arg in
	--test) WANT="$WANT $TEST" ;;
	--bench) WANT="$WANT $TEST $BENCH" ;;
	*) echo "install-deps: unknown option $arg (--test, --bench)" >&2; exit 2 ;;
	esac
done
export DEBIAN_FRONTEND=noninteractive
case " $* " in
*" --test "* | *" --bench "*)
	# the other arch's libraries for the cross-built runner (x86_64's on an arm64 machine)
	case $(dpkg --print-architecture) in
	amd64) CROSS=arm64 CROSS_GNU=aarch64 ;;
	arm64) CROSS=amd64 CROSS_GNU=x86-64 ;;
	*) CROSS= ;;
	esac
	if [ -n "$CROSS" ]; then
		dpkg --print-foreign-architectures | grep -qx "$CROSS" || dpkg --add-architecture "$CROSS"
		WANT="$WANT gcc-$CROSS_GNU-linux-gnu qemu-user libc6-dev:$CROSS libjansson-dev:$CROSS
			libinih-dev:$CROSS libmbedtls-dev:$CROSS"
	fi ;;
esac
apt-get update -q
# shellcheck disable=SC2086 # the lists, split on purpose
apt-get install -y -q --no-install-recommends $WANT
case " $* " in
*" --test "* | *" --bench "*)
	command -v npm >/dev/null 2>&1 || apt-get install -y -q --no-install-recommends npm ;;
esac
