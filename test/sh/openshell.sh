#!/bin/bash
# The openshell provider through the `openshell` CLI (spec 002). OpenShell cannot be installed
# here: as root on this machine (no OpenShell), the status rows and the refusal; then, as the
# throwaway person, the provider driven through test/helpers/openshell-standin (a stand-in
# that checks each call against the real CLI's documented arguments and keeps the state in
# OWSTEST_OPENSHELL_STATE), first on the person's PATH: each refusal, a whole lifecycle, a
# site added while the session runs, a killed host's sandbox removed by the next open, the
# shared copies under ~/.config/coworker/sandbox-runtime/, the admin prefix and linger.
# What this proves is the provider against the stand-in, not against OpenShell.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
command -v cc >/dev/null || skip_all "no C compiler"
[ -f "$OWSTEST_ROOT/libowsandbox.a" ] || skip_all "build first (make)"
IMAGE=ghcr.io/nvidia/openshell-community/sandboxes/base@sha256:aeef1c63f00e2913ea002ccb3aaf925f338b5c5d70e63576f0d95c16a138044e
BIN=$(owsbx_binary)

# --- as root, on this machine: no OpenShell anywhere on the PATH
if ! PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v openshell >/dev/null; then
	out=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin "$BIN" machine sandbox status --provider openshell 2>&1)
	rc=$?
	is "$rc" 1 "[root] status --provider openshell: exits 1 (rows fail)"
	like "$out" $'FAIL  openshell +not installed\n +command: [^\n]*curl -LsSf https://raw.githubusercontent.com/NVIDIA/OpenShell/main/install.sh \| OPENSHELL_VERSION=v0.0.116 sh' \
		"[root] ... the openshell row carries the install command"
	like "$out" $'docs: https://' "[root] ... and a docs link apart from it"
	json=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin "$BIN" machine sandbox status --provider openshell --json)
	is "$(jq -r '[.rows[].item] | join(",")' <<<"$json")" "linger,openshell,gateway,bind-mounts,image" \
		"[root] ... the rows, linger first"
	is "$(jq -r '.rows[] | select(.item == "image") | .command' <<<"$json")" "docker pull $IMAGE" \
		"[root] ... the image row's command is the docker pull"
	out=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin "$BIN" run --provider openshell -- true 2>&1)
	rc=$?
	is "$rc" 70 "[root] run --provider openshell -- true: refused with 70"
	like "$out" "OpenShell is not installed" "[root] ... naming what is missing"
else
	skip "OpenShell is installed here: the root rows of a machine without it" 7
fi

owstest_user_setup
D=$(mktemp -d /tmp/owstest-os.XXXXXX)
owstest_remove_at_exit "$D"
mkdir -p "$D/bin" "$D/st"
cp "$OWSTEST_ROOT/test/helpers/openshell-standin" "$D/bin/openshell"
ln -s openshell "$D/bin/docker"
chown -R "$TU_UID:$TU_GID" "$D"
chmod 0755 "$D" "$D/bin" "$D/bin/openshell"
ST=$D/st
AS_USER_ENV=("PATH=$D/bin:$TU_BIN_DIR:/usr/local/bin:/usr/bin:/bin" "OWSTEST_OPENSHELL_STATE=$ST")
as_st() { as_user sh -c "$1"; }
TOML=$TU_HOME/.config/openshell/gateway.toml
RT=$TU_HOME/.config/coworker/sandbox-runtime
calls() { cat "$ST/calls" 2>/dev/null; }

