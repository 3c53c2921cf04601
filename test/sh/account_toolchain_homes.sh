#!/bin/bash
# Toolchains whose shims find their versions through their own home run as the
# account (account provider) when the person shares them: RUSTUP_HOME, PYENV_ROOT
# and the like name the person's real folders, granted read-only; a toolchain not
# shared sets nothing.  The fake shims fail as the real ones do without the variable:
# they look under the private HOME and find nothing.
. "$(dirname "$0")/../account_lib.sh"

shims=".rustup RUSTUP_HOME .cargo/bin
.cargo CARGO_HOME .cargo/bin
.pyenv PYENV_ROOT .pyenv/shims
.volta VOLTA_HOME .volta/bin
.rbenv RBENV_ROOT .rbenv/shims
.asdf ASDF_DATA_DIR .asdf/shims"
while read -r dir var bin; do
	tool=owstest-$(echo "$var" | tr 'A-Z_' 'a-z-')
	runuser -u "$PERSON" -- sh -c "
		set -e
		mkdir -p ~/$bin ~/$dir/versions/1.0/bin
		printf '#!/bin/sh\necho %s-ran-from-\$1\n' $dir > ~/$dir/versions/1.0/bin/$tool
		printf '#!/bin/sh\nexec \"\${$var:-\$HOME/$dir}/versions/1.0/bin/$tool\" \"\$$var\"\n' > ~/$bin/$tool
		chmod 755 ~/$dir/versions/1.0/bin/$tool ~/$bin/$tool
		chmod -R go+rX ~/$dir"
done <<<"$shims"
script='echo home=$HOME'
while read -r dir var bin; do
	tool=owstest-$(echo "$var" | tr 'A-Z_' 'a-z-')
	script="$script; echo $var=\${$var:-unset}; echo $tool=\$($tool 2>/dev/null || echo failed)"
done <<<"$shims"
script="$script; touch $PHOME/.pyenv/x 2>/dev/null && echo pyenvw=yes || echo pyenvw=no"
cp -p "$CONF" "$T/config.before-toolchains"
printf '[toolchains]\nenable = .rustup, .cargo, .pyenv, .volta, .rbenv, .asdf\n' >>"$CONF"

out=$(owsbx run --provider account -- /bin/sh -c "$script" 2>&1)
kv() { sed -n "s/^$1=//p" <<<"$out"; }
check "HOME is the account's private home" grep -q "/sandboxes/.*/home$" <<<"$(kv home)"
while read -r dir var bin; do
	tool=owstest-$(echo "$var" | tr 'A-Z_' 'a-z-')
	check "$var names the person's $dir ($(kv "$var"))" [ "$(kv "$var")" = "$PHOME/$dir" ]
	check "a $dir shim finds its version through $var ($(kv "$tool"))" \
		[ "$(kv "$tool")" = "$dir-ran-from-$PHOME/$dir" ]
done <<<"$shims"
check "the toolchain's home stays read-only" [ "$(kv pyenvw)" = no ]

cp -p "$T/config.before-toolchains" "$CONF"
printf '[toolchains]\nenable = .cargo\n' >>"$CONF"
out=$(owsbx run --provider account -- /bin/sh -c "$script" 2>&1)
check "pyenv not shared: PYENV_ROOT is not set ($(kv PYENV_ROOT))" [ "$(kv PYENV_ROOT)" = unset ]
check "rustup not shared: RUSTUP_HOME is not set" [ "$(kv RUSTUP_HOME)" = unset ]
check "cargo shared: CARGO_HOME names it" [ "$(kv CARGO_HOME)" = "$PHOME/.cargo" ]
cp -p "$T/config.before-toolchains" "$CONF" # the machine's config as setup left it
done_testing
