/*
 * test/sh/acl_host.c: a stand-in host for the ACL tests and the bench.
 * Reads commands on stdin, one per line, answers one line each:
 *
 *   open ID                          ows__journal_open        -> "ok"
 *   grant ID ACCOUNT PATH rw|ro HOME|-   ows_acl_grant        -> "ok"
 *   revoke ID ACCOUNT PATH           ows_acl_revoke           -> "ok"
 *   close ID                         ows__journal_close       -> "ok"
 *   cleanup                          ows_machine_cleanup      -> "ok N"
 *   quit
 *
 * A failure answers "err NAME what | where | hint".  Usage: acl_host CONFIG.
 * Built by the tests with cc against libowsandbox.a (it uses internal calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

static void answer(int rc, const ows_error *e)
{
	if (rc >= 0)
		printf("ok %d\n", rc);
	else
		printf("err %s %s | %s | %s\n", ows_err_name(rc), e->what, e->where, e->hint);
	fflush(stdout);
}

#define MAXJ 16

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: acl_host CONFIG\n");
		return 2;
	}
	ows_config *c;
	ows_error e;
	ows_error_clear(&e);
	if (ows_config_load(argv[1], &c, &e) < 0) {
		fprintf(stderr, "config: %s (%s)\n", e.what, e.where);
		return 1;
	}
	char line[8192];
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		char *f[8] = {0};
		int n = 0;
		for (char *t = strtok(line, " "); t && n < 8; t = strtok(NULL, " "))
			f[n++] = t;
		if (n == 0)
			continue;
		ows_error_clear(&e);
		int rc;
		if (strcmp(f[0], "quit") == 0)
			break;
		if (strcmp(f[0], "open") == 0 && n == 2) {
			ows__journal *j;
			rc = ows__journal_open(c, f[1], &j, &e);
		} else if (strcmp(f[0], "grant") == 0 && n == 6) {
			rc = ows_acl_grant(c, f[1], f[2], f[3],
					   strcmp(f[4], "rw") == 0 ? OWS_ACCESS_RW : OWS_ACCESS_RO,
					   strcmp(f[5], "-") == 0 ? NULL : f[5], &e);
		} else if (strcmp(f[0], "revoke") == 0 && n == 4) {
			rc = ows_acl_revoke(c, f[1], f[2], f[3], &e);
		} else if (strcmp(f[0], "close") == 0 && n == 2) {
			rc = ows__journal_close_session(c, f[1], &e);
		} else if (strcmp(f[0], "cleanup") == 0 && n == 1) {
			rc = ows_machine_cleanup(c, &e);
		} else {
			printf("err usage\n");
			fflush(stdout);
			continue;
		}
		answer(rc, &e);
	}
	ows_config_free(c);
	return 0;
}
