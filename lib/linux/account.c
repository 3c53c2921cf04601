/*
 * The `account` provider: the Windows design on Linux.
 *
 * Commands run as one of two hidden system accounts that setup created:
 * the closed account (`none` and `allowlist`), which an nftables table
 * keyed on its uid confines to loopback ports 47800-47899, and the open
 * account (`open`).  The person's session folders are granted to the
 * account with POSIX ACL entries (ows_acl_grant), and revoked at close.
 *
 * The host stays the person.  It starts the setuid launcher (cli/launch/launcher.c)
 * with the control socket as descriptor 3, an empty environment and a closed
 * set of arguments; the launcher plans the same view as the landlock
 * provider (view.c) and its init builds it (root.c): its own root, PID, IPC,
 * UTS and, for the closed account, network namespaces, the git guard, the
 * proxy's listener handed in; it becomes the account, restricts itself with
 * Landlock and seccomp, proves the wall and serves spawn requests over the
 * same protocol (init.c, ctl.c).  Closing the socket, or the host dying,
 * ends every process of the session.  The firewall keyed on the closed
 * account's uid stays as a second layer behind its own network namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/wall/cgroup.h"
#include "limits_plan.h"
#include "linux/wall/init.h"
#include "linux/wall/launch.h"
#include "proxy/proxy.h"
#include "linux/wall/view.h"

extern char **environ;

/* ------------------------------------------------------------ host state */

struct account_impl {
	ows__ctl ctl;
	ows_config config;       /* a copy: the launcher's path and cleanup need it */
	char *account;           /* the account's name */
	ows__journal *journal;   /* the session's grants; NULL when it has no folder */
};

static int config_copy(ows_config *dst, const ows_config *src, ows_error *err)
{
	memset(dst, 0, sizeof(*dst));
	dst->net = src->net;
	char **const d[] = {&dst->path, &dst->provider, &dst->private_root, &dst->state_dir,
			    &dst->root_runs_as, &dst->closed_user, &dst->open_user, &dst->group,
			    &dst->launcher, &dst->nft_table};
	const char *const s[] = {src->path, src->provider, src->private_root, src->state_dir,
				 src->root_runs_as, src->closed_user, src->open_user, src->group,
				 src->launcher, src->nft_table};
	for (size_t i = 0; i < OWS__ARRAY_LEN(d); i++)
		if (s[i] && !(*d[i] = ows__strdup(s[i], err)))
			return OWS_ENOMEM;
	for (size_t i = 0; i < src->hosts.len; i++)
		if (ows__strv_push(&dst->hosts, src->hosts.v[i], err) < 0)
			return OWS_ENOMEM;
	return 0;
}

/* Revokes every grant the session's journal lists, then removes the journal. */
static int revoke_all(struct account_impl *ai, ows_error *err)
{
	ows__journal *j = ai->journal;
	ai->journal = NULL;
	return ows__journal_close(j, err);
}

/* Runs `launcher cleanup --session ID`: what a killed launcher left behind. */
static void launcher_cleanup(struct account_impl *ai, ows_session *s)
{
	char *const argv[] = {"owsbx-launch", "cleanup", "--session", s->id, NULL};
	char *const envp[] = {NULL};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3 && null >= 0; i++)
			dup2(null, i);
		syscall(SYS_close_range, 3, ~0U, 0);
		execve(ai->config.launcher, argv, envp);
		_exit(127);
	}
	if (null >= 0)
		close(null);
	int st;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/*
 * Closing the socket ends init and every process of the session; the
 * launcher then removes the private folder and cgroups.  If it was stopped
 * before it could, `cleanup` does.  Idempotent.
 */
static void stop_launcher(struct account_impl *ai, ows_session *s)
{
	int st = -1;
	if (ai->ctl.fd >= 0)
		close(ai->ctl.fd);
	ai->ctl.fd = -1;
	if (ai->ctl.pid > 0) {
		while (waitpid(ai->ctl.pid, &st, 0) < 0 && errno == EINTR)
			;
		ai->ctl.pid = 0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			launcher_cleanup(ai, s);
	}
}

