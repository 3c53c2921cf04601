/*
 * A stand-in host for test/sh/proxy_calls.sh and account_allowlist.sh:
 * allowlist sessions of the landlock provider (OWSTEST_PROVIDER names
 * another) driven through the library, the way an agent server would,
 * printing KEY=VALUE lines for the test to check.
 *
 *   proxy_calls_host calls UP DIR        two calls at once in one session, one refused
 *                                  a site, one quiet: each one's blocked list
 *   proxy_calls_host squat UP DIR        a command inside holds the next calls' ports
 *   proxy_calls_host two UP NAME         two sessions with different lists in one host
 *                                  (NAME: a name that resolves to a private address)
 *   proxy_calls_host many N UP           N sessions open at once, a request in each
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "owsandbox.h"
#include "../host.h"
#include "../selfcount.h"

/* The hosts of a blocked list, comma-separated, into out. */
static void hosts_of(const char *json, char *out, size_t cap)
{
	out[0] = '\0';
	json_t *a = json_loads(json ? json : "[]", 0, NULL);
	size_t i;
	json_t *b;
	json_array_foreach(a, i, b) {
		const char *h = json_string_value(json_object_get(b, "host"));
		if (h && strlen(out) + strlen(h) + 2 < cap) {
			if (out[0])
				strcat(out, ",");
			strcat(out, h);
		}
	}
	json_decref(a);
}

static ows_policy *policy(const char *const *sites, const char *rw)
{
	ows_policy *p;
	ows_error err;
	ows_error_clear(&err);
	const char *provider = getenv("OWSTEST_PROVIDER");
	if (ows_policy_new(&p, &err) < 0 ||
	    ows_policy_set_provider(p, provider ? provider : "landlock", &err) < 0 ||
	    ows_policy_set_network(p, OWS_NET_ALLOWLIST, &err) < 0)
		die("policy", &err);
	for (; sites && *sites; sites++)
		if (ows_policy_add_host(p, *sites, &err) < 0)
			die("policy host", &err);
	if (rw && ows_policy_add_folder(p, rw, OWS_ACCESS_RW, &err) < 0)
		die("policy folder", &err);
	return p;
}

static ows_config *config(void)
{
	ows_config *c = NULL;
	ows_error err;
	ows_error_clear(&err);
	if (ows_config_load(getenv("OWSBX_CONFIG"), &c, &err) < 0)
		die("config", &err);
	return c;
}

static ows_session *open_session(const ows_policy *p, const ows_config *c,
				 const ows_session_options *o)
{
	ows_session *s;
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_open(p, c, o, &s, &err) < 0)
		die("open", &err);
	return s;
}

static void print_blocked(const char *key, ows_proc *p)
{
	char *j = NULL, hosts[2048];
	ows_error err;
	ows_error_clear(&err);
	if (ows_proc_blocked_json(p, &j, &err) < 0)
		die("proc blocked", &err);
	hosts_of(j, hosts, sizeof(hosts));
	printf("%s=%s\n", key, hosts);
	ows_free(j);
}

/* ---------------------------------------------------------------- calls */

/* The exit events' blocked hosts, by proc id (1 and 2). */
static char exit_blocked[3][2048];
static int exits_seen;

static void on_event(void *ctx, const char *line)
{
	(void)ctx;
	json_t *e = json_loads(line, 0, NULL);
	const char *ev = json_string_value(json_object_get(e, "event"));
	json_int_t id = json_integer_value(json_object_get(e, "proc"));
	if (ev && strcmp(ev, "exit") == 0 && id >= 1 && id <= 2) {
		char *b = json_dumps(json_object_get(e, "blocked") ? json_object_get(e, "blocked")
								   : json_array(),
				     JSON_COMPACT);
		hosts_of(b, exit_blocked[id], sizeof(exit_blocked[id]));
		free(b);
		exits_seen++;
	}
	json_decref(e);
}

/* A policy that lists localhost:UP, and the upstream's url into url. */
static ows_policy *upstream_policy(const char *up, const char *dir, char *url, size_t cap)
{
	char site[64];
	snprintf(site, sizeof(site), "localhost:%s", up);
	snprintf(url, cap, "http://localhost:%s/", up);
	const char *sites[] = {site, NULL};
	return policy(sites, dir);
}

