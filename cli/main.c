/* owsbx: parse, call the library, print.  Nothing here a host would need too. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "args.h"
#include "os.h"
#ifdef _WIN32
#include "win/exec.h"
#endif

static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
	pending_signal = sig;
}

/*
 * Text from outside (a path, a file name, a host the agent asked for) as the
 * terminal may show it: every control written out (ows_text_escape), so that
 * it cannot write the clipboard, set a title or start a line of its own.
 * "" for NULL.  From a ring of buffers: valid until seven more calls.
 */
static const char *shown(const char *s)
{
	static char ring[8][2048];
	static unsigned next;
	return ows_text_escape(ring[next++ % 8], sizeof(ring[0]), s);
}

/* A string member of a library document, shown(). */
static const char *field(const json_t *o, const char *key)
{
	return shown(json_string_value(json_object_get(o, key)));
}

/* A library document printed as JSON, laid out as it came: anything past ASCII as \u
 * escapes, the C1 controls too. */
static void put_json(const char *text)
{
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	size_t layout = strchr(text ? text : "", '\n') ? JSON_INDENT(2) : JSON_COMPACT;
	char *ascii = j ? json_dumps(j, layout | JSON_ENSURE_ASCII) : NULL;
	if (ascii || text)
		puts(ascii ? ascii : shown(text));
	free(ascii);
	json_decref(j);
}

static void print_error(const ows_error *err)
{
	fprintf(stderr, "owsbx: %s", shown(err->what[0] ? err->what : ows_strerror(err->code)));
	if (err->where[0])
		fprintf(stderr, ": %s", shown(err->where));
	fputc('\n', stderr);
	if (err->hint[0])
		fprintf(stderr, "  %s\n", shown(err->hint));
}

/* What a failed session open means for the exit status. */
static int open_status(int rc)
{
	return rc == OWS_EINVAL || rc == OWS_ECONFIG ? OWSBX_EXIT_USAGE : OWSBX_EXIT_WALL;
}


/* allowlist: the sites refused while the command ran, and how to allow them. */
static void print_blocked(ows_session *s, int64_t since_ms)
{
	char *json = NULL;
	if (ows_session_blocked_json(s, since_ms, &json, NULL) < 0 || !json)
		return;
	json_t *arr = json_loads(json, 0, NULL);
	size_t i;
	json_t *b;
	json_array_foreach(arr, i, b) {
		const char *host = field(b, "host");
		const char *reason = field(b, "reason");
		const char *denied_by = json_object_get(b, "denied_by") ? field(b, "denied_by") : NULL;
		bool private_addr = reason && strcmp(reason, "private address") == 0;
		if (denied_by) { /* the person's own deny entry: nothing to suggest */
			fprintf(stderr, "owsbx: the allow list refused %s:%lld while the command ran: "
					"denied by %s\n",
				host, (long long)json_integer_value(json_object_get(b, "port")), denied_by);
			continue;
		}
		fprintf(stderr, "owsbx: the allow list refused %s:%lld while the command ran%s; "
				"to allow it: --allow-site %s\n",
			host, (long long)json_integer_value(json_object_get(b, "port")),
			private_addr ? " (the name resolved to a private address)" : "", field(b, "allow"));
	}
	json_decref(arr);
	ows_free(json);
}

/*
 * none: a command that failed after reaching for the outside is told why,
 * once, with the way to let a site through.  Not when it succeeded: a tool
 * whose update check or telemetry was refused did its work, and a note on
 * every good run would teach people to skip the one that matters.
 */
static void print_offline(ows_proc *proc, int code)
{
	unsigned n = ows_proc_offline_calls(proc);
	if (code == 0 || n == 0)
		return;
	fprintf(stderr, "owsbx: the network is off (--net none): the command's network call%s "
			"(%u, a name lookup or a connection) %s refused; to allow a site: "
			"--net allowlist --allow-site HOST\n",
		n > 1 ? "s" : "", n, n > 1 ? "were" : "was");
}

/* A site option under --net none: accepted (a policy may carry its list), but it opens nothing. */
static void warn_sites_unused(const owsbx_args *a)
{
	if (a->net_none && a->site_option)
		fprintf(stderr, "owsbx: %s has no effect with --net none: nothing leaves the sandbox; "
				"--net allowlist lets the listed sites through\n",
			a->site_option);
}

