/*
 * Channels to the person's programs: unix sockets and FIFOs in session
 * folders.
 *
 * A pathname unix socket is found by its inode, wherever the connecting
 * process sits: across mount and network namespaces alike.  A server the
 * person runs with its socket in a session folder (`tmux -S ./sock`, whose
 * run-shell runs anything as the person; an editor's --listen socket) is
 * therefore one connect() away from inside, whenever it was made.  The
 * kernel asks only for write permission on the socket's inode, which the
 * person's uid (landlock) or the account's default ACL entries (account)
 * hold in a read-write folder; Landlock has no right for it before ABI 9,
 * and seccomp cannot read the address.
 *
 * So every connect() of a command goes to its call's reaper through a
 * seccomp listener (SECCOMP_RET_USER_NOTIF), which makes the call itself,
 * on a copy of the command's socket (pidfd_getfd) and a copy of its
 * address: nothing the command changes after the check (the address in its
 * memory, the socket behind its descriptor) reaches the kernel.  For a
 * pathname on a unix socket the reaper resolves the name once, as the
 * command would (from its working folder), to an O_PATH descriptor, decides
 * on that inode, and connects through /proc/self/fd/N, that very inode.
 * The socket must be the sandbox's: held open by a process of the
 * sandbox's PID namespace, and bound there (sock_diag, asked about each
 * socket such a process holds, in the sandbox's network namespace).
 * Anything else is refused with EACCES.  Other families and abstract names are connected as
 * asked (Landlock's scope and the network namespace judge those).
 *
 * What else reaches a socket by name: sendto() and sendmsg() with an
 * address, which only a datagram socket follows (a stream socket refuses
 * one, a seqpacket socket ignores it).  The filter refuses unix datagram
 * sockets instead (SOCK_RAW is one too), from socket() and socketpair()
 * alike: a connected datagram socket still sends to any name it is given.
 * open() of a socket fails (ENXIO), and a socket arrives by SCM_RIGHTS only
 * over a channel already open.
 *
 * A connect() that blocks (TCP's handshake, any socket without O_NONBLOCK)
 * is started non-blocking and answered when the socket says it ended, so
 * the reaper keeps serving its call's kill and other threads' connects
 * meanwhile.  A unix socket whose listener's queue is full answers EAGAIN
 * instead of waiting.
 *
 * A FIFO is the same kind of door: opening its name joins whoever holds
 * the other end, and a program of the person's can make one in a session
 * folder at any time, also while a command runs, where no mount covers it
 * (the view covers those there at open; the host refuses to start a
 * command while a new one is there).  Neither Landlock nor seccomp tells a
 * FIFO's open from a file's.  So every open() of what may be there (not
 * O_PATH, a folder, nor O_CREAT | O_EXCL) goes to the reaper too, which
 * resolves the name once (O_PATH, as the command would, from its working
 * folder or its dirfd), refuses a FIFO that does not lie on one of the
 * sandbox's own mounts (its /tmp, /dev/shm and private folder) or a pipe,
 * and opens that very inode through /proc/self/fd/N with the command's
 * flags, handing the descriptor over (SECCOMP_IOCTL_NOTIF_ADDFD).  Reading
 * counts as writing does: what the person's program writes into a FIFO is
 * as much its own as the program behind a socket.  The reaper is the same
 * uid in the same Landlock domain, mount and user namespaces as the
 * command, so it may open no more than the command may; what differs is
 * /proc/self, which as_command() rewrites to the command's (and
 * as_commands_own() for a link into it: /etc/mtab, /proc/net), and the
 * reaper's own /proc entries, which are never opened for it (judge()), nor
 * reached through a magic link (its executable, folders, descriptors):
 * names are resolved with RESOLVE_NO_MAGICLINKS, and a magic link is
 * followed only as the first step of /proc/PID/... for another process
 * (open_as_command()).  A Landlock domain the command adds would not bind
 * the reaper: the filter says Landlock is off (EOPNOTSUPP).
 * The reaper reads the name in the caller's memory, which the kernel
 * allows only while the caller is dumpable: the filter skips
 * prctl(PR_SET_DUMPABLE, 0), and a process that runs a program it may not
 * read is refused every open by name.  The cost is the round trip, about
 * 20 us an open on two cores (bench/run.sh), most of it the two wake-ups.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "channels.h"
#include "init.h"

#if defined(__x86_64__)
#define CHAN_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CHAN_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "channels filter: add this architecture's AUDIT_ARCH"
#endif
/* open() and creat() of x86-64; elsewhere openat alone (matched before these: never). */
#ifdef SYS_open
#define CHAN_SYS_OPEN SYS_open
#define CHAN_SYS_CREAT SYS_creat
#else
#define CHAN_SYS_OPEN SYS_openat
#define CHAN_SYS_CREAT SYS_openat
#endif
/* Linux 6.6: the reaper's answer wakes the command on the reaper's CPU, at once. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of one thread */
#endif

/* ------------------------------------------------------------- the filter */

