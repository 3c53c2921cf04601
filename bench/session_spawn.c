/*
 * What a host that keeps its session open pays per command: N spawns of
 * /bin/true in one landlock session, against N bwrap runs doing the same,
 * measured in this process.  Prints medians in milliseconds.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "owsandbox.h"
#include "bench.h"

extern char **environ;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double *t = calloc((size_t)n, sizeof(*t));
	ows_error err;
	ows_error_clear(&err);
	ows_policy *p;
	ows_session *s;
	ows_policy_new(&p, NULL);
	double t0 = now_ms();
	if (ows_session_open(p, NULL, NULL, &s, &err) < 0) {
		fprintf(stderr, "open: %s: %s\n", err.what, err.where);
		return 1;
	}
	double open_ms = now_ms() - t0;
	const char *true_argv[] = {"/bin/true", NULL};
	for (int i = 0; i < n; i++) {
		ows_proc *proc;
		int code;
		double a = now_ms();
		if (ows_session_spawn(s, true_argv, NULL, &proc, &err) < 0 ||
		    ows_proc_wait(proc, -1, &code, &err) != 1) {
			fprintf(stderr, "spawn: %s\n", err.what);
			return 1;
		}
		t[i] = now_ms() - a;
		ows_proc_free(proc);
	}
	double session_ms = median(t, n);
	t0 = now_ms();
	ows_session_close(s, NULL);
	double close_ms = now_ms() - t0;

	char *bwrap_argv[] = {"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
			      "/bin/true", NULL};
	double bwrap_ms = -1;
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;
		double a = now_ms();
		if (posix_spawnp(&pid, "bwrap", NULL, NULL, bwrap_argv, environ) != 0)
			break;
		waitpid(pid, &st, 0);
		t[i] = now_ms() - a;
		if (i == n - 1)
			bwrap_ms = median(t, n);
	}
	printf("per command, median of %d, in this process (ms)\n", n);
	printf("%-34s %8.2f\n", "spawn+wait in an open session", session_ms);
	if (bwrap_ms > 0)
		printf("%-34s %8.2f   (owsandbox %.2fx of bwrap)\n", "bwrap --unshare-all, each", bwrap_ms,
		       session_ms / bwrap_ms);
	printf("%-34s %8.2f\n%-34s %8.2f\n", "session open (once, with its proof)", open_ms,
	       "session close (once)", close_ms);
	free(t);
	ows_policy_free(p);
	return 0;
}
