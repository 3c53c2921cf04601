/*
 * The `landlock` provider: a wall that needs no setup.
 *
 * The host clones an init process into new user (unless the host is root),
 * PID, mount, IPC and UTS namespaces, and a network namespace of its own
 * unless the network is `open`.  Init builds a root of its own on a tmpfs
 * holding only the system (read only), the session's folders at their own
 * paths, the toolchains the person shares (read only) and a /tmp of its own
 * with the private folder and the shared copies in it; pivots into it, drops
 * every capability, restricts itself with Landlock and seccomp, proves the
 * wall from inside, and then starts commands on request.
 * Every command is init's child, so every process the agent starts lives in
 * init's PID namespace and dies with it: when the session closes, or when the
 * host dies (the control socket closes), init kills everything and exits.
 *
 * Init's root-building steps here follow the rules of init.h: between
 * clone() and execve() nothing allocates and nothing takes a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "init.h"
#include "proxy.h"

extern char **environ;

#define STAGE "/tmp" /* where init assembles the new root before pivoting into it */

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

static void map_ids(const struct ows__plan *p)
{
	char line[64] = "";
	ows__buf_add_num(line, sizeof(line), p->uid);
	ows__buf_add(line, sizeof(line), " ");
	ows__buf_add_num(line, sizeof(line), p->outer_uid);
	ows__buf_add(line, sizeof(line), " 1\n");
	if (write_file("/proc/self/uid_map", line) != 0)
		ows__init_die(p, "write uid_map", NULL);
	if (write_file("/proc/self/setgroups", "deny") != 0)
		ows__init_die(p, "write setgroups", NULL);
	line[0] = '\0';
	ows__buf_add_num(line, sizeof(line), p->gid);
	ows__buf_add(line, sizeof(line), " ");
	ows__buf_add_num(line, sizeof(line), p->outer_gid);
	ows__buf_add(line, sizeof(line), " 1\n");
	if (write_file("/proc/self/gid_map", line) != 0)
		ows__init_die(p, "write gid_map", NULL);
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

static void attach(struct ows__plan *p, struct ows__mnt *m)
{
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
		const char *opts[] = {"mode", m->mode, NULL, NULL};
		fd = new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
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
	const char *root_opts[] = {"mode", "0755", NULL, NULL};
	int root = new_fs("tmpfs", root_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (root < 0 || move_mount(root, "", AT_FDCWD, STAGE, MOVE_MOUNT_F_EMPTY_PATH) != 0)
		ows__init_die(p, "mount the new root", STAGE);
	close(root);
	for (int i = 0; i < p->nmounts; i++)
		attach(p, &p->mounts[i]);
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
	if (!p->passwd)
		return;
	path[0] = '\0';
	ows__buf_add(path, sizeof(path), p->priv_home);
	ows__buf_add(path, sizeof(path), "/../.passwd");
	write_new(p, path, p->passwd, strlen(p->passwd), 0644);
	int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (fd < 0 || mount_setattr(fd, "", AT_EMPTY_PATH, &ro, sizeof(ro)) != 0 ||
	    move_mount(fd, "", AT_FDCWD, "/etc/passwd", MOVE_MOUNT_F_EMPTY_PATH) != 0)
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

static __attribute__((noreturn)) void init_main(struct ows__plan *p)
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
		ows__init_die(p, "set non-dumpable", NULL);
	build_root(p);
	if (p->private_dir)
		make_private(p);
	write_shared(p);
	if (p->proxy_port)
		open_proxy_listener(p);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; null >= 0 && i < 3; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
	ows__init_drop_identity(p);
	ows__init_restrict(p);
	ows__init_prove(p);
	ows__init_serve(p);
}

/* ------------------------------------------------------------ host: plan */

struct landlock_impl {
	ows__ctl ctl;
	ows__private pv;
	ows__strv strings;      /* plan strings the host must keep until clone */
	ows__share share;       /* what the person shares, until clone */
};

static const char *keep(struct landlock_impl *li, const char *s, ows_error *err)
{
	if (ows__strv_push(&li->strings, s, err) < 0)
		return NULL;
	return li->strings.v[li->strings.len - 1];
}

static int add_mount(struct ows__plan *p, struct ows__mnt m, ows_error *err)
{
	if (p->nmounts >= OWS_INIT_MAX_MOUNTS)
		return ows__fail(err, OWS_EINVAL, 0, m.dst, "use fewer session folders",
				 "too many mounts in the sandbox");
	p->mounts[p->nmounts++] = m;
	return 0;
}

static int add_rule(struct ows__plan *p, const char *path, uint64_t access, ows_error *err)
{
	if (p->nrules >= OWS_INIT_MAX_RULES)
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
	const struct ows__mnt *x = a, *y = b;
	return strcmp(x->dst, y->dst);
}

/* Folders to create only so that a mount can be reached: made 0111 (traverse only). */
static int plan_skeleton(struct ows__plan *p, struct landlock_impl *li, ows_error *err)
{
	for (int i = 0; i < p->nmounts; i++) {
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s", p->mounts[i].dst);
		for (char *s = strrchr(buf, '/'); s && s != buf; s = strrchr(buf, '/')) {
			*s = '\0';
			bool skip = false;
			for (int j = 0; j < p->nmounts && !skip; j++) {
				const struct ows__mnt *m = &p->mounts[j];
				if (strcmp(m->dst, buf) == 0 ||
				    (m->kind == OWS_M_BIND && path_under(buf, m->dst)))
					skip = true;
			}
			for (int j = 0; j < p->nskeleton && !skip; j++)
				skip = strcmp(p->skeleton[j], buf) == 0;
			if (skip)
				continue;
			if (p->nskeleton >= OWS_INIT_MAX_MOUNTS)
				return ows__fail(err, OWS_EINVAL, 0, buf, NULL, "too many folders");
			const char *k = keep(li, buf, err);
			if (!k)
				return OWS_ENOMEM;
			p->skeleton[p->nskeleton++] = k;
		}
	}
	return 0;
}

static int plan_system(struct ows__plan *p, struct landlock_impl *li, ows_error *err)
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
			rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = dirs[i], .dst = dirs[i]}, err);
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
			rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_SYMLINK, .src = t, .dst = maybe_links[i]}, err);
		} else if (S_ISDIR(st.st_mode)) {
			rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = maybe_links[i], .dst = maybe_links[i]}, err);
			if (rc == 0)
				rc = add_rule(p, maybe_links[i], OWS_LL_FS_READ, err);
		}
	}
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = "/sys", .dst = "/sys"}, err);
	if (rc == 0)
		rc = add_rule(p, "/sys", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_PROC, .dst = "/proc"}, err);
	if (rc == 0)
		rc = add_rule(p, "/proc", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = "/dev", .mode = "0755"}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev", OWS_LL_FS_READ_DIR, err);
	for (size_t i = 0; i < OWS__ARRAY_LEN(devices) && rc == 0; i++) {
		if (stat(devices[i], &st) != 0 || !S_ISCHR(st.st_mode))
			continue;
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = devices[i], .dst = devices[i],
					       .rw = true, .is_file = true, .dev = true}, err);
		if (rc == 0)
			rc = add_rule(p, devices[i], dev_rw, err);
	}
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_DEVPTS, .dst = "/dev/pts"}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev/pts", dev_rw | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = "/dev/shm", .mode = "1777"}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev/shm", all, err);
	for (size_t i = 0; i < OWS__ARRAY_LEN(dev_links) && rc == 0; i++)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_SYMLINK, .src = dev_links[i][1],
					       .dst = dev_links[i][0]}, err);
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = "/tmp", .mode = "1777"}, err);
	if (rc == 0)
		rc = add_rule(p, "/tmp", all, err);

	/* Name resolution in `open`: /etc/resolv.conf may point into /run. */
	if (rc == 0 && p->net == OWS_NET_OPEN && lstat("/etc/resolv.conf", &st) == 0 &&
	    S_ISLNK(st.st_mode)) {
		char *real = realpath("/etc/resolv.conf", NULL);
		if (real && !path_under(real, "/etc") && !path_under(real, "/usr") &&
		    stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
			const char *k = keep(li, real, err);
			rc = k ? add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = k, .dst = k,
							  .is_file = true}, err)
			       : OWS_ENOMEM;
			if (rc == 0)
				rc = add_rule(p, k, OWS_LL_FS_READ_FILE, err);
		}
		free(real);
	}
	return rc;
}