static void impl_free(struct account_impl *ai, ows_session *s)
{
	if (!ai)
		return;
	stop_launcher(ai, s);
	revoke_all(ai, NULL);
	ows__guard_watch_free(ai->ctl.guard); /* a failed open: ows__ctl_close never ran */
	free(ai->account);
	ows__config_release(&ai->config);
	free(ai);
}

/* ---------------------------------------------------------------- probes */

struct probes {
	int abstract_fd;
	char *canary;
};

static void probes_close(struct probes *pb)
{
	if (pb->abstract_fd >= 0)
		close(pb->abstract_fd);
	if (pb->canary)
		unlink(pb->canary);
	free(pb->canary);
	pb->canary = NULL;
	pb->abstract_fd = -1;
}

/* What the proof reaches for: a file planted in the home and an abstract socket. */
static void probes_open(struct probes *pb, const char *home, const char *id, ows_error *err)
{
	ows__probes_sweep(home);
	if (home)
		pb->canary = ows__canary_plant(home, id, err);
	char name[108];
	socklen_t len;
	pb->abstract_fd = ows__abstract_probe(id, name, sizeof(name), &len);
}

/* ---------------------------------------------------------------- launch */

static int cmp_folder(const void *a, const void *b)
{
	return strcmp(((const ows__folder *)a)->path, ((const ows__folder *)b)->path);
}

static int build_argv(ows__strv *av, const ows__cgroup_limits *lim, uint64_t tmpfs_mb,
		      const ows__folder *folders, size_t nf, const ows__guard_list *guard,
		      const ows__strv *masks, const char *id, ows_net net, bool partial,
		      const char *home, int proxy_port, ows_error *err)
{
	int rc = 0;
	const char *fixed[] = {"owsbx-launch", "session",
			       "--account", net != OWS_NET_OPEN ? "closed" : "open",
			       "--net", ows__net_name(net), "--session", id};
	for (size_t i = 0; i < OWS__ARRAY_LEN(fixed) && rc == 0; i++)
		rc = ows__strv_push(av, fixed[i], err);
	if (rc == 0 && partial && (rc = ows__strv_push(av, "--open-without-scopes", err)) == 0)
		rc = ows__strv_push(av, "partial", err);
	for (size_t i = 0; i < nf && rc == 0; i++) {
		rc = ows__strv_push(av, folders[i].access == OWS_ACCESS_RW ? "--rw" : "--ro", err);
		if (rc == 0)
			rc = ows__strv_push(av, folders[i].path, err);
	}
	if (rc == 0 && home && (rc = ows__strv_push(av, "--home", err)) == 0)
		rc = ows__strv_push(av, home, err);
	if (rc == 0 && lim->memory_bytes)
		rc = ows__strv_pushf(av, err, "--memory-mb=%llu",
				     (unsigned long long)((lim->memory_bytes + (1 << 20) - 1) >> 20));
	if (rc == 0 && lim->processes)
		rc = ows__strv_pushf(av, err, "--processes=%llu", (unsigned long long)lim->processes);
	if (rc == 0 && lim->cpu_percent)
		rc = ows__strv_pushf(av, err, "--cpu-percent=%llu", (unsigned long long)lim->cpu_percent);
	if (rc == 0)
		rc = ows__strv_pushf(av, err, "--tmpfs-mb=%llu", (unsigned long long)tmpfs_mb);
	if (rc == 0 && proxy_port)
		rc = ows__strv_pushf(av, err, "--proxy-port=%d", proxy_port);
	for (size_t i = 0; i < guard->len && rc == 0; i++) {
		rc = ows__strv_push(av, guard->v[i].pin ? "--pin" : "--guard", err);
		if (rc == 0)
			rc = ows__strv_push(av, guard->v[i].path, err);
	}
	for (size_t i = 0; i < masks->len && rc == 0; i++)
		if ((rc = ows__strv_push(av, "--mask", err)) == 0)
			rc = ows__strv_push(av, masks->v[i], err);
	const char *agent = getenv("SSH_AUTH_SOCK");
	struct stat st;
	if (rc == 0 && agent && agent[0] == '/' && strlen(agent) < 1000 &&
	    lstat(agent, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    (rc = ows__strv_push(av, "--probe-socket", err)) == 0)
		rc = ows__strv_push(av, agent, err);
	if (rc < 0)
		return rc;
	/* "--opt=value" above reads better in code; the launcher takes two words. */
	ows__strv split = {0};
	for (size_t i = 0; i < av->len && rc == 0; i++) {
		char *eq = strncmp(av->v[i], "--", 2) == 0 ? strchr(av->v[i], '=') : NULL;
		if (!eq) {
			rc = ows__strv_push(&split, av->v[i], err);
			continue;
		}
		*eq = '\0';
		rc = ows__strv_push(&split, av->v[i], err);
		if (rc == 0)
			rc = ows__strv_push(&split, eq + 1, err);
	}
	ows__strv_free(av);
	*av = split;
	return rc;
}

static int start_launcher(struct account_impl *ai, char *const argv[], ows_error *err)
{
	static char *const empty_env[] = {NULL};
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return ows__fail_sys(err, "socketpair", NULL, "cannot create the control socket");
	/* Above 2, so that placing it on 3 in the child never clobbers stdio. */
	int ctl = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	close(sv[1]);
	if (ctl < 0 || null < 0) {
		int rc = ows__fail_sys(err, "/dev/null", NULL, "cannot prepare the launcher");
		close(sv[0]);
		if (ctl >= 0)
			close(ctl);
		if (null >= 0)
			close(null);
		return rc;
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* Nothing of the host but the control socket crosses into the launcher. */
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || dup2(ctl, 3) < 0)
			_exit(127);
		syscall(SYS_close_range, 4, ~0U, 0);
		execve(ai->config.launcher, argv, empty_env);
		_exit(127);
	}
	int saved = errno;
	close(ctl);
	close(null);
	if (pid < 0) {
		close(sv[0]);
		errno = saved;
		return ows__fail_sys(err, "fork", NULL, "cannot start the launcher");
	}
	ai->ctl.fd = sv[0];
	ai->ctl.pid = pid;
	return 0;
}

