/*
 * The seccomp filter, loaded for real in child processes: what each network
 * mode lets a process create, and what no sandbox may ever call.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"
#include "tap.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

/* Runs `probe` in a child under the program; returns the errno it reports (0: allowed). */
static int under_prog(const ows__seccomp *f, int (*probe)(void))
{
	int pfd[2];
	if (pipe(pfd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_fprog prog = {.len = f->len, .filter = (struct sock_filter *)f->insns};
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
			_exit(100);
		int e = probe();
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
			_exit(101);
		_exit(0);
	}
	close(pfd[1]);
	int e = -1;
	if (read(pfd[0], &e, sizeof(e)) != sizeof(e))
		e = -2;
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	return e;
}

static int under_flags(ows_net net, unsigned flags, int (*probe)(void))
{
	ows__seccomp f;
	return ows__seccomp_build(&f, net, flags, NULL) != 0 ? -1 : under_prog(&f, probe);
}

/* Runs `probe` in a child under the filter; returns the errno it reports (0: allowed). */
static int under_filter(ows_net net, int (*probe)(void)) { return under_flags(net, 0, probe); }

/*
 * Under the guard every command adds, with this process as "init" (first),
 * or as the call's reaper (second, after an init that is not this process).
 */
static int under_guard_as(bool as_reaper, bool no_pidfd_signal, int (*probe)(void))
{
	ows__seccomp f;
	const pid_t pids[2] = {as_reaper ? 1 : getpid(), getpid()};
	int n = ows__seccomp_guard_init(f.insns, OWS_SECCOMP_MAX_INSNS, pids, as_reaper ? 2 : 1,
					no_pidfd_signal);
	if (n < 0)
		return -1;
	f.len = (unsigned short)n;
	return under_prog(&f, probe);
}

static int under_guard(bool no_pidfd_signal, int (*probe)(void))
{
	return under_guard_as(false, no_pidfd_signal, probe);
}

static int sock(int domain, int type, int proto)
{
	int fd = socket(domain, type, proto);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int tcp(void) { return sock(AF_INET, SOCK_STREAM, 0); }
static int udp(void) { return sock(AF_INET, SOCK_DGRAM, 0); }
static int tcp6(void) { return sock(AF_INET6, SOCK_STREAM, 0); }
static int mptcp(void) { return sock(AF_INET, SOCK_STREAM, 262); }
static int vsock(void) { return sock(AF_VSOCK, SOCK_STREAM, 0); }
static int packet(void) { return sock(AF_PACKET, SOCK_DGRAM, 0); }
static int unix_sock(void) { return sock(AF_UNIX, SOCK_STREAM, 0); }
static int pair_inet(void)
{
	int sv[2];
	if (socketpair(AF_INET, SOCK_STREAM, 0, sv) == 0) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	return errno;
}
static int uring(void) { return syscall(SYS_io_uring_setup, 1, NULL) < 0 ? errno : 0; }
static int userns(void) { return unshare(CLONE_NEWUSER) < 0 ? errno : 0; }
static int clone3_call(void) { return syscall(SYS_clone3, NULL, 0) < 0 ? errno : 0; }
static int keyring(void) { return syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -4, 0) < 0 ? errno : 0; }
static int tiocsti(void)
{
	char c = 'x';
	return ioctl(0, TIOCSTI, &c) < 0 ? errno : 0;
}
static int plain_fork(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0)
		return errno;
	int st;
	waitpid(p, &st, 0);
	return 0;
}

/*
 * Set-ID modes.  Each probe makes its own file in `scratch` and calls the
 * system call itself (libc may route chmod() through fchmodat()).
 */
static char scratch[] = "/tmp/owstest-seccomp-XXXXXX";

static const char *in_scratch(const char *name)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return path;
}

/* `name` in scratch: a new empty 0755 file, its path returned; NULL on failure. */
static const char *fresh(const char *name)
{
	const char *path = in_scratch(name);
	unlink(path);
	rmdir(path);
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0755);
	if (fd < 0)
		return NULL;
	close(fd);
	return path;
}

/* Where a creating probe makes `name`: nothing there yet. */
static const char *gone(const char *name)
{
	const char *path = in_scratch(name);
	unlink(path);
	rmdir(path);
	return path;
}

static int rc(long r) { return r < 0 ? errno : 0; }

