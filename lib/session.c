/*
 * The portable session: chooses a provider, keeps the audit trail, and
 * hands spawn, wait and close to the provider that built the wall.  Builds
 * no wall itself: what a session may reach is the provider's to enforce.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "proxy/proxy.h"
#include "platform.h"

void ows_session_options_init(ows_session_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

void ows_spawn_options_init(ows_spawn_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
		opts->stdio[0] = 0;
		opts->stdio[1] = 1;
		opts->stdio[2] = 2;
	}
}

char *ows__proof_json(const char *provider, const char *network, const ows__check *checks,
		      size_t n, bool *all_passed)
{
	bool ok = n > 0;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		/* A partial check failed, for a promise the session runs without on purpose. */
		bool partial = checks[i].passed == OWS__CHECK_PARTIAL;
		json_t *c = json_pack("{s:o, s:b, s:o}", "name", ows__json_text(checks[i].name), "passed",
				      checks[i].passed == 1, "detail", ows__json_text(checks[i].detail));
		if (c && partial)
			json_object_set_new(c, "partial", json_true());
		json_array_append_new(arr, c);
		if (!checks[i].passed)
			ok = false;
	}
	json_t *root = json_pack("{s:b, s:s, s:s, s:o}", "passed", ok, "provider", provider,
				 "network", network, "checks", arr);
	char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	if (all_passed)
		*all_passed = ok;
	return s;
}

/* [{"promise", "why"}] of what the session runs without, or NULL when it keeps every promise. */
static json_t *partial_json(const ows_session *s)
{
	if (s->npartial == 0)
		return NULL;
	json_t *a = json_array();
	for (int i = 0; a && i < s->npartial; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "promise", s->partial[i].promise,
						   "why", s->partial[i].why));
	return a;
}

static json_t *folders_json(const ows_policy *p)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < p->nfolders; i++)
		json_array_append_new(a, json_pack("{s:o, s:s}", "path", ows__json_text(p->folders[i].path),
						   "access",
						   p->folders[i].access == OWS_ACCESS_RW ? "rw" : "ro"));
	return a;
}

/* What the guard moved aside (or the modes it put back) since the last event, as a
 * JSON array; NULL when nothing. */
static json_t *take_guarded(ows_session *s, ows__strv *what)
{
	json_t *a = NULL;
	ows__session_lock(s);
	if (what->len && (a = json_array()))
		for (size_t i = 0; i < what->len; i++)
			json_array_append_new(a, ows__json_text(what->v[i]));
	ows__strv_free(what);
	ows__session_unlock(s);
	return a;
}

void ows__session_lock(ows_session *s)
{
	if (s->lock)
		ows__plat_mutex_lock(s->lock);
}

void ows__session_unlock(ows_session *s)
{
	if (s->lock)
		ows__plat_mutex_unlock(s->lock);
}

/* What a session holds once its procs are detached (ows__session_detach_procs). */
static void session_free(ows_session *s)
{
	ows__plat_mutex_free(s->lock);
	free(s->proof_json);
	free(s->private_dir);
	free(s->default_cwd);
	ows__strv_free(&s->folders);
	free(s->agent_text);
	ows__strv_free(&s->env);
	ows__strv_free(&s->moved_aside);
	ows__strv_free(&s->modes_restored);
	ows__audit_close(&s->audit);
	free(s);
}