/*
 * What git runs by itself stays read-only in a read-write repository: hooks
 * and the config (core.hooksPath, core.fsmonitor) would otherwise let the
 * agent leave code that the person's own git runs later, outside the wall.
 */
static int plan_git_guard(struct ows__plan *p, struct landlock_impl *li, const char *folder,
			  ows_error *err)
{
	static const struct { const char *leaf; bool is_file; } guarded[] = {
		{"/.git/hooks", false},
		{"/.git/config", true},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(guarded); i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s%s", folder, guarded[i].leaf);
		if (lstat(path, &st) != 0 ||
		    (guarded[i].is_file ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)))
			continue;
		const char *k = keep(li, path, err);
		if (!k)
			return OWS_ENOMEM;
		int rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = k, .dst = k,
						       .is_file = guarded[i].is_file}, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int plan_folders(struct ows__plan *p, struct landlock_impl *li, const ows_policy *policy,
			const char *private_dir, ows_error *err)
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
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = f->path, .dst = f->path, .rw = rw}, err);
		if (rc == 0)
			rc = add_rule(p, f->path, rw ? all : OWS_LL_FS_READ, err);
		if (rc == 0 && rw)
			rc = plan_git_guard(p, li, f->path, err);
	}
	/* A private folder on disk is bound in; one on the sandbox's /tmp is made there. */
	if (rc == 0 && private_dir) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = private_dir,
						   .dst = private_dir, .rw = true}, err);
		if (rc == 0)
			rc = add_rule(p, private_dir, all, err);
	}
	return rc;
}

