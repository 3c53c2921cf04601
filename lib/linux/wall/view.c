/*
 * The sandbox's view, planned once for both Linux providers.
 *
 * The host (landlock) or the setuid launcher (account) describes what the
 * sandbox holds in a struct ows__view; ows__view_plan() turns it into the
 * plan's mounts, traverse-only skeleton and Landlock rules, which init then
 * builds (root.c).  ows__net_plan() makes the one network decision from the
 * mode: namespace, Landlock TCP rules and scopes, seccomp socket families,
 * the proxy's listener inside.  The two providers differ only in who runs
 * inside, never in what is there.
 *
 * A host the kernel gives no user namespace (plan.in_host_ns) gets the same
 * plan without mounts: the same Landlock rules on the host's own tree, but
 * for what only mounts kept out (/tmp, /dev/pts, /dev/shm, a group's files,
 * rule by rule), and a network plan that refuses what it cannot keep.
 *
 * This runs before clone, where allocating is fine: strings the plan points
 * at are kept in the caller's `keep` vector until init has started.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init.h"
#include "view.h"

static const char *keep_str(ows__strv *keep, const char *s, ows_error *err)
{
	if (ows__strv_push(keep, s, err) < 0)
		return NULL;
	return keep->v[keep->len - 1];
}

/* Under a host-namespace init nothing is mounted: the view is its Landlock rules alone. */
static int add_mount(struct ows__plan *p, struct ows__mnt m, ows_error *err)
{
	if (p->in_host_ns)
		return 0;
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

void ows__plan_partial(struct ows__plan *p, const char *promise, const char *why)
{
	for (int i = 0; i < p->npartial; i++)
		if (strcmp(p->partial[i].promise, promise) == 0)
			return;
	if (p->npartial < OWS__MAX_PARTIAL)
		p->partial[p->npartial++] = (struct ows__partial){promise, why};
}

bool ows__path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool ows__view_under_memory_folder(const char *path)
{
	return ows__path_under(path, "/tmp") || ows__path_under(path, "/dev/shm");
}

static bool folders_hold(const ows__folder *folders, size_t nfolders, const char *path)
{
	for (size_t i = 0; i < nfolders; i++)
		if (ows__path_under(path, folders[i].path))
			return true;
	return false;
}

const char *ows__private_tmpfs_base(const ows__folder *folders, size_t nfolders, uid_t uid)
{
	static const char *const bases[] = {"/tmp", "/run"};
	char place[64];
	for (size_t i = 0; i < OWS__ARRAY_LEN(bases); i++) {
		snprintf(place, sizeof(place), "%s/owsandbox-%u", bases[i], (unsigned)uid);
		if (!folders_hold(folders, nfolders, place))
			return bases[i];
	}
	return NULL;
}

/* A path sorts before every path below it, so a mount never hides one made after it. */
static int cmp_mount(const void *a, const void *b)
{
	const struct ows__mnt *x = a, *y = b;
	return strcmp(x->dst, y->dst);
}

/* Folders to create only so that a mount can be reached: made 0111 (traverse only). */
static int plan_skeleton(struct ows__plan *p, ows__strv *keep, ows_error *err)
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
				    (m->kind == OWS_M_BIND && ows__path_under(buf, m->dst)))
					skip = true;
			}
			for (int j = 0; j < p->nskeleton && !skip; j++)
				skip = strcmp(p->skeleton[j], buf) == 0;
			if (skip)
				continue;
			if (p->nskeleton >= OWS_INIT_MAX_MOUNTS)
				return ows__fail(err, OWS_EINVAL, 0, buf, NULL, "too many folders");
			const char *k = keep_str(keep, buf, err);
			if (!k)
				return OWS_ENOMEM;
			p->skeleton[p->nskeleton++] = k;
		}
	}
	return 0;
}

/* The system, read-only to every sandbox; the folders of /, or links into /usr. */
static const char *const system_dirs[] = {"/usr", "/etc", "/opt"};
static const char *const maybe_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
				      "/dev/urandom", "/dev/tty"};