int ows__chan_filter(struct sock_filter *insns, size_t max, bool offline, mode_t closed)
{
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
	/* A socket of another family than AF_UNIX: to the reaper under `none`. */
	const uint32_t other = offline ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
	const struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CHAN_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_connect, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		/* The reaper's tool, not the command's (Docker's profile refuses it too). */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_getfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		/* The reaper's too: its flags and mode lie in memory, out of sight. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		/*
		 * An open() of what may be there (open_for): not for a name only
		 * (O_PATH), a folder, nor a new file (O_CREAT | O_EXCL).  openat2,
		 * whose flags lie where a filter cannot look, is refused above
		 * (ENOSYS), and its callers use openat.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JA, 2, 0, 0), /* to the flags */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CHAN_SYS_OPEN, 0, 6), /* to creat */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_PATH | O_DIRECTORY, 2, 0), /* allow */
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, O_CREAT | O_EXCL),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, O_CREAT | O_EXCL, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CHAN_SYS_CREAT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		/*
		 * A umask without S_IWOTH, or S_IWGRP where the group is shared
		 * (`closed`: init hands them on): to the reaper, which answers with
		 * the mask as it is and leaves it.  Reading the umask by setting 0
		 * and back (pip, tar, coreutils) still reads it right, and nothing
		 * made afterwards is writable by other users.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_umask, 0, 5), /* to the seccomp check */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, closed),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, closed, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		/*
		 * prctl(PR_SET_DUMPABLE, 0) is not made, and says it was: the reaper
		 * reads the names its command opens (process_vm_readv), which the
		 * kernel refuses for a process that is not dumpable, and whose every
		 * open would then fail.  What that guards against, other processes
		 * of the same uid reading its memory, is inside the agent's own.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 6), /* to the seccomp check */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_DUMPABLE, 0, 2), /* allow */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), /* skip */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
		/*
		 * No Landlock domain of the command's own: its opens are made by
		 * the reaper, which a domain the command adds would not bind.  A
		 * tool that asks is told Landlock is off (EOPNOTSUPP), as by a
		 * kernel booted without it, and runs unsandboxed by its own
		 * choice, or refuses to: never believing a rule holds that does not.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_create_ruleset, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_add_rule, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_restrict_self, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
		/*
		 * No listener of the command's own: where two filters return USER_NOTIF
		 * the newest's listener answers, and one that answered CONTINUE would
		 * make the connect (or the socket) the reaper is there to judge.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 6), /* to the sockets */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, 3), /* allow */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 0, 7), /* to the allow */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 6), /* to `other` */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf), /* SOCK_TYPE_MASK */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_SEQPACKET, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, other),
	};
#undef ARG_LO
	size_t n = sizeof(prog) / sizeof(prog[0]);
	if (n > max)
		return -1;
	memcpy(insns, prog, sizeof(prog));
	return (int)n;
}

/* ------------------------------------------------- init: what reapers share */

int ows__chan_open(struct ows__chan *ch)
{
	ch->diag = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (ch->diag < 0)
		return errno;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		int e = errno;
		close(ch->diag);
		ch->diag = -1;
		return e;
	}
	ch->lock = page;
	return 0;
}

