/*
 * What a Linux session would be built from (ows_session_plan), from the
 * planners the two providers' open calls use, run for their answers alone:
 * the network plan (view.c), the limits (limits_plan.c), what the person
 * shares (lib/posix/sharing.c), the guard (guard.c) and the masks (mask.c).  They only
 * read: nothing here makes a folder, cgroup, grant or account, and the user
 * namespace probe's throwaway child has ended when it returns.
 */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "limits_plan.h"
#include "linux.h"
#include "linux/wall/view.h"

/* The private home's place in a plan: where the copies would go, never made. */
#define DESCRIBE_PRIV_HOME "/tmp/owsandbox-plan/home"

static json_t *strv_json(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, ows__json_text(v[i]));
	return a;
}

/*
 * The namespaces and network plan: the landlock provider of an unprivileged
 * host the kernel gives no usable user namespace runs in the host's own
 * (landlock.c's plan_namespaces); the account provider's launcher is root.
 */
static int describe_net(struct ows__plan *p, const ows_config *config, ows_net net, bool account,
			json_t *doc, ows_error *err)
{
	p->userns = !account && geteuid() != 0;
	if (p->userns && ows__userns_unusable()) {
		p->userns = false;
		p->in_host_ns = true;
	}
	int rc = ows__net_plan(p, net, config->open_unscoped, err);
	if (rc < 0)
		return rc;
	const char *ns = p->in_host_ns ? "the host's (no user namespace here): Landlock and seccomp alone"
		: net == OWS_NET_OPEN ? "the host's network; the sandbox's own PID, mount and IPC"
				      : "a network of the sandbox's own: loopback only";
	json_object_set_new(json_object_get(doc, "network"), "namespace", json_string(ns));
	return 0;
}

static void describe_limits(const ows_policy *policy, const ows_config *config, json_t *doc)
{
	ows__limits lim;
	ows__limits_resolve(policy, config, &lim);
	json_object_set_new(doc, "limits",
			    json_pack("{s:I, s:s, s:I, s:s, s:I}", "processes",
				      (json_int_t)lim.processes, "processes_from",
				      lim.processes_demanded ? "policy" : "default", "memory_mb",
				      (json_int_t)(lim.memory_bytes >> 20), "memory_mb_from",
				      lim.memory_demanded ? "policy" : "default", "tmpfs_mb",
				      (json_int_t)(lim.tmpfs_bytes >> 20)));
}

/* The person's home, resolved, as the open calls take it; NULL for none (or "/"). */
static char *person_home(void)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) != 0 || !res || !res->pw_dir)
		return NULL;
	char *home = realpath(res->pw_dir, NULL);
	if (home && strcmp(home, "/") == 0) {
		free(home);
		home = NULL;
	}
	return home;
}

/* What the guard binds over itself in the read-write folders. */
static int describe_guard(const ows_policy *policy, const ows_config *config, json_t *doc,
			  ows_error *err)
{
	ows__guard_list g = {0};
	ows__guard_watch *watch = NULL;
	int rc = 0;
	for (size_t i = 0; i < policy->nfolders && rc == 0; i++)
		if (policy->folders[i].access == OWS_ACCESS_RW)
			rc = ows__guard_add(&g, policy->folders[i].path, config, &watch, err);
	json_t *a = json_array();
	for (size_t i = 0; rc == 0 && a && i < g.len; i++)
		json_array_append_new(a, json_pack("{s:o, s:s}", "path", ows__json_text(g.v[i].path),
						   "how", g.v[i].pin ? "pinned" : "read-only"));
	json_object_set_new(doc, "guard", a);
	ows__guard_free(&g);
	ows__guard_watch_free(watch);
	return rc;
}

/*
 * The masks, as landlock.c's plan_masks and account.c choose them: the
 * channels of the read-only folders (and of the toolchains, under landlock),
 * and under an unprivileged landlock host what it reads only through a
 * supplementary group in /etc and /opt.
 */