/* Opens a session; on OWS_EVERIFY also returns the failed proof in *proof (caller frees). */
static int session_open(const ows_policy *policy, const ows_config *config,
			const ows_session_options *opts, ows_session **out, char **proof,
			ows_error *err)
{
	ows_config defaults; /* a NULL config means the machine's */
	int rc;

	if (proof)
		*proof = NULL;
	if (!policy || !out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy or out is NULL");
	*out = NULL;
	if (opts && opts->size < sizeof(*opts))
		return ows__fail(err, OWS_EINVAL, 0, "ows_session_options.size",
				 "call ows_session_options_init() first", "options struct too small");
	if (!config) {
		if ((rc = ows__config_machine(&defaults, err)) < 0)
			return rc;
		config = &defaults;
	}
	const char *name = policy->provider ? policy->provider : config->provider;
	ows_session *s = ows__calloc(1, sizeof(*s), err);
	if (!s) {
		rc = OWS_ENOMEM;
		goto out_config;
	}
	s->net = policy->net != OWS_NET_DEFAULT ? policy->net : config->net;
	if (s->net == OWS_NET_DEFAULT)
		s->net = OWS_NET_NONE;
	if ((rc = ows__random_hex(s->id, 16, err)) < 0 ||
	    (rc = ows__audit_open(&s->audit, opts, err)) < 0 ||
	    (rc = (s->lock = ows__plat_mutex_new()) ? 0
		  : ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory")) < 0) {
		session_free(s);
		goto out_config;
	}
	memcpy(s->audit.session, s->id, sizeof(s->audit.session));

	s->ops = ows__provider_find(name);
	if (!s->ops) {
		rc = ows__fail(err, OWS_EUNSUPPORTED, 0, name,
			       "run `owsbx report` to see the providers this machine offers",
			       "this sandbox provider is not available here");
	}
	for (size_t i = 0; s->ops && rc == 0 && i < policy->nfolders; i++)
		rc = ows__strv_push(&s->folders, policy->folders[i].path, err);
	if (s->ops && rc == 0)
		rc = s->ops->open(s, policy, config, err);
	if (rc < 0) {
		ows__audit_emit(&s->audit, "refused",
				json_pack("{s:s, s:s, s:s, s:s, s:s}", "provider", name, "error",
					  ows_err_name(rc), "what", err ? err->what : "", "where",
					  err ? err->where : "", "hint", err ? err->hint : ""));
		if (proof && s->proof_json) {
			*proof = s->proof_json;
			s->proof_json = NULL;
		}
		ows__pxc_close(s->proxy);
		session_free(s);
		goto out_config;
	}
	/* A wall with a promise it cannot keep here says so on every event.  A
	 * default limit kept only in part is listed too, but the wall itself
	 * (files, network, processes) is what the enforcement level describes. */
	bool wall_partial = false;
	for (int i = 0; i < s->npartial; i++)
		wall_partial |= strncmp(s->partial[i].promise, OWS__PROMISE_LIMITS,
					strlen(OWS__PROMISE_LIMITS)) != 0;
	if (wall_partial && strcmp(s->enforcement, "full") == 0)
		s->enforcement = "partial";
	if (policy->has_limit[OWS_LIMIT_WALL_SECONDS]) {
		s->has_wall_limit = true;
		s->deadline_ms = ows__now_ms() + (int64_t)policy->limit[OWS_LIMIT_WALL_SECONDS] * 1000;
	}
	ows__audit_emit(&s->audit, "open",
			json_pack("{s:s, s:s, s:s, s:o*, s:o, s:o, s:s?}", "provider", s->ops->name,
				  "network", ows__net_name(s->net), "enforcement", s->enforcement,
				  "partial", partial_json(s), "folders", folders_json(policy),
				  "private_dir", ows__json_text(s->private_dir), "shared", s->agent_text));
	json_t *pj = json_loads(s->proof_json ? s->proof_json : "{}", 0, NULL);
	ows__audit_emit(&s->audit, "proof", pj);
	/* From here on its calls find it live, from any thread (lib/handles.c). */
	if ((rc = ows__session_register(s, err)) < 0) {
		s->ops->close(s, NULL);
		ows__pxc_close(s->proxy);
		session_free(s);
		goto out_config;
	}
	*out = s;
out_config:
	if (config == &defaults)
		ows__config_release(&defaults);
	return rc;
}

int ows_session_open(const ows_policy *policy, const ows_config *config,
		     const ows_session_options *opts, ows_session **out, ows_error *err)
{
	return session_open(policy, config, opts, out, NULL, err);
}

/* The sites a policy lists, allowed or denied ("!SITE", shown without the '!'), and the
 * machine's own allowed ones. */
static json_t *sites_json(const ows_policy *policy, const ows_config *config, bool deny)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < policy->hosts.len; i++)
		if ((policy->hosts.v[i][0] == '!') == deny)
			json_array_append_new(a, ows__json_text(policy->hosts.v[i] + deny));
	for (size_t i = 0; a && i < config->hosts.len; i++)
		if ((config->hosts.v[i][0] == '!') == deny)
			json_array_append_new(a, ows__json_text(config->hosts.v[i] + deny));
	return a;
}

