/*
 * A session's cgroups (cgroup.h): cgroup v2, v1, or both on a hybrid machine.
 *
 * Linked into the setuid launcher: it reads fixed paths under /sys/fs/cgroup
 * and the kernel's /proc files only, and opens everything below a folder it
 * holds open (openat, no link followed).  Only the folder listings (sweep,
 * take_back) allocate, on the host side; join allocates nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "cgroup.h"
#include "linux/linux.h"

#define CG_ROOT "/sys/fs/cgroup"
#define MARK "owsandbox+"   /* "owsandbox+memory": we enabled memory in this parent */
#define PREFIX "owsandbox-" /* a session's group */
#define CPU_PERIOD_US 100000ULL

static const char *const ctrl_name[OWS_CG_NCTRL] = {"memory", "pids", "cpu"};

static const char *const hint_account =
	"use the account provider (`sudo owsbx machine sandbox setup`), or leave the limit out";
static const char *const hint_systemd =
	"start owsbx in your systemd user session (`systemd-run --user --scope owsbx ...`), "
	"or use the account provider";

/* ------------------------------------------------------------- files */

/* A small kernel file in full; its length, or -1. */
static ssize_t read_at(int dir, const char *file, char *buf, size_t size)
{
	int fd = openat(dir, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r = 0;
	while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	int saved = errno;
	close(fd);
	buf[n] = '\0';
	errno = saved;
	return r < 0 ? -1 : (ssize_t)n;
}

static int write_at(int dir, const char *file, const char *s)
{
	int fd = openat(dir, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	size_t n = strlen(s);
	ssize_t w = write(fd, s, n);
	int saved = errno;
	close(fd);
	errno = saved;
	return w == (ssize_t)n ? 0 : -1;
}

/* "cpu io memory pids" → bits of the controllers we use. */
static unsigned ctrls_at(int dir, const char *file)
{
	char buf[512];
	unsigned mask = 0;
	if (read_at(dir, file, buf, sizeof(buf)) < 0)
		return 0;
	for (char *save = NULL, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		for (int c = 0; c < OWS_CG_NCTRL; c++)
			if (strcmp(w, ctrl_name[c]) == 0)
				mask |= OWS_CG_BIT(c);
	return mask;
}

/* "memory, pids, cpu" */
static void ctrl_names(unsigned mask, char *buf, size_t size)
{
	buf[0] = '\0';
	for (int c = 0; c < OWS_CG_NCTRL; c++)
		if (mask & OWS_CG_BIT(c)) {
			size_t n = strlen(buf);
			snprintf(buf + n, size - n, "%s%s", n ? ", " : "", ctrl_name[c]);
		}
}

/* A cgroup holding no process (our groups have no children). */
static bool is_empty(int dir)
{
	char buf[16];
	return read_at(dir, "cgroup.procs", buf, sizeof(buf)) == 0;
}

static int open_dir_at(int dir, const char *name)
{
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/* ------------------------------------------------------- hierarchies */

/* The v2 hierarchy: unified at /sys/fs/cgroup, or hybrid at /sys/fs/cgroup/unified. */
static int open_v2_root(char *path, size_t size)
{
	static const char *const where[] = {CG_ROOT, CG_ROOT "/unified"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(where); i++) {
		int fd = open(where[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct statfs sf;
		if (fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC) {
			snprintf(path, size, "%s", where[i]);
			return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* Whether the kernel has controller c bound to a v1 hierarchy (/proc/cgroups). */
static bool v1_bound(int c)
{
	char buf[2048];
	if (read_at(AT_FDCWD, "/proc/cgroups", buf, sizeof(buf)) < 0)
		return false;
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[32];
		int hierarchy, enabled;
		unsigned long count;
		if (sscanf(line, "%31s %d %lu %d", name, &hierarchy, &count, &enabled) == 4 &&
		    strcmp(name, ctrl_name[c]) == 0)
			return hierarchy > 0 && enabled;
	}
	return false;
}

/* A v1 controller's hierarchy, /sys/fs/cgroup/<name> (cpu is often a link to cpu,cpuacct). */
static int open_v1_root(int c)
{
	char path[64];
	if (!v1_bound(c))
		return -1;
	snprintf(path, sizeof(path), CG_ROOT "/%s", ctrl_name[c]);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct statfs sf;
	if (fd >= 0 && (fstatfs(fd, &sf) != 0 || sf.f_type != CGROUP_SUPER_MAGIC)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* This process's v2 cgroup, "/user.slice/..." (the "0::" line of /proc/self/cgroup). */
static int own_v2_path(char *out, size_t size)
{
	char buf[8192];
	if (read_at(AT_FDCWD, "/proc/self/cgroup", buf, sizeof(buf)) < 0)
		return -1;
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::/", 4) == 0 && strlen(line + 3) < size) {
			snprintf(out, size, "%s", line + 3);
			return 0;
		}
	return -1;
}

/* ------------------------------------------------------------- plans */

/* Where each controller's limit goes; what create makes. */
struct plan {
	int v2;                   /* the v2 group's parent, or -1 */
	char v2path[PATH_MAX];
	unsigned v2ctrls;         /* limited in the v2 group */
	bool delegated;
	int v1[OWS_CG_NCTRL];     /* the v1 hierarchies of the controllers limited there */
};

static void plan_init(struct plan *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->v2 = -1;
	for (int c = 0; c < OWS_CG_NCTRL; c++)
		pl->v1[c] = -1;
}

static void plan_close(struct plan *pl)
{
	if (pl->v2 >= 0)
		close(pl->v2);
	for (int c = 0; c < OWS_CG_NCTRL; c++)
		if (pl->v1[c] >= 0)
			close(pl->v1[c]);
	plan_init(pl);
}

/* The hierarchies' roots: each controller from v2 where its root offers it, else v1. */
static int plan_machine(struct plan *pl, unsigned want, ows_error *err)
{
	pl->v2 = open_v2_root(pl->v2path, sizeof(pl->v2path));
	unsigned offered = pl->v2 >= 0 ? ctrls_at(pl->v2, "cgroup.controllers") : 0;
	pl->v2ctrls = want & offered;
	unsigned missing = 0;
	for (int c = 0; c < OWS_CG_NCTRL; c++)
		if ((want & ~offered & OWS_CG_BIT(c)) && (pl->v1[c] = open_v1_root(c)) < 0)
			missing |= OWS_CG_BIT(c);
	if (!missing)
		return 0;
	char names[64];
	ctrl_names(missing, names, sizeof(names));
	return ows__fail(err, OWS_EUNSUPPORTED, 0, CG_ROOT,
			 "leave the limit out, or boot a kernel that has the controller",
			 "this kernel has none of these controllers, in cgroup v2 or v1: %s", names);
}

/* Why the walk below stopped, for the message. */
struct walk {
	bool owned;            /* some ancestor is the person's */
	unsigned lacking;      /* ... but the topmost one lacks these controllers */
	bool busy;             /* ... or cannot enable them: it holds processes, or its
				  cgroup.subtree_control is not the person's */
	char last[PATH_MAX];
};

/*
 * A parent for the session's group, in the subtree the caller owns: the
 * nearest ancestor of its own cgroup that is the caller's (so that it may
 * create there and move a process from its own cgroup, which needs write
 * access to the common ancestor's cgroup.procs) and whose subtree_control
 * has the controllers or may get them (offered, and no process of its own).
 */
static int find_delegated(int root, const char *own, unsigned want, struct walk *w)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", own);
	for (char *slash = strrchr(p, '/'); slash && slash != p; slash = strrchr(p, '/')) {
		*slash = '\0'; /* the root cgroup ("/") is never a person's */
		int fd = open_dir_at(root, p + 1);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
		    faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) != 0 ||
		    faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
			if (fd >= 0)
				close(fd);
			break;
		}
		w->owned = true;
		snprintf(w->last, sizeof(w->last), "%s", p);
		unsigned need = want & ~ctrls_at(fd, "cgroup.subtree_control");
		w->lacking = need & ~ctrls_at(fd, "cgroup.controllers");
		w->busy = need && !w->lacking &&
			  (!is_empty(fd) || faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) != 0);
		if (!need || (!w->lacking && !w->busy))
			return fd;
		close(fd);
	}
	return -1;
}

static int plan_delegated(struct plan *pl, unsigned want, ows_error *err)
{
	if (geteuid() == 0)
		return plan_machine(pl, want, err);
	char rootpath[64], own[PATH_MAX], names[64];
	int root = open_v2_root(rootpath, sizeof(rootpath));
	if (root < 0)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, CG_ROOT, hint_account,
				 "no cgroup v2 hierarchy is mounted, and cgroup v1 delegates "
				 "nothing to a person");
	unsigned lacking = want & ~ctrls_at(root, "cgroup.controllers");
	if (lacking) {
		ctrl_names(lacking, names, sizeof(names));
		close(root);
		return ows__fail(err, OWS_EUNSUPPORTED, 0, rootpath, hint_account,
				 "cgroup v2 here lacks the controllers the limits need (%s): this "
				 "machine keeps them in cgroup v1, which delegates nothing to a person",
				 names);
	}
	if (own_v2_path(own, sizeof(own)) < 0) {
		close(root);
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "/proc/self/cgroup", hint_account,
				 "cannot tell which cgroup v2 this process runs in");
	}
	struct walk w = {0};
	pl->v2 = find_delegated(root, own, want, &w);
	close(root);
	if (pl->v2 >= 0) {
		if (snprintf(pl->v2path, sizeof(pl->v2path), "%s%s", rootpath, w.last) >=
		    (int)sizeof(pl->v2path))
			pl->v2path[0] = '\0'; /* for messages only */
		pl->v2ctrls = want;
		pl->delegated = true;
		return 0;
	}
	char where[PATH_MAX + 64];
	snprintf(where, sizeof(where), "%s%s", rootpath, w.owned ? w.last : own);
	if (!w.owned)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, where, hint_systemd,
				 "the cgroup this process runs in is not delegated to the person");
	ctrl_names(w.lacking ? w.lacking : want, names, sizeof(names));
	if (w.lacking)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, where,
				 "have systemd delegate it (Delegate=pids memory cpu for "
				 "user@.service), or use the account provider",
				 "the person's delegated cgroup lacks controllers the limits need (%s)",
				 names);
	return ows__fail(err, OWS_EUNSUPPORTED, 0, where, hint_systemd,
			 "the person's delegated cgroup cannot enable controllers for a cgroup of "
			 "the session (%s): it holds processes, or its cgroup.subtree_control is "
			 "not theirs", names);
}

static int plan_make(struct plan *pl, ows__cgroup_place place, unsigned want, ows_error *err)
{
	plan_init(pl);
	int rc = place == OWS_CG_DELEGATED ? plan_delegated(pl, want, err)
					   : plan_machine(pl, want, err);
	if (rc < 0)
		plan_close(pl);
	return rc;
}

ows__cgroup_limits ows__cgroup_limits_of(const ows_policy *policy)
{
	ows__cgroup_limits lim = {0};
	if (policy->has_limit[OWS_LIMIT_MEMORY_BYTES])
		lim.memory_bytes = policy->limit[OWS_LIMIT_MEMORY_BYTES];
	if (policy->has_limit[OWS_LIMIT_PROCESSES])
		lim.processes = policy->limit[OWS_LIMIT_PROCESSES];
	if (policy->has_limit[OWS_LIMIT_CPU_PERCENT])
		lim.cpu_percent = policy->limit[OWS_LIMIT_CPU_PERCENT];
	return lim;
}

unsigned ows__cgroup_wanted(const ows__cgroup_limits *lim)
{
	return (lim->memory_bytes ? OWS_CG_BIT(OWS_CG_MEMORY) : 0) |
	       (lim->processes ? OWS_CG_BIT(OWS_CG_PIDS) : 0) |
	       (lim->cpu_percent ? OWS_CG_BIT(OWS_CG_CPU) : 0);
}

int ows__cgroup_probe(ows__cgroup_place place, unsigned want, char *have, size_t len,
		      ows_error *err)
{
	struct plan pl;
	int rc = plan_make(&pl, place, want, err);
	if (rc < 0)
		return rc;
	char v2[64], v1[64];
	unsigned in_v1 = 0;
	for (int c = 0; c < OWS_CG_NCTRL; c++)
		if (pl.v1[c] >= 0)
			in_v1 |= OWS_CG_BIT(c);
	ctrl_names(pl.v2ctrls, v2, sizeof(v2));
	ctrl_names(in_v1, v1, sizeof(v1));
	if (!want)
		snprintf(have, len, pl.v2 >= 0 ? "cgroup v2" : "no cgroup");
	else if (!in_v1)
		snprintf(have, len, "cgroup v2 (%s)", v2);
	else if (!pl.v2ctrls)
		snprintf(have, len, "cgroup v1 (%s)", v1);
	else
		snprintf(have, len, "cgroup v2 (%s) and v1 (%s)", v2, v1);
	if (pl.delegated) {
		size_t n = strlen(have);
		snprintf(have + n, len - n, " delegated at %s", pl.v2path);
	}
	plan_close(&pl);
	return 0;
}

/* ------------------------------------------------------------ groups */

void ows__cgroup_init(ows__cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	for (int i = 0; i < OWS_CG_MAX_GROUPS; i++)
		cg->g[i].parent = cg->g[i].dir = cg->g[i].procs = -1;
}

bool ows__cgroup_active(const ows__cgroup *cg)
{
	return cg->n > 0;
}

/* Groups of sessions whose holder is gone (its lock is free) and that hold no process. */
static void sweep(int parent)
{
	DIR *d = ows__opendir_at(parent);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) != 0)
			continue;
		int fd = open_dir_at(parent, e->d_name);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && is_empty(fd))
			unlinkat(parent, e->d_name, AT_REMOVEDIR);
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
}

