# test/limits_lib.sh: what the limit tests run inside a sandbox, and their checks. Source it
# after lib.sh or account_lib.sh.
#
#   LIMITS_PY        a python program for `python3 -c`, first argument the step:
#                      show        "cgroup DIR" for each of its cgroups (as the host names
#                                  them), then "pids V N", "mem V BYTES", "swap V BYTES",
#                                  "cpu V QUOTA PERIOD" (V: v1 or v2; "-" when not limited)
#                      forkbomb N  forks up to N children that wait; prints how many it got
#                      balloon MB  allocates and touches MB MiB, printing "got N" as it goes
#                                  and "survived N" if nothing stopped it
#                      spin S      busy for S seconds; prints "share F", its CPU time / wall
#   cgroups_of TEXT  the DIRs of the "cgroup DIR" lines of TEXT
#   cgroups_gone TEXT  succeeds when none of them exists any more
#   cg_v2_root       the cgroup v2 mount (/sys/fs/cgroup, /sys/fs/cgroup/unified) or nothing
#   cg_v2_offers C.. succeeds when the cgroup v2 root offers every controller named
#
# The default caps (lib/linux/limits_plan.c) and what presses on them:
#   DEFAULT_PROCESSES, RAM (bytes), DEFAULT_MEMORY (half of it), DEFAULT_TMPFS (a quarter)
#   limits_hog_build DIR UID:GID  builds test/sh/limits_hog.c into DIR (the person's), or fails
#   near GOT WANT [BY]  succeeds when GOT is WANT within BY bytes (default a page: the kernel
#                    rounds to pages; the launcher takes MiB)
#   DEFAULT_SHOW     a shell program printing, one a line: "nproc N" (ulimit -u), "oom N",
#                    "oom_lowered yes|no" (after trying to write 0), "size DIR BYTES INODES"
#                    for /tmp, /dev/shm and $TMPDIR

# shellcheck shell=bash disable=SC2016,SC2034 # a python program in single quotes, used by the sourcer
LIMITS_PY='
import os, sys, signal, time

def groups():
    v2, v1 = None, {}
    for line in open("/proc/self/cgroup"):
        hid, ctrls, path = line.rstrip("\n").split(":", 2)
        if hid == "0":
            v2 = path
        else:
            for c in ctrls.split(","):
                v1[c] = "/sys/fs/cgroup/" + ctrls.replace("name=", "") + path
    base = None
    for b in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if v2 and v2 != "/" and os.path.exists(b + v2 + "/cgroup.procs"):
            base = b + v2
            break
    return base, v1

def read(p):
    try:
        return open(p).read().split()
    except OSError:
        return None

def show():
    base, v1 = groups()
    for d in sorted(set(d for d in [base] + list(v1.values()) if d)):
        if "owsandbox-" in d:
            print("cgroup", d)
    def pick(name, f2, ctrl, f1s):
        if base and read(base + "/" + f2) is not None:
            print(name, "v2", *read(base + "/" + f2))
            return
        vals = [read(v1[ctrl] + "/" + f) for f in f1s] if ctrl in v1 else [None]
        if all(v is not None for v in vals):
            print(name, "v1", *[v[0] for v in vals])
        else:
            print(name, "-")
    pick("pids", "pids.max", "pids", ["pids.max"])
    pick("mem", "memory.max", "memory", ["memory.limit_in_bytes"])
    pick("swap", "memory.swap.max", "memory", ["memory.memsw.limit_in_bytes"])
    pick("cpu", "cpu.max", "cpu", ["cpu.cfs_quota_us", "cpu.cfs_period_us"])

def forkbomb(n):
    kids = []
    try:
        for i in range(n):
            pid = os.fork()
            if pid == 0:
                signal.pause()
            kids.append(pid)
    except OSError:
        pass
    print(len(kids), flush=True)
    for k in kids:
        os.kill(k, 9)

def balloon(mb):
    held = []
    for i in range(mb):
        held.append(b"\x01" * (1 << 20))
        if i % 8 == 7:
            print("got", i + 1, flush=True)
    print("survived", mb, flush=True)

def spin(s):
    t0, c0 = time.time(), time.process_time()
    while time.time() - t0 < s:
        pass
    print("share %.2f" % ((time.process_time() - c0) / (time.time() - t0)), flush=True)

step = sys.argv[1]
if step == "show":
    show()
elif step == "forkbomb":
    forkbomb(int(sys.argv[2]))
elif step == "balloon":
    balloon(int(sys.argv[2]))
elif step == "spin":
    spin(float(sys.argv[2]))
'

cgroups_of() { sed -n 's/^cgroup //p' <<<"$1"; }
cgroups_gone() {
	local d
	for d in $(cgroups_of "$1"); do
		[ -e "$d" ] && return 1
	done
	return 0
}
cg_v2_root() {
	local d
	for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		[ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ] && { echo "$d"; return 0; }
	done
	return 1
}
cg_v2_offers() {
	local root c
	root=$(cg_v2_root) || return 1
	for c in "$@"; do
		grep -qw "$c" "$root/cgroup.controllers" || return 1
	done
}

DEFAULT_PROCESSES=4096
RAM=$(awk '$1 == "MemTotal:" {printf "%.0f", $2 * 1024}' /proc/meminfo)
DEFAULT_MEMORY=$((RAM / 2))
DEFAULT_TMPFS=$((RAM / 4))
limits_hog_build() {
	mkdir -p "$1" &&
		cc -std=c11 -O2 -D_GNU_SOURCE -o "$1/limits_hog" "$(dirname "${BASH_SOURCE[0]}")/sh/limits_hog.c" &&
		chown -R "$2" "$1"
}
near() {
	[ -n "$1" ] && [ "$1" -eq "$1" ] 2>/dev/null || return 1
	[ $(($1 > $2 ? $1 - $2 : $2 - $1)) -le "${3:-4096}" ]
}
DEFAULT_SHOW='echo "nproc $(ulimit -u)"; echo "oom $(cat /proc/self/oom_score_adj)"
if (echo 0 >/proc/self/oom_score_adj) 2>/dev/null; then echo "oom_lowered yes"; else echo "oom_lowered no"; fi
for d in /tmp /dev/shm "$TMPDIR"; do
	echo "size $d $(stat -f -c "%b %S %c" "$d" | awk "{printf \"%.0f %s\", \$1 * \$2, \$3}")"
done'