static const uint64_t dev_rw = OWS_LL_FS_READ_FILE | OWS_LL_FS_WRITE_FILE | OWS_LL_FS_TRUNCATE |
			       OWS_LL_FS_IOCTL_DEV;

/*
 * `open`'s name resolution: /etc/resolv.conf may be a link into /run, whose
 * target is then bound (or, in the host's namespaces, granted) by itself.
 */
static int plan_resolv(struct ows__plan *p, ows__strv *keep, ows_error *err)
{
	struct stat st;
	int rc = 0;
	if (p->net != OWS_NET_OPEN || lstat("/etc/resolv.conf", &st) != 0 || !S_ISLNK(st.st_mode))
		return 0;
	char *real = realpath("/etc/resolv.conf", NULL);
	if (real && !ows__path_under(real, "/etc") && !ows__path_under(real, "/usr") &&
	    stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
		const char *k = keep_str(keep, real, err);
		rc = k ? add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = k, .dst = k,
						  .is_file = true}, err)
		       : OWS_ENOMEM;
		if (rc == 0)
			rc = add_rule(p, k, OWS_LL_FS_READ_FILE, err);
	}
	free(real);
	return rc;
}

/*
 * FIFOs.  A FIFO in a session folder joins whoever opens it there: a reader
 * or writer of the person's outside, or a tool of the person's that later
 * opens a name the agent left as a FIFO and waits forever.  So no FIFO is
 * made in a session folder (Landlock's MAKE_FIFO, which also refuses one
 * renamed or linked in), nor in a memory folder that holds one below it:
 * Landlock's rights hold for all beneath their rule.  The private folder
 * keeps the right (GNU make 4.4's jobserver makes its FIFO in TMPDIR).
 */
static uint64_t fifo_ok(const struct ows__view *v, const char *dir, uint64_t access)
{
	for (size_t i = 0; i < v->nfolders; i++)
		if (ows__path_under(v->folders[i].path, dir))
			return access & ~OWS_LL_FS_MAKE_FIFO;
	return access;
}

static int plan_system(struct ows__plan *p, ows__strv *keep, const struct ows__view *v,
		       ows_error *err)
{
	static const char *const dev_links[][2] = {
		{"/dev/ptmx", "pts/ptmx"}, {"/dev/fd", "/proc/self/fd"},
		{"/dev/stdin", "/proc/self/fd/0"}, {"/dev/stdout", "/proc/self/fd/1"},
		{"/dev/stderr", "/proc/self/fd/2"},
	};
	const uint64_t all = ows__landlock_fs_all(p->abi);
	struct stat st;
	int rc = 0;

	for (size_t i = 0; i < OWS__ARRAY_LEN(system_dirs) && rc == 0; i++)
		if (lstat(system_dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = system_dirs[i], .dst = system_dirs[i]}, err);
			if (rc == 0)
				rc = add_rule(p, system_dirs[i], OWS_LL_FS_READ, err);
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
			const char *t = keep_str(keep, target, err);
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
	/* Device nodes, links and mount points only: nothing inside may write there. */
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = "/dev", .mode = "0755",
					       .size = 64 << 10, .inodes = 256}, err);
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
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = "/dev/shm", .mode = "1777",
					       .size = p->tmpfs_bytes, .inodes = p->tmpfs_inodes}, err);
	if (rc == 0)
		rc = add_rule(p, "/dev/shm", fifo_ok(v, "/dev/shm", all), err);
	for (size_t i = 0; i < OWS__ARRAY_LEN(dev_links) && rc == 0; i++)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_SYMLINK, .src = dev_links[i][1],
					       .dst = dev_links[i][0]}, err);
	if (rc == 0)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = "/tmp", .mode = "1777",
					       .size = p->tmpfs_bytes, .inodes = p->tmpfs_inodes}, err);
	if (rc == 0)
		rc = add_rule(p, "/tmp", fifo_ok(v, "/tmp", all), err);
	/* Made there by init; its own rule when /tmp's lacks MAKE_FIFO. */
	if (rc == 0 && p->private_dir && ows__path_under(p->private_dir, "/tmp") &&
	    fifo_ok(v, "/tmp", all) != all)
		rc = add_rule(p, p->private_dir, all, err);

	return rc == 0 ? plan_resolv(p, keep, err) : rc;
}

