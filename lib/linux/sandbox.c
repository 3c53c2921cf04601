/*
 * The `landlock` provider: a wall that needs no setup.
 *
 * The host clones an init process into new user (unless the host is root),
 * PID, mount, IPC and UTS namespaces, and a network namespace in `none`.
 * Init builds a root of its own on a tmpfs holding only the system (read
 * only), the session's folders at their own paths and the private folder,
 * pivots into it, drops every capability, restricts itself with Landlock and
 * seccomp, proves the wall from inside, and then starts commands on request.
 * Every command is init's child, so every process the agent starts lives in
 * init's PID namespace and dies with it: when the session closes, or when the
 * host dies (the control socket closes), init kills everything and exits.
 *
 * Init is forked from a host that may have had threads, so between clone()
 * and execve() the code here allocates nothing and takes no lock: it only
 * reads the plan the host built before cloning, and makes system calls.
 *
 * Host and init talk over a SOCK_SEQPACKET pair; a spawn request carries its
 * argv/env/cwd in a sealed memfd and the command's stdio as SCM_RIGHTS.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "linux.h"

#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

extern char **environ;

#define MAX_MOUNTS 96
#define MAX_RULES 96
#define MAX_PROBES 8
#define MAX_CHECKS 64
#define MAX_PROCS 256
#define STAGE "/tmp" /* where init assembles the new root before pivoting into it */

/* ------------------------------------------------------------------ plan */

enum mnt_kind { M_BIND, M_TMPFS, M_PROC, M_DEVPTS, M_SYMLINK };

struct mnt {
	enum mnt_kind kind;
	const char *src;    /* M_BIND: host path; M_SYMLINK: link target */
	const char *dst;    /* path inside, absolute */
	bool rw;
	bool is_file;       /* a bind of one file (a device node) */
	bool dev;           /* keep device nodes usable (no MOUNT_ATTR_NODEV) */
	const char *mode;   /* M_TMPFS */
	int fd;             /* filled by init: the detached mount */
};

struct rule {
	const char *path;
	uint64_t access;
};

struct plan {
	bool userns;                 /* unprivileged host: map our own ids */
	uid_t outer_uid;
	gid_t outer_gid;
	uid_t uid;                   /* the account inside */
	gid_t gid;
	gid_t groups[32];
	int ngroups;                 /* root host: supplementary groups of the target */
	int clone_flags;

	struct mnt mounts[MAX_MOUNTS];
	int nmounts;
	const char *skeleton[MAX_MOUNTS]; /* folders made only to reach a mount: 0111 */
	int nskeleton;
	struct rule rules[MAX_RULES];
	int nrules;

	int abi;
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
	ows__seccomp seccomp;

	/* the proof */
	ows_net net;
	const ows__folder *folders;
	size_t nfolders;
	const char *home;
	const char *canary;          /* NULL when nothing could be planted */
	const char *canary_token;
	const char *unix_probes[MAX_PROBES];
	int nunix;
	char abstract_name[108];
	socklen_t abstract_len;
	char *const *envp;

	int ctl;                     /* init's end of the control socket */
};

/* ------------------------------------------------------------- messages */

enum msg_type {
	MSG_FAIL = 1,   /* init → host: setup failed: stage in text, err */
	MSG_PROOF,      /* init → host: checks follow */
	MSG_SPAWN,      /* host → init: memfd + stdin, stdout, stderr */
	MSG_STARTED,    /* init → host */
	MSG_SPAWN_FAIL, /* init → host: err, stage in text */
	MSG_EXITED,     /* init → host: code */
	MSG_KILL,       /* host → init: code = signal */
};

struct msg {
	uint32_t type;
	uint32_t id;
	int32_t code;
	int32_t err;
	char text[96];
};

struct proof_msg {
	struct msg hdr;
	uint32_t n;
	ows__check checks[MAX_CHECKS];
};

/* --------------------------------------------------- allocation-free text */

static void buf_add(char *buf, size_t size, const char *s)
{
	size_t n = strnlen(buf, size);
	while (*s && n + 1 < size)
		buf[n++] = *s++;
	buf[n < size ? n : size - 1] = '\0';
}

static void buf_add_num(char *buf, size_t size, long v)
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
	buf_add(buf, size, tmp + i);
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/* ------------------------------------------------------------ init: setup */

static void send_msg(int fd, const struct msg *m, size_t len)
{
	ssize_t r;
	do
		r = send(fd, m, len, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
}

static __attribute__((noreturn)) void init_die(const struct plan *p, const char *stage,
					       const char *path)
{
	struct msg m = {.type = MSG_FAIL, .err = errno};
	buf_add(m.text, sizeof(m.text), stage);
	if (path) {
		buf_add(m.text, sizeof(m.text), " ");
		buf_add(m.text, sizeof(m.text), path);
	}
	send_msg(p->ctl, &m, sizeof(m));
	_exit(127);
}

static int write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(data);
	ssize_t w = write(fd, data, n);
	int saved = errno;
	close(fd);
	errno = saved;
	return w == (ssize_t)n ? 0 : -1;
}

static void map_ids(const struct plan *p)
{
	char line[64] = "";
	buf_add_num(line, sizeof(line), p->uid);
	buf_add(line, sizeof(line), " ");
	buf_add_num(line, sizeof(line), p->outer_uid);
	buf_add(line, sizeof(line), " 1\n");
	if (write_file("/proc/self/uid_map", line) != 0)
		init_die(p, "write uid_map", NULL);
	if (write_file("/proc/self/setgroups", "deny") != 0)
		init_die(p, "write setgroups", NULL);
	line[0] = '\0';
	buf_add_num(line, sizeof(line), p->gid);
	buf_add(line, sizeof(line), " ");
	buf_add_num(line, sizeof(line), p->outer_gid);
	buf_add(line, sizeof(line), " 1\n");
	if (write_file("/proc/self/gid_map", line) != 0)
		init_die(p, "write gid_map", NULL);
}

