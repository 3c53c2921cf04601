/*
 * The `openshell` provider (spec 002): one NVIDIA OpenShell sandbox per
 * session, driven through the `openshell` CLI as it is
 * (NVIDIA/OpenShell .agents/skills/openshell-cli/cli-reference.md and
 * crates/openshell-cli/src/main.rs: `sandbox create`, `sandbox exec`,
 * `policy update`, `sandbox delete`).
 *
 * Each session keeps a record, ~/.config/coworker/sandbox-runtime/<id>/,
 * holding a file locked while the host lives (the same lock-from-birth file
 * as the private folders, lib/posix/fs.c), the rendered policy and the
 * private home with the shared copies.  Never /tmp: the gateway NVIDIA's
 * installer sets up runs with a private /tmp and could not mount a folder
 * there.  The next open removes the sandbox and record of every host that
 * died (its lock is free).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "openshell.h"
#include "oscli.h"
#include "platform.h"
#include "posix/posix.h"

extern char **environ;

struct os_impl {
	char name[64];     /* owsbx-<session id> */
	char *root;        /* ~/.config/coworker/sandbox-runtime */
	char *dir;         /* root/<session id> */
	int lock_fd;       /* the record's lock, held while the session lives */
	bool created;      /* the sandbox exists: close deletes it */
};

#define RECORD_LOCK "host.lock"
/* How long a record may stand without its lock before it counts as a killed host's. */
#define RECORD_UNLOCKED_GRACE_S 60

static int mkdir_p(char *path, ows_error *err)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int r = mkdir(path, 0700);
		*p = '/';
		if (r != 0 && errno != EEXIST)
			return ows__fail_sys(err, path, NULL, "cannot create the sandbox records' folder");
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return ows__fail_sys(err, path, NULL, "cannot create the sandbox records' folder");
	return 0;
}

/* The person's home: $HOME, else the account's. */
static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		return h;
	struct passwd *pw = getpwuid(getuid());
	return pw ? pw->pw_dir : "/";
}

static int runtime_root(struct os_impl *oi, ows_error *err)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/.config/coworker/sandbox-runtime", home_dir()) >=
	    (int)sizeof(path))
		return ows__fail(err, OWS_EINVAL, ENAMETOOLONG, home_dir(), NULL, "home path too long");
	int rc = mkdir_p(path, err);
	if (rc == 0 && !(oi->root = ows__strdup(path, err)))
		rc = OWS_ENOMEM;
	return rc;
}

static int delete_sandbox(const char *name)
{
	const char *argv[] = {"openshell", "sandbox", "delete", name, NULL};
	return ows__os_cmd(argv, NULL, 0);
}

/* A record whose lock is free: its host died; its sandbox and the record go. */
static void remove_if_dead(int rootfd, const char *id)
{
	char lock[NAME_MAX + 32];
	snprintf(lock, sizeof(lock), "%s/" RECORD_LOCK, id);
	int fd = openat(rootfd, lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return;
	/* No lock yet: a host between making the record and locking it, unless long ago. */
	struct stat st;
	if (fd < 0 && (fstatat(rootfd, id, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		       st.st_mtime > time(NULL) - RECORD_UNLOCKED_GRACE_S))
		return;
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd); /* alive */
		return;
	}
	char name[NAME_MAX + 8];
	snprintf(name, sizeof(name), "owsbx-%s", id);
	/* A sandbox that is not there (never created) is fine: delete then fails, harmlessly. */
	delete_sandbox(name);
	ows__rmtree_at(rootfd, id);
	if (fd >= 0)
		close(fd);
}

static void remove_dead(const char *root)
{
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		return;
	DIR *d = ows__opendir_at(rootfd);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			remove_if_dead(rootfd, e->d_name);
	if (d)
		closedir(d);
	close(rootfd);
}

