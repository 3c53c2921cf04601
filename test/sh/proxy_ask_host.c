/*
 * A stand-in host for test/sh/proxy_ask.sh: one allowlist session (landlock,
 * OWSTEST_PROVIDER names another) that lists localhost:UP and denies
 * 127.0.0.2, with an ask hook, driven through the library the way an agent
 * server would.  Commands inside reach http://127.0.0.1:UP/ (not listed, so
 * asked) through the proxy; the hook answers as the current scene says.
 * Prints KEY=VALUE lines for the test to check.
 *
 *   proxy_ask_host ask UP DIR
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "owsandbox.h"
#include "../host.h"

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- the hook */

typedef enum { SAY_YES_NOW, SAY_NO_NOW, SAY_LATER } scene_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static scene_t scene;
static uint64_t pending[64]; /* asks answered LATER, not yet answered */
static int npending;
static int nasked;           /* every call of the hook */
static char last_host[300];
static int last_port;
static atomic_bool closed;   /* the session is closed: the hook must not run */
static atomic_int after_close;

static int on_ask(void *ctx, uint64_t id, const char *host, int port)
{
	(void)ctx;
	if (atomic_load(&closed))
		atomic_fetch_add(&after_close, 1);
	pthread_mutex_lock(&mu);
	nasked++;
	snprintf(last_host, sizeof(last_host), "%s", host);
	last_port = port;
	scene_t sc = scene;
	if (sc == SAY_LATER && npending < 64)
		pending[npending++] = id;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mu);
	return sc == SAY_YES_NOW ? OWS_ASK_ALLOW : sc == SAY_NO_NOW ? OWS_ASK_REFUSE : OWS_ASK_LATER;
}

/* Waits until n asks are pending (or 20 s); how many are. */
static int wait_pending(int n)
{
	int64_t end = now_ms() + 20000;
	pthread_mutex_lock(&mu);
	while (npending < n && now_ms() < end) {
		pthread_mutex_unlock(&mu);
		usleep(20000);
		pthread_mutex_lock(&mu);
	}
	int got = npending;
	pthread_mutex_unlock(&mu);
	return got;
}

/* Answers every pending ask; the number of answers the library took. */
static int answer_all(int allow)
{
	pthread_mutex_lock(&mu);
	int ok = 0;
	for (int i = 0; i < npending; i++)
		if (ows_ask_answer(pending[i], allow, NULL) == 0)
			ok++;
	npending = 0;
	pthread_mutex_unlock(&mu);
	return ok;
}

static void set_scene(scene_t sc)
{
	pthread_mutex_lock(&mu);
	scene = sc;
	npending = 0;
	nasked = 0;
	pthread_mutex_unlock(&mu);
}

static int asked(void)
{
	pthread_mutex_lock(&mu);
	int n = nasked;
	pthread_mutex_unlock(&mu);
	return n;
}

/* ---------------------------------------------------------------- commands */

/* curl through the proxy: the status code into DIR/NAME (so many of them may run at once). */
#define CURL "curl -s -m 30 -x \"$http_proxy\" -o /dev/null -w '%{http_code}' "

/* One request to URL in the session; its HTTP status. */
static int fetch(ows_session *s, const char *dir, const char *url)
{
	ows_proc *p = spawn_sh(s, CURL "\"$2\" >\"$1/code\"", dir, url);
	wait_code(p);
	ows_proc_free(p);
	char path[4096], code[16] = "";
	snprintf(path, sizeof(path), "%s/code", dir);
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(code, sizeof(code), f))
			code[0] = '\0';
		fclose(f);
	}
	return atoi(code);
}

static bool blocked_has(ows_session *s, const char *host)
{
	char *j = NULL;
	bool found = false;
	if (ows_session_blocked_json(s, 0, &j, NULL) < 0)
		return false;
	json_t *a = json_loads(j, 0, NULL);
	size_t i;
	json_t *b;
	json_array_foreach(a, i, b) {
		const char *h = json_string_value(json_object_get(b, "host"));
		if (h && strcmp(h, host) == 0)
			found = true;
	}
	json_decref(a);
	ows_free(j);
	return found;
}

typedef struct {
	scene_t allow_after;
	int delay_ms;
} later_arg;

static void *answer_later(void *arg)
{
	const later_arg *la = arg;
	wait_pending(1);
	usleep((useconds_t)la->delay_ms * 1000);
	answer_all(la->allow_after == SAY_YES_NOW);
	return NULL;
}