/* The members of a JSON array of strings, one line each after `label`. */
static void put_list(FILE *out, const json_t *arr, const char *label, const char *after)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		fprintf(out, "  %s %s%s\n", label, shown(json_string_value(v)), after);
}

/* A limit and where it came from: "512 (default)". */
static void put_limit(FILE *out, const json_t *lim, const char *key, const char *label,
		      const char *unit)
{
	char from[32];
	snprintf(from, sizeof(from), "%s_from", key);
	json_t *v = json_object_get(lim, key);
	if (!v)
		return;
	const char *src = json_string_value(json_object_get(lim, from));
	fprintf(out, "  limit: %s %lld%s%s%s%s\n", label, (long long)json_integer_value(v), unit,
		src ? " (" : "", src ? (strcmp(src, "policy") == 0 ? "the policy's" : src) : "",
		src ? ")" : "");
}

/*
 * What the wall will be built from (ows_session_plan), a line each, every
 * name escaped: --verbose on stderr before the session opens, --dry-run on
 * stdout in its place.  0, or the library's error code (printed if say_error).
 */
static int print_plan(FILE *out, const owsbx_args *a, ows_config *config, const char *title,
		      bool say_error)
{
	ows_error err;
	ows_error_clear(&err);
	char *text = NULL;
	int rc = ows_session_plan(a->policy, config, &text, &err);
	if (rc < 0) {
		if (say_error)
			print_error(&err);
		return rc;
	}
	json_t *p = json_loads(text, 0, NULL);
	ows_free(text);
	json_t *net = json_object_get(p, "network");
	fprintf(out, "owsbx: %s\n", title);
	fprintf(out, "  provider: %s (from %s)\n", field(p, "provider"), field(p, "provider_from"));
	json_t *who = json_object_get(p, "runs_as");
	if (who)
		fprintf(out, "  runs as: %s (%s)\n", field(who, "account"), field(who, "from"));
	fprintf(out, "  network: %s; proxy: %s\n", field(net, "mode"), field(net, "proxy"));
	if (json_object_get(net, "namespace"))
		fprintf(out, "  network namespace: %s\n", field(net, "namespace"));
	put_list(out, json_object_get(net, "allow"), "allowed site:", "");
	put_list(out, json_object_get(net, "deny"), "denied site:", "");
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(p, "folders"), i, v)
		fprintf(out, "  folder: %s (%s)\n", field(v, "path"),
			strcmp(json_string_value(json_object_get(v, "access")), "rw") == 0
				? "read-write" : "read-only");
	put_list(out, json_object_get(p, "toolchains"), "toolchain:", " (read-only)");
	put_list(out, json_object_get(p, "shared"), "shared login file (a copy):", "");
	json_array_foreach(json_object_get(p, "guard"), i, v)
		fprintf(out, "  guard: %s (%s)\n", field(v, "path"), field(v, "how"));
	put_list(out, json_object_get(p, "masks"), "mask:", " (covered empty)");
	json_t *lim = json_object_get(p, "limits");
	put_limit(out, lim, "processes", "processes", "");
	put_limit(out, lim, "memory_mb", "memory", " MB");
	put_limit(out, lim, "tmpfs_mb", "/tmp and /dev/shm", " MB each");
	json_array_foreach(json_object_get(p, "partial"), i, v)
		fprintf(out, "  kept in part: %s: %s\n", field(v, "promise"), field(v, "why"));
	json_decref(p);
	fflush(out);
	return 0;
}

