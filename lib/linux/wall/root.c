/*
 * The sandbox's root, built by init between clone() and exec: one view for
 * both Linux providers.
 *
 * `landlock` clones init from the host (into new user, PID, mount, IPC, UTS
 * and, unless the network is `open`, network namespaces); `account` clones it
 * from the setuid launcher (the same, without a user namespace, as root).
 * Either way init runs ows__init_main() (init_start.c) on a plan the host or
 * the launcher made with ows__view_plan() (view.c), and this file, in two steps
 * (ows__root_ids_and_limits, ows__root_build), builds a tmpfs root holding only the
 * system (read only), the session's folders at their own paths, the folders
 * the person shares (read only) and a /tmp of its own with the private
 * folder; pivots into it; writes the shared copies; in allowlist, listens for
 * the proxy inside its own network and hands that socket out; then drops its
 * identity, restricts itself with Landlock and seccomp, proves the wall from
 * inside and serves the host.
 *
 * Everything in this file runs in a copy of a host that may have had
 * threads: nothing allocates and nothing takes a lock (init.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "init.h"

#define STAGE "/tmp" /* where init assembles the new root before pivoting into it */
#define EMPTY STAGE "/.owsandbox-empty" /* the masks' empty file, unlinked before the pivot */

int ows__write_small(const char *path, const char *data)
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

/* "INSIDE OUTSIDE 1" into /proc/self/<file>: one id of ours, nothing else. */
int ows__write_id_map(const char *file, long inside, long outside)
{
	char path[32] = "/proc/self/", line[64] = "";
	ows__buf_add(path, sizeof(path), file);
	ows__buf_add_num(line, sizeof(line), inside);
	ows__buf_add(line, sizeof(line), " ");
	ows__buf_add_num(line, sizeof(line), outside);
	ows__buf_add(line, sizeof(line), " 1\n");
	return ows__write_small(path, line);
}

static void write_map(const struct ows__plan *p, const char *file, long inside, long outside)
{
	if (ows__write_id_map(file, inside, outside) != 0) {
		char path[32] = "/proc/self/"; /* the stage text userns.c reads the cause from */
		ows__buf_add(path, sizeof(path), file);
		ows__init_die(p, "write", path);
	}
}

static void map_ids(const struct ows__plan *p)
{
	write_map(p, "uid_map", p->uid, p->outer_uid);
	if (ows__write_small("/proc/self/setgroups", "deny") != 0)
		ows__init_die(p, "write setgroups", NULL);
	write_map(p, "gid_map", p->gid, p->outer_gid);
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
static void clone_sources(struct ows__plan *p)
{
	for (int i = 0; i < p->nmounts; i++) {
		struct ows__mnt *m = &p->mounts[i];
		m->fd = -1;
		if (m->kind == OWS_M_BIND) {
			struct open_how how = {
				.flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
			};
			int pfd = (int)syscall(SYS_openat2, AT_FDCWD, m->src, &how, sizeof(how));
			if (pfd < 0)
				ows__init_die(p, "open", m->src);
			/* The launcher checked this folder as the caller: it must be the same one. */
			struct stat st;
			if (m->want_id && (fstat(pfd, &st) != 0 || st.st_dev != m->want_dev ||
					   st.st_ino != m->want_ino)) {
				errno = ESTALE;
				ows__init_die(p, "a folder was replaced while the sandbox started", m->src);
			}
			m->fd = open_tree(pfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							   AT_EMPTY_PATH | AT_RECURSIVE);
			close(pfd);
			if (m->fd < 0)
				ows__init_die(p, "open_tree", m->src);
			struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID};
			if (!m->dev)
				attr.attr_set |= MOUNT_ATTR_NODEV;
			if (!m->rw)
				attr.attr_set |= MOUNT_ATTR_RDONLY;
			if (mount_setattr(m->fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
					  sizeof(attr)) != 0)
				ows__init_die(p, "mount_setattr", m->src);
		} else if (m->kind == OWS_M_PROC) {
			/* Only while the host's /proc is still in view may a new one be mounted. */
			m->fd = new_fs("proc", NULL,
				       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
			if (m->fd < 0)
				ows__init_die(p, "mount proc", m->dst);
		}
	}
}

static void staged(char *buf, size_t size, const char *path)
{
	buf[0] = '\0';
	ows__buf_add(buf, size, STAGE);
	ows__buf_add(buf, size, path);
}

/* mkdir -p of the folders above `path` (staged), without following links. */
static void make_parents(const struct ows__plan *p, const char *path)
{
	char buf[4096];
	staged(buf, sizeof(buf), path);
	size_t base = strlen(STAGE);
	for (char *s = buf + base + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		struct stat st;
		if (lstat(buf, &st) != 0) {
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				ows__init_die(p, "mkdir", buf + base);
		} else if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			ows__init_die(p, "mkdir", buf + base);
		}
		*s = '/';
	}
}

