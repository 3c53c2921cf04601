#!/bin/bash
# shellcheck disable=SC2016,SC2054 # the second stage is written in single quotes; qemu's options hold commas
# Run a command as root on another Debian kernel, in a throwaway VM with no network.
#
#   scripts/kernel-vm.sh [--kernel 6.1|6.12|PACKAGE] [--sysctl KEY=VALUE]... [--append ARGS]
#                        [--cpus N] [--mem MIB] [--accel auto|kvm|tcg] [--timeout SECONDS]
#                        [--nosuid-tmp] [--quiet] -- COMMAND [ARG...]
#
# The kernel is fetched with `apt-get download` and unpacked into a cache (never installed:
# OWS_KERNEL_CACHE, default build/kernels of this checkout). The guest sees this machine's `/`
# read-only over virtio-9p, with a tmpfs overlay so it can write; /home, /root's state folder
# and /var/lib/owsandbox are on a fresh ext4 disk (overlayfs before 6.6 lacks O_TMPFILE and
# treats ACLs its own way), and so is a copy of /etc taken at boot; /tmp is a tmpfs (nosuid
# with --nosuid-tmp, as Debian 13 mounts it); cgroup2 is mounted unified at /sys/fs/cgroup
# with cpu, io, memory and pids enabled for children, as systemd does. Sysctls go on the
# kernel command line and are applied again by the guest. The command runs in the current
# folder (which must be visible under `/`), with its output on this terminal; the script
# exits with the command's status, 124 when the time ran out, 125 when the VM did not come
# up. Nothing of the guest survives it.
#
# KVM here is a nested paravirtual device that a stock kernel may not boot under: `auto`
# uses KVM only when /dev/kvm opens, and falls back to TCG (5-10x slower) when the guest did
# not reach its command under KVM within a short time.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
kernel=6.1
sysctls=()
append=""
cpus=2
mem=4096
accel=auto
timeout=1800
nosuid_tmp=0
quiet=0

die() { echo "kernel-vm: $*" >&2; exit 125; }
usage() { sed -n '4,6p' "$0" | sed 's/^# //' >&2; exit 125; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--sysctl) sysctls+=("$2"); shift 2 ;;
	--append) append="$append $2"; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--nosuid-tmp) nosuid_tmp=1; shift ;;
	--quiet) quiet=1; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -gt 0 ] || usage
[ "$(id -u)" -eq 0 ] || die "run as root: the guest shares this machine's / as its owner sees it"
for tool in qemu-system-x86_64 busybox mkfs.ext4 depmod cpio; do
	command -v "$tool" >/dev/null || die "$tool is missing: apt-get install qemu-system-x86 busybox-static e2fsprogs kmod cpio"
done
busybox --list | grep -qx switch_root || die "busybox has no switch_root: apt-get install busybox-static"
file -L "$(command -v busybox)" 2>/dev/null | grep -q 'statically linked' ||
	die "busybox is not static: apt-get install busybox-static"

cache=${OWS_KERNEL_CACHE:-$here/build/kernels}
mkdir -p "$cache"

# The package: a short name picks the newest of that series in Debian 12's archive.
case $kernel in
6.1) pattern='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
6.12) pattern='^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
linux-image-*) pattern="^${kernel//./\\.}\$" ;;
*) die "unknown kernel '$kernel': give 6.1, 6.12 or a linux-image package name" ;;
esac