/* Who the command runs as: the host's own account, or under a root host, a chosen one. */
static int plan_identity(struct ows__plan *p, const ows_policy *policy, const ows_config *config,
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
static int plan_support(struct ows__plan *p, const ows_policy *policy, ows_net net, ows_error *err)
{
	p->abi = ows__landlock_abi();
	if (p->abi < 1)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "landlock",
				 "boot a kernel with Landlock enabled (lsm=landlock), or set up the "
				 "account provider",
				 "Landlock is not available in this kernel");
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

/* Toolchain folders read-only at their own paths; copies and passwd for init. */
static int plan_shared(struct ows__plan *p, struct landlock_impl *li, const char *user,
		       ows_error *err)
{
	const ows__share *sh = &li->share;
	for (size_t i = 0; i < sh->ro_dirs.len; i++) {
		int rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = sh->ro_dirs.v[i],
						       .dst = sh->ro_dirs.v[i]}, err);
		if (rc == 0)
			rc = add_rule(p, sh->ro_dirs.v[i], OWS_LL_FS_READ, err);
		if (rc < 0)
			return rc;
	}
	p->files = sh->files;
	p->nfiles = sh->nfiles;
	p->shared_env = sh->env.v;
	char line[1024];
	snprintf(line, sizeof(line),
		 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		 "%s:x:%u:%u::%s:/bin/sh\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		 user ? user : "sandbox", (unsigned)p->uid, (unsigned)p->gid, p->priv_home);
	if (p->uid == 65534) /* nobody is the account itself: one line for it */
		snprintf(line, sizeof(line),
			 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
			 "nobody:x:65534:65534:nobody:%s:/bin/sh\n", p->priv_home);
	return (p->passwd = keep(li, line, err)) ? 0 : OWS_ENOMEM;
}

/*
 * allowlist: ssh and git reach their hosts through the proxy with
 * `owsbx connect`, so owsbx must be visible inside (read-only, at its own
 * path); the copied ~/.ssh/config is told first.
 */
static int plan_tunnel(struct ows__plan *p, struct landlock_impl *li, const char **cmd,
		       ows_error *err)
{
	static const char *const visible[] = {"/usr/", "/opt/", "/bin/", "/sbin/", "/lib"};
	*cmd = NULL;
	char *exe = ows__find_owsbx();
	if (!exe)
		return 0; /* git over https still works; ssh then has no way out */
	bool seen = false;
	for (size_t i = 0; i < OWS__ARRAY_LEN(visible); i++)
		seen |= strncmp(exe, visible[i], strlen(visible[i])) == 0;
	const char *k = keep(li, exe, err);
	free(exe);
	if (!k)
		return OWS_ENOMEM;
	int rc = 0;
	if (!seen) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = k, .dst = k,
						   .is_file = true}, err);
		if (rc == 0)
			rc = add_rule(p, k, OWS_LL_FS_EXECUTE | OWS_LL_FS_READ_FILE, err);
	}
	char line[4200];
	snprintf(line, sizeof(line), "%s connect %%h %%p", k);
	if (rc == 0 && !(*cmd = keep(li, line, err)))
		rc = OWS_ENOMEM;
	if (rc == 0)
		rc = ows__share_ssh_proxy(&li->share, *cmd, err);
	return rc;
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

