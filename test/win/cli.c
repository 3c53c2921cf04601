/*
 * owsbx.exe under Wine, as a person or an agent server runs it: version,
 * report --json (valid JSON with the capabilities), run through the direct
 * provider (its output, its exit code, 71 for a command that cannot start,
 * 2 for bad usage, 70 when the windows provider is not set up), the job
 * (a process the command leaves behind ends with the session), and the
 * commands that cannot work on Windows yet: each a clear error, no crash.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wtap.h"

static char self[MAX_PATH];
static char owsbx[MAX_PATH + 32];

typedef struct result {
	DWORD code;   /* the exit code; 0xffffffff when it did not start */
	char out[65536]; /* stdout, "\r" removed */
	char err[8192];  /* stderr, "\r" removed */
} result;

/* For "%.*s": the first line of s, so that a TAP line stays one line. */
#define LINE1(s) (int)strcspn((s), "\n"), (s)

static void drop_cr(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++)
		if (*r != '\r')
			*w++ = *r;
	*w = '\0';
}

/* Everything from h to EOF into buf (NUL-terminated, cut at len - 1). */
static void read_all(HANDLE h, char *buf, size_t len)
{
	size_t n = 0;
	DWORD got;
	char scratch[4096];
	while (ReadFile(h, scratch, sizeof(scratch), &got, NULL) && got > 0) {
		size_t take = got < len - 1 - n ? got : len - 1 - n;
		memcpy(buf + n, scratch, take);
		n += take;
	}
	buf[n] = '\0';
	drop_cr(buf);
}

/* The first line from h (the pid a child prints), without waiting for EOF: a
 * grandchild may hold the pipe's other end as long as it lives. */
static void read_line(HANDLE h, char *buf, size_t len)
{
	size_t n = 0;
	DWORD got;
	while (n < len - 1 && ReadFile(h, buf + n, 1, &got, NULL) && got == 1 && buf[n] != '\n')
		n++;
	buf[n] = '\0';
}

/* Runs `"owsbx.exe" args` (args already quoted) with stdout in a pipe and stderr in a file. */
static void owsbx_run(const char *args, result *r)
{
	memset(r, 0, sizeof(*r));
	r->code = 0xffffffff;
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	HANDLE rd, wr;
	if (!CreatePipe(&rd, &wr, &sa, 0))
		return;
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
	char errpath[MAX_PATH], dir[MAX_PATH];
	GetTempPathA(sizeof(dir), dir);
	GetTempFileNameA(dir, "owt", 0, errpath);
	HANDLE ef = CreateFileA(errpath, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ |
				FILE_SHARE_WRITE, &sa, CREATE_ALWAYS, FILE_FLAG_DELETE_ON_CLOSE, NULL);
	HANDLE nul = CreateFileA("NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
				 OPEN_EXISTING, 0, NULL);
	STARTUPINFOA si = {.cb = sizeof(si), .dwFlags = STARTF_USESTDHANDLES,
			   .hStdInput = nul, .hStdOutput = wr, .hStdError = ef};
	PROCESS_INFORMATION pi;
	char line[4096];
	snprintf(line, sizeof(line), "\"%s\" %s", owsbx, args);
	bool started = CreateProcessA(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi);
	CloseHandle(wr);
	CloseHandle(nul);
	if (started) {
		read_all(rd, r->out, sizeof(r->out));
		WaitForSingleObject(pi.hProcess, INFINITE);
		GetExitCodeProcess(pi.hProcess, &r->code);
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
		SetFilePointer(ef, 0, NULL, FILE_BEGIN);
		read_all(ef, r->err, sizeof(r->err));
	}
	CloseHandle(rd);
	CloseHandle(ef);
}