/* Reapers never die holding it: one is killed only when the whole namespace is. */
static void lock(int *w)
{
	while (__atomic_exchange_n(w, 1, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, w, FUTEX_WAIT, 1, NULL, NULL, 0);
}

static void unlock(int *w)
{
	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* ----------------------------------------------- whose socket an inode is */

/*
 * sock_diag's device is the kernel's dev_t (major << 20 | minor), not st_dev's
 * encoding, and its inode number has 32 bits: two sockets alike there would
 * need inode numbers 2^32 apart on one file system, which no one inside picks.
 */
static bool same_file(const struct unix_diag_vfs *v, const struct stat *st)
{
	return v->udiag_vfs_ino == (uint32_t)st->st_ino &&
	       (v->udiag_vfs_dev >> 20) == major(st->st_dev) &&
	       (v->udiag_vfs_dev & 0xfffff) == minor(st->st_dev);
}

/*
 * Socket `ino` of this network namespace is bound at st.  An exact lookup,
 * not a dump: a dump resumes by position between its parts, and skips
 * entries when sockets come and go meanwhile.
 */
static bool diag_bound_at(int diag, uint32_t ino, const struct stat *st)
{
	static char buf[8192] __attribute__((aligned(8)));
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} req = {
		.nh = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST},
		.r = {.sdiag_family = AF_UNIX, .udiag_ino = ino, .udiag_show = UDIAG_SHOW_VFS,
		      .udiag_cookie = {~0U, ~0U}},
	};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	if (sendto(diag, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return false;
	ssize_t n;
	do
		n = recv(diag, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (n <= 0 || !NLMSG_OK(h, (size_t)n) || h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return false; /* NLMSG_ERROR: no such socket here (another namespace's) */
	struct unix_diag_msg *m = NLMSG_DATA(h);
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || m->udiag_ino != ino)
		return false;
	int left = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == UNIX_DIAG_VFS &&
		    RTA_PAYLOAD(a) >= (int)sizeof(struct unix_diag_vfs) && same_file(RTA_DATA(a), st))
			return true;
	return false;
}

/* "socket:[INO]": INO, else 0. */
static uint32_t socket_ino(const char *s, size_t n)
{
	if (n < 10 || memcmp(s, "socket:[", 8) != 0 || s[n - 1] != ']')
		return 0;
	uint32_t v = 0;
	for (size_t i = 8; i < n - 1; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	return v;
}

/* Some socket process `pid` holds, in this network namespace, is bound at st. */
static bool holds_bound(const struct ows__chan *ch, int proc, const char *pid,
			const struct stat *st)
{
	char path[64] = "", fds[4096] __attribute__((aligned(8)));
	ows__buf_add(path, sizeof(path), pid);
	ows__buf_add(path, sizeof(path), "/fd");
	int dir = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool found = false;
	long m;
	while (dir >= 0 && !found && (m = syscall(SYS_getdents64, dir, fds, sizeof(fds))) > 0)
		for (long o = 0; o < m && !found;) {
			unsigned short len;
			memcpy(&len, fds + o + 16, sizeof(len)); /* d_ino, d_off, d_reclen */
			const char *fd = fds + o + 19;
			o += len;
			char link[64];
			ssize_t k = readlinkat(dir, fd, link, sizeof(link));
			uint32_t ino = k > 0 ? socket_ino(link, (size_t)k) : 0;
			if (!ino)
				continue;
			lock(ch->lock);
			found = diag_bound_at(ch->diag, ino, st);
			unlock(ch->lock);
		}
	if (dir >= 0)
		close(dir);
	return found;
}

/*
 * The socket at st is one a process of the sandbox (its PID namespace: its
 * /proc) holds open, made in the sandbox's network namespace.  In `none`
 * and `allowlist` that namespace is the sandbox's alone; in `open` it is
 * the host's, and the holder tells the sandbox's from the person's.
 */
static bool bound_inside(const struct ows__chan *ch, const struct stat *st)
{
	char pids[4096] __attribute__((aligned(8)));
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool found = false;
	long n;
	while (proc >= 0 && !found && (n = syscall(SYS_getdents64, proc, pids, sizeof(pids))) > 0)
		for (long off = 0; off < n && !found;) {
			unsigned short reclen;
			memcpy(&reclen, pids + off + 16, sizeof(reclen));
			const char *name = pids + off + 19;
			off += reclen;
			if (*name >= '1' && *name <= '9')
				found = holds_bound(ch, proc, name, st);
		}
	if (proc >= 0)
		close(proc);
	return found;
}

/* ------------------------------------------------------- one connect() */

/* The command that made the call, pinned: its pidfd and its memory. */
struct target {
	pid_t tid;
	int pidfd;
	int mem;
};

static bool still_waiting(int notify, uint64_t id)
{
	return ioctl(notify, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* A number of /proc/TID/status ("\nKEY:\t..." in `base` 8 or 10), or -1. */
static long status_number(pid_t tid, const char *key, int base)
{
	char path[48] = "/proc/", buf[1024], line[32] = "\n";
	ows__buf_add_num(path, sizeof(path), tid);
	ows__buf_add(path, sizeof(path), "/status");
	ows__buf_add(line, sizeof(line), key);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *s = strstr(buf, line);
	if (!s)
		return -1;
	for (s += strlen(line); *s == '\t' || *s == ' '; s++)
		;
	long v = 0;
	bool any = false;
	for (; *s >= '0' && *s < '0' + base; s++, any = true)
		v = v * base + (*s - '0');
	return any ? v : -1;
}

static pid_t tgid_of(pid_t tid)
{
	long v = status_number(tid, "Tgid:", 10);
	return v > 0 ? (pid_t)v : -1;
}

/* A pidfd of thread `tid` (of its process before 6.9), or -1 with errno. */
static int pidfd_of(pid_t tid)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL) { /* before 6.9: a pidfd names a process */
		pid_t tgid = tgid_of(tid);
		fd = tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
	}
	return fd;
}

/* 0, or an errno: the target is gone (its call too), or may not be read. */
static int pin(int notify, const struct seccomp_notif *n, struct target *t)
{
	char path[48] = "/proc/";
	t->tid = (pid_t)n->pid;
	t->pidfd = pidfd_of(t->tid);
	ows__buf_add_num(path, sizeof(path), t->tid);
	ows__buf_add(path, sizeof(path), "/mem");
	int e = t->pidfd < 0 ? errno : 0;
	t->mem = e ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (!e && t->mem < 0)
		e = errno;
	/* Both were opened while the call waits: they name its process, not a successor. */
	if (!e && !still_waiting(notify, n->id))
		e = ENOENT;
	return e;
}

static void unpin(struct target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->mem >= 0)
		close(t->mem);
}

/*
 * /proc/self is whoever resolves it.  The command's names through it, and
 * through /dev's links into it (/dev/fd, /dev/stdin...), are rewritten to
 * name the command's own /proc/TID; a link elsewhere that leads there
 * resolves to the reaper's own entries instead, which nothing here hands
 * on (a socket is not found there; open_for refuses it).  `path`, `own`
 * holding the rewritten name, or NULL when it does not fit.
 */
static const char *as_command(const struct target *t, const char *path, char *own, size_t size)
{
	static const struct {
		const char *from, *to;
	} selves[] = {
		{"/proc/self", ""},      {"/proc/thread-self", ""}, {"/dev/fd", "/fd"},
		{"/dev/stdin", "/fd/0"}, {"/dev/stdout", "/fd/1"},  {"/dev/stderr", "/fd/2"},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(selves); i++) {
		size_t n = strlen(selves[i].from);
		if (strncmp(path, selves[i].from, n) != 0 || (path[n] != '\0' && path[n] != '/'))
			continue;
		own[0] = '\0';
		ows__buf_add(own, size, "/proc/");
		ows__buf_add_num(own, size, t->tid);
		ows__buf_add(own, size, selves[i].to);
		size_t used = strlen(own), rest = strlen(path + n);
		if (used + rest >= size)
			return NULL;
		memcpy(own + used, path + n, rest + 1);
		return own;
	}
	return path;
}

/* The open flags the kernel knows: openat2 refuses others, which openat ignores. */
#define OPEN_KNOWN                                                                              \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |  \
	 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |   \
	 O_PATH | O_SYNC)

/* openat(dir, name, flags, mode) that crosses no magic link of /proc.  A descriptor, or -errno. */
static int open_plain(int dir, const char *name, int flags, mode_t mode)
{
	struct open_how how = {.flags = (uint64_t)(flags & OPEN_KNOWN),
			       .mode = flags & O_CREAT ? mode & 07777 : 0,
			       .resolve = RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(SYS_openat2, dir, name, &how, sizeof(how));
	return fd >= 0 ? fd : -errno;
}

/* Whether a name that ELOOPs without magic links resolves with them (else: a loop). */
static bool crosses_magic(int dir, const char *name, int flags)
{
	int fd = openat(dir, name, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW));
	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != ELOOP;
}

/*
 * Whether the reaper may follow process `pid`'s magic links for its command:
 * the kernel asks the same of both (same uid, same Landlock domain; the
 * target dumpable or the asker privileged, which neither is), save the
 * reaper's own, which it may always follow and its command may not (the
 * reaper is not dumpable).
 */
static bool may_look_into(long pid)
{
	return pid != (long)syscall(SYS_getpid);
}

/* The number at *s, ended by '/': *s moved past the '/'.  -1: none. */
static long number_dir(const char **s)
{
	long v = 0;
	const char *p = *s;
	for (; *p >= '0' && *p <= '9' && v < 1 << 24; p++)
		v = v * 10 + (*p - '0');
	if (p == *s || *p != '/')
		return -1;
	*s = p + 1;
	return v;
}

/*
 * A name whose first magic link is one of /proc/PID's (exe, cwd, root,
 * fd/N, map_files/N, ns/N, also under task/TID) for a process the command
 * may look into: *magic holds the name up to that link, *tail what follows
 * it.  false: any other name.
 */
static bool magic_of(const char *name, char *magic, size_t size, const char **tail)
{
	static const char *const one[] = {"exe", "cwd", "root"}, *const two[] = {"fd", "map_files", "ns"};
	const char *s = name + strlen("/proc/");
	long pid;
	if (strncmp(name, "/proc/", strlen("/proc/")) != 0 || (pid = number_dir(&s)) < 0 ||
	    !may_look_into(pid))
		return false;
	if (strncmp(s, "task/", 5) == 0) {
		s += 5;
		if (number_dir(&s) < 0)
			return false;
	}
	size_t k = strcspn(s, "/");
	bool found = false, deeper = false;
	for (size_t i = 0; i < OWS__ARRAY_LEN(one) && !found; i++)
		found = strlen(one[i]) == k && strncmp(s, one[i], k) == 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(two) && !found; i++)
		found = deeper = strlen(two[i]) == k && strncmp(s, two[i], k) == 0;
	if (!found)
		return false;
	const char *end = s + k;
	if (deeper) {
		if (*end != '/')
			return false;
		end++;
		end += strcspn(end, "/");
	}
	size_t len = (size_t)(end - name);
	if (len >= size)
		return false;
	memcpy(magic, name, len);
	magic[len] = '\0';
	while (*end == '/')
		end++;
	*tail = end;
	return true;
}

