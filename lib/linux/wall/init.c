/*
 * The sandbox's init: its helpers (allocation-free text, the child stack, what reapers
 * are spared, messages to the host) and the server that starts commands.  Its start is
 * init_start.c, its restriction init_restrict.c, its proof init_prove.c.  See init.h for
 * the rules this code lives by (no allocation, no locks: only system calls).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channels.h"
#include "init.h"
#include "proxy/proxy.h"
#include "view.h"

/* --------------------------------------------------- allocation-free text */

void ows__buf_add(char *buf, size_t size, const char *s)
{
	size_t n = strnlen(buf, size);
	while (*s && n + 1 < size)
		buf[n++] = *s++;
	buf[n < size ? n : size - 1] = '\0';
}

void ows__buf_add_num(char *buf, size_t size, long v)
{
	char tmp[24];
	int i = (int)sizeof(tmp) - 1;
	bool neg = v < 0;
	unsigned long u = neg ? (unsigned long)-v : (unsigned long)v;
	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u && i > 1);
	if (neg)
		tmp[--i] = '-';
	ows__buf_add(buf, size, tmp + i);
}

const char *ows__init_errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/*
 * Commands and the proof start with CLONE_VM | CLONE_VFORK: init's memory
 * (a copy of the host's, possibly large) is not copied for a child that is
 * about to exec, and init sleeps until it has.  One child at a time, so one
 * stack serves them all.
 */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

pid_t ows__init_start_child(int (*fn)(void *), void *arg, int flags)
{
	return clone(fn, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD | flags,
		     arg);
}

/* What the reapers share to judge their commands' connect() calls (channels.c). */
static struct ows__chan chan = {.diag = -1};

void ows__init_open_channels(const struct ows__plan *p)
{
	int e = p->in_host_ns ? 0 /* no unix socket can be made there */
		: ows__chan_open(&chan);
	chan.offline = p->net == OWS_NET_NONE;
	chan.closed = ows__plan_closed_bits(p);
	if (e) {
		errno = e;
		ows__init_die(p, "open sock_diag", NULL);
	}
	if (p->in_host_ns)
		return;
	/* Where the sandbox's own FIFOs are: the memory file systems init made, and
	 * the private folder when it is bound from disk. */
	const char *own[OWS_CHAN_MAX_MOUNTS];
	int n = 0;
	for (int i = 0; i < p->nmounts && n < (int)OWS__ARRAY_LEN(own) - 1 /* pipes' */; i++)
		if (p->mounts[i].kind == OWS_M_TMPFS ||
		    (p->mounts[i].kind == OWS_M_BIND && p->private_dir &&
		     strcmp(p->mounts[i].dst, p->private_dir) == 0))
			own[n++] = p->mounts[i].dst;
	if ((e = ows__chan_note_mounts(&chan, own, n))) {
		errno = e;
		ows__init_die(p, "note the sandbox's mounts", NULL);
	}
}

/* A call's reaper runs here, in its own copy of init (init.c's handle_spawn). */
static char reaper_stack[64 * 1024] __attribute__((aligned(16)));

/* ------------------------------------------- init: what reapers are spared */

/* Anonymous mappings smaller than this are left to the reapers: the host's bulk is in large ones. */
#define SPARE_MIN (256UL << 10)