static int calls(const char *up, const char *dir)
{
	char url[96];
	ows_policy *p = upstream_policy(up, dir, url, sizeof(url));
	ows_config *c = config();
	ows_session_options o;
	ows_session_options_init(&o);
	o.on_event = on_event;
	ows_session *s = open_session(p, c, &o);
	/*
	 * The quiet call starts first and ends last, so that the loud one's
	 * refusal falls in its lifetime; the loud one's refusal comes from a
	 * command it started.  Files in DIR order them; no timing.
	 */
	ows_proc *quiet = spawn_sh(s,
		"echo \"$http_proxy\" >\"$1/quiet.proxy\"; : >\"$1/quiet.started\"; "
		"i=0; while [ ! -e \"$1/loud.done\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
		"curl -s -m 10 -o \"$1/quiet.out\" -w '%{http_code}' \"$2\" >\"$1/quiet.code\"",
		dir, url);
	ows_proc *loud = spawn_sh(s,
		"echo \"$http_proxy\" >\"$1/loud.proxy\"; "
		"i=0; while [ ! -e \"$1/quiet.started\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
		"sh -c 'curl -s -m 10 -o /dev/null -w \"%{http_code}\" http://owstest-loud-only.invalid/' "
		">\"$1/loud.code\"; : >\"$1/loud.done\"",
		dir, NULL);
	printf("quiet_exit=%d\n", wait_code(quiet));
	printf("loud_exit=%d\n", wait_code(loud));
	print_blocked("quiet_blocked", quiet);
	print_blocked("loud_blocked", loud);
	printf("quiet_exit_blocked=%s\n", exit_blocked[1]);
	printf("loud_exit_blocked=%s\n", exit_blocked[2]);
	char *j = NULL, hosts[2048];
	if (ows_session_blocked_json(s, 0, &j, NULL) == 0) {
		hosts_of(j, hosts, sizeof(hosts));
		printf("session_blocked=%s\n", hosts);
		ows_free(j);
	}
	ows_proc_free(quiet);
	ows_proc_free(loud);
	/* A third call after both were freed: a port of its own again, nothing refused yet. */
	ows_proc *third = spawn_sh(s, "echo \"$http_proxy\" >\"$1/third.proxy\"", dir, NULL);
	printf("third_exit=%d\n", wait_code(third));
	print_blocked("third_blocked", third);
	ows_proc_free(third);
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_close(s, &err) < 0)
		die("close", &err);
	ows_policy_free(p);
	ows_config_free(c);
	return 0;
}

/* ---------------------------------------------------------------- squat */

/*
 * A command inside listens on the ports the next calls would get (the search
 * goes round from the last port taken): the next call starts all the same, on
 * a port no one inside holds, and is told its own refusals.
 */
static int squat(const char *up, const char *dir)
{
	char url[96];
	ows_policy *p = upstream_policy(up, dir, url, sizeof(url));
	ows_config *c = config();
	ows_session *s = open_session(p, c, NULL);
	/* DIR/squat.py (the test writes it) listens on the two ports after its own. */
	ows_proc *squatter = spawn_sh(s, "exec python3 \"$1/squat.py\" \"$1\"", dir, NULL);
	char path[4096];
	snprintf(path, sizeof(path), "%s/squatting", dir);
	for (int i = 0; i < 400 && access(path, F_OK) != 0; i++)
		usleep(50000);
	FILE *f = fopen(path, "r");
	char held[64] = "";
	if (f) {
		if (!fgets(held, sizeof(held), f))
			held[0] = '\0';
		fclose(f);
	}
	printf("squatted=%s\n", held);
	ows_proc *next = spawn_sh(s,
		"echo \"$http_proxy\" >\"$1/next.proxy\"; "
		"curl -s -m 10 -o /dev/null -w '%{http_code}' \"$2\" >\"$1/next.code\"; "
		"curl -s -m 10 -o /dev/null http://owstest-next-only.invalid/; : >\"$1/squat.done\"",
		dir, url);
	printf("next_exit=%d\n", wait_code(next));
	print_blocked("next_blocked", next);
	printf("squatter_exit=%d\n", wait_code(squatter));
	print_blocked("squatter_blocked", squatter);
	ows_proc_free(next);
	ows_proc_free(squatter);
	ows_session_close(s, NULL);
	ows_policy_free(p);
	ows_config_free(c);
	return 0;
}

/* ------------------------------------------------------------------ two */

static void check(const char *key, ows_session *s, const char *host, int port)
{
	char *why = NULL;
	ows_error err;
	ows_error_clear(&err);
	int r = ows_session_check_site(s, host, port, &why, &err);
	if (r < 0)
		die("check_site", &err);
	printf("%s=%d %s\n", key, r, why);
	ows_free(why);
}

static void sites(const char *key, ows_session *s)
{
	char *j = NULL;
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_sites_json(s, &j, &err) < 0)
		die("sites_json", &err);
	printf("%s=%s\n", key, j);
	ows_free(j);
}

