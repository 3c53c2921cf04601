#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# owsbx run by root: the command does not keep root's powers. It runs as SUDO_UID when set,
# else as nobody (or the policy's run_as); its uid is not 0, its capabilities (effective,
# permitted, bounding, ambient, inheritable) are all 0, /etc/shadow is unreadable, /root is
# not listable, setuid(0) fails. Controls: the same reads work for root outside.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

# shellcheck disable=SC2016
WHO='
import os, sys, errno
def st(k):
    for l in open("/proc/self/status"):
        if l.startswith(k + ":"):
            return l.split(":", 1)[1].strip()
    return "?"
def tryit(f):
    try:
        f(); return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print("uid=%d\neuid=%d\ngid=%d" % (os.getuid(), os.geteuid(), os.getgid()))
print("groups=" + ",".join(str(g) for g in os.getgroups()))
for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh", "NoNewPrivs"):
    print("%s=%s" % (k, st(k)))
print("shadow=" + tryit(lambda: open("/etc/shadow").read()))
print("root=" + tryit(lambda: os.listdir("/root")))
print("setuid0=" + tryit(lambda: os.setuid(0)))
print("home=" + tryit(lambda: os.listdir(sys.argv[1])))
'
# the session folders of a root host: under root's or nobody's /tmp/owsandbox-<uid>
RDIRS="/tmp/owsandbox-0 /tmp/owsandbox-$(id -u nobody)"
for d in $RDIRS; do [ -e "$d" ] || owstest_rmdir_at_exit "$d"; done
entries() { local d; for d in $RDIRS; do find "$d" -mindepth 1 -maxdepth 1 2>/dev/null; done | sort; }
RBEFORE=$(entries)
ROOT_ENV=(PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=/root USER=root LOGNAME=root)
kv() { sed -n "s/^$1=//p" <<<"$OUT"; }

# controls: root outside
ok "control: root reads /etc/shadow outside" test -r /etc/shadow -a -s /etc/shadow
ok "control: root lists /root outside" ls /root

check_powerless() {
	local who=$1 want_uid=$2
	like "$(kv uid)" "^[0-9]+$" "$who: the command ran ($RC)" || diag "$OUT" "$ERR"
	is "$(kv uid)" "$want_uid" "$who: runs as uid $want_uid"
	isnt "$(kv euid)" 0 "$who: effective uid is not 0"
	isnt "$(kv gid)" 0 "$who: gid is not 0"
	unlike ",$(kv groups)," ",0," "$who: not in group root ($(kv groups))"
	is "$(kv groups)" "$(kv gid)" "$who: only its primary group, no supplementary one"
	for c in CapEff CapPrm CapBnd CapAmb CapInh; do
		is "$(kv "$c")" 0000000000000000 "$who: $c is 0"
	done
	is "$(kv shadow)" EACCES "$who: /etc/shadow unreadable (EACCES)"
	is_one_of "$(kv root)" "EACCES ENOENT" "$who: /root not listable ($(kv root))"
	is "$(kv setuid0)" EPERM "$who: setuid(0) fails with EPERM"
}

# root, no SUDO_UID: nobody
OUT=$(cd / && env -i "${ROOT_ENV[@]}" timeout -k 5 60 "$OWSBX" run -- "$PY" -c "$WHO" "$TU_HOME" 2>"$TU_TMP/err" </dev/null)
RC=$?
ERR=$(cat "$TU_TMP/err")
is "$RC" 0 "root without SUDO_UID: the session runs (rc $RC)" || diag "$ERR"
check_powerless "root, no SUDO_UID" "$(id -u nobody)"

# root with SUDO_UID of the person: runs as the person, behind the same wall
OUT=$(cd / && env -i "${ROOT_ENV[@]}" SUDO_UID="$TU_UID" SUDO_GID="$TU_GID" SUDO_USER="$TU" \
	timeout -k 5 60 "$OWSBX" run -- "$PY" -c "$WHO" "$TU_HOME" 2>"$TU_TMP/err" </dev/null)
RC=$?
ERR=$(cat "$TU_TMP/err")
is "$RC" 0 "root with SUDO_UID: the session runs (rc $RC)" || diag "$ERR"
check_powerless "root, SUDO_UID=person" "$TU_UID"
is_one_of "$(kv home)" "EACCES ENOENT" "root, SUDO_UID=person: the person's home is not listable ($(kv home))"

# the policy's run_as
printf '{"run_as": "%s"}\n' "$TU" >"$TU_TMP/runas.json"
chmod 0644 "$TU_TMP/runas.json"
OUT=$(cd / && env -i "${ROOT_ENV[@]}" timeout -k 5 60 "$OWSBX" run --policy "$TU_TMP/runas.json" -- "$PY" -c "$WHO" "$TU_HOME" 2>"$TU_TMP/err" </dev/null)
RC=$?
ERR=$(cat "$TU_TMP/err")
is "$RC" 0 "root with a policy run_as: the session runs (rc $RC)" || diag "$ERR"
is "$(kv uid)" "$TU_UID" "root with policy run_as=$TU: runs as the person"
is "$(kv CapEff)" 0000000000000000 "root with policy run_as: no effective capability"

# nothing of these sessions left (they ran as nobody and as the person)
is "$(entries)" "$RBEFORE" "no session folder left by the root-hosted sessions ($RDIRS)"
owstest_check_clean
done_testing