static int new_fs(const char *type, const char *const *opts, unsigned attrs)
{
	int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	for (; opts && opts[0]; opts += 2) {
		int r = opts[1] ? fsconfig(fs, FSCONFIG_SET_STRING, opts[0], opts[1], 0)
				: fsconfig(fs, FSCONFIG_SET_FLAG, opts[0], NULL, 0);
		if (r != 0)
			goto fail;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
		goto fail;
	int mfd = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	int saved = errno;
	close(fs);
	errno = saved;
	return mfd;
fail:
	saved = errno;
	close(fs);
	errno = saved;
	return -1;
}

/* Detaches a copy of every source before anything is covered. */
static void clone_sources(struct plan *p)
{
	for (int i = 0; i < p->nmounts; i++) {
		struct mnt *m = &p->mounts[i];
		m->fd = -1;
		if (m->kind == M_BIND) {
			struct open_how how = {
				.flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
			};
			int pfd = (int)syscall(SYS_openat2, AT_FDCWD, m->src, &how, sizeof(how));
			if (pfd < 0)
				init_die(p, "open", m->src);
			m->fd = open_tree(pfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							   AT_EMPTY_PATH | AT_RECURSIVE);
			close(pfd);
			if (m->fd < 0)
				init_die(p, "open_tree", m->src);
			struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID};
			if (!m->dev)
				attr.attr_set |= MOUNT_ATTR_NODEV;
			if (!m->rw)
				attr.attr_set |= MOUNT_ATTR_RDONLY;
			if (mount_setattr(m->fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
					  sizeof(attr)) != 0)
				init_die(p, "mount_setattr", m->src);
		} else if (m->kind == M_PROC) {
			/* Only while the host's /proc is still in view may a new one be mounted. */
			m->fd = new_fs("proc", NULL,
				       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
			if (m->fd < 0)
				init_die(p, "mount proc", m->dst);
		}
	}
}

static void staged(char *buf, size_t size, const char *path)
{
	buf[0] = '\0';
	buf_add(buf, size, STAGE);
	buf_add(buf, size, path);
}

/* mkdir -p of the folders above `path` (staged), without following links. */
static void make_parents(const struct plan *p, const char *path)
{
	char buf[4096];
	staged(buf, sizeof(buf), path);
	size_t base = strlen(STAGE);
	for (char *s = buf + base + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		struct stat st;
		if (lstat(buf, &st) != 0) {
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				init_die(p, "mkdir", buf + base);
		} else if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			init_die(p, "mkdir", buf + base);
		}
		*s = '/';
	}
}