/* Enables in the parent what its subtree_control lacks, marking each for take_back. */
static int enable(int parent, const char *path, unsigned want, ows_error *err)
{
	unsigned need = want & ~ctrls_at(parent, "cgroup.subtree_control");
	for (int c = 0; c < OWS_CG_NCTRL; c++) {
		if (!(need & OWS_CG_BIT(c)))
			continue;
		char op[16], mark[32];
		snprintf(op, sizeof(op), "+%s", ctrl_name[c]);
		snprintf(mark, sizeof(mark), MARK "%s", ctrl_name[c]);
		/* Marked first: a crash in between then errs on the side of disabling. */
		if (mkdirat(parent, mark, 0755) != 0 && errno != EEXIST)
			return ows__fail_sys(err, path, "leave the limit out",
					     "cannot mark the %s controller as ours", ctrl_name[c]);
		if (write_at(parent, "cgroup.subtree_control", op) != 0) {
			int saved = errno;
			unlinkat(parent, mark, AT_REMOVEDIR);
			errno = saved;
			return ows__fail_sys(err, path,
					     "enable it there (`echo +memory > .../cgroup.subtree_control`"
					     ", as systemd does), or leave the limit out",
					     "cannot enable the %s controller for the session's cgroup",
					     ctrl_name[c]);
		}
	}
	return 0;
}

