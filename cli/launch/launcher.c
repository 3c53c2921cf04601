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
 *   owsbx-launch session --account closed|open --net none|allowlist|open
 *                --session HEX32
 *                [--rw ABS]... [--ro ABS]... [--home ABS]
 *                [--guard ABS]... [--pin ABS]...   (inside a --rw folder)
 *                [--mask ABS]...                   (a FIFO or socket in a folder)
 *                [--proxy-port N]                  (allowlist: 47800-47899)
 *                [--memory-mb N] [--processes N] [--cpu-percent N] [--tmpfs-mb N]
 *                [--probe-socket ABS]...
 *                [--open-without-scopes partial]   (--net open only)
 *   owsbx-launch cleanup --session HEX32
 *
 * `session` creates the private folder <state_dir>/sandboxes/<id>/ owned by
 * the account and optional cgroups, then plans the landlock provider's view
 * with the same code (lib/linux/wall/view.c: the system read-only, the folders
 * at their own paths, each still the one checked here, --guard paths bound
 * read-only and --pin folders read-write over themselves) and clones init
 * into new PID, mount, IPC, UTS and (unless --net open) network namespaces.
 * Init builds that root and pivots into it (lib/linux/wall/root.c), in allowlist
 * listens for the proxy inside and hands the socket to the host, becomes the
 * account, restricts itself with Landlock and seccomp, proves the wall and
 * serves the host over the control socket (lib/linux/wall/init.c).  The
 * launcher's own process stays outside with a trimmed capability set only to
 * remove the private folder and cgroups once init has ended; init ends when
 * the control socket closes, which includes the host dying.  `cleanup`
 * removes what a session left when that process was killed too.
 *
 * What goes setuid: this file, every file of lib/linux/wall/, and the
 * helpers lib/{env,util,error}.c, lib/posix/{fs,platform_posix}.c and
 * lib/linux/platform.c (see LAUNCH_OBJS in the Makefile).  No jansson, no inih.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "linux/wall/acl_codec.h"
#include "linux/wall/cgroup.h"
#include "linux/wall/init.h"
#include "linux/wall/launch.h"
#include "linux/limits_plan.h"
#include "linux/wall/view.h"

#define ID_LEN OWS_LAUNCH_ID_LEN
#define MAX_FOLDERS OWS_LAUNCH_MAX_FOLDERS
#define MAX_SOCKETS OWS_LAUNCH_MAX_SOCKETS
#define MAX_GUARDED OWS_LAUNCH_MAX_GUARDED
#define MAX_MASKS OWS_LAUNCH_MAX_MASKS
/* The repeatable options at their most, and the ten that come once (--account ... --tmpfs-mb)
 * with room for two more. */
#define MAX_ARGS (2 + 2 * (MAX_FOLDERS + MAX_SOCKETS + MAX_GUARDED + MAX_MASKS + 12))
#define MAX_ARG_LEN OWS_LAUNCH_MAX_ARG

struct conf {
	uid_t closed_uid, open_uid;
	gid_t closed_gid, open_gid, group_gid;
	char state_dir[PATH_MAX];
};

struct folder {
	const char *path;
	bool rw;
	int fd;         /* O_PATH, opened without following links */
	struct stat st; /* what it was when checked: init binds only that folder */
};

/* A path in a read-write folder bound over itself: read-only, or (pin) read-write. */
struct guarded {
	const char *path;
	bool pin;
	bool is_file;
};

struct request {
	bool cleanup;
	bool closed;
	bool has_account;
	bool has_net;
	ows_net net;
	const char *id;
	struct folder folders[MAX_FOLDERS];
	int nfolders;
	const char *home;
	unsigned long memory_mb, processes, cpu_percent;
	unsigned long tmpfs_mb; /* each of /tmp, /dev/shm and TMPDIR; 0: a quarter of memory */
	unsigned long proxy_port;
	const char *sockets[MAX_SOCKETS];
	int nsockets;
	struct guarded guarded[MAX_GUARDED];
	int nguarded;
	const char *masks[MAX_MASKS];
	int nmasks;
	bool open_unscoped; /* the caller runs `open` partial where Landlock has no scopes */
};