# --- each refusal, in the order a fresh machine meets them
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "not installed (the stand-in says so): refused with 70"
like "$SBX_ERR" "OpenShell is not installed" "... naming it"
as_st "touch '$ST/installed'"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "gateway down: refused with 70"
like "$SBX_ERR" "gateway is not running" "... naming it"
as_st "touch '$ST/gateway-up'"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "bind mounts off (no gateway.toml): refused with 70"
like "$SBX_ERR" "does not allow bind mounts.*enable_bind_mounts = true" "... naming the setting"
as_st "mkdir -p '${TOML%/*}' && printf '[openshell.drivers.docker]\nenable_bind_mounts = false\n' >'$TOML'"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "bind mounts false in gateway.toml: still refused"
as_st "printf '[openshell.drivers.docker]\nenable_bind_mounts = true\n' >'$TOML'"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "image missing: refused with 70"
like "$SBX_ERR" "base image is not downloaded yet.*docker pull $IMAGE" "... with the docker pull command"
unlike "$(calls)" "sandbox create" "no sandbox was created by any refusal"
sbx machine sandbox status --provider openshell --json
is "$(jq -r '[.rows[] | select(.state == "ok") | .item] | join(",")' <<<"$SBX_OUT")" \
	"openshell,gateway,bind-mounts" "status: openshell (at the pinned version), gateway and bind mounts pass"

# --- a whole lifecycle
as_st "docker pull $IMAGE >/dev/null && : >'$ST/calls'"
out=$(printf 'from-stdin\n' | as_user "$OWSBX" run --provider openshell --rw "$TU_WORK" -- \
	sh -c 'read l; echo "out:$l"; echo err >&2; exit 3' 2>"$D/err")
rc=$?
is "$rc" 3 "lifecycle: the command's exit code comes through"
is "$out" "out:from-stdin" "... stdin in, stdout out"
like "$(cat "$D/err")" "err" "... stderr out"
c=$(calls)
like "$c" "openshell sandbox create --detach --name owsbx-[^ ]+ --from ${IMAGE//./\\.} --policy $RT/[^ ]+/policy\\.yaml --driver-config-json" \
	"... created with the expected arguments (checked by the stand-in)"
like "$c" "\"source\\\\\":\\\\\"${TU_WORK//\//\\/}\\\\\"" "... the folder as a bind mount"
like "$c" "--no-auto-providers -- /" "... and the tool runner as the main command"
like "$c" "openshell sandbox exec --name owsbx-[^ ]+ --no-tty --workdir=${TU_WORK//\//\\/} .* -- sh -c" "... exec with the stream"
like "$c" "openshell sandbox delete owsbx-" "... deleted at close"
is "$(ls "$ST/sandboxes" 2>/dev/null | wc -l)" 0 "... no sandbox left"
is "$(ls -A "$RT" 2>/dev/null | wc -l)" 0 "... no record left under sandbox-runtime"

# --- a site added while the session runs: OpenShell's policy update at once
cc -std=c11 -O2 -D_GNU_SOURCE -I"$OWSTEST_ROOT/include" -o "$TU_BIN_DIR/openshell_host" \
	"$OWSTEST_ROOT/test/sh/openshell_host.c" "$OWSTEST_ROOT/libowsandbox.a" \
	-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread || bail_out "cannot build openshell_host"
chmod 0755 "$TU_BIN_DIR/openshell_host"
as_st ": >'$ST/calls'"
out=$(as_user "$TU_BIN_DIR/openshell_host" "$TU_WORK" example.org 2>&1)
is "$out" "allow=0 close=0" "a site for the running session: allowed"
like "$(calls)" "openshell policy update owsbx-[^ ]+ --add-endpoint example\\.org:443 --wait" \
	"... through openshell policy update, before the session closes"

# --- a killed host: the next open removes its sandbox and record
as_user_bg "$OWSBX" run --provider openshell --rw "$TU_WORK" -- sleep 120
HOST=$AS_USER_PID
has_sandbox() { [ -n "$(ls "$ST/sandboxes" 2>/dev/null)" ]; }
has_child() { [ -n "$(ps -o pid= --ppid "$HOST")" ]; }
poll 20 has_sandbox
poll 20 has_child
old=$(ls "$ST/sandboxes")
child=$(ps -o pid= --ppid "$HOST" | tr -d ' ')
kill -9 "$HOST" $child 2>/dev/null
wait "$HOST" 2>/dev/null
ok "a killed host leaves its sandbox ($old)" test -d "$ST/sandboxes/$old"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 0 "the next open runs"
ok "... and removed the killed host's sandbox" test ! -e "$ST/sandboxes/$old"
is "$(ls -A "$RT" | wc -l)" 0 "... and its record"