/*
 * allowlist: ssh reaches its hosts through the proxy with `owsbx connect`,
 * when the account can run an owsbx: one in the system's folders, or in a
 * toolchain folder the person shares (~/.local/bin).  NULL when there is none.
 */
static char *tunnel_command(const ows__share *sh)
{
	static const char *const visible[] = {"/usr/", "/opt/", "/bin/", "/sbin/"};
	char *exe = ows__find_owsbx();
	bool seen = false;
	for (size_t i = 0; exe && i < OWS__ARRAY_LEN(visible); i++)
		seen |= strncmp(exe, visible[i], strlen(visible[i])) == 0;
	for (size_t i = 0; exe && i < sh->ro_dirs.len; i++) {
		size_t n = strlen(sh->ro_dirs.v[i]);
		seen |= strncmp(exe, sh->ro_dirs.v[i], n) == 0 && exe[n] == '/';
	}
	char *cmd = seen ? ows__asprintf(NULL, "%s connect %%h %%p", exe) : NULL;
	free(exe);
	return cmd;
}

static const char why_no_pids[] =
	"this kernel has no pids controller in cgroup v2 or v1: the session's processes are "
	"not capped (the accounts are every session's, so RLIMIT_NPROC would cap all the "
	"sessions of one together); the OOM killer takes the sandbox's processes first";
static const char why_no_memory[] =
	"this kernel has no memory controller in cgroup v2 or v1: the session's memory is "
	"not capped as a whole; the OOM killer takes the sandbox's processes first "
	"(oom_score_adj 1000), and /tmp, /dev/shm and TMPDIR are sized";

/* A default cap goes where the machine has its controller; false when it has none. */
static bool controller_here(int ctrl)
{
	char have[256];
	ows_error ignored;
	ows_error_clear(&ignored);
	return ows__cgroup_probe(OWS_CG_MACHINE, OWS_CG_BIT(ctrl), have, sizeof(have), &ignored) == 0;
}