/* root/<id>, its lock taken before anything else is in it, and home, tmp, cache. */
static int make_record(struct os_impl *oi, const char *id, ows_error *err)
{
	int rootfd = open(oi->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		return ows__fail_sys(err, oi->root, NULL, "cannot open the sandbox records' folder");
	int rc = 0;
	if (mkdirat(rootfd, id, 0700) != 0)
		rc = ows__fail_sys(err, id, NULL, "cannot create the session's sandbox record");
	int dfd = rc == 0 ? openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	close(rootfd);
	if (rc == 0 && dfd < 0)
		rc = ows__fail_sys(err, id, NULL, "cannot open the session's sandbox record");
	if (rc == 0 && (oi->lock_fd = ows__create_locked_at(dfd, RECORD_LOCK, "owsbx\n")) < 0)
		rc = ows__fail_sys(err, RECORD_LOCK, NULL, "cannot lock the session's sandbox record");
	static const char *const sub[] = {"home", "tmp", "cache"};
	for (size_t i = 0; rc == 0 && i < OWS__ARRAY_LEN(sub); i++)
		if (mkdirat(dfd, sub[i], 0700) != 0)
			rc = ows__fail_sys(err, sub[i], NULL, "cannot create the private folders");
	if (dfd >= 0)
		close(dfd);
	if (rc == 0 && !(oi->dir = ows__asprintf(err, "%s/%s", oi->root, id)))
		rc = OWS_ENOMEM;
	return rc;
}

static void impl_free(struct os_impl *oi)
{
	if (oi->created)
		delete_sandbox(oi->name);
	if (oi->dir) {
		int rootfd = open(oi->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (rootfd >= 0) {
			ows__rmtree_at(rootfd, strrchr(oi->dir, '/') + 1);
			close(rootfd);
		}
	}
	if (oi->lock_fd >= 0)
		close(oi->lock_fd);
	free(oi->dir);
	free(oi->root);
	free(oi);
}

static int write_file(const char *dir, const char *name, const char *text, ows_error *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || ows__plat_write_all(fd, text, strlen(text)) != 0) {
		int rc = ows__fail_sys(err, path, NULL, "cannot write the sandbox policy");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	return 0;
}

/* The session's folders, then the private folder (the copies' home), read-write. */
static ows__folder *spec_folders(const ows_policy *policy, const char *dir, size_t *n,
				 ows_error *err)
{
	ows__folder *f = ows__calloc(policy->nfolders + 1, sizeof(*f), err);
	if (!f)
		return NULL;
	for (size_t i = 0; i < policy->nfolders; i++)
		f[i] = policy->folders[i];
	f[policy->nfolders] = (ows__folder){.path = (char *)dir, .access = OWS_ACCESS_RW};
	*n = policy->nfolders + 1;
	return f;
}

/* allowlist: the machine's hosts, the session's sites, the shared logins' hosts; none and
 * open: no host (none lists nothing, open is refused by the renderer). */
static int spec_hosts(const ows_session *s, const ows_policy *policy, const ows_config *config,
		      const ows__share *sh, ows__strv *hosts, ows_error *err)
{
	if (s->net != OWS_NET_ALLOWLIST)
		return 0;
	const ows__strv *from[] = {&config->hosts, &policy->hosts, &sh->hosts};
	int rc = 0;
	for (size_t k = 0; k < OWS__ARRAY_LEN(from); k++)
		for (size_t i = 0; rc == 0 && i < from[k]->len; i++)
			rc = ows__strv_push(hosts, from[k]->v[i], err);
	return rc;
}

/* The network mode as OpenShell's profile: allowlist is the machine's profile (strict unless
 * [openshell] profile says standard). */
static ows__os_profile spec_profile(const ows_session *s, const ows_config *config)
{
	if (s->net == OWS_NET_NONE)
		return OWS__OS_NONE;
	if (s->net == OWS_NET_OPEN)
		return OWS__OS_OPEN;
	return config->os_standard ? OWS__OS_STANDARD : OWS__OS_STRICT;
}

/*
 * `openshell` + the renderer's `sandbox create ...`, with `--detach` after
 * `create` unless it is there: without it the CLI attaches to the main command
 * and create returns only when the tool runner ends (cli-reference.md).
 */
static int create_argv(const ows__os_render *r, ows__strv *av, ows_error *err)
{
	bool detach = false;
	for (size_t i = 0; i < r->create_args.len && strcmp(r->create_args.v[i], "--") != 0; i++)
		detach |= strcmp(r->create_args.v[i], "--detach") == 0;
	int rc = ows__strv_push(av, "openshell", err);
	for (size_t i = 0; rc == 0 && i < r->create_args.len; i++) {
		rc = ows__strv_push(av, r->create_args.v[i], err);
		if (rc == 0 && i == 1 && !detach && strcmp(r->create_args.v[1], "create") == 0)
			rc = ows__strv_push(av, "--detach", err);
	}
	return rc;
}

static int create_sandbox(ows_session *s, const ows_policy *policy, const ows_config *config,
			  const ows__share *sh, struct os_impl *oi, ows_error *err)
{
	size_t nf = 0;
	ows__strv hosts = {0}, av = {0};
	ows__os_render r = {0};
	char *runner = NULL;
	ows__folder *f = spec_folders(policy, oi->dir, &nf, err);
	int rc = f ? spec_hosts(s, policy, config, sh, &hosts, err) : OWS_ENOMEM;
	if (rc == 0)
		rc = ows__os_find_runner(&runner, err);
	char policy_path[PATH_MAX];
	snprintf(policy_path, sizeof(policy_path), "%s/policy.yaml", oi->dir);
	ows__os_spec spec = {
		.name = oi->name, .image = OWS__OS_IMAGE, .folders = f, .nfolders = nf,
		.uid = getuid(), .gid = getgid(),
		.profile = spec_profile(s, config),
		.hosts = hosts.v ? (const char *const *)hosts.v : (const char *const[]){NULL},
		.runner = runner, .policy_path = policy_path,
	};
	struct stat fst;
	/* A root host: the folders' owner runs inside (OpenShell refuses uid 0). */
	if (spec.uid == 0 && policy->nfolders && stat(policy->folders[0].path, &fst) == 0)
		spec.uid = fst.st_uid, spec.gid = fst.st_gid;
	if (rc == 0)
		rc = ows__os_render_spec(&spec, &r, err);
	if (rc == 0)
		rc = write_file(oi->dir, "policy.yaml", r.policy, err);
	if (rc == 0)
		rc = create_argv(&r, &av, err);
	if (rc == 0) {
		int st = ows__os_cmd((const char *const *)av.v, NULL, 0);
		/* Deleted at close whatever create said: a half-made sandbox goes too. */
		oi->created = true;
		if (st != 0)
			rc = ows__fail(err, OWS_EUNSUPPORTED, 0, oi->name,
				       "run `owsbx machine sandbox status --provider openshell`",
				       "`openshell sandbox create` failed (status %d)", st);
	}
	ows__os_render_free(&r);
	ows__strv_free(&av);
	ows__strv_free(&hosts);
	free(f);
	free(runner);
	return rc;
}

static int share_in(ows_session *s, const ows_policy *policy, const ows_config *config,
		    struct os_impl *oi, ows__share *sh, ows_error *err)
{
	char home[PATH_MAX];
	snprintf(home, sizeof(home), "%s/home", oi->dir);
	int rc = ows__share_collect(config, policy, home_dir(), home, sh, err);
	/* OpenShell's gateway carries the sandbox's traffic, not our proxy: nothing would
	 * put the secret back, and the tool would fail on its placeholder */
	if (rc == 0 && sh->inject)
		rc = ows__fail(err, OWS_EUNSUPPORTED, 0, "openshell",
			       "share the entry as a copy, or use the landlock or account provider",
			       "[credentials] inject needs the session's own proxy, which OpenShell "
			       "sandboxes do not use");
	if (rc == 0)
		rc = ows__share_write(home, sh, err);
	if (rc == 0)
		rc = ows__share_apply(s, sh, err);
	return rc;
}

/* The wall proved from inside, as the other providers prove theirs: OpenShell's readiness
 * says the sandbox runs, not what it holds. */
static int prove(ows_session *s, const ows_policy *policy, const struct os_impl *oi,
		 ows_error *err)
{
	size_t nf = 0;
	ows__folder *f = spec_folders(policy, oi->dir, &nf, err);
	if (!f)
		return OWS_ENOMEM;
	ows__os_proof p = {.name = oi->name, .id = s->id, .home = home_dir(),
			   .network = ows__net_name(s->net), .none = s->net == OWS_NET_NONE,
			   .folders = f, .nfolders = nf};
	int rc = ows__os_prove(&p, &s->proof_json, err);
	free(f);
	return rc;
}

static int os_open(ows_session *s, const ows_policy *policy, const ows_config *config,
		   ows_error *err)
{
	ows__os_facts facts;
	ows__os_facts_read(&facts);
	int rc = ows__os_refuse(&facts, err);
	if (rc == 0 && s->net == OWS_NET_OPEN)
		rc = ows__fail(err, OWS_EUNSUPPORTED, 0, "openshell",
			       "use allowlist with the sites the session needs, or another provider",
			       "network open cannot be had under OpenShell: its policy cannot allow "
			       "any host (a bare '*' host is refused)");
	/* A deny entry OpenShell's policy cannot hold is refused before anything is made. */
	for (size_t i = 0; rc == 0 && s->net == OWS_NET_ALLOWLIST && i < config->hosts.len; i++)
		rc = ows__os_refuse_deny(config->hosts.v[i], err);
	if (rc < 0)
		return rc;
	struct os_impl *oi = ows__calloc(1, sizeof(*oi), err);
	if (!oi)
		return OWS_ENOMEM;
	oi->lock_fd = -1;
	snprintf(oi->name, sizeof(oi->name), "owsbx-%s", s->id);
	rc = runtime_root(oi, err);
	if (rc == 0)
		remove_dead(oi->root); /* what killed hosts left; its failure does not stop us */
	if (rc == 0)
		rc = make_record(oi, s->id, err);
	ows__strv paths = {0};
	if (rc == 0)
		rc = ows__session_layout(s, policy, oi->dir, '/', facts.user, "openshell", &paths,
					 err);
	ows__strv_free(&paths);
	ows__share sh = {0};
	if (rc == 0)
		rc = share_in(s, policy, config, oi, &sh, err);
	if (rc == 0)
		rc = create_sandbox(s, policy, config, &sh, oi, err);
	ows__share_free(&sh);
	if (rc == 0 && !(s->private_dir = ows__strdup(oi->dir, err)))
		rc = OWS_ENOMEM;
	if (rc == 0)
		rc = prove(s, policy, oi, err);
	if (rc < 0) {
		impl_free(oi);
		return rc;
	}
	s->impl = oi;
	s->enforcement = "full";
	return 0;
}

/* `openshell sandbox exec --name N --no-tty [--workdir CWD] [--env K=V]... -- ARGV`. */
static int exec_argv(const struct os_impl *oi, const char *const argv[], char *const envp[],
		     const char *cwd, ows__strv *av, ows_error *err)
{
	static const char *const head[] = {"openshell", "sandbox", "exec", "--name"};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < OWS__ARRAY_LEN(head); i++)
		rc = ows__strv_push(av, head[i], err);
	if (rc == 0)
		rc = ows__strv_push(av, oi->name, err);
	if (rc == 0)
		rc = ows__strv_push(av, "--no-tty", err);
	if (rc == 0 && cwd)
		rc = ows__strv_pushf(av, err, "--workdir=%s", cwd);
	for (size_t i = 0; rc == 0 && envp && envp[i]; i++)
		rc = ows__strv_pushf(av, err, "--env=%s", envp[i]);
	if (rc == 0)
		rc = ows__strv_push(av, "--", err);
	for (size_t i = 0; rc == 0 && argv[i]; i++)
		rc = ows__strv_push(av, argv[i], err);
	return rc;
}

/* The command runs in the sandbox; openshell itself runs here, with the host's environment
 * (its PATH, its gateway config) and the caller's stdio. */
static int os_spawn(ows_session *s, ows_proc *proc, const char *const argv[], char *const envp[],
		    const char *cwd, const int stdio[3], ows_error *err)
{
	ows__strv av = {0};
	int rc = exec_argv(s->impl, argv, envp, cwd, &av, err);
	if (rc == 0)
		rc = ows__direct_spawn(s, proc, (const char *const *)av.v, environ, "/", stdio, err);
	ows__strv_free(&av);
	return rc;
}

/* A site for the running session: OpenShell's own policy update, loaded before it returns. */
static int os_allow_site(ows_session *s, const char *pattern, ows_error *err)
{
	struct os_impl *oi = s->impl;
	if (s->net != OWS_NET_ALLOWLIST)
		return ows__fail(err, OWS_ESTATE, 0, pattern, "open the session with network allowlist",
				 "this session has no allow list");
	int rc = ows__os_refuse_deny(pattern, err);
	if (rc < 0)
		return rc;
	char ep[512];
	const char *colon = strrchr(pattern, ':');
	snprintf(ep, sizeof(ep), colon ? "%s" : "%s:443", pattern);
	const char *argv[] = {"openshell", "policy", "update", oi->name, "--add-endpoint", ep,
			      "--wait", NULL};
	int st = ows__os_cmd(argv, NULL, 0);
	if (st != 0)
		return ows__fail(err, OWS_ESTATE, 0, pattern,
				 "run `owsbx machine sandbox status --provider openshell`",
				 "`openshell policy update` failed (status %d)", st);
	return 0;
}

static int os_close(ows_session *s, ows_error *err)
{
	struct os_impl *oi = s->impl;
	if (!oi)
		return 0;
	/* The sandbox first: the exec streams end with it, then our own children are reaped. */
	int st = delete_sandbox(oi->name);
	oi->created = false;
	ows__direct_stop(s);
	for (ows_proc *p = s->procs; p; p = p->next)
		if (!ows__proc_get_exit(p, NULL) && p->pid > 0)
			ows__direct_wait(s, p, -1, NULL);
	impl_free(oi);
	s->impl = NULL;
	if (st != 0)
		return ows__fail(err, OWS_ESYS, 0, "openshell",
				 "run `openshell sandbox list` and delete what is left",
				 "`openshell sandbox delete` failed (status %d)", st);
	return 0;
}

const ows__provider ows__openshell_provider = {
	.name = "openshell",
	.open = os_open,
	.spawn = os_spawn,
	.wait = ows__direct_wait,
	.kill = ows__direct_kill,
	.stop = ows__direct_stop,
	.close = os_close,
	.allow_site = os_allow_site,
	.machine = &ows__openshell_machine,
};