/*
 * Things outside the wall for the proof to reach for: a file planted in the
 * home, a unix socket beside the private folder, an abstract socket, and
 * the person's own sockets (ssh-agent, session bus, docker) where they exist.
 */
static int probes_open(struct probes *pb, struct ows__plan *p, struct landlock_impl *li,
		       const char *id, ows_error *err)
{
	memset(pb, 0, sizeof(*pb));
	pb->unix_fd = pb->abstract_fd = -1;

	if (p->home && (pb->canary = ows__canary_plant(p->home, id, err))) {
		p->canary = pb->canary;
		p->canary_token = id;
	}
	/* A place the sandbox has no view of; /dev/shm is memory, /tmp may be a slow disk. */
	struct stat shm;
	const char *dir = li->pv.root ? li->pv.root
		: stat("/dev/shm", &shm) == 0 && (shm.st_mode & 01777) == 01777 ? "/dev/shm" : "/tmp";
	pb->unix_path = ows__asprintf(err, "%s/.owsandbox-probe-%s.sock", dir, id);
	if (!pb->unix_path)
		return OWS_ENOMEM;
	size_t n = strlen(pb->unix_path);
	if (n < sizeof(((struct sockaddr_un *)0)->sun_path) &&
	    (pb->unix_fd = ows__unix_listen(pb->unix_path, n + 1)) >= 0)
		p->unix_probes[p->nunix++] = pb->unix_path;

	const char *agent = getenv("SSH_AUTH_SOCK");
	char bus[64];
	snprintf(bus, sizeof(bus), "/run/user/%u/bus", (unsigned)p->outer_uid);
	const char *known[] = {agent, bus, "/run/docker.sock", "/var/run/docker.sock"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(known) && p->nunix < OWS_INIT_MAX_PROBES; i++) {
		struct stat st;
		if (known[i] && known[i][0] == '/' && stat(known[i], &st) == 0 && S_ISSOCK(st.st_mode)) {
			const char *k = keep(li, known[i], err);
			if (!k)
				return OWS_ENOMEM;
			p->unix_probes[p->nunix++] = k;
		}
	}
	pb->abstract_fd = ows__abstract_probe(id, p->abstract_name, sizeof(p->abstract_name),
					      &p->abstract_len);
	return 0;
}

/* ---------------------------------------------------------- host: session */

static void impl_free(struct landlock_impl *li)
{
	ows__share_free(&li->share);
	ows__ctl_close(NULL, &li->ctl);
	ows__private_remove(&li->pv, NULL);
	ows__strv_free(&li->strings);
	free(li);
}

static int clone_init(struct ows__plan *p, struct landlock_impl *li, ows_error *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return ows__fail_sys(err, "socketpair", NULL, "cannot create the control socket");
	li->ctl.fd = sv[0];
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
	li->ctl.pid = (pid_t)pid;
	return 0;
}