/* Why a session gets the provider it does, for a person reading the plan. */
static const char *provider_from(const ows_policy *policy, const ows_config *config)
{
	if (policy->provider)
		return "the policy (--provider)";
	return config->path && config->path[0] ? "the machine's config" : "the built-in default";
}

int ows_session_plan(const ows_policy *policy, const ows_config *config, char **plan_json,
		     ows_error *err)
{
	ows_config machine;
	const ows_config *cfg;
	if (!policy || !plan_json)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy or plan_json is NULL");
	*plan_json = NULL;
	int rc = ows__config_or_machine(config, &machine, &cfg, err);
	if (rc < 0)
		return rc;
	const char *name = policy->provider ? policy->provider : cfg->provider;
	const ows__provider *ops = ows__provider_find(name);
	ows_net net = policy->net != OWS_NET_DEFAULT ? policy->net : cfg->net;
	if (net == OWS_NET_DEFAULT)
		net = OWS_NET_NONE;
	json_t *doc = NULL;
	if (!ops) {
		rc = ows__fail(err, OWS_EUNSUPPORTED, 0, name,
			       "run `owsbx report` to see the providers this machine offers",
			       "this sandbox provider is not available here");
		goto out;
	}
	const char *proxy = net == OWS_NET_ALLOWLIST
		? "the session's own, on the sandbox's loopback; every other address refused"
		: net == OWS_NET_OPEN ? "none: every address reachable"
				      : "none: nothing leaves the sandbox";
	doc = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:o}", "provider", ops->name,
			"provider_from", provider_from(policy, cfg), "network", "mode",
			ows__net_name(net), "proxy", proxy, "allow",
			sites_json(policy, cfg, false), "deny", sites_json(policy, cfg, true),
			"folders", folders_json(policy));
	if (!doc) {
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	if (ops->describe && (rc = ops->describe(policy, cfg, net, doc, err)) < 0)
		goto out;
	if (!(*plan_json = json_dumps(doc, JSON_INDENT(2))))
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
out:
	json_decref(doc);
	ows__config_release(&machine);
	return rc;
}

int ows_verify(const ows_policy *policy, const ows_config *config, char **report_json,
	       ows_error *err)
{
	ows_session *s = NULL;
	char *failed_proof = NULL;
	if (!report_json)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "report_json is NULL");
	*report_json = NULL;
	int rc = session_open(policy, config, NULL, &s, &failed_proof, err);
	if (rc < 0) {
		*report_json = failed_proof;
		return rc;
	}
	*report_json = s->proof_json;
	s->proof_json = NULL;
	return ows_session_close(s, err);
}

/*
 * Safe from any thread while others use the session: no new call gets in,
 * the provider ends every process (waits in flight then return, the command
 * killed), the calls in flight leave, and only then is anything freed.
 */
int ows_session_shutdown(ows_session *s, ows_error *err)
{
	if (!s)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "session is NULL");
	int rc = ows__session_begin_shutdown(s, err);
	if (rc == 1 && s->ops->stop)
		s->ops->stop(s);
	return rc < 0 ? rc : 0;
}

int ows_session_close(ows_session *s, ows_error *err)
{
	if (!s)
		return 0;
	int rc = ows__session_begin_close(s, err);
	if (rc < 0)
		return rc;
	if (s->ops->stop)
		s->ops->stop(s);
	ows__session_drain(s);
	rc = s->ops->close(s, err);
	/* The sandbox is gone: nothing is left to use the proxy. */
	ows__pxc_close(s->proxy);
	s->proxy = NULL;
	ows__audit_emit(&s->audit, "close",
			json_pack("{s:b, s:o*, s:o*}", "clean", rc == 0,
				  "moved_aside", take_guarded(s, &s->moved_aside),
				  "modes_restored", take_guarded(s, &s->modes_restored)));
	ows__session_detach_procs(s);
	session_free(s);
	return rc;
}

