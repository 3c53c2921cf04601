/*
 * What a session may take of the machine (limits_plan.c): the process and
 * memory caps and the size of every memory file system the sandbox mounts
 * for writing, from the policy, else the config's [limits], else the
 * built-in defaults.  A limit the policy sets is demanded (refused where it
 * cannot be kept); a default is kept as well as the machine allows, and what
 * it keeps only in part is named in the session's partial list.
 */
#ifndef OWS_LINUX_LIMITS_PLAN_H
#define OWS_LINUX_LIMITS_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

typedef struct ows__limits {
	uint64_t processes;      /* tasks: a thread counts as one, as for pids.max and RLIMIT_NPROC */
	uint64_t memory_bytes;
	uint64_t tmpfs_bytes;    /* each of /tmp, /dev/shm (and account's private tmp) */
	uint64_t tmpfs_inodes;
	bool processes_demanded; /* set by the policy */
	bool memory_demanded;
} ows__limits;

/* Init writes this to its oom_score_adj: the OOM killer takes the sandbox's processes first. */
#define OWS__OOM_SCORE_ADJ 1000

OWS__HIDDEN void ows__limits_resolve(const ows_policy *policy, const ows_config *config,
				     ows__limits *out);
/* The tasks (threads included) whose real uid is `uid`, as RLIMIT_NPROC counts them. */
OWS__HIDDEN uint64_t ows__tasks_of_uid(uid_t uid);

/* The promises a default limit keeps only in part, and why (static strings). */
#define OWS__PROMISE_LIMIT_MEMORY "limits.memory"
#define OWS__PROMISE_LIMIT_PROCESSES "limits.processes"
#define OWS__PROMISE_LIMIT_TMPFS "limits.tmpfs"
OWS__HIDDEN extern const char ows__why_memory_uncapped[];
OWS__HIDDEN extern const char ows__why_processes_shared[];
OWS__HIDDEN extern const char ows__why_tmp_on_disk[];

#endif /* OWS_LINUX_LIMITS_PLAN_H */
