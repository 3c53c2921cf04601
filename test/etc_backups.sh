# shellcheck shell=sh
# test/etc_backups.sh: the backups the account tools leave in /etc, put back exactly.
# POSIX sh: sourced by the bash tests (test/user.sh, test/account_lib.sh, acl_grant.sh),
# by test/run.sh and by the sh test machine_setup.sh.
#
# useradd, userdel, usermod, groupadd, groupdel and gpasswd copy each account file they
# rewrite to a backup beside it, creating the backup when there was none (measured with
# strace, shadow 4.13): /etc/{passwd,group,shadow,gshadow,subuid,subgid}-, and lckpwdf()
# creates /etc/.pwd.lock when it is missing. On a fresh machine the backups may not
# exist: a test that only copied back the ones it had seen left the test person's lines
# in a new /etc/subuid-. So a snapshot records each file or its absence, and a restore
# makes each exactly that again: same bytes, mode, owner and mtime, or gone.
#
#   owstest_etc_snapshot DIR   copy each backup into DIR (cp -a), or mark it DIR/NAME.absent
#   owstest_etc_restore DIR    put each back as DIR says; one that was absent is removed
#   owstest_etc_diff DIR       one line per backup that is not as DIR says; nothing if all are
#
# Hold the /etc lock (flock on /etc, as test/user.sh does) from the snapshot to the
# restore: two tests interleaving would restore each other's state.

OWSTEST_ETC_BACKUPS="passwd- group- shadow- gshadow- subuid- subgid- .pwd.lock"

# The state of one file that counts: bytes, mode, owner, group, mtime.
_owstest_etc_stat() { stat -c '%a %u %g %Y' "$1" 2>/dev/null; }

owstest_etc_snapshot() {
	_d=$1
	mkdir -p "$_d" || return 1
	for _b in $OWSTEST_ETC_BACKUPS; do
		rm -f "$_d/$_b" "$_d/$_b.absent"
		if [ -e "/etc/$_b" ]; then
			cp -a "/etc/$_b" "$_d/$_b" || return 1
		else
			: >"$_d/$_b.absent" || return 1
		fi
	done
}

owstest_etc_restore() {
	_d=$1
	[ -d "$_d" ] || return 0
	for _b in $OWSTEST_ETC_BACKUPS; do
		if [ -e "$_d/$_b.absent" ]; then
			rm -f "/etc/$_b"
		elif [ -e "$_d/$_b" ]; then
			# The lock file is only ever created: rewriting it would break the lock of
			# whoever holds it now.
			[ "$_b" = .pwd.lock ] && [ -e "/etc/$_b" ] && continue
			if [ -e "/etc/$_b" ] && cmp -s "$_d/$_b" "/etc/$_b" &&
				[ "$(_owstest_etc_stat "$_d/$_b")" = "$(_owstest_etc_stat "/etc/$_b")" ]; then
				continue
			fi
			# beside it, then renamed over it: never a half-written backup
			cp -a "$_d/$_b" "/etc/$_b.owstest" && mv -f "/etc/$_b.owstest" "/etc/$_b"
		fi
	done
	return 0
}

owstest_etc_diff() {
	_d=$1
	for _b in $OWSTEST_ETC_BACKUPS; do
		if [ -e "$_d/$_b.absent" ]; then
			[ -e "/etc/$_b" ] && echo "/etc/$_b did not exist before and does now ($(wc -c <"/etc/$_b") bytes)"
		elif [ -e "$_d/$_b" ]; then
			if [ ! -e "/etc/$_b" ]; then
				echo "/etc/$_b existed before and is gone"
			elif [ "$_b" != .pwd.lock ] && ! cmp -s "$_d/$_b" "/etc/$_b"; then
				echo "/etc/$_b differs from before"
			fi
		fi
	done
	return 0
}
