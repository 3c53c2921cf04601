/*
 * A host with threads, for test/sh/threads.sh and account_threads.sh: one
 * session used from several threads at once with no lock of the host's, the
 * proc's descriptor waited on with poll(), a close while other threads wait,
 * and the misuse the type system lets through (double close, use after close,
 * NULL).  Prints "ok - ..." / "not ok - ..." lines and "# ..." diagnostics; the
 * shell file numbers them.
 *
 *   threads_host CONFIG POLICY_JSON [ROUNDS]     CONFIG "-" for none
 *
 * A watchdog thread fails the run ("not ok - ... hung") and exits when a
 * step has not finished in WATCHDOG_S seconds: a hang is a failure here,
 * never a test that does not end.  The bound is far above what any step
 * needs; no assertion depends on how fast anything is.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "owsandbox.h"

#define WATCHDOG_S 60
#define MAX_THREADS 8

static int failures;

static void report(int passed, const char *what)
{
	printf("%s - %s\n", passed ? "ok" : "not ok", what);
	fflush(stdout);
	if (!passed)
		failures++;
}

static void diag_err(const char *what, int rc, const ows_error *e)
{
	printf("# %s: %s (%d): %s [%s]\n", what, ows_err_name(rc), rc, e->what, e->where);
	fflush(stdout);
}

/* ------------------------------------------------------------- watchdog */

static pthread_mutex_t dog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dog_cond = PTHREAD_COND_INITIALIZER;
static const char *dog_step; /* what is running; NULL: nothing */
static unsigned dog_gen;

static void *watchdog(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&dog_lock);
	for (;;) {
		while (!dog_step)
			pthread_cond_wait(&dog_cond, &dog_lock);
		unsigned gen = dog_gen;
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += WATCHDOG_S;
		int r = 0;
		while (dog_step && dog_gen == gen && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&dog_cond, &dog_lock, &until);
		if (dog_step && dog_gen == gen) {
			printf("not ok - %s (hung: not done in %d s)\n", dog_step, WATCHDOG_S);
			fflush(stdout);
			_exit(1);
		}
	}
	return NULL;
}

static void step_begin(const char *what)
{
	pthread_mutex_lock(&dog_lock);
	dog_step = what;
	dog_gen++;
	pthread_cond_broadcast(&dog_cond);
	pthread_mutex_unlock(&dog_lock);
}

static void step_end(void)
{
	pthread_mutex_lock(&dog_lock);
	dog_step = NULL;
	dog_gen++;
	pthread_cond_broadcast(&dog_cond);
	pthread_mutex_unlock(&dog_lock);
}

/* -------------------------------------------------------------- session */

static const char *config_path;
static const char *policy_json;

static ows_session *open_session(void)
{
	ows_error e;
	ows_error_clear(&e);
	ows_config *cfg = NULL;
	ows_policy *pol = NULL;
	ows_session *s = NULL;
	int rc = 0;
	if (strcmp(config_path, "-") != 0)
		rc = ows_config_load(config_path, &cfg, &e);
	if (rc == 0)
		rc = ows_policy_from_json(policy_json, strlen(policy_json), &pol, &e);
	if (rc == 0)
		rc = ows_session_open(pol, cfg, NULL, &s, &e);
	if (rc < 0)
		diag_err("open", rc, &e);
	ows_policy_free(pol);
	ows_config_free(cfg);
	return s;
}

/* Spawns argv with stdin `in` (or /dev/null) and the rest to /dev/null. */
static int spawn(ows_session *s, const char *const argv[], int in, ows_proc **p, ows_error *e)
{
	ows_spawn_options o;
	ows_spawn_options_init(&o);
	o.stdio[0] = in;
	o.stdio[1] = OWS_STDIO_NULL;
	o.stdio[2] = OWS_STDIO_NULL;
	ows_error_clear(e);
	return ows_session_spawn(s, argv, &o, p, e);
}

/* ------------------------------------------------------ spawning threads */

struct worker {
	ows_session *s;
	int index;
	int rounds;
	int bad;        /* spawns or waits that failed, or a wrong exit code */
	char why[400];
};