static int cmd_run(owsbx_args *a, ows_config *config)
{
	warn_sites_unused(a);
	int planned = 0;
	if (a->dry_run)
		planned = print_plan(stdout, a, config, "dry run: the wall would be built from "
				     "this; nothing was run or changed", true);
	else if (a->verbose)
		planned = print_plan(stderr, a, config, "the wall is built from:", true);
	if (planned < 0 || a->dry_run)
		return planned < 0 ? open_status(planned) : 0;
	ows_error err;
	ows_error_clear(&err);
	ows_session_options so;
	ows_session_options_init(&so);
	so.events_path = a->events_path;
	ows_session *s = NULL;
	int rc = ows_session_open(a->policy, config, &so, &s, &err);
	if (rc < 0) {
		print_error(&err);
		return open_status(rc);
	}
	/* A signal to owsbx ends the command, then the session: nothing stays behind. */
	owsbx_os_catch_signals(on_signal);

	ows_spawn_options opts;
	ows_spawn_options_init(&opts);
	/* The command starts where the person is, when that is inside a session folder. */
	char *here = owsbx_os_getcwd();
	const char *cwd = ows_session_cwd_for(s, here);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t started = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	opts.cwd = cwd;
	/* A person at a terminal may expect the command where they stand: say where it runs. */
	if (here && cwd && strcmp(here, cwd) != 0 && owsbx_os_stderr_is_tty())
		fprintf(stderr, "owsbx: %s is in no session folder: the command runs in %s\n",
			shown(here), shown(cwd));
	ows_proc *proc = NULL;
	int status;
	rc = ows_session_spawn(s, (const char *const *)a->argv, &opts, &proc, &err);
	free(here);
	if (rc < 0) {
		print_error(&err);
		status = rc == OWS_ESPAWN ? OWSBX_EXIT_START : OWSBX_EXIT_WALL;
	} else {
		int code = 0;
		bool forwarded = false;
		for (;;) {
			rc = ows_proc_wait(proc, 200, &code, &err);
			if (rc != 0)
				break;
			if (pending_signal && !forwarded) {
				ows_proc_kill(proc, pending_signal, NULL);
				forwarded = true;
			}
		}
		if (rc < 0) {
			print_error(&err);
			status = OWSBX_EXIT_WALL;
		} else {
			status = code;
		}
		print_blocked(s, started);
		if (rc >= 0)
			print_offline(proc, status);
		ows_proc_free(proc);
	}
	ows_error_clear(&err);
	if (ows_session_close(s, &err) < 0) {
		print_error(&err);
		if (status == 0)
			status = OWSBX_EXIT_WALL;
	}
	return status;
}

/*
 * The report verify prints: the proof, with "error" when the session was
 * refused; a session refused before any proof (bad input, a wall this machine
 * cannot build) gets a report with no checks, so a refusal is never silent.
 */
static json_t *verify_report(const ows_policy *policy, const char *proof, int rc,
			     const ows_error *err)
{
	json_t *j = proof ? json_loads(proof, 0, NULL) : NULL;
	if (!j) {
		char *pj = ows_policy_to_json(policy);
		json_t *p = pj ? json_loads(pj, 0, NULL) : NULL;
		ows_free(pj);
		const char *provider = json_string_value(json_object_get(p, "provider"));
		const char *network = json_string_value(json_object_get(p, "network"));
		j = json_pack("{s:b, s:s*, s:s*, s:[]}", "passed", false, "provider", provider,
			      "network", network, "checks");
		json_decref(p);
	}
	if (j && rc < 0)
		json_object_set_new(j, "error",
				    json_pack("{s:i, s:s, s:s, s:s, s:s}", "code", rc, "name",
					      ows_err_name(rc), "what",
					      err->what[0] ? err->what : ows_strerror(rc), "where",
					      err->where, "hint", err->hint));
	return j;
}

static void print_report(const owsbx_args *a, const char *proof, int rc, const ows_error *err)
{
	json_t *j = verify_report(a->policy, proof, rc, err);
	char *text = j ? json_dumps(j, (a->json ? JSON_COMPACT : JSON_INDENT(2)) | JSON_ENSURE_ASCII) : NULL;
	if (text || proof)
		puts(text ? text : shown(proof));
	free(text);
	json_decref(j);
}

static int cmd_verify(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	char *proof = NULL;
	warn_sites_unused(a);
	/* A plan refused is left for the proof's report to say, once. */
	if (a->verbose)
		print_plan(stderr, a, config, "the wall is built from:", false);
	int rc = ows_verify(a->policy, config, &proof, &err);
	print_report(a, proof, rc, &err);
	ows_free(proof);
	if (rc < 0) {
		print_error(&err);
		return open_status(rc);
	}
	return 0;
}