static void attach(struct plan *p, struct mnt *m)
{
	char dst[4096];
	staged(dst, sizeof(dst), m->dst);
	make_parents(p, m->dst);
	struct stat st;
	bool exists = lstat(dst, &st) == 0;

	if (m->kind == M_SYMLINK) {
		if (!exists && symlink(m->src, dst) != 0)
			init_die(p, "symlink", m->dst);
		return;
	}
	if (!exists) {
		if (m->is_file) {
			int fd = open(dst, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0)
				init_die(p, "create", m->dst);
			close(fd);
		} else if (mkdir(dst, 0755) != 0) {
			init_die(p, "mkdir", m->dst);
		}
	}
	int fd = m->fd;
	if (m->kind == M_TMPFS) {
		const char *opts[] = {"mode", m->mode, NULL, NULL};
		fd = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	} else if (m->kind == M_DEVPTS) {
		const char *opts[] = {"mode", "0620", "ptmxmode", "0666", NULL, NULL};
		fd = new_fs("devpts", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	}
	if (fd < 0)
		init_die(p, "mount", m->dst);
	if (move_mount(fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) != 0)
		init_die(p, "move_mount", m->dst);
	close(fd);
	m->fd = -1;
}

static void build_root(struct plan *p)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		init_die(p, "make mounts private", "/");
	clone_sources(p);
	const char *root_opts[] = {"mode", "0755", NULL, NULL};
	int root = new_fs("tmpfs", root_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (root < 0 || move_mount(root, "", AT_FDCWD, STAGE, MOVE_MOUNT_F_EMPTY_PATH) != 0)
		init_die(p, "mount the new root", STAGE);
	close(root);
	for (int i = 0; i < p->nmounts; i++)
		attach(p, &p->mounts[i]);
	for (int i = 0; i < p->nskeleton; i++) {
		char buf[4096];
		staged(buf, sizeof(buf), p->skeleton[i]);
		if (chmod(buf, 0111) != 0)
			init_die(p, "chmod", p->skeleton[i]);
	}
	/* The new root becomes /, the old one is detached: nothing else stays reachable. */
	if (chdir(STAGE) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
	    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
		init_die(p, "pivot_root", STAGE);
	/* Read-only root: nothing new appears beside the mounts. */
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (mount_setattr(AT_FDCWD, "/", 0, &ro, sizeof(ro)) != 0)
		init_die(p, "remount / read-only", "/");
}

static void drop_identity(const struct plan *p)
{
	/* The bounding set first: dropping it needs CAP_SETPCAP, which goes next. */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		init_die(p, "clear ambient capabilities", NULL);
	if (!p->userns) {
		if (setgroups((size_t)p->ngroups, p->groups) != 0)
			init_die(p, "setgroups", NULL);
		if (setresgid(p->gid, p->gid, p->gid) != 0)
			init_die(p, "setresgid", NULL);
		if (setresuid(p->uid, p->uid, p->uid) != 0)
			init_die(p, "setresuid", NULL);
	}
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	if (syscall(SYS_capset, &hdr, data) != 0)
		init_die(p, "capset", NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		init_die(p, "no_new_privs", NULL);
}

static void restrict_self(const struct plan *p)
{
	struct ows_ll_ruleset_attr attr = {
		.handled_access_fs = p->handled_fs,
		.handled_access_net = p->handled_net,
		.scoped = p->scoped,
	};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr,
			      ows__landlock_attr_size(p->abi), 0);
	if (rs < 0)
		init_die(p, "landlock_create_ruleset", NULL);
	for (int i = 0; i < p->nrules; i++) {
		int fd = open(p->rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			init_die(p, "landlock rule", p->rules[i].path);
		struct ows_ll_path_beneath_attr pb = {
			.allowed_access = p->rules[i].access & p->handled_fs,
			.parent_fd = fd,
		};
		if (syscall(SYS_landlock_add_rule, rs, OWS_LL_RULE_PATH_BENEATH, &pb, 0) != 0)
			init_die(p, "landlock_add_rule", p->rules[i].path);
		close(fd);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		init_die(p, "landlock_restrict_self", NULL);
	close(rs);
	struct sock_fprog prog = {
		.len = p->seccomp.len,
		.filter = (struct sock_filter *)p->seccomp.insns,
	};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
		init_die(p, "seccomp", NULL);
}

/* ------------------------------------------------------------ init: proof */

typedef struct proof {
	struct proof_msg msg;
} proof;

static ows__check *check_new(proof *pr, const char *what, const char *arg)
{
	if (pr->msg.n >= MAX_CHECKS)
		return NULL;
	ows__check *c = &pr->msg.checks[pr->msg.n++];
	buf_add(c->name, sizeof(c->name), what);
	if (arg) {
		buf_add(c->name, sizeof(c->name), " ");
		buf_add(c->name, sizeof(c->name), arg);
	}
	return c;
}

static void check_set(ows__check *c, bool passed, const char *detail, int e)
{
	if (!c)
		return;
	c->passed = passed;
	buf_add(c->detail, sizeof(c->detail), detail);
	if (e) {
		buf_add(c->detail, sizeof(c->detail), ": ");
		buf_add(c->detail, sizeof(c->detail), errname(e));
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
	buf_add(path, sizeof(path), dir);
	buf_add(path, sizeof(path), strcmp(dir, "/") ? "/.owsandbox-probe-" : ".owsandbox-probe-");
	buf_add_num(path, sizeof(path), (long)syscall(SYS_gettid));
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

static void proof_identity(proof *pr, const struct plan *p)
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
	for (int cap = 0; none && cap <= 63; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break;
		none = r == 0;
	}
	check_set(c, none, none ? "effective, permitted, inheritable and bounding sets empty"
				: "a capability is still held", 0);

	c = check_new(pr, "processes", "own PID namespace");
	check_set(c, getppid() == 1, getppid() == 1 ? "the sandbox's init is PID 1"
						    : "shares the host's PID namespace", 0);

	/* Init is a copy of the host: its memory and environment must stay out of reach. */
	c = check_new(pr, "host memory not readable", "/proc/1/environ");
	int fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	check_set(c, fd < 0, fd < 0 ? "reading refused" : "init's environment is readable", e);
}

static void proof_files(proof *pr, const struct plan *p)
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

static void proof_secrets(proof *pr, const struct plan *p)
{
	ows__check *c = check_new(pr, "no secret variables", NULL);
	for (char *const *e = p->envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		if (ows__env_name_is_secret(*e, n)) {
			char d[128] = "secret variable present: ";
			buf_add(d, sizeof(d), *e);
			d[25 + (n < 100 ? n : 100)] = '\0';
			check_set(c, false, d, 0);
			return;
		}
	}
	check_set(c, true, "no name says it holds a secret", 0);
}

static void proof_network(proof *pr, const struct plan *p)
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
		bool must_fail = p->net == OWS_NET_NONE || probes[i].domain == AF_VSOCK ||
				 probes[i].domain == AF_PACKET || probes[i].type == SOCK_RAW;
		bool checked_open = p->net == OWS_NET_OPEN && probes[i].domain == AF_INET &&
				    probes[i].type == SOCK_STREAM && probes[i].proto == 0;
		if (!must_fail && !checked_open)
			continue;
		ows__check *c = check_new(pr, "network socket", probes[i].name);
		int e = try_socket(probes[i].domain, probes[i].type, probes[i].proto);
		if (must_fail)
			check_set(c, e != 0, e ? "refused" : "a socket was created", e);
		else
			check_set(c, e == 0, e ? "refused in open mode" : "allowed in open mode", e);
	}
	ows__check *c = check_new(pr, "io_uring", "refused");
	long r = syscall(SYS_io_uring_setup, 1, NULL);
	int e = r < 0 ? errno : 0;
	if (r >= 0)
		close((int)r);
	/* EFAULT would mean the call reached io_uring itself. */
	check_set(c, e == EPERM, e == EPERM ? "refused" : "io_uring reachable", e);
}

static void proof_sockets(proof *pr, const struct plan *p)
{
	for (int i = 0; i < p->nunix; i++) {
		ows__check *c = check_new(pr, "unix socket unreachable", p->unix_probes[i]);
		int e = try_connect_unix(p->unix_probes[i], strlen(p->unix_probes[i]) + 1);
		check_set(c, e != 0, e ? "connect refused" : "connected", e);
	}
	if (p->abstract_len) {
		ows__check *c = check_new(pr, "abstract socket unreachable", p->abstract_name + 1);
		int e = try_connect_unix(p->abstract_name, p->abstract_len);
		check_set(c, e != 0, e ? "connect refused" : "connected", e);
	}
}

/* Runs in a child of init, with exactly what a command gets but the exec. */
static void run_proof(const struct plan *p)
{
	static proof pr; /* init's own copy; too large for the stack of a forked host */
	memset(&pr, 0, sizeof(pr));
	pr.msg.hdr.type = MSG_PROOF;
	proof_identity(&pr, p);
	proof_files(&pr, p);
	proof_secrets(&pr, p);
	proof_network(&pr, p);
	proof_sockets(&pr, p);
	send_msg(p->ctl, &pr.msg.hdr,
		 offsetof(struct proof_msg, checks) + pr.msg.n * sizeof(ows__check));
}

/* ------------------------------------------------------ init: the server */

struct child {
	pid_t pid;
	uint32_t id;
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
	uint32_t argc, envc;
	memcpy(&argc, data, 4);
	memcpy(&envc, data + 4, 4);
	if (argc == 0 || argc > (1u << 20) || envc > (1u << 20))
		return EINVAL;
	size_t vsize = (argc + envc + 2) * sizeof(char *);
	char **v = mmap(NULL, vsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		return errno;
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

static __attribute__((noreturn)) void command_child(int memfd, const int stdio[3], int errpipe)
{
	struct { int32_t err; char stage[12]; } report = {0};
	struct request rq = {0};
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if ((report.err = map_request(memfd, &rq))) {
		strcpy(report.stage, "request");
		goto fail;
	}
	for (int i = 0; i < 3; i++)
		if (dup2(stdio[i], i) < 0) {
			report.err = errno;
			strcpy(report.stage, "stdio");
			goto fail;
		}
	/* Everything else closes at exec; errpipe tells init whether exec happened. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (chdir(rq.cwd) != 0) {
		report.err = errno;
		strcpy(report.stage, "cwd");
		goto fail;
	}
	report.err = exec_path(rq.argv, rq.envp);
	strcpy(report.stage, "exec");
fail:
	if (write(errpipe, &report, sizeof(report)) < 0)
		_exit(127);
	_exit(127);
}

static void handle_spawn(const struct plan *p, const struct msg *m, const int *fds, int nfds,
			 struct child *children)
{
	struct msg reply = {.type = MSG_SPAWN_FAIL, .id = m->id, .err = EINVAL};
	int slot = -1;
	for (int i = 0; i < MAX_PROCS && slot < 0; i++)
		if (children[i].pid == 0)
			slot = i;
	int pipefd[2] = {-1, -1};
	if (nfds != 4) {
		buf_add(reply.text, sizeof(reply.text), "request");
		goto out;
	}
	if (slot < 0) {
		reply.err = EAGAIN;
		buf_add(reply.text, sizeof(reply.text), "too many commands at once");
		goto out;
	}
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		reply.err = errno;
		buf_add(reply.text, sizeof(reply.text), "pipe");
		goto out;
	}
	pid_t pid = fork();
	if (pid < 0) {
		reply.err = errno;
		buf_add(reply.text, sizeof(reply.text), "fork");
		goto out;
	}
	if (pid == 0) {
		close(pipefd[0]);
		close(p->ctl);
		command_child(fds[0], fds + 1, pipefd[1]);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	struct { int32_t err; char stage[12]; } report;
	ssize_t n;
	do
		n = read(pipefd[0], &report, sizeof(report));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(report)) {
		reply.err = report.err;
		report.stage[sizeof(report.stage) - 1] = '\0';
		buf_add(reply.text, sizeof(reply.text), report.stage);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	} else {
		reply.type = MSG_STARTED;
		reply.err = 0;
		children[slot].pid = pid;
		children[slot].id = m->id;
	}
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	send_msg(p->ctl, &reply, sizeof(reply));
}

static void reap(const struct plan *p, struct child *children)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int i = 0; i < MAX_PROCS; i++) {
			if (children[i].pid != pid)
				continue;
			struct msg m = {.type = MSG_EXITED, .id = children[i].id};
			m.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			send_msg(p->ctl, &m, sizeof(m));
			children[i].pid = 0;
			break;
		}
	}
}

static __attribute__((noreturn)) void serve(const struct plan *p)
{
	static struct child children[MAX_PROCS];
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		init_die(p, "signalfd", NULL);

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
				;
			reap(p, children);
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct msg m;
		char cbuf[CMSG_SPACE(4 * sizeof(int))];
		struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t n = recvmsg(p->ctl, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the host closed the session or died */
		int fds[4], nfds = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (int i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (nfds < 4)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
		if (n == (ssize_t)sizeof(m) && m.type == MSG_SPAWN) {
			handle_spawn(p, &m, fds, nfds, children);
			continue;
		}
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (n == (ssize_t)sizeof(m) && m.type == MSG_KILL) {
			for (int i = 0; i < MAX_PROCS; i++)
				if (children[i].pid && children[i].id == m.id) {
					/* The command leads its own process group: signal the job. */
					if (kill(-children[i].pid, m.code) != 0)
						kill(children[i].pid, m.code);
				}
		}
	}
	kill(-1, SIGKILL); /* everything in this PID namespace but init */
	_exit(0);
}

static __attribute__((noreturn)) void init_main(struct plan *p)
{
	/* Dispositions the host ignored (SIGPIPE, often) would survive exec. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	/* Keep only the control socket; the host's other descriptors stay outside. */
	if (p->ctl != 3) {
		if (dup3(p->ctl, 3, O_CLOEXEC) < 0)
			_exit(127);
		p->ctl = 3;
	}
	syscall(SYS_close_range, 4, ~0U, 0);
	if (p->userns)
		map_ids(p);
	/* Init holds a copy of the host's memory: no command may read or trace it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		init_die(p, "set non-dumpable", NULL);
	build_root(p);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; null >= 0 && i < 3; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
	drop_identity(p);
	restrict_self(p);
	pid_t probe = fork();
	if (probe < 0)
		init_die(p, "fork the proof", NULL);
	if (probe == 0) {
		run_proof(p);
		_exit(0);
	}
	int st;
	while (waitpid(probe, &st, 0) < 0 && errno == EINTR)
		;
	serve(p);
}

/* ------------------------------------------------------------ host: plan */

struct landlock_impl {
	pid_t init_pid;
	int ctl;
	ows__private pv;
	ows__strv strings;      /* plan strings the host must keep until clone */
	bool sandbox_gone;
};

static const char *keep(struct landlock_impl *li, const char *s, ows_error *err)
{
	if (ows__strv_push(&li->strings, s, err) < 0)
		return NULL;
	return li->strings.v[li->strings.len - 1];
}

static int add_mount(struct plan *p, struct mnt m, ows_error *err)
{
	if (p->nmounts >= MAX_MOUNTS)
		return ows__fail(err, OWS_EINVAL, 0, m.dst, "use fewer session folders",
				 "too many mounts in the sandbox");
	p->mounts[p->nmounts++] = m;
	return 0;
}

static int add_rule(struct plan *p, const char *path, uint64_t access, ows_error *err)
{
	if (p->nrules >= MAX_RULES)
		return ows__fail(err, OWS_EINVAL, 0, path, "use fewer session folders",
				 "too many Landlock rules");
	p->rules[p->nrules].path = path;
	p->rules[p->nrules].access = access;
	p->nrules++;
	return 0;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* A path sorts before every path below it, so a mount never hides one made after it. */
static int cmp_mount(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;
	return strcmp(x->dst, y->dst);
}

/* Folders to create only so that a mount can be reached: made 0111 (traverse only). */
static int plan_skeleton(struct plan *p, struct landlock_impl *li, ows_error *err)
{
	for (int i = 0; i < p->nmounts; i++) {
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s", p->mounts[i].dst);
		for (char *s = strrchr(buf, '/'); s && s != buf; s = strrchr(buf, '/')) {
			*s = '\0';
			bool skip = false;
			for (int j = 0; j < p->nmounts && !skip; j++) {
				const struct mnt *m = &p->mounts[j];
				if (strcmp(m->dst, buf) == 0 ||
				    (m->kind == M_BIND && path_under(buf, m->dst)))
					skip = true;
			}
			for (int j = 0; j < p->nskeleton && !skip; j++)
				skip = strcmp(p->skeleton[j], buf) == 0;
			if (skip)
				continue;
			if (p->nskeleton >= MAX_MOUNTS)
				return ows__fail(err, OWS_EINVAL, 0, buf, NULL, "too many folders");
			const char *k = keep(li, buf, err);
			if (!k)
				return OWS_ENOMEM;
			p->skeleton[p->nskeleton++] = k;
		}
	}
	return 0;
}

static int plan_system(struct plan *p, struct landlock_impl *li, ows_error *err)
{
	static const char *const dirs[] = {"/usr", "/etc", "/opt"};
	static const char *const maybe_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64",
						  "/libx32"};
	static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full",
					      "/dev/random", "/dev/urandom", "/dev/tty"};
	static const char *const dev_links[][2] = {
		{"/dev/ptmx", "pts/ptmx"}, {"/dev/fd", "/proc/self/fd"},
		{"/dev/stdin", "/proc/self/fd/0"}, {"/dev/stdout", "/proc/self/fd/1"},
		{"/dev/stderr", "/proc/self/fd/2"},
	};
	const uint64_t dev_rw = OWS_LL_FS_READ_FILE | OWS_LL_FS_WRITE_FILE | OWS_LL_FS_TRUNCATE |
				OWS_LL_FS_IOCTL_DEV;
	const uint64_t all = ows__landlock_fs_all(p->abi);
	struct stat st;
	int rc = 0;

	for (size_t i = 0; i < OWS__ARRAY_LEN(dirs) && rc == 0; i++)
		if (lstat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = add_mount(p, (struct mnt){.kind = M_BIND, .src = dirs[i], .dst = dirs[i]}, err);
			if (rc == 0)
				rc = add_rule(p, dirs[i], OWS_LL_FS_READ, err);
		}
	for (size_t i = 0; i < OWS__ARRAY_LEN(maybe_links) && rc == 0; i++) {
		if (lstat(maybe_links[i], &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(maybe_links[i], target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			const char *t = keep(li, target, err);
			if (!t)
				return OWS_ENOMEM;
			rc = add_mount(p, (struct mnt){.kind = M_SYMLINK, .src = t, .dst = maybe_links[i]}, err);
		} else if (S_ISDIR(st.st_mode)) {
			rc = add_mount(p, (struct mnt){.kind = M_BIND, .src = maybe_links[i], .dst = maybe_links[i]}, err);
			if (rc == 0)
				rc = add_rule(p, maybe_links[i], OWS_LL_FS_READ, err);
		}
	}
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_BIND, .src = "/sys", .dst = "/sys"}, err);
	if (rc == 0)
		rc = add_rule(p, "/sys", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_PROC, .dst = "/proc"}, err);
	if (rc == 0)
		rc = add_rule(p, "/proc", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_TMPFS, .dst = "/dev", .mode = "0755"}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev", OWS_LL_FS_READ_DIR, err);
	for (size_t i = 0; i < OWS__ARRAY_LEN(devices) && rc == 0; i++) {
		if (stat(devices[i], &st) != 0 || !S_ISCHR(st.st_mode))
			continue;
		rc = add_mount(p, (struct mnt){.kind = M_BIND, .src = devices[i], .dst = devices[i],
					       .rw = true, .is_file = true, .dev = true}, err);
		if (rc == 0)
			rc = add_rule(p, devices[i], dev_rw, err);
	}
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_DEVPTS, .dst = "/dev/pts"}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev/pts", dev_rw | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_TMPFS, .dst = "/dev/shm", .mode = "1777"}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev/shm", all, err);
	for (size_t i = 0; i < OWS__ARRAY_LEN(dev_links) && rc == 0; i++)
		rc = add_mount(p, (struct mnt){.kind = M_SYMLINK, .src = dev_links[i][1],
					       .dst = dev_links[i][0]}, err);
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_TMPFS, .dst = "/tmp", .mode = "1777"}, err);
	if (rc == 0)
		rc = add_rule(p, "/tmp", all, err);
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_TMPFS, .dst = "/run", .mode = "0755"}, err);
	if (rc == 0)
		rc = add_rule(p, "/run", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);

	/* Name resolution in `open`: /etc/resolv.conf may point into /run. */
	if (rc == 0 && p->net == OWS_NET_OPEN && lstat("/etc/resolv.conf", &st) == 0 &&
	    S_ISLNK(st.st_mode)) {
		char *real = realpath("/etc/resolv.conf", NULL);
		if (real && !path_under(real, "/etc") && !path_under(real, "/usr") &&
		    stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
			const char *k = keep(li, real, err);
			rc = k ? add_mount(p, (struct mnt){.kind = M_BIND, .src = k, .dst = k,
							  .is_file = true}, err)
			       : OWS_ENOMEM;
			if (rc == 0)
				rc = add_rule(p, k, OWS_LL_FS_READ_FILE, err);
		}
		free(real);
	}
	return rc;
}

