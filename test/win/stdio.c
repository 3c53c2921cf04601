/*
 * Standard streams across the runner (cli/win/runner.c), under Wine: the
 * host duplicates the command's three streams into the suspended runner and
 * names them in the request (ows__win_runner_request, what the windows
 * provider does after CreateProcessWithLogonW); the command the runner starts
 * reads stdin and writes stdout and stderr through them.  Wine's logon runs
 * nothing, so here the runner is started as the same user: what crosses the
 * logon is the handles' values, and that part is the same.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "win.h"
#include "wtap.h"

static char self[MAX_PATH];
static wchar_t runner[MAX_PATH + 32];

static int child(int argc, char **argv)
{
	if (!strcmp(argv[1], "cat")) { /* stdin to stdout, and a word on stderr */
		char buf[256];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
			fwrite(buf, 1, n, stdout);
		fputs("to stderr", stderr);
		return 0;
	}
	if (!strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	return 99;
}

static void read_all(HANDLE h, char *buf, size_t len)
{
	size_t n = 0;
	DWORD got;
	while (n < len - 1 && ReadFile(h, buf + n, (DWORD)(len - 1 - n), &got, NULL) && got > 0)
		n += got;
	buf[n] = '\0';
}

typedef struct run {
	DWORD code;
	char out[1024], err[1024];
	bool request_gone;
} run;

/*
 * The runner with a request for `line`: streams handed over (a stdin pipe fed
 * `input`, stdout and stderr pipes), or `streams` as the first field verbatim
 * when not NULL (a broken one).
 */
static bool run_runner(const wchar_t *line, const char *input, const wchar_t *streams, run *r)
{
	memset(r, 0, sizeof(*r));
	r->code = 0xffffffff;
	wchar_t dir[MAX_PATH], req[MAX_PATH];
	GetTempPathW(MAX_PATH, dir);
	swprintf(req, MAX_PATH, L"%lsowstest-req-%lu.bin", dir, GetCurrentProcessId());
	DeleteFileW(req);
	wchar_t cmd[2 * MAX_PATH + 8];
	swprintf(cmd, sizeof(cmd) / sizeof(cmd[0]), L"\"%ls\" \"%ls\"", runner, req);
	STARTUPINFOW si = {.cb = sizeof(si)};
	PROCESS_INFORMATION pi;
	if (!CreateProcessW(runner, cmd, NULL, NULL, FALSE, CREATE_SUSPENDED | CREATE_NO_WINDOW,
			    NULL, NULL, &si, &pi))
		return false;
	HANDLE in_r, in_w, out_r, out_w, err_r, err_w;
	CreatePipe(&in_r, &in_w, NULL, 0);
	CreatePipe(&out_r, &out_w, NULL, 0);
	CreatePipe(&err_r, &err_w, NULL, 0);
	HANDLE std[3] = {in_r, out_w, err_w};
	wchar_t sysroot[MAX_PATH], env[MAX_PATH + 16];
	GetEnvironmentVariableW(L"SystemRoot", sysroot, MAX_PATH);
	size_t n = (size_t)swprintf(env, MAX_PATH, L"SystemRoot=%ls", sysroot);
	env[n + 1] = L'\0';
	wchar_t cwd[MAX_PATH];
	GetCurrentDirectoryW(MAX_PATH, cwd);
	int rc;
	if (streams) { /* the request written by hand, with this streams field */
		HANDLE f = CreateFileW(req, GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL);
		DWORD w;
		WriteFile(f, streams, (DWORD)(wcslen(streams) + 1) * 2, &w, NULL);
		WriteFile(f, cwd, (DWORD)(wcslen(cwd) + 1) * 2, &w, NULL);
		WriteFile(f, line, (DWORD)(wcslen(line) + 1) * 2, &w, NULL);
		WriteFile(f, env, (DWORD)(wcslen(env) + 2) * 2, &w, NULL);
		CloseHandle(f);
		rc = 0;
	} else {
		rc = ows__win_runner_request(pi.hProcess, std, req, cwd, line, env, NULL);
	}
	/* The runner holds its duplicates: the host's ends close, as the provider's do. */
	CloseHandle(in_r);
	CloseHandle(out_w);
	CloseHandle(err_w);
	if (rc < 0) {
		TerminateProcess(pi.hProcess, 1);
	} else {
		ResumeThread(pi.hThread);
		DWORD w;
		if (input)
			WriteFile(in_w, input, (DWORD)strlen(input), &w, NULL);
	}
	CloseHandle(in_w);
	read_all(out_r, r->out, sizeof(r->out));
	read_all(err_r, r->err, sizeof(r->err));
	WaitForSingleObject(pi.hProcess, 30000);
	GetExitCodeProcess(pi.hProcess, &r->code);
	r->request_gone = GetFileAttributesW(req) == INVALID_FILE_ATTRIBUTES;
	DeleteFileW(req);
	CloseHandle(out_r);
	CloseHandle(err_r);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return rc == 0;
}

int main(int argc, char **argv)
{
	GetModuleFileNameA(NULL, self, sizeof(self));
	if (argc > 1)
		return child(argc, argv);
	wtap_init();
	GetModuleFileNameW(NULL, runner, MAX_PATH);
	wchar_t *slash = wcsrchr(runner, L'\\');
	if (slash)
		wcscpy(slash + 1, L"..\\owsbx-runner.exe");
	wchar_t line[MAX_PATH + 16];
	swprintf(line, MAX_PATH + 16, L"\"%hs\" cat", self);
	run r;
	ok(run_runner(line, "across the runner", NULL, &r), "the request is written, the streams "
	   "duplicated into the suspended runner");
	ok(strcmp(r.out, "across the runner") == 0,
	   "stdin reaches the command and its stdout comes back (\"%s\")", r.out);
	ok(strcmp(r.err, "to stderr") == 0, "its stderr comes back apart (\"%s\")", r.err);
	ok(r.code == 0 && r.request_gone, "exit 0 (%lu), the request deleted once read",
	   (unsigned long)r.code);

	swprintf(line, MAX_PATH + 16, L"\"%hs\" exit 7", self);
	run_runner(line, NULL, NULL, &r);
	ok(r.code == 7 && r.out[0] == '\0', "the command's exit code is the runner's (%lu)",
	   (unsigned long)r.code);

	run_runner(L"cmd /c echo hi", NULL, NULL, &r);
	ok(r.code == 0 && strcmp(r.out, "hi\r\n") == 0, "cmd /c echo hi through the runner: \"hi\"");

	/* a streams field that names no handle of the runner: it runs nothing */
	run_runner(L"cmd /c echo hi", NULL, L"7ffffff0 7ffffff4 7ffffff8", &r);
	ok(r.code == 125 && r.out[0] == '\0', "streams that are not the runner's handles: exit 125 "
	   "(%lu), nothing run", (unsigned long)r.code);
	return wtap_done();
}