static int fchmod_to(unsigned long mode)
{
	const char *path = fresh("fchmod");
	int fd = path ? open(path, O_RDONLY) : -1;
	if (fd < 0)
		return -3;
	int e = rc(syscall(SYS_fchmod, fd, mode));
	struct stat st;
	if (e == 0 && (fstat(fd, &st) != 0 || (st.st_mode & 07777) != (mode & 07777)))
		e = -4;
	close(fd);
	return e;
}

static int chmod_suid(void) { return rc(syscall(SYS_chmod, fresh("chmod"), 04755)); }
static int chmod_sgid(void) { return rc(syscall(SYS_chmod, fresh("chmod"), 02755)); }
static int chmod_plain(void) { return rc(syscall(SYS_chmod, fresh("chmod"), 0644)); }
static int fchmod_suid(void) { return fchmod_to(04755); }
static int fchmod_plain(void) { return fchmod_to(0700); }
/* mode_t is 32 bits: the kernel ignores the upper half, and so must the filter. */
static int fchmod_suid_high_junk(void) { return fchmod_to(0xffffffff00000000ul | 04755); }
static int fchmod_plain_high_suid(void) { return fchmod_to(((unsigned long)S_ISUID << 32) | 0755); }
static int fchmodat_sgid(void)
{
	return rc(syscall(SYS_fchmodat, AT_FDCWD, fresh("fchmodat"), 02755, 0));
}
static int fchmodat2_suid(void)
{
	return rc(syscall(__NR_fchmodat2, AT_FDCWD, fresh("fchmodat2"), 04755, 0));
}
static int sticky_dir(void)
{
	const char *path = gone("sticky");
	return mkdir(path, 0755) != 0 ? errno : rc(syscall(SYS_chmod, path, 01777));
}
static int sticky_own(void)
{
	const char *path = gone("sticky");
	return mkdir(path, 0755) != 0 ? errno : rc(syscall(SYS_chmod, path, 01755));
}
static int chmod_777(void) { return rc(syscall(SYS_chmod, fresh("chmod"), 0777)); }
static int chmod_602(void) { return rc(syscall(SYS_chmod, fresh("chmod"), 0602)); }
static int chmod_775(void) { return rc(syscall(SYS_chmod, fresh("chmod"), 0775)); }
static int fchmod_666(void) { return fchmod_to(0666); }
static int fchmodat_777(void) { return rc(syscall(SYS_fchmodat, AT_FDCWD, fresh("fchmodat"), 0777, 0)); }
static int fchmodat2_777(void)
{
	return rc(syscall(__NR_fchmodat2, AT_FDCWD, fresh("fchmodat2"), 0777, 0));
}
/* system.posix_acl_access, version 2: user::rw-, group::r--, other::rw- (write for others). */
static int acl_other_write(void)
{
	static const unsigned char acl[] = {2, 0, 0, 0, 1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
					    4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
					    0x20, 0, 6, 0, 0xff, 0xff, 0xff, 0xff};
	const char *path = fresh("acl");
	struct stat st;
	int e = rc(syscall(SYS_setxattr, path, "system.posix_acl_access", acl, sizeof(acl), 0));
	/* Three entries only: the kernel folds them into the mode. */
	if (e == 0 && stat(path, &st) == 0 && (st.st_mode & S_IWOTH))
		e = -4; /* it was set */
	return e;
}
static int fsetxattr_user(void)
{
	const char *path = fresh("xattr");
	int fd = path ? open(path, O_RDONLY) : -1;
	if (fd < 0)
		return -3;
	char got[8];
	int e = rc(syscall(SYS_fsetxattr, fd, "user.owstest", "x", 1, 0));
	if (e == 0 && fgetxattr(fd, "user.owstest", got, sizeof(got)) >= 0)
		e = -4;
	close(fd);
	return e;
}
/* The read idiom: 0 when umask(0) returned the umask set before the filter (022). */
static int umask_read(void)
{
	long old = syscall(SYS_umask, 0);
	syscall(SYS_umask, old);
	return old != 022 ? -3 : 0;
}
static int umask_closed(void)
{
	long old = syscall(SYS_umask, 027), now = syscall(SYS_umask, 022);
	return old != 022 ? -3 : now != 027 ? -4 : 0;
}
static int open_with(long nr, unsigned long mode)
{
	const char *path = gone("open");
	long fd = nr == SYS_openat
			  ? syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY, mode)
		  : nr == SYS_creat ? syscall(SYS_creat, path, mode)
				    : syscall(SYS_open, path, O_CREAT | O_WRONLY, mode);
	if (fd >= 0)
		close((int)fd);
	return rc(fd);
}
static int open_suid(void) { return open_with(SYS_open, 04755); }
static int open_plain(void) { return open_with(SYS_open, 0644); }
static int openat_sgid(void) { return open_with(SYS_openat, 02755); }
static int openat_plain(void) { return open_with(SYS_openat, 0644); }
static int creat_suid(void) { return open_with(SYS_creat, 04755); }
static int creat_plain(void) { return open_with(SYS_creat, 0644); }
static int openat2_call(void)
{
	struct {
		unsigned long long flags, mode, resolve;
	} how = {.flags = O_RDONLY};
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd >= 0)
		close((int)fd);
	return rc(fd);
}
static int mknod_suid(void) { return rc(syscall(SYS_mknod, gone("node"), S_IFREG | 04755, 0)); }
static int mknod_plain(void) { return rc(syscall(SYS_mknod, gone("node"), S_IFREG | 0644, 0)); }
static int mknodat_sgid(void)
{
	return rc(syscall(SYS_mknodat, AT_FDCWD, gone("node"), S_IFREG | 02755, 0));
}
static int mknod_whiteout(void) { return rc(syscall(SYS_mknod, gone("node"), S_IFCHR | 0600, 0)); }
static int mknodat_whiteout(void)
{
	return rc(syscall(SYS_mknodat, AT_FDCWD, gone("node"), S_IFCHR | 0600, 0));
}
static int mknodat_block(void)
{
	return rc(syscall(SYS_mknodat, AT_FDCWD, gone("node"), S_IFBLK | 0600, makedev(7, 0)));
}
static int mknod_fifo(void) { return rc(syscall(SYS_mknod, gone("node"), S_IFIFO | 0644, 0)); }
static int rename_with(unsigned int flags)
{
	char from[sizeof(scratch) + 8], to[sizeof(scratch) + 8];
	snprintf(from, sizeof(from), "%s/from", scratch);
	snprintf(to, sizeof(to), "%s/to", scratch);
	unlink(to);
	int fd = open(from, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	int r = rc(syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags));
	unlink(from);
	unlink(to);
	return r;
}
static int rename_whiteout(void) { return rename_with(1u << 2); /* RENAME_WHITEOUT */ }
static int rename_noreplace(void) { return rename_with(1u << 0); /* RENAME_NOREPLACE */ }
static int mkdir_sgid(void) { return rc(syscall(SYS_mkdir, gone("dir"), 02755)); }
static int mkdir_plain(void) { return rc(syscall(SYS_mkdir, gone("dir"), 0755)); }
static int mkdirat_sgid(void) { return rc(syscall(SYS_mkdirat, AT_FDCWD, gone("dir"), 02755)); }
static int mkdirat_plain(void) { return rc(syscall(SYS_mkdirat, AT_FDCWD, gone("dir"), 0755)); }

