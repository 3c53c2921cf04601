#!/bin/bash
# Sharing on purpose (landlock): catalog entries the machine's config switches on are
# copied into the private home, owner-only, with the variable each tool reads; the
# originals are untouched; what is not switched on stays out; links out of the home,
# sockets and oversized files are refused with the reason; toolchain folders are there
# read-only and on PATH; `~` inside is the private home (ssh asks the system for it);
# the agent's text says what it can do, never where; nothing survives the session.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

H=$TU_HOME
# The config is the machine's (root's, readable); the events file is the person's.
cfg=$TU_BIN_DIR/share.ini
EV=$(mktemp -d /tmp/owstest-ev.XXXXXX)
owstest_remove_at_exit "$EV"
chown "$TU_UID:$TU_GID" "$EV"
write_cfg() { printf '%s\n' "$@" >"$cfg"; chmod 0644 "$cfg"; }
as_user /bin/sh -c "
	set -e
	mkdir -p $H/.config/gh $H/.aws $H/.kube $H/.cargo/bin $H/.docker $H/.config/mytool
	echo 'oauth_token: gho_fake' > $H/.config/gh/hosts.yml
	printf '[default]\nregion = eu-west-1\n' > $H/.aws/config
	printf '[default]\naws_secret_access_key = fake\n' > $H/.aws/credentials
	printf 'clusters:\n- cluster:\n    server: https://k8s.owstest.invalid:6443\n' > $H/.kube/config
	echo '{\"auths\":{}}' > $H/.docker/config.json
	echo 'token=abc' > $H/.config/mytool/token
	printf '#!/bin/sh\necho toolchain-ran\n' > $H/.cargo/bin/owstest-tool
	chmod 755 $H/.cargo/bin/owstest-tool
	echo '//registry.npmjs.org/:_authToken=fake' > $H/.npmrc"
before=$(cd "$H" && find . -type f -newer /etc/hostname -printf '%p %s %T@\n' 2>/dev/null | sort; sha256sum .ssh/id_ed25519 .aws/credentials)

write_cfg "[credentials]" "enable = ssh, gh, aws-config, kubectl, docker, mytool" \
	"[credential mytool]" "path = .config/mytool/token" "kind = credential" \
	"hosts = api.mytool.invalid:443" "env = MYTOOL_TOKEN_FILE" "lets = deploy with mytool" \
	"[toolchains]" "enable = .cargo"
AS_USER_ENV=("OWSBX_CONFIG=$cfg")
sbx run --events "$EV/ev" --rw "$TU_WORK" -- /bin/sh -c '
	echo "home=$HOME"
	echo "tilde=$(getent passwd "$(id -un)" | cut -d: -f6)"
	echo "gh=$GH_CONFIG_DIR"; echo "awsc=$AWS_CONFIG_FILE"; echo "kube=$KUBECONFIG"
	echo "docker=$DOCKER_CONFIG"; echo "mytool=$MYTOOL_TOKEN_FILE"
	echo "creds=${AWS_SHARED_CREDENTIALS_FILE:-unset}"
	echo "key=$(cat "$HOME/.ssh/id_ed25519" | head -1)"
	echo "keymode=$(stat -c %a "$HOME/.ssh/id_ed25519")"
	echo "ghtoken=$(cat "$GH_CONFIG_DIR/hosts.yml")"
	echo "mytooltoken=$(cat "$MYTOOL_TOKEN_FILE")"
	echo "awsfile=$( [ -e "$HOME/.aws/credentials" ] && echo present || echo absent)"
	echo "npmrc=$( [ -e "$HOME/.npmrc" ] && echo present || echo absent)"
	echo "tool=$(owstest-tool)"
	touch '"$H"'/.cargo/x 2>/dev/null && echo "toolw=yes" || echo "toolw=no"
	echo "users=$(getent passwd | wc -l)"
	echo "privdir=$(dirname "$HOME")"'
