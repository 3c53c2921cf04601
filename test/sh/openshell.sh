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
ln -s openshell "$D/bin/loginctl"
chown -R "$TU_UID:$TU_GID" "$D"
chmod 0755 "$D" "$D/bin" "$D/bin/openshell"
ST=$D/st
# The tool runner beside owsbx, as make install puts it: a static Linux owsbx.
RUNNER=owsbx-linux-$(uname -m)
cp "$OWSTEST_ROOT/$RUNNER" "$TU_BIN_DIR/$RUNNER" || bail_out "build $RUNNER first (make runner)"
chmod 0755 "$TU_BIN_DIR/$RUNNER"
# The stand-in walls `sandbox exec` with this owsbx's landlock provider.
AS_USER_ENV=("PATH=$D/bin:$TU_BIN_DIR:/usr/local/bin:/usr/bin:/bin" "OWSTEST_OPENSHELL_STATE=$ST"
	"OWSTEST_OPENSHELL_WALL=$OWSBX")
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
like "$c" "--no-auto-providers -- /opt/owsbx/owsbx runner" "... and the tool runner as the main command"
is "$(jq -c '.docker.mounts[-1]' "$ST"/deleted/*/driver.json)" \
	"{\"type\":\"bind\",\"source\":\"$TU_BIN_DIR/$RUNNER\",\"target\":\"/opt/owsbx/owsbx\",\"read_only\":true}" \
	"... mounted alone, the static Linux runner at /opt/owsbx/owsbx, read-only"
like "$c" "openshell sandbox exec --name owsbx-[^ ]+ --no-tty -- /opt/owsbx/owsbx runner --probe --rw ${TU_WORK//\//\\/} " \
	"... proved from inside through sandbox exec, by the runner"
like "$c" "openshell sandbox exec --name owsbx-[^ ]+ --no-tty --workdir=${TU_WORK//\//\\/} .* -- sh -c" "... exec with the stream"
like "$c" "openshell sandbox delete owsbx-" "... deleted at close"
is "$(ls "$ST/sandboxes" 2>/dev/null | wc -l)" 0 "... no sandbox left"
is "$(cat "$ST"/deleted/*/stopped)" "exited 0 on SIGTERM" \
	"... the runner stayed up as the main command until delete, and ended on its SIGTERM"
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
sbx run --config "$D/config.toml" --provider openshell --rw "$TU_WORK" -- sh -c 'cat "$HOME/.config/gh/hosts.yml"; echo "$HOME"'
[ "$SBX_RC" = 0 ] || diag "$(sbx_diag)"
is "$SBX_RC" 0 "sharing gh: the session runs"
like "$SBX_OUT" "OWSTEST.*$RT/[0-9a-f]+/home" "... its copy is under ~/.config/coworker/sandbox-runtime/<session>/home"
is "$(ls -A "$RT" | wc -l)" 0 "... and removed with the sandbox"