/* Disables what enable() marked, once no session's group is left in the parent. */
static void take_back(int parent)
{
	DIR *d = ows__opendir_at(parent);
	if (!d)
		return;
	struct dirent *e;
	bool sessions = false;
	while ((e = readdir(d)))
		sessions |= strncmp(e->d_name, PREFIX, strlen(PREFIX)) == 0;
	closedir(d);
	if (sessions)
		return;
	for (int c = 0; c < OWS_CG_NCTRL; c++) {
		char op[16], mark[32];
		struct stat st;
		snprintf(mark, sizeof(mark), MARK "%s", ctrl_name[c]);
		if (fstatat(parent, mark, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		snprintf(op, sizeof(op), "-%s", ctrl_name[c]);
		/* Refused (EBUSY) while a cgroup below relies on it: it stays marked. */
		if (write_at(parent, "cgroup.subtree_control", op) == 0)
			unlinkat(parent, mark, AT_REMOVEDIR);
	}
}

static int set(struct ows__cgroup_group *g, const char *file, const char *val, bool optional,
	       ows_error *err)
{
	if (write_at(g->dir, file, val) == 0 || (optional && errno == ENOENT))
		return 0;
	return ows__fail_sys(err, g->path, "leave the limit out, or lower it",
			     "cannot set the session's limit %s to %s", file, val);
}

static int set_limits(struct ows__cgroup_group *g, unsigned ctrls, const ows__cgroup_limits *lim,
		      ows_error *err)
{
	char v[48];
	int rc = 0;
	if (ctrls & OWS_CG_BIT(OWS_CG_MEMORY)) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_bytes);
		/* Swap kept out too: a balloon must not go on growing there. */
		rc = g->v2 ? set(g, "memory.max", v, false, err)
		   : set(g, "memory.limit_in_bytes", v, false, err);
		if (rc == 0)
			rc = g->v2 ? set(g, "memory.swap.max", "0", true, err)
			   : set(g, "memory.memsw.limit_in_bytes", v, true, err);
	}
	if (rc == 0 && (ctrls & OWS_CG_BIT(OWS_CG_PIDS))) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->processes);
		rc = set(g, "pids.max", v, false, err);
	}
	if (rc == 0 && (ctrls & OWS_CG_BIT(OWS_CG_CPU))) {
		unsigned long long quota = (unsigned long long)lim->cpu_percent * CPU_PERIOD_US / 100;
		if (g->v2) {
			snprintf(v, sizeof(v), "%llu %llu", quota, CPU_PERIOD_US);
			rc = set(g, "cpu.max", v, false, err);
		} else {
			snprintf(v, sizeof(v), "%llu", CPU_PERIOD_US);
			rc = set(g, "cpu.cfs_period_us", v, false, err);
			snprintf(v, sizeof(v), "%llu", quota);
			if (rc == 0)
				rc = set(g, "cpu.cfs_quota_us", v, false, err);
		}
	}
	g->ctrls |= ctrls;
	return rc;
}