/* Each command exits with its own code, so that a wait told another's exit shows. */
static void *spawn_and_wait(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < w->rounds; i++) {
		int want = (w->index * 31 + i) % 100;
		char script[64];
		snprintf(script, sizeof(script), "exit %d", want);
		const char *argv[] = {"/bin/sh", "-c", script, NULL};
		ows_proc *p = NULL;
		ows_error e;
		int rc = spawn(w->s, argv, OWS_STDIO_NULL, &p, &e);
		int code = -1;
		if (rc == 0)
			rc = ows_proc_wait(p, -1, &code, &e);
		ows_proc_free(p);
		if (rc != 1 || code != want) {
			if (!w->bad++)
				snprintf(w->why, sizeof(w->why), "thread %d round %d: rc %d code %d want %d: %s",
					 w->index, i, rc, code, want, e.what);
		}
	}
	return NULL;
}

static void test_threads(ows_session *s, int nthreads, int rounds)
{
	char what[160];
	snprintf(what, sizeof(what),
		 "%d threads spawn and wait %d commands each in one session, no host lock, "
		 "each told its own exit code", nthreads, rounds);
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	step_begin(what);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){.s = s, .index = i, .rounds = rounds};
		pthread_create(&t[i], NULL, spawn_and_wait, &w[i]);
	}
	int bad = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		if (w[i].bad && !bad++)
			printf("# %s\n", w[i].why);
	}
	step_end();
	report(bad == 0, what);
}

/* ------------------------------------------- a wait blocks nobody else */

struct blocked_waiter {
	ows_proc *p;
	atomic_int done;
	int rc, code;
};

static void *wait_for_ever(void *arg)
{
	struct blocked_waiter *b = arg;
	ows_error e;
	ows_error_clear(&e);
	b->rc = ows_proc_wait(b->p, -1, &b->code, &e);
	atomic_store(&b->done, 1);
	return NULL;
}

/*
 * One thread waits for ever on a command that reads its stdin (a pipe the
 * test holds open); meanwhile another thread runs commands to the end.  They
 * must all finish while the first wait is still blocked: nothing is
 * serialised behind it.  Then the pipe closes and the first wait returns.
 */
static void test_wait_blocks_nobody(ows_session *s)
{
	const char *what = "a thread blocked in ows_proc_wait holds up no spawn or wait of another thread";
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		report(0, what);
		return;
	}
	const char *cat[] = {"/bin/sh", "-c", "read line; exit 5", NULL};
	struct blocked_waiter b = {0};
	ows_error e;
	int rc = spawn(s, cat, pfd[0], &b.p, &e);
	close(pfd[0]);
	if (rc < 0) {
		diag_err("spawn", rc, &e);
		close(pfd[1]);
		report(0, what);
		return;
	}
	step_begin(what);
	pthread_t t;
	pthread_create(&t, NULL, wait_for_ever, &b);
	struct worker w = {.s = s, .index = 7, .rounds = 20};
	pthread_t t2;
	pthread_create(&t2, NULL, spawn_and_wait, &w);
	pthread_join(t2, NULL);
	int still_waiting = !atomic_load(&b.done);
	close(pfd[1]); /* read gets end of file: the command exits 5 */
	pthread_join(t, NULL);
	step_end();
	if (w.bad)
		printf("# %s\n", w.why);
	report(w.bad == 0 && still_waiting && b.rc == 1 && b.code == 5, what);
	ows_proc_free(b.p);
}

/* --------------------------------------------------------- ows_proc_fd */

static int poll_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r;
	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r > 0 && (pfd.revents & (POLLIN | POLLHUP));
}