static int plan_folders(struct plan *p, const ows_policy *policy, const char *private_dir,
			ows_error *err)
{
	static const char *const forbidden[] = {"/proc", "/sys", "/dev"};
	const uint64_t all = ows__landlock_fs_all(p->abi);
	int rc = 0;
	for (size_t i = 0; i < policy->nfolders && rc == 0; i++) {
		const ows__folder *f = &policy->folders[i];
		for (size_t j = 0; j < OWS__ARRAY_LEN(forbidden); j++)
			if (path_under(f->path, forbidden[j]))
				return ows__fail(err, OWS_EINVAL, 0, f->path,
						 "name a folder of files, not a kernel interface",
						 "this folder cannot be a session folder");
		bool rw = f->access == OWS_ACCESS_RW;
		rc = add_mount(p, (struct mnt){.kind = M_BIND, .src = f->path, .dst = f->path, .rw = rw}, err);
		if (rc == 0)
			rc = add_rule(p, f->path, rw ? all : OWS_LL_FS_READ, err);
	}
	if (rc == 0)
		rc = add_mount(p, (struct mnt){.kind = M_BIND, .src = private_dir, .dst = private_dir,
					       .rw = true}, err);
	if (rc == 0)
		rc = add_rule(p, private_dir, all, err);
	return rc;
}

