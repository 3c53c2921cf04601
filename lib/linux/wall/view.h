/*
 * The sandbox's view and network, planned once for both Linux providers
 * (view.c); init builds what is planned (root.c).  Linked into the setuid
 * launcher: the types here are what the host and the launcher plan alike.
 */
#ifndef OWS_LINUX_VIEW_H
#define OWS_LINUX_VIEW_H

#include <stdbool.h>
#include <sys/stat.h>

#include "init.h"

/* The guard's lists (guard.c): posix.h. */

/* What the sandbox holds besides the system, /dev, /proc and its own /tmp. */
struct ows__view {
	const ows__folder *folders;      /* the session's, at their own paths */
	size_t nfolders;
	const struct stat *folder_ids;   /* the launcher: what each folder was when checked, or NULL */
	const ows__guard_entry *guard;   /* inside read-write folders: bound over themselves */
	size_t nguard;
	const char *const *ro_dirs;      /* toolchains the person shares: read-only */
	size_t nro_dirs;
	const char *exe;                 /* a program made visible (owsbx, for ssh's tunnel), or NULL */
	const char *private_disk;        /* a private folder on disk, or NULL: init makes one in /tmp */
	const char *private_tmpfs;       /* where init makes it when /tmp is a session folder's: a
					  * tmpfs of its own there (ows__private_tmpfs_base), or NULL */
	const char *private_tmp;         /* in it, covered by a tmpfs of the account's sized as /tmp
					  * (p->tmpfs_bytes), or NULL */
	const char *const *masks;        /* inside the binds above, covered empty (mask.c), or NULL;
					  * in the host's namespaces, left out of the rules instead */
	size_t nmasks;
};

/*
 * The network decision, made once from the mode: the namespaces to clone
 * (a network namespace of its own unless `open`), Landlock's handled rights
 * and scopes, and the seccomp filter.  Call it first: the view depends on it.
 * OWS_EUNSUPPORTED, with the reason, when this kernel cannot build the wall;
 * `open_unscoped` (the config's open_without_scopes = partial) runs `open`
 * partial instead where Landlock has no scopes, listed in p->partial.  With
 * p->in_host_ns set, the plan for the host's own namespaces (no user
 * namespace to be had): what it keeps only in part goes to p->partial,
 * what it cannot keep (allowlist) is refused.
 */
OWS__HIDDEN int ows__net_plan(struct ows__plan *p, ows_net net, bool open_unscoped,
			      ows_error *err);

/*
 * What a session in `net` cannot keep on Landlock ABI `abi`: written to
 * out[OWS__MAX_PARTIAL], the count in *n.  OWS_EUNSUPPORTED, with the
 * reason and the ways out, when something is missing and `open_unscoped`
 * does not accept it.  The account provider's host asks this before it
 * starts the launcher, whose planner asks it again.
 */
OWS__HIDDEN int ows__net_partial(ows_net net, int abi, bool open_unscoped, ows__partial *out,
				 int *n, ows_error *err);

/* The plan runs without `promise` (a name of ows__partial), on purpose. */
OWS__HIDDEN bool ows__plan_is_partial(const struct ows__plan *p, const char *promise);
/* Appends a promise kept only in part to the plan's list (once; static strings). */
OWS__HIDDEN void ows__plan_partial(struct ows__plan *p, const char *promise, const char *why);
/*
 * Why a sandbox in the host's namespaces (p->in_host_ns: no user namespace
 * to be had) keeps `promise` only in part on Landlock ABI `abi`; NULL when
 * it keeps it.  A static string.
 */
OWS__HIDDEN const char *ows__host_ns_partial(int abi, const char *promise);

/* The promise `open` cannot keep without Landlock scopes. */
#define OWS__PROMISE_UNIX_OUTSIDE "unix_sockets.outside"

/*
 * The view's mounts, skeleton and Landlock rules; /tmp, /dev/shm and
 * v->private_tmp sized by p->tmpfs_bytes and p->tmpfs_inodes, set first.  Strings the plan points at
 * that `v` does not own are pushed to `keep`, which must outlive the clone.
 */
OWS__HIDDEN int ows__view_plan(struct ows__plan *p, ows__strv *keep, const struct ows__view *v,
			       ows_error *err);

/* `path` is `dir` or below it; every path is below "/". */
OWS__HIDDEN bool ows__path_under(const char *path, const char *dir);
/* `path` is or lies below a memory folder the view mounts for writing (/tmp,
 * /dev/shm): Landlock's write rule there holds for it too (guard: FIFOs). */
OWS__HIDDEN bool ows__view_under_memory_folder(const char *path);

/*
 * Where the sandbox's own private folder goes for `uid`: "/tmp" (the
 * sandbox's tmpfs), or "/run" when a folder of `folders` holds
 * /tmp/owsandbox-<uid> (`--rw /tmp`): the private folder made there would be
 * the host's, left behind and in the next session's way.  NULL when both are
 * a session folder's.
 */
OWS__HIDDEN const char *ows__private_tmpfs_base(const ows__folder *folders, size_t nfolders,
						uid_t uid);

#endif /* OWS_LINUX_VIEW_H */