static void test_proc_fd(ows_session *s)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return;
	/* "sh" by name: found in the session's PATH, not the host's. */
	const char *argv[] = {"sh", "-c", "read line; exit 3", NULL};
	ows_proc *p = NULL;
	ows_error e;
	int rc = spawn(s, argv, pfd[0], &p, &e);
	close(pfd[0]);
	if (rc < 0)
		diag_err("spawn", rc, &e);
	int fd = ows_proc_fd(p);
	report(rc == 0 && fd >= 0, "ows_proc_fd gives a descriptor for a running command");
	report(fd >= 0 && !poll_readable(fd, 0), "it is not readable while the command runs");
	int code = -1;
	report(ows_proc_wait(p, 0, &code, &e) == 0, "ows_proc_wait(0) says it runs");
	step_begin("poll() on ows_proc_fd returns once the command exits");
	close(pfd[1]);
	int readable = fd >= 0 && poll_readable(fd, -1);
	step_end();
	report(readable, "poll() on ows_proc_fd returns once the command exits");
	rc = ows_proc_wait(p, 0, &code, &e);
	report(rc == 1 && code == 3, "then ows_proc_wait(0) returns 1 at once with its exit code");
	if (rc != 1 || code != 3)
		printf("# rc %d code %d\n", rc, code);
	report(ows_proc_fd(p) == fd && poll_readable(fd, 0), "the descriptor stays readable until freed");
	ows_proc_free(p);

	/* A command killed: readable, and 128+9. */
	const char *sleeper[] = {"/bin/sh", "-c", "exec sleep 600", NULL};
	rc = spawn(s, sleeper, OWS_STDIO_NULL, &p, &e);
	fd = ows_proc_fd(p);
	ows_error_clear(&e);
	if (rc == 0)
		rc = ows_proc_kill(p, 9, &e);
	step_begin("a killed command's descriptor becomes readable");
	readable = rc == 0 && fd >= 0 && poll_readable(fd, -1);
	step_end();
	rc = ows_proc_wait(p, 0, &code, &e);
	report(readable && rc == 1 && code == 137,
	       "a killed command's descriptor becomes readable; its exit is 137");
	ows_proc_free(p);
}

/* ------------------------------------------------- freed while it runs */

/*
 * The host frees a proc while its command runs; the command then exits, and
 * the sandbox tells a channel nobody holds any more.  That must cost the
 * sandbox nothing (no SIGPIPE for init): later commands still run.  The
 * command's stdout closing says it has exited; a few rounds over, so that
 * the sandbox has told its exit before some later spawn.
 */
static void test_free_running(ows_session *s)
{
	int bad = 0;
	for (int round = 0; round < 5 && !bad; round++) {
		int in[2], out[2];
		if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
			return;
		ows_spawn_options o;
		ows_spawn_options_init(&o);
		o.stdio[0] = in[0];
		o.stdio[1] = out[1];
		o.stdio[2] = OWS_STDIO_NULL;
		const char *argv[] = {"/bin/sh", "-c", "read line; exit 4", NULL};
		ows_proc *p = NULL;
		int rc = ows_session_spawn(s, argv, &o, &p, NULL);
		close(in[0]);
		close(out[1]);
		ows_proc_free(p); /* while it runs */
		close(in[1]);     /* now it exits */
		char c;
		while (read(out[0], &c, 1) > 0)
			;
		close(out[0]);
		const char *t[] = {"/bin/sh", "-c", "exit 6", NULL};
		ows_error e;
		int code = -1;
		if (rc == 0 && spawn(s, t, OWS_STDIO_NULL, &p, &e) == 0)
			rc = ows_proc_wait(p, -1, &code, &e);
		else
			rc = -1;
		ows_proc_free(p);
		bad = rc != 1 || code != 6;
	}
	report(!bad, "a proc freed while its command runs: the session runs later commands");
}

/* ------------------------------------------------------ the live registry */

/*
 * Many procs live at once (the registry grows), then freed in a scrambled
 * order: after each free, every proc still held is known (its descriptor)
 * and every freed one is not, so a slot the set moved on removal is found.
 */
static void test_registry(ows_session *s)
{
	enum { N = 300 };
	static ows_proc *p[N];
	static int freed[N];
	const char *argv[] = {"/bin/true", NULL};
	ows_error e;
	int n = 0, bad = 0;
	for (; n < N; n++)
		if (spawn(s, argv, OWS_STDIO_NULL, &p[n], &e) < 0 || ows_proc_wait(p[n], -1, NULL, &e) != 1)
			break;
	report(n == N, "300 procs live at once in one session");
	unsigned x = 12345;
	for (int k = 0; k < n; k++) {
		int i;
		do {
			x = x * 1103515245u + 12345u;
			i = (int)((x >> 8) % (unsigned)n);
		} while (freed[i]);
		ows_proc_free(p[i]);
		freed[i] = 1;
		for (int j = 0; j < n; j++)
			if ((ows_proc_fd(p[j]) >= 0) == freed[j])
				bad++;
	}
	report(n == N && bad == 0, "freed in a scrambled order, each proc is known live or freed, rightly");
}