/* A path of `hidden` is `dir` or lies below it. */
static bool hides_below(const char *dir, const char *const *hidden, size_t nhidden, bool *self)
{
	bool below = false;
	*self = false;
	for (size_t i = 0; i < nhidden; i++) {
		*self |= strcmp(hidden[i], dir) == 0;
		below |= ows__path_under(hidden[i], dir);
	}
	return below;
}

/*
 * `access` on `dir`, but for what `hidden` names below it (in the host's
 * namespaces, where nothing can be covered by a mount).  A Landlock right
 * holds for all beneath its rule, so a folder above a hidden entry gets
 * only READ_DIR (its names can be listed) and each of its entries a rule
 * of its own, recursively; a hidden entry gets none.  Links are left out:
 * a rule follows its path, and what a link leads to has its own rules.
 * An entry made there later gets no right.
 */
static int add_rule_except(struct ows__plan *p, ows__strv *keep, const char *dir,
			   uint64_t access, const char *const *hidden, size_t nhidden,
			   int depth, ows_error *err)
{
	const uint64_t file_rights = OWS_LL_FS_EXECUTE | OWS_LL_FS_WRITE_FILE |
				     OWS_LL_FS_READ_FILE | OWS_LL_FS_TRUNCATE | OWS_LL_FS_IOCTL_DEV;
	bool self;
	if (!hides_below(dir, hidden, nhidden, &self))
		return add_rule(p, dir, access, err);
	if (self)
		return 0;
	if (depth > 32)
		return ows__fail(err, OWS_EINVAL, 0, dir, NULL, "too deep to leave an entry out");
	int rc = add_rule(p, dir, access & OWS_LL_FS_READ_DIR, err);
	DIR *d = rc == 0 ? opendir(dir) : NULL;
	for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		char buf[4096];
		struct stat st;
		snprintf(buf, sizeof(buf), "%s/%s", dir, e->d_name);
		if (lstat(buf, &st) != 0 || S_ISLNK(st.st_mode))
			continue;
		const char *k = keep_str(keep, buf, err);
		if (!k)
			rc = OWS_ENOMEM;
		else if (S_ISDIR(st.st_mode))
			rc = add_rule_except(p, keep, k, access, hidden, nhidden, depth + 1, err);
		else if (!hides_below(k, hidden, nhidden, &self))
			rc = add_rule(p, k, access & file_rights, err);
	}
	if (d)
		closedir(d);
	return rc;
}

/*
 * The system in the host's own tree, by Landlock rules alone: read-only,
 * but for what v->masks leaves out (what only a supplementary group of the
 * person's opens); the few devices a command needs (not /dev/pts or
 * /dev/shm: the person's terminals and shared memory are there), /proc and
 * /sys to read.  No /tmp: the person's is the host's; the private folder
 * holds the session's.
 */
