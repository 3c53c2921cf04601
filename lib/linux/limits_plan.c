/*
 * A default session's limits (limits_plan.h).  The defaults are chosen so
 * that a developer's ordinary work never meets them and a runaway command
 * cannot take the machine down:
 *
 *   processes 4096: `make -j` on a 64-core machine runs a few hundred tasks,
 *     a test runner with a thread pool per worker a few thousand at most;
 *     pid_max is 32768 on many machines (the kernel's default), so a fork
 *     bomb stopped there leaves seven eighths of the pids to the machine.
 *   memory, half the machine's: a linker or a test suite may need
 *     gigabytes; the other half keeps the person's desktop and the host.
 *   each memory file system (/tmp, /dev/shm), a quarter of the machine's:
 *     what a build puts in /tmp; both full are the same half (with a cgroup
 *     their pages count in the memory cap as well).  Inodes are bounded by
 *     pages, since an empty file costs an inode and no page: a flood of
 *     empty files then costs at most about what the size allows.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "limits_plan.h"

#define DEFAULT_PROCESSES 4096
#define MIN_TMPFS_INODES 4096

const char ows__why_memory_uncapped[] =
	"no cgroup for the session (the person has no delegated cgroup v2 with the memory "
	"controller): its memory is not capped as a whole; the kernel's OOM killer takes "
	"the sandbox's processes first (oom_score_adj 1000), and /tmp and /dev/shm are sized";
const char ows__why_processes_shared[] =
	"no cgroup and no user namespace of its own: the process cap (RLIMIT_NPROC) counts "
	"the account's processes outside the session too; it was set to what they were "
	"when the session opened plus the session's cap";
const char ows__why_tmp_on_disk[] =
	"no mount namespace (user namespaces are off): the private folder and TMPDIR are "
	"on the host's disk, not on a sized tmpfs; set private_root to a file system with "
	"a quota to bound them";

static uint64_t machine_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 4ull << 30;
}

void ows__limits_resolve(const ows_policy *policy, const ows_config *config, ows__limits *out)
{
	const uint64_t ram = machine_memory(), page = (uint64_t)sysconf(_SC_PAGESIZE);
	memset(out, 0, sizeof(*out));
	out->processes = config && config->default_processes ? config->default_processes
							      : DEFAULT_PROCESSES;
	out->memory_bytes = config && config->default_memory_mb ? config->default_memory_mb << 20
								 : ram / 2;
	out->tmpfs_bytes = config && config->default_tmpfs_mb ? config->default_tmpfs_mb << 20
							       : ram / 4;
	if (policy && policy->has_limit[OWS_LIMIT_PROCESSES]) {
		out->processes = policy->limit[OWS_LIMIT_PROCESSES];
		out->processes_demanded = true;
	}
	if (policy && policy->has_limit[OWS_LIMIT_MEMORY_BYTES]) {
		out->memory_bytes = policy->limit[OWS_LIMIT_MEMORY_BYTES];
		out->memory_demanded = true;
	}
	out->tmpfs_inodes = out->tmpfs_bytes / (page ? page : 4096);
	if (out->tmpfs_inodes < MIN_TMPFS_INODES)
		out->tmpfs_inodes = MIN_TMPFS_INODES;
}

/* "Uid:\tREAL ..." and "Threads:\tN" of one /proc/PID/status. */
static uint64_t tasks_in(int proc, const char *pid, uid_t uid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "%s/status", pid);
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *u = strstr(buf, "\nUid:"), *t = strstr(buf, "\nThreads:");
	if (!u || !t || strtoul(u + 5, NULL, 10) != uid)
		return 0;
	return strtoull(t + 9, NULL, 10);
}

uint64_t ows__tasks_of_uid(uid_t uid)
{
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = proc >= 0 ? fdopendir(proc) : NULL;
	uint64_t total = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			total += tasks_in(proc, e->d_name, uid);
	if (d)
		closedir(d);
	else if (proc >= 0)
		close(proc);
	return total;
}