# --- the wall proved from inside, through sandbox exec, by the runner (none: no endpoint)
as_st "mkdir -p ~/docs"
DOCS=$TU_HOME/docs
EV=$D/events.jsonl
newest() { ls -td "$ST"/deleted/*/ | head -n 1; }
proof() { jq -c 'select(.event == "proof") | [.checks[] | [.name, .passed]]' "$EV"; }
sbx run --events "$EV" --provider openshell --rw "$TU_WORK" --ro "$DOCS" -- true
[ "$SBX_RC" = 0 ] || diag "$(sbx_diag)"
is "$SBX_RC" 0 "none: the session runs"
ok "... its policy lists no endpoint at all" sh -c "! grep -q 'network_policies\|host:' '$(newest)policy.yaml'"
like "$(proof)" "\[\"read-write $TU_WORK\",true\],\[\"read-write $RT/[0-9a-f]+\",true\],\[\"read-only $DOCS\",true\],\[\"not readable $TU_HOME/.owsandbox-canary-[0-9a-f]+\",true\],(\[\"not readable $TU_HOME/.ssh\",true\],)?\[\"network direct [0-9.]+:[0-9]+\",true\],\[\"network refuses pypi.org:443\",true\]" \
	"... the proof's checks in the events: the folders as granted, the home's files absent, the network closed"
# A stand-in that lets something through: the session is refused, nothing is left.
leak() {
	AS_USER_ENV+=("OWSTEST_OPENSHELL_LEAK=$1")
	sbx run --provider openshell --rw "$TU_WORK" --ro "$DOCS" ${2:+--net "$2"} -- true
	unset 'AS_USER_ENV[-1]'
	is "$SBX_RC" 70 "a sandbox that lets $3 through: the session is refused (70)"
	like "$SBX_ERR" "failed its proof from inside: $4" "... naming the check"
	is "$(ls "$ST/sandboxes" 2>/dev/null | wc -l)$(ls -A "$RT" | wc -l)" 00 "... its sandbox and record removed"
}
ok "the person has keys in ~/.ssh" test -d "$TU_HOME/.ssh"
leak home "" "the home's keys" "not readable $TU_HOME/.ssh"
leak ro "" "writes to a read-only folder" "read-only $DOCS"
leak net "" "pypi.org under none" "network refuses pypi.org:443 \(the proxy answered [0-9]+\)"

# --- allowlist: the machine's profile and hosts, the session's sites
as_st "printf '[sandbox]\nhosts = git.example.com\n' >'$D/hosts.toml'"
sbx run --config "$D/hosts.toml" --events "$EV" --provider openshell --net allowlist --allow-site api.example.org --rw "$TU_WORK" -- true
[ "$SBX_RC" = 0 ] || diag "$(sbx_diag)"
is "$SBX_RC" 0 "allowlist: the session runs"
pol=$(cat "$(newest)policy.yaml")
like "$pol" '- host: "git.example.com"' "... the machine's hosts are in the policy"
like "$pol" '- host: "api.example.org"' "... and the session's sites"
like "$pol" '- host: "pypi.org"' "... with the strict profile's registries"
unlike "$pol" 'api.tavily.com' "... and not the search APIs (strict by default)"
like "$(proof)" "\[\"network refuses owsbx-proof.invalid:443\",true\]" "... proved: a host off the list is refused"
as_st "printf '[openshell]\nprofile = standard\n' >>'$D/hosts.toml'"
sbx run --config "$D/hosts.toml" --provider openshell --net allowlist --rw "$TU_WORK" -- true
is "$SBX_RC" 0 "[openshell] profile = standard: the session runs"
like "$(cat "$(newest)policy.yaml")" '- host: "api.tavily.com"' "... with the search APIs"
sbx run --provider openshell --net open --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "open: refused (OpenShell cannot allow any host)"
like "$SBX_ERR" "network open cannot be had under OpenShell" "... saying why"

# --- the runner: the static Linux owsbx beside owsbx, or the session is refused before create
mv "$TU_BIN_DIR/$RUNNER" "$D/runner.away"
as_st ": >'$ST/calls'"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "no $RUNNER beside owsbx: refused (70)"
like "$SBX_ERR" "tool runner, a static Linux owsbx for $(uname -m), is not there.*make runner" "... naming it and how to build it"
cp "$OWSBX" "$TU_BIN_DIR/$RUNNER"
sbx run --provider openshell --rw "$TU_WORK" -- true
is "$SBX_RC" 70 "the host's own (dynamic) owsbx as the runner: refused (70)"
unlike "$(calls)" "sandbox create" "... before any sandbox is created"
mv "$D/runner.away" "$TU_BIN_DIR/$RUNNER"

# --- the stand-in as the real one: a main command that exits ends the sandbox
as_st "openshell sandbox create --name owstest-bare --from $IMAGE --driver-config-json '{\"docker\":{\"mounts\":[{\"type\":\"bind\",\"source\":\"$TU_BIN_DIR/$RUNNER\",\"target\":\"/opt/owsbx/owsbx\",\"read_only\":true}]}}' -- /opt/owsbx/owsbx >/dev/null"
ended() { [ -e "$ST/sandboxes/owstest-bare/main.exit" ]; }
poll 20 ended
ok "stand-in: a bare owsbx as the main command exits at once (usage error)" ended
like "$(as_user openshell sandbox exec --name owstest-bare -- true 2>&1)" "not ready: its main command exited" \
	"... and the sandbox is over: exec fails"
as_st "openshell sandbox delete owstest-bare >/dev/null"

# --- the admin prefix and linger (the person has no linger on this machine)
ok "the person has no linger here" test ! -e "/var/lib/systemd/linger/$TU"
lin() { jq -r '.rows[] | select(.item == "linger") | .command' <<<"$SBX_OUT"; }
# sudo: `-n` works (OWSTEST_SUDO_RC=1: it would ask a password); what it runs is marked as
# root for the loginctl stand-in.
printf '%s\n' '#!/bin/sh' '[ "$1" = -n ] && [ "${OWSTEST_SUDO_RC:-0}" = 0 ] || exit 1' 'shift' \
	'[ "$1" = true ] && exit 0' 'exec env OWSTEST_STANDIN_ROOT=1 "$@"' >"$D/bin/sudo"
chmod 755 "$D/bin/sudo"
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
unset 'AS_USER_ENV[-1]' # sudo -n works again

# --- setup without OpenShell: the plan (linger, installer, bind mounts, image), then the steps
# in order; this machine has no network, so it stops at the installer with the reason, and
# undoes the linger it turned on
as_st "rm -f '$TOML' '$ST/images/'* && mv '$ST/installed' '$ST/not-installed' && : >'$ST/calls'"
sbx machine sandbox setup --provider openshell
is "$SBX_RC" 1 "setup without OpenShell, not answered: stops"
like "$SBX_OUT" "1\. linger: loginctl enable-linger $TU, as you or through sudo -n.*2\. openshell: NVIDIA's installer for OpenShell 0\.0\.116 \(https://raw.githubusercontent.com/NVIDIA/OpenShell/main/install.sh, OPENSHELL_VERSION=v0\.0\.116\), sudo -n.*3\. bind-mounts: enable_bind_mounts = true .*4\. image: docker pull" \
	"... after showing the plan: linger, the installer, bind mounts, the image"
like "$SBX_ERR" "nothing was changed" "... saying nothing was changed"
unlike "$(calls)" "loginctl enable" "... and it was not"
sbx machine sandbox setup --provider openshell --yes
is "$SBX_RC" 1 "setup --yes without OpenShell, no network: fails"
like "$SBX_ERR" "setup stopped at the installer: it could not be downloaded \(curl: \([0-9]+\) [^)]+\)" \
	"... at the installer step, with curl's reason"
like "$(calls)" "loginctl enable-linger $TU.*loginctl enable-linger $TU.*loginctl disable-linger $TU" \
	"... linger first (as the person, refused, then through sudo -n), undone after"
like "$SBX_OUT" "turning linger on.*downloading NVIDIA's installer.*undoing linger" "... each step said"
ok "... linger is off again: nothing half-done" test ! -e "$ST/linger/$TU"
ok "... the gateway's config untouched" test ! -e "$TOML"
is "$(ls -A "$ST/images" | wc -l)" 0 "... no image pulled"
# Ctrl-C while the installer is downloaded: the step ends, setup undoes linger. A curl that
# hangs stands in for a slow download; SIGINT goes to setup's process group, as a terminal's.
printf '%s\n' '#!/bin/sh' ': >"$OWSTEST_OPENSHELL_STATE/curl-started"' 'exec sleep 300' >"$D/bin/curl"
chmod 755 "$D/bin/curl"
as_user_bg setsid -w "$OWSBX" machine sandbox setup --provider openshell --yes >"$D/cancel.out" 2>&1
started() { [ -e "$ST/curl-started" ]; }
poll 60 started
ok "cancel: setup reached the installer's download" started
grp=$(ps -o pgid= -p "$(pgrep -u "$TU" -n -f 'machine sandbox setup --provider openshell')" | tr -d ' ')
kill -INT -- "-$grp"
wait "$AS_USER_PID"
is "$?" 1 "... Ctrl-C ends setup, with a failure"
like "$(cat "$D/cancel.out")" "undoing linger.*setup stopped at the installer" "... which undoes linger and says where it stopped"
ok "... linger is off again" test ! -e "$ST/linger/$TU"
rm -f "$D/bin/curl" "$ST/curl-started"
as_st "mkdir -p '$ST/linger' && : >'$ST/linger/$TU'"
sbx machine sandbox setup --provider openshell --yes
like "$SBX_ERR" "setup stopped at the installer" "linger already on: setup stops at the installer"
ok "... and leaves linger on, as it was" test -e "$ST/linger/$TU"
as_st "rm -f '$ST/linger/$TU' && : >'$ST/calls'"
AS_USER_ENV+=("OWSTEST_SUDO_RC=1")
sbx machine sandbox setup --provider openshell --yes
unset 'AS_USER_ENV[-1]'
is "$SBX_RC" 1 "no sudo -n, no display (nothing can ask a password): setup stops"
like "$SBX_OUT" "command: sudo loginctl enable-linger $TU && curl -LsSf [^ ]+ \| OPENSHELL_VERSION=v0\.0\.116 sh" \
	"... handing over ONE command, linger first, then the installer"
unlike "$(calls)" "loginctl (en|dis)able" "... having done nothing"
as_st "mv '$ST/not-installed' '$ST/installed'"
# with OpenShell there (and linger): bind mounts allowed in the gateway's config, the image
# pulled with its progress
as_st "mkdir -p '$ST/linger' && : >'$ST/linger/$TU'"
sbx machine sandbox setup --provider openshell --yes
is "$SBX_RC" 0 "setup: done"
like "$SBX_OUT" "docker pull $IMAGE.*Pulling" "... the image pulled with docker's progress"
ok "... the gateway's config allows bind mounts" grep -qx 'enable_bind_mounts = true' "$TOML"
sbx machine sandbox status --provider openshell --json
is "$(jq -r '[.rows[] | select(.state == "ok") | .item] | join(",")' <<<"$SBX_OUT")" \
	"linger,openshell,gateway,bind-mounts,image" "... and status passes every row"
as_st "rm -f '$ST/linger/$TU'"
done_testing