/*
 * The launcher's cgroup limits.  One the policy sets and the launcher could
 * not set is refused here, before anything is granted, with the reason and
 * what to do (the launcher's own refusal has room for neither; it re-checks,
 * trusting nothing of this).  A default goes where this machine has the
 * controller, and is named in `partial` where it has none.
 */
static int plan_limits(const ows_policy *policy, const ows__limits *lim, ows__cgroup_limits *out,
		       ows__partial *partial, int *npartial, ows_error *err)
{
	char have[256];
	*out = ows__cgroup_limits_of(policy);
	if (ows__cgroup_wanted(out)) {
		int rc = ows__cgroup_probe(OWS_CG_MACHINE, ows__cgroup_wanted(out), have,
					   sizeof(have), err);
		if (rc < 0)
			return rc;
	}
	if (!out->processes && controller_here(OWS_CG_PIDS))
		out->processes = lim->processes;
	else if (!out->processes && *npartial < OWS__MAX_PARTIAL)
		partial[(*npartial)++] = (ows__partial){OWS__PROMISE_LIMIT_PROCESSES, why_no_pids};
	if (!out->memory_bytes && controller_here(OWS_CG_MEMORY))
		out->memory_bytes = lim->memory_bytes;
	else if (!out->memory_bytes && *npartial < OWS__MAX_PARTIAL)
		partial[(*npartial)++] = (ows__partial){OWS__PROMISE_LIMIT_MEMORY, why_no_memory};
	return 0;
}

