/*
 * owsbx-launch: the account provider's setuid-root launcher.
 *
 * The only privileged code of the account provider, kept small and
 * distrustful, as bubblewrap's setuid mode is.  It takes a closed set of
 * requests on its command line and nothing else: no environment (it clears
 * it), no descriptor but 0-2 and the control socket on 3 (it closes the
 * rest first), no JSON, no INI.  What it trusts comes from two places only:
 * the kernel (the caller's real uid and groups) and a root-owned record
 * beside its own binary, `<launcher>.conf`, written by
 * `owsbx machine sandbox setup`:
 *
 *     closed_uid=N  closed_gid=N  open_uid=N  open_gid=N  group_gid=N
 *     state_dir=/abs/path
 *
 * one `key=value` a line, '#' comments; the file and every folder above it
 * must be root-owned and not writable by group or others (a sticky folder
 * such as /tmp is accepted above a root-owned one).
 *
 * Requests:
 *   owsbx-launch session --account closed|open --session HEX32
 *                [--rw ABS]... [--ro ABS]... [--home ABS]
 *                [--memory-mb N] [--processes N] [--cpu-percent N]
 *                [--port-in N] [--port-out N] [--probe-socket ABS]...
 *   owsbx-launch cleanup --session HEX32
 *
 * `session` creates the private folder <state_dir>/sandboxes/<id>/ owned by
 * the account, optional cgroups, then a new PID and mount namespace whose
 * PID 1 mounts a private /proc, /tmp and /dev/shm, becomes the account,
 * restricts itself with Landlock and seccomp, proves the wall and serves the
 * host over the control socket (lib/linux/init.c).  The launcher's own
 * process stays outside with a trimmed capability set only to remove the
 * private folder and cgroups once init has ended; init ends when the
 * control socket closes, which includes the host dying.  `cleanup` removes
 * what a session left when that process was killed too.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/init.h"

#define ID_LEN 32
#define MAX_FOLDERS 32
#define MAX_SOCKETS 4
#define MAX_ARGS (2 + 2 * (MAX_FOLDERS + MAX_SOCKETS + 10))
#define MAX_ARG_LEN 4000

static const char *const controllers[] = {"memory", "pids", "cpu"};

struct conf {
	uid_t closed_uid, open_uid;
	gid_t closed_gid, open_gid, group_gid;
	char state_dir[PATH_MAX];
};

struct folder {
	const char *path;
	bool rw;
	int fd;         /* O_PATH, opened without following links */
	int clone;      /* a detached copy, when a private tmpfs covers the path */
	char rule[32];  /* /proc/self/fd/N: Landlock rules use the object checked here */
};

struct request {
	bool cleanup;
	bool closed;
	bool has_account;
	const char *id;
	struct folder folders[MAX_FOLDERS];
	int nfolders;
	const char *home;
	unsigned long memory_mb, processes, cpu_percent;
	unsigned long port_in, port_out;
	const char *sockets[MAX_SOCKETS];
	int nsockets;
};

static struct conf conf;
static struct request rq;
static uid_t caller;      /* the real ids the kernel gave us at exec */
static gid_t caller_gid;

/* ------------------------------------------------------------ refusals */

/* Says why on stderr and, for the host, on the control socket; then exits. */
static __attribute__((noreturn)) void refuse(const char *what, const char *arg, int e)
{
	struct ows__msg m = {.type = OWS_MSG_FAIL, .err = e ? e : EPERM};
	ows__buf_add(m.text, sizeof(m.text), "launcher: ");
	ows__buf_add(m.text, sizeof(m.text), what);
	if (arg) {
		ows__buf_add(m.text, sizeof(m.text), " ");
		ows__buf_add(m.text, sizeof(m.text), arg);
	}
	int type = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET)
		ows__init_send(3, &m, sizeof(m));
	dprintf(2, "owsbx-launch: %s: %s\n", m.text + 10, strerror(m.err));
	_exit(1);
}

/* ------------------------------------------------------- trusted record */