/* ------------------------------------------------ what Docker's default profile refuses */
static long sys6(long nr, long a, long b, long c, long d, long e)
{
	return rc(syscall(nr, a, b, c, d, e, 0));
}
/* Harmless arguments: outside, each does nothing or fails on them (EINVAL, EBADF...). */
static int persona_norandom(void) { return sys6(SYS_personality, 0x0040000, 0, 0, 0, 0); }
static int persona_query(void) { return sys6(SYS_personality, 0xffffffff, 0, 0, 0, 0); }
static int quota(void) { return sys6(SYS_quotactl, 0x800001 /* Q_SYNC */ << 8, 0, 0, 0, 0); }
static int quota_fd(void) { return sys6(443 /* quotactl_fd */, -1, 0, 0, 0, 0); }
static int pages_move(void) { return sys6(SYS_move_pages, 0, 0, 0, 0, 0); }
static int pages_migrate(void) { return sys6(SYS_migrate_pages, 0, 0, 0, 0, 0); }
static int numa_bind(void) { return sys6(SYS_mbind, 0, 0, 0, 0, 0); }
static int numa_set(void) { return sys6(SYS_set_mempolicy, 0, 0, 0, 0, 0); }
static int numa_get(void) { return sys6(SYS_get_mempolicy, 0, 0, 0, 0, 0); }
static int numa_home(void) { return sys6(450 /* set_mempolicy_home_node */, 0, 0, 0, 0, 0); }
static int compare_fds(void) { return sys6(SYS_kcmp, getpid(), getpid(), 0, 0, 0); }
static int steal_fd(void) { return sys6(438 /* pidfd_getfd */, -1, 0, 0, 0, 0); }
static int advise_other(void) { return sys6(440 /* process_madvise */, -1, 0, 0, 0, 0); }
static int set_time(void)
{
	struct timeval tv = {.tv_usec = 2000000}; /* invalid: EINVAL outside */
	return sys6(SYS_settimeofday, (long)&tv, 0, 0, 0, 0);
}
static int set_clock(void)
{
	struct timespec ts = {0};
	return sys6(SYS_clock_settime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0);
}
static int fs_stats(void)
{
	char buf[64];
	return sys6(SYS_ustat, 0, (long)buf, 0, 0, 0);
}
static int fs_types(void) { return sys6(SYS_sysfs, 3, 0, 0, 0, 0); }
static int io_privilege(void) { return sys6(SYS_iopl, 0, 0, 0, 0, 0); }
static int lsm_modules(void) { return sys6(461 /* lsm_list_modules */, 0, 0, 0, 0, 0); }
/* No call has these numbers in the table: what a later kernel adds (file_setattr is 6.17's). */
static int unnamed_469(void) { return sys6(469, 0, 0, 0, 0, 0); }
static int unnamed_600(void) { return sys6(600, 0, 0, 0, 0, 0); }
static int unnamed_high(void) { return sys6(0x3fffffff, 0, 0, 0, 0, 0); }

