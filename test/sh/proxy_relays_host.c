/*
 * A stand-in host for test/sh/proxy_relays.sh: two allowlist sessions
 * (landlock; OWSTEST_PROVIDER names another) of a config whose credential is
 * injected for https://localhost:PORT.  Session A's command opens N CONNECTs
 * to that host and never starts TLS on them (each holds a relay thread of
 * the host until it ends); while they are held, session B makes one
 * injected request.  The host's threads and RSS before, while held and
 * after they are gone, as KEY=VALUE lines.
 *
 *   proxy_relays_host burst PORT DIR N
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "owsandbox.h"
#include "../host.h"
#include "../selfcount.h"

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static ows_session *open_session(const char *dir)
{
	ows_error err;
	ows_error_clear(&err);
	ows_policy *p;
	const char *provider = getenv("OWSTEST_PROVIDER");
	if (ows_policy_new(&p, &err) < 0 ||
	    ows_policy_set_provider(p, provider ? provider : "landlock", &err) < 0 ||
	    ows_policy_set_network(p, OWS_NET_ALLOWLIST, &err) < 0 ||
	    ows_policy_add_folder(p, dir, OWS_ACCESS_RW, &err) < 0)
		die("policy", &err);
	ows_config *c = NULL;
	if (ows_config_load(getenv("OWSBX_CONFIG"), &c, &err) < 0)
		die("config", &err);
	ows_session *s;
	if (ows_session_open(p, c, NULL, &s, &err) < 0)
		die("open", &err);
	ows_policy_free(p);
	ows_config_free(c);
	return s;
}

/* Its exit code, and the call freed. */
static int wait_free(ows_proc *p)
{
	int code = wait_code(p);
	ows_proc_free(p);
	return code;
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* One injected request in s: what the host answered, into DIR/NAME. */
#define INJECTED "curl -sS -m 20 -H \"Authorization: Bearer $(cat \"$OWSTOOL_TOKEN_FILE\")\" " \
		 "https://localhost:$2/ >\"$1/$3\" 2>&1"

static int burst(const char *port, const char *dir, const char *n)
{
	ows_session *a = open_session(dir);
	ows_session *b = open_session(dir);
	/* one injected request each first: the trust pools and caches are warm */
	wait_free(spawn_sh(a, INJECTED, dir, port, "warm_a"));
	wait_free(spawn_sh(b, INJECTED, dir, port, "warm_b"));
	int base_threads = self_threads();
	long base_rss = rss_kb();
	printf("base_threads=%d\nbase_rss_kb=%ld\n", base_threads, base_rss);

	char script[512];
	snprintf(script, sizeof(script), "exec python3 \"$1/burst.py\" \"$1\" \"$2\" %s", n);
	ows_proc *held = spawn_sh(a, script, dir, port, NULL);
	for (int i = 0; i < 1200 && !exists(dir, "held"); i++)
		nap_ms(50);
	printf("held_threads=%d\nheld_rss_kb=%ld\n", self_threads(), rss_kb());
	wait_free(spawn_sh(b, INJECTED, dir, port, "b_meanwhile"));
	FILE *f = fopen(strcat(strcpy(script, dir), "/release"), "w");
	if (f)
		fclose(f);
	printf("burst_exit=%d\n", wait_free(held));
	/* the relays see their clients go and end */
	int after = self_threads_settled(base_threads);
	for (int i = 0; i < 400 && after > base_threads; i++) {
		nap_ms(50);
		after = self_threads();
	}
	nap_ms(200);
	printf("after_threads=%d\nafter_rss_kb=%ld\n", after, rss_kb());
	ows_session_close(a, NULL);
	ows_session_close(b, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "burst") == 0)
		return burst(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: proxy_relays_host burst PORT DIR N\n");
	return 2;
}
