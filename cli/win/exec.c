/*
 * `owsbx exec POLICY.json -- argv`, the shim form of spec 004: starts the
 * command in an AppContainer (the appcontainer provider, whatever provider
 * the policy names), waits for it and passes its exit code on.  70 when the
 * container cannot be set up, 71 when the command cannot start, 2 for usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "owsandbox.h"
#include "exec.h"

static int fail(int code, const ows_error *err, const char *what)
{
	fprintf(stderr, "owsbx exec: %s: %s", what,
		err->what[0] ? err->what : ows_strerror(err->code));
	if (err->where[0])
		fprintf(stderr, ": %s", err->where);
	fprintf(stderr, "\n");
	if (err->hint[0])
		fprintf(stderr, "  %s\n", err->hint);
	return code;
}

/* Found before the container is made: a command that is not there is 71, not a setup to undo. */
static int command_exists(const char *name)
{
	wchar_t w[MAX_PATH], out[MAX_PATH];
	if (MultiByteToWideChar(CP_UTF8, 0, name, -1, w, MAX_PATH) == 0)
		return 0;
	DWORD n = SearchPathW(NULL, w, L".exe", MAX_PATH, out, NULL);
	return n > 0 && n < MAX_PATH;
}

int owsbx_exec(int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "usage: owsbx exec POLICY.json -- COMMAND [ARG...]\n");
		return OWSBX_EXIT_USAGE;
	}
	ows_error err;
	memset(&err, 0, sizeof(err));
	ows_policy *policy = NULL;
	ows_session *s = NULL;
	ows_proc *proc = NULL;
	int code;
	if (ows_policy_load_file(argv[0], &policy, &err) < 0 ||
	    ows_policy_set_provider(policy, "appcontainer", &err) < 0) {
		code = fail(OWSBX_EXIT_SETUP, &err, "cannot read the policy");
		goto out;
	}
	if (!command_exists(argv[2])) {
		fprintf(stderr, "owsbx exec: cannot start the command: %s: not found\n"
				"  check the command's name and that it is a program\n",
			argv[2]);
		code = OWSBX_EXIT_START;
		goto out;
	}
	if (ows_session_open(policy, NULL, NULL, &s, &err) < 0) {
		code = fail(OWSBX_EXIT_SETUP, &err, "cannot set up the AppContainer");
		goto out;
	}
	if (ows_session_spawn(s, (const char *const *)argv + 2, NULL, &proc, &err) < 0) {
		code = fail(OWSBX_EXIT_START, &err, "cannot start the command");
		goto out;
	}
	if (ows_proc_wait(proc, -1, &code, &err) < 0)
		code = fail(OWSBX_EXIT_START, &err, "cannot wait for the command");
out:
	ows_proc_free(proc);
	if (s && ows_session_close(s, &err) < 0)
		fail(0, &err, "cannot close the session");
	ows_policy_free(policy);
	return code;
}
