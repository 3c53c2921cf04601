/*
 * bench/acl_bench.c: times ows_acl_grant and the revoke at session close on
 * one tree.  Usage: acl_bench CONFIG ACCOUNT PATH RUNS.  Prints, in ms, the
 * median of RUNS: "grant G", "revoke R", "regrant X" (a second session
 * granting the same folder while the first holds it: every node already
 * carries the entry).  Built by bench/acl.sh against libowsandbox.a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linux/linux.h"
#include "bench.h"

static void check(int rc, const ows_error *e)
{
	if (rc < 0) {
		fprintf(stderr, "acl_bench: %s: %s (%s)\n", ows_err_name(rc), e->what, e->where);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: acl_bench CONFIG ACCOUNT PATH RUNS\n");
		return 2;
	}
	int runs = atoi(argv[4]);
	if (runs < 1 || runs > 50)
		runs = 3;
	ows_config *c;
	ows_error e;
	ows_error_clear(&e);
	check(ows_config_load(argv[1], &c, &e), &e);
	double g[50], r[50], x[50];
	for (int i = 0; i < runs; i++) {
		ows__journal *j1, *j2;
		check(ows__journal_open(c, "bench-1", &j1, &e), &e);
		check(ows__journal_open(c, "bench-2", &j2, &e), &e);
		double t0 = now_ms();
		check(ows_acl_grant(c, "bench-1", argv[2], argv[3], OWS_ACCESS_RW, NULL, &e), &e);
		double t1 = now_ms();
		check(ows_acl_grant(c, "bench-2", argv[2], argv[3], OWS_ACCESS_RW, NULL, &e), &e);
		double t2 = now_ms();
		check(ows__journal_close(j2, &e), &e); /* kept: bench-1 still holds it */
		double t3 = now_ms();
		check(ows__journal_close(j1, &e), &e);
		double t4 = now_ms();
		g[i] = t1 - t0;
		x[i] = t2 - t1;
		r[i] = t4 - t3;
		(void)t3;
	}
	printf("grant %.0f\nrevoke %.0f\nregrant %.0f\n", median(g, runs), median(r, runs),
	       median(x, runs));
	ows_config_free(c);
	return 0;
}
