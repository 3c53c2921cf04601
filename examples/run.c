/*
 * A host that links libowsandbox: opens a session on the folders named on
 * the command line (read-write), runs one command in it with the run call
 * (its output streamed through as it comes), prints the proof, the events
 * and what the call reports, and passes the command's status on.  The
 * command's stdin is /dev/null: the run call writes only what it is given.
 *
 *   cc examples/run.c $(pkg-config --cflags --libs owsandbox)          (libowsandbox.so)
 *   cc examples/run.c $(pkg-config --cflags owsandbox) \
 *      -Wl,-Bstatic $(pkg-config --libs --static owsandbox) -Wl,-Bdynamic   (linked in)
 *   ./a.out /home/me/project -- make test
 */
#include <stdio.h>
#include <string.h>

#include <owsandbox.h>

static void print_event(void *ctx, const char *json)
{
	fprintf(stderr, "event %s\n", json);
}

static void pass_output(void *ctx, int stream, const char *data, size_t len)
{
	FILE *f = stream == 1 ? stdout : stderr;
	fwrite(data, 1, len, f);
	fflush(f);
}

int main(int argc, char **argv)
{
	ows_error err;
	ows_error_clear(&err);
	ows_policy *policy;
	if (ows_policy_new(&policy, &err) < 0)
		return 70;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (ows_policy_add_folder(policy, argv[i], OWS_ACCESS_RW, &err) < 0) {
			fprintf(stderr, "%s: %s\n  %s\n", err.what, err.where, err.hint);
			return 2;
		}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: %s FOLDER... -- COMMAND...\n", argv[0]);
		return 2;
	}

	ows_session_options so;
	ows_session_options_init(&so);
	so.on_event = print_event;
	ows_session *s;
	if (ows_session_open(policy, NULL, &so, &s, &err) < 0) {
		fprintf(stderr, "refused: %s: %s\n  %s\n", err.what, err.where, err.hint);
		return 70;
	}
	printf("proof: %s\n", ows_session_proof_json(s));
	fflush(stdout);

	/* Kept copies are capped (1 MiB a stream); the callback sees every byte. */
	ows_run_options ro;
	ows_run_options_init(&ro);
	ro.on_output = pass_output;
	ows_run_result *r;
	int code = 71;
	if (ows_session_run(s, (const char *const *)argv + i + 1, &ro, &r, &err) == 0) {
		fprintf(stderr, "exit %d after %lld ms (%s enforcement); blocked: %s\n", r->exit_code,
			(long long)r->wall_ms, r->enforcement, r->blocked_json);
		code = r->exit_code;
		ows_run_result_free(r);
	} else {
		fprintf(stderr, "%s: %s\n  %s\n", err.what, err.where, err.hint);
	}
	ows_session_close(s, NULL);
	ows_policy_free(policy);
	return code;
}