/*
 * One group in `parent` (which the handle owns from here): made under the
 * parent's lock, so that no sweep or take_back of another session runs in
 * between, and locked itself for as long as the handle holds it.
 */
static int add_group(ows__cgroup *cg, int parent, const char *ppath, bool v2, unsigned ctrls,
		     const ows__cgroup_limits *lim, ows_error *err)
{
	struct ows__cgroup_group *g = &cg->g[cg->n++];
	g->parent = parent;
	g->v2 = v2;
	const char *name = cg->name;
	size_t n = strlen(ppath) < sizeof(g->path) - strlen(name) - 2 ? strlen(ppath) : 0;
	memcpy(g->path, ppath, n); /* for messages only: the parent is left out if too long */
	g->path[n] = '/';
	memcpy(g->path + n + 1, name, strlen(name) + 1);
	int rc = 0;
	if (flock(parent, LOCK_EX) != 0)
		return ows__fail_sys(err, ppath, NULL, "cannot lock the cgroup folder");
	sweep(parent);
	if (v2)
		rc = enable(parent, ppath, ctrls, err);
	if (rc == 0 && mkdirat(parent, cg->name, 0755) != 0)
		rc = ows__fail_sys(err, g->path, errno == EACCES || errno == EPERM ? hint_account : NULL,
				   "cannot create the session's cgroup");
	if (rc == 0 && ((g->dir = open_dir_at(parent, cg->name)) < 0 ||
			flock(g->dir, LOCK_EX | LOCK_NB) != 0))
		rc = ows__fail_sys(err, g->path, NULL, "cannot open the session's cgroup");
	flock(parent, LOCK_UN);
	if (rc == 0)
		rc = set_limits(g, ctrls, lim, err);
	if (rc == 0 && (g->procs = openat(g->dir, "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0)
		rc = ows__fail_sys(err, g->path, NULL, "cannot open the session's cgroup.procs");
	return rc;
}

/* A v1 group already made in the same hierarchy (controllers mounted together). */
static struct ows__cgroup_group *same_hierarchy(ows__cgroup *cg, int root)
{
	struct stat a, b;
	if (fstat(root, &a) != 0)
		return NULL;
	for (int i = 0; i < cg->n; i++)
		if (!cg->g[i].v2 && fstat(cg->g[i].parent, &b) == 0 && a.st_dev == b.st_dev)
			return &cg->g[i];
	return NULL;
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);
	for (const char *c = id; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return false;
	return n > 0 && n + strlen(PREFIX) < sizeof(((ows__cgroup *)0)->name);
}

int ows__cgroup_create(ows__cgroup *cg, ows__cgroup_place place, const char *id,
		       const ows__cgroup_limits *lim, ows_error *err)
{
	ows__cgroup_init(cg);
	if (!valid_id(id))
		return ows__fail(err, OWS_EINVAL, 0, id, NULL, "a cgroup name must be letters and digits");
	snprintf(cg->name, sizeof(cg->name), PREFIX "%s", id);
	struct plan pl;
	int rc = plan_make(&pl, place, ows__cgroup_wanted(lim), err);
	if (rc < 0)
		return rc;
	if (pl.v2 >= 0) {
		rc = add_group(cg, pl.v2, pl.v2path, true, pl.v2ctrls, lim, err);
		pl.v2 = -1; /* the group's now */
	}
	for (int c = 0; c < OWS_CG_NCTRL && rc == 0; c++) {
		if (pl.v1[c] < 0)
			continue;
		struct ows__cgroup_group *g = same_hierarchy(cg, pl.v1[c]);
		char path[64];
		snprintf(path, sizeof(path), CG_ROOT "/%s", ctrl_name[c]);
		if (g)
			rc = set_limits(g, OWS_CG_BIT(c), lim, err);
		else
			rc = add_group(cg, pl.v1[c], path, false, OWS_CG_BIT(c), lim, err);
		if (!g)
			pl.v1[c] = -1;
	}
	plan_close(&pl);
	if (rc < 0)
		ows__cgroup_remove(cg, NULL);
	return rc;
}

/* ------------------------------------------------------- init side */

int ows__cgroup_join(const ows__cgroup *cg)
{
	for (int i = 0; i < cg->n; i++)
		if (cg->g[i].procs >= 0 && write(cg->g[i].procs, "0", 1) != 1)
			return -1;
	return 0;
}

void ows__cgroup_joined(ows__cgroup *cg)
{
	for (int i = 0; i < cg->n; i++)
		if (cg->g[i].procs >= 0) {
			close(cg->g[i].procs);
			cg->g[i].procs = -1;
		}
}

/* ------------------------------------------------------------ the end */

/* SIGKILL to each process listed until none is (v1, or v2 before cgroup.kill). */
static int kill_listed(int dir)
{
	char buf[8192];
	for (int round = 0; round < 200; round++) {
		if (read_at(dir, "cgroup.procs", buf, sizeof(buf)) <= 0)
			return 0;
		for (char *save = NULL, *w = strtok_r(buf, "\n", &save); w; w = strtok_r(NULL, "\n", &save)) {
			long pid = strtol(w, NULL, 10);
			if (pid > 0)
				kill((pid_t)pid, SIGKILL);
		}
		usleep(2000);
	}
	errno = EBUSY;
	return -1;
}

int ows__cgroup_kill(const ows__cgroup *cg)
{
	/* Every group holds the same processes: one is enough, v2's at best. */
	for (int i = 0; i < cg->n; i++) {
		const struct ows__cgroup_group *g = &cg->g[i];
		if (g->dir < 0 || !g->v2)
			continue;
		if (write_at(g->dir, "cgroup.kill", "1") == 0)
			return 0;
		/* Before 5.14 (no cgroup.kill): frozen, nothing forks while the list is read. */
		bool frozen = write_at(g->dir, "cgroup.freeze", "1") == 0;
		int rc = kill_listed(g->dir);
		if (frozen)
			write_at(g->dir, "cgroup.freeze", "0");
		return rc;
	}
	for (int i = 0; i < cg->n; i++)
		if (cg->g[i].dir >= 0)
			return kill_listed(cg->g[i].dir);
	return 0;
}

/* rmdir, waiting (about 2 s at most) while the kernel still holds a dying task. */
static int remove_dir(int parent, const char *name)
{
	for (int tries = 0; tries < 400; tries++) {
		if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		usleep(5000);
	}
	return -1;
}

int ows__cgroup_remove(ows__cgroup *cg, ows_error *err)
{
	if (!cg->n)
		return 0;
	ows__cgroup_kill(cg);
	int rc = 0;
	for (int i = cg->n - 1; i >= 0; i--) {
		struct ows__cgroup_group *g = &cg->g[i];
		if (g->procs >= 0)
			close(g->procs);
		if (g->dir >= 0) {
			if (remove_dir(g->parent, cg->name) != 0)
				rc = ows__fail_sys(err, g->path, "remove it when its processes are gone",
						   "cannot remove the session's cgroup");
			close(g->dir);
		}
		if (g->parent >= 0 && g->v2 && flock(g->parent, LOCK_EX) == 0) {
			take_back(g->parent);
			flock(g->parent, LOCK_UN);
		}
		if (g->parent >= 0)
			close(g->parent);
	}
	ows__cgroup_init(cg);
	return rc;
}

void ows__cgroup_remove_stale(const char *id)
{
	ows__cgroup cg;
	ows__cgroup_init(&cg);
	if (!valid_id(id))
		return;
	snprintf(cg.name, sizeof(cg.name), PREFIX "%s", id);
	char path[64];
	int roots[OWS_CG_MAX_GROUPS];
	roots[0] = open_v2_root(path, sizeof(path));
	for (int c = 0; c < OWS_CG_NCTRL; c++)
		roots[1 + c] = open_v1_root(c);
	for (int i = 0; i < OWS_CG_MAX_GROUPS; i++) {
		int dir = roots[i] >= 0 ? open_dir_at(roots[i], cg.name) : -1;
		if (dir < 0) {
			if (roots[i] >= 0)
				close(roots[i]);
			continue;
		}
		struct ows__cgroup_group *g = &cg.g[cg.n++];
		g->parent = roots[i];
		g->dir = dir;
		g->v2 = i == 0;
		memcpy(g->path, cg.name, sizeof(cg.name));
	}
	ows__cgroup_remove(&cg, NULL);
}

int ows__cgroup_limit_file(const ows__cgroup *cg, int ctrl, char *buf, size_t len)
{
	for (int i = 0; i < cg->n; i++) {
		const struct ows__cgroup_group *g = &cg->g[i];
		if (g->dir < 0 || !(g->ctrls & OWS_CG_BIT(ctrl)))
			continue;
		const char *file = ctrl == OWS_CG_PIDS ? "pids.max"
				 : ctrl != OWS_CG_MEMORY ? NULL
				 : g->v2 ? "memory.max" : "memory.limit_in_bytes";
		/* g->path drops a parent too long for it: then there is nothing to read back. */
		if (!file || strncmp(g->path, CG_ROOT "/", strlen(CG_ROOT "/")) != 0 ||
		    snprintf(buf, len, "%s/%s", g->path, file) >= (int)len)
			return -1;
		return 0;
	}
	return -1;
}