/* Borrowed strings of a live session; "" for NULL or a closed one. */
const char *ows_session_id(const ows_session *s) { return ows__session_is_live(s) ? s->id : ""; }
const char *ows_session_provider(const ows_session *s) { return ows__session_is_live(s) ? s->ops->name : ""; }
const char *ows_session_enforcement(const ows_session *s) { return ows__session_is_live(s) ? s->enforcement : ""; }
const char *ows_session_proof_json(const ows_session *s) { return ows__session_is_live(s) && s->proof_json ? s->proof_json : "{}"; }
const char *ows_session_private_dir(const ows_session *s) { return ows__session_is_live(s) ? s->private_dir : ""; }

const char *ows_session_cwd_for(const ows_session *s, const char *here)
{
	if (!ows__session_is_live(s))
		return here;
	for (size_t i = 0; here && i < s->folders.len; i++) {
		const char *p = s->folders.v[i];
		size_t n = strlen(p);
		if (strncmp(here, p, n) == 0 && (here[n] == '/' || here[n] == '\\' || here[n] == '\0'))
			return here;
	}
	return s->default_cwd;
}
const char *ows_session_agent_text(const ows_session *s) { return ows__session_is_live(s) && s->agent_text ? s->agent_text : ""; }

/* ------------------------------------------------------ per-call proxy */

/* The proxy variables of one call, all at 127.0.0.1:port, over the session's. */
static int env_set_proxy_port(ows__strv *env, int port, ows_error *err)
{
	ows__strv vars = {0};
	int rc = ows__proxy_env(port, NULL, &vars, err);
	for (size_t i = 0; rc == 0 && i < vars.len; i++)
		rc = ows__env_set_entry(env, vars.v[i], err);
	ows__strv_free(&vars);
	return rc;
}

/*
 * allowlist, where the sandbox has a network of its own: each call gets a
 * listener of its own inside (init makes it on the port chosen here, and
 * hands it over with STARTED), and its proxy variables point there, so that
 * what it and what it starts are refused is told to it alone.  A port
 * something inside already listens on is skipped; when every port is in use
 * the call shares the session's listener (its blocked sites then go by time).
 */
static int spawn_with_own_proxy_port(ows_session *s, ows_proc *p, const char *const argv[],
				     ows__strv *env, const char *cwd, const int stdio[3],
				     ows_error *err)
{
	if (!s->proxy || !s->call_ports)
		return s->ops->spawn(s, p, argv, env->v, cwd, stdio, err);
	for (int tries = 0; tries < 4; tries++) {
		int port = ows__pxc_port_take(s->proxy);
		if (!port)
			break;
		ows__strv own = {0};
		int rc = ows__env_merge(env, NULL, &own, err);
		if (rc == 0)
			rc = env_set_proxy_port(&own, port, err);
		p->proxy_port = port;
		p->proxy_port_err = 0;
		if (rc == 0)
			rc = s->ops->spawn(s, p, argv, own.v, cwd, stdio, err);
		ows__strv_free(&own);
		if (rc == 0)
			return 0; /* the listener is the proxy's now, and frees the port with the call */
		bool taken = p->proxy_port_err == EADDRINUSE;
		ows__pxc_port_drop(s->proxy, port, taken);
		p->proxy_port = 0;
		if (!p->proxy_port_err)
			return rc; /* the command itself could not start */
		ows_error_clear(err);
		if (!taken)
			break; /* no listener could be made: share the session's */
	}
	return s->ops->spawn(s, p, argv, env->v, cwd, stdio, err);
}

/* The sites refused to one call: by its own listener, else by time on the session's. */
static int proc_blocked(ows_session *s, const ows_proc *p, char **out, ows_error *err)
{
	if (p->proxy_port)
		return ows__pxc_blocked_json(s->proxy, 0, p->id, out, err);
	return ows__pxc_blocked_json(s->proxy, p->started_ms, 0, out, err);
}