static int cmd_report(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	char *out = NULL;
	if (ows_report_json(config, &out, &err) < 0) {
		print_error(&err);
		return 1;
	}
	if (a->json) {
		put_json(out);
	} else {
		json_t *root = json_loads(out, 0, NULL);
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(root, "capabilities"), i, c)
			printf("%-30s %-12s %s\n", field(c, "name"),
			       field(c, "status"),
			       field(c, "why"));
		json_decref(root);
	}
	ows_free(out);
	return 0;
}

static void on_progress(void *ctx, const char *step)
{
	printf("  - %s\n", shown(step));
	fflush(stdout);
}

/* Asks on stdin; no answer (no terminal, end of input) is no. */
static bool confirm(const char *question)
{
	fflush(stdout); /* the plan first, then the question */
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	char line[64];
	if (!fgets(line, sizeof(line), stdin)) {
		fputs("\n(no answer: nothing was changed; pass --yes to apply without asking)\n", stderr);
		return false;
	}
	return line[0] == 'y' || line[0] == 'Y';
}

/* What a setup's plan says of itself, once printed. */
struct setup_plan {
	size_t nchanges;
	bool blocked, root;
};

/*
 * A setup's plan (ows_machine_plan), printed: its changes in order, its notes, and for the
 * machine's own setup what follows; every string escaped.  -1 when there is none (the
 * error printed).
 */
static int show_setup_plan(ows_config *config, ows_setup_options *so, struct setup_plan *sp)
{
	ows_error err;
	ows_error_clear(&err);
	char *text = NULL;
	if (ows_machine_plan(config, so, &text, &err) < 0) {
		print_error(&err);
		return -1;
	}
	json_t *p = json_loads(text, 0, NULL);
	ows_free(text);
	json_t *changes = json_object_get(p, "changes"), *v;
	size_t i;
	sp->nchanges = json_array_size(changes);
	sp->blocked = json_is_true(json_object_get(p, "blocked"));
	sp->root = json_is_true(json_object_get(p, "root"));
	if (so->provider)
		printf(sp->nchanges ? "Setup of %s will take these steps, in order:\n"
				    : "Nothing to set up for %s.\n", shown(so->provider));
	else if (sp->nchanges)
		printf("Setup will make these changes:\n");
	else if (!sp->blocked) /* a note says why it stops */
		printf("Nothing to change: the machine is set up as recorded.\n");
	json_array_foreach(changes, i, v)
		printf("  %zu. %s: %s\n", i + 1, field(v, "item"), field(v, "change"));
	json_array_foreach(json_object_get(p, "notes"), i, v)
		printf("  note: %s\n", shown(json_string_value(v)));
	const char *cmd = json_string_value(json_object_get(p, "command"));
	if (so->provider && cmd && cmd[0])
		printf("  command: %s\n", shown(cmd));
	if (!so->provider && !sp->blocked)
		printf("Then: %s.\n", field(p, "then"));
	json_decref(p);
	if (sp->blocked)
		fprintf(stderr, "owsbx: setup cannot go ahead%s (see the note above); nothing was "
				"changed\n", so->provider ? " here" : "");
	return 0;
}

/*
 * `machine sandbox setup`: the plan, asked (unless --yes, or nothing to change), then
 * applied.  The machine's own setup asks only a root host (it changes accounts and
 * rules); a provider's (openshell) prints each step as it is made, with the installer's
 * and docker's own output: Ctrl-C cancels the step that runs, and setup undoes what it
 * did before it.
 */
static int machine_setup(owsbx_args *a, ows_config *config, ows_setup_options *so)
{
	ows_error err;
	ows_error_clear(&err);
	struct setup_plan sp;
	so->provider = a->machine_provider;
	if (show_setup_plan(config, so, &sp) < 0 || sp.blocked)
		return 1;
	bool ask = sp.nchanges && !a->yes && (so->provider || sp.root);
	if (ask && !confirm(so->provider ? "Take these steps?" : "Apply these changes?"))
		return 1;
	/* Ctrl-C reaches the step's command (same process group) and ends it; owsbx stays to
	 * undo what setup did before it. */
	if (so->provider)
		owsbx_os_catch_signals(on_signal);
	if (ows_machine_setup(config, so, &err) < 0) {
		print_error(&err);
		return 1;
	}
	if (so->provider)
		printf("Setup done: run `owsbx machine sandbox status --provider %s`.\n",
		       shown(so->provider));
	else
		printf("Setup done: the wall is proved and the account provider is chosen.\n");
	return 0;
}

