/*
 * Init's proof: the wall checked from inside, in a child behind the same fence a command
 * gets, before any command runs; a failed check refuses the session.  Reads and tries
 * only, allocation-free (init.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <arpa/inet.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channels.h"
#include "init.h"
#include "proxy/proxy.h"
#include "view.h"

/* ------------------------------------------------------------ init: proof */

typedef struct proof {
	struct ows__proof_msg msg;
} proof;

static ows__check *check_new(proof *pr, const char *what, const char *arg)
{
	if (pr->msg.n >= OWS_INIT_MAX_CHECKS)
		return NULL;
	ows__check *c = &pr->msg.checks[pr->msg.n++];
	ows__buf_add(c->name, sizeof(c->name), what);
	if (arg) {
		ows__buf_add(c->name, sizeof(c->name), " ");
		ows__buf_add(c->name, sizeof(c->name), arg);
	}
	return c;
}

/* passed: true, false, or OWS__CHECK_PARTIAL. */
static void check_set(ows__check *c, int passed, const char *detail, int e)
{
	if (!c)
		return;
	c->passed = passed;
	ows__buf_add(c->detail, sizeof(c->detail), detail);
	if (e) {
		ows__buf_add(c->detail, sizeof(c->detail), ": ");
		ows__buf_add(c->detail, sizeof(c->detail), ows__init_errname(e));
	}
}

/* 0 when the folder could be listed, else errno. */
static int try_list(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	char buf[1024];
	long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	int e = n < 0 ? errno : 0;
	close(fd);
	return e;
}

/* 0 when a file could be created (and was removed again), else errno. */
static int try_create(const char *dir)
{
	char path[4096] = "";
	ows__buf_add(path, sizeof(path), dir);
	ows__buf_add(path, sizeof(path), strcmp(dir, "/") ? "/.owsandbox-probe-" : ".owsandbox-probe-");
	/* Another session may probe the same folder at once, and thread ids repeat
	 * across PID namespaces: the name is random, so O_EXCL never meets its twin. */
	unsigned long r = 0;
	if (syscall(SYS_getrandom, &r, sizeof(r), 0) != (long)sizeof(r))
		r = (unsigned long)syscall(SYS_gettid);
	ows__buf_add_num(path, sizeof(path), (long)(r >> 1));
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	int e = write(fd, "x", 1) == 1 ? 0 : errno;
	close(fd);
	if (unlink(path) != 0 && !e)
		e = errno;
	return e;
}

