#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run in a shell of their own
# Clear defaults. A host that passes no config (examples/run.c: ows_session_open(policy, NULL))
# gets the machine's, /etc/owsandbox/config.ini, as owsbx does: here its [landlock]
# root_runs_as decides who a root host's commands run as, for the library and the CLI alike.
# And a root host whose session folder is root's own (0700) is refused naming the account
# commands run as, what chose it and how to choose another; choosing that way works.
# The machine's config is written only inside a mount namespace of this test's own, on an
# overlay of /etc: the real /etc is never touched, and nothing else on the machine sees it.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"

HOST=$OWSTEST_ROOT/build/examples/run
[ -x "$HOST" ] || skip_all "build/examples/run not built (make check builds it)"
[ -e /etc/owsandbox/config.ini ] && skip_all "this machine has an /etc/owsandbox/config.ini: the built-in defaults cannot be the control"
command -v unshare >/dev/null || skip_all "no unshare (util-linux)"
owstest_user_setup

NOBODY=$(id -u nobody)
RDIRS="/tmp/owsandbox-0 /tmp/owsandbox-$NOBODY /tmp/owsandbox-$TU_UID"
for d in $RDIRS; do [ -e "$d" ] || owstest_rmdir_at_exit "$d"; done
ROOT_ENV=(PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=/root USER=root LOGNAME=root)
SCR=$(mktemp -d /tmp/owstest-defaults.XXXXXX)
owstest_remove_at_exit "$SCR"
chmod 0711 "$SCR"
mkdir "$SCR/ov"

# with_config TEXT CMD...: CMD as root (no SUDO_UID), in a mount namespace whose
# /etc/owsandbox/config.ini holds TEXT (an overlay of /etc on a tmpfs); TEXT empty: none.
with_config() {
	local text=$1
	shift
	env -i "${ROOT_ENV[@]}" OWSTEST_TEXT="$text" OWSTEST_SCR="$SCR" \
		unshare -m --propagation private -- /bin/sh -c '
		set -e
		if [ -n "$OWSTEST_TEXT" ]; then
			mount -t tmpfs owstest "$OWSTEST_SCR/ov"
			mkdir "$OWSTEST_SCR/ov/u" "$OWSTEST_SCR/ov/w"
			mount -t overlay owstest -o "lowerdir=/etc,upperdir=$OWSTEST_SCR/ov/u,workdir=$OWSTEST_SCR/ov/w" /etc
			mkdir -p /etc/owsandbox
			printf "%s\n" "$OWSTEST_TEXT" >/etc/owsandbox/config.ini
		fi
		cd /
		exec timeout -k 5 60 "$@"' sh "$@" </dev/null
}
# last_line: the command's own output, after the example host's proof line.
uid_of() { grep -E '^[0-9]+$' <<<"$1" | tail -1; }

# control: outside the namespace nothing changed, and there is no config
CFG="[landlock]
root_runs_as = $TU"
out=$(with_config "$CFG" cat /etc/owsandbox/config.ini 2>&1)
like "$out" "root_runs_as = $TU" "the namespace's machine config names the person"
not_ok "the machine's own /etc has none" test -e /etc/owsandbox

# -------------------------------------------- a NULL config is the machine's
out=$(with_config "" "$HOST" -- /usr/bin/id -u 2>"$SCR/err")
is "$(uid_of "$out")" "$NOBODY" "control: no machine config: a root host's command runs as nobody" ||
	diag "$out" "$(cat "$SCR/err")"
out=$(with_config "$CFG" "$HOST" -- /usr/bin/id -u 2>"$SCR/err")
is "$(uid_of "$out")" "$TU_UID" "a host with a NULL config follows the machine's root_runs_as" ||
	diag "$out" "$(cat "$SCR/err")"
out=$(with_config "$CFG" "$OWSTEST_ROOT/owsbx" run -- /usr/bin/id -u 2>"$SCR/err")
is "$(uid_of "$out")" "$TU_UID" "and owsbx, reading the same file, agrees" || diag "$out" "$(cat "$SCR/err")"
# The other calls that take a config: the report says which file it read, the catalog
# what that file shares.
cat >"$SCR/calls.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <owsandbox.h>
int main(void)
{
	char *report = NULL, *catalog = NULL;
	if (ows_report_json(NULL, &report, NULL) < 0 || ows_catalog_json(NULL, &catalog, NULL) < 0)
		return 1;
	const char *cfg = strstr(report, "\"config\":");
	const char *ssh = strstr(catalog, "\"name\":\"ssh\"");
	const char *shared = ssh ? strstr(ssh, "\"shared\":") : NULL;
	printf("%.*s %.*s\n", cfg ? (int)strcspn(cfg, ",}") : 0, cfg ? cfg : "",
	       shared ? (int)strcspn(shared, ",}") : 0, shared ? shared : "");
	ows_free(report);
	ows_free(catalog);
	return 0;
}
C
cc -std=c11 -I"$OWSTEST_ROOT/include" -o "$SCR/calls" "$SCR/calls.c" "$OWSTEST_ROOT/libowsandbox.a" \
	-ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto || bail_out "cannot build the test's host"