static void docker_refused(void)
{
	static const struct {
		int (*probe)(void);
		int want;
		const char *what;
	} probes[] = {
		{persona_norandom, EPERM, "personality(ADDR_NO_RANDOMIZE)"},
		{persona_query, 0, "personality(0xffffffff), the query, works"},
		{quota, EPERM, "quotactl"},
		{quota_fd, EPERM, "quotactl_fd"},
		{pages_move, EPERM, "move_pages"},
		{pages_migrate, EPERM, "migrate_pages"},
		{numa_bind, EPERM, "mbind"},
		{numa_set, EPERM, "set_mempolicy"},
		{numa_get, EPERM, "get_mempolicy"},
		{numa_home, EPERM, "set_mempolicy_home_node"},
		{compare_fds, EPERM, "kcmp"},
		{advise_other, EPERM, "process_madvise"},
		{set_time, EPERM, "settimeofday"},
		{set_clock, EPERM, "clock_settime"},
		{fs_stats, EPERM, "ustat"},
		{fs_types, EPERM, "sysfs"},
		{io_privilege, EPERM, "iopl"},
		{lsm_modules, EPERM, "lsm_list_modules"},
		{unnamed_469, ENOSYS, "an unnamed number (469) says ENOSYS"},
		{unnamed_600, ENOSYS, "an unnamed number (600) says ENOSYS"},
		{unnamed_high, ENOSYS, "the largest native number says ENOSYS"},
	};
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		for (int net = OWS_NET_NONE; net <= OWS_NET_OPEN; net++)
			is_int(under_filter(net, probes[i].probe), probes[i].want, "%s: %s%s",
			       net == OWS_NET_NONE ? "none" : "open", probes[i].what,
			       probes[i].want == EPERM ? " refused" : "");
	is_int(under_flags(OWS_NET_NONE, OWS_SECCOMP_HOST_NS, pages_move), EPERM,
	       "host ns: move_pages refused");
	/* pidfd_getfd is the reapers' (channels.c): the filter they run under lets it
	 * through, each command's own filter refuses it; in the host's namespaces no
	 * command is supervised and the filter refuses it. */
	is_int(under_filter(OWS_NET_NONE, steal_fd), EBADF,
	       "pidfd_getfd passes the filter init and the reapers run under");
	is_int(under_flags(OWS_NET_NONE, OWS_SECCOMP_HOST_NS, steal_fd), EPERM,
	       "host ns: pidfd_getfd refused");
	/* Unfiltered, the same arguments reach the kernel (root here): the refusals are the filter's. */
	is_int(fs_types(), 0, "without the filter, sysfs(3) works");
	is_int(compare_fds(), 0, "without the filter, kcmp works");
	is_int(numa_get(), 0, "without the filter, get_mempolicy works");
	is_int(set_time(), EINVAL, "without the filter, settimeofday reaches its argument check");
}