static int landlock_open(ows_session *s, const ows_policy *policy, const ows_config *config,
			 ows_error *err)
{
	struct probes pb = {.unix_fd = -1, .abstract_fd = -1};
	const char *home = NULL, *user = NULL;
	int rc;

	struct ows__plan *p = ows__calloc(1, sizeof(*p), err);
	struct landlock_impl *li = ows__calloc(1, sizeof(*li), err);
	if (!p || !li) {
		free(p);
		free(li);
		return OWS_ENOMEM;
	}
	li->ctl.fd = -1;
	li->ctl.listener = -1;
	li->pv.lock_fd = -1;

	if ((rc = plan_support(p, policy, s->net, err)) < 0 ||
	    (rc = plan_identity(p, policy, config, li, &home, &user, err)) < 0)
		goto fail;
	p->home = home;
	/* By default the private folder lives on the sandbox's own /tmp; a
	 * configured private_root puts it on disk, for caches larger than memory. */
	const char *priv;
	if (config->private_root) {
		rc = ows__private_create(&li->pv, config->private_root, s->id, p->uid, p->gid, err);
		if (rc < 0)
			goto fail;
		priv = li->pv.dir;
	} else {
		char path[128];
		snprintf(path, sizeof(path), "/tmp/owsandbox-%u/%s", (unsigned)p->uid, s->id);
		if (!(priv = p->private_dir = keep(li, path, err))) {
			rc = OWS_ENOMEM;
			goto fail;
		}
	}
	char path[256];
	snprintf(path, sizeof(path), "%s/home", priv);
	if (!(p->priv_home = keep(li, path, err))) {
		rc = OWS_ENOMEM;
		goto fail;
	}
	const char *tunnel = NULL;
	if ((rc = ows__share_collect(config, policy, home, p->priv_home, &li->share, err)) < 0 ||
	    (s->net == OWS_NET_ALLOWLIST && (rc = plan_tunnel(p, li, &tunnel, err)) < 0) ||
	    (rc = plan_system(p, li, err)) < 0 ||
	    (rc = plan_folders(p, li, policy, config->private_root ? priv : NULL, err)) < 0 ||
	    (rc = plan_shared(p, li, user, err)) < 0)
		goto fail;
	qsort(p->mounts, (size_t)p->nmounts, sizeof(p->mounts[0]), cmp_mount);
	if ((rc = plan_skeleton(p, li, err)) < 0)
		goto fail;

	char *priv_tmp = ows__asprintf(err, "%s/tmp", priv);
	char *priv_cache = ows__asprintf(err, "%s/cache", priv);
	ows__env_spec spec = {.home = p->priv_home, .tmp = priv_tmp, .cache = priv_cache,
			      .user = user, .provider = "landlock",
			      .host_env = (const char *const *)environ};
	rc = priv_tmp && priv_cache ? ows__env_build(policy, &spec, &s->env, err) : OWS_ENOMEM;
	free(priv_tmp);
	free(priv_cache);
	if (rc == 0)
		rc = ows__env_add_share(&s->env, &li->share, err);
	if (rc < 0 || !(s->default_cwd = ows__strdup(p->priv_home, err))) {
		rc = rc < 0 ? rc : OWS_ENOMEM;
		goto fail;
	}
	if (li->share.agent_text) {
		s->agent_text = li->share.agent_text;
		li->share.agent_text = NULL;
	}
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
	if (s->net == OWS_NET_ALLOWLIST) {
		/* The sandbox reaches it only through the listener its init makes on the
		 * same port in its own network, handed over after the proof. */
		int port;
		if ((rc = ows__session_start_proxy(s, policy, config, &li->share.hosts, tunnel,
						   &port, err)) < 0)
			goto fail;
		p->proxy_port = (uint16_t)port;
	}
	p->folders = policy->folders;
	p->nfolders = policy->nfolders;
	p->envp = s->env.v;
	p->clone_flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
	if (p->userns)
		p->clone_flags |= CLONE_NEWUSER;
	/* Only `open` shares the host's network; allowlist's one way out is handed over. */
	if (s->net != OWS_NET_OPEN)
		p->clone_flags |= CLONE_NEWNET;

	if ((rc = probes_open(&pb, p, li, s->id, err)) < 0)
		goto fail;
	if ((rc = clone_init(p, li, err)) < 0)
		goto fail;
	rc = ows__ctl_receive_proof(s, &li->ctl, "landlock", err);
	probes_close(&pb);
	if (rc == 0 && s->proxy) {
		/* The proof reached the proxy through this socket; now the proxy serves it. */
		rc = li->ctl.listener >= 0
			? ows__proxy_adopt_listener(s->proxy, li->ctl.listener, err)
			: ows__fail(err, OWS_ESYS, EPROTO, "sandbox init", NULL,
				    "the sandbox did not hand over its proxy listener");
		if (rc == 0)
			li->ctl.listener = -1;
	}
	if (rc < 0)
		goto fail;
	s->private_dir = ows__strdup(priv, err);
	ows__strv_free(&li->strings);
	ows__share_free(&li->share);
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

static int landlock_close(ows_session *s, ows_error *err)
{
	struct landlock_impl *li = s->impl;
	if (!li)
		return 0;
	ows__ctl_close(s, &li->ctl);
	int rc = ows__private_remove(&li->pv, err);
	ows__strv_free(&li->strings);
	free(li);
	s->impl = NULL;
	return rc;
}

const ows__provider ows__landlock_provider = {
	.name = "landlock",
	.open = landlock_open,
	.spawn = ows__ctl_op_spawn, /* the impl begins with its ows__ctl */
	.wait = ows__ctl_op_wait,
	.kill = ows__ctl_op_kill,
	.close = landlock_close,
};
