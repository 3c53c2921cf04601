/*
 * Processes under Wine, for real: the session's job kills a whole process
 * tree when the session closes, spawn passes the exit code and exactly the
 * environment asked for (secrets absent), kill ends a command.  One session
 * used from several threads at once, a close while a thread waits, and the
 * misuse the type system lets through (double close, use after close).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "win.h"
#include "wtap.h"

static char self[MAX_PATH];

/* Child modes: the test re-runs itself. */
static int child(int argc, char **argv)
{
	if (!strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	if (!strcmp(argv[1], "sleep")) {
		Sleep(60000);
		return 0;
	}
	if (!strcmp(argv[1], "env")) { /* 0 when NAME is absent, 1 when present */
		return getenv(argv[2]) ? 1 : 0;
	}
	if (!strcmp(argv[1], "args")) /* argv survives quoting */
		return argc == 5 && !strcmp(argv[2], "a b") && !strcmp(argv[3], "q\"x") &&
			       !strcmp(argv[4], "tr\\ail\\") ? 42 : 1;
	if (!strcmp(argv[1], "tree")) { /* starts a grandchild, writes its pid, sleeps */
		STARTUPINFOA si;
		memset(&si, 0, sizeof(si));
		si.cb = sizeof(si);
		PROCESS_INFORMATION pi;
		char line[MAX_PATH + 16];
		snprintf(line, sizeof(line), "\"%s\" sleep", argv[0]);
		if (!CreateProcessA(NULL, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
			return 2;
		FILE *f = fopen(argv[2], "w");
		fprintf(f, "%lu %lu\n", GetCurrentProcessId(), pi.dwProcessId);
		fclose(f);
		Sleep(60000);
		return 0;
	}
	return 99;
}

static bool dead(DWORD pid)
{
	HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, pid);
	if (!h)
		return true;
	bool gone = WaitForSingleObject(h, 5000) == WAIT_OBJECT_0;
	CloseHandle(h);
	return gone;
}

static ows_session *open_direct(ows_error *e)
{
	ows_policy *p = NULL;
	ows_session *s = NULL;
	ows_policy_new(&p, e);
	ows_policy_set_provider(p, "direct", e);
	ows_session_open(p, NULL, NULL, &s, e);
	ows_policy_free(p);
	return s;
}

static int run(ows_session *s, const char *const *argv, const char *const *env)
{
	ows_spawn_options o;
	ows_spawn_options_init(&o);
	o.env = env;
	o.stdio[0] = o.stdio[1] = o.stdio[2] = OWS_STDIO_NULL;
	ows_proc *p = NULL;
	int code = -1;
	if (ows_session_spawn(s, argv, &o, &p, NULL) == 0)
		ows_proc_wait(p, 20000, &code, NULL);
	ows_proc_free(p);
	return code;
}

struct worker {
	ows_session *s;
	int index;
	int bad;
};

/* Each command exits with its own code, so that a wait told another's exit shows. */
static DWORD WINAPI spawn_and_wait(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < 5; i++) {
		char want[8];
		snprintf(want, sizeof(want), "%d", w->index * 10 + i);
		const char *argv[] = {self, "exit", want, NULL};
		if (run(w->s, argv, NULL) != atoi(want))
			w->bad++;
	}
	return 0;
}

struct waiter {
	ows_proc *p;
	int rc, code;
};

static DWORD WINAPI wait_for_ever(void *arg)
{
	struct waiter *w = arg;
	w->rc = ows_proc_wait(w->p, -1, &w->code, NULL);
	return 0;
}

static void threads_and_misuse(void)
{
	ows_error e = {0};
	ows_session *s = open_direct(&e);
	ok(s != NULL, "a second direct session opens (%s)", e.what);
	if (!s)
		return;
	struct worker w[4];
	HANDLE t[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.s = s, .index = i};
		t[i] = CreateThread(NULL, 0, spawn_and_wait, &w[i], 0, NULL);
	}
	DWORD r = WaitForMultipleObjects(4, t, TRUE, 120000);
	int bad = 0;
	for (int i = 0; i < 4; i++) {
		bad += w[i].bad;
		CloseHandle(t[i]);
	}
	ok(r != WAIT_TIMEOUT && bad == 0, "4 threads spawn and wait in one session, each told its own exit code");

	const char *sleeper[] = {self, "sleep", NULL};
	ows_spawn_options o;
	ows_spawn_options_init(&o);
	o.stdio[0] = o.stdio[1] = o.stdio[2] = OWS_STDIO_NULL;
	struct waiter wt = {0};
	ows_session_spawn(s, sleeper, &o, &wt.p, NULL);
	ok(wt.p && ows_proc_fd(wt.p) == -1, "ows_proc_fd is -1 on Windows: no descriptor to give");
	HANDLE th = CreateThread(NULL, 0, wait_for_ever, &wt, 0, NULL);
	ok(ows_session_close(s, &e) == 0, "the session closes while a thread waits (%s)", e.what);
	r = WaitForSingleObject(th, 60000);
	CloseHandle(th);
	ok(r == WAIT_OBJECT_0 && ((wt.rc == 1 && wt.code == 137) || wt.rc == OWS_ESTATE),
	   "the wait returns: killed (137) or OWS_ESTATE (rc %d, code %d)", wt.rc, wt.code);
	int code = -1;
	ok(ows_proc_wait(wt.p, 0, &code, NULL) == 1 && code == 137,
	   "a wait after close tells the command was killed (%d)", code);
	ows_proc_free(wt.p);

	/* `s` names freed memory now: the registry answers without reading it. */
	ok(ows_session_close(s, NULL) == OWS_ESTATE, "a second close: OWS_ESTATE");
	ows_proc *p = NULL;
	ok(ows_session_spawn(s, sleeper, &o, &p, NULL) == OWS_ESTATE && !p, "spawn after close: OWS_ESTATE");
	ok(ows_session_spawn(NULL, sleeper, &o, &p, NULL) == OWS_EINVAL, "spawn in NULL: OWS_EINVAL");
	ok(ows_proc_wait(NULL, 0, &code, NULL) == OWS_EINVAL, "wait on NULL: OWS_EINVAL");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return child(argc, argv);
	wtap_init();
	GetModuleFileNameA(NULL, self, sizeof(self));
	ows_error e = {0};

	/* The job object itself: kill on close, no breakaway. */
	HANDLE job = NULL;
	ok(ows__job_create(NULL, &job, &e) == 0, "a job is created (%s)", e.what);
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
	memset(&li, 0, sizeof(li));
	QueryInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof(li), NULL);
	DWORD f = li.BasicLimitInformation.LimitFlags;
	if (f == 0 && is_wine()) {
		/* Wine keeps the flags (the tree test below proves kill on close) but reports 0. */
		skip("the job reports kill-on-close", "Wine's QueryInformationJobObject returns no limit flags");
		skip("the job reports no breakaway", "Wine's QueryInformationJobObject returns no limit flags");
	} else {
		ok(f & JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, "the job kills its processes when closed");
		ok(!(f & (JOB_OBJECT_LIMIT_BREAKAWAY_OK | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK)),
		   "the job refuses breakaway");
	}
	CloseHandle(job);

	ows_session *s = open_direct(&e);
	ok(s != NULL, "a direct session opens (%s)", e.what);
	if (!s)
		return wtap_done();
	ok(!strcmp(ows_session_enforcement(s), "none"), "direct says its enforcement is none");

	const char *a1[] = {self, "exit", "7", NULL};
	ok(run(s, a1, NULL) == 7, "spawn runs a command and returns its exit code");
	const char *a2[] = {self, "args", "a b", "q\"x", "tr\\ail\\", NULL};
	ok(run(s, a2, NULL) == 42, "arguments with spaces, quotes and backslashes arrive intact");
	_putenv("OWS_TEST_API_TOKEN=leak");
	const char *a3[] = {self, "env", "OWS_TEST_API_TOKEN", NULL};
	ok(run(s, a3, NULL) == 0, "a secret in the host's environment is absent inside");
	const char *extra[] = {"OWS_VISIBLE=1", "GITHUB_TOKEN=x", NULL};
	const char *a4[] = {self, "env", "OWS_VISIBLE", NULL};
	ok(run(s, a4, extra) == 1, "an extra variable is passed");
	const char *a5[] = {self, "env", "GITHUB_TOKEN", NULL};
	ok(run(s, a5, extra) == 0, "an extra variable with a secret name is dropped");

	/* kill */
	const char *a6[] = {self, "sleep", NULL};
	ows_spawn_options o;
	ows_spawn_options_init(&o);
	o.stdio[0] = o.stdio[1] = o.stdio[2] = OWS_STDIO_NULL;
	ows_proc *p = NULL;
	int code = -1;
	ows_session_spawn(s, a6, &o, &p, NULL);
	ok(p && ows_proc_wait(p, 100, &code, NULL) == 0, "a sleeping command is still running");
	ok(p && ows_proc_kill(p, 9, NULL) == 0 && ows_proc_wait(p, 5000, &code, NULL) == 1 &&
		   code == 137, "kill ends it with 128+9 (%d)", code);
	ows_proc_free(p);

	/* The run call is not built for Windows yet: it says so, and the JSON form too. */
	ows_run_result *rr = NULL;
	ows_error re = {0};
	int rrc = ows_session_run(s, a1, NULL, &rr, &re);
	ok(rrc == OWS_ENOSYS && rr == NULL && strstr(re.what, "Windows"),
	   "ows_session_run is OWS_ENOSYS here, with why (%s)", re.what);
	char *resp = NULL;
	rrc = ows_session_run_json(s, "{\"argv\": [\"cmd\"]}", &resp, NULL);
	ok(rrc == OWS_ENOSYS && resp && strstr(resp, "\"OWS_ENOSYS\""),
	   "ows_session_run_json too, as an error object (%s)", resp ? resp : "NULL");
	ows_free(resp);

	/* A process tree dies with the session. */
	char pidfile[MAX_PATH];
	snprintf(pidfile, sizeof(pidfile), "%s\\tree.pids", ows_session_private_dir(s));
	const char *a7[] = {self, "tree", pidfile, NULL};
	ows_session_spawn(s, a7, &o, &p, NULL);
	unsigned long c1 = 0, c2 = 0;
	for (int i = 0; i < 100 && !c2; i++) {
		Sleep(100);
		FILE *pf = fopen(pidfile, "r");
		if (pf) {
			if (fscanf(pf, "%lu %lu", &c1, &c2) != 2)
				c2 = 0;
			fclose(pf);
		}
	}
	ok(c1 && c2, "a child started a grandchild (%lu, %lu)", c1, c2);
	ok(c2 && !dead((DWORD)c2), "the grandchild runs while the session is open");
	char priv[MAX_PATH];
	snprintf(priv, sizeof(priv), "%s", ows_session_private_dir(s));
	ows_proc_free(p);
	ok(ows_session_close(s, &e) == 0, "the session closes (%s)", e.what);
	ok(dead((DWORD)c1), "the child died with the session");
	ok(dead((DWORD)c2), "the grandchild died with the session");
	ok(GetFileAttributesA(priv) == INVALID_FILE_ATTRIBUTES, "the private folder is gone");
	threads_and_misuse();
	return wtap_done();
}