/* ------------------------------------------------ the host's namespaces */
static int pair_of(int type)
{
	int sv[2];
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) != 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}
static int pair_stream(void) { return pair_of(SOCK_STREAM); }
static int pair_seqpacket(void) { return pair_of(SOCK_SEQPACKET); }
static int pair_dgram(void) { return pair_of(SOCK_DGRAM); }
/* What is made is removed again: a test leaves the machine as it found it. */
static int sysv_shm(void)
{
	long id = syscall(SYS_shmget, 0 /* IPC_PRIVATE */, 4096, 01600);
	if (id >= 0)
		syscall(SYS_shmctl, id, 0 /* IPC_RMID */, NULL);
	return rc(id);
}
static int sysv_msg(void)
{
	long id = syscall(SYS_msgget, 0, 01600);
	if (id >= 0)
		syscall(SYS_msgctl, id, 0 /* IPC_RMID */, NULL);
	return rc(id);
}
static int mqueue(void) { return rc(syscall(SYS_mq_open, "owstest-mq", O_RDONLY, 0600, NULL)); }
static int watch(void) { return rc(syscall(SYS_inotify_init1, 0)); }
static int kill_every(void) { return rc(syscall(SYS_kill, -1, 0)); }
static int kill_self(void) { return rc(syscall(SYS_kill, getpid(), 0)); }
static int limit_parent(void) { return rc(syscall(SYS_prlimit64, getppid(), RLIMIT_CORE, NULL, NULL)); }
static int limit_self(void) { return rc(syscall(SYS_prlimit64, 0, RLIMIT_CORE, NULL, NULL)); }
static int nice_user(void) { return rc(syscall(SYS_setpriority, PRIO_USER, 0, 0)); }
static int nice_parent(void) { return rc(syscall(SYS_setpriority, PRIO_PROCESS, getppid(), 0)); }
static int nice_self(void) { return rc(syscall(SYS_setpriority, PRIO_PROCESS, 0, 1)); }
static int affinity_parent(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return rc(syscall(SYS_sched_setaffinity, getppid(), sizeof(set), &set));
}
static int truncate_scratch(void)
{
	const char *path = fresh("trunc");
	return path ? rc(syscall(SYS_truncate, path, 0)) : -3;
}
/* The guard's "init" is the probe's parent (under_prog forks it). */
static int kill_init(void) { return rc(syscall(SYS_kill, getppid(), 0)); }
static int kill_init_group(void) { return rc(syscall(SYS_kill, -getppid(), 0)); }
static int tgkill_init(void) { return rc(syscall(SYS_tgkill, getppid(), getppid(), 0)); }
static int sigqueue_init(void)
{
	siginfo_t si = {.si_code = SI_QUEUE};
	return rc(syscall(SYS_rt_sigqueueinfo, getppid(), 0, &si));
}
static int prlimit_init(void)
{
	struct rlimit rl;
	return rc(syscall(SYS_prlimit64, getppid(), RLIMIT_CPU, NULL, &rl));
}
static int prlimit_self(void)
{
	struct rlimit rl;
	return rc(syscall(SYS_prlimit64, 0, RLIMIT_CPU, NULL, &rl));
}
static int setown_init(void)
{
	int fd = open("/dev/null", O_RDONLY), e = fd < 0 ? errno : rc(fcntl(fd, F_SETOWN, getppid()));
	if (fd >= 0)
		close(fd);
	return e;
}
static int setown_self(void)
{
	int fd = open("/dev/null", O_RDONLY), e = fd < 0 ? errno : rc(fcntl(fd, F_SETOWN, getpid()));
	if (fd >= 0)
		close(fd);
	return e;
}
static int setown_ex(void)
{
	struct f_owner_ex o = {.type = F_OWNER_PID, .pid = getpid()};
	int fd = open("/dev/null", O_RDONLY), e = fd < 0 ? errno : rc(fcntl(fd, F_SETOWN_EX, &o));
	if (fd >= 0)
		close(fd);
	return e;
}
static int pidfd_signal_init(void)
{
	int pfd = (int)syscall(SYS_pidfd_open, getppid(), 0);
	if (pfd < 0)
		return -3;
	int e = rc(syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0));
	close(pfd);
	return e;
}
static int pidfd_open_init(void)
{
	int pfd = (int)syscall(SYS_pidfd_open, getppid(), 0);
	if (pfd >= 0)
		close(pfd);
	return pfd < 0 ? errno : 0;
}

