#!/bin/bash
# make runner RUNNER_ARCH=<the other arch>: OpenShell's tool runner cross-built for the arch
# this machine is not (aarch64 on x86_64, x86_64 on aarch64) with Debian's cross compiler and
# the libraries' multiarch packages: a static ELF executable of that arch, no interpreter.
# Under qemu-user (qemu-ARCH or qemu-ARCH-static) it runs: --version, the runner staying up
# until SIGTERM, and the proof from inside (`runner --probe`) as an ordinary user, with a
# control that fails.  Its seccomp filter, dumped by test/helpers/seccomp_dump.c built for
# that arch, is run by test/helpers/bpf.py: that arch's AUDIT_ARCH and call numbers.
#
# What this cannot prove: qemu-user translates the calls to this machine's kernel, so the
# probe's checks run on x86_64's kernel; QEMU refuses PR_SET_SECCOMP and has no Landlock of
# its own, so no filter is loaded and no wall is built here on the other arch (the filter is
# read, not enforced).  The runner in a real aarch64 container (OpenShell on an arm64 Mac or
# Linux machine) is for that machine's tests.
# Skipped, with the reason, without the cross compiler and the libraries
# (scripts/install-deps.sh --test installs them); the qemu checks without qemu-user.
. "$(dirname "$0")/../lib.sh"

cd "$OWSTEST_ROOT" || bail_out "no repository"
HOST=$(uname -m)
case $HOST in
x86_64) T=aarch64 ;;
aarch64) T=x86_64 ;;
*) skip_all "the runner is built for x86_64 and aarch64; this machine is $HOST" ;;
esac
CROSS=$T-linux-gnu-gcc
command -v "$CROSS" >/dev/null || skip_all "no $CROSS (scripts/install-deps.sh --test installs it)"
for l in jansson inih mbedtls mbedx509 mbedcrypto c; do
	[ -f "/usr/lib/$T-linux-gnu/lib$l.a" ] ||
		skip_all "no lib$l.a for $T (scripts/install-deps.sh --test installs the multiarch -dev packages)"
done
command -v file >/dev/null || skip_all "no file(1) to read the executable"
W=$(mktemp -d /tmp/owstest-runnerx.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"

if ! make -s runner RUNNER_ARCH="$T" >"$W/make.log" 2>&1; then
	fail "make runner RUNNER_ARCH=$T builds with warnings as errors" "$(tail -30 "$W/make.log")"
	done_testing
fi
pass "make runner RUNNER_ARCH=$T builds with warnings as errors"
unlike "$(grep -i 'warning' "$W/make.log")" . "and says no warning"
make -s runner >/dev/null 2>&1 || bail_out "make runner (this machine's arch) fails"

BIN=owsbx-linux-$T
case $T in
aarch64) ELF="ARM aarch64" OTHER_ELF="x86-64" ;;
x86_64) ELF="x86-64" OTHER_ELF="ARM aarch64" ;;
esac
desc=$(file -b "$BIN")
like "$desc" "^ELF 64-bit LSB executable, $ELF" "file(1): $BIN is a 64-bit $ELF executable"
like "$desc" "statically linked" "and statically linked"
unlike "$desc" "interpreter" "and names no interpreter"
unlike "$(file -b "owsbx-linux-$HOST")" "$ELF" "control: the $HOST runner is not read as $ELF"
like "$(file -b "owsbx-linux-$HOST")" "$OTHER_ELF" "control: the $HOST runner is read as $OTHER_ELF"

QEMU=$(command -v "qemu-$T" || command -v "qemu-$T-static")
if [ -z "$QEMU" ]; then
	skip "no qemu-$T (qemu-user) to run the $T runner" 1
	done_testing
fi
cp "$BIN" "$W/runner"
is "$("$QEMU" "$W/runner" --version 2>&1)" "$(./owsbx --version 2>&1)" \
	"under $(basename "$QEMU"): --version, as this machine's owsbx says"

# The runner stays up, and SIGTERM (the sandbox's stop) ends it with 0.
"$QEMU" "$W/runner" runner &
pid=$!
sleep 2
ok "runner stays up (not a usage error that ends the sandbox)" kill -0 "$pid"
kill -TERM "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
not_ok "and SIGTERM ends it" kill -0 "$pid"
kill -KILL "$pid" 2>/dev/null
wait "$pid"
is "$?" 0 "with exit code 0"

# The proof from inside, as an ordinary user (root writes anywhere).
mkdir "$W/rw" "$W/ro"
chown nobody "$W/rw"
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
port=$(rand_port)
out=$(as_nobody "$QEMU" "$W/runner" runner --probe --rw "$W/rw" --ro "$W/ro" \
	--absent "$W/none" --reach "127.0.0.1:$port" 2>&1)
