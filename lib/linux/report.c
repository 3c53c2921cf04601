/*
 * What this machine can enforce, provider by provider (`owsbx report`, the own setup's
 * report entry), and whether the landlock provider's user namespaces work here.  Reads
 * and probes only: the probe's throwaway child has ended when a call returns.
 */
#include <errno.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "linux/wall/cgroup.h"
#include "limits_plan.h"
#include "linux.h"
#include "linux/wall/view.h"

/*
 * Tries the namespaces the landlock provider creates, in a throwaway child,
 * and what its init does first in them: a namespace without capabilities
 * (Ubuntu's AppArmor restriction) does not count.
 */
bool ows__userns_works(char *why, size_t why_len, int *failed_step)
{
	int flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET;
	if (geteuid() != 0)
		flags |= CLONE_NEWUSER;
	int sys_errno;
	int step = ows__userns_probe(flags, &sys_errno);
	*failed_step = step;
	if (step != OWS__USERNS_OK) {
		ows__userns_facts f;
		char fix[256], cause[384];
		ows__userns_facts_read(&f, step, sys_errno);
		ows__userns_explain(&f, cause, sizeof(cause), fix, sizeof(fix));
		snprintf(why, why_len, "%s; to fix: %s", cause, fix);
		return false;
	}
	snprintf(why, why_len, "%s, PID, mount, IPC, UTS and network namespaces",
		 flags & CLONE_NEWUSER ? "unprivileged user" : "root-created");
	return true;
}

static void add(json_t *caps, const char *name, const char *status, const char *why)
{
	json_array_append_new(caps, json_pack("{s:s, s:s, s:s}", "name", name, "status", status,
					      "why", why));
}

/* One provider's side of the limits row: what its sessions' cgroups would be, or why none. */
static bool limits_of(ows__cgroup_place place, const char *name, char *buf, size_t len)
{
	char have[PATH_MAX + 128];
	ows_error e;
	ows_error_clear(&e);
	if (ows__cgroup_probe(place, OWS_CG_ALL, have, sizeof(have), &e) == 0) {
		snprintf(buf, len, "%s: %s", name, have);
		return true;
	}
	snprintf(buf, len, "%s: unavailable: %s (%s); %s", name, e.what, e.where, e.hint);
	return false;
}

/* Enforced when both providers can set memory, process and CPU limits; partial when one can. */
static const char *limits_row(bool account, const char *accwhy, char *why, size_t len)
{
	char acc[1024], ll[PATH_MAX + 1024];
	bool a = account && limits_of(OWS_CG_MACHINE, "account", acc, sizeof(acc));
	if (!account)
		snprintf(acc, sizeof(acc), "account: unavailable: %s", accwhy);
	bool l = limits_of(OWS_CG_DELEGATED, "landlock", ll, sizeof(ll));
	snprintf(why, len, "%s; %s", acc, ll);
	return a && l ? "enforced" : a || l ? "partial" : "unavailable";
}

static bool controller_at(ows__cgroup_place place, int ctrl)
{
	char have[PATH_MAX + 128];
	ows_error ignored;
	ows_error_clear(&ignored);
	return ows__cgroup_probe(place, OWS_CG_BIT(ctrl), have, sizeof(have), &ignored) == 0;
}

/*
 * What a session without limits of its own gets (limits_plan.c): enforced
 * when each provider caps its processes and memory as a whole; partial when
 * landlock has no cgroup for memory (the OOM killer's order only).
 */
static const char *default_limits_row(const ows_config *config, bool account, char *why,
				      size_t len)
{
	ows__limits lim;
	ows__limits_resolve(NULL, config, &lim);
	bool ll_mem = controller_at(OWS_CG_DELEGATED, OWS_CG_MEMORY);
	bool ll_pids = controller_at(OWS_CG_DELEGATED, OWS_CG_PIDS);
	bool acc = account && controller_at(OWS_CG_MACHINE, OWS_CG_MEMORY) &&
		   controller_at(OWS_CG_MACHINE, OWS_CG_PIDS);
	snprintf(why, len,
		 "a session without limits of its own: %llu processes (landlock: %s; account: "
		 "the cgroup's pids.max), %llu MiB of memory (landlock: %s; account: the cgroup's), "
		 "/tmp and /dev/shm of %llu MiB each (account: its TMPDIR too); the OOM killer "
		 "takes the sandbox's processes first (oom_score_adj 1000); [limits] in the "
		 "config sets them",
		 (unsigned long long)lim.processes,
		 ll_pids ? "its cgroup's pids.max" : "RLIMIT_NPROC in its own user namespace",
		 (unsigned long long)(lim.memory_bytes >> 20),
		 ll_mem ? "its cgroup's" : "not capped as a whole: no delegated cgroup",
		 (unsigned long long)(lim.tmpfs_bytes >> 20));
	return ll_mem && (acc || !account) ? "enforced" : "partial";
}