static unsigned long parse_hex(const char **s)
{
	unsigned long v = 0;
	for (;; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

/*
 * Around each address a reaper uses, this much stays on either side: the
 * thread's TCB (struct pthread, a few KiB) and errno, which may sit in the
 * same mapping as the host's bulk (the kernel merges a large anonymous
 * mapping with its anonymous neighbour), and the frames of init's server.
 */
#define SPARE_WINDOW (64UL << 10) /* a multiple of the page size */

/* Marks [lo, hi) MADV_DONTFORK but for a window around each kept address. */
static void spare_range(unsigned long lo, unsigned long hi, const unsigned long *keep, int nkeep)
{
	const unsigned long page = (unsigned long)getpagesize();
	unsigned long from = lo;
	while (from < hi) {
		unsigned long cut = hi, resume = hi; /* the first window still ahead */
		for (int i = 0; i < nkeep; i++) {
			unsigned long k = keep[i] & ~(page - 1);
			unsigned long wlo = k > lo + SPARE_WINDOW ? k - SPARE_WINDOW : lo;
			unsigned long whi = k + page + SPARE_WINDOW < hi ? k + page + SPARE_WINDOW : hi;
			if (keep[i] < lo || keep[i] >= hi || whi <= from)
				continue;
			if (wlo < from)
				wlo = from;
			if (wlo < cut || (wlo == cut && whi > resume)) {
				cut = wlo;
				resume = whi;
			}
		}
		if (cut > from)
			madvise((void *)from, cut - from, MADV_DONTFORK);
		from = resume;
	}
}

struct spare {
	const unsigned long *keep; /* addresses a reaper uses: their mappings stay */
	int nkeep;
	unsigned long prev_end;    /* the mapping before, and whether it is a file's data */
	bool prev_data;
	unsigned long prev_lo, prev_off, prev_ino; /* that data: where, from which file offset */
	char *prev_path;           /* and its file (PATH_MAX) */
};

static unsigned long parse_dec(const char **s)
{
	unsigned long v = 0;
	for (; **s >= '0' && **s <= '9'; (*s)++)
		v = v * 10 + (unsigned long)(**s - '0');
	return v;
}

/*
 * Where the .bss after a file's data ends: the end in memory of the PT_LOAD
 * segment that holds the data mapped at `lo` from file offset `off`, read
 * from the file's program headers (the file of inode `ino`).  The kernel
 * merges the .bss with an anonymous neighbour of the host's (a Python arena
 * placed right after a module's data: megabytes), which reapers need not
 * copy.  0 when it cannot be told: then all of it stays.  System calls only.
 */
static unsigned long bss_end(const char *path, unsigned long ino, unsigned long lo, unsigned long off)
{
	static Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	struct stat st;
	unsigned long end = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && (unsigned long)st.st_ino == ino &&
	    pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum <= OWS__ARRAY_LEN(ph)) {
		size_t n = eh.e_phnum * sizeof(Elf64_Phdr);
		const unsigned long page = (unsigned long)getpagesize();
		if (pread(fd, ph, n, (off_t)eh.e_phoff) == (ssize_t)n)
			for (int i = 0; i < eh.e_phnum; i++)
				if (ph[i].p_type == PT_LOAD && off >= (ph[i].p_offset & ~(page - 1)) &&
				    off < ph[i].p_offset + ph[i].p_filesz)
					end = lo + ph[i].p_offset + ph[i].p_memsz - off;
	}
	close(fd);
	return end;
}

/* One line of /proc/self/maps: "lo-hi perms offset dev inode [path]". */
static void spare_mapping(struct spare *sp, const char *line)
{
	const char *s = line;
	unsigned long lo = parse_hex(&s);
	if (*s++ != '-')
		return;
	unsigned long hi = parse_hex(&s);
	if (*s++ != ' ')
		return;
	const bool private_rw = strncmp(s, "rw-p ", 5) == 0;
	const char *path = s, *off_at = s + 5;
	unsigned long off = parse_hex(&off_at), ino = 0;
	for (int field = 0; field < 4 && path; field++) { /* perms, offset, dev, inode */
		path = strchr(path, ' ') ? strchr(path, ' ') + 1 : NULL;
		if (field == 2 && path) {
			const char *at = path;
			ino = parse_dec(&at);
		}
	}
	while (path && *path == ' ')
		path++;
	const bool anon = path && (*path == '\0' || strcmp(path, "[heap]") == 0);
	const bool data = private_rw && path && *path && *path != '[';
	/* .bss follows its file's data (rw-p): libc's and this library's statics live there;
	 * what the mapping holds past the file's .bss is the host's. */
	unsigned long from = lo;
	if (anon && lo == sp->prev_end && sp->prev_data) {
		const unsigned long page = (unsigned long)getpagesize();
		unsigned long end = bss_end(sp->prev_path, sp->prev_ino, sp->prev_lo, sp->prev_off);
		from = end ? (end + page - 1) & ~(page - 1) : hi;
		if (from < lo)
			from = lo;
	}
	if (private_rw && anon && from < hi && hi - from >= SPARE_MIN)
		spare_range(from, hi, sp->keep, sp->nkeep);
	sp->prev_end = hi;
	sp->prev_data = data && strlen(path) < PATH_MAX;
	if (sp->prev_data) {
		strcpy(sp->prev_path, path);
		sp->prev_lo = lo;
		sp->prev_off = off;
		sp->prev_ino = ino;
	}
}

/*
 * Init is a copy of the host, whose memory may be large (a Python host's
 * gigabyte), and each call's reaper is a fork of init: copying the page
 * tables of that memory would cost every spawn milliseconds (25 ms for a
 * 1 GiB host).  A reaper touches none of it: its stack and init's, the
 * thread's TLS, the statics of libc and this library, the request's own
 * mappings (made later).  So the host's large anonymous mappings are marked
 * MADV_DONTFORK here: init keeps them (it may read the plan there), a
 * reaper has none.  Kept: file mappings, the .bss after each, small ones,
 * and a window around each address a reaper uses.  Nothing is freed;
 * where /proc cannot be read reapers only cost more.
 */
void ows__init_spare_reapers(void)
{
	int here;
	const unsigned long keep[] = {
		(unsigned long)&here, (unsigned long)pthread_self(), (unsigned long)&errno,
		(unsigned long)child_stack, (unsigned long)(child_stack + sizeof(child_stack) - 1),
		(unsigned long)reaper_stack, (unsigned long)(reaper_stack + sizeof(reaper_stack) - 1),
	};
	static char buf[8192], prev_path[PATH_MAX];
	struct spare sp = {.keep = keep, .nkeep = (int)OWS__ARRAY_LEN(keep), .prev_path = prev_path};
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', (size_t)(buf + have - line)))) {
			*nl = '\0';
			spare_mapping(&sp, line);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: not ours to judge */
	}
	close(fd);
}

