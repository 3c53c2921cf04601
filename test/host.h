/* What the library's test hosts (test/sh/ *_host.c) share: a failed call ends the host with
 * the library's words, a shell script runs in a session with its arguments, and its exit code
 * is waited for.  Header only; include after owsandbox.h. */
#ifndef OWS_TEST_HOST_H
#define OWS_TEST_HOST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((noreturn)) void die(const char *what, const ows_error *err)
{
	fprintf(stderr, "%s: %s: %s (%s) %s\n", program_invocation_short_name, what,
		err ? err->what : "", err ? err->where : "", err ? err->hint : "");
	exit(1);
}

/* /bin/sh -c SCRIPT with $1, $2... up to the first NULL of ARGS. */
static inline ows_proc *spawn_script(ows_session *s, const char *script, const char *const *args)
{
	const char *argv[8] = {"/bin/sh", "-c", script, "sh"};
	for (int i = 0; i < 3 && args[i]; i++)
		argv[4 + i] = args[i];
	ows_proc *p;
	ows_error err;
	ows_error_clear(&err);
	if (ows_session_spawn(s, argv, NULL, &p, &err) < 0)
		die("spawn", &err);
	return p;
}
/* spawn_sh(s, script, a1[, a2[, a3]]): at most three arguments, NULL ends them early. */
#define spawn_sh(s, script, ...) spawn_script((s), (script), (const char *const[]){__VA_ARGS__, NULL})

static inline int wait_code(ows_proc *p)
{
	int code = -1;
	ows_error err;
	ows_error_clear(&err);
	if (ows_proc_wait(p, -1, &code, &err) != 1)
		die("wait", &err);
	return code;
}

#endif