/* ----------------------------------------------- close while threads wait */

static void test_close_while_waiting(int nthreads)
{
	const char *what = "ows_session_close while other threads wait: every wait returns, "
			   "the command killed (137) or OWS_ESTATE";
	ows_session *s = open_session();
	if (!s) {
		report(0, what);
		return;
	}
	struct blocked_waiter b[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	int started = 0;
	const char *sleeper[] = {"/bin/sh", "-c", "exec sleep 600", NULL};
	for (int i = 0; i < nthreads; i++) {
		ows_error e;
		b[i] = (struct blocked_waiter){0};
		if (spawn(s, sleeper, OWS_STDIO_NULL, &b[i].p, &e) < 0)
			break;
		pthread_create(&t[i], NULL, wait_for_ever, &b[i]);
		started++;
	}
	step_begin(what);
	ows_error e;
	ows_error_clear(&e);
	int crc = ows_session_close(s, &e);
	int bad = started != nthreads || crc < 0;
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		if (!((b[i].rc == 1 && b[i].code == 137) || b[i].rc == OWS_ESTATE)) {
			printf("# wait %d: rc %d code %d\n", i, b[i].rc, b[i].code);
			bad = 1;
		}
	}
	step_end();
	report(!bad, what);

	/* The procs outlive their session: each call answers, none crashes. */
	int code = -1, wrc = -2, krc = -2, fd = -2;
	if (started) {
		wrc = ows_proc_wait(b[0].p, -1, &code, NULL);
		krc = ows_proc_kill(b[0].p, 15, NULL);
		fd = ows_proc_fd(b[0].p);
	}
	report(wrc == 1 && code == 137, "ows_proc_wait after close: 1, the command killed (137)");
	report(krc == 0 || krc == OWS_ESTATE, "ows_proc_kill after close: 0 or OWS_ESTATE");
	report(fd >= 0 && poll_readable(fd, 0), "ows_proc_fd after close: still the proc's, readable");
	for (int i = 0; i < started; i++)
		ows_proc_free(b[i].p);
}

/* ------------------------------------------------- shutdown, then close */

static void test_shutdown_then_close(void)
{
	const char *what = "ows_session_shutdown while a thread waits: the wait returns, the "
			   "command killed (137) or OWS_ESTATE; nothing is freed yet";
	ows_session *s = open_session();
	if (!s) {
		report(0, what);
		return;
	}
	struct blocked_waiter b = {0};
	pthread_t t;
	ows_error e;
	const char *sleeper[] = {"/bin/sh", "-c", "exec sleep 600", NULL};
	const char *argv[] = {"/bin/true", NULL};
	int spawned = spawn(s, sleeper, OWS_STDIO_NULL, &b.p, &e) == 0;
	if (spawned)
		pthread_create(&t, NULL, wait_for_ever, &b);
	step_begin(what);
	ows_error_clear(&e);
	int src = ows_session_shutdown(s, &e);
	if (spawned)
		pthread_join(t, NULL);
	step_end();
	bool returned = (b.rc == 1 && b.code == 137) || b.rc == OWS_ESTATE;
	report(spawned && src == 0 && returned, what);
	if (!returned)
		printf("# spawned %d, shutdown %d, wait %d, code %d\n", spawned, src, b.rc, b.code);
	/* A binding's wait comes after the shutdown, as asyncio's does once the descriptor
	 * turned readable: the exit is still told, not OWS_ESTATE, until the close. */
	int late = -1, lrc = spawned ? ows_proc_wait(b.p, 5000, &late, NULL) : -1;
	report(lrc == 1 && late == 137 && ows_proc_signal(b.p) == SIGKILL,
	       "a wait begun after the shutdown: 1, killed (137, ows_proc_signal 9)");
	if (lrc != 1 || late != 137)
		printf("# late wait %d, code %d\n", lrc, late);
	report(ows_session_shutdown(s, NULL) == 0, "a second shutdown: 0");
	report(spawned && poll_readable(ows_proc_fd(b.p), 5000),
	       "the command is ended by the shutdown, not only its wait (its descriptor readable)");
	ows_proc *p = NULL;
	report(ows_session_spawn(s, argv, NULL, &p, NULL) == OWS_ESTATE && !p,
	       "spawn after shutdown: OWS_ESTATE");
	report(strcmp(ows_session_id(s), "") == 0, "a shut session's borrowed strings are \"\"");
	ows_error_clear(&e);
	int crc = ows_session_close(s, &e);
	report(crc == 0, "close after shutdown frees it: 0");
	if (crc < 0)
		diag_err("close", crc, &e);
	report(ows_session_shutdown(s, NULL) == OWS_ESTATE, "shutdown after close: OWS_ESTATE");
	report(ows_session_close(s, NULL) == OWS_ESTATE, "close after close: OWS_ESTATE");
	report(ows_session_shutdown(NULL, NULL) == OWS_EINVAL, "shutdown of NULL: OWS_EINVAL");
	if (spawned)
		ows_proc_free(b.p);
}