/* Who the command runs as: the host's own account, or under a root host, a chosen one. */
static int plan_identity(struct plan *p, const ows_policy *policy, const ows_config *config,
			 struct landlock_impl *li, const char **home, const char **user,
			 ows_error *err)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	p->outer_uid = geteuid();
	p->outer_gid = getegid();
	p->userns = p->outer_uid != 0;
	p->uid = p->outer_uid;
	p->gid = p->outer_gid;
	if (!p->userns) {
		const char *who = policy->run_as ? policy->run_as : NULL;
		char sudo[32];
		const char *sudo_uid = getenv("SUDO_UID");
		if (!who && sudo_uid && *sudo_uid && strcmp(sudo_uid, "0") != 0) {
			snprintf(sudo, sizeof(sudo), "%s", sudo_uid);
			who = sudo;
		}
		if (!who)
			who = config->root_runs_as ? config->root_runs_as : "nobody";
		char *end;
		unsigned long n = strtoul(who, &end, 10);
		int r = (*who && !*end) ? getpwuid_r((uid_t)n, &pw, buf, sizeof(buf), &res)
					: getpwnam_r(who, &pw, buf, sizeof(buf), &res);
		if (r != 0 || !res)
			return ows__fail(err, OWS_EINVAL, r, who,
					 "name an existing account with run_as, or run as that person",
					 "the account to run commands as does not exist");
		if (res->pw_uid == 0)
			return ows__fail(err, OWS_EINVAL, 0, who,
					 "name an unprivileged account with run_as",
					 "commands never run as root");
		p->uid = res->pw_uid;
		p->gid = res->pw_gid;
		int ng = (int)OWS__ARRAY_LEN(p->groups);
		if (getgrouplist(res->pw_name, res->pw_gid, p->groups, &ng) < 0) {
			p->groups[0] = res->pw_gid;
			ng = 1;
		}
		p->ngroups = ng;
	} else if (getpwuid_r(p->uid, &pw, buf, sizeof(buf), &res) != 0 || !res) {
		res = NULL;
	}
	*home = NULL;
	*user = NULL;
	if (res) {
		char *real = realpath(res->pw_dir, NULL);
		*home = real && strcmp(real, "/") != 0 ? keep(li, real, err) : NULL;
		free(real);
		*user = keep(li, res->pw_name, err);
	}
	if (*home)
		for (size_t i = 0; i < policy->nfolders; i++) {
			int rc = ows__check_folder_vs_home(policy->folders[i].path, *home, err);
			if (rc < 0)
				return rc;
		}
	return 0;
}