# kernel_fetch: the package's vmlinuz and modules, unpacked once into the cache.
kernel_fetch() {
	local pkg
	pkg=$(apt-cache search --names-only "$pattern" | awk '{print $1}' | sort -V | tail -1)
	[ -n "$pkg" ] || die "no package matches $pattern: run apt-get update"
	kdir=$cache/$pkg
	if [ ! -e "$kdir/.done" ]; then
		rm -rf "$kdir" "$kdir.tmp"  # one download at a time: the matrix runs kernels in turn
		mkdir -p "$kdir.tmp"
		# A mirror that drops a connection once must not cost the whole configuration.
		local try
		for try in 1 2 3; do
			(cd "$kdir.tmp" && apt-get download "$pkg" >/dev/null 2>&1) && break
			[ $try = 3 ] && { (cd "$kdir.tmp" && apt-get download "$pkg") || die "cannot download $pkg"; }
			echo "kernel-vm: downloading $pkg failed (try $try of 3); again in $((try * 10)) s" >&2
			sleep $((try * 10))
		done
		dpkg-deb -x "$kdir.tmp"/*.deb "$kdir.tmp/root"
		rm -f "$kdir.tmp"/*.deb
		mv "$kdir.tmp" "$kdir"
		kver=$(ls "$kdir/root/lib/modules")
		depmod -b "$kdir/root" "$kver"
		touch "$kdir/.done"
	fi
	kver=$(ls "$kdir/root/lib/modules")
	vmlinuz=$kdir/root/boot/vmlinuz-$kver
	moddir=$kdir/root/lib/modules/$kver
}

# initramfs_build: static busybox, the drivers for the root and disk (decompressed, in
# dependency order) and a first-stage init that mounts the guest's root and switches to it.
initramfs_build() {
	initrd=$kdir/initrd.cpio.gz
	[ -e "$initrd" ] && [ "$initrd" -nt "$0" ] && return
	local tmp order=() m f
	tmp=$(mktemp -d)
	mkdir -p "$tmp"/{bin,dev,proc,sys,lower,disk,upper,newroot,results,mod}
	cp "$(command -v busybox)" "$tmp/bin/busybox"
	ln -s busybox "$tmp/bin/sh"
	# modules.dep lists each module's dependencies, deepest last: load those first.
	for m in virtio_pci virtio_blk 9pnet_virtio 9p overlay crc32c_generic ext4; do
		f=$(awk -F: -v m="$m" '{n=$1; sub(/.*\//, "", n); sub(/\.ko(\.[a-z]+)?$/, "", n);
			gsub(/-/, "_", n); if (n == m) { print; exit }}' "$moddir/modules.dep")
		[ -n "$f" ] || continue # built in
		local deps i
		read -ra deps <<<"${f#*:}"
		for ((i = ${#deps[@]} - 1; i >= 0; i--)); do order+=("${deps[i]}"); done
		order+=("${f%%:*}")
	done
	local n=0 seen=" "
	for f in "${order[@]}"; do
		case $seen in *" $f "*) continue ;; esac
		seen="$seen$f "
		n=$((n + 1))
		case $f in
		*.xz) xz -dc "$moddir/$f" >"$tmp/mod/$(printf %02d $n).ko" ;;
		*.zst) zstd -qdc "$moddir/$f" >"$tmp/mod/$(printf %02d $n).ko" ;;
		*) cp "$moddir/$f" "$tmp/mod/$(printf %02d $n).ko" ;;
		esac
	done
	cat >"$tmp/init" <<'EOF'
#!/bin/sh
# First stage: the drivers, then / of the host read-only under a tmpfs overlay.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in /mod/*.ko; do insmod "$m" 2>/dev/null; done
fail() { echo "kernel-vm guest: $*"; dmesg | tail -20; echo b >/proc/sysrq-trigger; sleep 5; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose root /lower || fail "cannot mount the host's /"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /results || fail "cannot mount the results"
mount -t tmpfs -o mode=0755 upper /upper
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot || fail "cannot mount the overlay"
i=0; while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
mount -t ext4 /dev/vda /disk || fail "cannot mount the disk"
for d in home var/lib/owsandbox; do
	mkdir -p "/disk/$d" "/newroot/$d"
	mount --bind "/disk/$d" "/newroot/$d"
done
# /etc is a copy taken now, not an overlay on the host's live one: users and groups the
# host's own tests add and remove meanwhile must not appear in the guest.
cp -a /lower/etc /disk/etc || fail "cannot copy /etc"
mount --bind /disk/etc /newroot/etc
mkdir -p /newroot/run/owsvm
mount --move /results /newroot/run/owsvm
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash /run/owsvm/stage2
EOF
	chmod 755 "$tmp/init"
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.$$"
	mv "$initrd.$$" "$initrd"
	rm -rf "$tmp"
}

kernel_fetch
initramfs_build

run=$(mktemp -d /tmp/owsvm-XXXXXX)
qpid=""
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if [ -n "$qpid" ]; then kill -9 "$qpid" 2>/dev/null || true; fi
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The second stage runs in the guest's real root (bash, the host's tools): the rest of the
# system a systemd machine has, then the command.
{
	echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb'
	echo 'mkdir -p /dev/pts; mount -t devpts -o newinstance,ptmxmode=0666,gid=5,mode=620 devpts /dev/pts 2>/dev/null; ln -sf pts/ptmx /dev/ptmx 2>/dev/null'
	echo 'ln -sf /proc/self/fd /dev/fd; ln -sf /proc/self/fd/0 /dev/stdin; ln -sf /proc/self/fd/1 /dev/stdout; ln -sf /proc/self/fd/2 /dev/stderr'
	echo 'mkdir -p /dev/shm && mount -t tmpfs -o mode=1777,nosuid,nodev shm /dev/shm'
	echo 'mount -t tmpfs -o mode=0755,nosuid,nodev run /run/lock 2>/dev/null; mkdir -p /run/user'
	# A command in a folder under /tmp or /var/tmp (a checkout there) keeps it: it is bound
	# aside before the guest's own tmpfs covers those, and back at its path after.
	printf 'here=%q\n' "$PWD"
	echo 'case $here/ in /tmp/*|/var/tmp/*) mkdir -p /mnt/owsvm-cwd && mount --bind "$here" /mnt/owsvm-cwd ;; esac'
	echo "mount -t tmpfs -o mode=1777$([ $nosuid_tmp = 1 ] && echo ,nosuid,nodev) tmp /tmp"
	echo 'mount -t tmpfs -o mode=1777 vartmp /var/tmp'
	echo 'if mountpoint -q /mnt/owsvm-cwd; then mkdir -p "$here" && mount --bind /mnt/owsvm-cwd "$here"; fi'
	echo 'mount -t cgroup2 cgroup2 /sys/fs/cgroup'
	echo 'for c in cpu io memory pids; do echo +$c >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; done'
	echo 'mount -t securityfs securityfs /sys/kernel/security 2>/dev/null'
	# The kernel's own modules, for what it loads on demand (nf_tables, veth...).
	printf 'mkdir -p /lib/modules/%q && mount --bind %q /lib/modules/%q\n' "$kver" "$moddir" "$kver"
	echo 'ip link set lo up 2>/dev/null'
	echo 'hostname owsvm'
	for s in ${sysctls[@]+"${sysctls[@]}"}; do
		printf 'sysctl -q -w %q\n' "$s"
	done
	echo 'touch /run/owsvm/started'
	printf 'cd %q || exit 125\n' "$PWD"
	printf '('
	printf '%q ' "$@"
	printf ') </dev/null >/dev/ttyS0 2>&1\n'
	echo 'echo $? >/run/owsvm/rc'
	echo 'sync'
	echo 'echo b >/proc/sysrq-trigger'
	echo 'sleep 10'
} >"$run/stage2"

truncate -s 8G "$run/disk.img"
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$run/disk.img"

cmdline="console=ttyS0 panic=-1 rdinit=/init loglevel=1 $append"
for s in ${sysctls[@]+"${sysctls[@]}"}; do cmdline="$cmdline sysctl.$s"; done

# What qemu said, if anything: an empty qemu.err (a guest that panicked says it on its
# console) must not end the script under set -e and pipefail with grep's status 1.
qemu_said() { grep -v '^$' "$run/qemu.err" | head -5 >&2 || true; }

# boot ACCEL SECONDS_TO_START: runs the guest; status 3 when the command did not start in time.
boot() {
	local accel_args
	case $1 in
	kvm) accel_args=(-accel kvm -cpu host) ;;
	tcg) accel_args=(-accel tcg,thread=multi -cpu max) ;;
	esac
	rm -f "$run/started" "$run/rc"
	qemu-system-x86_64 "${accel_args[@]}" -m "$mem" -smp "$cpus" -nodefaults -no-reboot \
		-display none -serial stdio -nic none \
		-kernel "$vmlinuz" -initrd "$initrd" -append "$cmdline" \
		-virtfs local,path=/,mount_tag=root,security_model=passthrough,readonly=on,multidevs=remap \
		-virtfs local,path="$run",mount_tag=results,security_model=passthrough \
		-drive file="$run/disk.img",if=virtio,format=raw,cache=unsafe \
		</dev/null 2>"$run/qemu.err" > >(if [ $quiet = 1 ]; then cat >/dev/null; else tr -d '\r'; fi) &
	qpid=$!
	local waited=0
	while kill -0 "$qpid" 2>/dev/null; do
		if [ ! -e "$run/started" ] && [ "$waited" -ge "$2" ]; then
			kill -9 "$qpid" 2>/dev/null || true
			wait "$qpid" 2>/dev/null || true
			qpid=""
			return 3
		fi
		if [ "$waited" -ge "$timeout" ]; then
			echo "kernel-vm: the command ran out of its $timeout s" >&2
			kill -9 "$qpid" 2>/dev/null || true
			wait "$qpid" 2>/dev/null || true
			qpid=""
			return 124
		fi
		sleep 1
		waited=$((waited + 1))
	done
	wait "$qpid" 2>/dev/null || true
	qpid=""
	[ -e "$run/started" ] || { qemu_said; return 3; }
	return 0
}

# A kernel that once failed to come up under KVM here is not tried there again.
status=0
if [ "$accel" = auto ] && [ -e "$kdir/kvm-does-not-boot" ]; then
	accel=tcg
fi
if [ "$accel" != tcg ] && { exec 3<>/dev/kvm; } 2>/dev/null; then
	exec 3>&-
	boot kvm 30 || status=$?
	if [ "$status" = 3 ]; then
		[ "$accel" = kvm ] && die "the guest did not come up under KVM"
		echo "kernel-vm: the guest did not come up under KVM; falling back to TCG" >&2
		touch "$kdir/kvm-does-not-boot"
		status=0
		boot tcg 300 || status=$?
	elif [ "$status" = 0 ] && [ ! -e "$run/rc" ] && [ "$accel" = auto ]; then
		# Nested KVM here has been seen to stop a guest mid-run (an emulation failure): the
		# command runs once more, from the start, under TCG.
		qemu_said
		echo "kernel-vm: the guest under KVM ended without the command's status; again under TCG" >&2
		boot tcg 300 || status=$?
	fi
else
	[ "$accel" = kvm ] && die "/dev/kvm cannot be opened"
	boot tcg 300 || status=$?
fi
[ "$status" = 3 ] && die "the guest did not start the command"
[ "$status" = 124 ] && exit 124
if [ ! -e "$run/rc" ]; then
	qemu_said
	die "the guest ended without the command's status (its console, above, tells why)"
fi
exit "$(cat "$run/rc")"