static int plan_host_system(struct ows__plan *p, ows__strv *keep, const struct ows__view *v,
			    ows_error *err)
{
	const char *const *hidden = v->masks;
	struct stat st;
	int rc = 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(system_dirs) && rc == 0; i++)
		if (lstat(system_dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_rule_except(p, keep, system_dirs[i], OWS_LL_FS_READ, hidden,
					     v->nmasks, 0, err);
	for (size_t i = 0; i < OWS__ARRAY_LEN(maybe_links) && rc == 0; i++)
		if (lstat(maybe_links[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_rule(p, maybe_links[i], OWS_LL_FS_READ, err);
	if (rc == 0)
		rc = add_rule(p, "/sys", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);
	if (rc == 0)
		rc = add_rule(p, "/proc", OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR, err);
	/* A new terminal (ptmx) is the command's own; its other end opens through
	 * TIOCGPTPEER, not by a name under /dev/pts. */
	for (size_t i = 0; i < OWS__ARRAY_LEN(devices) + 1 && rc == 0; i++) {
		const char *dev = i < OWS__ARRAY_LEN(devices) ? devices[i] : "/dev/ptmx";
		if (stat(dev, &st) == 0 && S_ISCHR(st.st_mode))
			rc = add_rule(p, dev, dev_rw, err);
	}
	return rc == 0 ? plan_resolv(p, keep, err) : rc;
}

/* The session's folders at their own paths, and what git runs in them read-only. */
static int plan_folders(struct ows__plan *p, ows__strv *keep, const struct ows__view *v,
			ows_error *err)
{
	static const char *const forbidden[] = {"/proc", "/sys", "/dev"};
	const uint64_t all = ows__landlock_fs_all(p->abi);
	int rc = 0;
	for (size_t i = 0; i < v->nfolders && rc == 0; i++) {
		const ows__folder *f = &v->folders[i];
		for (size_t j = 0; j < OWS__ARRAY_LEN(forbidden); j++)
			if (ows__path_under(f->path, forbidden[j]))
				return ows__fail(err, OWS_EINVAL, 0, f->path,
						 "name a folder of files, not a kernel interface",
						 "this folder cannot be a session folder");
		bool rw = f->access == OWS_ACCESS_RW;
		struct ows__mnt m = {.kind = OWS_M_BIND, .src = f->path, .dst = f->path, .rw = rw};
		if (v->folder_ids) {
			m.want_id = true;
			m.want_dev = v->folder_ids[i].st_dev;
			m.want_ino = v->folder_ids[i].st_ino;
		}
		rc = add_mount(p, m, err);
		if (rc == 0)
			rc = add_rule(p, f->path, rw ? all & ~OWS_LL_FS_MAKE_FIFO : OWS_LL_FS_READ,
				      err);
	}
	/* Bound over themselves: read-only, or read-write only to pin them in place. */
	for (size_t i = 0; i < v->nguard && rc == 0; i++)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = v->guard[i].path,
						   .dst = v->guard[i].path, .rw = v->guard[i].pin,
						   .is_file = v->guard[i].is_file}, err);
	for (size_t i = 0; i < v->nro_dirs && rc == 0; i++) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = v->ro_dirs[i],
						   .dst = v->ro_dirs[i]}, err);
		if (rc == 0)
			rc = add_rule(p, v->ro_dirs[i], OWS_LL_FS_READ, err);
	}
	if (rc == 0 && v->exe) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = v->exe, .dst = v->exe,
						   .is_file = true}, err);
		if (rc == 0)
			rc = add_rule(p, v->exe, OWS_LL_FS_EXECUTE | OWS_LL_FS_READ_FILE, err);
	}
	/* Sorted after the binds they lie in (cmp_mount), so attached over them. */
	for (size_t i = 0; i < v->nmasks && rc == 0; i++)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_MASK, .dst = v->masks[i]}, err);
	/* A private folder on disk is bound in; one on the sandbox's /tmp is made there,
	 * or on a tmpfs of its own when /tmp is a session folder's. */
	if (rc == 0 && v->private_tmpfs) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = v->private_tmpfs,
						   .mode = "0755", .size = p->tmpfs_bytes,
						   .inodes = p->tmpfs_inodes}, err);
		if (rc == 0)
			rc = add_rule(p, v->private_tmpfs, all, err);
	}
	if (rc == 0 && v->private_disk) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = v->private_disk,
						   .dst = v->private_disk, .rw = true}, err);
		if (rc == 0)
			rc = add_rule(p, v->private_disk, all, err);
	}
	/* Its TMPDIR in memory, sized, over the folder on disk (sorted after it). */
	if (rc == 0 && v->private_tmp)
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_TMPFS, .dst = v->private_tmp,
						   .mode = "0700", .owned = true, .size = p->tmpfs_bytes,
						   .inodes = p->tmpfs_inodes}, err);
	return rc;
}

