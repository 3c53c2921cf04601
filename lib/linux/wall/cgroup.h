/*
 * A session's cgroups: its limits (memory, processes, CPU) and the kill of
 * its whole process tree.
 *
 * Both hierarchies are served: cgroup v2 (unified at /sys/fs/cgroup, or at
 * /sys/fs/cgroup/unified beside v1 on a hybrid machine) and cgroup v1 (one
 * mount per controller, /sys/fs/cgroup/<controller>).  Each controller comes
 * from v2 where the v2 root offers it, else from v1.  Only fixed paths and
 * the kernel's /proc/self/cgroup are read, never a path from a caller: the
 * setuid launcher links this file.
 *
 * A session's groups are named "owsandbox-<id>".  Where v2 is mounted there
 * is always a v2 group (also with no limit), for cgroup.kill.  Two places:
 *   OWS_CG_MACHINE    at the hierarchies' roots (root only: the launcher, a
 *                     root host);
 *   OWS_CG_DELEGATED  in the cgroup v2 subtree the caller owns (systemd's
 *                     user@UID.service delegation), beside the caller's own
 *                     cgroup under its nearest owned ancestor that can give
 *                     the controllers (v2 forbids controllers in a cgroup
 *                     that holds processes); a root caller gets MACHINE.
 * A controller missing from the parent's cgroup.subtree_control is enabled
 * there, marked by an empty "owsandbox+<controller>" cgroup beside ours, and
 * disabled again when the last session under that parent is gone.
 *
 * Lifecycle: create (host or launcher, before clone), join (in the child,
 * before it starts anything), joined (host, after clone), kill and remove at
 * the end.  join allocates nothing and takes no lock (init.h); the rest runs
 * on the host side.
 */
#ifndef OWS_LINUX_CGROUP_H
#define OWS_LINUX_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

enum { OWS_CG_MEMORY, OWS_CG_PIDS, OWS_CG_CPU, OWS_CG_NCTRL };
#define OWS_CG_BIT(c) (1u << (c))
#define OWS_CG_ALL (OWS_CG_BIT(OWS_CG_MEMORY) | OWS_CG_BIT(OWS_CG_PIDS) | OWS_CG_BIT(OWS_CG_CPU))

typedef enum ows__cgroup_place {
	OWS_CG_MACHINE,
	OWS_CG_DELEGATED,
} ows__cgroup_place;

typedef struct ows__cgroup_limits {
	uint64_t memory_bytes; /* 0: no limit, for each field; swap is kept at 0 */
	uint64_t processes;
	uint64_t cpu_percent;  /* of one core; 200 is two cores */
} ows__cgroup_limits;

#define OWS_CG_MAX_GROUPS (1 + OWS_CG_NCTRL) /* the v2 group and one per v1 controller */

struct ows__cgroup_group {
	int parent;     /* the folder it was made in; -1: slot unused */
	int dir;        /* the group itself, flock()ed while its session lives */
	int procs;      /* its cgroup.procs, for join; -1 once the host let go */
	bool v2;
	unsigned ctrls; /* OWS_CG_BIT()s limited in it */
	char path[512]; /* for messages only */
};

typedef struct ows__cgroup {
	char name[64];  /* "owsandbox-<id>" */
	int n;
	struct ows__cgroup_group g[OWS_CG_MAX_GROUPS];
} ows__cgroup;

/* A policy's memory, processes and CPU limits (wall time is the host's). */
OWS__HIDDEN ows__cgroup_limits ows__cgroup_limits_of(const ows_policy *policy);
/* The controllers limits ask for (a bit per non-zero field). */
OWS__HIDDEN unsigned ows__cgroup_wanted(const ows__cgroup_limits *lim);
/*
 * What a session at `place` could have for the controllers in `want`,
 * creating nothing: 0 with `have` filled ("cgroup v2 (memory, pids, cpu)"),
 * or OWS_EUNSUPPORTED with err saying why and the one thing to do.
 */
OWS__HIDDEN int ows__cgroup_probe(ows__cgroup_place place, unsigned want, char *have,
				  size_t len, ows_error *err);
/*
 * Makes the session's groups, sets the limits, and holds them until remove.
 * `id` is the session's id (letters and digits).  On failure nothing is left
 * and *cg is empty (remove is then a no-op).
 */
OWS__HIDDEN int ows__cgroup_create(ows__cgroup *cg, ows__cgroup_place place, const char *id,
				   const ows__cgroup_limits *lim, ows_error *err);
/* An empty handle: no group; join, kill and remove do nothing. */
OWS__HIDDEN void ows__cgroup_init(ows__cgroup *cg);
OWS__HIDDEN bool ows__cgroup_active(const ows__cgroup *cg);
/* In the child, first: moves the caller into every group.  0, or -1 with errno. */
OWS__HIDDEN int ows__cgroup_join(const ows__cgroup *cg);
/* The host's copies of what join writes, closed once the child has run. */
OWS__HIDDEN void ows__cgroup_joined(ows__cgroup *cg);
/* SIGKILL to every process in the groups: cgroup.kill, else freeze and kill. 0, or -1. */
OWS__HIDDEN int ows__cgroup_kill(const ows__cgroup *cg);
/*
 * Kills what is left, removes the groups (waiting a bounded time for the
 * kernel to let the last task go) and, when no session is left under the
 * parent, disables what create enabled there.  Idempotent: 0, or OWS_ESYS
 * when a group stayed (named in err).
 */
OWS__HIDDEN int ows__cgroup_remove(ows__cgroup *cg, ows_error *err);
/*
 * The file holding controller `ctrl`'s limit in the session's groups
 * (pids.max, memory.max or memory.limit_in_bytes), for the proof to read
 * back from inside: 0 with its path in buf, or -1 when it is not limited.
 */
OWS__HIDDEN int ows__cgroup_limit_file(const ows__cgroup *cg, int ctrl, char *buf, size_t len);
/* Removes owsandbox-<id> at the machine's roots, whose handle is gone (a killed launcher). */
OWS__HIDDEN void ows__cgroup_remove_stale(const char *id);

#endif /* OWS_LINUX_CGROUP_H */