static bool parse_num(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	if (!*s || strlen(s) > 10)
		return false;
	unsigned long v = 0;
	for (const char *c = s; *c; c++) {
		if (!isdigit((unsigned char)*c))
			return false;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v < lo || v > hi || (s[0] == '0' && s[1]))
		return false;
	*out = v;
	return true;
}

/* Absolute, canonical text: no "//", "." or ".." component, no trailing '/'. */
static bool path_is_canonical(const char *p)
{
	size_t n = strnlen(p, PATH_MAX);
	if (n < 2 || n >= PATH_MAX || p[0] != '/' || p[n - 1] == '/')
		return false;
	for (const char *s = p; *s; s++) {
		if (*s != '/')
			continue;
		if (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || !s[2])) ||
		    (s[1] == '.' && s[2] == '.' && (s[3] == '/' || !s[3])))
			return false;
	}
	return true;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Root-owned, and not writable by others unless sticky. */
static bool trusted_dir(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 &&
	       (!(st->st_mode & 022) || (st->st_mode & S_ISVTX));
}

static void read_conf(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		refuse("cannot find its own path", NULL, errno);
	exe[n] = '\0';
	if (!path_is_canonical(exe) || strlen(exe) > PATH_MAX - 64)
		refuse("runs from an unexpected path", exe, EPERM);
	/* Every folder above the record must be root's: nobody else may swap it. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", exe);
	for (char *s = strrchr(dir, '/'); s; s = strrchr(dir, '/')) {
		*s = '\0';
		struct stat st;
		const char *d = dir[0] ? dir : "/";
		if (lstat(d, &st) != 0 || !trusted_dir(&st))
			refuse("an untrusted folder holds the launcher", d, EPERM);
		if (!dir[0])
			break;
	}
	snprintf(path, sizeof(path), "%s.conf", exe);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		refuse("cannot read its record (run `sudo owsbx machine sandbox setup`)", path, errno);
	struct stat st;
	char buf[4096];
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
	    st.st_size >= (off_t)sizeof(buf))
		refuse("its record is not a root-owned file only root may write", path, EPERM);
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		refuse("cannot read its record", path, errno);
	buf[len] = '\0';

	unsigned seen = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line || *line == '#')
			continue;
		char *eq = strchr(line, '=');
		if (!eq)
			refuse("bad line in its record", line, EINVAL);
		*eq = '\0';
		const char *key = line, *val = eq + 1;
		static const char *const keys[] = {"closed_uid", "closed_gid", "open_uid",
						   "open_gid", "group_gid", "state_dir"};
		unsigned k = 0;
		while (k < OWS__ARRAY_LEN(keys) && strcmp(keys[k], key) != 0)
			k++;
		if (k == OWS__ARRAY_LEN(keys) || (seen & (1u << k)))
			refuse("unknown or repeated key in its record", key, EINVAL);
		seen |= 1u << k;
		unsigned long v = 0;
		if (k == 5) {
			if (!path_is_canonical(val) || strlen(val) >= sizeof(conf.state_dir) - 64)
				refuse("state_dir in its record is not an absolute path", val, EINVAL);
			snprintf(conf.state_dir, sizeof(conf.state_dir), "%s", val);
		} else if (!parse_num(val, 1, 0x7ffffffe, &v)) {
			refuse("bad number in its record", key, EINVAL);
		}
		switch (k) {
		case 0: conf.closed_uid = (uid_t)v; break;
		case 1: conf.closed_gid = (gid_t)v; break;
		case 2: conf.open_uid = (uid_t)v; break;
		case 3: conf.open_gid = (gid_t)v; break;
		case 4: conf.group_gid = (gid_t)v; break;
		default: break;
		}
	}
	if (seen != 0x3f)
		refuse("its record is incomplete", path, EINVAL);
	if (conf.closed_uid == conf.open_uid)
		refuse("its record names one account twice", path, EINVAL);
}

/* The caller's real uid is root, or its groups (as the kernel holds them) include the group. */
static void check_caller(void)
{
	if (caller == 0)
		return;
	if (caller == conf.closed_uid || caller == conf.open_uid)
		refuse("a sandbox account may not start sandboxes", NULL, EPERM);
	if (caller_gid == conf.group_gid)
		return;
	gid_t groups[NGROUPS_MAX];
	int n = getgroups(NGROUPS_MAX, groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == conf.group_gid)
			return;
	refuse("the caller is not in the sandbox group (ask for `sudo owsbx machine sandbox "
	       "setup --for-user NAME`, then log in again)", NULL, EPERM);
}

/* ------------------------------------------------------------- request */

static bool is_id(const char *s)
{
	if (strlen(s) != ID_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static int open_nofollow(const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* A session folder: the caller's own folder, reached without a link, outside what we guard. */
static void check_folder(struct folder *f)
{
	static const char *const forbidden[] = {"/proc", "/sys", "/dev"};
	if (!path_is_canonical(f->path))
		refuse("a folder is not an absolute, canonical path", f->path, EINVAL);
	for (size_t i = 0; i < OWS__ARRAY_LEN(forbidden); i++)
		if (path_under(f->path, forbidden[i]))
			refuse("a kernel interface cannot be a session folder", f->path, EINVAL);
	if (path_under(f->path, conf.state_dir) || path_under(conf.state_dir, f->path))
		refuse("the sandbox state folder cannot be a session folder", f->path, EPERM);
	f->fd = open_nofollow(f->path, O_PATH | O_DIRECTORY);
	if (f->fd < 0)
		refuse("a folder does not exist or passes through a link", f->path, errno);
	struct stat st;
	if (fstat(f->fd, &st) != 0 || !S_ISDIR(st.st_mode))
		refuse("a folder is not a folder", f->path, ENOTDIR);
	/* Only the caller's own folders: the account owns other people's private folders. */
	if (caller != 0 && st.st_uid != caller)
		refuse("a session folder must belong to the caller", f->path, EPERM);
	snprintf(f->rule, sizeof(f->rule), "/proc/self/fd/%d", f->fd);
	f->clone = -1;
}

static void parse(int argc, char **argv)
{
	if (argc < 2 || argc > MAX_ARGS)
		refuse("usage: owsbx-launch session|cleanup --session HEX ...", NULL, EINVAL);
	for (int i = 0; i < argc; i++)
		if (strnlen(argv[i], MAX_ARG_LEN + 1) > MAX_ARG_LEN)
			refuse("an argument is too long", NULL, E2BIG);
	if (strcmp(argv[1], "cleanup") == 0)
		rq.cleanup = true;
	else if (strcmp(argv[1], "session") != 0)
		refuse("unknown request", argv[1], EINVAL);
	for (int i = 2; i < argc; i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val)
			refuse("an option lacks its value", opt, EINVAL);
		if (strcmp(opt, "--session") == 0 && !rq.id) {
			if (!is_id(val))
				refuse("the session id is not 32 hex digits", val, EINVAL);
			rq.id = val;
			continue;
		}
		if (rq.cleanup)
			refuse("cleanup takes only --session", opt, EINVAL);
		if (strcmp(opt, "--account") == 0 && !rq.has_account) {
			if (strcmp(val, "closed") != 0 && strcmp(val, "open") != 0)
				refuse("the account is neither closed nor open", val, EINVAL);
			rq.closed = val[0] == 'c';
			rq.has_account = true;
		} else if (strcmp(opt, "--rw") == 0 || strcmp(opt, "--ro") == 0) {
			if (rq.nfolders >= MAX_FOLDERS)
				refuse("too many folders", NULL, E2BIG);
			rq.folders[rq.nfolders].path = val;
			rq.folders[rq.nfolders].rw = opt[3] == 'w';
			rq.nfolders++;
		} else if (strcmp(opt, "--home") == 0 && !rq.home) {
			if (!path_is_canonical(val))
				refuse("the home is not an absolute path", val, EINVAL);
			rq.home = val;
		} else if (strcmp(opt, "--memory-mb") == 0 && !rq.memory_mb) {
			if (!parse_num(val, 1, 1ul << 30, &rq.memory_mb))
				refuse("bad --memory-mb", val, EINVAL);
		} else if (strcmp(opt, "--processes") == 0 && !rq.processes) {
			if (!parse_num(val, 1, 1ul << 22, &rq.processes))
				refuse("bad --processes", val, EINVAL);
		} else if (strcmp(opt, "--cpu-percent") == 0 && !rq.cpu_percent) {
			if (!parse_num(val, 1, 100000, &rq.cpu_percent))
				refuse("bad --cpu-percent", val, EINVAL);
		} else if (strcmp(opt, "--port-in") == 0 && !rq.port_in) {
			if (!parse_num(val, 47800, 47899, &rq.port_in))
				refuse("--port-in is not in 47800-47899", val, EINVAL);
		} else if (strcmp(opt, "--port-out") == 0 && !rq.port_out) {
			if (!parse_num(val, 1, 65535, &rq.port_out) ||
			    (rq.port_out >= 47800 && rq.port_out <= 47899))
				refuse("--port-out is not outside 47800-47899", val, EINVAL);
		} else if (strcmp(opt, "--probe-socket") == 0) {
			struct stat st;
			if (rq.nsockets >= MAX_SOCKETS || !path_is_canonical(val) ||
			    lstat(val, &st) != 0 || !S_ISSOCK(st.st_mode))
				refuse("bad --probe-socket", val, EINVAL);
			rq.sockets[rq.nsockets++] = val;
		} else {
			refuse("unknown or repeated option", opt, EINVAL);
		}
	}
	if (!rq.id)
		refuse("--session is required", NULL, EINVAL);
	if (rq.cleanup)
		return;
	if (!rq.has_account)
		refuse("--account is required", NULL, EINVAL);
	for (int i = 0; i < rq.nfolders; i++)
		check_folder(&rq.folders[i]);
	if (rq.home) {
		int fd = open_nofollow(rq.home, O_PATH | O_DIRECTORY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0 || (caller != 0 && st.st_uid != caller))
			refuse("the home is not the caller's folder", rq.home, fd < 0 ? errno : EPERM);
		close(fd);
	}
}

/* ------------------------------------------------------ state and cgroups */

/* Opens state_dir/sandboxes, both root's and closed to others' writes. */
static int open_sandboxes(void)
{
	int sd = open_nofollow(conf.state_dir, O_RDONLY | O_DIRECTORY);
	struct stat st;
	if (sd < 0 || fstat(sd, &st) != 0 || st.st_uid != 0 || (st.st_mode & 022))
		refuse("the state folder is missing or not root's alone", conf.state_dir,
		       sd < 0 ? errno : EPERM);
	if (mkdirat(sd, "sandboxes", 0711) != 0 && errno != EEXIST)
		refuse("cannot create", "sandboxes", errno);
	int sb = openat(sd, "sandboxes", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(sd);
	if (sb < 0 || fstat(sb, &st) != 0 || st.st_uid != 0 || (st.st_mode & 022))
		refuse("the sandboxes folder is missing or not root's alone", conf.state_dir,
		       sb < 0 ? errno : EPERM);
	return sb;
}

static void cgroup_path(char *buf, size_t size, const char *ctrl, const char *id)
{
	snprintf(buf, size, "/sys/fs/cgroup/%s/owsandbox-%s", ctrl, id);
}

static void cgroups_remove(const char *id)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(controllers); i++) {
		char path[128];
		cgroup_path(path, sizeof(path), controllers[i], id);
		/* The kernel may still be tearing the last task down. */
		for (int tries = 0; tries < 200; tries++) {
			if (rmdir(path) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY)
				break;
			usleep(5000);
		}
	}
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void cgroup_set(const char *ctrl, const char *file, unsigned long long v)
{
	char dir[128], path[192], val[32];
	cgroup_path(dir, sizeof(dir), ctrl, rq.id);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		refuse("cannot create a cgroup", dir, errno);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(val, sizeof(val), "%llu", v);
	if (write_str(path, val) != 0)
		refuse("cannot set a limit", path, errno);
}

static void cgroups_create(void)
{
	if (rq.memory_mb)
		cgroup_set("memory", "memory.limit_in_bytes", (unsigned long long)rq.memory_mb << 20);
	if (rq.processes)
		cgroup_set("pids", "pids.max", rq.processes);
	if (rq.cpu_percent) {
		cgroup_set("cpu", "cpu.cfs_period_us", 100000);
		cgroup_set("cpu", "cpu.cfs_quota_us", (unsigned long long)rq.cpu_percent * 1000);
	}
}

/* Called by init itself, still root: writing 0 moves the writer. */
static void cgroups_join(const struct ows__plan *p)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(controllers); i++) {
		bool used = (i == 0 && rq.memory_mb) || (i == 1 && rq.processes) ||
			    (i == 2 && rq.cpu_percent);
		if (!used)
			continue;
		char dir[128], path[192];
		cgroup_path(dir, sizeof(dir), controllers[i], rq.id);
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		if (write_str(path, "0") != 0)
			ows__init_die(p, "join cgroup", dir);
	}
}

/* Removes sessions whose launcher and init are both gone (their lock is free). */
static void sweep_stale(int sb)
{
	int dupfd = dup(sb);
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	if (!d) {
		if (dupfd >= 0)
			close(dupfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		char id[ID_LEN + 1], lock[ID_LEN + 8];
		size_t n = strlen(e->d_name);
		if (n != ID_LEN && !(n == ID_LEN + 5 && strcmp(e->d_name + ID_LEN, ".lock") == 0))
			continue;
		snprintf(id, sizeof(id), "%.*s", ID_LEN, e->d_name);
		if (!is_id(id))
			continue;
		snprintf(lock, sizeof(lock), "%s.lock", id);
		int lfd = openat(sb, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) != 0) {
			close(lfd);
			continue; /* alive */
		}
		ows__rmtree_at(sb, id);
		cgroups_remove(id);
		unlinkat(sb, lock, 0);
		if (lfd >= 0)
			close(lfd);
	}
	closedir(d);
}

/* The lock, created locked and then linked, so no sweeper ever sees it free. */
static int take_lock(int sb)
{
	char lock[ID_LEN + 8], proc[64];
	snprintf(lock, sizeof(lock), "%s.lock", rq.id);
	int lfd = openat(sb, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", lfd);
	if (lfd < 0 || flock(lfd, LOCK_EX) != 0 ||
	    linkat(AT_FDCWD, proc, sb, lock, AT_SYMLINK_FOLLOW) != 0)
		refuse("cannot create the session's lock (is the session id in use?)", rq.id, errno);
	return lfd;
}

/* <state_dir>/sandboxes/<id>/{home,tmp,cache}, the account's, 0700. */
static int make_private(int sb, uid_t uid, gid_t gid)
{
	if (mkdirat(sb, rq.id, 0700) != 0)
		refuse("cannot create the private folder", rq.id, errno);
	int fd = openat(sb, rq.id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		refuse("cannot open the private folder", rq.id, errno);
	static const char *const subdirs[] = {"home", "tmp", "cache"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(subdirs); i++)
		if (mkdirat(fd, subdirs[i], 0700) != 0 ||
		    fchownat(fd, subdirs[i], uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
			refuse("cannot create in the private folder", subdirs[i], errno);
	/* Handed over last: until now the account could not touch it. */
	if (fchown(fd, uid, gid) != 0)
		refuse("cannot hand the private folder over", rq.id, errno);
	return fd;
}

/* ----------------------------------------------------------------- init */

static struct ows__plan plan;
static ows__folder proof_folders[MAX_FOLDERS];
static char private_dir[PATH_MAX + 64], private_rule[32], canary[PATH_MAX + 64];
static char resolv[PATH_MAX];
static char *const empty_env[] = {NULL};

static void add_rule(const char *path, uint64_t access)
{
	if (plan.nrules >= OWS_INIT_MAX_RULES) {
		errno = E2BIG;
		ows__init_die(&plan, "too many Landlock rules", path);
	}
	plan.rules[plan.nrules].path = path;
	plan.rules[plan.nrules].access = access;
	plan.nrules++;
}

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1;; s++) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (lstat(buf, &st) != 0) {
			if (mkdir(buf, 0755) != 0)
				ows__init_die(&plan, "mkdir", buf);
		} else if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			ows__init_die(&plan, "mkdir", buf);
		}
		if (!slash)
			break;
		*slash = '/';
		s = slash;
	}
}

/*
 * Covers `dst` with a fresh tmpfs (nothing of the host's /tmp stays in
 * view), then puts back the session folders and the private folder that
 * lived below it, at their own paths.
 */
static void private_tmpfs(const char *dst, const char *opts, int priv_fd)
{
	int priv_clone = -1;
	for (int i = 0; i < rq.nfolders; i++)
		if (path_under(rq.folders[i].path, dst)) {
			rq.folders[i].clone = open_tree(rq.folders[i].fd, "", OPEN_TREE_CLONE |
							OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
			if (rq.folders[i].clone < 0)
				ows__init_die(&plan, "open_tree", rq.folders[i].path);
		}
	if (path_under(private_dir, dst)) {
		priv_clone = open_tree(priv_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (priv_clone < 0)
			ows__init_die(&plan, "open_tree", private_dir);
	}
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		ows__init_die(&plan, "mount tmpfs", dst);
	/* Sorted by the host, so a folder is back before a folder below it. */
	for (int i = 0; i < rq.nfolders; i++) {
		if (rq.folders[i].clone < 0)
			continue;
		mkdir_p(rq.folders[i].path);
		if (move_mount(rq.folders[i].clone, "", AT_FDCWD, rq.folders[i].path,
			       MOVE_MOUNT_F_EMPTY_PATH) != 0)
			ows__init_die(&plan, "move_mount", rq.folders[i].path);
		close(rq.folders[i].clone);
		rq.folders[i].clone = -1;
	}
	if (priv_clone >= 0) {
		mkdir_p(private_dir);
		if (move_mount(priv_clone, "", AT_FDCWD, private_dir, MOVE_MOUNT_F_EMPTY_PATH) != 0)
			ows__init_die(&plan, "move_mount", private_dir);
		close(priv_clone);
	}
}

static void plan_rules(void)
{
	static const char *const dirs[] = {"/usr", "/etc", "/opt", "/bin", "/sbin",
					   "/lib", "/lib32", "/lib64", "/libx32"};
	static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					      "/dev/urandom", "/dev/tty", "/dev/ptmx"};
	const uint64_t dev_rw = OWS_LL_FS_READ_FILE | OWS_LL_FS_WRITE_FILE | OWS_LL_FS_TRUNCATE |
				OWS_LL_FS_IOCTL_DEV;
	const uint64_t all = ows__landlock_fs_all(plan.abi);
	struct stat st;

	/* Symbolic links such as /bin -> usr/bin are covered by their target's rule. */
	for (size_t i = 0; i < OWS__ARRAY_LEN(dirs); i++)
		if (lstat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			add_rule(dirs[i], OWS_LL_FS_READ);
	add_rule("/proc", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR);
	add_rule("/sys", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR);
	add_rule("/dev", OWS_LL_FS_READ_DIR);
	for (size_t i = 0; i < OWS__ARRAY_LEN(devices); i++)
		if (lstat(devices[i], &st) == 0 && S_ISCHR(st.st_mode))
			add_rule(devices[i], dev_rw);
	if (lstat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode))
		add_rule("/dev/pts", dev_rw | OWS_LL_FS_READ_DIR);
	if (lstat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
		add_rule("/dev/shm", all);
	add_rule("/tmp", all);
	/* Name resolution in `open`: /etc/resolv.conf may point into /run. */
	if (!rq.closed && realpath("/etc/resolv.conf", resolv) && !path_under(resolv, "/etc") &&
	    !path_under(resolv, "/usr") && stat(resolv, &st) == 0 && S_ISREG(st.st_mode))
		add_rule(resolv, OWS_LL_FS_READ_FILE);
	for (int i = 0; i < rq.nfolders; i++)
		add_rule(rq.folders[i].rule, rq.folders[i].rw ? all : OWS_LL_FS_READ);
	add_rule(private_rule, all);
}

/*
 * The sandbox's /etc/passwd: the account's home is its private home, so tools
 * that ask the system for ~ (ssh does) find what the person shared; no other
 * account of the machine is listed.  Written from the launcher's own record.
 */
static void passwd_overlay(int priv_fd)
{
	static char home[PATH_MAX + 80], text[PATH_MAX + 400];
	const struct passwd *pw = getpwuid(plan.uid);
	snprintf(home, sizeof(home), "%s/home", private_dir);
	plan.priv_home = home;
	int n = snprintf(text, sizeof(text),
			 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
			 "%s:x:%u:%u::%s:/bin/sh\n"
			 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			 pw ? pw->pw_name : "sandbox", (unsigned)plan.uid, (unsigned)plan.gid, home);
	int fd = openat(priv_fd, ".passwd", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			0644);
	if (fd < 0 || write(fd, text, (size_t)n) != n || fchown(fd, plan.uid, plan.gid) != 0)
		ows__init_die(&plan, "write the sandbox's passwd", private_dir);
	close(fd);
	char src[PATH_MAX + 80];
	snprintf(src, sizeof(src), "%s/.passwd", private_dir);
	if (mount(src, "/etc/passwd", NULL, MS_BIND, NULL) != 0 ||
	    mount(NULL, "/etc/passwd", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		  NULL) != 0)
		ows__init_die(&plan, "mount the sandbox's passwd", "/etc/passwd");
}

static __attribute__((noreturn)) void init_main(int priv_fd)
{
	cgroups_join(&plan);
	private_tmpfs("/tmp", "mode=1777", priv_fd);
	struct stat st;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777") != 0)
		ows__init_die(&plan, "mount tmpfs", "/dev/shm");
	/* Only this namespace's processes in /proc. */
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		ows__init_die(&plan, "mount proc", "/proc");

	passwd_overlay(priv_fd);

	/* Whatever the caller left on 0-2 (a terminal) stays outside. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; null >= 0 && i < 3; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
	plan_rules();
	ows__init_drop_identity(&plan);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		ows__init_die(&plan, "set non-dumpable", NULL);
	ows__init_restrict(&plan);
	ows__init_prove(&plan);
	ows__init_serve(&plan);
}

/* What the process outside keeps: enough to remove an account-owned tree. */
static void trim_capabilities(void)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	data[0].effective = data[0].permitted =
		(1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER);
	if (syscall(SYS_capset, &hdr, data) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		_exit(1); /* init runs on; `cleanup` removes what stays */
}

static __attribute__((noreturn)) void session(void)
{
	uid_t uid = rq.closed ? conf.closed_uid : conf.open_uid;
	gid_t gid = rq.closed ? conf.closed_gid : conf.open_gid;
	int type = 0, domain = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET ||
	    (len = sizeof(domain), getsockopt(3, SOL_SOCKET, SO_DOMAIN, &domain, &len)) != 0 ||
	    domain != AF_UNIX)
		refuse("descriptor 3 is not the control socket", NULL, EBADF);

	int sb = open_sandboxes();
	sweep_stale(sb);
	int lock = take_lock(sb);
	int priv = make_private(sb, uid, gid);
	snprintf(private_dir, sizeof(private_dir), "%s/sandboxes/%s", conf.state_dir, rq.id);
	snprintf(private_rule, sizeof(private_rule), "/proc/self/fd/%d", priv);
	cgroups_create();

	plan.uid = uid;
	plan.gid = gid;
	plan.groups[0] = gid;
	plan.ngroups = 1;
	plan.abi = ows__landlock_abi();
	if (plan.abi < 1)
		refuse("Landlock is not available in this kernel", NULL, EOPNOTSUPP);
	plan.handled_fs = ows__landlock_fs_all(plan.abi);
	if (plan.abi >= 6)
		plan.scoped = OWS_LL_SCOPE_ABSTRACT_UNIX_SOCKET | OWS_LL_SCOPE_SIGNAL;
	plan.net = rq.closed ? OWS_NET_NONE : OWS_NET_OPEN;
	/* The firewall keys on the uid; seccomp refuses what it cannot see (vsock, packet). */
	if (ows__seccomp_build(&plan.seccomp, OWS_NET_OPEN, NULL) < 0)
		refuse("cannot build the seccomp filter", NULL, EINVAL);
	plan.firewall = true;
	plan.port_inside = (uint16_t)rq.port_in;
	plan.port_outside = (uint16_t)rq.port_out;
	for (int i = 0; i < rq.nfolders; i++) {
		proof_folders[i].path = (char *)rq.folders[i].path;
		proof_folders[i].access = rq.folders[i].rw ? OWS_ACCESS_RW : OWS_ACCESS_RO;
	}
	plan.folders = proof_folders;
	plan.nfolders = (size_t)rq.nfolders;
	plan.home = rq.home;
	if (rq.home) {
		snprintf(canary, sizeof(canary), "%s/.owsandbox-canary-%s", rq.home, rq.id);
		plan.canary = canary;
		plan.canary_token = rq.id;
	}
	for (int i = 0; i < rq.nsockets; i++)
		plan.unix_probes[plan.nunix++] = rq.sockets[i];
	plan.abstract_name[0] = '\0';
	int n = snprintf(plan.abstract_name + 1, sizeof(plan.abstract_name) - 1,
			 "owsandbox-probe-%s", rq.id);
	plan.abstract_len = (socklen_t)n + 1;
	plan.envp = empty_env;
	plan.ctl = 3;

	if (unshare(CLONE_NEWPID) != 0)
		refuse("cannot create a PID namespace", NULL, errno);
	pid_t pid = fork();
	if (pid < 0)
		refuse("cannot fork", NULL, errno);
	if (pid == 0) {
		close(sb);
		init_main(priv);
	}
	/* Outside: hold nothing of the sandbox's, wait for init, then tidy up. */
	close(3);
	close(priv);
	for (int i = 0; i < rq.nfolders; i++)
		close(rq.folders[i].fd);
	static const int quiet[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < OWS__ARRAY_LEN(quiet); i++)
		signal(quiet[i], SIG_IGN);
	trim_capabilities();
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int rc = ows__rmtree_at(sb, rq.id) == 0 ? 0 : 1;
	cgroups_remove(rq.id);
	char lockname[ID_LEN + 8];
	snprintf(lockname, sizeof(lockname), "%s.lock", rq.id);
	unlinkat(sb, lockname, 0);
	close(lock);
	_exit(rc);
}

int main(int argc, char **argv)
{
	/* Descriptors 0-2 must exist, or a file opened later would take their place. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			_exit(126);
	syscall(SYS_close_range, 4, ~0U, 0);
	if (clearenv() != 0)
		_exit(126);
	umask(022);
	/* Dispositions the caller ignored would otherwise pass to init and its commands. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if (geteuid() != 0)
		refuse("is not installed setuid root (run `sudo owsbx machine sandbox setup`)", NULL,
		       EPERM);
	/*
	 * Wholly root from here on: files it makes are root's, and the caller
	 * can no longer signal or otherwise reach this process (only the control
	 * socket, which init reads, and the terminal's signals, ignored outside).
	 */
	caller = getuid();
	caller_gid = getgid();
	if (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)
		refuse("cannot become wholly root", NULL, errno);
	read_conf();
	check_caller();
	/*
	 * A mount namespace of our own before any folder is opened: init can
	 * then clone what it opened (open_tree needs a mount of its own
	 * namespace), and nothing mounted here reaches the host.
	 */
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		refuse("cannot make a private mount namespace", NULL, errno);
	/*
	 * The request's paths are looked up with the caller's own file access:
	 * the launcher's answers must not tell what exists where the caller
	 * cannot look.
	 */
	setfsgid(caller_gid);
	setfsuid(caller);
	if ((uid_t)setfsuid((uid_t)-1) != caller || (gid_t)setfsgid((gid_t)-1) != caller_gid)
		refuse("cannot take the caller's file access", NULL, EPERM);
	parse(argc, argv);
	setfsuid(0);
	setfsgid(0);
	if (setfsuid((uid_t)-1) != 0 || setfsgid((gid_t)-1) != 0)
		refuse("cannot take back root's file access", NULL, EPERM);
	if (rq.cleanup) {
		int sb = open_sandboxes();
		sweep_stale(sb);
		close(sb);
		_exit(0);
	}
	session();
}