kv() { sed -n "s/^$1=//p" <<<"$SBX_OUT"; }
is "$SBX_RC" 0 "a session with shared logins runs" || diag "$(sbx_diag)"
home=$(kv home)
like "$home" "^/tmp/owsandbox-$TU_UID/[^/]+/home\$" "HOME is the private home"
is "$(kv tilde)" "$home" "the system's ~ for the person is the private home too (ssh asks it)"
is "$(kv key)" "$(head -1 "$H/.ssh/id_ed25519")" "ssh: the key is copied"
is "$(kv keymode)" "600" "owner-only"
is "$(kv gh)" "$home/.config/gh" "gh: GH_CONFIG_DIR points at the copy"
is "$(kv ghtoken)" "oauth_token: gho_fake" "gh: the copy holds the login"
is "$(kv awsc)" "$home/.aws/config" "aws-config: AWS_CONFIG_FILE points at the copy"
is "$(kv creds)" "unset" "aws-credentials, not switched on: no variable"
is "$(kv awsfile)" "absent" "aws-credentials, not switched on: not copied"
is "$(kv npmrc)" "absent" "npm, not switched on: not copied"
is "$(kv kube)" "$home/.kube/config" "kubectl: KUBECONFIG"
is "$(kv docker)" "$home/.docker" "docker: DOCKER_CONFIG names the folder of config.json"
is "$(kv mytool)" "$home/.config/mytool/token" "an entry the person added: its variable"
is "$(kv mytooltoken)" "token=abc" "and its copy"
is "$(kv tool)" "toolchain-ran" "a toolchain's bin folder is on PATH"
is "$(kv toolw)" "no" "toolchain folders are read-only"
is "$(kv users)" "3" "the sandbox's passwd lists no other account of the machine"
shared=$(grep '"event":"open"' "$EV/ev" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read()).get("shared",""))')
like "$shared" "push and pull over SSH" "the agent is told what it can do"
like "$shared" "deploy with mytool" "including for entries the person added"
unlike "$shared" "\\.ssh|/home|/tmp|id_ed25519|token" "never where a credential is kept"
after=$(cd "$H" && find . -type f -newer /etc/hostname -printf '%p %s %T@\n' 2>/dev/null | sort; sha256sum .ssh/id_ed25519 .aws/credentials)
is "$after" "$before" "the originals are untouched (sizes, times, content)"
is "$(owstest_session_dirs)" "" "nothing of the session is left"

# Killed mid-session: the copies live on the sandbox's own /tmp and go with it.
as_user_bg "$OWSBX" run -- /bin/sh -c 'echo x > "$HOME/.ssh/marker"; sleep 300'
pid=$AS_USER_PID
ok "the session started" poll 10 owstest_has_proc "sleep 300"
kill -9 "$pid"
wait "$pid" 2>/dev/null
ok "after SIGKILL of the host, nothing of the session remains" poll 10 owstest_no_user_procs
ok "and no copy is anywhere on disk" sh -c "! find /tmp /var/tmp /dev/shm -name marker -user $TU_UID 2>/dev/null | grep -q ."

# Refusals: each with the reason, nothing run, nothing left.
refused() { # desc reason-regex config-lines...
	local desc=$1 why=$2
	shift 2
	write_cfg "$@"
	sbx run -- /bin/true
	is "$SBX_RC" 2 "$desc: refused (exit 2)" || diag "$(sbx_diag)"
	like "$SBX_ERR" "$why" "$desc: the reason is given"
	is "$(owstest_session_dirs)" "" "$desc: nothing left"
}
as_user mkdir -p "$H/.config/linkout"
as_user ln -s /etc/hostname "$H/.config/linkout/token"
refused "a link out of the home" "link leads out of the home" \
	"[credentials]" "enable = lo" "[credential lo]" "path = .config/linkout/token"
as_user "$PY" -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$H/.owstest.sock')"
refused "a socket" "socket" "[credentials]" "enable = so" "[credential so]" "path = .owstest.sock"
as_user /bin/sh -c "head -c 2000000 /dev/zero > $H/.owstest-big"
refused "an oversized file" "larger than 1 MiB" \
	"[credentials]" "enable = big" "[credential big]" "path = .owstest-big"
write_cfg "[credentials]" "enable = home" "[credential home]" "path = ."
sbx run -- /bin/true
is "$SBX_RC" 2 "the home itself cannot be an entry (config refused)"
write_cfg "[credentials]" "enable = nosuch"
sbx run -- /bin/true
is "$SBX_RC" 2 "an unknown catalog name in the config is refused"

# The catalog, as the person sees it.
write_cfg "[credentials]" "enable = gh"
sbx credentials --json
like "$SBX_OUT" '"name":"gh"[^}]*"found":true[^}]*"shared":true' "the catalog: gh found and shared"
like "$SBX_OUT" '"name":"gcloud"[^}]*"found":false[^}]*"shared":false' "gcloud not found, not shared"
done_testing
