#!/bin/bash
# Sharing on purpose under the account provider: catalog entries the machine's config
# switches on are written into the account's private home by its init, inside the wall,
# owner-only, with the variables the tools read; toolchain folders are granted read-only
# and on PATH; the sandbox's ~ is the private home (ssh asks the system); the originals
# are untouched; and nothing of it outlives the session.
. "$(dirname "$0")/../account_lib.sh"
PY=/usr/bin/python3

runuser -u "$PERSON" -- sh -c '
	set -e
	mkdir -p ~/.config/gh ~/.kube ~/.cargo/bin
	echo "oauth_token: gho_fake_account" > ~/.config/gh/hosts.yml
	printf "clusters:\n- cluster:\n    server: https://k8s.owstest.invalid:6443\n" > ~/.kube/config
	printf "#!/bin/sh\necho account-toolchain-ran\n" > ~/.cargo/bin/owstest-tool
	chmod 755 ~/.cargo/bin/owstest-tool ~/.cargo ~/.cargo/bin'
before=$(cd "$PHOME" && sha256sum .ssh/id_ed25519 .config/gh/hosts.yml .kube/config && stat -c '%n %a %s %Y' .ssh/id_ed25519 .config/gh/hosts.yml)
cp -p "$CONF" "$T/config.before-share"
printf '[credentials]\nenable = ssh, gh, kubectl\n[toolchains]\nenable = .cargo\n' >>"$CONF"

out=$(owsbx run --provider account -- /bin/sh -c '
	echo home=$HOME
	echo tilde=$(getent passwd "$(id -un)" | cut -d: -f6)
	echo user=$(id -un)
	echo key=$(head -c 30 ~/.ssh/id_ed25519)
	echo keymode=$(stat -c "%a %U" ~/.ssh/id_ed25519)
	echo gh=$GH_CONFIG_DIR
	echo ghtoken=$(cat "$GH_CONFIG_DIR/hosts.yml")
	echo kube=$KUBECONFIG
	echo tool=$(owstest-tool)
	touch '"$PHOME"'/.cargo/x 2>/dev/null && echo toolw=yes || echo toolw=no
	echo bashrc=$(cat '"$PHOME"'/.bashrc 2>&1 | head -c 200)' 2>&1)
kv() { sed -n "s/^$1=//p" <<<"$out"; }
check "a session with shared logins runs as the closed account ($(kv user))" [ "$(kv user)" = "$CLOSED" ]
check "HOME is the account's private home" grep -q "/sandboxes/.*/home$" <<<"$(kv home)"
check "the system's ~ is the private home too (ssh asks it)" [ "$(kv tilde)" = "$(kv home)" ]
check "ssh: the key is copied" [ "$(kv key)" = "$(head -c 30 "$PHOME/.ssh/id_ed25519")" ]
check "owner-only, the account's ($(kv keymode))" [ "$(kv keymode)" = "600 $CLOSED" ]
check "gh: GH_CONFIG_DIR points at the copy" [ "$(kv gh)" = "$(kv home)/.config/gh" ]
check "gh: the copy holds the login" [ "$(kv ghtoken)" = "oauth_token: gho_fake_account" ]
check "kubectl: KUBECONFIG" [ "$(kv kube)" = "$(kv home)/.kube/config" ]
check "a toolchain is on PATH" [ "$(kv tool)" = account-toolchain-ran ]
check "toolchain folders are read-only" [ "$(kv toolw)" = no ]
check "the rest of the home stays unreadable ($(kv bashrc))" \
	grep -Eq "Permission denied|No such file" <<<"$(kv bashrc)"
after=$(cd "$PHOME" && sha256sum .ssh/id_ed25519 .config/gh/hosts.yml .kube/config && stat -c '%n %a %s %Y' .ssh/id_ed25519 .config/gh/hosts.yml)
check "the originals are untouched" [ "$after" = "$before" ]
check "nothing of the session is left in sandboxes/" sh -c "[ -z \"\$(ls -A '$T/state/sandboxes')\" ]"
check "the toolchain's grant is revoked" sh -c "! getfacl -p '$PHOME/.cargo' 2>/dev/null | grep -q '$CLOSED'"
cp -p "$T/config.before-share" "$CONF" # the machine's config as setup left it
done_testing