/* Why the kernel cannot build this wall, or 0. */
static int plan_support(struct plan *p, const ows_policy *policy, ows_net net, ows_error *err)
{
	p->abi = ows__landlock_abi();
	if (p->abi < 1)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "landlock",
				 "boot a kernel with Landlock enabled (lsm=landlock), or set up the "
				 "account provider",
				 "Landlock is not available in this kernel");
	if (net == OWS_NET_ALLOWLIST)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "network allowlist",
				 "use --net none or --net open for now",
				 "the allow-list proxy is not available in this version");
	if (net == OWS_NET_OPEN && p->abi < 6)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "network open",
				 "use --net none, or a kernel with Landlock ABI 6 (Linux 6.12+)",
				 "this kernel cannot keep abstract unix sockets outside the sandbox "
				 "(Landlock ABI %d, needs 6)", p->abi);
	for (int i = OWS_LIMIT_MEMORY_BYTES; i <= OWS_LIMIT_CPU_PERCENT; i++)
		if (policy->has_limit[i])
			return ows__fail(err, OWS_EUNSUPPORTED, 0, ows__limit_key((ows_limit)i),
					 "leave the limit out, or use the account provider",
					 "the landlock provider cannot enforce this limit");
	p->handled_fs = ows__landlock_fs_all(p->abi);
	if (net == OWS_NET_NONE && p->abi >= 4)
		p->handled_net = OWS_LL_NET_BIND_TCP | OWS_LL_NET_CONNECT_TCP;
	if (p->abi >= 6)
		p->scoped = OWS_LL_SCOPE_ABSTRACT_UNIX_SOCKET | OWS_LL_SCOPE_SIGNAL;
	p->net = net;
	return ows__seccomp_build(&p->seccomp, net, err);
}

/* ------------------------------------------------------------ host: probes */

struct probes {
	int unix_fd;
	int abstract_fd;
	char *unix_path;
	char *canary;
};

static void probes_close(struct probes *pb)
{
	if (pb->unix_fd >= 0)
		close(pb->unix_fd);
	if (pb->abstract_fd >= 0)
		close(pb->abstract_fd);
	if (pb->unix_path)
		unlink(pb->unix_path);
	if (pb->canary)
		unlink(pb->canary);
	free(pb->unix_path);
	free(pb->canary);
	memset(pb, 0, sizeof(*pb));
	pb->unix_fd = pb->abstract_fd = -1;
}