/*
 * open(name, flags, mode) from `dir`, resolved as the command would resolve
 * it (flags: O_PATH to look, or a creation): links followed, but a magic
 * link of /proc (a process's descriptors, executable, folders, namespaces)
 * only as the first step of a name in /proc/PID of a process the command
 * may look into.  The reaper may follow its own, which lead where the
 * command may not.  A descriptor, or -errno.
 */
static int open_as_command(const struct target *t, int dir, const char *name, int flags,
			   mode_t mode)
{
	char magic[96];
	const char *tail;
	int fd = open_plain(dir, name, flags, mode);
	if (fd != -ELOOP)
		return fd;
	if (!magic_of(name, magic, sizeof(magic), &tail))
		return crosses_magic(dir, name, flags) ? -EACCES : -ELOOP;
	int via = open(magic, O_PATH | O_CLOEXEC | (*tail ? 0 : flags & O_NOFOLLOW));
	if (via < 0)
		return -errno;
	if (!*tail)
		return flags & O_PATH ? via : (close(via), -EACCES);
	fd = open_plain(via, tail, flags, mode);
	if (fd == -ELOOP && crosses_magic(via, tail, flags))
		fd = -EACCES; /* a second magic link: never the command's to need */
	close(via);
	return fd;
}

/*
 * What a name is resolved from: the sandbox's root (the reaper's too) for an
 * absolute one, else the caller's working folder or its `dirfd` (a copy).
 * *dir is AT_FDCWD or a descriptor to close.  0, or an errno.
 */
static int start_of(pid_t tid, const char *name, int dirfd, int *dir)
{
	*dir = AT_FDCWD;
	if (name[0] == '/')
		return 0;
	if (dirfd == AT_FDCWD) {
		char cwd[48] = "/proc/";
		ows__buf_add_num(cwd, sizeof(cwd), tid);
		ows__buf_add(cwd, sizeof(cwd), "/cwd");
		*dir = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		int pidfd = pidfd_of(tid);
		*dir = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, dirfd, 0);
		if (pidfd >= 0) {
			int e = errno;
			close(pidfd);
			errno = e;
		}
	}
	return *dir < 0 ? errno : 0;
}

/*
 * A pathname on a unix socket: resolved once, as the command would resolve
 * it, to the socket's inode; 0 with *via naming that inode (/proc/self/fd/N,
 * N in *opath), or the errno the command gets.
 */