static struct conf conf;
static struct request rq;
static uid_t caller;      /* the real ids the kernel gave us at exec */
static gid_t caller_gid;
static mode_t caller_umask; /* the caller's, as the kernel gave it at exec */

/* ------------------------------------------------------------ refusals */

/* Says why on stderr and, for the host, on the control socket; then exits. */
static __attribute__((noreturn)) void refuse(const char *what, const char *arg, int e)
{
	struct ows__msg m = {.type = OWS_MSG_FAIL, .err = e ? e : EPERM};
	ows__buf_add(m.text, sizeof(m.text), "launcher: ");
	ows__buf_add(m.text, sizeof(m.text), what);
	if (arg) {
		/* A path the caller, or an agent's link, chose: written out, never raw. */
		char shown[sizeof(m.text)];
		ows__buf_add(m.text, sizeof(m.text), " ");
		ows__buf_add(m.text, sizeof(m.text), ows_text_escape(shown, sizeof(shown), arg));
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

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void read_conf(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		refuse("cannot find its own path", NULL, errno);
	exe[n] = '\0';
	if (!ows__launch_path_is_canonical(exe) || strlen(exe) > PATH_MAX - 64)
		refuse("runs from an unexpected path", exe, EPERM);
	/* Every folder above the record must be root's: nobody else may swap it. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", exe);
	for (char *s = strrchr(dir, '/'); s; s = strrchr(dir, '/')) {
		*s = '\0';
		struct stat st;
		const char *d = dir[0] ? dir : "/";
		if (lstat(d, &st) != 0 || !ows__launch_dir_is_trusted(&st))
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
		static const char *const keys[] = OWS_LAUNCH_CONF_KEYS;
		unsigned k = 0;
		while (k < OWS__ARRAY_LEN(keys) && strcmp(keys[k], key) != 0)
			k++;
		if (k == OWS__ARRAY_LEN(keys) || (seen & (1u << k)))
			refuse("unknown or repeated key in its record", key, EINVAL);
		seen |= 1u << k;
		unsigned long v = 0;
		if (k == 5) {
			if (!ows__launch_path_is_canonical(val) || strlen(val) >= sizeof(conf.state_dir) - 64)
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
	if (!ows__launch_path_is_canonical(f->path))
		refuse("a folder is not an absolute, canonical path", f->path, EINVAL);
	for (size_t i = 0; i < OWS__ARRAY_LEN(forbidden); i++)
		if (path_under(f->path, forbidden[i]))
			refuse("a kernel interface cannot be a session folder", f->path, EINVAL);
	if (path_under(f->path, conf.state_dir) || path_under(conf.state_dir, f->path))
		refuse("the sandbox state folder cannot be a session folder", f->path, EPERM);
	f->fd = open_nofollow(f->path, O_PATH | O_DIRECTORY);
	if (f->fd < 0)
		refuse("a folder does not exist or passes through a link", f->path, errno);
	if (fstat(f->fd, &f->st) != 0 || !S_ISDIR(f->st.st_mode))
		refuse("a folder is not a folder", f->path, ENOTDIR);
	/* Only the caller's own folders: the account owns other people's private folders. */
	if (caller != 0 && f->st.st_uid != caller)
		refuse("a session folder must belong to the caller", f->path, EPERM);
}

/* Covered inside: a FIFO or socket in a folder of the request, so it can only take away. */
static void check_mask(const char *path)
{
	bool inside = false;
	for (int i = 0; i < rq.nfolders && !inside; i++)
		inside = path_under(path, rq.folders[i].path) && strcmp(path, rq.folders[i].path) != 0;
	struct stat st;
	if (!ows__launch_path_is_canonical(path) || !inside)
		refuse("a masked path is not inside a session folder", path, EINVAL);
	int fd = open_nofollow(path, O_PATH);
	if (fd < 0 || fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		refuse("a masked path is not a FIFO or socket reached without a link", path,
		       fd < 0 ? errno : EINVAL);
	close(fd);
}

/* Bound over itself inside: only below a read-write folder, so it can only take away. */
static void check_guarded(struct guarded *g)
{
	bool inside = false;
	for (int i = 0; i < rq.nfolders && !inside; i++)
		inside = rq.folders[i].rw && path_under(g->path, rq.folders[i].path) &&
			 strcmp(g->path, rq.folders[i].path) != 0;
	if (!ows__launch_path_is_canonical(g->path) || !inside)
		refuse("a guarded path is not inside a read-write folder", g->path, EINVAL);
	int fd = open_nofollow(g->path, O_PATH);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		refuse("a guarded path does not exist or passes through a link", g->path,
		       fd < 0 ? errno : EIO);
	close(fd);
	if (!S_ISDIR(st.st_mode) && (g->pin || !S_ISREG(st.st_mode)))
		refuse("a guarded path is neither a folder nor a file", g->path, EINVAL);
	g->is_file = !S_ISDIR(st.st_mode);
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
			if (!ows__launch_path_is_canonical(val))
				refuse("the home is not an absolute path", val, EINVAL);
			rq.home = val;
		} else if (strcmp(opt, "--memory-mb") == 0 && !rq.memory_mb) {
			if (!parse_num(val, 1, 1ul << 30, &rq.memory_mb))
				refuse("bad --memory-mb", val, EINVAL);
		} else if (strcmp(opt, "--processes") == 0 && !rq.processes) {
			if (!parse_num(val, 1, 1ul << 22, &rq.processes))
				refuse("bad --processes", val, EINVAL);
		} else if (strcmp(opt, "--tmpfs-mb") == 0 && !rq.tmpfs_mb) {
			if (!parse_num(val, 1, 1ul << 30, &rq.tmpfs_mb))
				refuse("bad --tmpfs-mb", val, EINVAL);
		} else if (strcmp(opt, "--cpu-percent") == 0 && !rq.cpu_percent) {
			if (!parse_num(val, 1, 100000, &rq.cpu_percent))
				refuse("bad --cpu-percent", val, EINVAL);
		} else if (strcmp(opt, "--net") == 0 && !rq.has_net) {
			if (ows_net_from_name(val, &rq.net) < 0)
				refuse("--net is not none, allowlist or open", val, EINVAL);
			rq.has_net = true;
		} else if (strcmp(opt, "--proxy-port") == 0 && !rq.proxy_port) {
			if (!parse_num(val, 47800, 47899, &rq.proxy_port))
				refuse("--proxy-port is not in 47800-47899", val, EINVAL);
		} else if (strcmp(opt, "--mask") == 0) {
			if (rq.nmasks >= MAX_MASKS)
				refuse("too many masked paths", NULL, E2BIG);
			rq.masks[rq.nmasks++] = val;
		} else if (strcmp(opt, "--guard") == 0 || strcmp(opt, "--pin") == 0) {
			if (rq.nguarded >= MAX_GUARDED)
				refuse("too many guarded paths", NULL, E2BIG);
			rq.guarded[rq.nguarded].path = val;
			rq.guarded[rq.nguarded].pin = opt[2] == 'p';
			rq.nguarded++;
		} else if (strcmp(opt, "--open-without-scopes") == 0 && !rq.open_unscoped) {
			/* The caller's choice for its own session only (the host refuses it
			 * unless the config makes it): where Landlock has no scopes, its commands
			 * then reach the host's abstract sockets as the open account. */
			if (strcmp(val, "partial") != 0)
				refuse("--open-without-scopes takes only partial", val, EINVAL);
			rq.open_unscoped = true;
		} else if (strcmp(opt, "--probe-socket") == 0) {
			struct stat st;
			if (rq.nsockets >= MAX_SOCKETS || !ows__launch_path_is_canonical(val) ||
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
	if (!rq.has_account || !rq.has_net)
		refuse("--account and --net are required", NULL, EINVAL);
	/* The closed account for none and allowlist, the open one for open: never crossed. */
	if (rq.closed != (rq.net != OWS_NET_OPEN))
		refuse("--net does not go with --account", NULL, EINVAL);
	if (rq.open_unscoped && rq.net != OWS_NET_OPEN)
		refuse("--open-without-scopes goes with --net open only", NULL, EINVAL);
	if ((rq.net == OWS_NET_ALLOWLIST) != (rq.proxy_port != 0))
		refuse("--proxy-port goes with --net allowlist, and only there", NULL, EINVAL);
	for (int i = 0; i < rq.nfolders; i++)
		check_folder(&rq.folders[i]);
	for (int i = 0; i < rq.nguarded; i++)
		check_guarded(&rq.guarded[i]);
	for (int i = 0; i < rq.nmasks; i++)
		check_mask(rq.masks[i]);
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

/*
 * The session's cgroups (lib/linux/wall/cgroup.c), at the hierarchies' roots:
 * cgroup v2 where its root offers a controller, else v1; a v2 group even
 * with no limit, so that cgroup.kill ends the whole tree.  A limit asked for
 * and not to be had refuses the session; the kill group alone is a bonus.
 */
static ows__cgroup cgroup;

static void cgroups_create(void)
{
	ows__cgroup_limits lim = {.memory_bytes = (uint64_t)rq.memory_mb << 20,
				  .processes = rq.processes, .cpu_percent = rq.cpu_percent};
	ows_error e;
	ows_error_clear(&e);
	if (ows__cgroup_create(&cgroup, OWS_CG_MACHINE, rq.id, &lim, &e) < 0 &&
	    ows__cgroup_wanted(&lim))
		refuse(e.what, e.where[0] ? e.where : NULL, e.sys_errno ? e.sys_errno : EOPNOTSUPP);
}

/* Removes sessions whose launcher and init are both gone (their lock is free). */
static void sweep_stale(int sb)
{
	DIR *d = ows__opendir_at(sb);
	if (!d)
		return;
	struct dirent *e;
	time_t now = time(NULL);
	while ((e = readdir(d))) {
		char id[ID_LEN + 1], lock[ID_LEN + 8];
		size_t n = strlen(e->d_name);
		struct stat st;
		if (ows__is_create_temp(e->d_name)) {
			/* A lock a launcher was making where the file system has no O_TMPFILE
			 * (take_lock), left by a crash.  A live one exists for microseconds and
			 * is unlocked between its creation and its flock: only old ones go. */
			if (fstatat(sb, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_mtime < now - 60)
				unlinkat(sb, e->d_name, 0);
			continue;
		}
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
		ows__cgroup_remove_stale(id);
		unlinkat(sb, lock, 0);
		if (lfd >= 0)
			close(lfd);
	}
	closedir(d);
}

/* The lock, created locked and then linked, so no sweeper ever sees it free. */
static int take_lock(int sb)
{
	char lock[ID_LEN + 8];
	snprintf(lock, sizeof(lock), "%s.lock", rq.id);
	int lfd = ows__create_locked_at(sb, lock, "");
	if (lfd < 0)
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
static struct stat folder_ids[MAX_FOLDERS];
static ows__guard_entry guard[MAX_GUARDED];
static char private_dir[PATH_MAX + 64], priv_home[PATH_MAX + 80], canary[PATH_MAX + 64];
static char passwd_text[PATH_MAX + 400];
static char *const empty_env[] = {NULL};

/*
 * The sandbox's /etc/passwd: the account's home is its private home, so tools
 * that ask the system for ~ (ssh does) find what the person shared; no other
 * account of the machine is listed.  Init writes it (root.c).
 */
static void plan_passwd(void)
{
	const struct passwd *pw = getpwuid(plan.uid);
	snprintf(priv_home, sizeof(priv_home), "%s/home", private_dir);
	plan.priv_home = priv_home;
	snprintf(passwd_text, sizeof(passwd_text),
		 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		 "%s:x:%u:%u::%s:/bin/sh\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		 pw ? pw->pw_name : "sandbox", (unsigned)plan.uid, (unsigned)plan.gid, priv_home);
	plan.passwd = passwd_text;
}

/*
 * The caps init sets and the proof reads back: the cgroup's (cgroups_create),
 * oom_score_adj, and the size of each memory file system of the view: /tmp,
 * /dev/shm, and a tmpfs of the account's over the private folder's tmp, so
 * that TMPDIR is sized memory, not the machine's disk.  No RLIMIT_NPROC: the
 * accounts are every session's, and it would count them all together.
 */
static char limit_paths[2][PATH_MAX], private_tmp[PATH_MAX + 80];

static void plan_caps(void)
{
	static const struct { int ctrl; const char *what; } caps[] = {
		{OWS_CG_PIDS, "processes capped: pids.max"}, {OWS_CG_MEMORY, "memory capped"}};
	const uint64_t want[] = {rq.processes, (uint64_t)rq.memory_mb << 20};
	for (size_t i = 0; i < OWS__ARRAY_LEN(caps); i++)
		if (want[i] && ows__cgroup_limit_file(&cgroup, caps[i].ctrl, limit_paths[i],
						      sizeof(limit_paths[i])) == 0)
			plan.limit_files[plan.nlimit_files++] =
				(struct ows__limit_file){caps[i].what, limit_paths[i], want[i]};
	plan.oom_score_adj = OWS__OOM_SCORE_ADJ;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	plan.tmpfs_bytes = rq.tmpfs_mb ? (uint64_t)rq.tmpfs_mb << 20
			 : (uint64_t)(pages > 0 ? pages : 1 << 20) * (uint64_t)page / 4;
	plan.tmpfs_inodes = plan.tmpfs_bytes / (uint64_t)page;
	if (plan.tmpfs_inodes < 4096)
		plan.tmpfs_inodes = 4096;
	snprintf(private_tmp, sizeof(private_tmp), "%s/tmp", private_dir);
}

/* The same view as the landlock provider's (view.c), with the folders checked here. */
static void plan_view(ows__strv *keep)
{
	ows_error e;
	ows_error_clear(&e);
	for (int i = 0; i < rq.nfolders; i++) {
		proof_folders[i].path = (char *)rq.folders[i].path;
		proof_folders[i].access = rq.folders[i].rw ? OWS_ACCESS_RW : OWS_ACCESS_RO;
		folder_ids[i] = rq.folders[i].st;
	}
	for (int i = 0; i < rq.nguarded; i++)
		guard[i] = (ows__guard_entry){(char *)rq.guarded[i].path, rq.guarded[i].is_file,
					      rq.guarded[i].pin};
	struct ows__view view = {
		.folders = proof_folders, .nfolders = (size_t)rq.nfolders, .folder_ids = folder_ids,
		.guard = guard, .nguard = (size_t)rq.nguarded, .private_disk = private_dir,
		.private_tmp = private_tmp,
		.masks = rq.masks, .nmasks = (size_t)rq.nmasks,
	};
	if (ows__net_plan(&plan, rq.net, rq.open_unscoped, &e) < 0 || ows__view_plan(&plan, keep, &view, &e) < 0)
		refuse(e.what, e.where[0] ? e.where : NULL, e.sys_errno ? e.sys_errno : EINVAL);
}

/* Init: in the cgroups first, before it starts anything; then as landlock's. */
static int init_start(void *unused)
{
	if (ows__cgroup_join(&cgroup) != 0)
		ows__init_die(&plan, "join cgroup", cgroup.name);
	ows__init_main(&plan);
}

/* The names in the folder open at `dirfd`, read in full before any is entered, so that
 * a deep tree costs one descriptor a level.  NULL-terminated; caller frees. */
static char **list_names(int dirfd)
{
	DIR *d = ows__opendir_at(dirfd);
	size_t n = 0, cap = 0;
	char **v = NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		v[++n] = NULL;
	}
	if (d)
		closedir(d);
	return v;
}

#define HAND_BACK_DEPTH 4000

/* One node's ACL at a time: hand_back runs single-threaded, after the session. */
static unsigned char xa_buf[XA_SIZE];
static acl xa_acl;

/* What a folder passes on to what is made in it: its default ACL's entries. */
typedef struct inherit {
	acl_ent *e;
	int n;
} inherit;

/* Reads one ACL of the inode `proc` names into xa_acl: 1, or 0 when it has none, or -1
 * when it cannot be read or understood (then it is left as it is). */
static int acl_read(const char *proc, const char *name)
{
	ssize_t len = getxattr(proc, name, xa_buf, sizeof(xa_buf));
	if (len < 0)
		return errno == ENODATA ? 0 : -1;
	return ows__acl_parse(xa_buf, (size_t)len, &xa_acl) ? 1 : -1;
}

static void acl_write(const char *proc, const char *name)
{
	size_t len = ows__acl_encode(&xa_acl, xa_buf);
	(void)!setxattr(proc, name, xa_buf, len, 0);
}

/* What the folder `proc` passes on: its default ACL, copied (none for a file). */
static void inherit_of(const char *proc, const struct stat *st, inherit *out)
{
	out->e = NULL;
	out->n = 0;
	if (!S_ISDIR(st->st_mode) || acl_read(proc, XA_DEFAULT) != 1 || xa_acl.n == 0)
		return;
	/* Out of memory, the folder passes nothing on: its children keep less, never more. */
	if ((out->e = malloc((size_t)xa_acl.n * sizeof(acl_ent)))) {
		memcpy(out->e, xa_acl.e, (size_t)xa_acl.n * sizeof(acl_ent));
		out->n = xa_acl.n;
	}
}

/*
 * A node the account made, now the caller's: of its ACLs and mode it keeps
 * what ows__acl_settle_handback() allows, given `in`, what its folder passes
 * on; a folder's own default ACL is settled the same way, and stays open to
 * its owner (u+rx), or the revoke could not walk below it.  What the node
 * passes on in turn is left in `out` (caller frees out->e).
 */
static void settle_agents(int fd, const struct stat *st, uid_t account, const inherit *in, inherit *out)
{
	char proc[40];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	out->e = NULL;
	out->n = 0;
	if (S_ISLNK(st->st_mode))
		return; /* no ACL, and /proc/self/fd/N would lead through it */
	int r = acl_read(proc, XA_ACCESS);
	if (r == 0)
		ows__acl_from_mode(&xa_acl, st->st_mode);
	if (r < 0 && S_ISDIR(st->st_mode) && (st->st_mode & 0500) != 0500)
		(void)!chmod(proc, (st->st_mode & 07777) | 0500);
	if (r >= 0) {
		bool changed = ows__acl_settle_handback(&xa_acl, in->e, in->n, caller_umask, account, caller);
		int ui = ows__acl_find(&xa_acl, TAG_USER_OBJ, NO_ID);
		if (S_ISDIR(st->st_mode) && ui >= 0 && (xa_acl.e[ui].perm & 5) != 5) {
			xa_acl.e[ui].perm |= 5;
			changed = true;
		}
		if (changed)
			acl_write(proc, XA_ACCESS); /* an ACL that is a plain mode is a chmod */
	}
	if (S_ISDIR(st->st_mode) && acl_read(proc, XA_DEFAULT) == 1 &&
	    ows__acl_settle_handback(&xa_acl, in->e, in->n, caller_umask, account, caller))
		acl_write(proc, XA_DEFAULT);
	inherit_of(proc, st, out);
}

/*
 * What the account made in a read-write folder becomes the caller's once the
 * session has ended: the person owns their project again (they may change
 * and remove it, and their own revoke, which walks it next, takes every ACL
 * entry of ours off it), and the account keeps nothing there of its own.
 * Run after init and every process of the session are gone.  Never follows a
 * link or leaves the folder's file system.  A file with several links is
 * handed back too: its other names are in this folder as well, since the
 * sandbox's folders are mounts of their own and a link never crosses one.
 * What the account set on its nodes for others goes with it (settle_agents):
 * `in` is what the folder passes on to them.  Folders deeper than
 * HAND_BACK_DEPTH stay the account's.
 */
static void hand_back(int dirfd, dev_t dev, uid_t account, const inherit *in, int depth)
{
	char **names = list_names(dirfd);
	for (size_t i = 0; names && names[i]; i++) {
		int fd = openat(dirfd, names[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0 || st.st_dev != dev) {
			close(fd);
			continue;
		}
		char proc[40];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		inherit sub_in;
		/* What cannot be handed back stays the account's, as before. */
		if (st.st_uid == account && fchownat(fd, "", caller, caller_gid, AT_EMPTY_PATH) == 0)
			settle_agents(fd, &st, account, in, &sub_in);
		else
			inherit_of(proc, &st, &sub_in);
		if (S_ISDIR(st.st_mode) && depth < HAND_BACK_DEPTH) {
			int sub = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat again;
			if (sub >= 0 && fstat(sub, &again) == 0 && again.st_ino == st.st_ino &&
			    again.st_dev == dev)
				hand_back(sub, dev, account, &sub_in, depth + 1);
			if (sub >= 0)
				close(sub);
		}
		free(sub_in.e);
		close(fd);
	}
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* What the process outside keeps: enough to remove an account-owned tree and hand
 * the account's files in the caller's folders back (hand_back). */
static void trim_capabilities(void)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	data[0].effective = data[0].permitted = (1u << CAP_CHOWN) | (1u << CAP_DAC_OVERRIDE) |
						(1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER);
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
	cgroups_create();

	plan.uid = uid;
	plan.gid = gid;
	plan.groups[0] = gid;
	plan.ngroups = 1;
	ows__strv keep = {0};
	plan_caps();
	plan_view(&keep);
	plan_passwd();
	plan.proxy_port = (uint16_t)rq.proxy_port;
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

	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t pid = clone(init_start, stack + sizeof(stack), plan.clone_flags | SIGCHLD, NULL);
	if (pid < 0)
		refuse("cannot start the sandbox's namespaces", NULL, errno);
	/* Outside: hold nothing of the sandbox's, wait for init, then tidy up. */
	close(3);
	close(priv);
	ows__cgroup_joined(&cgroup);
	static const int quiet[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < OWS__ARRAY_LEN(quiet); i++)
		signal(quiet[i], SIG_IGN);
	trim_capabilities();
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* One descriptor a level of the deepest tree hand_back may walk. */
	struct rlimit nofile = {HAND_BACK_DEPTH + 64, HAND_BACK_DEPTH + 64};
	(void)setrlimit(RLIMIT_NOFILE, &nofile);
	for (int i = 0; i < rq.nfolders; i++) {
		if (rq.folders[i].rw && caller != 0) {
			char proc[40];
			inherit top;
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", rq.folders[i].fd);
			inherit_of(proc, &rq.folders[i].st, &top);
			hand_back(rq.folders[i].fd, rq.folders[i].st.st_dev, uid, &top, 0);
			free(top.e);
		}
		close(rq.folders[i].fd);
	}
	int rc = ows__rmtree_at(sb, rq.id) == 0 ? 0 : 1;
	ows__cgroup_remove(&cgroup, NULL);
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
	caller_umask = umask(022);
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
