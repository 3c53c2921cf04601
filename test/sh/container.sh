#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run in the container
# owsbx inside a container, as a CI job runs it: podman (runc) with its default seccomp
# profile and masked /proc, as an ordinary user and as root. The root is built from this
# machine's own files (the static owsbx and busybox), nothing is downloaded, and podman keeps
# everything under a private --root/--runroot in a temporary folder, removed at the end.
#   - default: the README's first command is refused with the container option that allows
#     it (unmask=ALL / systempaths=unconfined), and `report` says the same;
#   - --security-opt unmask=ALL: the same command runs, and `report` says enforced;
#   - root: without CAP_SYS_ADMIN the refusal says so (not "an unprivileged process"); with it
#     but without CAP_NET_ADMIN `none` runs and `allowlist` is refused naming NET_ADMIN, and
#     `report` separates the two;
#   - the account provider's setup: without CAP_NET_ADMIN, under no-new-privileges, or with
#     the launcher's place on a nosuid mount, refused before it changes anything.
# OWSBX_STATIC=/path/owsbx-static: the binary under test (default: the build's static one).
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (podman's rootful containers)"
command -v podman >/dev/null || skip_all "podman is not installed (scripts/install-deps.sh --test)"
# crun refuses a cgroup v2 hierarchy with controllers beside v1 ones (hybrid mode): runc first.
RUNTIME=$(command -v runc || command -v crun) || skip_all "neither runc nor crun is installed"
STATIC=${OWSBX_STATIC:-$OWSTEST_ROOT/owsbx-linux-$(uname -m)}
[ -x "$STATIC" ] || skip_all "no static owsbx at $STATIC (make all builds it)"
BUSYBOX=$(command -v busybox) || skip_all "busybox-static is not installed"
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	skip_all "$BUSYBOX is not the static busybox (busybox-static)"

T=$(mktemp -d /tmp/owstest-container.XXXXXX)
# podman makes /run/containers/networks (its network back end's run folder) whatever
# --root says: removed again, if empty, when it was not there before.
RUN_CONTAINERS_WAS=$([ -e /run/containers ] && echo yes)
cleanup() {
	# --rm removed each container; a run cut short may leave one: remove it, then all of it.
	podman "${GLOBAL[@]}" rm -a -f >/dev/null 2>&1
	podman "${GLOBAL[@]}" system reset -f >/dev/null 2>&1
	rm -rf "$T"
	[ -n "$RUN_CONTAINERS_WAS" ] || rmdir /run/containers/networks /run/containers 2>/dev/null
}
# Everything of podman's under $T: storage, run state, network definitions (system reset
# removes the networks it finds: only ours).
GLOBAL=(--root "$T/storage" --runroot "$T/run" --tmpdir "$T/tmp" --network-config-dir "$T/net"
	--runtime "$RUNTIME" --cgroup-manager cgroupfs --events-backend none)
trap cleanup EXIT

# The root: busybox's tools, owsbx, a person (ci, 1000) and nobody for root's sessions.
R=$T/root
mkdir -p "$R/bin" "$R/etc" "$R/tmp" "$R/proc" "$R/dev" "$R/sys" "$R/root" "$R/home/ci" "$R/work" \
	"$R/usr/local/libexec"
chmod 1777 "$R/tmp"
cp "$BUSYBOX" "$R/bin/busybox"
for c in sh ls cat echo id head true; do ln -s busybox "$R/bin/$c"; done
cp "$STATIC" "$R/bin/owsbx"
printf 'root:x:0:0::/root:/bin/sh\nci:x:1000:1000::/home/ci:/bin/sh\nnobody:x:65534:65534::/nonexistent:/bin/sh\n' >"$R/etc/passwd"
printf 'root:x:0:\nci:x:1000:\nnogroup:x:65534:\n' >"$R/etc/group"
printf 'root:*:1::::::\n' >"$R/etc/shadow"
chmod 600 "$R/etc/shadow"
echo "a file of the job's" >"$R/work/README"
chown 1000:1000 "$R/home/ci"

# ctr [OPTION...] -- CMD...: CMD in a container of the root R, its output in SBX_OUT/SBX_ERR.
# Limits at or below the host's: raising them needs CAP_SYS_RESOURCE, which a CI's root may
# lack; 8192 processes leave room for the sandbox's own RLIMIT_NPROC (4096).
ctr() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	local out err
	out=$(mktemp "$T/out.XXXXXX") err=$(mktemp "$T/err.XXXXXX")
	timeout 60 podman "${GLOBAL[@]}" run --rm --network none --ulimit nofile=1024:1024 \
		--ulimit nproc=8192:8192 "${opts[@]}" --rootfs "$R" "$@" >"$out" 2>"$err"
	SBX_RC=$?
	SBX_OUT=$(cat "$out") SBX_ERR=$(cat "$err")
	rm -f "$out" "$err"
}
CI=(--user 1000:1000 -e HOME=/home/ci -w /work)
ROOT=(-e HOME=/root -w /work)
UNMASK=(--security-opt unmask=ALL)
# The README's first command, with what this root has (no curl).
FIRST=(owsbx run --ro /work -- sh -c 'ls /work | head -3; ls $HOME; cat /etc/shadow; echo ran')

ctr "${CI[@]}" -- true
[ "$SBX_RC" = 0 ] || skip_all "podman cannot run a container here: ${SBX_ERR//$'\n'/ }"
# row NAME: the report's row (SBX_OUT)
row() { grep "^$1 " <<<"$SBX_OUT"; }