static int resolve(const struct ows__chan *ch, int notify, uint64_t id, const struct target *t,
		   const struct sockaddr_un *sun, socklen_t len, struct sockaddr_un *via,
		   socklen_t *via_len, int *opath)
{
	char path[sizeof(sun->sun_path) + 1];
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	memcpy(path, sun->sun_path, n);
	path[n] = '\0'; /* the kernel ends the name at the address's length, or at a NUL */
	char own[sizeof(path) + 32];
	const char *name = as_command(t, path, own, sizeof(own));
	if (!name)
		return ENAMETOOLONG;
	int dir, e = start_of(t->tid, name, AT_FDCWD, &dir);
	if (!e && dir != AT_FDCWD && !still_waiting(notify, id))
		e = ENOENT; /* the folder was a successor's */
	if (e) {
		if (dir >= 0)
			close(dir);
		return e;
	}
	*opath = open_as_command(t, dir, name, O_PATH | O_CLOEXEC, 0); /* connect() follows a link too */
	e = *opath < 0 ? -*opath : 0;
	if (dir != AT_FDCWD)
		close(dir);
	struct stat st;
	if (!e && fstat(*opath, &st) != 0)
		e = errno;
	if (!e && !S_ISSOCK(st.st_mode))
		e = ECONNREFUSED; /* what connect() says of a name that is no socket */
	if (!e && !bound_inside(ch, &st))
		e = EACCES;
	if (e) {
		if (*opath >= 0)
			close(*opath);
		*opath = -1;
		return e;
	}
	memset(via, 0, sizeof(*via));
	via->sun_family = AF_UNIX;
	ows__buf_add(via->sun_path, sizeof(via->sun_path), "/proc/self/fd/");
	ows__buf_add_num(via->sun_path, sizeof(via->sun_path), *opath);
	*via_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(via->sun_path) + 1);
	return 0;
}

static void answer(int notify, uint64_t id, int e)
{
	struct seccomp_notif_resp r = {.id = id, .val = e ? -1 : 0, .error = e ? -e : 0};
	ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

/*
 * umask(mask) without all of the closed bits, not made: the caller gets its umask as it is
 * (Umask: of its status, Linux 4.7), as if it had set that.  Its status names
 * the caller only while the call waits; if it cannot be read, the caller is
 * gone or going, and the answer reaches no one.
 */
static void answer_umask(int notify, const struct seccomp_notif *n)
{
	long mask = status_number((pid_t)n->pid, "Umask:", 8);
	struct seccomp_notif_resp r = {.id = n->id, .val = mask, .error = 0};
	if (mask < 0 || !still_waiting(notify, n->id)) {
		answer(notify, n->id, EPERM);
		return;
	}
	ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

/* ---------------------------------------------------------- one open() */

/* The mount `path` (at dir; "" with AT_EMPTY_PATH: dir itself) lies on. 0, or an errno. */
static int mount_of(int dir, const char *path, int flags, uint64_t *id)
{
	struct statx sx;
	if (statx(dir, path, flags, STATX_MNT_ID, &sx) != 0)
		return errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return ENOSYS; /* before Linux 5.8 */
	*id = sx.stx_mnt_id;
	return 0;
}

/* The mount of a descriptor just made (or -1, with errno), which it closes. */
static int mount_of_new(int fd, uint64_t *id)
{
	if (fd < 0)
		return errno;
	int e = mount_of(fd, "", AT_EMPTY_PATH, id);
	close(fd);
	return e;
}

int ows__chan_note_mounts(struct ows__chan *ch, const char *const *own, int n)
{
	int e = 0, fds[2] = {-1, -1};
	ch->nown_fifo = 0;
	if (n > OWS_CHAN_MAX_MOUNTS - 1)
		return E2BIG;
	for (int i = 0; i < n && !e; i++)
		e = mount_of(AT_FDCWD, own[i], AT_SYMLINK_NOFOLLOW, &ch->own_fifo[ch->nown_fifo++]);
	/* Pipes: the command's stdout through /dev/stdout, a pipe of `cmd >(sub)`. */
	if (!e && pipe2(fds, O_CLOEXEC) != 0)
		e = errno;
	if (!e)
		e = mount_of(fds[0], "", AT_EMPTY_PATH, &ch->own_fifo[ch->nown_fifo++]);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* The reaper's listener is an anon inode, its targets' pidfds pidfs (or anon inodes). */
	if (!e)
		e = mount_of_new(eventfd(0, EFD_CLOEXEC), &ch->never[0]);
	if (!e)
		e = mount_of_new((int)syscall(SYS_pidfd_open, syscall(SYS_getpid), 0), &ch->never[1]);
	return e ? e : mount_of(AT_FDCWD, "/proc", 0, &ch->proc);
}

/*
 * The NUL-ended name at `at` in the memory of the caller (tid), into buf:
 * whoever holds that tid now, until the call is found still waiting after.
 * 0, or an errno.
 */
static int read_name(pid_t tid, uint64_t at, char *buf, size_t size)
{
	for (size_t got = 0; got < size;) {
		size_t page = 4096 - ((at + got) & 4095), want = size - got < page ? size - got : page;
		struct iovec local = {.iov_base = buf + got, .iov_len = want};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)(at + got), .iov_len = want};
		ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n <= 0) /* EPERM: the caller made itself non-dumpable */
			return n == 0 ? EFAULT : errno == ESRCH ? ENOENT : errno == EPERM ? EACCES : EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return ENAMETOOLONG;
}

static bool listed(const uint64_t *ids, int n, uint64_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * The rest of the name of one of /proc/<the reaper>'s entries that `fd` (on
 * /proc) names, past "/proc/PID" (and "/task/PID", its thread-self): "" or
 * "/...", in `rest`: 1.  0: it names no entry of the reaper's own; -1: unknown.
 */
