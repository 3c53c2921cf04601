/* owsbx: parse, call the library, print.  Nothing here a host would need too. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "args.h"

static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
	pending_signal = sig;
}

static void print_error(const ows_error *err)
{
	fprintf(stderr, "owsbx: %s", err->what[0] ? err->what : ows_strerror(err->code));
	if (err->where[0])
		fprintf(stderr, ": %s", err->where);
	fputc('\n', stderr);
	if (err->hint[0])
		fprintf(stderr, "  %s\n", err->hint);
}

/* What a failed session open means for the exit status. */
static int open_status(int rc)
{
	return rc == OWS_EINVAL || rc == OWS_ECONFIG ? OWSBX_EXIT_USAGE : OWSBX_EXIT_WALL;
}

/* The command starts where the person is, when that is inside a session folder. */
static char *pick_cwd(const ows_policy *policy)
{
	char *here = getcwd(NULL, 0);
	char *json = here ? ows_policy_to_json(policy) : NULL;
	json_t *root = json ? json_loads(json, 0, NULL) : NULL;
	json_t *folders = json_object_get(root, "folders");
	size_t i;
	json_t *f;
	bool inside = false;
	json_array_foreach(folders, i, f) {
		const char *p = json_string_value(json_object_get(f, "path"));
		size_t n = p ? strlen(p) : 0;
		if (p && strncmp(here, p, n) == 0 && (here[n] == '/' || here[n] == '\0'))
			inside = true;
	}
	json_decref(root);
	ows_free(json);
	if (!inside) {
		free(here);
		return NULL;
	}
	return here;
}

static int cmd_run(owsbx_args *a, ows_config *config)
{
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
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	ows_spawn_options opts;
	ows_spawn_options_init(&opts);
	char *cwd = pick_cwd(a->policy);
	opts.cwd = cwd;
	ows_proc *proc = NULL;
	int status;
	rc = ows_session_spawn(s, (const char *const *)a->argv, &opts, &proc, &err);
	free(cwd);
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

static int cmd_verify(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	char *report = NULL;
	int rc = ows_verify(a->policy, config, &report, &err);
	if (report) {
		json_t *j = json_loads(report, 0, NULL);
		char *pretty = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
		puts(pretty ? pretty : report);
		free(pretty);
		json_decref(j);
		ows_free(report);
	}
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
		puts(out);
	} else {
		json_t *root = json_loads(out, 0, NULL);
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(root, "capabilities"), i, c)
			printf("%-30s %-12s %s\n", json_string_value(json_object_get(c, "name")),
			       json_string_value(json_object_get(c, "status")),
			       json_string_value(json_object_get(c, "why")));
		json_decref(root);
	}
	ows_free(out);
	return 0;
}

static int cmd_machine(owsbx_args *a, ows_config *config)
{
	ows_error err;
	ows_error_clear(&err);
	int rc;
	ows_setup_options so;
	ows_setup_options_init(&so);
	const char *v = a->machine_verb;
	if (strcmp(v, "setup") == 0)
		rc = ows_machine_setup(config, &so, &err);
	else if (strcmp(v, "status") == 0) {
		char *out = NULL;
		rc = ows_machine_status(config, &out, &err);
		if (out)
			puts(out);
		ows_free(out);
	} else if (strcmp(v, "remove") == 0)
		rc = ows_machine_remove(config, &so, &err);
	else if (strcmp(v, "cleanup") == 0)
		rc = ows_machine_cleanup(config, &err);
	else {
		fprintf(stderr, "owsbx: unknown verb: %s\n", v);
		return OWSBX_EXIT_USAGE;
	}
	if (rc < 0) {
		print_error(&err);
		return 1;
	}
	return rc > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	owsbx_args a;
	ows_error err;
	ows_error_clear(&err);
	int rc = owsbx_parse(argc, argv, &a, &err);
	if (rc != 0) {
		print_error(&err);
		owsbx_args_free(&a);
		return rc;
	}
	if (a.cmd == OWSBX_CMD_HELP) {
		owsbx_usage(stdout);
		return 0;
	}
	if (a.cmd == OWSBX_CMD_VERSION) {
		printf("owsbx %s\n", ows_version());
		return 0;
	}
	if (a.cmd == OWSBX_CMD_PROXY || a.cmd == OWSBX_CMD_CONNECT) {
		ows_proxy *px = NULL;
		if (ows_proxy_start(NULL, &px, &err) < 0)
			print_error(&err);
		return 1;
	}
	ows_config *config = NULL;
	if (ows_config_load(a.config_path, &config, &err) < 0) {
		print_error(&err);
		owsbx_args_free(&a);
		return OWSBX_EXIT_USAGE;
	}
	switch (a.cmd) {
	case OWSBX_CMD_RUN: rc = cmd_run(&a, config); break;
	case OWSBX_CMD_VERIFY: rc = cmd_verify(&a, config); break;
	case OWSBX_CMD_REPORT: rc = cmd_report(&a, config); break;
	case OWSBX_CMD_MACHINE: rc = cmd_machine(&a, config); break;
	default: rc = OWSBX_EXIT_USAGE; break;
	}
	ows_config_free(config);
	owsbx_args_free(&a);
	return rc;
}
