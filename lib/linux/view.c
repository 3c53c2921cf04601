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
 * This runs before clone, where allocating is fine: strings the plan points
 * at are kept in the caller's `keep` vector until init has started.
 */
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

bool ows__path_under(const char *path, const char *dir)
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

static int plan_system(struct ows__plan *p, ows__strv *keep, ows_error *err)
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
	}
	return rc;
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
			rc = add_rule(p, f->path, rw ? all : OWS_LL_FS_READ, err);
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
	/* A private folder on disk is bound in; one on the sandbox's /tmp is made there. */
	if (rc == 0 && v->private_disk) {
		rc = add_mount(p, (struct ows__mnt){.kind = OWS_M_BIND, .src = v->private_disk,
						   .dst = v->private_disk, .rw = true}, err);
		if (rc == 0)
			rc = add_rule(p, v->private_disk, all, err);
	}
	return rc;
}

int ows__view_plan(struct ows__plan *p, ows__strv *keep, const struct ows__view *v,
		   ows_error *err)
{
	int rc;
	if ((rc = plan_system(p, keep, err)) < 0 || (rc = plan_folders(p, keep, v, err)) < 0)
		return rc;
	qsort(p->mounts, (size_t)p->nmounts, sizeof(p->mounts[0]), cmp_mount);
	return plan_skeleton(p, keep, err);
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
	return ows__seccomp_build(&p->seccomp, net, err);
}