static int reapers_own(int fd, char *rest, size_t size)
{
	char via[48] = "/proc/self/fd/", at[4096], mine[64] = "/proc/";
	ows__buf_add_num(via, sizeof(via), fd);
	ows__buf_add_num(mine, sizeof(mine), (long)syscall(SYS_getpid));
	ssize_t n = readlink(via, at, sizeof(at) - 1);
	if (n < 0)
		return -1;
	at[n] = '\0';
	size_t k = strlen(mine);
	if (strncmp(at, mine, k) != 0 || (at[k] != '\0' && at[k] != '/'))
		return 0;
	const char *tail = at + k;
	char task[64] = "/task/";
	ows__buf_add_num(task, sizeof(task), (long)syscall(SYS_getpid));
	size_t t = strlen(task);
	if (strncmp(tail, task, t) == 0 && (tail[t] == '\0' || tail[t] == '/'))
		tail += t;
	rest[0] = '\0';
	ows__buf_add(rest, size, tail);
	return 1;
}

/*
 * Whether the command may open what `fd` (O_PATH) names: 0, or the errno it
 * gets; *fifo says whether it is a FIFO (or a pipe).  A FIFO is a pipe to
 * whoever holds its other end: one the sandbox made (its /tmp, /dev/shm,
 * private folder) or a pipe may be opened, any other (the person's, in a
 * session folder, made while the command runs) may not.  The reaper's own
 * /proc entries are never opened (its memory is a copy of the host's):
 * open_for() takes the command's for one reached through a link.
 */
static int judge(const struct ows__chan *ch, int fd, bool *fifo)
{
	struct statx sx;
	char rest[8];
	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &sx) != 0)
		return errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return EACCES;
	if (S_ISLNK(sx.stx_mode))
		return ELOOP; /* O_NOFOLLOW, and a link is there */
	if (listed(ch->never, 2, sx.stx_mnt_id))
		return EACCES;
	if (sx.stx_mnt_id == ch->proc && reapers_own(fd, rest, sizeof(rest)) != 0)
		return EACCES;
	*fifo = S_ISFIFO(sx.stx_mode);
	return *fifo && !listed(ch->own_fifo, ch->nown_fifo, sx.stx_mnt_id) ? EACCES : 0;
}

/*
 * A name that led to one of the reaper's own /proc entries through a link
 * to /proc/self (/etc/mtab, /proc/mounts, /proc/net...): *at (O_PATH) is
 * replaced by the command's own entry.  One the command named itself, as
 * /proc/<the reaper's pid>/..., stays the reaper's, and judge() refuses it,
 * as the kernel refuses it the command (the reaper is not dumpable).
 */
static void as_commands_own(const struct ows__chan *ch, const struct target *t, const char *name,
			    int flags, int *at)
{
	char rest[4096], own[4096 + 32] = "/proc/", named[64] = "/proc/";
	struct statx sx;
	if (statx(*at, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0 || !(sx.stx_mask & STATX_MNT_ID) ||
	    sx.stx_mnt_id != ch->proc || reapers_own(*at, rest, sizeof(rest)) != 1)
		return;
	ows__buf_add_num(named, sizeof(named), (long)syscall(SYS_getpid));
	size_t k = strlen(named);
	if (strncmp(name, named, k) == 0 && (name[k] == '\0' || name[k] == '/'))
		return;
	ows__buf_add_num(own, sizeof(own), t->tid);
	if (strlen(own) + strlen(rest) >= sizeof(own))
		return;
	ows__buf_add(own, sizeof(own), rest);
	int fd = open(own, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW));
	if (fd >= 0) {
		close(*at);
		*at = fd;
	}
}

/* What `fd` (O_PATH) names, opened with `flags`: that very inode, no name again. */
static int reopen(int fd, int flags)
{
	char via[48] = "/proc/self/fd/";
	ows__buf_add_num(via, sizeof(via), fd);
	return open(via, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_NOCTTY | O_CLOEXEC);
}