static int spawn_in(ows_session *s, const char *const argv[], const ows_spawn_options *opts,
		    ows_proc **out, ows_error *err)
{
	ows_spawn_options defaults;
	if (!opts) {
		ows_spawn_options_init(&defaults);
		opts = &defaults;
	} else if (opts->size < sizeof(*opts)) {
		return ows__fail(err, OWS_EINVAL, 0, "ows_spawn_options.size",
				 "call ows_spawn_options_init() first", "options struct too small");
	}
	if (opts->cwd && !ows__plat_path_is_absolute(opts->cwd))
		return ows__fail(err, OWS_EINVAL, 0, opts->cwd, "give an absolute path",
				 "working folder is not absolute");
	ows__strv env = {0};
	int rc = ows__env_merge(&s->env, opts->env, &env, err);
	if (rc < 0)
		return rc;
	/* a secret the proxy injects is kept out of a command's variables too */
	if (s->proxy)
		ows__pxc_hide(s->proxy, &env);
	ows_proc *p = ows__calloc(1, sizeof(*p), err);
	if (!p) {
		ows__strv_free(&env);
		return OWS_ENOMEM;
	}
	p->session = s;
	p->started_ms = ows__now_ms();
	p->pid = -1;
	p->exit_fd = -1;
	if ((rc = ows__proc_register(s, p, err)) < 0) {
		ows__strv_free(&env);
		free(p);
		return rc;
	}
	const char *cwd = opts->cwd ? opts->cwd : s->default_cwd;
	rc = spawn_with_own_proxy_port(s, p, argv, &env, cwd, opts->stdio, err);
	ows__strv_free(&env);

	json_t *args = json_array();
	for (size_t i = 0; args && argv[i]; i++)
		json_array_append_new(args, ows__json_text(argv[i]));
	if (rc < 0) {
		ows__audit_emit(&s->audit, "spawn",
				json_pack("{s:o, s:o, s:s, s:s, s:o*, s:b, s:s}", "argv", args, "cwd",
					  ows__json_text(cwd), "provider", s->ops->name, "enforcement", s->enforcement,
					  "partial", partial_json(s), "started", 0, "error",
					  err ? err->what : ows_err_name(rc)));
		ows_proc_free(p);
		return rc;
	}
	ows__audit_emit(&s->audit, "spawn",
			json_pack("{s:o, s:o, s:s, s:s, s:o*, s:b, s:i}", "argv", args, "cwd", ows__json_text(cwd),
				  "provider", s->ops->name, "enforcement", s->enforcement,
				  "partial", partial_json(s), "started", 1, "proc", (int)p->id));
	*out = p;
	return 0;
}

int ows_session_spawn(ows_session *s, const char *const argv[], const ows_spawn_options *opts,
		      ows_proc **out, ows_error *err)
{
	if (out)
		*out = NULL;
	if (!s || !argv || !argv[0] || !out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "give a command to run",
				 "session, argv or out is NULL or empty");
	int rc = ows__session_enter(s, err);
	if (rc < 0)
		return rc;
	rc = spawn_in(s, argv, opts, out, err);
	ows__session_leave(s);
	return rc;
}

/* Waits in a live session, and on the first exit seen, says so in the audit trail. */
static int wait_in(ows_session *s, ows_proc *p, int timeout_ms, ows_error *err)
{
	if (ows__proc_get_exit(p, NULL))
		return 1;
	int rc;
	if (s->has_wall_limit) {
		int64_t left = s->deadline_ms - ows__now_ms();
		int slice = left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
		bool capped = timeout_ms < 0 || slice < timeout_ms;
		rc = s->ops->wait(s, p, capped ? slice : timeout_ms, err);
		if (rc == 0 && capped) {
			/* The session ran out of time: end the command, report it. */
			s->ops->kill(s, p, SIGKILL, NULL);
			rc = s->ops->wait(s, p, -1, err);
			if (rc == 1) {
				ows__audit_emit(&s->audit, "timeout",
						json_pack("{s:i}", "proc", (int)p->id));
			}
		}
	} else {
		rc = s->ops->wait(s, p, timeout_ms, err);
	}
	if (rc <= 0)
		return rc;
	/* What the proxy refused to this call: the site the agent should ask for. */
	json_t *blocked = NULL;
	char *bj = NULL;
	if (s->proxy && proc_blocked(s, p, &bj, NULL) == 0)
		blocked = json_loads(bj, 0, NULL);
	ows_free(bj);
	int code = 0;
	ows__proc_get_exit(p, &code);
	/* none: the internet sockets it asked for, refused (ows_proc_offline_calls). */
	json_t *offline = p->offline_calls ? json_integer((json_int_t)p->offline_calls) : NULL;
	ows__audit_emit(&s->audit, "exit",
			json_pack("{s:i, s:i, s:s, s:s, s:o*, s:o*, s:o*, s:o*, s:o*}", "proc",
				  (int)p->id, "exit_code", code, "provider", s->ops->name,
				  "enforcement", s->enforcement, "partial", partial_json(s),
				  "blocked", blocked, "offline_calls", offline,
				  "moved_aside", take_guarded(s, &s->moved_aside),
				  "modes_restored", take_guarded(s, &s->modes_restored)));
	return 1;
}