/* --------------------------------------------- close while threads spawn */

struct spawner {
	ows_session *s;
	int bad;
	int ran;
	int refused;
};

static void *spawn_until_closed(void *arg)
{
	struct spawner *sp = arg;
	for (int i = 0; i < 1000; i++) {
		const char *argv[] = {"/bin/true", NULL};
		ows_proc *p = NULL;
		ows_error e;
		int rc = spawn(sp->s, argv, OWS_STDIO_NULL, &p, &e);
		if (rc == OWS_ESTATE) {
			sp->refused++;
			break; /* closed: every later call says so too */
		}
		int code = -1;
		int w = rc == 0 ? ows_proc_wait(p, -1, &code, NULL) : rc;
		ows_proc_free(p);
		if (rc == 0 && w == 1)
			__atomic_add_fetch(&sp->ran, 1, __ATOMIC_RELAXED);
		else if (!(w == 1 || w == OWS_ESTATE || rc == OWS_ESTATE))
			sp->bad++;
	}
	return NULL;
}

static void test_close_while_spawning(int nthreads)
{
	const char *what = "ows_session_close while other threads spawn: each spawn runs or gets "
			   "OWS_ESTATE, nothing hangs or crashes";
	ows_session *s = open_session();
	if (!s) {
		report(0, what);
		return;
	}
	struct spawner sp[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	step_begin(what);
	for (int i = 0; i < nthreads; i++) {
		sp[i] = (struct spawner){.s = s};
		pthread_create(&t[i], NULL, spawn_until_closed, &sp[i]);
	}
	/* Let them get going: one of them has run a command. */
	for (int n = 0; n < 20000; n++) {
		int ran = 0;
		for (int i = 0; i < nthreads; i++)
			ran += __atomic_load_n(&sp[i].ran, __ATOMIC_RELAXED);
		if (ran > 0)
			break;
		poll(NULL, 0, 1);
	}
	int crc = ows_session_close(s, NULL);
	int bad = crc < 0, refused = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		bad += sp[i].bad;
		refused += sp[i].refused;
	}
	step_end();
	if (bad || refused != nthreads)
		printf("# close rc %d, bad %d, refused %d of %d\n", crc, bad, refused, nthreads);
	report(!bad && refused == nthreads, what);
}

/* ---------------------------------------------------------------- misuse */

