#!/bin/bash
# Toolchains whose shims find their versions through their own home (rustup's
# proxies, pyenv's and rbenv's shims, volta, asdf) run under the private HOME when the
# person shares them (landlock): RUSTUP_HOME, CARGO_HOME, PYENV_ROOT, VOLTA_HOME,
# RBENV_ROOT and ASDF_DATA_DIR name the person's real folders, read-only; a toolchain
# not shared sets nothing.  The fake shims fail exactly as the real ones do when the
# variable is missing: they look under $HOME, the private home, and find nothing.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

H=$TU_HOME
cfg=$TU_BIN_DIR/toolchains.ini
# name var shim-folder: each shim execs the version under its home, as the real ones do.
shims=".rustup RUSTUP_HOME .cargo/bin
.cargo CARGO_HOME .cargo/bin
.pyenv PYENV_ROOT .pyenv/shims
.volta VOLTA_HOME .volta/bin
.rbenv RBENV_ROOT .rbenv/shims
.asdf ASDF_DATA_DIR .asdf/shims"
while read -r dir var bin; do
	tool=owstest-$(echo "$var" | tr 'A-Z_' 'a-z-')
	as_user /bin/sh -c "
		set -e
		mkdir -p $H/$bin $H/$dir/versions/1.0/bin
		printf '#!/bin/sh\necho %s-ran-from-\$1\n' $dir > $H/$dir/versions/1.0/bin/$tool
		printf '#!/bin/sh\nexec \"\${$var:-\$HOME/$dir}/versions/1.0/bin/$tool\" \"\$$var\"\n' > $H/$bin/$tool
		chmod 755 $H/$dir/versions/1.0/bin/$tool $H/$bin/$tool"
done <<<"$shims"
run_all() { # the shims, each by name on PATH
	local script='echo home=$HOME'
	while read -r dir var bin; do
		local tool=owstest-$(echo "$var" | tr 'A-Z_' 'a-z-')
		script="$script; echo $var=\${$var:-unset}; echo $tool=\$($tool 2>/dev/null || echo failed)"
	done <<<"$shims"
	script="$script; touch $H/.pyenv/x 2>/dev/null && echo pyenvw=yes || echo pyenvw=no"
	sbx run --rw "$TU_WORK" -- /bin/sh -c "$script"
}
kv() { sed -n "s/^$1=//p" <<<"$SBX_OUT"; }

printf '%s\n' "[toolchains]" "enable = .rustup, .cargo, .pyenv, .volta, .rbenv, .asdf" >"$cfg"
chmod 0644 "$cfg"
AS_USER_ENV=("OWSBX_CONFIG=$cfg")
run_all
is "$SBX_RC" 0 "a session with six toolchains shared runs" || diag "$(sbx_diag)"
like "$(kv home)" "^/tmp/owsandbox-$TU_UID/" "HOME is the private home"
while read -r dir var bin; do
	tool=owstest-$(echo "$var" | tr 'A-Z_' 'a-z-')
	is "$(kv "$var")" "$H/$dir" "$var names the person's $dir"
	is "$(kv "$tool")" "$dir-ran-from-$H/$dir" "a $dir shim finds its version through $var"
done <<<"$shims"
is "$(kv pyenvw)" "no" "the toolchain's home stays read-only"

# Not shared: no variable points into the home, and a shim finds nothing.
printf '%s\n' "[toolchains]" "enable = .cargo" >"$cfg"
run_all
is "$SBX_RC" 0 "a session with only .cargo shared runs" || diag "$(sbx_diag)"
is "$(kv PYENV_ROOT)" "unset" "pyenv not shared: PYENV_ROOT is not set"
is "$(kv RUSTUP_HOME)" "unset" "rustup not shared: RUSTUP_HOME is not set"
is "$(kv CARGO_HOME)" "$H/.cargo" "cargo shared: CARGO_HOME names it"
done_testing