int ows_proc_wait(ows_proc *p, int timeout_ms, int *exit_code, ows_error *err)
{
	ows_session *s;
	int rc = ows__proc_enter(p, &s, err);
	if (rc < 0)
		return rc;
	if (s) {
		rc = wait_in(s, p, timeout_ms, err);
		ows__session_leave(s);
		if (rc <= 0)
			return rc;
	} else if (!ows__proc_get_exit(p, NULL)) {
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "the session was closed");
	}
	/* Closed sessions set every exit first (the command killed, or its own code). */
	if (exit_code)
		ows__proc_get_exit(p, exit_code);
	return 1;
}

int ows_proc_kill(ows_proc *p, int signo, ows_error *err)
{
	ows_session *s;
	int rc = ows__proc_enter(p, &s, err);
	if (rc < 0)
		return rc;
	if (ows__proc_get_exit(p, NULL))
		rc = 0;
	else if (!s)
		rc = ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "the session was closed");
	else
		rc = s->ops->kill(s, p, signo, err);
	if (s)
		ows__session_leave(s);
	return rc;
}

int ows_proc_fd(const ows_proc *p)
{
	ows_session *s;
	if (ows__proc_enter(p, &s, NULL) < 0)
		return -1;
	if (s)
		ows__session_leave(s);
	return p->exit_fd; /* the proc's own, set at spawn: valid until ows_proc_free() */
}

unsigned ows_proc_offline_calls(const ows_proc *p)
{
	ows_session *s;
	if (ows__proc_enter(p, &s, NULL) < 0)
		return 0;
	if (s)
		ows__session_leave(s);
	/* Set before the exit is, once, by whoever collected it: read only after. */
	return ows__proc_get_exit(p, NULL) ? p->offline_calls : 0;
}

void ows__proc_release(ows_proc *p)
{
	if (p->exit_fd >= 0)
		close(p->exit_fd);
	free(p);
}

int ows_proc_blocked_json(ows_proc *p, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	ows_session *s;
	int rc = ows__proc_enter(p, &s, err);
	if (rc < 0)
		return rc;
	if (!s)
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "the session was closed");
	if (s->proxy)
		rc = proc_blocked(s, p, out, err);
	else
		rc = (*out = ows__strdup("[]", err)) ? 0 : OWS_ENOMEM;
	ows__session_leave(s);
	return rc;
}

/* A freed call's listener closes: what it left running reaches the proxy no more through it. */
static void end_own_proxy_port(ows_proc *p)
{
	ows_session *s;
	if (!p->proxy_port || ows__proc_enter(p, &s, NULL) < 0 || !s)
		return;
	if (s->proxy)
		ows__pxc_end_call(s->proxy, p->id);
	ows__session_leave(s);
}

void ows_proc_free(ows_proc *p)
{
	if (!p)
		return;
	end_own_proxy_port(p);
	if (ows__proc_unregister(p))
		ows__proc_release(p);
}

void ows__session_forget_open(ows_session *s)
{
	ows__pxc_close(s->proxy);
	s->proxy = NULL;
	s->call_ports = false;
	ows__strv_free(&s->env);
	free(s->proof_json);
	s->proof_json = NULL;
}

/* The proxy variables every common client reads, all at 127.0.0.1:port. */
static int env_add_proxy(ows__strv *env, int port, const char *tunnel_cmd, ows_error *err)
{
	ows__strv vars = {0};
	int rc = ows__proxy_env(port, tunnel_cmd, &vars, err);
	for (size_t i = 0; rc == 0 && i < vars.len; i++)
		rc = ows__env_set_entry(env, vars.v[i], err);
	ows__strv_free(&vars);
	return rc;
}

