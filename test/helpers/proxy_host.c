/*
 * A host program for the proxy tests: starts a proxy through the public API
 * and obeys one command per line on stdin, answering one line each:
 *   allow PATTERN | disallow PATTERN   -> "ok" or "error: WHAT"
 *   blocked SINCE_MS                   -> the JSON array
 *   now                                -> the time in ms
 * Usage: proxy_host [--hosts-file F] [--connect-timeout-ms N]
 *                   [--response-timeout-ms N] [--max-conns N] [PATTERN...]
 * Prints the port first.  Ends at EOF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "owsandbox.h"

int main(int argc, char **argv)
{
	ows_proxy_options o;
	ows_proxy_options_init(&o);
	const char *hosts[64] = {0};
	int nh = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--hosts-file") == 0 && i + 1 < argc)
			o.hosts_file = argv[++i];
		else if (strcmp(argv[i], "--connect-timeout-ms") == 0 && i + 1 < argc)
			o.connect_timeout_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--response-timeout-ms") == 0 && i + 1 < argc)
			o.response_timeout_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max-conns") == 0 && i + 1 < argc)
			o.max_conns = atoi(argv[++i]);
		else if (nh < 63)
			hosts[nh++] = argv[i];
	}
	o.hosts = hosts;
	ows_error err;
	ows_error_clear(&err);
	ows_proxy *px;
	if (ows_proxy_start(&o, &px, &err) < 0) {
		fprintf(stderr, "proxy_host: %s: %s\n", err.what, err.where);
		return 1;
	}
	printf("%d\n", ows_proxy_port(px));
	fflush(stdout);
	char line[1024];
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *arg = strchr(line, ' ');
		if (arg)
			*arg++ = '\0';
		ows_error_clear(&err);
		if (strcmp(line, "allow") == 0 || strcmp(line, "disallow") == 0) {
			int rc = line[0] == 'a' ? ows_proxy_allow(px, arg, &err)
						: ows_proxy_disallow(px, arg, &err);
			if (rc < 0)
				printf("error: %s\n", err.what);
			else
				printf("ok\n");
		} else if (strcmp(line, "blocked") == 0) {
			char *json = NULL;
			if (ows_proxy_blocked_json(px, arg ? atoll(arg) : 0, &json, &err) < 0)
				printf("error: %s\n", err.what);
			else
				printf("%s\n", json);
			ows_free(json);
		} else if (strcmp(line, "now") == 0) {
			struct timeval tv;
			gettimeofday(&tv, NULL);
			printf("%lld\n", (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
		} else {
			printf("error: unknown command\n");
		}
		fflush(stdout);
	}
	ows_proxy_stop(px);
	return 0;
}