/* `fd` into the caller's table as the call's result; closes fd. */
static void give(int notify, uint64_t id, int fd, int flags)
{
	struct seccomp_notif_addfd a = {.id = id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)fd,
					.newfd_flags = (uint32_t)(flags & O_CLOEXEC)};
	int r = ioctl(notify, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	if (r < 0 && errno == EINVAL) { /* before 5.14: add, then answer */
		a.flags = 0;
		r = ioctl(notify, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		if (r >= 0) {
			struct seccomp_notif_resp resp = {.id = id, .val = r};
			ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		}
	}
	if (r < 0 && errno != ENOENT) /* ENOENT: the caller is gone, or a signal came first */
		answer(notify, id, errno);
	close(fd);
}

/* A blocking open of a FIFO that had no reader yet is started without blocking, then put back. */
static void make_blocking(int fd, int flags)
{
	if (!(flags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
}

#define WAITING INT_MIN /* an own FIFO's end waiting for the other: asked again later (never -errno) */

/*
 * A file the name leads to no more: made as asked, with the command's umask.
 * If a FIFO appeared there meanwhile, it was opened without blocking; one
 * not the sandbox's is closed again, unused.  A descriptor, or -errno.
 */
static int create_for(const struct ows__chan *ch, const struct target *t, int dir, const char *name,
		      int flags, mode_t mode)
{
	long mask = status_number(t->tid, "Umask:", 8);
	if (mask < 0)
		return -ENOENT;
	mode_t was = umask((mode_t)mask);
	int fd = open_as_command(t, dir, name, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
	umask(was);
	if (fd < 0)
		return fd;
	bool fifo;
	int e = judge(ch, fd, &fifo);
	if (e) {
		close(fd);
		return -e;
	}
	make_blocking(fd, flags);
	return fd;
}

/*
 * Whether a FIFO opened for reading without blocking (`fd`) would have ended
 * a blocking open: a writer holds it, or came (and may have gone).  What a
 * writer put in stays there: tee() copies without taking.
 */
static bool writer_came(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
		return true; /* HUP: a writer came and went since the open */
	int copy[2];
	if (pipe2(copy, O_NONBLOCK | O_CLOEXEC) != 0)
		return false; /* asked again */
	ssize_t n = tee(fd, copy[1], 1, SPLICE_F_NONBLOCK);
	bool came = n > 0 || (n < 0 && errno == EAGAIN); /* 0: empty, and no writer */
	close(copy[0]);
	close(copy[1]);
	return came;
}

/*
 * open(name, flags, mode) as the command asked it, from `dir`: the name
 * resolved once, as the command would (O_PATH), judged, and opened through
 * that inode.  A descriptor, -errno, or WAITING: a blocking open of one of
 * the sandbox's own FIFOs whose other end is not there yet, *waiting holding
 * the O_PATH (a writer, which opens again once a reader came) or the FIFO
 * open for reading (a reader: counted as one, as the kernel counts a reader
 * that waits).
 */
static int open_for(const struct ows__chan *ch, const struct target *t, int dir, const char *name,
		    int flags, mode_t mode, int *waiting)
{
	int at = open_as_command(t, dir, name, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW), 0);
	if (at < 0)
		return at == -ENOENT && (flags & O_CREAT) ? create_for(ch, t, dir, name, flags, mode)
							  : at;
	as_commands_own(ch, t, name, flags, &at);
	bool fifo = false;
	int e = judge(ch, at, &fifo), fd = -1, acc = flags & O_ACCMODE;
	const bool waits = !e && fifo && !(flags & O_NONBLOCK) && acc != O_RDWR;
	if (!e) {
		fd = reopen(at, waits ? flags | O_NONBLOCK : flags);
		e = fd < 0 ? errno : 0;
	}
	if (waits && acc == O_WRONLY && e == ENXIO) { /* no reader yet: the writer waits for one */
		*waiting = at;
		return WAITING;
	}
	close(at);
	if (waits && acc == O_RDONLY && !e && !writer_came(fd)) {
		*waiting = fd;
		return WAITING;
	}
	if (waits && !e)
		make_blocking(fd, flags);
	return e ? -e : fd;
}

/* One open(): made or refused, answered (now, or once a FIFO's other end came). */
static void take_open(struct ows__chan_supervisor *s, const struct seccomp_notif *n)
{
	int dirfd = AT_FDCWD, flags = (int)n->data.args[1];
	uint64_t name_at = n->data.args[0];
	mode_t mode = (mode_t)n->data.args[2];
	if (n->data.nr == SYS_openat) {
		dirfd = (int)n->data.args[0];
		name_at = n->data.args[1];
		flags = (int)n->data.args[2];
		mode = (mode_t)n->data.args[3];
	} else if (n->data.nr == CHAN_SYS_CREAT) {
		flags = O_CREAT | O_WRONLY | O_TRUNC;
		mode = (mode_t)n->data.args[1];
	}
	struct target t = {.tid = (pid_t)n->pid, .pidfd = -1, .mem = -1};
	char name[4096], own[4096 + 32];
	const char *path = name;
	int dir = AT_FDCWD, waiting = -1, r = -ENOENT;
	int e = read_name(t.tid, name_at, name, sizeof(name));
	if (!e && !(path = as_command(&t, name, own, sizeof(own))))
		e = ENAMETOOLONG;
	if (!e)
		e = start_of(t.tid, path, dirfd, &dir);
	/* Still waiting: the name and the folder were the caller's, not a successor's. */
	if (!e && !still_waiting(s->notify, n->id))
		e = ENOENT;
	if (!e)
		r = open_for(s->ch, &t, dir, path, flags, mode, &waiting);
	if (dir >= 0)
		close(dir);
	if (e)
		answer(s->notify, n->id, e);
	else if (r == WAITING && s->nwaiting < OWS_CHAN_MAX_PENDING) {
		s->waiting[s->nwaiting].id = n->id;
		s->waiting[s->nwaiting].fd = waiting;
		s->waiting[s->nwaiting++].flags = flags;
	} else if (r == WAITING && (flags & O_ACCMODE) == O_RDONLY) {
		make_blocking(waiting, flags); /* more wait than this reaper keeps: not this one */
		give(s->notify, n->id, waiting, flags);
	} else if (r == WAITING) {
		close(waiting); /* more wait than this reaper keeps: as if O_NONBLOCK */
		answer(s->notify, n->id, ENXIO);
	} else if (r < 0)
		answer(s->notify, n->id, -r);
	else
		give(s->notify, n->id, r, flags);
}

int ows__chan_timeout(const struct ows__chan_supervisor *s)
{
	return s->nwaiting ? 20 : -1;
}

void ows__chan_retry(struct ows__chan_supervisor *s)
{
	for (int i = 0; i < s->nwaiting;) {
		int fd = -1, flags = s->waiting[i].flags;
		const bool reader = (flags & O_ACCMODE) == O_RDONLY;
		uint64_t id = s->waiting[i].id;
		if (s->notify >= 0 && still_waiting(s->notify, id)) {
			if (reader && !writer_came(s->waiting[i].fd)) {
				i++;
				continue;
			}
			fd = reader ? s->waiting[i].fd : reopen(s->waiting[i].fd, flags | O_NONBLOCK);
			if (fd < 0 && errno == ENXIO) {
				i++;
				continue;
			}
			if (fd < 0)
				answer(s->notify, id, errno);
			else {
				make_blocking(fd, flags);
				give(s->notify, id, fd, flags); /* closes fd */
			}
		}
		if (fd != s->waiting[i].fd)
			close(s->waiting[i].fd);
		s->waiting[i] = s->waiting[--s->nwaiting];
	}
}

#define PENDING (-1) /* answered later, when the socket is writable */

/*
 * connect(fd, addr, len) as the command asked it, on its socket `sock` (a
 * copy), with the address copied out of its memory.  0, an errno, or PENDING.
 */
static int connect_for(struct ows__chan_supervisor *s, uint64_t id, const struct target *t,
		       int sock, const struct sockaddr_storage *addr, socklen_t len)
{
	int domain;
	socklen_t dl = sizeof(domain);
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &dl) != 0)
		return errno;
	const struct sockaddr_un *sun = (const struct sockaddr_un *)addr;
	const struct sockaddr *to = (const struct sockaddr *)addr;
	struct sockaddr_un via;
	int opath = -1;
	if (domain == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
	    sun->sun_family == AF_UNIX && sun->sun_path[0] != '\0') {
		int e = resolve(s->ch, s->notify, id, t, sun, len, &via, &len, &opath);
		if (e)
			return e;
		to = (const struct sockaddr *)&via;
	}
	int fl = fcntl(sock, F_GETFL);
	bool blocking = fl >= 0 && !(fl & O_NONBLOCK);
	if (blocking)
		fcntl(sock, F_SETFL, fl | O_NONBLOCK);
	int rc = connect(sock, to, len), e = rc == 0 ? 0 : errno;
	if (blocking)
		fcntl(sock, F_SETFL, fl);
	if (opath >= 0)
		close(opath);
	/* A blocking connect() waits for its end, also when restarted after a signal. */
	if (blocking && (e == EINPROGRESS || e == EALREADY)) {
		if (s->npending < OWS_CHAN_MAX_PENDING)
			return PENDING;
		struct pollfd p = {.fd = sock, .events = POLLOUT};
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		socklen_t el = sizeof(e);
		if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
			e = errno;
	}
	return e;
}

/* One connect() from the command: fetched, made or refused, answered. */
static void take(struct ows__chan_supervisor *s)
{
	struct seccomp_notif n;
	memset(&n, 0, sizeof(n));
	if (ioctl(s->notify, SECCOMP_IOCTL_NOTIF_RECV, &n) != 0)
		return; /* the caller is gone (ENOENT), or a signal came first */
	if (n.data.nr == SYS_socket) {
		/* Under `none` only: a family the wall refuses.  An internet one is a
		 * network call, counted for the host to say the network is off. */
		int family = (int)n.data.args[0];
		if ((family == AF_INET || family == AF_INET6) && s->offline_calls < UINT32_MAX)
			s->offline_calls++;
		answer(s->notify, n.id, EPERM);
		return;
	}
	if (n.data.nr == SYS_umask) {
		answer_umask(s->notify, &n);
		return;
	}
	if (n.data.nr == SYS_openat || n.data.nr == CHAN_SYS_OPEN || n.data.nr == CHAN_SYS_CREAT) {
		take_open(s, &n);
		return;
	}
	if (n.data.nr != SYS_connect) {
		answer(s->notify, n.id, ENOSYS);
		return;
	}
	struct target t = {.pidfd = -1, .mem = -1};
	struct sockaddr_storage addr;
	const socklen_t len = (socklen_t)n.data.args[2];
	int sock = -1, e = pin(s->notify, &n, &t);
	if (!e && (int)n.data.args[2] < 0)
		e = EINVAL;
	if (!e && len > sizeof(addr))
		e = EINVAL; /* as the kernel says of it */
	if (!e && len && pread(t.mem, &addr, len, (off_t)n.data.args[1]) != (ssize_t)len)
		e = EFAULT;
	if (!e && len < sizeof(addr))
		memset((char *)&addr + len, 0, sizeof(addr) - len);
	if (!e && (sock = (int)syscall(SYS_pidfd_getfd, t.pidfd, (int)n.data.args[0], 0)) < 0)
		e = errno;
	if (!e)
		e = connect_for(s, n.id, &t, sock, &addr, len);
	unpin(&t);
	if (e == PENDING) {
		s->pending[s->npending].id = n.id;
		s->pending[s->npending++].fd = sock;
		return;
	}
	if (sock >= 0)
		close(sock);
	answer(s->notify, n.id, e);
}

void ows__chan_begin(struct ows__chan_supervisor *s)
{
	/* Each call waits for its answer: wake the caller like a reply, not a task.
	 * Earlier kernels answer EINVAL, and wake it the usual way. */
	if (s->notify >= 0)
		ioctl(s->notify, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

int ows__chan_pollfds(const struct ows__chan_supervisor *s, struct pollfd *pfd, int max)
{
	int k = 0;
	if (s->notify >= 0 && k < max)
		pfd[k++] = (struct pollfd){.fd = s->notify, .events = POLLIN};
	for (int i = 0; i < s->npending && k < max; i++)
		pfd[k++] = (struct pollfd){.fd = s->pending[i].fd, .events = POLLOUT};
	return k;
}

void ows__chan_serve(struct ows__chan_supervisor *s, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		if (pfd[i].fd == s->notify) {
			if (pfd[i].revents & POLLIN)
				take(s);
			else if (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				close(s->notify); /* no process of the call is left under it */
				s->notify = -1;
			}
			continue;
		}
		for (int j = 0; j < s->npending; j++) {
			if (s->pending[j].fd != pfd[i].fd)
				continue;
			int e = 0;
			socklen_t el = sizeof(e);
			if (getsockopt(s->pending[j].fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
				e = errno;
			answer(s->notify, s->pending[j].id, e);
			close(s->pending[j].fd);
			s->pending[j] = s->pending[--s->npending];
			break;
		}
	}
}