int ows__session_layout(ows_session *s, const ows_policy *policy, const char *priv,
			char sep, const char *user, const char *provider, ows__strv *paths,
			ows_error *err)
{
	static const char *const leaves[] = {"home", "tmp", "cache"};
	int rc = 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(leaves) && rc == 0; i++)
		rc = ows__strv_pushf(paths, err, "%s%c%s", priv, sep, leaves[i]);
	if (rc < 0)
		return rc;
	ows__env_spec spec = {.home = paths->v[0], .tmp = paths->v[1], .cache = paths->v[2],
			      .user = user, .provider = provider, .host_env = ows__plat_environ()};
	if ((rc = ows__env_build(policy, &spec, &s->env, err)) < 0)
		return rc;
	const char *cwd = paths->v[0];
	for (size_t i = 0; i < policy->nfolders; i++)
		if (policy->folders[i].access == OWS_ACCESS_RW) {
			cwd = policy->folders[i].path;
			break;
		}
	free(s->default_cwd);
	return (s->default_cwd = ows__strdup(cwd, err)) ? 0 : OWS_ENOMEM;
}

int ows__session_start_proxy(ows_session *s, const ows_policy *policy, const ows_config *config,
			     const ows__strv *more_hosts, const char *tunnel_cmd,
			     bool listener_handed_in, int *port, ows_error *err)
{
	const struct {
		const ows__strv *sites;
		const char *source;
	} lists[] = {{&policy->hosts, "policy"}, {&config->hosts, "machine"},
		     {more_hosts, "credential"}};
	int rc = ows__pxc_open(&s->proxy, err);
	for (size_t l = 0; l < OWS__ARRAY_LEN(lists) && rc == 0; l++)
		for (size_t i = 0; lists[l].sites && i < lists[l].sites->len && rc == 0; i++)
			rc = ows__pxc_allow(s->proxy, lists[l].sites->v[i], lists[l].source, err);
	if (rc == 0 && listener_handed_in) {
		*port = OWS__PROXY_PORT_INSIDE;
		s->call_ports = true;
	} else if (rc == 0) {
		rc = ows__pxc_listen_loopback(s->proxy, port, err);
	}
	if (rc == 0)
		rc = env_add_proxy(&s->env, *port, tunnel_cmd, err);
	return rc;
}

/* Sites change for the running session at once, without a restart. */
static int session_proxy(ows_session *s, ows_error *err, ows__pxc **out)
{
	if (!s->proxy)
		return ows__fail(err, OWS_ESTATE, 0, ows__net_name(s->net),
				 "open the session with network allowlist",
				 "this session has no allow list");
	*out = s->proxy;
	return 0;
}

static int allow_site_in(ows_session *s, const char *pattern, ows_error *err)
{
	ows__pxc *px = NULL;
	int rc = s->ops->allow_site ? s->ops->allow_site(s, pattern, err)
				    : session_proxy(s, err, &px);
	if (rc == 0 && px)
		rc = ows__pxc_allow(px, pattern, "session", err);
	if (rc == 0)
		ows__audit_emit(&s->audit, "site", json_pack("{s:s, s:s}", "allow", pattern, "for",
							    "session"));
	return rc;
}

static int remove_site_in(ows_session *s, const char *pattern, ows_error *err)
{
	ows__pxc *px = NULL;
	int rc = session_proxy(s, err, &px);
	if (rc == 0 && (rc = ows__pxc_disallow(px, pattern, err)) == 0)
		ows__audit_emit(&s->audit, "site", json_pack("{s:s}", "remove", pattern));
	return rc;
}

static int blocked_json_in(ows_session *s, int64_t since_ms, char **out, ows_error *err)
{
	ows__pxc *px = NULL;
	if (out)
		*out = NULL;
	int rc = session_proxy(s, err, &px);
	return rc < 0 ? rc : ows__pxc_blocked_json(px, since_ms, OWS__PXC_ALL, out, err);
}

