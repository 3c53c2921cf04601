/*
 * What many open allowlist sessions cost one host process: N sessions of the
 * landlock provider open at once, all served by the host's one proxy.
 * Prints the host's threads and descriptors per open session, the open time
 * per session (median and total), and one request through the proxy in each
 * session (spawn, curl to a listed site, exit): how many worked and its
 * median time.  Figures only: nothing here passes or fails on a time.
 *
 *   sessions N URL SITE [NOFILE]
 *
 * NOFILE: the soft RLIMIT_NOFILE this host sets for itself first (each open
 * session holds two descriptors, each running call one more): the library
 * never raises it, a host that wants more sessions does, as here.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "owsandbox.h"
#include "bench.h"
#include "../test/selfcount.h"


/* One request through the session's proxy: 1 when curl got a 200. */
static int request(ows_session *s, const char *url)
{
	const char *argv[] = {"/bin/sh", "-c",
			      "[ \"$(curl -s -m 20 -o /dev/null -w '%{http_code}' \"$1\")\" = 200 ]",
			      "sh", url, NULL};
	ows_proc *p = NULL;
	int code = -1;
	int ok = ows_session_spawn(s, argv, NULL, &p, NULL) == 0 &&
		 ows_proc_wait(p, -1, &code, NULL) == 1 && code == 0;
	ows_proc_free(p);
	return ok;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: sessions N URL SITE [NOFILE]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	const char *url = argv[2], *site = argv[3];
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (argc > 4) {
		rlim_t want = (rlim_t)strtoull(argv[4], NULL, 10);
		rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			perror("setrlimit");
	}
	ows_policy *p = NULL;
	ows_error err;
	ows_error_clear(&err);
	if (ows_policy_new(&p, &err) < 0 || ows_policy_set_provider(p, "landlock", &err) < 0 ||
	    ows_policy_set_network(p, OWS_NET_ALLOWLIST, &err) < 0 ||
	    ows_policy_add_host(p, site, &err) < 0) {
		fprintf(stderr, "policy: %s\n", err.what);
		return 1;
	}
	ows_session **s = calloc((size_t)n, sizeof(*s));
	double *t = calloc((size_t)n, sizeof(*t));
	int t0 = self_threads(), f0 = self_fds(), opened = 0;
	double start = now_ms();
	for (int i = 0; i < n; i++) {
		double a = now_ms();
		ows_error_clear(&err);
		if (ows_session_open(p, NULL, NULL, &s[i], &err) < 0) {
			printf("session %d did not open: %s: %s (%s)\n", i + 1, ows_err_name(err.code),
			       err.what, err.where);
			break;
		}
		t[opened++] = now_ms() - a;
	}
	double open_total = now_ms() - start;
	int t1 = self_threads(), f1 = self_fds();
	printf("allowlist sessions open at once in one host (landlock)    %d of %d\n", opened, n);
	printf("RLIMIT_NOFILE soft limit of this host                     %llu\n",
	       (unsigned long long)rl.rlim_cur);
	if (!opened)
		return 1;
	printf("host threads: before / with them open                     %d / %d  (%.3f per session)\n",
	       t0, t1, (double)(t1 - t0) / opened);
	printf("host descriptors: before / with them open                 %d / %d  (%.2f per session)\n",
	       f0, f1, (double)(f1 - f0) / opened);
	printf("open, per session: median / mean (ms)                     %.1f / %.1f\n",
	       median(t, opened), open_total / opened);

	int ok = 0;
	for (int i = 0; i < opened; i++) {
		double a = now_ms();
		ok += request(s[i], url);
		t[i] = now_ms() - a;
	}
	printf("a request through the proxy in each session: worked       %d of %d\n", ok, opened);
	printf("  spawn + curl to a listed site + exit, median (ms)       %.1f\n", median(t, opened));

	double c0 = now_ms();
	for (int i = 0; i < opened; i++)
		ows_session_close(s[i], NULL);
	printf("close, per session: mean (ms)                             %.1f\n",
	       (now_ms() - c0) / opened);
	printf("host threads after the last close                         %d\n", self_threads());
	free(s);
	free(t);
	ows_policy_free(p);
	return 0;
}