/* curl's HTTP code for url, run in s. */
static void fetch(const char *key, ows_session *s, const char *url)
{
	char script[256];
	snprintf(script, sizeof(script), "curl -s -m 10 -o /dev/null -w '%%{http_code}' '%s'", url);
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	int pipefd[2];
	if (pipe(pipefd) != 0)
		die("pipe", NULL);
	ows_spawn_options so;
	ows_spawn_options_init(&so);
	so.stdio[1] = pipefd[1];
	ows_proc *p;
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_spawn(s, argv, &so, &p, &err) < 0)
		die("spawn", &err);
	close(pipefd[1]);
	char buf[16] = "";
	ssize_t n = read(pipefd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	wait_code(p);
	ows_proc_free(p);
	printf("%s=%s\n", key, buf);
}

static void session_blocked(const char *key, ows_session *s)
{
	char *j = NULL, hosts[2048];
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_blocked_json(s, 0, &j, &err) < 0)
		die("session blocked", &err);
	hosts_of(j, hosts, sizeof(hosts));
	printf("%s=%s\n", key, hosts);
	ows_free(j);
}

static int two(const char *up, const char *private_name)
{
	char site[64], url[96], priv[300];
	snprintf(site, sizeof(site), "localhost:%s", up);
	snprintf(url, sizeof(url), "http://localhost:%s/", up);
	snprintf(priv, sizeof(priv), "%s:%s", private_name, up);
	const char *one_sites[] = {site, priv, NULL};
	const char *two_sites[] = {"owstest-two-only.example:443", "@package-registries", NULL};
	struct rlimit before, after;
	getrlimit(RLIMIT_NOFILE, &before);
	int t0 = self_threads();
	ows_policy *p1 = policy(one_sites, NULL), *p2 = policy(two_sites, NULL);
	ows_config *c = config();
	ows_session *s1 = open_session(p1, c, NULL);
	int t1 = self_threads();
	ows_session *s2 = open_session(p2, c, NULL);
	int t2 = self_threads();
	getrlimit(RLIMIT_NOFILE, &after);
	printf("threads=%d %d %d\n", t0, t1, t2);
	printf("nofile=%llu %llu\n", (unsigned long long)before.rlim_cur,
	       (unsigned long long)after.rlim_cur);

	fetch("one_listed", s1, url);
	fetch("two_unlisted", s2, url);
	fetch("one_refused", s1, "http://owstest-one-only.invalid/");
	session_blocked("one_blocked", s1);
	session_blocked("two_blocked", s2);

	check("check_listed", s1, "localhost", atoi(up));
	check("check_unlisted", s2, "localhost", atoi(up));
	check("check_other_port", s1, "localhost", atoi(up) + 1);
	check("check_private", s1, private_name, atoi(up));
	check("check_group", s2, "pypi.org", 443);
	check("check_case", s2, "OWSTEST-TWO-ONLY.example.", 443);

	ows_error err;
	ows_error_clear(&err);
	if (ows_session_allow_site(s1, "owstest-added.example:8443", &err) < 0)
		die("allow_site", &err);
	sites("one_sites", s1);
	sites("two_sites", s2);
	check("check_added", s1, "owstest-added.example", 8443);
	if (ows_session_remove_site(s1, "owstest-added.example:8443", &err) < 0)
		die("remove_site", &err);
	sites("one_sites_removed", s1);
	int rc = ows_session_check_site(NULL, "x.example", 443, NULL, &err);
	printf("check_null=%s\n", ows_err_name(rc));
	ows_error_clear(&err);
	rc = ows_session_check_site(s1, "not a host!", 443, NULL, &err);
	printf("check_bad=%s\n", ows_err_name(rc));

	ows_session_close(s2, NULL);
	ows_session_close(s1, NULL);
	printf("threads_after=%d\n", self_threads_settled(t0));
	ows_policy_free(p1);
	ows_policy_free(p2);
	ows_config_free(c);
	return 0;
}