static int account_open(ows_session *s, const ows_policy *policy, const ows_config *config,
			ows_error *err)
{
	struct probes pb = {.abstract_fd = -1};
	ows__guard_list guard = {0};
	ows__strv masks = {0};
	ows__share share = {0};
	ows__folder *folders = NULL;
	ows__strv av = {0};
	char *home = NULL;
	int rc;

	bool closed = s->net != OWS_NET_OPEN;
	/* Never without the wall: a broken setup refuses, naming the command that repairs it. */
	struct ows__machine setup;
	if ((rc = ows__machine_check(config, &setup, err)) < 0)
		return rc;
	/* What the launcher's planner will run without (the same question, view.c): refused
	 * here already unless the person chose it, as under landlock. */
	ows__partial partial[OWS__MAX_PARTIAL];
	int npartial;
	ows__limits lim;
	ows__cgroup_limits cg_lim;
	ows__limits_resolve(policy, config, &lim);
	if ((rc = ows__net_partial(s->net, ows__landlock_abi(), config->open_unscoped, partial,
				   &npartial, err)) < 0)
		return rc;
	const bool unscoped = npartial > 0; /* `open` run partial without Landlock scopes */
	if ((rc = plan_limits(policy, &lim, &cg_lim, partial, &npartial, err)) < 0)
		return rc;

	struct account_impl *ai = ows__calloc(1, sizeof(*ai), err);
	if (!ai)
		return OWS_ENOMEM;
	ai->ctl.fd = -1;
	ai->ctl.listener = -1;
	if ((rc = config_copy(&ai->config, config, err)) < 0 ||
	    !(ai->account = ows__strdup(closed ? setup.closed_user : setup.open_user, err))) {
		rc = rc < 0 ? rc : OWS_ENOMEM;
		goto fail;
	}
	/*
	 * Grants a killed host left behind go first.  Cleanup touches only
	 * journals whose lock is free, so live sessions keep theirs; what it
	 * cannot revoke stays journaled for the next try and does not stop us.
	 */
	ows_machine_cleanup(config, NULL);
	struct passwd pwbuf, *me = NULL;
	char pwstr[4096];
	if (getpwuid_r(getuid(), &pwbuf, pwstr, sizeof(pwstr), &me) != 0)
		me = NULL; /* reentrant: other threads of the host open sessions too */
	if (me && me->pw_dir && (home = realpath(me->pw_dir, NULL)) && strcmp(home, "/") == 0) {
		free(home);
		home = NULL;
	}
	if (home)
		for (size_t i = 0; i < policy->nfolders; i++)
			if ((rc = ows__check_folder_vs_home(policy->folders[i].path, home, err)) < 0)
				goto fail;
	/* The session owns it from here: freed with it, also on failure. */
	char *priv = s->private_dir = ows__asprintf(err, "%s/%s", setup.sandboxes_dir, s->id);
	char priv_home[4200];
	snprintf(priv_home, sizeof(priv_home), "%s/home", priv ? priv : "");
	/* What the person shares: copies go in through init, toolchains are granted read-only. */
	if (!priv || (rc = ows__share_collect(config, policy, home, priv_home, &share, err)) < 0) {
		rc = rc < 0 ? rc : OWS_ENOMEM;
		goto fail;
	}
	size_t nf = policy->nfolders + share.ro_dirs.len;
	if (nf > OWS_LAUNCH_MAX_FOLDERS) {
		rc = ows__fail(err, OWS_EINVAL, E2BIG, "folders", "use fewer session folders or "
			       "shared toolchains", "the account provider takes at most %d folders, "
			       "toolchains included (%zu asked)", OWS_LAUNCH_MAX_FOLDERS, nf);
		goto fail;
	}
	/* Journaled before granted: a host killed from here on leaves nothing for good. */
	if (nf && (rc = ows__journal_open(config, s->id, &ai->journal, err)) < 0)
		goto fail;
	/* A folder goes back into place after any folder above it. */
	if (!(folders = ows__calloc(nf + 1, sizeof(*folders), err))) {
		rc = OWS_ENOMEM;
		goto fail;
	}
	memcpy(folders, policy->folders, policy->nfolders * sizeof(*folders));
	for (size_t i = 0; i < share.ro_dirs.len; i++)
		folders[policy->nfolders + i] = (ows__folder){share.ro_dirs.v[i], OWS_ACCESS_RO};
	qsort(folders, nf, sizeof(*folders), cmp_folder);

	/* No traverse entries above a folder: the sandbox's root holds the folder itself,
	 * so the account never walks the person's home, and a folder may be anywhere. */
	for (size_t i = 0; i < nf; i++) {
		const ows__folder *f = &folders[i];
		if ((rc = ows_acl_grant(config, s->id, ai->account, f->path, f->access, NULL,
					err)) < 0)
			goto fail;
		if (f->access == OWS_ACCESS_RW &&
		    (rc = ows__guard_add(&guard, f->path, config, &ai->ctl.guard, err)) < 0)
			goto fail;
		if (f->access != OWS_ACCESS_RW && ows__view_under_memory_folder(f->path) &&
		    (rc = ows__guard_watch_fifos(&ai->ctl.guard, f->path, err)) < 0)
			goto fail;
	}

	ows__strv paths = {0};
	rc = ows__session_layout(s, policy, priv, '/', ai->account, "account", &paths, err);
	ows__strv_free(&paths);
	if (rc < 0 || (rc = ows__share_apply(s, &share, err)) < 0)
		goto fail;

	/* allowlist: as under landlock, init listens in the sandbox's own network on the
	 * proxy's port and hands that socket over; the proof reaches the proxy through it. */
	int proxy_port = 0;
	char *tunnel = s->net == OWS_NET_ALLOWLIST ? tunnel_command(&share) : NULL;
	if (tunnel && (rc = ows__share_ssh_proxy(&share, tunnel, err)) < 0) {
		free(tunnel);
		goto fail;
	}
	if (s->net == OWS_NET_ALLOWLIST)
		rc = ows__session_start_proxy(s, policy, config, &share.hosts, tunnel, true,
					      &proxy_port, err);
	if (rc == 0)
		ows__share_inject(s, &share);
	free(tunnel);
	if (rc < 0)
		goto fail;
	probes_open(&pb, home, s->id, err);
	/* Read-only means no FIFO written and no socket reached there either; the
	 * ACL entries do that only on nodes the person owns.  A read-write folder's
	 * FIFOs are covered too: a pipe to whoever opens them outside. */
	if ((rc = ows__mask_read_only(folders, nf, NULL, 0, OWS_LAUNCH_MAX_MASKS, &masks,
				      err)) < 0 ||
	    (rc = ows__guard_fifos_known(ai->ctl.guard, OWS_LAUNCH_MAX_MASKS - masks.len, &masks,
					 err)) < 0 ||
	    (rc = build_argv(&av, &cg_lim, (lim.tmpfs_bytes + (1 << 20) - 1) >> 20, folders, nf,
			     &guard, &masks, s->id, s->net, unscoped, home, proxy_port, err)) < 0 ||
	    (rc = start_launcher(ai, av.v, err)) < 0)
		goto fail;
	rc = ows__ctl_receive_proof(s, &ai->ctl, "account", err);
	probes_close(&pb);
	if (rc == 0)
		rc = ows__ctl_adopt_listener(s, &ai->ctl, err);
	if (rc == 0 && share.nfiles)
		rc = ows__ctl_send_share(s, &ai->ctl, share.files, share.nfiles, err);
	if (rc < 0)
		goto fail;
	ows__share_free(&share);
	ows__guard_free(&guard);
	ows__strv_free(&masks);
	s->enforcement = "full";
	memcpy(s->partial, partial, sizeof(partial));
	s->npartial = npartial;
	s->impl = ai;
	ows__strv_free(&av);
	free(folders);
	free(home);
	return 0;
fail:
	ows__share_free(&share);
	ows__guard_free(&guard);
	ows__strv_free(&masks);
	probes_close(&pb);
	impl_free(ai, s);
	ows__strv_free(&av);
	free(folders);
	free(home);
	return rc;
}