/*
 * Covers what is at m->dst (inside a bind attached before it) with an
 * empty read-only folder or file, mode 0: to the command it reads as what
 * it may not open (EACCES), as for any entry closed to it.  Something gone
 * since the plan, or a link now, holds nothing to cover.
 */
static void cover(const struct ows__plan *p, const struct ows__mnt *m)
{
	char dst[4096];
	staged(dst, sizeof(dst), m->dst);
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int at = (int)syscall(SYS_openat2, AT_FDCWD, dst, &how, sizeof(how));
	if (at < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return;
	struct stat st;
	if (at < 0 || fstat(at, &st) != 0)
		ows__init_die(p, "open", m->dst);
	if (S_ISLNK(st.st_mode)) {
		close(at);
		return;
	}
	const unsigned attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			       MOUNT_ATTR_NOEXEC;
	int fd;
	if (S_ISDIR(st.st_mode)) {
		const char *opts[] = {"mode", "0000", "size", "4k", NULL, NULL};
		fd = new_fs("tmpfs", opts, attrs);
	} else {
		struct mount_attr ro = {.attr_set = attrs};
		fd = open_tree(AT_FDCWD, EMPTY, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (fd >= 0 && mount_setattr(fd, "", AT_EMPTY_PATH, &ro, sizeof(ro)) != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0 || move_mount(fd, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
		ows__init_die(p, "mask", m->dst);
	close(fd);
	close(at);
}

/*
 * A tmpfs of the plan: its size and inode count bound what the sandbox can
 * hold in memory there (a tmpfs's default is half the machine's memory,
 * each); owned by the account where it is the account's own folder.
 */
static int new_tmpfs(const struct ows__plan *p, const struct ows__mnt *m)
{
	char size[24] = "", inodes[24] = "", uid[24] = "", gid[24] = "";
	const char *opts[12] = {"mode", m->mode};
	int n = 2;
	if (m->size) {
		ows__buf_add_num(size, sizeof(size), (long)m->size);
		ows__buf_add_num(inodes, sizeof(inodes), (long)m->inodes);
		opts[n++] = "size";
		opts[n++] = size;
		opts[n++] = "nr_inodes";
		opts[n++] = inodes;
	}
	if (m->owned) {
		ows__buf_add_num(uid, sizeof(uid), (long)p->uid);
		ows__buf_add_num(gid, sizeof(gid), (long)p->gid);
		opts[n++] = "uid";
		opts[n++] = uid;
		opts[n++] = "gid";
		opts[n++] = gid;
	}
	opts[n] = opts[n + 1] = NULL;
	return new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

static void attach(struct ows__plan *p, struct ows__mnt *m)
{
	if (m->kind == OWS_M_MASK) {
		cover(p, m);
		return;
	}
	char dst[4096];
	staged(dst, sizeof(dst), m->dst);
	make_parents(p, m->dst);
	struct stat st;
	bool exists = lstat(dst, &st) == 0;

	if (m->kind == OWS_M_SYMLINK) {
		if (!exists && symlink(m->src, dst) != 0)
			ows__init_die(p, "symlink", m->dst);
		return;
	}
	if (!exists) {
		if (m->is_file) {
			int fd = open(dst, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0)
				ows__init_die(p, "create", m->dst);
			close(fd);
		} else if (mkdir(dst, 0755) != 0) {
			ows__init_die(p, "mkdir", m->dst);
		}
	}
	int fd = m->fd;
	if (m->kind == OWS_M_TMPFS) {
		fd = new_tmpfs(p, m);
	} else if (m->kind == OWS_M_DEVPTS) {
		const char *opts[] = {"mode", "0620", "ptmxmode", "0666", NULL, NULL};
		fd = new_fs("devpts", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	}
	if (fd < 0)
		ows__init_die(p, "mount", m->dst);
	if (move_mount(fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) != 0)
		ows__init_die(p, "move_mount", m->dst);
	close(fd);
	m->fd = -1;
}

static void build_root(struct ows__plan *p)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		ows__init_die(p, "make mounts private", "/");
	clone_sources(p);
	/* Mount points and the folders above them only, then read-only. */
	const char *root_opts[] = {"mode", "0755", "size", "1m", "nr_inodes", "16384", NULL, NULL};
	int root = new_fs("tmpfs", root_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (root < 0 || move_mount(root, "", AT_FDCWD, STAGE, MOVE_MOUNT_F_EMPTY_PATH) != 0)
		ows__init_die(p, "mount the new root", STAGE);
	close(root);
	int empty = open(EMPTY, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (empty < 0)
		ows__init_die(p, "create", EMPTY);
	close(empty);
	for (int i = 0; i < p->nmounts; i++)
		attach(p, &p->mounts[i]);
	/* The masks hold the empty file's inode; its name goes. */
	if (unlink(EMPTY) != 0)
		ows__init_die(p, "unlink", EMPTY);
	for (int i = 0; i < p->nskeleton; i++) {
		char buf[4096];
		staged(buf, sizeof(buf), p->skeleton[i]);
		if (chmod(buf, 0111) != 0)
			ows__init_die(p, "chmod", p->skeleton[i]);
	}
	/* The new root becomes /, the old one is detached: nothing else stays reachable. */
	if (chdir(STAGE) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
	    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
		ows__init_die(p, "pivot_root", STAGE);
	/* Read-only root: nothing new appears beside the mounts. */
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (mount_setattr(AT_FDCWD, "/", 0, &ro, sizeof(ro)) != 0)
		ows__init_die(p, "remount / read-only", "/");
}

/*
 * The private folder on the sandbox's own /tmp (a tmpfs of this mount
 * namespace): nothing touches the disk, and it is gone with the namespace,
 * also when the host is killed.
 */
static void make_private(const struct ows__plan *p)
{
	static const char *const leaves[] = {"", "/home", "/tmp", "/cache"};
	char buf[4096];
	/* /tmp/owsandbox-<uid>/<id>: the parent first, then the folder and its three. */
	buf[0] = '\0';
	ows__buf_add(buf, sizeof(buf), p->private_dir);
	char *slash = strrchr(buf, '/');
	*slash = '\0';
	if (mkdir(buf, 0700) != 0 || (!p->userns && chown(buf, p->uid, p->gid) != 0))
		ows__init_die(p, "mkdir", buf);
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		buf[0] = '\0';
		ows__buf_add(buf, sizeof(buf), p->private_dir);
		ows__buf_add(buf, sizeof(buf), leaves[i]);
		if (mkdir(buf, 0700) != 0 || (!p->userns && chown(buf, p->uid, p->gid) != 0))
			ows__init_die(p, "mkdir", buf);
	}
}

/* Writes `len` bytes to a new file at `path`, owner-only, for the account inside. */
static void write_new(const struct ows__plan *p, const char *path, const char *data, size_t len,
		      mode_t mode)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		ows__init_die(p, "create", path);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			ows__init_die(p, "write", path);
		off += (size_t)w;
	}
	if (!p->userns && fchown(fd, p->uid, p->gid) != 0)
		ows__init_die(p, "chown", path);
	close(fd);
}

/*
 * useradd, passwd and sed -i replace /etc/passwd by a rename: a mount that
 * looked the old file up finds it unlinked and fails with ENOENT, though a
 * new /etc/passwd is there the moment after.  That is a race with the
 * machine's tools, not a machine that cannot hold the sandbox: look again,
 * a bounded number of times (each rename is a few microseconds; a file
 * truly absent fails as before).
 */
static int mount_over_passwd(int fd)
{
	for (int tries = 0;; tries++) {
		if (move_mount(fd, "", AT_FDCWD, "/etc/passwd", MOVE_MOUNT_F_EMPTY_PATH) == 0)
			return 0;
		if (errno != ENOENT || tries == 100)
			return -1;
		sched_yield();
	}
}

/*
 * The copies the person shares, into the private home, and an /etc/passwd
 * whose entry for the account points at the private home, so that tools
 * that ask the system for ~ (ssh does) find the copies, and nothing of the
 * machine's other accounts is listed.
 */
static void write_shared(const struct ows__plan *p)
{
	char path[4096];
	for (size_t i = 0; i < p->nfiles; i++) {
		const ows__file *f = &p->files[i];
		path[0] = '\0';
		ows__buf_add(path, sizeof(path), p->priv_home);
		ows__buf_add(path, sizeof(path), "/");
		ows__buf_add(path, sizeof(path), f->path);
		/* The folders above an entry (.config for .config/gh) first. */
		for (char *s = path + strlen(p->priv_home) + 1; (s = strchr(s, '/')); s++) {
			*s = '\0';
			if (mkdir(path, 0700) == 0 && !p->userns && chown(path, p->uid, p->gid) != 0)
				ows__init_die(p, "chown", path);
			*s = '/';
		}
		if (!f->dir) {
			write_new(p, path, f->data, f->len, 0600);
			continue;
		}
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			ows__init_die(p, "mkdir", path);
		if (!p->userns && chown(path, p->uid, p->gid) != 0)
			ows__init_die(p, "chown", path);
	}
	if (!p->passwd || p->in_host_ns)
		return; /* in the host's namespaces nothing can be mounted over /etc/passwd */
	path[0] = '\0';
	ows__buf_add(path, sizeof(path), p->priv_home);
	ows__buf_add(path, sizeof(path), "/../.passwd");
	write_new(p, path, p->passwd, strlen(p->passwd), 0644);
	int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (fd < 0 || mount_setattr(fd, "", AT_EMPTY_PATH, &ro, sizeof(ro)) != 0 ||
	    mount_over_passwd(fd) != 0)
		ows__init_die(p, "mount the sandbox's passwd", "/etc/passwd");
	close(fd);
}

/*
 * allowlist: the sandbox has a network namespace of its own with only
 * loopback in it, and the one way out is a socket listening there on the
 * proxy's port, handed to the host, whose proxy accepts from it.  A socket
 * stays in the namespace it was made in: nothing else reaches the host.
 */
static void open_proxy_listener(const struct ows__plan *p)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {0};
	memcpy(ifr.ifr_name, "lo", 3);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		ows__init_die(p, "find loopback", NULL);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		ows__init_die(p, "bring loopback up", NULL);
	close(s);

	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(p->proxy_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 128) != 0)
		ows__init_die(p, "listen for the proxy", NULL);
	struct ows__msg m = {.type = OWS_MSG_LISTENER};
	if (ows__send_fds(p->ctl, &m, &l, 1) != 0)
		ows__init_die(p, "hand the proxy listener over", NULL);
	close(l);
}

/*
 * In the host's namespaces init is an ordinary process of the person's:
 * a session of its own (a command's kill of the host's process group
 * leaves it), and a child subreaper, so that whatever a command leaves
 * running becomes init's (its call's reaper's first, init.c) when its
 * reaper is gone, for init to end at close.  No mount, no identity to map: Landlock draws the
 * view, and the private folder is the host's, on disk.
 */
static void enter_host_session(struct ows__plan *p)
{
	if (setsid() < 0)
		ows__init_die(p, "setsid", NULL);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		ows__init_die(p, "become a child subreaper", NULL);
	/*
	 * Where the person has a delegated cgroup v2 (systemd's user@UID.service),
	 * init would move itself into a new group below it here, while the host's
	 * /sys is writable to it, and close would end the session with
	 * cgroup.kill, which nothing inside can step out of (lib/linux/wall/cgroup.c,
	 * the cgroup work of issue 10).  Until then the subreaper is what ends it.
	 */
}

/*
 * What init sets on itself for every command to inherit.  RLIMIT_NPROC,
 * soft and hard (raising it back takes CAP_SYS_RESOURCE in the machine's
 * user namespace): in a user namespace of the session's own, the kernel
 * counts it per user and namespace, so it caps the session's tasks alone.
 * A lower hard limit inherited from the person is kept, not raised.
 * oom_score_adj 1000: the OOM killer takes the sandbox's processes before
 * anything of the machine's; Landlock grants /proc read-only, so nothing
 * inside writes it lower again.
 */
static void apply_limits(const struct ows__plan *p)
{
	if (p->nproc) {
		struct rlimit r = {.rlim_cur = p->nproc, .rlim_max = p->nproc}, had;
		if (getrlimit(RLIMIT_NPROC, &had) == 0 && had.rlim_max < r.rlim_max)
			r.rlim_cur = r.rlim_max = had.rlim_max;
		if (setrlimit(RLIMIT_NPROC, &r) != 0)
			ows__init_die(p, "set the process limit", NULL);
	}
	if (p->oom_score_adj) {
		char v[16] = "";
		ows__buf_add_num(v, sizeof(v), p->oom_score_adj);
		if (ows__write_small("/proc/self/oom_score_adj", v) != 0)
			ows__init_die(p, "write", "/proc/self/oom_score_adj");
	}
}

/* The ids (a user namespace's maps) and the session's limits, in this order. */
void ows__root_ids_and_limits(struct ows__plan *p)
{
	if (p->userns)
		map_ids(p);
	apply_limits(p); /* while /proc/self is still init's own to write (dumpable) */
}

/*
 * The root (or, in the host's namespaces, the host's session), the private folder, the
 * shared copies, and in allowlist the proxy's listener inside.
 */
void ows__root_build(struct ows__plan *p)
{
	if (p->in_host_ns) {
		enter_host_session(p);
	} else {
		build_root(p);
		if (p->private_dir)
			make_private(p);
	}
	write_shared(p);
	if (p->proxy_port)
		open_proxy_listener(p);
}