static void test_misuse(void)
{
	ows_error e;
	ows_proc *p = NULL;
	const char *argv[] = {"/bin/true", NULL};
	int code;

	report(ows_session_spawn(NULL, argv, NULL, &p, NULL) == OWS_EINVAL && !p,
	       "spawn in a NULL session: OWS_EINVAL");
	report(ows_proc_wait(NULL, 0, &code, NULL) == OWS_EINVAL, "wait on a NULL proc: OWS_EINVAL");
	report(ows_proc_kill(NULL, 9, NULL) == OWS_EINVAL, "kill a NULL proc: OWS_EINVAL");
	report(ows_proc_fd(NULL) == -1, "ows_proc_fd(NULL) is -1");
	ows_proc_free(NULL);
	report(ows_session_close(NULL, NULL) == 0, "close NULL: 0, as free(NULL)");
	char *out = (char *)"x";
	report(ows_session_blocked_json(NULL, 0, &out, NULL) == OWS_EINVAL && !out,
	       "blocked sites of a NULL session: OWS_EINVAL");
	report(ows_session_allow_site(NULL, "example.com:443", NULL) == OWS_EINVAL,
	       "allow a site in a NULL session: OWS_EINVAL");

	ows_session *s = open_session();
	if (!s) {
		report(0, "a session to misuse opens");
		return;
	}
	ows_proc *kept = NULL;
	spawn(s, argv, OWS_STDIO_NULL, &kept, &e);
	ows_proc_wait(kept, -1, &code, NULL);
	ows_proc *running = NULL;
	const char *sleeper[] = {"/bin/sh", "-c", "exec sleep 600", NULL};
	spawn(s, sleeper, OWS_STDIO_NULL, &running, &e);
	ows_error_clear(&e);
	int rc = ows_session_close(s, &e);
	report(rc == 0, "the session closes");
	if (rc < 0)
		diag_err("close", rc, &e);

	/* From here on `s` names freed memory: the registry answers, nothing reads it. */
	ows_error_clear(&e);
	report(ows_session_close(s, &e) == OWS_ESTATE, "a second close: OWS_ESTATE, no double free");
	ows_error_clear(&e);
	rc = ows_session_spawn(s, argv, NULL, &p, &e);
	report(rc == OWS_ESTATE && !p, "spawn after close: OWS_ESTATE");
	report(ows_session_allow_site(s, "example.com:443", NULL) == OWS_ESTATE,
	       "allow a site after close: OWS_ESTATE");
	out = (char *)"x";
	report(ows_session_blocked_json(s, 0, &out, NULL) == OWS_ESTATE && !out,
	       "blocked sites after close: OWS_ESTATE");
	report(strcmp(ows_session_id(s), "") == 0 && strcmp(ows_session_provider(s), "") == 0,
	       "the borrowed strings of a closed session are \"\"");
	code = -1;
	report(ows_proc_wait(kept, 0, &code, NULL) == 1 && code == 0,
	       "a proc that exited before close still tells its exit code");
	code = -1;
	report(ows_proc_wait(running, -1, &code, NULL) == 1 && code == 137,
	       "a proc killed by the close tells 137");
	ows_proc_free(kept);
	ows_proc_free(running);
	ows_proc_free(running); /* a double free of a proc: ignored */
	report(ows_proc_wait(running, 0, &code, NULL) == OWS_ESTATE,
	       "wait on a freed proc: OWS_ESTATE (a second free was ignored)");
	report(ows_proc_fd(running) == -1, "ows_proc_fd of a freed proc: -1");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: threads_host CONFIG|- POLICY_JSON [ROUNDS]\n");
		return 2;
	}
	config_path = argv[1];
	policy_json = argv[2];
	int rounds = argc > 3 ? atoi(argv[3]) : 10;
	pthread_t dog;
	pthread_create(&dog, NULL, watchdog, NULL);

	ows_session *s = open_session();
	report(s != NULL, "the session opens");
	if (!s)
		return 1;
	/* Rounds over, each a fresh start of threads: the old hang showed in 6 runs of 7. */
	for (int r = 0; r < rounds; r++) {
		test_threads(s, 4, 10);
		test_threads(s, 8, 5);
	}
	test_wait_blocks_nobody(s);
	test_proc_fd(s);
	test_free_running(s);
	test_registry(s);
	report(ows_session_close(s, NULL) == 0, "the session closes after its threads");
	test_close_while_waiting(4);
	test_shutdown_then_close();
	test_close_while_spawning(4);
	test_misuse();
	return failures ? 1 : 0;
}