/* ------------------------------------------------------------ init: setup */

void ows__init_send(int fd, const struct ows__msg *m, size_t len)
{
	ssize_t r;
	do
		r = send(fd, m, len, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
}

int ows__send_fds(int sock, const struct ows__msg *m, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(OWS_MSG_MAX_FDS * sizeof(int))];
	if (nfds < 0 || nfds > OWS_MSG_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof(*m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	ssize_t sent;
	do
		sent = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	return sent < 0 ? -1 : 0;
}

void ows__init_die(const struct ows__plan *p, const char *stage,
					       const char *path)
{
	struct ows__msg m = {.type = OWS_MSG_FAIL, .err = errno};
	ows__buf_add(m.text, sizeof(m.text), stage);
	if (path) {
		ows__buf_add(m.text, sizeof(m.text), " ");
		ows__buf_add(m.text, sizeof(m.text), path);
	}
	ows__init_send(p->ctl, &m, sizeof(m));
	_exit(127);
}

/* ------------------------------------------------------ init: the server */

/* A call's reaper, as init knows it. */
struct child {
	pid_t pid;   /* the reaper; 0: a free slot */
	uint32_t id; /* the call's */
};

/* Finds `name` in a PATH and execs it; returns the most telling errno. */
static int exec_path(char *const argv[], char *const envp[])
{
	const char *file = argv[0];
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		return errno;
	}
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	int best = ENOENT;
	for (const char *s = path;; s++) {
		const char *end = strchr(s, ':');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		char buf[4096];
		if (n + strlen(file) + 2 < sizeof(buf)) {
			memcpy(buf, n ? s : ".", n ? n : 1);
			buf[n ? n : 1] = '/';
			strcpy(buf + (n ? n : 1) + 1, file);
			execve(buf, argv, envp);
			if (errno == EACCES || errno == ENOEXEC)
				best = errno;
			else if (errno != ENOENT && errno != ENOTDIR && best == ENOENT)
				best = errno;
		}
		if (!end)
			break;
		s = end;
	}
	return best;
}

struct request {
	char **argv;
	char **envp;
	const char *cwd;
	void *data;      /* the request's mappings, for unmap_request() */
	size_t data_len;
	void *vec;
	size_t vec_len;
};

/* Lays argv and envp out of the request memfd: u32 argc, u32 envc, then strings. */
static int map_request(int memfd, struct request *rq)
{
	struct stat st;
	if (fstat(memfd, &st) != 0 || st.st_size < 8 || st.st_size > (64 << 20))
		return EINVAL;
	size_t size = (size_t)st.st_size;
	char *data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, memfd, 0);
	if (data == MAP_FAILED)
		return errno;
	rq->data = data;
	rq->data_len = size;
	uint32_t argc, envc;
	memcpy(&argc, data, 4);
	memcpy(&envc, data + 4, 4);
	if (argc == 0 || argc > (1u << 20) || envc > (1u << 20))
		return EINVAL;
	size_t vsize = (argc + envc + 2) * sizeof(char *);
	char **v = mmap(NULL, vsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		return errno;
	rq->vec = v;
	rq->vec_len = vsize;
	char *s = data + 8, *end = data + size;
	size_t k = 0;
	for (uint32_t i = 0; i < argc + envc + 1; i++) {
		char *z = memchr(s, '\0', (size_t)(end - s));
		if (!z)
			return EINVAL;
		if (i == argc + envc) {
			rq->cwd = s;
		} else {
			v[k++] = s;
			if (i == argc - 1)
				v[k++] = NULL;
		}
		s = z + 1;
	}
	v[k] = NULL;
	rq->argv = v;
	rq->envp = v + argc + 1;
	return 0;
}

static void unmap_request(struct request *rq)
{
	if (rq->data)
		munmap(rq->data, rq->data_len);
	if (rq->vec)
		munmap(rq->vec, rq->vec_len);
	rq->data = rq->vec = NULL;
}

struct command {
	struct ows__fence fence;
	struct request rq;
	const int *stdio;
	bool supervised;  /* its connect() calls go to the reaper (channels.c) */
	int notify;       /* written by the child: the seccomp listener, in the reaper's table */
	int32_t err;      /* written by the child when it fails before exec */
	char stage[12];
};

/*
 * The child starts sharing the reaper's descriptor table (CLONE_FILES), so
 * that the listener of the filter it takes lands in the reaper's table; it
 * then takes a table of its own, and its copy goes with the others at
 * exec's close_range.  Nothing before exec can connect.
 */
static int supervise_command(struct command *c)
{
	struct sock_filter insns[96];
	int n = ows__chan_filter(insns, OWS__ARRAY_LEN(insns), chan.offline, chan.closed);
	if (n < 0)
		return E2BIG;
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = insns};
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
	if (fd < 0)
		return errno;
	c->notify = (int)fd;
	return syscall(SYS_unshare, CLONE_FILES) != 0 ? errno : 0;
}