/* How the landlock provider walls a session here. */
enum wall {
	WALL_NONE,    /* it cannot: no Landlock or seccomp, or no namespaces for a root host */
	WALL_HOST_NS, /* no user namespace: Landlock and seccomp in the host's namespaces */
	WALL_OWN_NS,  /* its own root, network, PID and IPC namespaces */
};

/* One promise: its status and why for a wall in its own namespaces and in the host's. */
static void add_promise(json_t *caps, enum wall w, const char *name, const char *own_status,
			const char *own_why, const char *host_status, const char *host_why)
{
	if (w == WALL_NONE)
		add(caps, name, "unavailable", "the landlock provider cannot run here (see above)");
	else if (w == WALL_OWN_NS)
		add(caps, name, own_status, own_why);
	else
		add(caps, name, host_status, host_why);
}

/* A promise the host's namespaces keep only in part (before some ABI): view.c says why. */
static void add_host_partial(json_t *caps, enum wall w, int abi, const char *name,
			     const char *own_why, const char *host_kept_why)
{
	const char *why = ows__host_ns_partial(abi, name);
	add_promise(caps, w, name, "enforced", own_why, why ? "partial" : "enforced",
		    why ? why : host_kept_why);
}

/* network.open in its own namespaces: Landlock's scope keeps abstract sockets out (ABI 6). */
static void add_open_row(json_t *caps, enum wall w, int abi, bool unscoped_ok)
{
	if (w != WALL_OWN_NS || abi >= 6)
		add_promise(caps, w, "network.open", "enforced",
			    "any host; abstract sockets outside stay unreachable (Landlock scope)",
			    "enforced",
			    "any host; no unix socket can be made, so the person's named and abstract "
			    "ones stay unreachable");
	else if (unscoped_ok)
		add(caps, "network.open", "partial",
		    "abstract unix sockets outside reachable (needs Landlock ABI 6, Linux 6.12); "
		    "run partial because the config says open_without_scopes = partial");
	else
		add(caps, "network.open", "unavailable",
		    "refused: abstract unix sockets outside would be reachable (needs Landlock "
		    "ABI 6, Linux 6.12); open_without_scopes = partial in [sandbox] of the "
		    "config runs it partial");
}

