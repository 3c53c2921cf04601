#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Secrets are absent: a minimal environment (PATH, LANG/LC_*, TERM, TZ kept; HOME, TMPDIR,
# USER, LOGNAME set), no variable whose name says it holds a secret (even when asked for
# with --env or the policy), none in any /proc/*/environ inside; the caches point into the
# private folder; git works in the shared folders (safe.directory through GIT_CONFIG_*).
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK RO=$TU_RO
SECRET_NAMES="MY_API_KEY X_TOKEN DB_SECRET DB_PASSWD GOOGLE_APPLICATION_CREDENTIALS HTTP_AUTHORIZATION
XDG_SESSION_ID api_key my_token Secret_Thing"
AS_USER_ENV=(OWSTEST_PLAIN=visible LC_ALL=C.UTF-8 LC_TIME=C)
for n in $SECRET_NAMES; do AS_USER_ENV+=("$n=owsleak-$n"); done

# control: outside, the person has them all
out=$(as_user /usr/bin/env)
leaks=0
for n in GITHUB_TOKEN AWS_SECRET_ACCESS_KEY MY_PASSWORD SESSION_COOKIE SSH_AUTH_SOCK $SECRET_NAMES; do
	grep -q "^$n=" <<<"$out" || leaks=$((leaks + 1))
done
is "$leaks" 0 "control: every secret variable is in the person's environment outside"

sbx run --rw "$W" --ro "$RO" -- /usr/bin/env
is "$SBX_RC" 0 "env runs inside" || diag "$(sbx_diag)"
inside=$SBX_OUT
for n in GITHUB_TOKEN AWS_SECRET_ACCESS_KEY MY_PASSWORD SESSION_COOKIE SSH_AUTH_SOCK $SECRET_NAMES; do
	not_ok "$n is not passed" grep -q "^$n=" <<<"$inside"
done
bad=$(grep -iE '^[^=]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)[^=]*=' <<<"$inside" |
	grep -v '^GIT_CONFIG_KEY_[0-9]*=safe.directory$')
is "$bad" "" "no name inside says it holds a secret (GIT_CONFIG_KEY_n=safe.directory aside)"
unlike "$inside" "ghp_fake|=fake$|owsleak-" "no secret value inside under any name"
unlike "$inside" "OWSTEST_PLAIN" "an ordinary variable of the person's is not passed (minimal environment)"
for kv in "PATH=/usr/local/bin:/usr/bin:/bin" "LANG=C.UTF-8" "LC_ALL=C.UTF-8" "LC_TIME=C" "TERM=xterm" "TZ=UTC" "USER=$TU" "LOGNAME=$TU"; do
	ok "$kv is kept" grep -qxF "$kv" <<<"$inside"
done
home=$(sed -n 's/^HOME=//p' <<<"$inside")
priv=$(dirname "$home")
like "$home" "^/tmp/owsandbox-$TU_UID/[^/]+/home\$" "HOME is the private home ($home)"
is "$(sed -n 's/^TMPDIR=//p' <<<"$inside")" "$priv/tmp" "TMPDIR is the private tmp"
for n in XDG_CACHE_HOME npm_config_cache PIP_CACHE_DIR UV_CACHE_DIR GOCACHE GOMODCACHE GOPATH YARN_CACHE_FOLDER CARGO_HOME; do
	v=$(sed -n "s/^$n=//p" <<<"$inside")
	like "$v" "^$priv/" "$n points into the private folder ($v)"
done

# GIT_CONFIG_COUNT/KEY/VALUE: safe.directory for each folder
count=$(sed -n 's/^GIT_CONFIG_COUNT=//p' <<<"$inside")
safe=""
for ((i = 0; i < ${count:-0}; i++)); do
	k=$(sed -n "s/^GIT_CONFIG_KEY_$i=//p" <<<"$inside")
	v=$(sed -n "s/^GIT_CONFIG_VALUE_$i=//p" <<<"$inside")
	[ "$k" = safe.directory ] && safe="$safe|$v|"
done
like "$safe" "\\|$W\\|" "GIT_CONFIG_* sets safe.directory for the rw folder"
like "$safe" "\\|$RO\\|" "GIT_CONFIG_* sets safe.directory for the ro folder"

# the caches are usable
# shellcheck disable=SC2016
sbx run -- /bin/sh -c 'for d in "$XDG_CACHE_HOME" "$npm_config_cache" "$PIP_CACHE_DIR" "$UV_CACHE_DIR" "$GOCACHE" "$GOMODCACHE" "$GOPATH" "$YARN_CACHE_FOLDER" "$CARGO_HOME"; do
	mkdir -p "$d" && touch "$d/owstest" || echo "unwritable: $d"; done; echo done'
