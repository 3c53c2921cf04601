/*
 * Channels to the person's programs: unix sockets in session folders.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
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
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of one thread */
#endif

/* ------------------------------------------------------------- the filter */

int ows__chan_filter(struct sock_filter *insns, size_t max, bool offline)
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
		/*
		 * A umask without S_IWOTH (init hands it on): to the reaper, which
		 * answers with the mask as it is and leaves it.  Reading the umask
		 * by setting 0 and back (pip, tar, coreutils) still reads it right,
		 * and nothing made afterwards is writable by other users.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_umask, 0, 4), /* to the seccomp check */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, S_IWOTH, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
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

/* 0, or an errno: the target is gone (its call too), or may not be read. */
static int pin(int notify, const struct seccomp_notif *n, struct target *t)
{
	char path[48] = "/proc/";
	t->tid = (pid_t)n->pid;
	t->pidfd = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
	if (t->pidfd < 0 && errno == EINVAL) { /* before 6.9: a pidfd names a process */
		pid_t tgid = tgid_of(t->tid);
		t->pidfd = tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : -1;
	}
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
	/* /proc/self is whoever resolves it: the command's, not the reaper's.  A link to
	 * it elsewhere resolves to the reaper's own and is refused: nothing is found. */
	char own[sizeof(path) + 32];
	const char *name = path;
	const char *const selves[] = {"/proc/self/", "/proc/thread-self/"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(selves); i++)
		if (strncmp(path, selves[i], strlen(selves[i])) == 0) {
			own[0] = '\0';
			ows__buf_add(own, sizeof(own), "/proc/");
			ows__buf_add_num(own, sizeof(own), t->tid);
			ows__buf_add(own, sizeof(own), path + strlen(selves[i]) - 1);
			name = own;
		}
	int dir = AT_FDCWD; /* an absolute name: the sandbox's root, the reaper's too */
	if (name[0] != '/') {
		char cwd[48] = "/proc/";
		ows__buf_add_num(cwd, sizeof(cwd), t->tid);
		ows__buf_add(cwd, sizeof(cwd), "/cwd");
		dir = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0 || !still_waiting(notify, id)) {
			if (dir >= 0)
				close(dir);
			return dir < 0 ? errno : ENOENT;
		}
	}
	*opath = openat(dir, name, O_PATH | O_CLOEXEC); /* connect() follows a link too */
	int e = *opath < 0 ? errno : 0;
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
 * umask(mask) without S_IWOTH, not made: the caller gets its umask as it is
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
