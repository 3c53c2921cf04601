/* test/unit/tap.h: a tiny TAP producer for the C unit tests. Header only, C11.
 *
 *   plan(N);                      optional: "1..N" first (else done_testing prints it)
 *   ok(cond, fmt, ...);           "ok N - desc" / "not ok N - desc"; returns cond
 *   is_int(got, expected, fmt, ...);
 *   is_str(got, expected, fmt, ...);   NULL-safe
 *   skip(n, fmt, ...);            n "ok N # SKIP reason" lines
 *   diag(fmt, ...);               "# ..." on stdout
 *   bail_out(fmt, ...);           "Bail out! ..." and exit(255)
 *   return done_testing();        prints the plan when none was given; returns 0 when
 *                                 every test passed and the count matched the plan, else 1
 *
 * Everything is static inline, so a test that uses only part of it compiles cleanly with
 * -Wall -Wextra -Werror -Wmissing-prototypes. State lives in one function-local static.
 */
#ifndef OWS_TEST_TAP_H
#define OWS_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define TAP_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#define TAP_NORETURN_ __attribute__((noreturn))
#else
#define TAP_PRINTF_(f, a)
#define TAP_NORETURN_
#endif

struct tap_state_ {
	int run;     /* tests run */
	int failed;  /* tests failed */
	int planned; /* -1: no plan yet */
};

static inline struct tap_state_ *tap_state_(void)
{
	static struct tap_state_ st = { 0, 0, -1 };
	return &st;
}

static inline void plan(int n)
{
	tap_state_()->planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void tap_vdiag_(const char *fmt, va_list ap) TAP_PRINTF_(1, 0);
static inline void tap_vdiag_(const char *fmt, va_list ap)
{
	char buf[4096];
	const char *p, *nl;
	vsnprintf(buf, sizeof buf, fmt, ap);
	for (p = buf; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			printf("# %s\n", p);
			break;
		}
		printf("# %.*s\n", (int)(nl - p), p);
	}
	fflush(stdout);
}

static inline void diag(const char *fmt, ...) TAP_PRINTF_(1, 2);
static inline void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vdiag_(fmt, ap);
	va_end(ap);
}

static inline int tap_vok_(int cond, const char *file, int line, const char *fmt, va_list ap)
	TAP_PRINTF_(4, 0);
static inline int tap_vok_(int cond, const char *file, int line, const char *fmt, va_list ap)
{
	struct tap_state_ *st = tap_state_();
	char desc[1024];
	vsnprintf(desc, sizeof desc, fmt, ap);
	st->run++;
	if (!cond)
		st->failed++;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", st->run, desc);
	if (!cond)
		printf("#   Failed test at %s line %d.\n", file, line);
	fflush(stdout);
	return cond;
}

static inline int tap_ok_(int cond, const char *file, int line, const char *fmt, ...)
	TAP_PRINTF_(4, 5);
static inline int tap_ok_(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int r;
	va_start(ap, fmt);
	r = tap_vok_(cond, file, line, fmt, ap);
	va_end(ap);
	return r;
}

static inline int tap_is_int_(long long got, long long want, const char *file, int line,
			      const char *fmt, ...) TAP_PRINTF_(5, 6);
static inline int tap_is_int_(long long got, long long want, const char *file, int line,
			      const char *fmt, ...)
{
	va_list ap;
	int r;
	va_start(ap, fmt);
	r = tap_vok_(got == want, file, line, fmt, ap);
	va_end(ap);
	if (!r)
		diag("     got: %lld\nexpected: %lld", got, want);
	return r;
}

static inline int tap_is_str_(const char *got, const char *want, const char *file, int line,
			      const char *fmt, ...) TAP_PRINTF_(5, 6);
static inline int tap_is_str_(const char *got, const char *want, const char *file, int line,
			      const char *fmt, ...)
{
	va_list ap;
	int same, r;
	if (got == NULL || want == NULL)
		same = got == want;
	else
		same = strcmp(got, want) == 0;
	va_start(ap, fmt);
	r = tap_vok_(same, file, line, fmt, ap);
	va_end(ap);
	if (!r)
		diag("     got: %s%s%s\nexpected: %s%s%s", got ? "'" : "", got ? got : "NULL",
		     got ? "'" : "", want ? "'" : "", want ? want : "NULL", want ? "'" : "");
	return r;
}

static inline void skip(int n, const char *fmt, ...) TAP_PRINTF_(2, 3);
static inline void skip(int n, const char *fmt, ...)
{
	struct tap_state_ *st = tap_state_();
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	while (n-- > 0) {
		st->run++;
		printf("ok %d # SKIP %s\n", st->run, why);
	}
	fflush(stdout);
}

static inline TAP_NORETURN_ void bail_out(const char *fmt, ...) TAP_PRINTF_(1, 2);
static inline TAP_NORETURN_ void bail_out(const char *fmt, ...)
{
	va_list ap;
	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(255);
}

static inline int done_testing(void)
{
	struct tap_state_ *st = tap_state_();
	if (st->planned < 0)
		printf("1..%d\n", st->run);
	else if (st->planned != st->run)
		printf("# planned %d tests but ran %d\n", st->planned, st->run);
	fflush(stdout);
	if (st->failed)
		printf("# failed %d of %d tests\n", st->failed, st->run);
	fflush(stdout);
	return (st->failed == 0 && (st->planned < 0 || st->planned == st->run)) ? 0 : 1;
}

#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) \
	tap_is_int_((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str_((got), (want), __FILE__, __LINE__, __VA_ARGS__)

#endif /* OWS_TEST_TAP_H */