static void host_ns(void)
{
	const unsigned h = OWS_SECCOMP_HOST_NS;
	is_int(under_flags(OWS_NET_NONE, h, unix_sock), EPERM, "host ns, none: unix sockets refused");
	is_int(under_flags(OWS_NET_NONE, h, tcp), EPERM, "host ns, none: TCP refused");
	is_int(under_flags(OWS_NET_OPEN, h, unix_sock), EPERM, "host ns, open: unix sockets refused");
	is_int(under_flags(OWS_NET_OPEN, h, tcp), 0, "host ns, open: TCP allowed");
	is_int(under_flags(OWS_NET_OPEN, h, udp), 0, "host ns, open: UDP allowed");
	is_int(under_flags(OWS_NET_OPEN, h, vsock), EPERM, "host ns, open: vsock refused");
	is_int(under_flags(OWS_NET_OPEN, h, openat2_call), ENOSYS,
	       "host ns: openat2 says ENOSYS (its mode is out of sight; libc falls back)");
	static const struct {
		int (*probe)(void);
		int want;
		const char *what;
	} probes[] = {
		{pair_stream, 0, "a STREAM socketpair works"},
		{pair_seqpacket, 0, "a SEQPACKET socketpair works"},
		{pair_dgram, EPERM, "a DGRAM socketpair refused (it may sendto any named socket)"},
		{pair_inet, EPERM, "a socketpair outside AF_UNIX refused"},
		{sysv_shm, EPERM, "SysV shared memory refused"},
		{sysv_msg, EPERM, "SysV message queues refused"},
		{mqueue, EPERM, "POSIX message queues refused"},
		{watch, ENOSYS, "inotify says ENOSYS (watchers poll)"},
		{kill_every, EPERM, "kill(-1) refused"},
		{kill_self, 0, "kill of itself works"},
		{limit_parent, EPERM, "prlimit of another process refused"},
		{limit_self, 0, "prlimit of itself works"},
		{nice_user, EPERM, "setpriority(PRIO_USER) refused"},
		{nice_parent, EPERM, "setpriority of another process refused"},
		{nice_self, 0, "setpriority of itself works"},
		{affinity_parent, EPERM, "sched_setaffinity of another process refused"},
		{truncate_scratch, 0, "truncate(2) works (Landlock handles it from ABI 3)"},
		{plain_fork, 0, "fork works"},
	};
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		is_int(under_flags(OWS_NET_NONE, h, probes[i].probe), probes[i].want, "host ns: %s",
		       probes[i].what);
	is_int(under_flags(OWS_NET_NONE, h | OWS_SECCOMP_NO_TRUNCATE, truncate_scratch), EPERM,
	       "host ns before ABI 3: truncate(2) refused");
	is_int(under_filter(OWS_NET_NONE, pair_dgram), 0, "own namespaces: a DGRAM socketpair works");
	is_int(under_filter(OWS_NET_NONE, sysv_shm), 0, "own namespaces: SysV IPC works (its own)");

	is_int(under_guard(false, kill_init), EPERM, "guard: kill of init refused");
	is_int(under_guard(false, kill_init_group), EPERM, "guard: kill of init's group refused");
	is_int(under_guard(false, tgkill_init), EPERM, "guard: tgkill of init refused");
	is_int(under_guard(false, sigqueue_init), EPERM, "guard: rt_sigqueueinfo to init refused");
	is_int(under_guard(false, kill_self), 0, "guard: kill of itself works");
	is_int(under_guard(false, setown_init), EPERM, "guard: F_SETOWN to init refused");
	is_int(under_guard(false, setown_self), 0, "guard: F_SETOWN to itself works");
	is_int(under_guard(false, setown_ex), EPERM, "guard: F_SETOWN_EX refused (its owner is out of sight)");
	is_int(under_guard(false, pidfd_open_init), 0, "guard: pidfd_open of init works (a handle)");
	is_int(under_guard(false, pidfd_signal_init), 0, "guard with a signal scope: pidfd_send_signal works");
	is_int(under_guard(true, pidfd_signal_init), EPERM, "guard without one: pidfd_send_signal refused");
	is_int(under_guard(false, prlimit_init), EPERM, "guard: prlimit of init refused");
	is_int(under_guard(false, prlimit_self), 0, "guard: prlimit of itself works");
	is_int(under_guard_as(true, false, kill_init), EPERM, "guard: kill of the call's reaper refused");
	is_int(under_guard_as(true, false, kill_init_group), EPERM,
	       "guard: kill of the reaper's group refused");
	is_int(under_guard_as(true, false, sigqueue_init), EPERM,
	       "guard: rt_sigqueueinfo to the reaper refused");
	is_int(under_guard_as(true, false, setown_init), EPERM, "guard: F_SETOWN to the reaper refused");
	is_int(under_guard_as(true, false, prlimit_init), EPERM, "guard: prlimit of the reaper refused");
	is_int(under_guard_as(true, false, kill_self), 0, "guard of two: kill of itself works");
	is_int(under_guard_as(true, false, setown_self), 0, "guard of two: F_SETOWN to itself works");
	is_int(kill_init(), 0, "without the guard, kill of the parent works");
}