static int machine_status(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	char *out = NULL;
	int rc = ows_machine_status_of(config, a->machine_provider, &out, &err);
	if (rc < 0) {
		print_error(&err);
		ows_free(out);
		return 1;
	}
	if (a->json) {
		put_json(out);
	} else {
		json_t *j = json_loads(out, 0, NULL);
		size_t i;
		json_t *r;
		json_array_foreach(json_object_get(j, "rows"), i, r) {
			const char *state = field(r, "state");
			const char *fix = json_object_get(r, "fix") ? field(r, "fix") : NULL;
			/* The Windows rows say what is looked for ("what") where Linux's say what was
			 * found ("detail"). */
			const char *detail = field(r, json_object_get(r, "detail") ? "detail" : "what");
			printf("%-5s %-16s %s\n", strcmp(state, "ok") == 0 ? "ok" : strcmp(state, "fail") == 0 ? "FAIL" : "skip",
			       field(r, "item"), detail);
			if (fix)
				printf("      fix: %s\n", fix);
			/* openshell's rows: the command to run apart from a note and a link. */
			static const char *const extra[] = {"command", "hint", "docs"};
			for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
				if (json_is_string(json_object_get(r, extra[k])))
					printf("      %s: %s\n", extra[k], field(r, extra[k]));
			}
		}
		json_decref(j);
	}
	ows_free(out);
	return rc > 0 ? 1 : 0;
}

static int cmd_credentials(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	char *out = NULL;
	if (ows_catalog_json(config, &out, &err) < 0) {
		print_error(&err);
		return 1;
	}
	if (a->json) {
		put_json(out);
		ows_free(out);
		return 0;
	}
	json_t *root = json_loads(out, 0, NULL);
	size_t i;
	json_t *e;
	printf("%-16s %-22s %-36s %-10s %-9s %s\n", "NAME", "WHAT", "PATH UNDER HOME", "HERE",
	       "SHARED", "INJECT");
	json_array_foreach(json_object_get(root, "credentials"), i, e) {
		const char *shared = !json_is_true(json_object_get(e, "shared")) ? "no"
				     : json_is_true(json_object_get(e, "injected")) ? "injected"
										: "copied";
		printf("%-16s %-22s %-36s %-10s %-9s %s\n",
		       field(e, "name"),
		       field(e, "label"),
		       field(e, "path"),
		       json_is_true(json_object_get(e, "found")) ? "found" : "not found", shared,
		       json_is_string(json_object_get(e, "inject_header")) ? "can" : "cannot");
	}
	printf("\ntoolchains (read-only):\n");
	json_array_foreach(json_object_get(root, "toolchains"), i, e)
		printf("  %-22s %-10s %s\n", field(e, "path"),
		       json_is_true(json_object_get(e, "found")) ? "found" : "not found",
		       json_is_true(json_object_get(e, "shared")) ? "shared" : "");
	printf("\nShare one in %s: [credentials] enable = NAME, [toolchains] enable = PATH;\n"
	       "keep its secret outside with [credentials] inject = NAME (owsbx credentials --json "
	       "says why an entry cannot)\n",
	       ows_config_path(config)[0] ? ows_config_path(config) : OWS_CONFIG_DEFAULT_PATH);
	json_decref(root);
	ows_free(out);
	return 0;
}

/* The launcher setup installs setuid: the one beside this owsbx (the build tree), else the
 * one make install and the Debian package put in PREFIX/lib/owsandbox/ beside
 * PREFIX/bin/owsbx. That one is a plain file its package may replace: setup copies it to the
 * launcher path (/usr/local/libexec/owsandbox/owsbx-launch by default), its own. */
static char *default_launcher_source(void)
{
	char *s = owsbx_os_beside_self("owsbx-launch");
#ifndef _WIN32
	if (!s) {
		char *up = owsbx_os_beside_self("../lib/owsandbox/owsbx-launch");
		s = up ? realpath(up, NULL) : NULL;
		free(up);
	}
#endif
	return s;
}