static int try_socket(int domain, int type, int proto)
{
	int fd = socket(domain, type | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_connect_unix(const char *path, size_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (len > sizeof(sa.sun_path))
		len = sizeof(sa.sun_path);
	memcpy(sa.sun_path, path, len);
	int r = connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	int e = r == 0 ? 0 : errno;
	close(fd);
	return e;
}

static void proof_identity(proof *pr, const struct ows__plan *p)
{
	ows__check *c = check_new(pr, "account", NULL);
	uid_t uid = getuid();
	check_set(c, uid == p->uid && uid != 0 && geteuid() == uid,
		  uid == 0 ? "runs as root" : "runs as the expected unprivileged account", 0);

	c = check_new(pr, "capabilities", "none held");
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	bool none = syscall(SYS_capget, &hdr, data) == 0;
	for (int i = 0; none && i < 2; i++)
		none = !data[i].effective && !data[i].permitted && !data[i].inheritable;
	/* Only a privileged process may empty the bounding set: in the host's
	 * namespaces it stays, and no_new_privs keeps an exec from gaining from it. */
	for (int cap = 0; none && !p->in_host_ns && cap <= 63; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break;
		none = r == 0;
	}
	if (p->in_host_ns)
		none = none && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 &&
		       prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_SYS_ADMIN, 0, 0) == 0;
	check_set(c, none, !none ? "a capability is still held"
			   : p->in_host_ns ? "effective, permitted, inheritable and ambient sets empty; "
					     "no_new_privs set"
			   : "effective, permitted, inheritable and bounding sets empty", 0);

	if (p->in_host_ns) {
		c = check_new(pr, "processes", "a child of the session's init");
		check_set(c, getppid() == p->init_pid,
			  getppid() == p->init_pid ? "init, a child subreaper, ends every descendant"
						   : "not started by the session's init", 0);
	} else {
		c = check_new(pr, "processes", "own PID namespace");
		check_set(c, getppid() == 1, getppid() == 1 ? "the sandbox's init is PID 1"
							    : "shares the host's PID namespace", 0);
	}

	/* Init is a copy of the host: its memory and environment must stay out of reach. */
	char environ[32] = "/proc/";
	ows__buf_add_num(environ, sizeof(environ), p->init_pid);
	ows__buf_add(environ, sizeof(environ), "/environ");
	c = check_new(pr, "host memory not readable", environ);
	int fd = open(environ, O_RDONLY | O_CLOEXEC);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	check_set(c, fd < 0, fd < 0 ? "reading refused" : "init's environment is readable", e);
}

/*
 * In the host's namespaces, what the namespaces would have kept out: init
 * itself, the host (where a Landlock signal scope is: ABI 6), the
 * person's SysV IPC, unix sockets and /tmp.
 */
static void proof_host_ns(proof *pr, const struct ows__plan *p)
{
	ows__check *c = check_new(pr, "signal to the session's init refused", NULL);
	int e = kill(p->init_pid, 0) == 0 ? 0 : errno;
	check_set(c, e == EPERM, e ? "refused" : "init can be signalled", e);
	if (p->abi >= 6) {
		c = check_new(pr, "signal to the host refused", NULL);
		e = kill(p->host_pid, 0) == 0 ? 0 : errno;
		check_set(c, e == EPERM, e ? "refused" : "the host can be signalled", e);
	}
	c = check_new(pr, "SysV IPC refused", "shmget");
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	e = id < 0 ? errno : 0;
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	check_set(c, e == EPERM, e ? "refused" : "a segment was made", e);
	c = check_new(pr, "unix socket creation refused", NULL);
	e = try_socket(AF_UNIX, SOCK_STREAM, 0);
	check_set(c, e == EPERM, e ? "refused" : "a unix socket was created", e);
	c = check_new(pr, "the host's /tmp not listable", "/tmp");
	e = try_list("/tmp");
	check_set(c, e != 0, e ? "listing refused" : "/tmp can be listed", e);
}

static void proof_files(proof *pr, const struct ows__plan *p)
{
	for (size_t i = 0; i < p->nfolders; i++) {
		const ows__folder *f = &p->folders[i];
		if (f->access == OWS_ACCESS_RW) {
			ows__check *c = check_new(pr, "read-write", f->path);
			int e = try_list(f->path);
			if (!e)
				e = try_create(f->path);
			check_set(c, e == 0, e ? "cannot list or write" : "listed, wrote and removed a file", e);
		} else {
			ows__check *c = check_new(pr, "read-only", f->path);
			int e = try_list(f->path);
			int w = e ? 0 : try_create(f->path);
			check_set(c, !e && w, e ? "cannot list" : w ? "listed; write refused" : "writable",
				  e ? e : w);
		}
	}
	if (p->home) {
		ows__check *c = check_new(pr, "home not listable", p->home);
		int e = try_list(p->home);
		check_set(c, e != 0, e ? "listing refused" : "the home can be listed", e);
	}
	if (p->canary) {
		ows__check *c = check_new(pr, "home file not readable", p->canary);
		int fd = open(p->canary, O_RDONLY | O_CLOEXEC);
		int e = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		check_set(c, fd < 0, fd < 0 ? "reading a planted file refused" : "planted file readable", e);
	}
	for (char *const *e = p->envp; e && *e; e++)
		if (strncmp(*e, "HOME=", 5) == 0) {
			ows__check *h = check_new(pr, "private home writable", *e + 5);
			int he = try_create(*e + 5);
			check_set(h, he == 0, he ? "cannot write" : "wrote and removed a file", he);
		}
	ows__check *c = check_new(pr, "system read-only", "/usr");
	int e = try_create("/usr");
	check_set(c, e != 0, e ? "write refused" : "/usr is writable", e);

	c = check_new(pr, "root-only file not readable", "/etc/shadow");
	int fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
	e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	check_set(c, fd < 0, fd < 0 ? "reading refused" : "/etc/shadow readable", e);
}

/* A variable a shared entry set on purpose: it names the copy, not a secret. */
static bool shared_on_purpose(const struct ows__plan *p, const char *entry)
{
	for (char *const *s = p->shared_env; s && *s; s++)
		if (strcmp(*s, entry) == 0)
			return true;
	return false;
}

static void proof_secrets(proof *pr, const struct ows__plan *p)
{
	ows__check *c = check_new(pr, "no secret variables", NULL);
	for (char *const *e = p->envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		if (ows__env_name_is_secret(*e, n) && !shared_on_purpose(p, *e)) {
			char d[128] = "secret variable present: ";
			ows__buf_add(d, sizeof(d), *e);
			d[25 + (n < 100 ? n : 100)] = '\0';
			check_set(c, false, d, 0);
			return;
		}
	}
	check_set(c, true, "no name says it holds a secret", 0);
}

/* 0 when a TCP connection was made within timeout_ms, else errno (ETIMEDOUT). */
static int try_connect_tcp(uint32_t addr_be, uint16_t port, int timeout_ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr = {.s_addr = addr_be}};
	int e = 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		if (e == EINPROGRESS) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			int r = poll(&pfd, 1, timeout_ms);
			socklen_t len = sizeof(e);
			if (r == 0)
				e = ETIMEDOUT;
			else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
				e = errno;
		}
	}
	close(fd);
	return e;
}