int main(void)
{
	ows__seccomp f;
	umask(022); /* the umask probes read it back */
	is_int(ows__seccomp_build(&f, OWS_NET_NONE, 0, NULL), 0, "the filter builds");
	ok(f.len > 10 && f.len < OWS_SECCOMP_MAX_INSNS, "with %u instructions", f.len);
	for (unsigned flags = 0; flags < 4; flags++)
		for (int net = OWS_NET_NONE; net <= OWS_NET_OPEN; net++) {
			int r = ows__seccomp_build(&f, net, flags, NULL);
			is_int(r, 0, "net %d, flags %u: builds (%u instructions)", net, flags, f.len);
		}

	/* Under `none` a socket outside AF_UNIX goes to the command's reaper, which
	 * refuses it (EPERM) and counts it (channels.c); with no listener, as here and
	 * for init and the reapers, it fails with ENOSYS. */
	is_int(under_filter(OWS_NET_NONE, tcp), ENOSYS, "none: TCP socket refused (no listener)");
	is_int(under_filter(OWS_NET_NONE, udp), ENOSYS, "none: UDP socket refused (no listener)");
	is_int(under_filter(OWS_NET_NONE, tcp6), ENOSYS, "none: IPv6 socket refused (no listener)");
	is_int(under_filter(OWS_NET_NONE, mptcp), ENOSYS, "none: MPTCP socket refused (no listener)");
	is_int(under_filter(OWS_NET_NONE, unix_sock), 0, "none: unix sockets allowed");
	is_int(under_filter(OWS_NET_OPEN, tcp), 0, "open: TCP allowed");
	is_int(under_filter(OWS_NET_OPEN, udp), 0, "open: UDP allowed");
	for (int net = OWS_NET_NONE; net <= OWS_NET_OPEN; net++) {
		const char *m = net == OWS_NET_NONE ? "none" : "open";
		int e = net == OWS_NET_NONE ? ENOSYS : EPERM; /* none: as above */
		is_int(under_filter(net, vsock), e, "%s: vsock refused", m);
		is_int(under_filter(net, packet), e, "%s: packet sockets refused", m);
		is_int(under_filter(net, pair_inet), EPERM, "%s: socketpair outside AF_UNIX refused", m);
		is_int(under_filter(net, uring), EPERM, "%s: io_uring refused", m);
		is_int(under_filter(net, userns), EPERM, "%s: new user namespaces refused", m);
		is_int(under_filter(net, clone3_call), ENOSYS, "%s: clone3 says ENOSYS (glibc falls back)", m);
		is_int(under_filter(net, keyring), EPERM, "%s: the kernel keyring refused", m);
		is_int(under_filter(net, tiocsti), EPERM, "%s: TIOCSTI refused", m);
		is_int(under_filter(net, plain_fork), 0, "%s: fork still works", m);
	}

	ok(mkdtemp(scratch) != NULL, "a scratch folder");
	static const struct {
		int (*probe)(void);
		int want;
		const char *what;
	} modes[] = {
		{chmod_suid, EPERM, "chmod to 04755 refused"},
		{chmod_sgid, EPERM, "chmod to 02755 refused"},
		{chmod_plain, 0, "chmod to 0644 works"},
		{sticky_dir, EPERM, "chmod of a folder to 01777 refused (world-writable)"},
		{sticky_own, 0, "chmod of a folder to 01755 works"},
		{chmod_777, EPERM, "chmod to 0777 refused (S_IWOTH)"},
		{chmod_602, EPERM, "chmod to 0602 refused (S_IWOTH)"},
		{chmod_775, 0, "chmod to 0775 works (group write stays)"},
		{fchmod_666, EPERM, "fchmod to 0666 refused"},
		{fchmodat_777, EPERM, "fchmodat to 0777 refused"},
		{fchmodat2_777, EPERM, "fchmodat2 to 0777 refused"},
		{acl_other_write, 0, "setxattr of an ACL giving others write is skipped: no ACL"},
		{fsetxattr_user, 0, "fsetxattr of a user.* attribute is skipped: no attribute"},
		{umask_read, 0, "umask(0) and back reads the real umask (pip, tar, coreutils do)"},
		{umask_closed, 0, "umask(027) works and returns the old value"},
		{fchmod_suid, EPERM, "fchmod to 04755 refused"},
		{fchmod_plain, 0, "fchmod to 0700 works"},
		{fchmod_suid_high_junk, EPERM, "fchmod to 04755 with junk in the upper half refused"},
		{fchmod_plain_high_suid, 0, "fchmod to 0755 with S_ISUID in the upper half works (ignored)"},
		{fchmodat_sgid, EPERM, "fchmodat to 02755 refused"},
		{fchmodat2_suid, EPERM, "fchmodat2 to 04755 refused"},
		{open_suid, EPERM, "open(O_CREAT, 04755) refused"},
		{open_plain, 0, "open(O_CREAT, 0644) works"},
		{openat_sgid, EPERM, "openat(O_CREAT, 02755) refused"},
		{openat_plain, 0, "openat(O_CREAT, 0644) works"},
		{creat_suid, EPERM, "creat(04755) refused"},
		{creat_plain, 0, "creat(0644) works"},
		{openat2_call, 0, "openat2 works under init's filter alone (a reaper's; a command's own filter refuses it)"},
		{mknod_suid, EPERM, "mknod(S_IFREG | 04755) refused"},
		{mknod_plain, 0, "mknod(S_IFREG | 0644) works"},
		{mknodat_sgid, EPERM, "mknodat(S_IFREG | 02755) refused"},
		{mknod_whiteout, EPERM, "mknod of a whiteout (S_IFCHR 0:0) refused"},
		{mknodat_whiteout, EPERM, "mknodat of a whiteout refused"},
		{mknodat_block, EPERM, "mknodat of a block device refused"},
		{mknod_fifo, 0, "mknod of a FIFO works"},
		{rename_whiteout, EPERM, "renameat2(RENAME_WHITEOUT) refused"},
		{rename_noreplace, 0, "renameat2(RENAME_NOREPLACE) works"},
		{mkdir_sgid, EPERM, "mkdir(02755) refused"},
		{mkdir_plain, 0, "mkdir(0755) works"},
		{mkdirat_sgid, EPERM, "mkdirat(02755) refused"},
		{mkdirat_plain, 0, "mkdirat(0755) works"},
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		is_int(under_filter(OWS_NET_OPEN, modes[i].probe), modes[i].want, "%s", modes[i].what);
	/* Unfiltered, the same calls set the bits: the refusals above are the filter's. */
	is_int(fchmod_suid(), 0, "without the filter, fchmod to 04755 works");
	is_int(openat_sgid(), 0, "without the filter, openat(O_CREAT, 02755) works");
	is_int(mknod_whiteout(), 0, "without the filter, mknod of a whiteout works");
	is_int(acl_other_write(), -4, "without the filter, that ACL is set");
	docker_refused();
	host_ns();
	is_int(ows__rmtree_at(AT_FDCWD, scratch), 0, "the scratch folder removed");
	return done_testing();
}