static int cmd_machine(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	int rc;
	ows_setup_options so;
	ows_setup_options_init(&so);
	so.for_user = a->for_user;
	so.progress = on_progress;
	char *source = a->launcher_source ? NULL : default_launcher_source();
	so.launcher_source = a->launcher_source ? a->launcher_source : source;
	const char *v = a->machine_verb;
	if (strcmp(v, "setup") == 0) {
		rc = machine_setup(a, config, &so);
		free(source);
		return rc;
	}
	free(source);
	so.launcher_source = NULL;
	if (strcmp(v, "status") == 0)
		return machine_status(a, config);
	if (strcmp(v, "remove") == 0) {
		if (owsbx_os_is_admin() && !a->yes &&
		    !confirm("Remove the sandbox setup: undo what the setup record says?"))
			return 1;
		rc = ows_machine_remove(config, &so, &err);
		if (rc == 0)
			printf("Removed: the machine is as it was before setup.\n");
	} else { /* cleanup: the parser knows no other verb */
		rc = ows_machine_cleanup(config, &err);
	}
	if (rc < 0) {
		print_error(&err);
		return 1;
	}
	return 0;
}

/* The proxy in the foreground: the port on stdout, refusals on stderr. */
static int cmd_proxy(const owsbx_args *a)
{
	ows_error err;
	ows_error_clear(&err);
	/* Many tunnels, up to six descriptors each: as the proxy's host, owsbx raises its
	 * descriptor limit, as any host that wants more may; the library itself never does. */
	owsbx_os_raise_nofile();
	ows_proxy_options po;
	ows_proxy_options_init(&po);
	po.port = a->port;
	po.hosts_file = a->hosts_file;
	po.connect_timeout_ms = a->connect_timeout_ms;
	po.response_timeout_ms = a->response_timeout_ms;
	po.max_conns = a->max_conns;
	ows_proxy *px = NULL;
	if (ows_proxy_start(&po, &px, &err) < 0) {
		print_error(&err);
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < a->nsites; i++)
		rc = ows_proxy_allow(px, a->sites[i], &err);
	for (size_t i = 0; rc == 0 && i < a->ndeny_sites; i++) {
		char *deny = owsbx_deny_pattern(a->deny_sites[i]);
		rc = deny ? ows_proxy_allow(px, deny, &err) : OWS_ENOMEM;
		free(deny);
	}
	for (size_t i = 0; rc == 0 && i < a->nsite_files; i++)
		rc = ows_proxy_allow_file(px, a->site_files[i], &err);
	if (rc < 0) {
		print_error(&err);
		ows_proxy_stop(px);
		return OWSBX_EXIT_USAGE;
	}
	owsbx_os_catch_signals(on_signal);
	owsbx_os_ignore_sigpipe();
	printf("%d\n", ows_proxy_port(px));
	fflush(stdout);
	fprintf(stderr, "owsbx proxy: listening on 127.0.0.1:%d; HTTPS_PROXY=http://127.0.0.1:%d\n",
		ows_proxy_port(px), ows_proxy_port(px));
	/* Refusals as they happen, so the person sees what to allow. */
	int64_t since = 0;
	while (!pending_signal) {
		owsbx_os_sleep_ms(200);
		char *json = NULL;
		if (ows_proxy_blocked_json(px, since, &json, NULL) == 0) {
			json_t *arr = json_loads(json, 0, NULL);
			size_t i;
			json_t *b;
			json_array_foreach(arr, i, b) {
				json_int_t last = json_integer_value(json_object_get(b, "last_ms"));
				const char *by = json_object_get(b, "denied_by") ? field(b, "denied_by") : NULL;
				long long count = (long long)json_integer_value(json_object_get(b, "count"));
				fprintf(stderr, "owsbx proxy: refused %s:%lld (%s%s%s, %lld time%s)\n",
					field(b, "host"),
					(long long)json_integer_value(json_object_get(b, "port")),
					field(b, "reason"), by ? " by " : "", by ? by : "", count,
					count == 1 ? "" : "s");
				if (last + 1 > since)
					since = last + 1;
			}
			json_decref(arr);
		}
		ows_free(json);
	}
	ows_proxy_stop(px);
	return 0;
}