/* allowlist: the proxy, and nothing else, is reachable. */
static void proof_allowlist(proof *pr, const struct ows__plan *p)
{
	char port[8] = "";
	ows__buf_add_num(port, sizeof(port), p->proxy_port);
	ows__check *c = check_new(pr, "proxy reachable on 127.0.0.1 port", port);
	int e = try_connect_tcp(htonl(INADDR_LOOPBACK), p->proxy_port, 2000);
	check_set(c, e == 0, e ? "cannot reach the proxy" : "connected", e);

	c = check_new(pr, "local port outside 47800-47899 unreachable", "127.0.0.1:47799");
	e = try_connect_tcp(htonl(INADDR_LOOPBACK), 47799, 2000);
	check_set(c, e != 0, e ? "refused" : "connected", e);

	/* 192.0.2.1 (TEST-NET-1) is never routed: any answer but "no route" means a way out. */
	c = check_new(pr, "direct connection out refused", "192.0.2.1:443");
	e = try_connect_tcp(htonl(0xc0000201), 443, 2000);
	check_set(c, e == ENETUNREACH || e == EPERM || e == EACCES, e ? "refused at once" : "connected", e);

	c = check_new(pr, "UDP out refused", "192.0.2.1:53");
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	e = fd < 0 ? errno : 0;
	if (fd >= 0) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53),
					 .sin_addr.s_addr = htonl(0xc0000201)};
		e = sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
		close(fd);
	}
	check_set(c, e != 0, e ? "refused" : "a datagram was sent", e);
}

static void proof_network(proof *pr, const struct ows__plan *p)
{
	struct {
		const char *name;
		int domain, type, proto;
	} probes[] = {
		{"tcp", AF_INET, SOCK_STREAM, 0},
		{"udp", AF_INET, SOCK_DGRAM, 0},
		{"raw", AF_INET, SOCK_RAW, 1},
		{"ipv6", AF_INET6, SOCK_STREAM, 0},
		{"mptcp", AF_INET, SOCK_STREAM, IPPROTO_MPTCP},
		{"vsock", AF_VSOCK, SOCK_STREAM, 0},
		{"packet", AF_PACKET, SOCK_DGRAM, 0},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(probes); i++) {
		bool must_fail = p->net == OWS_NET_NONE ||
				 probes[i].domain == AF_VSOCK || probes[i].domain == AF_PACKET ||
				 probes[i].type == SOCK_RAW;
		bool checked_open = p->net != OWS_NET_NONE &&
				    probes[i].domain == AF_INET &&
				    probes[i].type == SOCK_STREAM && probes[i].proto == 0;
		if (!must_fail && !checked_open)
			continue;
		ows__check *c = check_new(pr, "network socket", probes[i].name);
		int e = try_socket(probes[i].domain, probes[i].type, probes[i].proto);
		if (must_fail)
			check_set(c, e != 0, e ? "refused" : "a socket was created", e);
		else
			check_set(c, e == 0, e ? "refused" : "allowed", e);
	}
	if (p->net == OWS_NET_ALLOWLIST && p->proxy_port)
		proof_allowlist(pr, p);
	ows__check *c = check_new(pr, "io_uring", "refused");
	long r = syscall(SYS_io_uring_setup, 1, NULL);
	int e = r < 0 ? errno : 0;
	if (r >= 0)
		close((int)r);
	/* EFAULT would mean the call reached io_uring itself. */
	check_set(c, e == EPERM, e == EPERM ? "refused" : "io_uring reachable", e);
}

static void proof_sockets(proof *pr, const struct ows__plan *p)
{
	for (int i = 0; i < p->nunix; i++) {
		ows__check *c = check_new(pr, "unix socket unreachable", p->unix_probes[i]);
		int e = try_connect_unix(p->unix_probes[i], strlen(p->unix_probes[i]) + 1);
		check_set(c, e != 0, e ? "connect refused" : "connected", e);
	}
	if (p->abstract_len) {
		ows__check *c = check_new(pr, "abstract socket unreachable", p->abstract_name + 1);
		int e = try_connect_unix(p->abstract_name, p->abstract_len);
		/* Run partial on purpose (`open` without Landlock scopes): recorded, not demanded. */
		if (e == 0 && ows__plan_is_partial(p, OWS__PROMISE_UNIX_OUTSIDE))
			check_set(c, OWS__CHECK_PARTIAL, "connected: partial, no Landlock scope "
				  "here (needs ABI 6, Linux 6.12)", 0);
		else
			check_set(c, e != 0, e ? "connect refused" : "connected", e);
	}
}