static int command_child(void *arg)
{
	struct command *c = arg;
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (c->supervised && (c->err = supervise_command(c))) {
		strcpy(c->stage, "channels");
		_exit(127);
	}
	for (int i = 0; i < 3; i++)
		if (dup2(c->stdio[i], i) < 0) {
			c->err = errno;
			strcpy(c->stage, "stdio");
			_exit(127);
		}
	syscall(SYS_close_range, 3, ~0U, 0);
	if (chdir(c->rq.cwd) != 0) {
		c->err = errno;
		strcpy(c->stage, "cwd");
		_exit(127);
	}
	c->err = c->fence.in_host_ns ? ows__init_restrict_command(&c->fence) : ows__init_guard_command(&c->fence);
	if (c->err) {
		strcpy(c->stage, "restrict");
		_exit(127);
	}
	c->err = exec_path(c->rq.argv, c->rq.envp);
	strcpy(c->stage, "exec");
	_exit(127);
}

/*
 * allowlist: the listener of one call, on 127.0.0.1:port in the sandbox's
 * network, made before the command starts so that its proxy variables (set
 * to this port by the host) lead to the host's proxy from its first
 * instruction.  What the proxy accepts from it, and refuses, belongs to that
 * call.  A port in use means something inside listens there: the host picks
 * another.  A listener, or -1 with errno.
 */
static int call_listener(const struct ows__plan *p, int port)
{
	if (!p->proxy_port || port <= OWS__PROXY_PORT_INSIDE || port > OWS__PROXY_PORT_INSIDE + 99) {
		errno = EINVAL;
		return -1;
	}
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	/* Connections of an earlier call on this port may linger in TIME_WAIT; a
	 * listener still there is refused all the same. */
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 128) != 0) {
		int e = errno;
		if (l >= 0)
			close(l);
		errno = e;
		return -1;
	}
	return l;
}

/*
 * Each call has a reaper of its own: a fork of init that starts the command
 * and stays its parent, a child subreaper.  What the command leaves running
 * (a double fork, nohup, a daemon that called setsid()) becomes the
 * reaper's child when its parent dies, never init's, so the reaper knows
 * the call's processes and no other: a kill of the call (SIGKILL) ends them
 * all, generation by generation (end_descendants), and touches no other
 * call.  It sends the command's exit on the call's status channel when the
 * command exits (the call ends there; its daemons may go on), reaps until
 * it has no child left, then exits.
 *
 * Init asks a reaper by queueing it OWS_SIG_CALL with the signal as value:
 * SIGKILL ends the call's tree, any other signal goes to the command's
 * process group; a reaper tells init its command exited the same way, with
 * the call's id (call_ended).  Init and its reapers keep OWS_SIG_CALL blocked from the
 * start, so that a request never finds a reaper that has not blocked it yet;
 * a reaper believes only its parent, and the call's processes cannot reach
 * it (ows__init_guard_command).  Should a reaper die all the same, its orphans go to
 * init and live until the session closes, like those of an older init.
 */
