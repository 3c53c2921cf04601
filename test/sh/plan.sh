#!/bin/bash
# shellcheck disable=SC2016 # single-quoted programs run inside
# The plan (ows_session_plan) as owsbx prints it. `run -n/--dry-run` prints on stdout what the
# wall would be built from (provider and why, who commands run as, network and sites,
# folders, masks, guard, limits) and runs nothing: the command does not run, and no account
# line, nft table, /tmp entry, session folder, probe socket or process is left.
# `run -v/--verbose`, `verify -v` and OWSBX_DEBUG=1 print the same plan on stderr before the
# session opens, the command's output and status untouched; OWSBX_DEBUG=0 does not. Names
# are escaped (no raw ESC). A plan the library refuses (the home as a session folder) exits
# as open would, 2.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

# The read-only folder holds a FIFO (masked), the read-write one a repository (guarded).
mkfifo "$TU_RO/pipe"
chown "$TU_UID:$TU_GID" "$TU_RO/pipe"
as_user git init -q "$TU_WORK"
ESCD="$TU_WORK/$(printf 'esc\033[31mred')"
mkdir "$ESCD"
chown "$TU_UID:$TU_GID" "$ESCD"

# What a session would leave: account files, nft tables, what in /tmp, /dev/shm and /run is
# the person's or the library's (other tests may run meanwhile), the person's processes.
state() {
	sha256sum /etc/passwd /etc/group
	nft list tables 2>/dev/null
	find /tmp /dev/shm /run -maxdepth 1 \( -user "$TU_UID" -o -name '*owsandbox*' \) | sort
	ls -a "/run/owsandbox-$TU_UID" "/tmp/owsandbox-$TU_UID" 2>&1
	owstest_user_procs
}
before=$(state)
sbx run --dry-run --rw "$TU_WORK" --ro "$TU_RO" --rw "$ESCD" --net allowlist \
	--allow-site example.com --deny-site bad.example -- touch "$TU_WORK/ran"
is "$SBX_RC" 0 "run --dry-run exits 0" || sbx_diag
ok "and the command did not run" test ! -e "$TU_WORK/ran"
is "$(state)" "$before" "nothing is left: account files, nft tables, /tmp, /dev/shm, processes"
like "$SBX_OUT" "dry run: .*nothing was run" "the plan says it is a dry run"
like "$SBX_OUT" "provider: landlock \(from " "it names the provider and why"
like "$SBX_OUT" "runs as: $TU \(the person" "and who the commands run as, and why"
like "$SBX_OUT" "network: allowlist; proxy: the session's own" "the network mode and its proxy"
like "$SBX_OUT" "allowed site: example.com" "the allowed site"
like "$SBX_OUT" "denied site: bad.example" "the denied site"
like "$SBX_OUT" "folder: $TU_WORK \(read-write\)" "the read-write folder"
like "$SBX_OUT" "folder: $TU_RO \(read-only\)" "the read-only folder"
like "$SBX_OUT" "mask: $TU_RO/pipe \(covered empty\)" "the FIFO of the read-only folder is masked"
like "$SBX_OUT" "guard: $TU_WORK/\.git[^ ]* \((read-only|pinned)\)" "the repository is guarded"
like "$SBX_OUT" "limit: processes [0-9]+ \(default\)" "the process limit and where it comes from"
like "$SBX_OUT" "limit: memory [0-9]+ MB" "the memory limit"
like "$SBX_OUT" 'esc\\x1b\[31mred' "a control character in a name is written out"
unlike "$SBX_OUT" $'\033' "no raw escape reaches the terminal"
is "$SBX_ERR" "" "nothing on stderr"

sbx run -n --rw "$TU_WORK"
is "$SBX_RC" 0 "-n needs no command"
sbx run --rw "$TU_WORK"
is "$SBX_RC" 2 "without --dry-run a command is still needed"

sbx run --dry-run --rw "$TU_HOME" -- true
is "$SBX_RC" 2 "a plan the library refuses (the home) exits 2, as open would" || sbx_diag
like "$SBX_ERR" "owsbx: " "and says why"
is "$(state)" "$before" "and leaves nothing"

sbx run --dry-run --net none --allow-site example.com -- true
like "$SBX_ERR" "no effect with --net none" "a site under none is still warned about"

# --verbose: the plan on stderr, then the command as ever.
sbx run -v --rw "$TU_WORK" -- sh -c 'echo out; exit 3'
is "$SBX_RC" 3 "run -v keeps the command's status" || sbx_diag
is "$SBX_OUT" "out" "and its stdout"
like "$SBX_ERR" "the wall is built from:" "the plan is on stderr"
like "$SBX_ERR" "network: none; proxy: none" "with the network plan"
like "$SBX_ERR" "network namespace: " "and the namespace"

AS_USER_ENV=(OWSBX_DEBUG=1)
sbx run --rw "$TU_WORK" -- true
is "$SBX_RC" 0 "OWSBX_DEBUG=1 run exits 0"
like "$SBX_ERR" "the wall is built from:.*folder: $TU_WORK" "OWSBX_DEBUG=1 prints the plan"
AS_USER_ENV=(OWSBX_DEBUG=0)
sbx run --rw "$TU_WORK" -- true
is "$SBX_ERR" "" "OWSBX_DEBUG=0 does not"
AS_USER_ENV=()

sbx verify -v --json --ro "$TU_RO"
is "$SBX_RC" 0 "verify -v passes" || sbx_diag
like "$SBX_ERR" "the wall is built from:.*mask: $TU_RO/pipe" "verify -v prints the plan on stderr"
ok "and its report is still JSON" "$PY" -c 'import json,sys; json.loads(sys.argv[1])' "$SBX_OUT"

owstest_check_clean
done_testing