is "$(with_config "" "$SCR/calls" 2>&1)" '"config":"" "shared":false' \
	"control: no machine config: report and catalog use the built-in defaults"
is "$(with_config "$CFG
[credentials]
enable = ssh" "$SCR/calls" 2>&1)" '"config":"/etc/owsandbox/config.ini" "shared":true' \
	"ows_report_json(NULL) and ows_catalog_json(NULL) read the machine's config"
out=$(with_config "[sandbox]
bogus = 1" "$HOST" -- /usr/bin/id -u 2>&1)
like "$out" "unknown setting \[sandbox\] bogus" "a broken machine config refuses the host's session, naming it"

# ------------------------------------- a root host and a folder root keeps to itself
D=$(mktemp -d /tmp/owstest-rootdir.XXXXXX)
owstest_remove_at_exit "$D"
chmod 0700 "$D"
with_config "" "$OWSTEST_ROOT/owsbx" run --rw "$D" -- /bin/sh -c "touch '$D/ran'" >/dev/null 2>"$SCR/err"
rc=$?
err=$(cat "$SCR/err")
is "$rc" 70 "owsbx as root with a root-owned 0700 folder: refused (70)"
not_ok "the command did not run" test -e "$D/ran"
like "$err" "cannot list or write: EACCES" "the refusal keeps the failed check"
like "$err" "commands run as nobody \(uid $NOBODY, from the default" "it names the account and what chose it"
like "$err" "--run-as NAME" "it says how to choose another: --run-as"
like "$err" "root_runs_as under \[landlock\] in /etc/owsandbox/config.ini" "or root_runs_as in the config"
like "$err" "read-write $D" "and names the folder"
out=$(with_config "" "$HOST" "$D" -- /bin/true 2>&1)
like "$out" "refused: .*commands run as nobody \(uid $NOBODY" "a host linking the library gets the same words"
with_config "" "$OWSTEST_ROOT/owsbx" verify --json --rw "$D" >"$SCR/out" 2>/dev/null
is "$?" 70 "owsbx verify: refused too"
like "$(cat "$SCR/out")" '"passed":false.*"error":\{.*"name":"OWS_EVERIFY".*commands run as nobody' \
	"and its report holds the proof and the error"

with_config "$CFG" "$OWSTEST_ROOT/owsbx" run --rw "$D" -- /bin/true >/dev/null 2>"$SCR/err"
like "$(cat "$SCR/err")" "commands run as $TU \(uid $TU_UID, from the config's root_runs_as\)" \
	"with the machine's root_runs_as, the refusal names that account and the config"
env -i "${ROOT_ENV[@]}" SUDO_UID="$TU_UID" timeout -k 5 60 "$OWSTEST_ROOT/owsbx" run --rw "$D" -- /bin/true \
	>/dev/null 2>"$SCR/err" </dev/null
like "$(cat "$SCR/err")" "commands run as $TU \(uid $TU_UID, from SUDO_UID" "under sudo it names SUDO_UID"

# Choosing the account the folder is for, as the refusal says, works.
chown "$TU_UID:$TU_GID" "$D"
out=$(with_config "" "$OWSTEST_ROOT/owsbx" run --run-as "$TU" --rw "$D" -- /bin/sh -c "touch '$D/ran' && id -u" 2>"$SCR/err")
is "$(uid_of "$out")" "$TU_UID" "--run-as the folder's owner: the command runs as it" || diag "$(cat "$SCR/err")"
ok "and writes in the folder" test -e "$D/ran"
rm -f "$D/ran"
out=$(with_config "$CFG" "$OWSTEST_ROOT/owsbx" run --rw "$D" -- /bin/sh -c "touch '$D/ran' && id -u" 2>"$SCR/err")
is "$(uid_of "$out")" "$TU_UID" "so does root_runs_as in the machine's config" || diag "$(cat "$SCR/err")"
out=$(with_config "$CFG" "$HOST" "$D" -- /usr/bin/id -u 2>"$SCR/err")
is "$(uid_of "$out")" "$TU_UID" "and for a host with a NULL config" || diag "$(cat "$SCR/err")"
rm -rf "$D"

# nothing of these sessions left
left=$(for d in $RDIRS; do find "$d" -mindepth 1 -maxdepth 1 2>/dev/null; done)
is "$left" "" "no session folder left by the root-hosted sessions"
owstest_check_clean
done_testing