# --- an ordinary user, podman's defaults: masked /proc ---
ctr "${CI[@]}" -- "${FIRST[@]}"
is "$SBX_RC" 70 "default: the README's first command is refused (70), not run half-walled"
like "$SBX_ERR" 'masks [0-9]+ paths under /proc' "default: the refusal says /proc is masked"
like "$SBX_ERR" 'podman run --security-opt unmask=ALL' "default: it names podman's option"
like "$SBX_ERR" 'systempaths=unconfined' "default: and Docker's"
unlike "$SBX_ERR" 'mount proc /proc failed' "default: not the bare mount failure"
unlike "$SBX_OUT" 'ran' "default: nothing ran"
ctr "${CI[@]}" -- owsbx report
like "$(row namespaces)" 'unavailable +.*masks [0-9]+ paths under /proc.*unmask=ALL' \
	"default: report's namespaces row says the same, with the option"
like "$(row provider.landlock)" 'unavailable' "default: report agrees with run: landlock cannot run"
like "$(row network.none)" 'unavailable' "default: and so no promise is enforced"

# --- an ordinary user, unmask=ALL ---
ctr "${CI[@]}" "${UNMASK[@]}" -- "${FIRST[@]}"
is "$SBX_RC" 0 "unmask=ALL: the README's first command runs"
like "$SBX_OUT" 'README' "unmask=ALL: the session folder is read"
like "$SBX_OUT" 'ran' "unmask=ALL: the command ran to its end"
like "$SBX_ERR" 'shadow' "unmask=ALL: /etc/shadow is refused"
ctr "${CI[@]}" "${UNMASK[@]}" -- owsbx report
like "$(row namespaces)" 'enforced' "unmask=ALL: report's namespaces row is enforced"
like "$(row provider.landlock)" 'enforced' "unmask=ALL: report agrees with run"

# --- root without CAP_SYS_ADMIN (a container's default) ---
ctr "${ROOT[@]}" -- "${FIRST[@]}"
is "$SBX_RC" 70 "root: refused without CAP_SYS_ADMIN"
like "$SBX_ERR" 'root without CAP_SYS_ADMIN' "root: the refusal names the missing capability"
unlike "$SBX_ERR" 'unprivileged process' "root: not blamed on an unprivileged process"
like "$SBX_ERR" '--cap-add SYS_ADMIN' "root: it names the container option"
ctr "${ROOT[@]}" -- owsbx report
like "$(row namespaces)" 'unavailable +.*root without CAP_SYS_ADMIN' "root: report says the same"

# --- root with CAP_SYS_ADMIN and /proc unmasked, without CAP_NET_ADMIN ---
ctr "${ROOT[@]}" --cap-add SYS_ADMIN "${UNMASK[@]}" -- "${FIRST[@]}"
is "$SBX_RC" 0 "root+SYS_ADMIN: network none runs"
like "$SBX_OUT" 'ran' "root+SYS_ADMIN: the command ran"
ctr "${ROOT[@]}" --cap-add SYS_ADMIN "${UNMASK[@]}" -- owsbx run --net allowlist \
	--allow-site example.com -- echo ran
is "$SBX_RC" 70 "root+SYS_ADMIN: allowlist is refused without CAP_NET_ADMIN"
like "$SBX_ERR" 'root without CAP_NET_ADMIN.*allowlist' "root+SYS_ADMIN: the refusal says why"
like "$SBX_ERR" '--cap-add NET_ADMIN' "root+SYS_ADMIN: and names the container option"
ctr "${ROOT[@]}" --cap-add SYS_ADMIN "${UNMASK[@]}" -- owsbx report
like "$(row network.none)" 'enforced' "root+SYS_ADMIN: report: none enforced"
like "$(row network.allowlist)" 'unavailable +.*NET_ADMIN' "root+SYS_ADMIN: report: allowlist unavailable, why"
like "$(row provider.landlock)" 'enforced' "root+SYS_ADMIN: report: the provider runs"

ctr "${ROOT[@]}" --cap-add SYS_ADMIN --cap-add NET_ADMIN "${UNMASK[@]}" -- owsbx report
like "$(row network.allowlist)" 'enforced' "root+SYS_ADMIN+NET_ADMIN: report: allowlist enforced"

# --- the account provider's setup: refused before it changes anything ---
# state: what setup would change in the root (its accounts, state folder, launcher)
state() { cat "$R/etc/passwd" "$R/etc/group"; ls -R "$R/var" "$R/usr" 2>/dev/null; }
BEFORE=$(state)
SETUP=(owsbx machine sandbox setup --yes --for-user ci)
ctr "${ROOT[@]}" -- "${SETUP[@]}"
isnt "$SBX_RC" 0 "setup without CAP_NET_ADMIN: refused"
like "$SBX_OUT$SBX_ERR" 'lacks CAP_NET_ADMIN.*nothing was changed' "setup: says why, before any change"
like "$SBX_OUT$SBX_ERR" '--cap-add NET_ADMIN' "setup: names the container option"
unlike "$SBX_OUT" 'Nothing to change' "setup: a blocked plan does not say it is all set up"
ctr "${ROOT[@]}" --cap-add NET_ADMIN --security-opt no-new-privileges -- "${SETUP[@]}"
like "$SBX_OUT$SBX_ERR" 'no_new_privs.*nothing was changed' "setup under no-new-privileges: refused"
like "$SBX_OUT$SBX_ERR" 'without --security-opt no-new-privileges' "setup: names the option"
ctr "${ROOT[@]}" --cap-add NET_ADMIN --tmpfs /usr/local/libexec:rw,nosuid -- "${SETUP[@]}"
like "$SBX_OUT$SBX_ERR" 'nosuid mount.*nothing was changed' "setup with a nosuid launcher place: refused"
is "$(state)" "$BEFORE" "setup's refusals changed nothing in the container"

is "$(podman "${GLOBAL[@]}" ps -a -q | wc -l)" 0 "no container is left"
done_testing
