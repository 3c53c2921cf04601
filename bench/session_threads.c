/*
 * One landlock session used from 1, 2, 4 and 8 threads at once: N spawns
 * and waits in all, split among the threads, with no lock of the host's, and
 * the same behind one host lock held across each spawn and wait (what a host
 * had to do before sessions were thread-safe).  Two commands: /bin/true (the
 * cost of a spawn: init starts commands one at a time) and `sleep 0.05` (a
 * command that takes a while: there the waits overlap).  Prints commands per
 * second and the speed-up over one thread.
 *
 *   session_threads [N]     default 400 (of sleep: N/10)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "owsandbox.h"
#include "bench.h"

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

struct job {
	ows_session *s;
	const char *const *argv;
	int n;
	int locked;
	int failed;
};

static void *run(void *arg)
{
	struct job *j = arg;
	ows_spawn_options o;
	ows_spawn_options_init(&o);
	o.stdio[0] = o.stdio[1] = o.stdio[2] = OWS_STDIO_NULL;
	for (int i = 0; i < j->n; i++) {
		ows_proc *p = NULL;
		int code = -1;
		if (j->locked)
			pthread_mutex_lock(&host_lock);
		if (ows_session_spawn(j->s, j->argv, &o, &p, NULL) < 0 ||
		    ows_proc_wait(p, -1, &code, NULL) != 1 || code != 0)
			j->failed++;
		if (j->locked)
			pthread_mutex_unlock(&host_lock);
		ows_proc_free(p);
	}
	return NULL;
}

/* Commands per second with `threads` threads; -1 when one failed. */
static double measure(ows_session *s, const char *const *argv, int threads, int n, int locked)
{
	pthread_t t[8];
	struct job j[8];
	double a = now_ms();
	for (int i = 0; i < threads; i++) {
		j[i] = (struct job){.s = s, .argv = argv, .n = n / threads, .locked = locked};
		pthread_create(&t[i], NULL, run, &j[i]);
	}
	int failed = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		failed += j[i].failed;
	}
	double ms = now_ms() - a;
	return failed ? -1 : (n / threads * threads) / (ms / 1e3);
}

static int table(ows_session *s, const char *const *argv, const char *name, int n)
{
	printf("one landlock session, %d spawn+wait of %s split among threads\n", n, name);
	printf("%-8s %14s %8s %22s\n", "threads", "commands/s", "x 1", "behind one host lock");
	double one = 0;
	static const int counts[] = {1, 2, 4, 8};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		double free_rate = measure(s, argv, counts[i], n, 0);
		double locked_rate = measure(s, argv, counts[i], n, 1);
		if (free_rate < 0 || locked_rate < 0)
			return -1;
		if (i == 0)
			one = free_rate;
		printf("%-8d %14.0f %7.2fx %14.0f (%.2fx)\n", counts[i], free_rate, free_rate / one,
		       locked_rate, locked_rate / one);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400;
	ows_error err;
	ows_error_clear(&err);
	ows_policy *p = NULL;
	ows_session *s = NULL;
	ows_policy_new(&p, NULL);
	if (ows_session_open(p, NULL, NULL, &s, &err) < 0) {
		fprintf(stderr, "open: %s: %s\n", err.what, err.where);
		return 1;
	}
	static const char *const true_argv[] = {"/bin/true", NULL};
	static const char *const sleep_argv[] = {"/bin/sleep", "0.05", NULL};
	measure(s, true_argv, 1, n / 10, 0); /* warm-up */
	if (table(s, true_argv, "/bin/true", n) < 0 || table(s, sleep_argv, "sleep 0.05", n / 10) < 0) {
		fprintf(stderr, "a spawn or wait failed\n");
		return 1;
	}
	ows_session_close(s, NULL);
	ows_policy_free(p);
	return 0;
}