static int account_close(ows_session *s, ows_error *err)
{
	struct account_impl *ai = s->impl;
	if (!ai)
		return 0;
	/* Every process first, then the grants: nothing runs that still holds one.  The
	 * guard's last sweep waits for the handback: until then, a folder the account made
	 * and closed (a 0700 one holding a new .git) is not the person's to search. */
	ows__guard_watch *guard = ai->ctl.guard;
	ai->ctl.guard = NULL;
	stop_launcher(ai, s);
	ows__ctl_close(s, &ai->ctl); /* marks every handle as ended */
	int rc = revoke_all(ai, err);
	/* Modes not: the plan recorded them granted (an ACL's mask shows in the group bits),
	 * and the account, no owner, cannot change them; the revoke put back the person's. */
	ows__guard_sweep(guard, s->id, &s->moved_aside, NULL, NULL);
	ows__guard_watch_free(guard);
	impl_free(ai, s);
	s->impl = NULL;
	return rc;
}

static int account_describe(const ows_policy *policy, const ows_config *config, ows_net net,
			 struct json_t *doc, ows_error *err)
{
	return ows__linux_describe(policy, config, net, true, doc, err);
}

const ows__provider ows__account_provider = {
	.name = "account",
	.open = account_open,
	.spawn = ows__ctl_op_spawn, /* the impl begins with its ows__ctl */
	.wait = ows__ctl_op_wait,
	.kill = ows__ctl_op_kill,
	.stop = ows__ctl_op_stop,
	.close = account_close,
	.describe = account_describe,
};

bool ows__account_ready(const ows_config *config, char *why, size_t why_len)
{
	ows_config defaults;
	ows_error e;
	ows_error_clear(&e);
	struct ows__machine m;
	if (!config) {
		if (ows__config_machine(&defaults, &e) < 0) {
			snprintf(why, why_len, "%s: %s", e.what, e.where);
			return false;
		}
		config = &defaults;
	}
	/* Set up for this caller: the record, the accounts, the launcher, the group. */
	bool ok = ows__machine_check(config, &m, &e) == 0;
	if (ok && !m.proved) {
		ok = false;
		snprintf(why, why_len, "setup has not proved the wall yet: %s",
			 "run `sudo owsbx machine sandbox setup` again");
	} else if (ok) {
		snprintf(why, why_len, "the landlock provider's wall as accounts %s and %s "
			 "(setuid launcher %s), with ACL grants and nftables by uid besides",
			 m.closed_user, m.open_user, m.launcher);
	} else {
		snprintf(why, why_len, "%s (%s): %s", e.what, e.where, e.hint);
	}
	if (config == &defaults)
		ows__config_release(&defaults);
	return ok;
}