/* -------------------------------------------------------- site checks */

static int dump_json(json_t *j, char **out, ows_error *err)
{
	*out = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

/* A session without a list: `none` refuses everything, `open` lets everything out. */
static int check_without_list(ows_session *s, const char *host, int port, char **why_json,
			      ows_error *err)
{
	bool open = s->net == OWS_NET_OPEN;
	if (!host || !host[0] || port < 1 || port > 65535)
		return ows__fail(err, OWS_EINVAL, 0, host ? host : "(null)", "give a host and 1-65535",
				 "not a host and port");
	if (why_json) {
		int rc = dump_json(json_pack("{s:b, s:s, s:i, s:n, s:s, s:n}", "allowed", open, "host",
					     host, "port", port, "pattern", "reason",
					     open ? "network open" : "network none", "allow"),
				   why_json, err);
		if (rc < 0)
			return rc;
	}
	return open ? 1 : 0;
}

static int check_site_in(ows_session *s, const char *host, int port, char **why_json,
			 ows_error *err)
{
	if (!s->proxy)
		return check_without_list(s, host, port, why_json, err);
	ows__verdict v;
	int rc = ows__pxc_check(s->proxy, host, port, &v, err);
	if (rc < 0 || !why_json)
		return rc;
	json_t *j = json_pack("{s:b, s:s, s:i, s:s?, s:s?, s:s?}", "allowed", v.allowed, "host",
			      v.host, "port", v.port, "pattern", v.pattern[0] ? v.pattern : NULL,
			      "reason", v.reason, "allow", v.allow[0] ? v.allow : NULL);
	if (j && v.addr[0])
		json_object_set_new(j, "address", json_string(v.addr));
	int drc = dump_json(j, why_json, err);
	return drc < 0 ? drc : rc;
}

static int sites_json_in(ows_session *s, char **out, ows_error *err)
{
	ows__strv pats = {0}, srcs = {0};
	int rc = s->proxy ? ows__pxc_sites(s->proxy, &pats, &srcs, err) : 0;
	json_t *a = rc == 0 ? json_array() : NULL;
	for (size_t i = 0; a && i < pats.len; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "pattern", pats.v[i], "source",
						   srcs.v[i]));
	ows__strv_free(&pats);
	ows__strv_free(&srcs);
	return rc < 0 ? rc : dump_json(a, out, err);
}

int ows_session_check_site(ows_session *s, const char *host, int port, char **why_json,
			   ows_error *err)
{
	if (why_json)
		*why_json = NULL;
	int rc = ows__session_enter(s, err);
	if (rc == 0) {
		rc = check_site_in(s, host, port, why_json, err);
		ows__session_leave(s);
	}
	return rc;
}

int ows_session_sites_json(ows_session *s, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	int rc = ows__session_enter(s, err);
	if (rc == 0) {
		rc = sites_json_in(s, out, err);
		ows__session_leave(s);
	}
	return rc;
}

int ows_session_allow_site(ows_session *s, const char *pattern, ows_error *err)
{
	int rc = ows__session_enter(s, err);
	if (rc == 0) {
		rc = allow_site_in(s, pattern, err);
		ows__session_leave(s);
	}
	return rc;
}

int ows_session_set_ask(ows_session *s, ows_ask_fn fn, void *ctx, int timeout_ms, ows_error *err)
{
	int rc = ows__session_enter(s, err);
	if (rc == 0) {
		ows__pxc *px = NULL;
		rc = session_proxy(s, err, &px);
		if (rc == 0)
			rc = ows__pxc_set_ask(px, fn, ctx, timeout_ms, err);
		ows__session_leave(s);
	}
	return rc;
}

int ows_session_remove_site(ows_session *s, const char *pattern, ows_error *err)
{
	int rc = ows__session_enter(s, err);
	if (rc == 0) {
		rc = remove_site_in(s, pattern, err);
		ows__session_leave(s);
	}
	return rc;
}

int ows_session_blocked_json(ows_session *s, int64_t since_ms, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	int rc = ows__session_enter(s, err);
	if (rc == 0) {
		rc = blocked_json_in(s, since_ms, out, err);
		ows__session_leave(s);
	}
	return rc;
}