# --- the shared copies: under sandbox-runtime while the session lives, gone after
as_st "mkdir -p ~/.config/gh && echo 'github.com: {oauth_token: OWSTEST}' >~/.config/gh/hosts.yml &&
	printf '[credentials]\nenable = gh\n' >'$D/config.toml'"
sbx run --config "$D/config.toml" --provider openshell --rw "$TU_WORK" -- sh -c "cat $RT/*/home/.config/gh/hosts.yml"
[ "$SBX_RC" = 0 ] || diag "$(sbx_diag)"
is "$SBX_RC" 0 "sharing gh: the session runs"
like "$SBX_OUT" "OWSTEST" "... its copy is under ~/.config/coworker/sandbox-runtime/<session>/home"
is "$(ls -A "$RT" | wc -l)" 0 "... and removed with the sandbox"

# --- the admin prefix and linger (the person has no linger on this machine)
ok "the person has no linger here" test ! -e "/var/lib/systemd/linger/$TU"
lin() { jq -r '.rows[] | select(.item == "linger") | .command' <<<"$SBX_OUT"; }
as_st "printf '#!/bin/sh\n[ \"\$1 \$2\" = \"-n true\" ] && exit \${OWSTEST_SUDO_RC:-0}; exit 1\n' >'$D/bin/sudo' && chmod 755 '$D/bin/sudo'"
as_st "mv '$ST/installed' '$ST/not-installed'"
sbx machine sandbox status --provider openshell --json
as_st "mv '$ST/not-installed' '$ST/installed'"
is "$(lin)" "sudo -n loginctl enable-linger $TU" "sudo -n allowed: the prefix is sudo -n"
like "$(jq -r '.rows[] | select(.item == "openshell") | .command' <<<"$SBX_OUT")" \
	"^sudo -n loginctl enable-linger $TU && curl -LsSf .* \\| OPENSHELL_VERSION=v0\\.0\\.116 sh$" \
	"... and linger comes first in the installer's command"
AS_USER_ENV+=("OWSTEST_SUDO_RC=1" "DISPLAY=:0")
sbx machine sandbox status --provider openshell --json
if grep -qi microsoft /proc/version; then
	skip "WSL: pkexec is never chosen" 1
else
	is "$(lin)" "pkexec loginctl enable-linger $TU" "sudo asks a password, a display: pkexec"
fi
unset 'AS_USER_ENV[-1]'
sbx machine sandbox status --provider openshell --json
is "$(lin)" "sudo loginctl enable-linger $TU" "no sudo -n, no display: one command handed over (sudo, asked)"

# --- setup: bind mounts allowed in the gateway's config, the image pulled with its progress
as_st "rm -f '$TOML' '$ST/images/'*"
as_st "mv '$ST/installed' '$ST/not-installed'"
sbx machine sandbox setup --provider openshell
as_st "mv '$ST/not-installed' '$ST/installed'"
isnt "$SBX_RC" 0 "setup without OpenShell: stops"
like "$SBX_ERR" "not installed.*curl -LsSf" "... handing over the one install command"
sbx machine sandbox setup --provider openshell
is "$SBX_RC" 0 "setup: done"
like "$SBX_OUT" "docker pull $IMAGE.*Pulling" "... the image pulled with docker's progress"
ok "... the gateway's config allows bind mounts" grep -qx 'enable_bind_mounts = true' "$TOML"
sbx machine sandbox status --provider openshell --json
is "$(jq -r '[.rows[] | select(.state == "ok") | .item] | join(",")' <<<"$SBX_OUT")" \
	"openshell,gateway,bind-mounts,image" "... and status passes all but linger"
done_testing