/* Child modes: the test re-runs itself as the sandboxed command. */
static int child(int argc, char **argv)
{
	if (!strcmp(argv[1], "sleep")) {
		Sleep(60000);
		return 0;
	}
	if (!strcmp(argv[1], "leave")) { /* starts a grandchild, prints its pid, exits */
		STARTUPINFOA si = {.cb = sizeof(si)};
		PROCESS_INFORMATION pi;
		char line[MAX_PATH + 16];
		snprintf(line, sizeof(line), "\"%s\" sleep", self);
		if (!CreateProcessA(NULL, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
			return 2;
		printf("%lu\n", pi.dwProcessId);
		fflush(stdout);
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
		return 0;
	}
	return 99;
}

/* True when pid has ended (or is gone), waiting for it up to a bound. */
static bool ended(DWORD pid)
{
	HANDLE h = OpenProcess(SYNCHRONIZE | PROCESS_TERMINATE, FALSE, pid);
	if (!h)
		return true;
	bool gone = WaitForSingleObject(h, 5000) == WAIT_OBJECT_0;
	if (!gone)
		TerminateProcess(h, 9); /* leave nothing behind */
	CloseHandle(h);
	return gone;
}

/* A crashed process ends with an NTSTATUS (0xC0000005 and so on), never a small code. */
static bool no_crash(const result *r)
{
	return r->code < 256;
}

static void test_version(void)
{
	result r;
	owsbx_run("version", &r);
	ok(r.code == 0 && strcmp(r.out, "owsbx " OWSTEST_VERSION "\n") == 0,
	   "owsbx.exe version prints \"owsbx " OWSTEST_VERSION "\" (exit %lu: %.*s)",
	   (unsigned long)r.code, LINE1(r.out));
}

static void test_report(void)
{
	result r;
	owsbx_run("report --json", &r);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	json_t *caps = json_object_get(j, "capabilities");
	ok(r.code == 0 && j && json_is_array(caps) && json_array_size(caps) > 0,
	   "owsbx.exe report --json: valid JSON with capabilities (exit %lu, %zu capabilities%s%s)",
	   (unsigned long)r.code, json_array_size(caps), j ? "" : ", not JSON: ", j ? "" : je.text);
	size_t i, named = 0;
	json_t *c;
	bool direct = false, job = false;
	json_array_foreach(caps, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		if (name && json_string_value(json_object_get(c, "status")))
			named++;
		direct |= name && !strcmp(name, "provider.direct");
		job |= name && !strcmp(name, "processes.end_with_session");
	}
	ok(named == json_array_size(caps) && direct && job,
	   "each capability has a name and a status; provider.direct and "
	   "processes.end_with_session are among them");
	json_decref(j);
}

static void test_run_direct(void)
{
	result r;
	owsbx_run("run --provider direct -- cmd /c echo hi", &r);
	ok(r.code == 0 && strcmp(r.out, "hi\n") == 0,
	   "run --provider direct -- cmd /c echo hi: prints hi, exit 0 (exit %lu, out \"%.*s\")",
	   (unsigned long)r.code, LINE1(r.out));
	owsbx_run("run --provider direct -- cmd /c exit 7", &r);
	ok(r.code == 7, "the command's exit code is owsbx's (7: %lu)", (unsigned long)r.code);
	owsbx_run("run --provider direct -- owstest-no-such-program.exe", &r);
	ok(r.code == 71 && strstr(r.err, "owstest-no-such-program.exe"),
	   "a command that cannot start: exit 71, naming it (exit %lu: %.*s)", (unsigned long)r.code,
	   LINE1(r.err));
	owsbx_run("run --owstest-bogus", &r);
	ok(r.code == 2 && strstr(r.err, "--owstest-bogus"),
	   "bad usage: exit 2, naming the option (exit %lu)", (unsigned long)r.code);
	owsbx_run("run -- cmd /c echo hi", &r);
	ok(r.code == 70 && r.out[0] == '\0',
	   "the windows provider without machine setup: exit 70, nothing run (exit %lu: %.*s)",
	   (unsigned long)r.code, LINE1(r.err));
}

/* The session's job: what the command leaves running ends when owsbx's session closes. */
static void test_job(void)
{
	result r;
	char args[MAX_PATH + 64];
	snprintf(args, sizeof(args), "run --provider direct -- \"%s\" leave", self);
	owsbx_run(args, &r);
	DWORD pid = (DWORD)strtoul(r.out, NULL, 10);
	ok(r.code == 0 && pid != 0, "a command that leaves a process behind (pid %lu)",
	   (unsigned long)pid);
	ok(pid && ended(pid), "that process ended with the session (the job's kill on close)");

	/* control: outside owsbx the same process outlives its parent, and ended() sees it */
	char line[MAX_PATH + 16];
	snprintf(line, sizeof(line), "\"%s\" leave", self);
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	HANDLE rd, wr;
	CreatePipe(&rd, &wr, &sa, 0);
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
	STARTUPINFOA si = {.cb = sizeof(si), .dwFlags = STARTF_USESTDHANDLES,
			   .hStdOutput = wr, .hStdError = wr};
	PROCESS_INFORMATION pi;
	DWORD outside = 0;
	if (CreateProcessA(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
		CloseHandle(wr);
		char buf[64];
		read_line(rd, buf, sizeof(buf));
		WaitForSingleObject(pi.hProcess, INFINITE);
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
		outside = (DWORD)strtoul(buf, NULL, 10);
	} else {
		CloseHandle(wr);
	}
	CloseHandle(rd);
	ok(outside && !ended(outside), "control: without the session's job it survives (pid %lu)",
	   (unsigned long)outside);
}

/* What cannot work on Windows yet says so and exits; nothing crashes.  (machine status
 * exits 1 with its rows on stdout when something is missing.) */
static void test_not_yet(void)
{
	static const char *const cmds[] = {
		"credentials",
		"apparmor",
		"machine sandbox status",
		"connect --proxy 127.0.0.1:1 github.com 22",
		"run --provider landlock -- cmd /c echo hi",
		"verify --provider direct",
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		result r;
		owsbx_run(cmds[i], &r);
		ok(no_crash(&r) && (r.code == 0 || r.err[0] || r.out[0]),
		   "owsbx.exe %s: exit %lu, no crash%s%.*s", cmds[i], (unsigned long)r.code,
		   r.err[0] ? ": " : "", LINE1(r.err));
	}
}

int main(int argc, char **argv)
{
	GetModuleFileNameA(NULL, self, sizeof(self));
	if (argc > 1)
		return child(argc, argv);
	wtap_init();
	snprintf(owsbx, sizeof(owsbx), "%s", self);
	char *slash = strrchr(owsbx, '\\');
	if (slash)
		strcpy(slash + 1, "..\\owsbx.exe");
	if (GetFileAttributesA(owsbx) == INVALID_FILE_ATTRIBUTES) {
		ok(0, "owsbx.exe is built beside the tests (%s)", owsbx);
		return wtap_done();
	}
	test_version();
	test_report();
	test_run_direct();
	test_job();
	test_not_yet();
	return wtap_done();
}