#define OWS_SIG_CALL SIGRTMIN

struct call {
	struct command cmd;
	uint32_t id;
	int status;   /* the call's status channel (the reaper's) */
	int listener; /* the call's proxy listener, or -1 */
	int port;
	pid_t pid;    /* the command, 0 once its exit is sent */
	pid_t init;   /* the reaper's parent, the one it believes */
	const struct ows__chan_supervisor *sv; /* its connects, for what the exit tells; or NULL */
};

/*
 * Keeps only the descriptors in keep (n of them, below 1024) and closes the
 * rest: a reaper holds no other call's channel, and not the control socket.
 */
static void close_all_but(const int *keep, int n)
{
	int sorted[8], k = 0;
	for (int i = 0; i < n && k < (int)OWS__ARRAY_LEN(sorted); i++) {
		if (keep[i] < 0)
			continue;
		int j = k++;
		for (; j > 0 && sorted[j - 1] > keep[i]; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = keep[i];
	}
	unsigned int from = 0;
	for (int i = 0; i < k; i++) {
		if ((unsigned int)sorted[i] > from)
			syscall(SYS_close_range, from, (unsigned int)sorted[i] - 1, 0);
		from = (unsigned int)sorted[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* The command's exit, once, on the call's status channel; then the call has ended. */
static void call_reaped(void *arg, pid_t pid, int st)
{
	struct call *k = arg;
	if (!k->pid || pid != k->pid)
		return;
	struct ows__msg m = {.type = OWS_MSG_EXITED, .id = k->id};
	m.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	m.err = WIFSIGNALED(st) ? WTERMSIG(st) : 0; /* tells 128+N from an exit(128+N) */
	if (k->sv)
		m.offline_calls = k->sv->offline_calls;
	ows__init_send(k->status, &m, sizeof(m));
	close(k->status);
	k->status = -1;
	k->pid = 0;
	/* The call has ended: init frees its slot (what it left running stays the reaper's). */
	sigqueue(k->init, OWS_SIG_CALL, (union sigval){.sival_int = (int)k->id});
}

static void end_descendants(void (*reaped)(void *, pid_t, int), void *arg);

/* Starts the command and sends STARTED (with the call's listener) or SPAWN_FAIL. */
static bool call_start(struct call *k)
{
	struct ows__msg reply = {.type = OWS_MSG_SPAWN_FAIL, .id = k->id};
	k->cmd.notify = -1;
	k->cmd.supervised = chan.diag >= 0;
	pid_t pid = ows__init_start_child(command_child, &k->cmd, k->cmd.supervised ? CLONE_FILES : 0);
	if (pid < 0 || k->cmd.err) {
		if (k->cmd.notify >= 0)
			close(k->cmd.notify);
		k->cmd.notify = -1;
	}
	unmap_request(&k->cmd.rq);
	for (int i = 0; i < 3; i++)
		close(k->cmd.stdio[i]);
	if (pid < 0) {
		reply.err = errno;
		ows__buf_add(reply.text, sizeof(reply.text), "fork");
	} else if (k->cmd.err) {
		reply.err = k->cmd.err;
		k->cmd.stage[sizeof(k->cmd.stage) - 1] = '\0';
		ows__buf_add(reply.text, sizeof(reply.text), k->cmd.stage);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	} else {
		reply.type = OWS_MSG_STARTED;
		reply.code = k->listener >= 0 ? k->port : 0;
		k->pid = pid;
	}
	/* The call's listener goes to the host with the news that it started. */
	if (reply.type == OWS_MSG_STARTED && k->listener >= 0) {
		if (ows__send_fds(k->status, &reply, &k->listener, 1) == 0)
			reply.type = 0;
		else
			reply.code = 0; /* the call shares the session's listener */
	}
	if (reply.type)
		ows__init_send(k->status, &reply, sizeof(reply));
	if (k->listener >= 0)
		close(k->listener);
	k->listener = -1;
	return k->pid != 0;
}

/* The reaper's life: see above.  Runs in a fork of init (its own copy of *arg). */
static int call_reaper(void *arg)
{
	struct call *k = arg;
	const int keep[] = {k->cmd.stdio[0], k->cmd.stdio[1], k->cmd.stdio[2], k->status, k->listener,
			    chan.diag};
	close_all_but(keep, (int)OWS__ARRAY_LEN(keep));
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, OWS_SIG_CALL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		struct ows__msg m = {.type = OWS_MSG_SPAWN_FAIL, .id = k->id, .err = errno};
		ows__buf_add(m.text, sizeof(m.text), "reaper");
		ows__init_send(k->status, &m, sizeof(m));
		_exit(0);
	}
	k->init = getppid();
	k->cmd.fence.reaper = (pid_t)syscall(SYS_getpid);
	if (!call_start(k))
		_exit(0);
	struct ows__chan_supervisor sv = {.ch = &chan, .notify = k->cmd.notify};
	ows__chan_begin(&sv);
	k->sv = &sv;
	for (;;) {
		struct pollfd pfd[2 + OWS_CHAN_MAX_PENDING] = {{.fd = sfd, .events = POLLIN}};
		int npfd = 1 + ows__chan_pollfds(&sv, pfd + 1, (int)OWS__ARRAY_LEN(pfd) - 1);
		if (poll(pfd, (nfds_t)npfd, ows__chan_timeout(&sv)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		ows__chan_serve(&sv, pfd + 1, npfd - 1);
		ows__chan_retry(&sv);
		if (!(pfd[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			break;
		if (si.ssi_signo == (uint32_t)OWS_SIG_CALL) {
			if ((pid_t)si.ssi_pid != k->init || si.ssi_code != SI_QUEUE)
				continue;
			if (si.ssi_int == SIGKILL)
				break;
			if (k->pid && kill(-k->pid, si.ssi_int) != 0)
				kill(k->pid, si.ssi_int);
			continue;
		}
		int st;
		pid_t pid;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			call_reaped(k, pid, st);
		if (pid < 0 && errno == ECHILD)
			_exit(0); /* the command and all it started are gone */
	}
	end_descendants(call_reaped, k);
	_exit(0);
}

/*
 * A spawn request carries its own reply channel: one end of a socket pair the
 * host made for this command (fds[4], SOCK_SEQPACKET: a host that let go of
 * its end costs init an EPIPE, never a SIGPIPE).  The reply (STARTED or
 * SPAWN_FAIL) and later the exit (EXITED) go there, never onto the shared
 * control socket, so that host threads spawning and waiting at once each read
 * only their own command's news.  The call's reaper holds that end while the
 * command runs and closes it once the exit is sent; when the reaper dies
 * (the session ended) it closes with it, and the host reads end of file:
 * the sandbox killed the command.
 */
static void handle_spawn(const struct ows__plan *p, const struct ows__msg *m, const int *fds, int nfds,
			 struct child *children)
{
	struct ows__msg reply = {.type = OWS_MSG_SPAWN_FAIL, .id = m->id, .err = EINVAL};
	struct call k = {.cmd = {.fence = ows__init_fence_of(p), .stdio = fds + 1}, .id = m->id, .listener = -1,
			 .port = m->code};
	int slot = -1;
	for (int i = 0; i < OWS_INIT_MAX_PROCS && slot < 0; i++)
		if (children[i].pid == 0)
			slot = i;
	if (nfds != 5) {
		/* No reply channel: closing what came tells the host it failed. */
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	}
	k.status = fds[4];
	if (slot < 0) {
		reply.err = EAGAIN;
		ows__buf_add(reply.text, sizeof(reply.text), "too many commands at once");
		goto out;
	}
	if ((reply.err = map_request(fds[0], &k.cmd.rq))) {
		ows__buf_add(reply.text, sizeof(reply.text), "request");
		goto out;
	}
	if (m->code && (k.listener = call_listener(p, m->code)) < 0) {
		reply.err = errno;
		ows__buf_add(reply.text, sizeof(reply.text), "proxy port");
		goto out;
	}
	/* No CLONE_VM: the reaper has its own copy of k, of the request's mappings, of init. */
	pid_t pid = clone(call_reaper, reaper_stack + sizeof(reaper_stack), SIGCHLD, &k);
	if (pid < 0) {
		reply.err = errno;
		ows__buf_add(reply.text, sizeof(reply.text), "fork");
		goto out;
	}
	children[slot].pid = pid;
	children[slot].id = m->id;
	reply.type = 0; /* the reaper answers */
out:
	unmap_request(&k.cmd.rq);
	if (reply.type)
		ows__init_send(k.status, &reply, sizeof(reply));
	for (int i = 0; i < 5; i++)
		close(fds[i]);
	if (k.listener >= 0)
		close(k.listener);
}

/*
 * A reaper says its command has exited: its slot is free for another call,
 * so that calls whose daemons live on do not use up OWS_INIT_MAX_PROCS.  A
 * kill of that call then finds nothing, as the host sends none after the
 * exit; the session's close ends the daemons all the same.
 */
static void call_ended(struct child *children, pid_t reaper, uint32_t id)
{
	for (int i = 0; i < OWS_INIT_MAX_PROCS; i++)
		if (children[i].pid == reaper && children[i].id == id)
			children[i].pid = 0;
}

static void reap(struct child *children)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (int i = 0; i < OWS_INIT_MAX_PROCS; i++)
			if (children[i].pid == pid)
				children[i].pid = 0;
}

/* A path the host may name inside the private home: relative, no "." or "..". */
static bool share_path_ok(const char *s, size_t n)
{
	if (n == 0 || s[0] == '/')
		return false;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && s[i] == '.') || (len == 2 && s[i] == '.' && s[i + 1] == '.'))
			return false;
		i = j + 1;
	}
	return memchr(s, '\0', n) == NULL;
}

/*
 * Writes the copies a memfd holds into the private home: records of
 * u32 kind (0 folder, 1 file), u32 path length, u32 data length, path, data;
 * folders come before what they hold.  Runs as the account, inside the wall.
 * 0, or an errno with the failing path in `why`.
 */
static int write_share(const struct ows__plan *p, int memfd, char *why, size_t why_len)
{
	struct stat st;
	if (!p->priv_home || fstat(memfd, &st) != 0 || st.st_size < 0 || st.st_size > (32 << 20))
		return EINVAL;
	size_t size = (size_t)st.st_size;
	const char *data = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, memfd, 0) : NULL;
	if (size && data == MAP_FAILED)
		return errno;
	int home = open(p->priv_home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = home < 0 ? errno : 0;
	for (size_t off = 0; !e && off < size;) {
		uint32_t h[3];
		if (size - off < sizeof(h)) {
			e = EINVAL;
			break;
		}
		memcpy(h, data + off, sizeof(h));
		off += sizeof(h);
		if (h[1] >= 4096 || h[2] > size - off || h[1] > size - off - h[2] ||
		    !share_path_ok(data + off, h[1])) {
			e = EINVAL;
			break;
		}
		char path[4096];
		memcpy(path, data + off, h[1]);
		path[h[1]] = '\0';
		const char *content = data + off + h[1];
		off += h[1] + h[2];
		why[0] = '\0';
		ows__buf_add(why, why_len, path);
		/* The folders above a lone file (.aws for .aws/config) first. */
		for (char *sl = strchr(path, '/'); sl; sl = strchr(sl + 1, '/')) {
			*sl = '\0';
			if (mkdirat(home, path, 0700) != 0 && errno != EEXIST)
				e = errno;
			*sl = '/';
		}
		if (e)
			break;
		if (h[0] == 0) {
			if (mkdirat(home, path, 0700) != 0 && errno != EEXIST)
				e = errno;
			continue;
		}
		int fd = openat(home, path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			e = errno;
			break;
		}
		for (size_t w = 0; !e && w < h[2];) {
			ssize_t k = write(fd, content + w, h[2] - w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				e = k < 0 ? errno : EIO;
			else
				w += (size_t)k;
		}
		close(fd);
	}
	if (home >= 0)
		close(home);
	if (size)
		munmap((void *)data, size);
	return e;
}

/* The pid of a process's parent from /proc/PID/stat ("PID (COMM) S PPID ..."), or -1. */
static pid_t parent_of(int procfd, const char *pid)
{
	char path[32] = "", buf[512];
	ows__buf_add(path, sizeof(path), pid);
	ows__buf_add(path, sizeof(path), "/stat");
	int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *s = strrchr(buf, ')'); /* a command's name may hold ')' and spaces */
	if (!s || s[1] != ' ' || !s[2] || s[3] != ' ')
		return -1;
	long ppid = 0;
	for (s += 4; *s >= '0' && *s <= '9'; s++)
		ppid = ppid * 10 + (*s - '0');
	return (pid_t)ppid;
}

/* SIGKILL to every process whose parent is `self`; how many there were, or -1. */
static int kill_children(pid_t self)
{
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -1;
	char buf[8192] __attribute__((aligned(8)));
	int found = 0;
	long n;
	while ((n = syscall(SYS_getdents64, procfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen)); /* d_ino, d_off, d_reclen */
			const char *name = buf + off + 19;
			off += reclen;
			long pid = 0;
			const char *s = name;
			for (; *s >= '0' && *s <= '9'; s++)
				pid = pid * 10 + (*s - '0');
			if (s == name || *s || parent_of(procfd, name) != self)
				continue;
			kill((pid_t)pid, SIGKILL);
			found++;
		}
	}
	close(procfd);
	return found;
}

/*
 * In the host's namespaces there is no PID namespace to end: init, a child
 * subreaper, kills its children until it has none.  A killed process's
 * children become init's before it can be reaped, and one with SIGKILL
 * pending forks no more, so each round takes a generation, and the loop
 * ends when /proc shows no child of init and waitpid none to reap.  A call's
 * reaper ends its call the same way.  `reaped` (may be NULL) hears of each
 * child reaped, with its status.
 */
static void end_descendants(void (*reaped)(void *, pid_t, int), void *arg)
{
	pid_t self = (pid_t)syscall(SYS_getpid);
	for (int round = 0; round < 100000; round++) {
		int found = kill_children(self), st;
		pid_t r;
		if (found > 0) /* one of them at least is dying: wait for it */
			while ((r = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
				;
		if (found > 0 && r > 0 && reaped)
			reaped(arg, r, st);
		while ((r = waitpid(-1, &st, WNOHANG)) > 0)
			if (reaped)
				reaped(arg, r, st);
		if (r < 0 && errno == ECHILD && found <= 0)
			return;
		if (found <= 0)
			poll(NULL, 0, 1);
	}
}

void ows__init_serve(const struct ows__plan *p)
{
	static struct child children[OWS_INIT_MAX_PROCS];
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, OWS_SIG_CALL); /* a reaper's "my call ended"; blocked for reapers to inherit */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		ows__init_die(p, "signalfd", NULL);

	for (;;) {
		struct pollfd pfd[2] = {{.fd = p->ctl, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				if (si.ssi_signo == (uint32_t)OWS_SIG_CALL && si.ssi_code == SI_QUEUE)
					call_ended(children, (pid_t)si.ssi_pid, (uint32_t)si.ssi_int);
			reap(children);
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct ows__msg m;
		char cbuf[CMSG_SPACE(OWS_MSG_MAX_FDS * sizeof(int))];
		struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t n = recvmsg(p->ctl, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the host closed the session or died */
		int fds[OWS_MSG_MAX_FDS], nfds = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (int i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (nfds < OWS_MSG_MAX_FDS)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
		if (n == (ssize_t)sizeof(m) && m.type == OWS_MSG_SPAWN) {
			handle_spawn(p, &m, fds, nfds, children);
			continue;
		}
		if (n == (ssize_t)sizeof(m) && m.type == OWS_MSG_SHARE && nfds == 1) {
			struct ows__msg r = {.type = OWS_MSG_SHARED, .id = m.id};
			r.err = write_share(p, fds[0], r.text, sizeof(r.text));
			close(fds[0]);
			ows__init_send(p->ctl, &r, sizeof(r));
			continue;
		}
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (n == (ssize_t)sizeof(m) && m.type == OWS_MSG_KILL) {
			/* The call's reaper does it: SIGKILL ends its tree, another signal goes
			 * to the command's process group.  A reaper not yet reaped keeps its pid. */
			for (int i = 0; i < OWS_INIT_MAX_PROCS; i++)
				if (children[i].pid && children[i].id == m.id)
					sigqueue(children[i].pid, OWS_SIG_CALL,
						 (union sigval){.sival_int = m.code});
		}
	}
	/* Never kill(-1) in the host's namespaces: that is every process of the person's. */
	if (p->in_host_ns)
		end_descendants(NULL, NULL);
	else
		kill(-1, SIGKILL); /* everything in this PID namespace but init */
	_exit(0);
}
