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
 * Where the kernel gives an unprivileged host no usable user namespace,
 * init is started in the host's own namespaces instead (plan_namespaces):
 * the view is then Landlock's rules alone, the private folder is on disk,
 * seccomp refuses what the namespaces would have kept out, and init, a
 * child subreaper, ends every descendant itself.  What that keeps only in
 * part is named on every event (view.c's host_ns_partial).
 *
 * The view is planned by view.c and built by init in root.c, the same for
 * the account provider; this file says who runs inside and starts init.
 */
#include <errno.h>
#include <limits.h>
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

#include "linux/wall/cgroup.h"
#include "linux/wall/init.h"
#include "limits_plan.h"
#include "linux/wall/view.h"
#include "proxy/proxy.h"

extern char **environ;

/* ------------------------------------------------------------ host: plan */

struct landlock_impl {
	ows__ctl ctl;
	ows__private pv;
	ows__strv strings;      /* plan strings the host must keep until clone */
	ows__share share;       /* what the person shares, until clone */
	ows__guard_list guard;  /* what git runs in the read-write folders, until clone */
	ows__strv masks;        /* what the view covers empty (mask.c), until clone */
	ows__cgroup cgroup;     /* the limits, in the person's delegated cgroup; or none */
	/* A root host: who commands run as and what chose it, for a refusal to name. */
	char run_as[64];
	const char *run_as_from;
};

static const char *keep(struct landlock_impl *li, const char *s, ows_error *err)
{
	if (ows__strv_push(&li->strings, s, err) < 0)
		return NULL;
	return li->strings.v[li->strings.len - 1];
}

/*
 * Another account than `uid` (`user`) has `gid` for its primary group or is
 * a member of it, in the machine's own account files: group write then
 * opens a file to someone else.  Debian gives each person a group of their
 * own; a distribution's `users` group, or a team's, is shared.
 */
static bool group_shared(gid_t gid, uid_t uid, const char *user)
{
	struct group gr, *g = NULL;
	char buf[16384];
	if (getgrgid_r(gid, &gr, buf, sizeof(buf), &g) == 0 && g)
		for (char **m = g->gr_mem; *m; m++)
			if (!user || strcmp(*m, user) != 0)
				return true;
	FILE *f = fopen("/etc/passwd", "re");
	bool shared = false;
	struct passwd pw, *res;
	while (f && !shared && fgetpwent_r(f, &pw, buf, sizeof(buf), &res) == 0)
		shared = pw.pw_gid == gid && pw.pw_uid != uid;
	if (f)
		fclose(f);
	return shared;
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
		li->run_as_from = "the policy's run_as";
		if (!who && sudo_uid && *sudo_uid && strcmp(sudo_uid, "0") != 0) {
			snprintf(sudo, sizeof(sudo), "%s", sudo_uid);
			who = sudo;
			li->run_as_from = "SUDO_UID, the account behind sudo";
		}
		if (!who) {
			who = config->root_runs_as ? config->root_runs_as : "nobody";
			li->run_as_from = config->path && config->path[0]
						  ? "the config's root_runs_as"
						  : "the default; no machine config sets root_runs_as";
		}
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
		snprintf(li->run_as, sizeof(li->run_as), "%s", res->pw_name);
		p->uid = res->pw_uid;
		p->gid = res->pw_gid;
		/* Only the primary group: nothing is read through a supplementary one. */
		p->groups[0] = res->pw_gid;
		p->ngroups = 1;
	} else if (getpwuid_r(p->uid, &pw, buf, sizeof(buf), &res) != 0 || !res) {
		res = NULL;
	}
	*home = NULL;
	*user = NULL;
	p->group_shared = group_shared(p->gid, p->uid, res ? res->pw_name : NULL);
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

/*
 * Limits go in a cgroup of the session's own, made in the cgroup v2 subtree
 * systemd delegates to the person (a root host: at the machine's roots);
 * init joins it before it starts anything, and it is killed and removed at
 * close.  The default caps go there too where one can be had; a limit the
 * policy sets is refused where none can: the reason and what to do come
 * from cgroup.c.  Without a cgroup the defaults are kept by plan_caps.
 */
static int plan_limits(struct landlock_impl *li, const ows_policy *policy,
		       const ows__limits *lim, const char *id, ows_error *err)
{
	ows__cgroup_limits demanded = ows__cgroup_limits_of(policy);
	ows__cgroup_limits all = demanded;
	all.memory_bytes = lim->memory_bytes;
	all.processes = lim->processes;
	ows_error why;
	ows_error_clear(&why);
	if (ows__cgroup_create(&li->cgroup, OWS_CG_DELEGATED, id, &all, &why) == 0 ||
	    !ows__cgroup_wanted(&demanded))
		return 0;
	ows_error_clear(&why);
	int rc = ows__cgroup_create(&li->cgroup, OWS_CG_DELEGATED, id, &demanded, &why);
	if (rc < 0)
		ows__fail(err, rc, why.sys_errno, why.where, why.hint[0] ? why.hint : NULL,
			  "the landlock provider cannot enforce the limits: %s", why.what);
	return rc;
}

/* A limit of the session's cgroup for the proof to read back; false when there is none. */
static bool plan_limit_file(struct ows__plan *p, struct landlock_impl *li, int ctrl,
			    const char *what, uint64_t want)
{
	char path[PATH_MAX];
	const char *k;
	if (ows__cgroup_limit_file(&li->cgroup, ctrl, path, sizeof(path)) != 0 ||
	    !(k = keep(li, path, NULL)))
		return false;
	p->limit_files[p->nlimit_files++] = (struct ows__limit_file){what, k, want};
	return true;
}

/*
 * The caps init sets and the proof reads back, once the namespaces are
 * known.  Processes: the cgroup's pids.max, else RLIMIT_NPROC, which in a
 * user namespace of the session's own counts the session's tasks alone
 * (the kernel counts it per user and namespace) and elsewhere counts the
 * account's other processes too (partial).  Memory: the cgroup's, else
 * not capped as a whole (partial); the OOM killer takes the sandbox first
 * either way.  /tmp and /dev/shm are sized (view.c); in the host's
 * namespaces nothing is mounted and TMPDIR is on disk (partial).
 */
static void plan_caps(struct ows__plan *p, struct landlock_impl *li, const ows__limits *lim)
{
	p->oom_score_adj = OWS__OOM_SCORE_ADJ;
	p->tmpfs_bytes = lim->tmpfs_bytes;
	p->tmpfs_inodes = lim->tmpfs_inodes;
	bool pids = plan_limit_file(p, li, OWS_CG_PIDS, "processes capped: pids.max", lim->processes);
	if (!pids && p->userns) {
		p->nproc = lim->processes;
	} else if (!pids) {
		p->nproc = ows__tasks_of_uid(p->uid) + lim->processes;
		ows__plan_partial(p, OWS__PROMISE_LIMIT_PROCESSES, ows__why_processes_shared);
	}
	if (!plan_limit_file(p, li, OWS_CG_MEMORY, "memory capped", lim->memory_bytes))
		ows__plan_partial(p, OWS__PROMISE_LIMIT_MEMORY, ows__why_memory_uncapped);
	if (p->in_host_ns)
		ows__plan_partial(p, OWS__PROMISE_LIMIT_TMPFS, ows__why_tmp_on_disk);
}

/* The shared copies and an /etc/passwd whose entry for the account is the private home. */
static int plan_shared(struct ows__plan *p, struct landlock_impl *li, const char *user,
		       ows_error *err)
{
	const ows__share *sh = &li->share;
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
 * path: *exe, when the system's folders do not hold it); the copied
 * ~/.ssh/config is told first.
 */
static int plan_tunnel(struct landlock_impl *li, const char **exe, const char **cmd,
		       ows_error *err)
{
	static const char *const visible[] = {"/usr/", "/opt/", "/bin/", "/sbin/", "/lib"};
	*cmd = *exe = NULL;
	char *found = ows__find_owsbx();
	if (!found)
		return 0; /* git over https still works; ssh then has no way out */
	bool seen = false;
	for (size_t i = 0; i < OWS__ARRAY_LEN(visible); i++)
		seen |= strncmp(found, visible[i], strlen(visible[i])) == 0;
	const char *k = keep(li, found, err);
	free(found);
	if (!k)
		return OWS_ENOMEM;
	if (!seen)
		*exe = k;
	char line[4200];
	snprintf(line, sizeof(line), "%s connect %%h %%p", k);
	if (!(*cmd = keep(li, line, err)))
		return OWS_ENOMEM;
	return ows__share_ssh_proxy(&li->share, *cmd, err);
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

	ows__probes_sweep(p->home);
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

/*
 * What the view covers with an empty read-only file or folder (mask.c): the
 * FIFOs and sockets of the read-only folders, since a read-only mount stops
 * neither a write into one nor a connect; the FIFOs of the read-write
 * folders (found by the guard's walk, at any depth), a pipe to whoever
 * opens them outside; and under an unprivileged host,
 * which cannot drop the person's supplementary groups, what in /etc and
 * /opt the person reads only through one of them (a root host keeps only
 * the primary group instead, plan_identity).  /usr is not walked: its
 * 160,000 entries take 0.4 s, and what it keeps to a group are set-id
 * helpers, which nosuid disarms; secrets live in /etc.
 */
static int plan_masks(struct ows__plan *p, struct landlock_impl *li, const ows_policy *policy,
		      ows_error *err)
{
	static const char *const system[] = {"/etc", "/opt"};
	/* Room for them beside the system's mounts and the session's folders. */
	const size_t max = OWS_INIT_MAX_MOUNTS / 2;
	const bool groups_kept = p->userns || p->in_host_ns; /* no privilege to drop them */
	int rc = 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(system) && groups_kept && rc == 0; i++)
		rc = ows__mask_group_only(system[i], max - li->masks.len, &li->masks, err);
	/* In the host's namespaces Landlock's read-only rights refuse writing into a
	 * FIFO, and seccomp lets no unix socket be made: nothing there to cover, but
	 * a read-write folder's FIFOs, which no mount can cover (partial). */
	if (rc == 0 && !p->in_host_ns)
		rc = ows__mask_read_only(policy->folders, policy->nfolders,
					 (const char *const *)li->share.ro_dirs.v, li->share.ro_dirs.len,
					 max - li->masks.len, &li->masks, err);
	if (rc == 0 && !p->in_host_ns)
		rc = ows__guard_fifos_known(li->ctl.guard, max - li->masks.len, &li->masks, err);
	return rc;
}

static void impl_free(struct landlock_impl *li)
{
	ows__share_free(&li->share);
	ows__guard_free(&li->guard);
	ows__strv_free(&li->masks);
	ows__ctl_close(NULL, &li->ctl);
	ows__cgroup_remove(&li->cgroup, NULL);
	ows__private_remove(&li->pv, NULL);
	ows__strv_free(&li->strings);
	free(li);
}

/*
 * An unprivileged host the kernel gives no usable user namespace (refused,
 * or given without capabilities: the probe does what init does first, in
 * userns.c) runs the sandbox in its own namespaces (p->in_host_ns):
 * Landlock and seccomp keep what they can, the plan names what they keep
 * only in part, and what they cannot keep at all (allowlist) is refused.
 * A root host needs no user namespace.
 */
/* The probe clones every namespace and tears it down (about 3 ms here): a host that
 * opens session after session (a Python server) pays it once.  A kernel that stops
 * giving user namespaces later refuses init's own clone, which forgets this (open).
 * Before anything is known (the first open of a process: every `owsbx run`), open
 * skips it and tries init's own clone; the probe runs only if init could not set up
 * (landlock_open), and once it has refused them here, each open asks it first again. */
static int userns_known_good, userns_refused;

bool ows__userns_unusable(void)
{
	const int flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
			  CLONE_NEWUTS | CLONE_NEWNET;
	int e;
	if (__atomic_load_n(&userns_known_good, __ATOMIC_RELAXED))
		return false;
	int step = ows__userns_probe(flags, &e);
	if (step == OWS__USERNS_OK)
		__atomic_store_n(&userns_known_good, 1, __ATOMIC_RELAXED);
	/* A /proc refused (a container's masks) keeps the own namespaces: init then fails at
	 * it, and the refusal names the container option that gives the whole wall. */
	return step != OWS__USERNS_OK && step != OWS__USERNS_PROC;
}

/* How open decides on the namespaces: guess they work when nothing says otherwise,
 * ask the probe, or take its answer that they do not. */
enum ns_verdict { NS_GUESS, NS_PROBE, NS_UNUSABLE };

static void plan_namespaces(struct ows__plan *p, struct landlock_impl *li, const char *id,
			    enum ns_verdict verdict, bool *guessed)
{
	p->host_pid = getpid();
	if (!p->userns)
		return;
	if (verdict == NS_GUESS && !__atomic_load_n(&userns_known_good, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&userns_refused, __ATOMIC_RELAXED)) {
		*guessed = true;
		return;
	}
	if (verdict != NS_UNUSABLE && !ows__userns_unusable())
		return;
	p->userns = false;
	p->in_host_ns = true;
	/* A delegated cgroup v2 where the person has one (systemd's user@UID.service):
	 * close then ends the tree with cgroup.kill, which nothing inside can step
	 * out of; without one, init's subreaper alone does it (init.c). */
	if (!ows__cgroup_active(&li->cgroup)) {
		ows__cgroup_limits none = {0};
		ows_error ignored;
		ows_error_clear(&ignored);
		ows__cgroup_create(&li->cgroup, OWS_CG_DELEGATED, id, &none, &ignored);
	}
}

/*
 * Where a private folder on disk goes: the config's private_root, else, in
 * the host's namespaces (no /tmp of the sandbox's own), the person's
 * runtime folder (memory, the person's alone) when there is one, else /tmp.
 */
static const char *private_base(const ows_config *config, const struct ows__plan *p)
{
	if (config->private_root)
		return config->private_root;
	if (!p->in_host_ns)
		return NULL;
	const char *run = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (run && run[0] == '/' && lstat(run, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & 0777) == 0700)
		return run;
	return "/tmp";
}

static int clone_init(struct ows__plan *p, struct landlock_impl *li, ows_error *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return ows__fail_sys(err, "socketpair", NULL, "cannot create the control socket");
	li->ctl.fd = sv[0];
	p->ctl = sv[1];
	long pid = syscall(SYS_clone, (unsigned long)p->clone_flags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		/* In the session's cgroup before anything else starts. */
		if (ows__cgroup_join(&li->cgroup) != 0)
			ows__init_die(p, "join cgroup", li->cgroup.name);
		ows__init_main(p);
	}
	int saved = errno;
	close(sv[1]);
	ows__cgroup_joined(&li->cgroup);
	if (pid < 0) {
		errno = saved;
		if (saved == EPERM || saved == ENOSPC || saved == EINVAL || saved == EUSERS) {
			__atomic_store_n(&userns_known_good, 0, __ATOMIC_RELAXED);
			return ows__userns_fail(err, OWS__USERNS_CLONE, saved);
		}
		return ows__fail_sys(err, "clone", NULL, "cannot start the sandbox");
	}
	li->ctl.pid = (pid_t)pid;
	return 0;
}

/*
 * A root host's session folder failed its proof: the cause is most often the
 * account commands run as (nobody by default), which the folder does not let
 * in.  Say who that is, what chose it, and how to choose another.
 */
static void name_root_host_account(const struct landlock_impl *li, const struct ows__plan *p,
				   const ows_config *config, ows_error *err)
{
	if (!err || p->userns || !li->run_as[0] ||
	    (strncmp(err->where, "read-write ", 11) != 0 && strncmp(err->where, "read-only ", 10) != 0))
		return;
	char what[sizeof(err->what)];
	snprintf(what, sizeof(what), "%s", err->what);
	const char *path = ows_config_path(config);
	/* Cut to fit if need be: the account and the fix matter more than the tail. */
	if (snprintf(err->what, sizeof(err->what),
		     "%s: under a root host commands run as %s (uid %u, from %s), which cannot use "
		     "this folder", what, li->run_as, (unsigned)p->uid, li->run_as_from) < 0)
		return;
	snprintf(err->hint, sizeof(err->hint),
		 "let %s use the folder, or choose the account: run_as in the policy (owsbx run "
		 "--run-as NAME) or root_runs_as under [landlock] in %s", li->run_as,
		 path[0] ? path : OWS_CONFIG_DEFAULT_PATH);
}

static int landlock_open_as(ows_session *s, const ows_policy *policy, const ows_config *config,
			    enum ns_verdict verdict, bool *guessed, ows_error *err)
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

	ows__limits lim;
	ows__limits_resolve(policy, config, &lim);
	ows__cgroup_init(&li->cgroup);
	if ((rc = plan_limits(li, policy, &lim, s->id, err)) < 0 ||
	    (rc = plan_identity(p, policy, config, li, &home, &user, err)) < 0)
		goto fail;
	plan_namespaces(p, li, s->id, verdict, guessed);
	if ((rc = ows__net_plan(p, s->net, config->open_unscoped, err)) < 0)
		goto fail;
	plan_caps(p, li, &lim);
	p->home = home;
	/* By default the private folder lives on the sandbox's own /tmp; a
	 * configured private_root puts it on disk, for caches larger than memory. */
	const char *priv, *base = private_base(config, p), *tmpfs_base = NULL;
	if (base) {
		rc = ows__private_create(&li->pv, base, s->id, p->uid, p->gid, err);
		if (rc < 0)
			goto fail;
		priv = li->pv.dir;
	} else {
		tmpfs_base = ows__private_tmpfs_base(policy->folders, policy->nfolders, p->uid);
		if (!tmpfs_base) {
			rc = ows__fail(err, OWS_EINVAL, 0, "/tmp", "share narrower folders",
				       "no place for the session's private folder: /tmp and /run "
				       "both lie in session folders");
			goto fail;
		}
		char path[128];
		snprintf(path, sizeof(path), "%s/owsandbox-%u/%s", tmpfs_base, (unsigned)p->uid, s->id);
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
	const char *tunnel = NULL, *exe = NULL;
	if ((rc = ows__share_collect(config, policy, home, p->priv_home, &li->share, err)) < 0 ||
	    (s->net == OWS_NET_ALLOWLIST && (rc = plan_tunnel(li, &exe, &tunnel, err)) < 0))
		goto fail;
	for (size_t i = 0; i < policy->nfolders && rc == 0; i++)
		if (policy->folders[i].access == OWS_ACCESS_RW)
			rc = ows__guard_add(&li->guard, policy->folders[i].path, config,
					    &li->ctl.guard, err);
		else if (ows__view_under_memory_folder(policy->folders[i].path))
			rc = ows__guard_watch_fifos(&li->ctl.guard, policy->folders[i].path, err);
	if (rc == 0)
		rc = plan_masks(p, li, policy, err);
	struct ows__view view = {
		.folders = policy->folders, .nfolders = policy->nfolders,
		.guard = li->guard.v, .nguard = li->guard.len,
		.ro_dirs = (const char *const *)li->share.ro_dirs.v, .nro_dirs = li->share.ro_dirs.len,
		.exe = exe, .private_disk = base ? priv : NULL,
		.private_tmpfs = tmpfs_base && strcmp(tmpfs_base, "/tmp") ? tmpfs_base : NULL,
		.masks = (const char *const *)li->masks.v, .nmasks = li->masks.len,
	};
	if (rc < 0 || (rc = ows__view_plan(p, &li->strings, &view, err)) < 0 ||
	    (rc = plan_shared(p, li, user, err)) < 0)
		goto fail;

	ows__strv paths = {0};
	rc = ows__session_layout(s, policy, priv, '/', user, "landlock", &paths, err);
	ows__strv_free(&paths);
	if (rc < 0 || (rc = ows__share_apply(s, &li->share, err)) < 0)
		goto fail;
	if (s->net == OWS_NET_ALLOWLIST) {
		/* The sandbox reaches it only through the listener its init makes on
		 * this port in its own network, handed over after the proof; the
		 * proxy listens nowhere on the host. */
		int port;
		if ((rc = ows__session_start_proxy(s, policy, config, &li->share.hosts, tunnel,
						   true, &port, err)) < 0)
			goto fail;
		ows__share_inject(s, &li->share);
		p->proxy_port = (uint16_t)port;
	}
	p->folders = policy->folders;
	p->nfolders = policy->nfolders;
	p->envp = s->env.v;
	if (p->userns)
		p->clone_flags |= CLONE_NEWUSER;
	p->host_args = true;

	if ((rc = probes_open(&pb, p, li, s->id, err)) < 0)
		goto fail;
	if ((rc = clone_init(p, li, err)) < 0)
		goto fail;
	rc = ows__ctl_receive_proof(s, &li->ctl, "landlock", err);
	probes_close(&pb);
	if (rc == OWS_EVERIFY)
		name_root_host_account(li, p, config, err);
	/* A namespace without capabilities (Ubuntu's AppArmor restriction): say why, and the fix. */
	if (rc == OWS_EUNSUPPORTED && err && ows__userns_step_of(err->where) != OWS__USERNS_OK) {
		int step = ows__userns_step_of(err->where), e = err->sys_errno;
		__atomic_store_n(&userns_known_good, 0, __ATOMIC_RELAXED);
		ows_error_clear(err);
		rc = ows__userns_fail(err, step, e);
	}
	if (rc == 0)
		rc = ows__ctl_adopt_listener(s, &li->ctl, err);
	if (rc < 0)
		goto fail;
	s->private_dir = ows__strdup(priv, err);
	ows__strv_free(&li->strings);
	ows__share_free(&li->share);
	ows__guard_free(&li->guard);
	ows__strv_free(&li->masks);
	if (!s->private_dir) {
		rc = OWS_ENOMEM;
		goto fail;
	}
	/* Init did in them all the probe does (loopback only in a network of its own). */
	if (p->userns && (p->clone_flags & CLONE_NEWNET))
		__atomic_store_n(&userns_known_good, 1, __ATOMIC_RELAXED);
	s->enforcement = "full";
	memcpy(s->partial, p->partial, sizeof(s->partial));
	s->npartial = p->npartial;
	s->impl = li;
	free(p);
	return 0;
fail:
	probes_close(&pb);
	impl_free(li);
	free(p);
	return rc;
}

/*
 * Opened on a guess (plan_namespaces), a refusal of init's setup is judged by the
 * probe, as if it had run first: namespaces it finds unusable make the session
 * again in the host's namespaces, planned anew; otherwise the refusal stands (a
 * refused /proc keeps the namespaces and refuses, as before).  What the failed
 * attempt left on the session (its environment, its proxy) goes first.
 */
static int landlock_open(ows_session *s, const ows_policy *policy, const ows_config *config,
			 ows_error *err)
{
	bool guessed = false;
	int rc = landlock_open_as(s, policy, config, NS_GUESS, &guessed, err);
	if (rc != OWS_EUNSUPPORTED || !guessed || !ows__userns_unusable())
		return rc;
	__atomic_store_n(&userns_refused, 1, __ATOMIC_RELAXED);
	ows__session_forget_open(s);
	ows_error_clear(err);
	return landlock_open_as(s, policy, config, NS_UNUSABLE, &guessed, err);
}

static int landlock_close(ows_session *s, ows_error *err)
{
	struct landlock_impl *li = s->impl;
	if (!li)
		return 0;
	ows__ctl_close(s, &li->ctl);
	/* Init has ended its PID namespace; the cgroup's kill is for what else is in it. */
	int rc = ows__cgroup_remove(&li->cgroup, err);
	int rc2 = ows__private_remove(&li->pv, err);
	rc = rc < 0 ? rc : rc2;
	ows__strv_free(&li->strings);
	free(li);
	s->impl = NULL;
	return rc;
}

static int landlock_describe(const ows_policy *policy, const ows_config *config, ows_net net,
			 struct json_t *doc, ows_error *err)
{
	return ows__linux_describe(policy, config, net, false, doc, err);
}

const ows__provider ows__landlock_provider = {
	.name = "landlock",
	.open = landlock_open,
	.spawn = ows__ctl_op_spawn, /* the impl begins with its ows__ctl */
	.wait = ows__ctl_op_wait,
	.kill = ows__ctl_op_kill,
	.stop = ows__ctl_op_stop,
	.close = landlock_close,
	.describe = landlock_describe,
};