like "$out" $'(^|\n)ok\tread-write '"$W/rw"$'\t' "probe: the read-write folder is written"
like "$out" $'(^|\n)ok\tread-only '"$W/ro"$'\t' "probe: the read-only folder is listed, not written"
like "$out" $'(^|\n)ok\tnot readable '"$W/none"$'\t' "probe: the absent path is absent"
like "$out" $'(^|\n)ok\tnetwork direct 127.0.0.1:'"$port"$'\t' "probe: nothing listens, nothing is reached"
is "$(tail -1 <<<"$out")" end "probe: ends with end"
ctl=$(as_nobody "$QEMU" "$W/runner" runner --probe --rw "$W/ro" 2>&1)
like "$ctl" $'^fail\tread-write '"$W/ro"$'\t' "control: a folder it cannot write fails as read-write"

# The seccomp filter of the other arch: its AUDIT_ARCH and its call numbers.
LIBS="-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto"
# shellcheck disable=SC2086 # the libraries, split on purpose
"$CROSS" -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Ilib -static -o "$W/dump" test/helpers/seccomp_dump.c \
	"build/linux-$T/libowsandbox.a" $LIBS >"$W/cc.log" 2>&1 || bail_out "seccomp_dump: $(tail -5 "$W/cc.log")"
# shellcheck disable=SC2086
cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Ilib -o "$W/dump-host" test/helpers/seccomp_dump.c \
	libowsandbox.a $LIBS >"$W/cc.log" 2>&1 || bail_out "seccomp_dump (host): $(tail -5 "$W/cc.log")"
{ "$QEMU" "$W/dump" none >"$W/f.none" && "$QEMU" "$W/dump" open >"$W/f.open"; } ||
	bail_out "seccomp_dump under qemu fails"
"$W/dump-host" none >"$W/h.none" || bail_out "seccomp_dump fails"
# name: AUDIT_ARCH getpid mount socket, per arch; each's mount number is the other's harmless call
declare -A AUDIT=([aarch64]=0xC00000B7 [x86_64]=0xC000003E)
declare -A GETPID=([aarch64]=172 [x86_64]=39)
declare -A MOUNT=([aarch64]=40 [x86_64]=165)
declare -A SOCKET=([aarch64]=198 [x86_64]=41)
bpf() { "$PY" test/helpers/bpf.py "$@"; }
is "$(bpf "$W/f.none" "${GETPID[$T]}" "${AUDIT[$T]}")" allow "$T filter: getpid (${GETPID[$T]}) allowed"
is "$(bpf "$W/f.none" "${MOUNT[$T]}" "${AUDIT[$T]}")" "errno 1" "$T filter: mount (${MOUNT[$T]}) refused, EPERM"
is "$(bpf "$W/f.none" "${MOUNT[$HOST]}" "${AUDIT[$T]}")" allow \
	"$T filter: ${MOUNT[$HOST]}, $HOST's mount, is $T's harmless call there, allowed"
is "$(bpf "$W/f.none" "${GETPID[$T]}" "${AUDIT[$HOST]}")" kill "$T filter: a call of $HOST's ABI kills"
is "$(bpf "$W/f.none" 425 "${AUDIT[$T]}")" "errno 1" "$T filter: io_uring_setup refused, EPERM"
is "$(bpf "$W/f.none" "${SOCKET[$T]}" "${AUDIT[$T]}" 2 1)" user_notif \
	"$T filter, network none: an AF_INET socket goes to the reaper (which refuses and counts it)"
is "$(bpf "$W/f.open" "${SOCKET[$T]}" "${AUDIT[$T]}" 2 1)" allow "$T filter, network open: an AF_INET socket allowed"
is "$(bpf "$W/h.none" "${MOUNT[$HOST]}" "${AUDIT[$HOST]}")" "errno 1" \
	"control: $HOST's own filter refuses its mount (${MOUNT[$HOST]}), read the same way"
is "$(bpf "$W/h.none" "${MOUNT[$T]}" "${AUDIT[$T]}")" kill "control: $HOST's filter kills $T's ABI"

# The whole program of the other arch against its table (test/unit/seccomp_compile.c: every
# call number, every checked argument's edges, the command's own filter), run under qemu:
# nothing is loaded, so qemu-user's refusal of seccomp does not matter here.
# shellcheck disable=SC2086
"$CROSS" -std=c11 -O2 -D_GNU_SOURCE -Iinclude -Ilib -Itest/unit -static -o "$W/compile" \
	test/unit/seccomp_compile.c "build/linux-$T/libowsandbox.a" $LIBS >"$W/cc.log" 2>&1 ||
	bail_out "seccomp_compile: $(tail -5 "$W/cc.log")"
out=$("$QEMU" "$W/compile" 2>&1)
rc=$?
is "$rc" 0 "$T: the seccomp program answers as its table on every input ($(grep -c '^ok' <<<"$out") checks)"
[ "$rc" = 0 ] || grep -v '^ok' <<<"$out" | head -10 | diag
done_testing