is "$SBX_OUT" "done" "every cache folder is writable"

# no secret in any process's environment inside (the sandbox's init included)
# shellcheck disable=SC2016
SCAN='
import os, sys
# the needles are built here so that the command line of this program holds none of them
needles = [b"ghp" + b"_fake", b"owsleak" + b"-", b"SSH_AUTH" + b"_SOCK="]
hits = []
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    for f in ("environ", "cmdline"):
        try:
            d = open("/proc/%s/%s" % (p, f), "rb").read()
        except OSError:
            continue
        if any(n in d for n in needles):
            hits.append("%s/%s" % (p, f))
print("hits:" + ",".join(hits))
'
as_user "$PY" -c "$SCAN" >"$TU_TMP/scan" 2>&1
like "$(cat "$TU_TMP/scan")" "^hits:.+" "control: outside, the scan finds the secrets in the person's processes (the agent)"
sbx run -- "$PY" -c "$SCAN"
is "$SBX_OUT" "hits:" "no /proc/*/environ or cmdline inside holds a secret"

# --env: passes ordinary names, never secret ones
sbx run --env OWSTEST_X=hello -- /usr/bin/env
ok "--env NAME=VALUE is passed" grep -qx OWSTEST_X=hello <<<"$SBX_OUT"
sbx run --env MY_TOKEN=owsleak-env --env AWS_SESSION_TOKEN=owsleak-env2 -- /usr/bin/env
unlike "$SBX_OUT" "owsleak-" "--env with a secret name does not pass it (rc $SBX_RC)"
[ "$SBX_RC" = 0 ] || is "$SBX_RC" 2 "a secret name asked for with --env is refused as bad input, or dropped"

# the policy's env: the same rule
as_user /bin/sh -c "printf '%s' '{\"env\": {\"OWSTEST_P\": \"pol\", \"API_TOKEN\": \"owsleak-pol\"}}' >'$W/env-policy.json'"
sbx run --policy "$W/env-policy.json" -- /usr/bin/env
unlike "$SBX_OUT" "owsleak-" "a policy env with a secret name does not pass it (rc $SBX_RC)"
if [ "$SBX_RC" = 0 ]; then
	ok "the policy's ordinary env variable is passed" grep -qx OWSTEST_P=pol <<<"$SBX_OUT"
else
	is "$SBX_RC" 2 "a policy asking for a secret variable is refused as bad input"
fi
as_user rm -f "$W/env-policy.json"

# git in the shared folder
as_user git -C "$W" init -q && as_user git -C "$W" -c user.name=t -c user.email=t@t add -A &&
	as_user git -C "$W" -c user.name=t -c user.email=t@t commit -q -m first
ok "control: outside, the person has a git repository" as_user git -C "$W" log --oneline
sbx run --rw "$W" -- /bin/sh -c 'git -C "$1" status --short >/dev/null && echo status-ok; git -C "$1" -c user.name=a -c user.email=a@a commit -q --allow-empty -m inside && echo commit-ok; git -C "$1" log --oneline | wc -l' sh "$W"
mapfile -t L <<<"$SBX_OUT"
is "${L[0]}" status-ok "git status works in the rw folder inside"
is "${L[1]}" commit-ok "git commit works in the rw folder inside"
is "${L[2]}" 2 "and the history shows both commits"
is "$(as_user git -C "$W" log --oneline | wc -l)" 2 "the commit made inside is in the person's repository"

# the repository's hooks and config run later outside, as the person: they stay read-only
probe --rw "$W" -- "create $W/.git/hooks/pre-commit" "append $W/.git/config" "create $W/.git/hooks/post-checkout" \
	"rename $W/.git/config $W/.git/config.old" "create $W/.git/owstest-ok"
is_one_of "${R[0]}" "EACCES EROFS EPERM" "a git hook cannot be planted inside (${R[0]})"
is_one_of "${R[1]}" "EACCES EROFS EPERM" ".git/config cannot be changed inside (${R[1]})"
is_one_of "${R[2]}" "EACCES EROFS EPERM" "a post-checkout hook cannot be planted inside (${R[2]})"
is_one_of "${R[3]}" "EACCES EROFS EPERM EBUSY EXDEV" ".git/config cannot be moved away inside (${R[3]})"
is "${R[4]}" OK "control: the rest of .git is writable (git commit works)"
not_ok "no hook exists outside" test -e "$W/.git/hooks/pre-commit"

owstest_check_clean
done_testing