/* A cgroup's limit file holds a number no larger than `want` ("max" is larger). */
static int limit_file_holds(const struct ows__limit_file *f, char *seen, size_t size)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ssize_t n = read(fd, seen, size - 1);
	int e = n < 0 ? errno : 0;
	close(fd);
	seen[n > 0 ? n : 0] = '\0';
	seen[strcspn(seen, "\n")] = '\0';
	char *end;
	unsigned long long v = strtoull(seen, &end, 10);
	return e ? e : end == seen || v > f->want ? ERANGE : 0;
}

/*
 * The caps, as a command inherits them: the process limit (RLIMIT_NPROC,
 * or the cgroup's pids.max), the cgroup's memory limit, oom_score_adj, and
 * the size of each memory file system the view mounts for writing.  What
 * the machine cannot cap at all is the session's partial list, not here.
 */
/* A session folder bound at or above the tmpfs (`--rw /tmp`) hides it: the folder is the person's. */
static bool tmpfs_covered(const struct ows__plan *p, int i)
{
	for (int j = 0; j < p->nmounts; j++)
		if (j != i && p->mounts[j].kind == OWS_M_BIND &&
		    ows__path_under(p->mounts[i].dst, p->mounts[j].dst))
			return true;
	return false;
}

static void proof_limits(proof *pr, const struct ows__plan *p)
{
	char buf[64] = "";
	if (p->nproc) {
		struct rlimit r;
		ows__buf_add_num(buf, sizeof(buf), (long)p->nproc);
		ows__check *c = check_new(pr, "processes capped: RLIMIT_NPROC", buf);
		bool ok = getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur <= p->nproc &&
			  r.rlim_max <= p->nproc;
		check_set(c, ok, ok ? "soft and hard limits in force" : "not in force", 0);
	}
	for (int i = 0; i < p->nlimit_files; i++) {
		const struct ows__limit_file *f = &p->limit_files[i];
		ows__check *c = check_new(pr, f->what, f->path);
		int e = limit_file_holds(f, buf, sizeof(buf));
		check_set(c, e == 0, e == ERANGE ? "larger than the session's cap" : e ? "unreadable"
			  : "the session's cap is in force", e == ERANGE ? 0 : e);
	}
	if (p->oom_score_adj) {
		ows__check *c = check_new(pr, "oom_score_adj", "the OOM killer takes the sandbox first");
		int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		check_set(c, strtol(buf, NULL, 10) == p->oom_score_adj, "read back", 0);
	}
	for (int i = 0; i < p->nmounts; i++) {
		const struct ows__mnt *m = &p->mounts[i];
		if (m->kind != OWS_M_TMPFS || !m->size || tmpfs_covered(p, i))
			continue;
		struct statfs sf;
		ows__check *c = check_new(pr, "memory file system sized", m->dst);
		int e = statfs(m->dst, &sf) == 0 ? 0 : errno;
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		bool ok = !e && sf.f_type == TMPFS_MAGIC &&
			  (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize <= m->size + page &&
			  (uint64_t)sf.f_files <= m->inodes;
		check_set(c, ok, ok ? "size and inodes capped" : "not capped", e);
	}
}

static void run_proof(const struct ows__plan *p)
{
	static proof pr; /* init's own copy; too large for the stack of a forked host */
	memset(&pr, 0, sizeof(pr));
	pr.msg.hdr.type = OWS_MSG_PROOF;
	proof_identity(&pr, p);
	proof_files(&pr, p);
	proof_secrets(&pr, p);
	proof_network(&pr, p);
	proof_sockets(&pr, p);
	proof_limits(&pr, p);
	if (p->in_host_ns)
		proof_host_ns(&pr, p);
	ows__init_send(p->ctl, &pr.msg.hdr,
		 offsetof(struct ows__proof_msg, checks) + pr.msg.n * sizeof(ows__check));
}

static int proof_child(void *arg)
{
	const struct ows__plan *p = arg;
	struct ows__fence f = ows__init_fence_of(p);
	int e = p->in_host_ns ? ows__init_restrict_command(&f) : 0;
	if (e) {
		struct ows__msg m = {.type = OWS_MSG_FAIL, .err = e};
		ows__buf_add(m.text, sizeof(m.text), "restrict the proof");
		ows__init_send(p->ctl, &m, sizeof(m));
		_exit(127);
	}
	run_proof(p);
	_exit(0);
}

void ows__init_prove(const struct ows__plan *p)
{
	pid_t probe = ows__init_start_child(proof_child, (void *)p, 0);
	if (probe < 0)
		ows__init_die(p, "start the proof", NULL);
	int st;
	while (waitpid(probe, &st, 0) < 0 && errno == EINTR)
		;
}