int ows__view_plan(struct ows__plan *p, ows__strv *keep, const struct ows__view *v,
		   ows_error *err)
{
	int rc = p->in_host_ns ? plan_host_system(p, keep, v, err) : plan_system(p, keep, v, err);
	if (rc < 0 || (rc = plan_folders(p, keep, v, err)) < 0)
		return rc;
	qsort(p->mounts, (size_t)p->nmounts, sizeof(p->mounts[0]), cmp_mount);
	return plan_skeleton(p, keep, err);
}

/*
 * What a sandbox in the host's namespaces keeps only in part, and from
 * which Landlock ABI on it keeps it in full (0: none yet).  The report
 * (lib/linux/report.c) names the same rows with the same reasons.
 */
static const struct {
	const char *promise;
	int kept_from_abi;
	const char *why;
} host_ns_partial[] = {
	{"files.outside_metadata", 0,
	 "no mount namespace (user namespaces are off): Landlock refuses reading, writing, "
	 "listing and running what lies outside the session, not looking it up or changing "
	 "its metadata: names there can be probed (stat) and the person's files can have "
	 "their modes, times and extended attributes changed"},
	{"files.git_guard", 0,
	 "no mount namespace (user namespaces are off): what git and shells run from a "
	 "read-write folder (.git/config, hooks, .bashrc...) cannot be made read-only; only "
	 "names that appear there and repositories made there are moved aside after each "
	 "command"},
	{"files.read_write_fifos", 0,
	 "no mount namespace (user namespaces are off): a FIFO of the person's in a "
	 "read-write folder cannot be covered, and carries data to and from its reader or "
	 "writer outside (none can be made there: Landlock)"},
	{"files.read_only_channels", 0,
	 "in the host's namespaces (user namespaces are off) no command's opens are made "
	 "by its reaper: a FIFO the person makes in a read-only folder after the session "
	 "opened can be read from (not written into: Landlock; no unix socket can be "
	 "made: seccomp)"},
	{"processes.outside_visible", 0,
	 "no PID namespace (user namespaces are off): the machine's processes and their "
	 "command lines are listed in /proc (not their memory, environment or descriptors: "
	 "Landlock refuses those)"},
	{"signals.outside", 6,
	 "no PID namespace (user namespaces are off), and no Landlock signal scope before "
	 "ABI 6 (Linux 6.12): the person's other processes can be signalled (not the "
	 "session's init: seccomp)"},
};

const char *ows__host_ns_partial(int abi, const char *promise)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(host_ns_partial); i++)
		if (strcmp(host_ns_partial[i].promise, promise) == 0)
			return host_ns_partial[i].kept_from_abi &&
			       abi >= host_ns_partial[i].kept_from_abi ? NULL : host_ns_partial[i].why;
	return NULL;
}

/*
 * The network in the host's namespaces: no namespace of its own, so
 * `allowlist` cannot be kept (a Landlock TCP rule names a port, not an
 * address: a server anywhere on the proxy's port would be reachable); in
 * `none` seccomp lets no socket be created (Landlock refuses TCP too from
 * ABI 4); in `open`, unix sockets are refused all the same (seccomp.c), which
 * keeps abstract ones out on any ABI.
 */
static int plan_host_net(struct ows__plan *p, ows_net net, ows_error *err)
{
	if (net == OWS_NET_ALLOWLIST)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "network allowlist",
				 "set up the account provider (sudo owsbx machine sandbox setup), "
				 "whose launcher makes the network namespace with no user namespace; "
				 "or use --net none",
				 "allowlist needs a network namespace of its own, and this machine "
				 "gives no user namespace (Landlock's TCP rules name ports, not "
				 "addresses: a server anywhere on the proxy's port would be reachable)");
	p->handled_fs = ows__landlock_fs_all(p->abi);
	p->handled_net = net == OWS_NET_NONE && p->abi >= 4
		? OWS_LL_NET_BIND_TCP | OWS_LL_NET_CONNECT_TCP : 0;
	p->scoped = p->abi >= 6 ? OWS_LL_SCOPE_ABSTRACT_UNIX_SOCKET | OWS_LL_SCOPE_SIGNAL : 0;
	p->clone_flags = 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(host_ns_partial); i++) {
		const char *why = ows__host_ns_partial(p->abi, host_ns_partial[i].promise);
		if (why)
			ows__plan_partial(p, host_ns_partial[i].promise, why);
	}
	unsigned flags = OWS_SECCOMP_HOST_NS | (p->abi < 3 ? OWS_SECCOMP_NO_TRUNCATE : 0) |
			 (p->group_shared ? OWS_SECCOMP_NO_GROUP_WRITE : 0);
	return ows__seccomp_build(&p->seccomp, net, flags, err);
}

