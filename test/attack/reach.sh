# Reaching outside by other ways than reading a file: the person's files' metadata (stat,
# chmod, times), emptying or linking them, watching the home with inotify; the person's
# other processes (their command line and environment, a signal, their limits, priority).
# In the sandbox's own namespaces none of it is there; in the host's (no user namespace)
# Landlock and seccomp refuse what they can, and what they cannot is a promise the
# session lists as partial: that attack skips with the reason.
ATTACKS="$ATTACKS reach"

REACH_PY='
import ctypes, errno, os, resource, sys
libc = ctypes.CDLL(None, use_errno=True)
key, bashrc, home, rw, pid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

def ptrace():
    if libc.ptrace(16, pid, 0, 0) != 0:                  # PTRACE_ATTACH
        raise OSError(ctypes.get_errno(), "ptrace")

def inotify():
    fd = libc.inotify_init1(0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    if libc.inotify_add_watch(fd, home.encode(), 0xfff) < 0:
        raise OSError(ctypes.get_errno(), "inotify_add_watch")

steps = {
    "ctl-stat-rw": lambda: os.stat(rw),
    "ctl-own-nice": lambda: os.setpriority(os.PRIO_PROCESS, 0, 1),
    "ctl-own-limit": lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)),
    "stat-key": lambda: os.stat(key),
    "chmod-key": lambda: os.chmod(key, 0o644),
    "touch-bashrc": lambda: os.utime(bashrc, (0, 0)),
    "truncate-bashrc": lambda: os.truncate(bashrc, 0),
    "link-key": lambda: os.link(key, rw + "/reach-key"),
    "inotify-home": inotify,
    "cmdline-outside": lambda: open("/proc/%d/cmdline" % pid, "rb").read(),
    "environ-outside": lambda: open("/proc/%d/environ" % pid, "rb").read(),
    "signal-outside": lambda: os.kill(pid, 15),
    "limit-outside": lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3)),
    "nice-outside": lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
    "nice-user": lambda: os.setpriority(os.PRIO_USER, 0, 19),
    "ptrace-outside": ptrace,
}
for name in sys.argv[6:]:
    try:
        steps[name]()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
'

attack_reach() {
	local key=$PHOME/.ssh/id_ed25519 bashrc=$PHOME/.bashrc out step victim before after
	# nice-user renices every process of the uid the command can see: harmless inside
	# a PID namespace, refused in the host's; either way the process outside keeps its own.
	local ctls="ctl-stat-rw ctl-own-nice ctl-own-limit" tried="nice-user"
	local refused="truncate-bashrc link-key inotify-home environ-outside limit-outside
		nice-outside ptrace-outside" meta=""
	# What a session keeps only in part is not tried (a chmod would stick), but said.
	if partial files.outside_metadata "stat, chmod and times of the person's files"; then :; else
		refused="$refused stat-key chmod-key touch-bashrc"
		meta=1
	fi
	partial processes.outside_visible "the command line of the person's other processes" ||
		refused="$refused cmdline-outside"
	partial signals.outside "a signal to the person's other processes" ||
		refused="$refused signal-outside"
	before=$(stat -c '%a %Y' "$key" "$bashrc"; md5sum <"$bashrc")
	local nap="59.$RANDOM" job
	as_person sleep "$nap" &
	job=$!
	for _ in $(seq 100); do
		victim=$(pgrep -u "$PERSON" -fx "sleep $nap") && break
		sleep 0.02
	done
	reach_ps() { awk '{print $19}' "/proc/$1/stat"; grep '^Max open files' "/proc/$1/limits"; }
	local vbefore vafter
	vbefore=$(reach_ps "$victim")
	# shellcheck disable=SC2086 # the lists are words
	out=$(sbx -- /usr/bin/python3 -c "$REACH_PY" "$key" "$bashrc" "$PHOME" "$RW" "$victim" \
		$ctls $tried $refused 2>&1)
	for step in $ctls; do
		check "$(tag) control: $step works inside" grep -qx "$step OK" <<<"$out"
	done
	for step in $refused; do
		like "$(grep "^$step " <<<"$out")" "^$step (EPERM|EACCES|ENOENT|ENOSYS|ESRCH|EXDEV)$" \
			"$(tag) $step is refused"
	done
	after=$(stat -c '%a %Y' "$key" "$bashrc"; md5sum <"$bashrc")
	if [ -n "$meta" ]; then
		check "$(tag) the key and ~/.bashrc keep their modes, times and content" \
			test "$before" = "$after"
	else
		check "$(tag) ~/.bashrc keeps its content" \
			test "$(tail -1 <<<"$before")" = "$(tail -1 <<<"$after")"
	fi
	check "$(tag) the person's process outside is alive" kill -0 "$victim"
	vafter=$(reach_ps "$victim" 2>&1)
	check "$(tag) ... with its priority and limits as they were" test "$vbefore" = "$vafter"
	kill "$victim" 2>/dev/null
	wait "$job" 2>/dev/null
	as_person rm -f "$RW/reach-key"
}