/* ----------------------------------------------------------------- many */

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int many(int n, const char *up)
{
	char site[64], url[96];
	snprintf(site, sizeof(site), "localhost:%s", up);
	snprintf(url, sizeof(url), "http://localhost:%s/", up);
	const char *sites1[] = {site, NULL};
	ows_policy *p = policy(sites1, NULL);
	ows_config *c = config();
	ows_session **s = calloc((size_t)n, sizeof(*s));
	struct rlimit before, after;
	getrlimit(RLIMIT_NOFILE, &before);
	int t0 = self_threads(), f0 = self_fds();
	double start = now_ms();
	int opened = 0;
	for (int i = 0; i < n; i++) {
		ows_error err;
		ows_error_clear(&err);
		if (ows_session_open(p, c, NULL, &s[i], &err) < 0) {
			printf("open_failed_at=%d %s: %s (%s)\n", i + 1, ows_err_name(err.code), err.what,
			       err.where);
			break;
		}
		opened++;
	}
	double open_ms = now_ms() - start;
	int t1 = self_threads(), f1 = self_fds();
	getrlimit(RLIMIT_NOFILE, &after);
	printf("opened=%d\n", opened);
	printf("nofile=%llu %llu\n", (unsigned long long)before.rlim_cur,
	       (unsigned long long)after.rlim_cur);
	printf("threads=%d %d\n", t0, t1);
	printf("fds=%d %d\n", f0, f1);
	if (opened)
		printf("per_session=threads %.2f, fds %.2f, open %.1f ms\n",
		       (double)(t1 - t0) / opened, (double)(f1 - f0) / opened, open_ms / opened);
	/* One request through the proxy in each session; each must reach the listed site. */
	int ok = 0;
	double req_start = now_ms();
	for (int i = 0; i < opened; i++) {
		const char *argv[] = {"/bin/sh", "-c",
				      "[ \"$(curl -s -m 10 -o /dev/null -w '%{http_code}' \"$1\")\" = 200 ]",
				      "sh", url, NULL};
		ows_proc *pr;
		int code = -1;
		if (ows_session_spawn(s[i], argv, NULL, &pr, NULL) == 0 &&
		    ows_proc_wait(pr, -1, &code, NULL) == 1 && code == 0)
			ok++;
		ows_proc_free(pr);
	}
	double req_ms = now_ms() - req_start;
	printf("requests_ok=%d\n", ok);
	if (opened)
		printf("per_request=%.1f ms (spawn, curl through the proxy, exit)\n", req_ms / opened);
	double close_start = now_ms();
	for (int i = 0; i < opened; i++)
		ows_session_close(s[i], NULL);
	if (opened)
		printf("per_close=%.1f ms\n", (now_ms() - close_start) / opened);
	printf("threads_after=%d\n", self_threads_settled(t0));
	free(s);
	ows_policy_free(p);
	ows_config_free(c);
	return 0;
}

/* ---------------------------------------------------------------- flood */

/*
 * Session A holds as many proxy connections as it can, each with a request
 * head begun and a byte more every second (test/helpers/proxy_flood.py);
 * once it holds them, session B makes 20 requests, one after the other.
 * Then A's trickling connections are waited for: the proxy ends each when
 * its head is not whole 30 s after it began, however it trickles.
 */
static int flood(const char *up, const char *dir, const char *script, const char *n)
{
	char url[96];
	ows_policy *p = upstream_policy(up, dir, url, sizeof(url));
	ows_config *c = config();
	ows_session *a = open_session(p, c, NULL), *b = open_session(p, c, NULL);
	const char *fargv[] = {"/usr/bin/python3", script, dir, up, n, NULL};
	ows_proc *fa;
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_spawn(a, fargv, NULL, &fa, &err) < 0)
		die("spawn flood", &err);
	char held[512];
	snprintf(held, sizeof(held), "%s/held", dir);
	for (int i = 0; i < 1200 && access(held, F_OK) != 0; i++)
		usleep(50000);
	ows_proc *rb = spawn_sh(b,
		"ok=0; for i in $(seq 20); do "
		"[ \"$(curl -s -m 20 -o /dev/null -w '%{http_code}' \"$1\")\" = 200 ] && ok=$((ok+1)); "
		"done; echo $ok >\"$2/b_ok\"", url, dir);
	printf("b_exit=%d\n", wait_code(rb));
	printf("a_exit=%d\n", wait_code(fa));
	ows_proc_free(rb);
	ows_proc_free(fa);
	ows_session_close(b, NULL);
	ows_session_close(a, NULL);
	ows_policy_free(p);
	ows_config_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "calls") == 0)
		return calls(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "squat") == 0)
		return squat(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "two") == 0)
		return two(argv[2], argv[3]);
	if (argc == 6 && strcmp(argv[1], "flood") == 0)
		return flood(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 4 && strcmp(argv[1], "many") == 0)
		return many(atoi(argv[2]), argv[3]);
	fprintf(stderr, "usage: proxy_calls_host calls UP DIR | two UP NAME | many N UP | "
			"flood UP DIR SCRIPT N\n");
	return 2;
}