static void add_landlock_rows(json_t *caps, enum wall w, int abi, bool unscoped_ok,
			      const char *allowlist_refused)
{
	add_promise(caps, w, "files.session_folders", "enforced",
		    "session folders at their own paths; system read-only; home absent", "enforced",
		    "Landlock rules: session folders at their own paths; the system read-only; "
		    "nothing else");
	add_promise(caps, w, "files.home_hidden", "enforced",
		    "the home is not in the sandbox's root; Landlock grants nothing there", "enforced",
		    "Landlock grants nothing in the home: it cannot be listed or read");
	add_host_partial(caps, w, abi, "files.outside_metadata",
			 "outside the session folders nothing is in the sandbox's root", "");
	add_host_partial(caps, w, abi, "files.read_only_channels",
			 "landlock covers each FIFO and unix socket of a read-only folder with an "
			 "empty file; one made outside after the session opened is refused when "
			 "opened or connected to (the command's reaper makes its opens and connects)",
			 "");
	add_promise(caps, w, "files.read_write_fifos", "enforced",
		    "each FIFO of a read-write folder is covered with an empty file at open, and "
		    "none can be made there (Landlock); while one the person made after the "
		    "session opened is there, no command starts; a command already running cannot "
		    "open it (its reaper makes every open, and refuses a FIFO not the sandbox's own)",
		    "partial", ows__host_ns_partial(abi, "files.read_write_fifos"));
	if (geteuid() == 0)
		add_promise(caps, w, "files.supplementary_groups", "enforced",
			    "root host: commands keep only their primary group", "enforced", "");
	else
		add_promise(caps, w, "files.supplementary_groups", "partial",
			    "landlock keeps the person's groups (a user namespace cannot drop them): what "
			    "only they read or search in /etc and /opt is covered; /usr and session "
			    "folders are not walked.  The account provider has none of them",
			    "partial",
			    "landlock keeps the person's groups (no privilege to drop them): what only "
			    "they read or search in /etc and /opt gets no Landlock right; /usr and "
			    "session folders are not walked.  The account provider has none of them");
	add_host_partial(caps, w, abi, "files.git_guard",
			 "what git and shells run from a read-write folder is bound read-only over "
			 "itself, the git folder pinned; names that appear are moved aside", "");
	add_promise(caps, w, "network.none", "enforced",
		    "own network namespace; only unix sockets may be created", "enforced",
		    abi >= 4 ? "seccomp lets no socket be created but a socketpair; Landlock refuses "
			       "TCP bind and connect too"
			     : "seccomp lets no socket be created but a socketpair");
	add_open_row(caps, w, abi, unscoped_ok);
	if (w == WALL_OWN_NS && allowlist_refused)
		add(caps, "network.allowlist", "unavailable", allowlist_refused);
	else
		add_promise(caps, w, "network.allowlist", "enforced",
			    "own network namespace; the one way out is the session's allow-list "
			    "proxy", "unavailable",
			    "needs a network namespace of its own, which needs a user namespace here "
			    "(Landlock's TCP rules name ports, not addresses); the account provider "
			    "makes one without");
	add_promise(caps, w, "unix_sockets.outside", "enforced",
		    abi >= 6 ? "ssh-agent, session bus and docker sockets are not in the sandbox's root; "
			       "abstract sockets: own network namespace, Landlock scope in `open`"
			     : "ssh-agent, session bus and docker sockets are not in the sandbox's root; "
			       "abstract sockets: own network namespace (`none`, `allowlist`; `open`: "
			       "see network.open)",
		    "enforced",
		    "seccomp lets no unix socket be created (socketpair only): the person's named and "
		    "abstract sockets stay unreachable");
	add_promise(caps, w, "ipc.outside", "enforced", "own IPC namespace", "enforced",
		    "seccomp refuses SysV IPC and POSIX message queues; /dev/shm is not granted");
	add_host_partial(caps, w, abi, "signals.outside",
			 abi >= 6 ? "own PID namespace and Landlock signal scope"
				  : "own PID namespace: no process outside has a PID inside",
			 "Landlock signal scope (ABI 6); each command a Landlock layer below init");
	add_host_partial(caps, w, abi, "processes.outside_visible",
			 "own PID namespace and /proc: only the session's processes", "");
	add_promise(caps, w, "processes.end_with_session", "enforced",
		    "every process is in the session's PID namespace, which ends with it", "enforced",
		    "init is a child subreaper in a session of its own: it ends every descendant at "
		    "close and when the host dies; commands cannot signal it (Landlock scope, or "
		    "seccomp by pid before ABI 6); a cgroup v2 the person has delegated also ends it "
		    "with cgroup.kill");
}