static int listen_unix(const char *addr, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, addr, len);
	if (bind(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len) != 0 ||
	    listen(fd, 1) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Things outside the wall for the proof to reach for: a file planted in the
 * home, a unix socket beside the private folder, an abstract socket, and
 * the person's own sockets (ssh-agent, session bus, docker) where they exist.
 */
static int probes_open(struct probes *pb, struct plan *p, struct landlock_impl *li,
		       const char *id, ows_error *err)
{
	memset(pb, 0, sizeof(*pb));
	pb->unix_fd = pb->abstract_fd = -1;

	if (p->home) {
		pb->canary = ows__asprintf(err, "%s/.owsandbox-canary-%s", p->home, id);
		if (!pb->canary)
			return OWS_ENOMEM;
		int fd = open(pb->canary, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			if (write(fd, id, strlen(id)) < 0) { /* the name alone still proves it */ }
			close(fd);
			p->canary = pb->canary;
			p->canary_token = id;
		} else {
			free(pb->canary);
			pb->canary = NULL;
		}
	}
	pb->unix_path = ows__asprintf(err, "%s/%s.sock", li->pv.root, id);
	if (!pb->unix_path)
		return OWS_ENOMEM;
	size_t n = strlen(pb->unix_path);
	if (n < sizeof(((struct sockaddr_un *)0)->sun_path) &&
	    (pb->unix_fd = listen_unix(pb->unix_path, (socklen_t)n + 1)) >= 0)
		p->unix_probes[p->nunix++] = pb->unix_path;

	const char *agent = getenv("SSH_AUTH_SOCK");
	char bus[64];
	snprintf(bus, sizeof(bus), "/run/user/%u/bus", (unsigned)p->outer_uid);
	const char *known[] = {agent, bus, "/run/docker.sock", "/var/run/docker.sock"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(known) && p->nunix < MAX_PROBES; i++) {
		struct stat st;
		if (known[i] && known[i][0] == '/' && stat(known[i], &st) == 0 && S_ISSOCK(st.st_mode)) {
			const char *k = keep(li, known[i], err);
			if (!k)
				return OWS_ENOMEM;
			p->unix_probes[p->nunix++] = k;
		}
	}
	p->abstract_name[0] = '\0';
	int len = snprintf(p->abstract_name + 1, sizeof(p->abstract_name) - 1,
			   "owsandbox-probe-%s", id);
	p->abstract_len = (socklen_t)len + 1;
	pb->abstract_fd = listen_unix(p->abstract_name, p->abstract_len);
	if (pb->abstract_fd < 0)
		p->abstract_len = 0;
	return 0;
}

/* ---------------------------------------------------------- host: session */

static int recv_msg(int fd, void *buf, size_t size, int timeout_ms, ows_error *err)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	for (;;) {
		int r = poll(&pfd, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ows__fail_sys(err, "poll", NULL, "cannot wait for the sandbox");
		if (r == 0)
			return 0;
		ssize_t n = recv(fd, buf, size, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ows__fail_sys(err, "recv", NULL, "lost the sandbox's control socket");
		if (n == 0)
			return OWS_ESTATE;
		return (int)n;
	}
}

static void reap_init(struct landlock_impl *li)
{
	if (li->init_pid > 0) {
		int st;
		while (waitpid(li->init_pid, &st, __WALL) < 0 && errno == EINTR)
			;
		li->init_pid = 0;
	}
}

static void impl_free(struct landlock_impl *li)
{
	if (li->ctl >= 0)
		close(li->ctl);
	reap_init(li);
	ows__private_remove(&li->pv, NULL);
	ows__strv_free(&li->strings);
	free(li);
}

static int clone_init(struct plan *p, struct landlock_impl *li, ows_error *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return ows__fail_sys(err, "socketpair", NULL, "cannot create the control socket");
	li->ctl = sv[0];
	p->ctl = sv[1];
	long pid = syscall(SYS_clone, (unsigned long)p->clone_flags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0)
		init_main(p);
	int saved = errno;
	close(sv[1]);
	if (pid < 0) {
		errno = saved;
		if (saved == EPERM || saved == ENOSPC || saved == EINVAL || saved == EUSERS)
			return ows__fail(err, OWS_EUNSUPPORTED, saved, "clone",
					 "allow unprivileged user namespaces (sysctl "
					 "user.max_user_namespaces, kernel.unprivileged_userns_clone, "
					 "or an AppArmor userns rule), or set up the account provider",
					 "this machine does not let an unprivileged process create the "
					 "sandbox's namespaces: %s", strerror(saved));
		return ows__fail_sys(err, "clone", NULL, "cannot start the sandbox");
	}
	li->init_pid = (pid_t)pid;
	return 0;
}

static int receive_proof_into(ows_session *s, struct landlock_impl *li, struct proof_msg *pm,
			      ows_error *err);

static int receive_proof(ows_session *s, struct landlock_impl *li, ows_error *err)
{
	struct proof_msg *pmp = ows__calloc(1, sizeof(*pmp), err);
	if (!pmp)
		return OWS_ENOMEM;
	int rc = receive_proof_into(s, li, pmp, err);
	free(pmp);
	return rc;
}

static int receive_proof_into(ows_session *s, struct landlock_impl *li, struct proof_msg *pm,
			      ows_error *err)
{
	int n = recv_msg(li->ctl, pm, sizeof(*pm), 30000, err);
	if (n == 0)
		return ows__fail(err, OWS_ETIMEDOUT, 0, "sandbox init", "try again; report it if it persists",
				 "the sandbox did not finish setting up in 30 s");
	if (n == OWS_ESTATE)
		return ows__fail(err, OWS_ESYS, 0, "sandbox init", NULL,
				 "the sandbox ended while setting up");
	if (n < 0)
		return n;
	if (pm->hdr.type == MSG_FAIL) {
		pm->hdr.text[sizeof(pm->hdr.text) - 1] = '\0';
		return ows__fail(err, OWS_EUNSUPPORTED, pm->hdr.err, pm->hdr.text,
				 "run `owsbx report` to see what this machine can enforce",
				 "the wall could not be built: %s failed: %s", pm->hdr.text,
				 strerror(pm->hdr.err));
	}
	if (pm->hdr.type != MSG_PROOF || pm->n > MAX_CHECKS ||
	    (size_t)n != offsetof(struct proof_msg, checks) + pm->n * sizeof(ows__check))
		return ows__fail(err, OWS_ESYS, EPROTO, "sandbox init", NULL,
				 "the sandbox sent a malformed proof");
	for (uint32_t i = 0; i < pm->n; i++) {
		pm->checks[i].name[sizeof(pm->checks[i].name) - 1] = '\0';
		pm->checks[i].detail[sizeof(pm->checks[i].detail) - 1] = '\0';
	}
	bool passed = false;
	s->proof_json = ows__proof_json("landlock", ows__net_name(s->net), pm->checks, pm->n, &passed);
	if (!s->proof_json)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (!passed) {
		for (uint32_t i = 0; i < pm->n; i++)
			if (!pm->checks[i].passed)
				return ows__fail(err, OWS_EVERIFY, 0, pm->checks[i].name,
						 "the session was refused; run `owsbx verify` for the "
						 "whole proof",
						 "the wall failed its proof: %s", pm->checks[i].detail);
	}
	return 0;
}

static int landlock_open(ows_session *s, const ows_policy *policy, const ows_config *config,
			 ows_error *err)
{
	struct probes pb = {.unix_fd = -1, .abstract_fd = -1};
	const char *home = NULL, *user = NULL;
	int rc;

	struct plan *p = ows__calloc(1, sizeof(*p), err);
	struct landlock_impl *li = ows__calloc(1, sizeof(*li), err);
	if (!p || !li) {
		free(p);
		free(li);
		return OWS_ENOMEM;
	}
	li->ctl = -1;
	li->pv.lock_fd = -1;

	if ((rc = plan_support(p, policy, s->net, err)) < 0 ||
	    (rc = plan_identity(p, policy, config, li, &home, &user, err)) < 0)
		goto fail;
	p->home = home;
	const char *base = config->private_root ? config->private_root : "/tmp";
	if ((rc = ows__private_create(&li->pv, base, s->id, p->uid, p->gid, err)) < 0)
		goto fail;
	if ((rc = plan_system(p, li, err)) < 0 ||
	    (rc = plan_folders(p, policy, li->pv.dir, err)) < 0)
		goto fail;
	qsort(p->mounts, (size_t)p->nmounts, sizeof(p->mounts[0]), cmp_mount);
	if ((rc = plan_skeleton(p, li, err)) < 0)
		goto fail;

	char *priv_home = ows__asprintf(err, "%s/home", li->pv.dir);
	char *priv_tmp = ows__asprintf(err, "%s/tmp", li->pv.dir);
	char *priv_cache = ows__asprintf(err, "%s/cache", li->pv.dir);
	ows__env_spec spec = {.home = priv_home, .tmp = priv_tmp, .cache = priv_cache,
			      .user = user, .provider = "landlock",
			      .host_env = (const char *const *)environ};
	rc = priv_home && priv_tmp && priv_cache ? ows__env_build(policy, &spec, &s->env, err)
						 : OWS_ENOMEM;
	free(priv_tmp);
	free(priv_cache);
	if (rc < 0) {
		free(priv_home);
		goto fail;
	}
	s->default_cwd = priv_home;
	for (size_t i = 0; i < policy->nfolders; i++)
		if (policy->folders[i].access == OWS_ACCESS_RW) {
			char *cwd = ows__strdup(policy->folders[i].path, err);
			if (!cwd) {
				rc = OWS_ENOMEM;
				goto fail;
			}
			free(s->default_cwd);
			s->default_cwd = cwd;
			break;
		}
	p->folders = policy->folders;
	p->nfolders = policy->nfolders;
	p->envp = s->env.v;
	p->clone_flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
	if (p->userns)
		p->clone_flags |= CLONE_NEWUSER;
	if (s->net == OWS_NET_NONE)
		p->clone_flags |= CLONE_NEWNET;

	if ((rc = probes_open(&pb, p, li, s->id, err)) < 0)
		goto fail;
	if ((rc = clone_init(p, li, err)) < 0)
		goto fail;
	rc = receive_proof(s, li, err);
	probes_close(&pb);
	if (rc < 0)
		goto fail;
	ows__strv_free(&li->strings);
	s->private_dir = ows__strdup(li->pv.dir, err);
	if (!s->private_dir) {
		rc = OWS_ENOMEM;
		goto fail;
	}
	s->enforcement = "full";
	s->impl = li;
	free(p);
	return 0;
fail:
	probes_close(&pb);
	impl_free(li);
	free(p);
	return rc;
}

/* Marks every live handle exited: the sandbox is gone. */
static void sandbox_gone(ows_session *s, struct landlock_impl *li)
{
	li->sandbox_gone = true;
	for (ows_proc *p = s->procs; p; p = p->next)
		if (!p->exited) {
			p->exited = true;
			p->exit_code = 128 + SIGKILL;
		}
}

static void dispatch(ows_session *s, const struct msg *m)
{
	if (m->type != MSG_EXITED)
		return;
	for (ows_proc *p = s->procs; p; p = p->next)
		if (p->id == m->id) {
			p->exited = true;
			p->exit_code = m->code;
		}
}

/* Reads one message, waiting up to timeout_ms; 1 when one was handled into *m. */
static int pump(ows_session *s, struct landlock_impl *li, struct msg *m, int timeout_ms,
		ows_error *err)
{
	if (li->sandbox_gone)
		return OWS_ESTATE;
	int n = recv_msg(li->ctl, m, sizeof(*m), timeout_ms, err);
	if (n == OWS_ESTATE) {
		sandbox_gone(s, li);
		return OWS_ESTATE;
	}
	if (n <= 0)
		return n;
	if (n != (int)sizeof(*m))
		return 0;
	dispatch(s, m);
	return 1;
}

static int landlock_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
			  char *const envp[], const char *cwd, const int stdio[3], ows_error *err)
{
	struct landlock_impl *li = s->impl;
	int memfd = -1, null = -1, rc;
	uint32_t counts[2] = {0, 0};

	if (li->sandbox_gone)
		return ows__fail(err, OWS_ESTATE, 0, NULL, "open a new session",
				 "the sandbox has ended");
	memfd = memfd_create("owsandbox-spawn", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return ows__fail_sys(err, "memfd_create", NULL, "cannot pass the command");
	while (argv[counts[0]])
		counts[0]++;
	while (envp[counts[1]])
		counts[1]++;
	FILE *f = fdopen(dup(memfd), "w");
	if (!f) {
		rc = ows__fail_sys(err, "fdopen", NULL, "cannot pass the command");
		goto out;
	}
	fwrite(counts, sizeof(counts), 1, f);
	for (uint32_t i = 0; i < counts[0]; i++)
		fwrite(argv[i], strlen(argv[i]) + 1, 1, f);
	for (uint32_t i = 0; i < counts[1]; i++)
		fwrite(envp[i], strlen(envp[i]) + 1, 1, f);
	fwrite(cwd, strlen(cwd) + 1, 1, f);
	if (fclose(f) != 0) {
		rc = ows__fail_sys(err, "memfd", NULL, "cannot pass the command");
		goto out;
	}
	fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);

	int fds[4] = {memfd, stdio[0], stdio[1], stdio[2]};
	for (int i = 1; i < 4; i++)
		if (fds[i] == OWS_STDIO_NULL) {
			if (null < 0 && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
				rc = ows__fail_sys(err, "/dev/null", NULL, "cannot open /dev/null");
				goto out;
			}
			fds[i] = null;
		}
	struct msg m = {.type = MSG_SPAWN, .id = proc->id};
	char cbuf[CMSG_SPACE(sizeof(fds))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	ssize_t sent;
	do
		sent = sendmsg(li->ctl, &mh, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0) {
		if (errno == EPIPE || errno == ECONNRESET)
			sandbox_gone(s, li);
		rc = ows__fail_sys(err, "sendmsg", "open a new session", "cannot reach the sandbox");
		goto out;
	}
	for (;;) {
		struct msg r;
		rc = pump(s, li, &r, -1, err);
		if (rc < 0) {
			rc = ows__fail(err, OWS_ESTATE, 0, NULL, "open a new session",
				       "the sandbox ended before the command started");
			goto out;
		}
		if (rc == 0 || r.id != proc->id)
			continue;
		if (r.type == MSG_STARTED) {
			rc = 0;
			break;
		}
		if (r.type == MSG_SPAWN_FAIL) {
			r.text[sizeof(r.text) - 1] = '\0';
			const char *hint = r.err == ENOENT && strcmp(r.text, "exec") == 0
				? "check the command's name; only the system and the session's "
				  "folders are visible inside"
				: strcmp(r.text, "cwd") == 0
				? "use a working folder inside a session folder"
				: NULL;
			rc = ows__fail(err, OWS_ESPAWN, r.err, strcmp(r.text, "cwd") == 0 ? cwd : argv[0],
				       hint, "the command could not start (%s): %s", r.text,
				       strerror(r.err));
			break;
		}
	}
out:
	if (null >= 0)
		close(null);
	close(memfd);
	return rc;
}

static int landlock_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err)
{
	struct landlock_impl *li = s->impl;
	int64_t deadline = timeout_ms < 0 ? -1 : ows__now_ms() + timeout_ms;
	while (!proc->exited) {
		int left = -1;
		if (deadline >= 0) {
			int64_t l = deadline - ows__now_ms();
			left = l < 0 ? 0 : (int)l;
		}
		struct msg m;
		int rc = pump(s, li, &m, left, err);
		if (rc == OWS_ESTATE)
			break; /* sandbox_gone() marked every handle */
		if (rc < 0)
			return rc;
		if (rc == 0 && left == 0 && !proc->exited)
			return 0;
	}
	return 1;
}

static int landlock_kill(ows_session *s, ows_proc *proc, int signo, ows_error *err)
{
	struct landlock_impl *li = s->impl;
	if (li->sandbox_gone)
		return 0;
	struct msg m = {.type = MSG_KILL, .id = proc->id, .code = signo};
	if (send(li->ctl, &m, sizeof(m), MSG_NOSIGNAL) < 0) {
		if (errno == EPIPE || errno == ECONNRESET) {
			sandbox_gone(s, li);
			return 0;
		}
		return ows__fail_sys(err, "send", NULL, "cannot reach the sandbox");
	}
	return 0;
}

static int landlock_close(ows_session *s, ows_error *err)
{
	struct landlock_impl *li = s->impl;
	if (!li)
		return 0;
	/* Closing the control socket tells init to end everything; waiting for init
	 * returns only once the kernel has emptied its PID namespace. */
	close(li->ctl);
	li->ctl = -1;
	reap_init(li);
	sandbox_gone(s, li);
	int rc = ows__private_remove(&li->pv, err);
	ows__strv_free(&li->strings);
	free(li);
	s->impl = NULL;
	return rc;
}

const ows__provider ows__landlock_provider = {
	.name = "landlock",
	.open = landlock_open,
	.spawn = landlock_spawn,
	.wait = landlock_wait,
	.kill = landlock_kill,
	.close = landlock_close,
};