/*
 * What each Landlock ABI lacks, and what keeps the promise anyway (the
 * kernel's own advice: handle only what the ABI knows, best effort):
 *   TCP rules (ABI 4): `none` has a network of its own with no interface
 *     but a loopback that is down, and seccomp lets only AF_UNIX sockets be
 *     made; `allowlist` never relied on them (its one way out is handed in).
 *   truncate (ABI 3), device ioctl (ABI 5): what may not be written is
 *     mounted read-only; the devices are a handful, TIOCSTI refused by seccomp.
 *   scopes (ABI 6): signals stay in the sandbox's own PID namespace in every
 *     mode (no process outside has a PID inside); abstract unix sockets stay
 *     in the sandbox's own network namespace in `none` and `allowlist`.
 * Only `open` shares the host's network namespace, where the machine's
 * abstract sockets are (an X server's among them, which admits the person's
 * own uid without a cookie): without the scope nothing keeps them out, so
 * `open` there is refused unless the person chose to run it partial.
 */
int ows__net_partial(ows_net net, int abi, bool open_unscoped, ows__partial *out, int *n,
		     ows_error *err)
{
	*n = 0;
	if (net != OWS_NET_OPEN || abi >= 6)
		return 0;
	if (!open_unscoped)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "network open",
				 "use --net none or allowlist (both keep it), a kernel with Landlock "
				 "ABI 6 (Linux 6.12+), or run `open` partial: open_without_scopes = "
				 "partial in [sandbox] of the config",
				 "this kernel cannot keep abstract unix sockets outside the sandbox in "
				 "`open` (Landlock ABI %d has no scopes; needs 6)", abi);
	out[(*n)++] = (ows__partial){
		OWS__PROMISE_UNIX_OUTSIDE,
		"abstract unix sockets outside are reachable: `open` shares the host's network "
		"and this kernel's Landlock has no scopes (needs ABI 6, Linux 6.12)"};
	return 0;
}

bool ows__plan_is_partial(const struct ows__plan *p, const char *promise)
{
	for (int i = 0; i < p->npartial; i++)
		if (strcmp(p->partial[i].promise, promise) == 0)
			return true;
	return false;
}

int ows__net_plan(struct ows__plan *p, ows_net net, bool open_unscoped, ows_error *err)
{
	p->abi = ows__landlock_abi();
	if (p->abi < 1)
		return ows__landlock_unavailable(err); /* says why: not built, or not in lsm= */
	if (p->in_host_ns) {
		p->net = net;
		return plan_host_net(p, net, err);
	}
	int rc = ows__net_partial(net, p->abi, open_unscoped, p->partial, &p->npartial, err);
	if (rc < 0)
		return rc;
	p->handled_fs = ows__landlock_fs_all(p->abi);
	p->handled_net = 0;
	if (net == OWS_NET_NONE && p->abi >= 4)
		p->handled_net = OWS_LL_NET_BIND_TCP | OWS_LL_NET_CONNECT_TCP;
	if (p->abi >= 6)
		p->scoped = OWS_LL_SCOPE_ABSTRACT_UNIX_SOCKET | OWS_LL_SCOPE_SIGNAL;
	p->net = net;
	p->clone_flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
	/* Only `open` shares the host's network; allowlist's one way out is handed over. */
	if (net != OWS_NET_OPEN)
		p->clone_flags |= CLONE_NEWNET;
	return ows__seccomp_build(&p->seccomp, net, p->group_shared ? OWS_SECCOMP_NO_GROUP_WRITE : 0,
				  err);
}