int ows__report_json(const ows_config *config, char **out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	*out = NULL;
	json_t *caps = json_array();
	if (!caps)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	char why[800];
	int abi = ows__landlock_abi();
	bool seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	char nswhy[768];
	int nsstep;
	bool ns = ows__userns_works(nswhy, sizeof(nswhy), &nsstep);
	/* Root's run makes its namespaces without a probe, and only allowlist brings
	 * loopback up: without CAP_NET_ADMIN (a container) the others still run. */
	bool no_loopback = !ns && geteuid() == 0 && nsstep == OWS__USERNS_LOOPBACK;
	/* A refused /proc is not worked around in the host's namespaces (landlock.c). */
	bool no_proc = !ns && nsstep == OWS__USERNS_PROC;

	/* Without Landlock, why and the one thing to do (ows__landlock_unavailable() refuses with it). */
	if (abi >= 1) {
		snprintf(why, sizeof(why), "Landlock ABI %d", abi);
	} else {
		char llwhy[384], llfix[384];
		ows__landlock_missing(llwhy, sizeof(llwhy), llfix, sizeof(llfix));
		snprintf(why, sizeof(why), "%s: %s", llwhy, llfix);
	}
	add(caps, "landlock.filesystem", abi >= 1 ? "enforced" : "unavailable", why);
	/* What an older ABI lacks, the namespaces keep (view.c); only `open` is partial. */
	add(caps, "landlock.tcp", abi >= 4 ? "enforced" : "unavailable",
	    abi >= 4 ? "TCP bind and connect rules (ABI 4)"
		     : "needs Landlock ABI 4 (Linux 6.7); `none` keeps TCP out without it (its own "
		       "network, seccomp allows only unix sockets)");
	add(caps, "landlock.scopes", abi >= 6 ? "enforced" : "unavailable",
	    abi >= 6 ? "abstract unix sockets and signals scoped (ABI 6)"
		     : "needs Landlock ABI 6 (Linux 6.12); without it the own PID namespace keeps "
		       "signals in, and the own network namespace of `none` and `allowlist` keeps "
		       "abstract sockets out; `open` has none (see network.open)");
	add(caps, "seccomp", seccomp ? "enforced" : "unavailable",
	    seccomp ? "default deny (the calls Docker allows); sockets, io_uring, namespaces, keyring, TIOCSTI, set-ID and world-writable modes filtered"
		    : "the kernel has no seccomp filter support");
	add(caps, "namespaces", ns ? "enforced" : no_loopback ? "partial" : "unavailable", nswhy);

	/* Without a usable user namespace an unprivileged host's sandbox runs in its own
	 * namespaces (view.c): each row says what Landlock and seccomp keep there. */
	bool base = abi >= 1 && seccomp && (ns || no_loopback);
	enum wall w = base ? WALL_OWN_NS
		: abi >= 1 && seccomp && geteuid() != 0 && !no_proc ? WALL_HOST_NS : WALL_NONE;
	if (w == WALL_HOST_NS)
		snprintf(why, sizeof(why), "no user namespace (see namespaces): Landlock and seccomp "
			 "in the host's namespaces; the partial rows say what that does not keep");
	else
		snprintf(why, sizeof(why), "%s", base ? "same account, own root, Landlock, seccomp; "
			 "needs no setup" : "needs Landlock, seccomp and namespaces (see above)");
	add(caps, "provider.landlock", w == WALL_OWN_NS ? "enforced" : w ? "partial" : "unavailable",
	    why);
	add_landlock_rows(caps, w, abi, config && config->open_unscoped,
			  no_loopback ? nswhy : NULL);
	add(caps, "secrets.environment", "enforced",
	    "minimal environment; secret-looking names never passed");
	add(caps, "limits.wall_time", "enforced", "the host ends the command when time runs out");
	char accwhy[512];
	/* The launcher is root: its namespaces need no unprivileged user namespace. */
	bool account = abi >= 1 && seccomp && ows__account_ready(config, accwhy, sizeof(accwhy));
	if (abi < 1 || !seccomp)
		snprintf(accwhy, sizeof(accwhy), "needs Landlock and seccomp (see above)");
	char limwhy[2 * PATH_MAX + 2048];
	const char *limits = limits_row(account, accwhy, limwhy, sizeof(limwhy));
	add(caps, "limits.memory_processes_cpu", limits, limwhy);
	limits = default_limits_row(config, account, limwhy, sizeof(limwhy));
	add(caps, "limits.default", limits, limwhy);
	if (geteuid() == 0)
		add(caps, "root_host", base ? "enforced" : "unavailable",
		    "under a root host, commands run as SUDO_UID, run_as, or the config's "
		    "root_runs_as, with no capabilities");
	add(caps, "provider.account", account ? "enforced" : "unavailable", accwhy);
	add(caps, "provider.direct", "partial", "no wall at all; used only when asked for by name");

	json_t *root = json_pack("{s:s, s:s, s:i, s:o}", "version", OWS_VERSION, "config",
				 config ? ows_config_path(config) : "", "landlock_abi", abi,
				 "capabilities", caps);
	*out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}