/* ssh -o ProxyCommand='owsbx connect %h %p': a CONNECT tunnel on stdin/stdout. */
static int cmd_connect(const owsbx_args *a)
{
	ows_error err;
	ows_error_clear(&err);
	char host[256];
	int port;
	if (owsbx_split_proxy(a->proxy_addr, host, sizeof(host), &port) != 0) {
		fprintf(stderr, "owsbx: not a proxy address (want 127.0.0.1:PORT): %s\n", shown(a->proxy_addr));
		return OWSBX_EXIT_USAGE;
	}
	owsbx_os_ignore_sigpipe();
	if (ows_proxy_tunnel(host, port, a->connect_host, a->connect_port, 0, 1, &err) < 0) {
		print_error(&err);
		return 1;
	}
	return 0;
}

/* The profile on stdout, for `| sudo tee /etc/apparmor.d/NAME`. */
static int cmd_apparmor(const owsbx_args *a)
{
	ows_error err;
	ows_error_clear(&err);
	char *profile = NULL;
	if (ows_apparmor_profile(a->program, a->profile_name, &profile, &err) < 0) {
		print_error(&err);
		return OWSBX_EXIT_USAGE;
	}
	fputs(profile, stdout);
	ows_free(profile);
	return fflush(stdout) == 0 ? 0 : 1;
}

int owsbx_main(int argc, char **argv)
{
#ifdef _WIN32
	/* spec 004's shim form, `owsbx exec POLICY.json -- argv`: exit codes of its own. */
	if (argc > 1 && strcmp(argv[1], "exec") == 0)
		return owsbx_exec(argc - 2, argv + 2);
#endif
	owsbx_args a;
	ows_error err;
	ows_error_clear(&err);
	int rc = owsbx_parse(argc, argv, &a, &err);
	if (rc != 0) {
		/* verify's stdout is a report whatever happened, bad input included. */
		if (a.cmd == OWSBX_CMD_VERIFY)
			print_report(&a, NULL, err.code ? err.code : OWS_EINVAL, &err);
		print_error(&err);
		owsbx_args_free(&a);
		return rc;
	}
	if (a.cmd == OWSBX_CMD_HELP) {
		owsbx_help(stdout, a.help_topic);
		owsbx_args_free(&a);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (a.cmd == OWSBX_CMD_VERSION) {
		printf("owsbx %s\n", ows_version());
		owsbx_args_free(&a);
		return 0;
	}
	if (a.cmd == OWSBX_CMD_COMPLETION) {
		owsbx_completion(stdout, a.shell);
		owsbx_args_free(&a);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (a.cmd == OWSBX_CMD_RUNNER) { /* inside a sandbox: no config, no library call */
		rc = owsbx_os_runner(&a);
		owsbx_args_free(&a);
		return rc;
	}
	if (a.cmd == OWSBX_CMD_APPARMOR) {
		rc = cmd_apparmor(&a);
		owsbx_args_free(&a);
		return rc;
	}
	if (a.cmd == OWSBX_CMD_PROXY || a.cmd == OWSBX_CMD_CONNECT) {
		rc = a.cmd == OWSBX_CMD_PROXY ? cmd_proxy(&a) : cmd_connect(&a);
		owsbx_args_free(&a);
		return rc;
	}
	ows_config *config = NULL;
	if ((rc = ows_config_load(a.config_path, &config, &err)) < 0) {
		if (a.cmd == OWSBX_CMD_VERIFY)
			print_report(&a, NULL, rc, &err);
		print_error(&err);
		owsbx_args_free(&a);
		return OWSBX_EXIT_USAGE;
	}
	switch (a.cmd) {
	case OWSBX_CMD_RUN: rc = cmd_run(&a, config); break;
	case OWSBX_CMD_VERIFY: rc = cmd_verify(&a, config); break;
	case OWSBX_CMD_REPORT: rc = cmd_report(&a, config); break;
	case OWSBX_CMD_CREDENTIALS: rc = cmd_credentials(&a, config); break;
	case OWSBX_CMD_MACHINE: rc = cmd_machine(&a, config); break;
	default: rc = OWSBX_EXIT_USAGE; break;
	}
	ows_config_free(config);
	owsbx_args_free(&a);
	return rc;
}