static int describe_masks(const ows_policy *policy, const struct ows__plan *p, bool account,
			  const ows__share *sh, json_t *doc, ows_error *err)
{
	static const char *const system[] = {"/etc", "/opt"};
	const size_t max = OWS_INIT_MAX_MOUNTS / 2;
	ows__strv masks = {0};
	int rc = 0;
	bool groups_kept = !account && (p->userns || p->in_host_ns);
	for (size_t i = 0; i < OWS__ARRAY_LEN(system) && groups_kept && rc == 0; i++)
		rc = ows__mask_group_only(system[i], max - masks.len, &masks, err);
	if (rc == 0 && !p->in_host_ns)
		rc = ows__mask_read_only(policy->folders, policy->nfolders,
					 account ? NULL : (const char *const *)sh->ro_dirs.v,
					 account ? 0 : sh->ro_dirs.len, max - masks.len, &masks, err);
	json_object_set_new(doc, "masks", strv_json((const char *const *)masks.v, masks.len));
	ows__strv_free(&masks);
	return rc;
}

/* The logins' files (their names, never their contents), the toolchains and their sites. */
static void describe_shared(const ows__share *sh, json_t *doc)
{
	json_t *files = json_array();
	for (size_t i = 0; files && i < sh->nfiles; i++)
		if (!sh->files[i].dir)
			json_array_append_new(files, ows__json_text(sh->files[i].path));
	json_object_set_new(doc, "shared", files);
	json_object_set_new(doc, "toolchains",
			    strv_json((const char *const *)sh->ro_dirs.v, sh->ro_dirs.len));
	json_t *allow = json_object_get(json_object_get(doc, "network"), "allow");
	for (size_t i = 0; allow && i < sh->hosts.len; i++)
		json_array_append_new(allow, ows__json_text(sh->hosts.v[i]));
}

/*
 * Who the commands run as, and what chose that: the account provider's
 * account for the mode; under landlock the person, or under a root host the
 * account landlock.c's plan_identity picks, in its order.
 */
static void describe_identity(const ows_policy *policy, const ows_config *config, ows_net net,
			      bool account, json_t *doc)
{
	char buf[64];
	const char *who, *from, *sudo = getenv("SUDO_UID");
	if (account) {
		bool open = net == OWS_NET_OPEN;
		who = open ? config->open_user : config->closed_user;
		from = open ? "the account provider's account for open"
			    : "the account provider's account for none and allowlist";
	} else if (geteuid() != 0) {
		struct passwd pw, *res = NULL;
		char pwbuf[4096];
		getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &res);
		snprintf(buf, sizeof(buf), "%s", res ? res->pw_name : "?");
		who = buf;
		from = "the person: landlock runs commands as whoever starts the session";
	} else if (policy->run_as) {
		who = policy->run_as;
		from = "the policy's run_as (--run-as)";
	} else if (sudo && *sudo && strcmp(sudo, "0") != 0) {
		snprintf(buf, sizeof(buf), "uid %s", sudo);
		who = buf;
		from = "SUDO_UID, the account behind sudo";
	} else {
		who = config->root_runs_as ? config->root_runs_as : "nobody";
		from = config->root_runs_as ? "the config's root_runs_as"
					    : "the default; no machine config sets root_runs_as";
	}
	json_object_set_new(doc, "runs_as", json_pack("{s:o, s:s}", "account",
						      ows__json_text(who ? who : "?"), "from", from));
}

static json_t *partial_json(const struct ows__plan *p)
{
	json_t *a = json_array();
	for (int i = 0; a && i < p->npartial; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "promise", p->partial[i].promise,
						   "why", p->partial[i].why));
	return a;
}

int ows__linux_describe(const ows_policy *policy, const ows_config *config, ows_net net,
			bool account, json_t *doc, ows_error *err)
{
	struct ows__plan *p = ows__calloc(1, sizeof(*p), err);
	if (!p)
		return OWS_ENOMEM;
	ows__share sh;
	memset(&sh, 0, sizeof(sh));
	char *home = person_home();
	int rc = 0;
	for (size_t i = 0; home && i < policy->nfolders && rc == 0; i++)
		rc = ows__check_folder_vs_home(policy->folders[i].path, home, err);
	if (rc == 0) {
		describe_identity(policy, config, net, account, doc);
		rc = describe_net(p, config, net, account, doc, err);
	}
	if (rc == 0)
		describe_limits(policy, config, doc);
	if (rc == 0 && (rc = ows__share_collect(config, policy, home, DESCRIBE_PRIV_HOME, &sh,
						err)) == 0)
		describe_shared(&sh, doc);
	if (rc == 0)
		rc = describe_guard(policy, config, doc, err);
	if (rc == 0)
		rc = describe_masks(policy, p, account, &sh, doc, err);
	if (rc == 0)
		json_object_set_new(doc, "partial", partial_json(p));
	ows__share_free(&sh);
	free(home);
	free(p);
	return rc;
}
