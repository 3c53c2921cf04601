/* What the benchmarks share: a monotonic clock in milliseconds and the median. */
#ifndef OWS_BENCH_H
#define OWS_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* For qsort of doubles. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v; the middle value (the mean of the two middle ones for an even n), 0 for none. */
static inline double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