static int ask(const char *up, const char *dir)
{
	ows_error err;
	ows_error_clear(&err);
	ows_policy *p;
	char listed[64], denied[64], url[96], durl[96], lurl[96];
	snprintf(listed, sizeof(listed), "localhost:%s", up);
	snprintf(denied, sizeof(denied), "!127.0.0.2:*");
	snprintf(url, sizeof(url), "http://127.0.0.1:%s/", up);
	snprintf(durl, sizeof(durl), "http://127.0.0.2:%s/", up);
	snprintf(lurl, sizeof(lurl), "http://localhost:%s/", up);
	const char *provider = getenv("OWSTEST_PROVIDER");
	if (ows_policy_new(&p, &err) < 0 ||
	    ows_policy_set_provider(p, provider ? provider : "landlock", &err) < 0 ||
	    ows_policy_set_network(p, OWS_NET_ALLOWLIST, &err) < 0 ||
	    ows_policy_add_host(p, listed, &err) < 0 || ows_policy_add_host(p, denied, &err) < 0 ||
	    ows_policy_add_folder(p, dir, OWS_ACCESS_RW, &err) < 0)
		die("policy", &err);
	ows_config *c = NULL;
	if (ows_config_load(getenv("OWSBX_CONFIG"), &c, &err) < 0)
		die("config", &err);
	ows_session *s;
	if (ows_session_open(p, c, NULL, &s, &err) < 0)
		die("open", &err);

	/* No hook: refused at once, as always. */
	printf("nohook_code=%d\n", fetch(s, dir, url));
	if (ows_session_set_ask(s, on_ask, NULL, -1, &err) != OWS_EINVAL)
		die("a negative timeout is refused", &err);
	if (ows_session_set_ask(s, on_ask, NULL, 2000, &err) < 0)
		die("set_ask", &err);

	set_scene(SAY_YES_NOW);
	printf("yes_code=%d\n", fetch(s, dir, url));
	printf("yes_asked=%d host=%s port=%d\n", asked(), last_host, last_port);

	set_scene(SAY_NO_NOW);
	printf("no_code=%d\n", fetch(s, dir, url));
	printf("no_blocked=%d\n", blocked_has(s, "127.0.0.1"));

	/* Answered later from another thread, yes and no. */
	pthread_t th;
	later_arg la = {SAY_YES_NOW, 300};
	set_scene(SAY_LATER);
	pthread_create(&th, NULL, answer_later, &la);
	printf("later_yes_code=%d\n", fetch(s, dir, url));
	pthread_join(th, NULL);
	la.allow_after = SAY_NO_NOW;
	set_scene(SAY_LATER);
	pthread_create(&th, NULL, answer_later, &la);
	printf("later_no_code=%d\n", fetch(s, dir, url));
	pthread_join(th, NULL);

	/* Never answered: refused when the 2 s deadline passes; a late answer is not found. */
	set_scene(SAY_LATER);
	int64_t t0 = now_ms();
	printf("timeout_code=%d\n", fetch(s, dir, url));
	printf("timeout_ms=%lld\n", (long long)(now_ms() - t0));
	pthread_mutex_lock(&mu);
	uint64_t late = npending ? pending[0] : 0;
	pthread_mutex_unlock(&mu);
	printf("late_answer=%d\n", ows_ask_answer(late, 1, NULL));

	/* A denied address is never asked. */
	set_scene(SAY_YES_NOW);
	printf("denied_code=%d denied_asked=%d\n", fetch(s, dir, durl), asked());

	/*
	 * Four asks at once, held together; meanwhile a listed site's request
	 * goes through (the asks hold neither the loop nor the hook's thread).
	 */
	set_scene(SAY_LATER);
	ows_proc *four = spawn_sh(s,
		"for i in 1 2 3 4; do (" CURL "\"$2\" >\"$1/c$i\") & done; wait", dir, url);
	printf("concurrent_pending=%d\n", wait_pending(4));
	printf("listed_meanwhile=%d\n", fetch(s, dir, lurl));
	printf("concurrent_answered=%d\n", answer_all(1));
	wait_code(four);
	ows_proc_free(four);
	char codes[64] = "";
	for (int i = 1; i <= 4; i++) {
		char path[4096], code[16] = "";
		snprintf(path, sizeof(path), "%s/c%d", dir, i);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(code, sizeof(code), f))
				code[0] = '\0';
			fclose(f);
		}
		strcat(codes, code);
		strcat(codes, i < 4 ? "," : "");
	}
	printf("concurrent_codes=%s\n", codes);

	/* The session closed while an ask is pending: the close does not wait for it. */
	set_scene(SAY_LATER);
	ows_proc *held = spawn_sh(s, CURL "\"$2\" >\"$1/held\"", dir, url);
	printf("close_pending=%d\n", wait_pending(1));
	pthread_mutex_lock(&mu);
	uint64_t open_id = pending[0];
	pthread_mutex_unlock(&mu);
	t0 = now_ms();
	atomic_store(&closed, true);
	if (ows_session_close(s, &err) < 0)
		die("close", &err);
	printf("close_ms=%lld\n", (long long)(now_ms() - t0));
	printf("answer_after_close=%d\n", ows_ask_answer(open_id, 1, NULL));
	wait_code(held);
	ows_proc_free(held);
	printf("hook_after_close=%d\n", atomic_load(&after_close));
	ows_policy_free(p);
	ows_config_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "ask") == 0)
		return ask(argv[2], argv[3]);
	fprintf(stderr, "usage: proxy_ask_host ask UP DIR\n");
	return 2;
}
