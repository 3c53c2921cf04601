/*
 * Processes on Windows: the session's job object, command lines, the
 * environment block, and a start that is suspended until the process is
 * in the job, so that no process of the session ever runs outside it.
 */
#include <errno.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "win.h"

int ows__job_create(const ows_policy *policy, HANDLE *out, ows_error *err)
{
	*out = NULL;
	HANDLE job = CreateJobObjectW(NULL, NULL);
	if (!job)
		return ows__fail_win(err, 0, GetLastError(), "CreateJobObjectW", NULL,
				     "cannot create the session's job");
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
	memset(&li, 0, sizeof(li));
	/* No JOB_OBJECT_LIMIT_BREAKAWAY_OK nor _SILENT_BREAKAWAY_OK: nothing leaves. */
	li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
					      JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
	if (policy && policy->has_limit[OWS_LIMIT_MEMORY_BYTES]) {
		li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
		li.JobMemoryLimit = (SIZE_T)policy->limit[OWS_LIMIT_MEMORY_BYTES];
	}
	if (policy && policy->has_limit[OWS_LIMIT_PROCESSES]) {
		li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
		li.BasicLimitInformation.ActiveProcessLimit =
			(DWORD)policy->limit[OWS_LIMIT_PROCESSES];
	}
	if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof(li))) {
		DWORD e = GetLastError();
		CloseHandle(job);
		return ows__fail_win(err, 0, e, "SetInformationJobObject", NULL,
				     "cannot set the job's limits");
	}
	if (policy && policy->has_limit[OWS_LIMIT_CPU_PERCENT]) {
		JOBOBJECT_CPU_RATE_CONTROL_INFORMATION cpu;
		memset(&cpu, 0, sizeof(cpu));
		SYSTEM_INFO si;
		GetSystemInfo(&si);
		/* Percent of one core, as a share of the whole machine in 1/100 %. */
		uint64_t rate = policy->limit[OWS_LIMIT_CPU_PERCENT] * 100 /
				(si.dwNumberOfProcessors ? si.dwNumberOfProcessors : 1);
		cpu.ControlFlags = JOB_OBJECT_CPU_RATE_CONTROL_ENABLE |
				   JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP;
		cpu.CpuRate = (DWORD)(rate < 1 ? 1 : rate > 10000 ? 10000 : rate);
		/* Best effort: Wine and some editions refuse it; memory and processes are the wall. */
		SetInformationJobObject(job, JobObjectCpuRateControlInformation, &cpu, sizeof(cpu));
	}
	*out = job;
	return 0;
}

/* Appends one argument quoted as CommandLineToArgvW reads it back. */
static size_t quote_arg(const wchar_t *a, wchar_t *out)
{
	size_t n = 0;
	bool plain = *a && !wcspbrk(a, L" \t\n\v\"");
	if (plain) {
		size_t len = wcslen(a);
		if (out)
			memcpy(out, a, len * sizeof(wchar_t));
		return len;
	}
	if (out)
		out[n] = L'"';
	n++;
	for (const wchar_t *p = a;; p++) {
		size_t bs = 0;
		while (*p == L'\\') {
			p++;
			bs++;
		}
		size_t times = *p == L'\0' ? bs * 2 : *p == L'"' ? bs * 2 + 1 : bs;
		for (size_t i = 0; i < times; i++) {
			if (out)
				out[n] = L'\\';
			n++;
		}
		if (*p == L'\0')
			break;
		if (out)
			out[n] = *p;
		n++;
	}
	if (out)
		out[n] = L'"';
	return n + 1;
}

wchar_t *ows__win_cmdline(const char *const argv[], ows_error *err)
{
	size_t total = 1, argc = 0;
	for (; argv[argc]; argc++)
		;
	wchar_t **w = ows__calloc(argc + 1, sizeof(*w), err);
	if (!w)
		return NULL;
	wchar_t *line = NULL;
	for (size_t i = 0; i < argc; i++) {
		if (!(w[i] = ows__wide(argv[i]))) {
			ows__fail(err, OWS_EINVAL, EILSEQ, argv[i], "pass arguments as UTF-8",
				  "an argument is not valid UTF-8");
			goto out;
		}
		total += quote_arg(w[i], NULL) + 1;
	}
	if (total > 32767) {
		ows__fail(err, OWS_EINVAL, 0, argv[0], "pass long input through a file",
			  "the command line is longer than Windows allows (32767)");
		goto out;
	}
	if (!(line = ows__calloc(total, sizeof(wchar_t), err)))
		goto out;
	size_t n = 0;
	for (size_t i = 0; i < argc; i++) {
		if (i)
			line[n++] = L' ';
		n += quote_arg(w[i], line + n);
	}
	line[n] = L'\0';
out:
	for (size_t i = 0; i < argc; i++)
		free(w[i]);
	free(w);
	return line;
}

static int cmp_env(const void *a, const void *b)
{
	const wchar_t *x = *(wchar_t *const *)a, *y = *(wchar_t *const *)b;
	/* Sorted by name, case-insensitively, as the environment block must be. */
	for (;; x++, y++) {
		wchar_t cx = *x == L'=' ? 0 : towupper(*x), cy = *y == L'=' ? 0 : towupper(*y);
		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!cx)
			return 0;
	}
}

wchar_t *ows__win_envblock(char *const envp[], ows_error *err)
{
	size_t n = 0, total = 1;
	while (envp && envp[n])
		n++;
	wchar_t **w = ows__calloc(n + 1, sizeof(*w), err);
	if (!w)
		return NULL;
	wchar_t *block = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!(w[i] = ows__wide(envp[i]))) {
			ows__fail(err, OWS_EINVAL, EILSEQ, envp[i], NULL,
				  "an environment entry is not valid UTF-8");
			goto out;
		}
		total += wcslen(w[i]) + 1;
	}
	qsort(w, n, sizeof(*w), cmp_env);
	if (!(block = ows__calloc(total + 1, sizeof(wchar_t), err)))
		goto out;
	wchar_t *p = block;
	for (size_t i = 0; i < n; i++) {
		size_t len = wcslen(w[i]);
		memcpy(p, w[i], (len + 1) * sizeof(wchar_t));
		p += len + 1;
	}
	*p = L'\0';
out:
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
	return block;
}

HANDLE ows__win_std_handle(int fd, DWORD which)
{
	HANDLE src, dup = NULL;
	if (fd == OWS_STDIO_NULL) {
		SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
		return CreateFileW(L"NUL", which == 0 ? GENERIC_READ : GENERIC_WRITE,
				   FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
	}
	src = (HANDLE)_get_osfhandle(fd);
	if (src == INVALID_HANDLE_VALUE || src == NULL)
		return INVALID_HANDLE_VALUE;
	if (!DuplicateHandle(GetCurrentProcess(), src, GetCurrentProcess(), &dup, 0, TRUE,
			     DUPLICATE_SAME_ACCESS))
		return INVALID_HANDLE_VALUE;
	return dup;
}

/* A process asked for in an AppContainer is resumed only once its token says it is in one. */
static int check_contained(HANDLE process, ows_error *err)
{
	HANDLE tok = NULL;
	DWORD is_ac = 0, len = 0;
	if (!OpenProcessToken(process, TOKEN_QUERY, &tok))
		return ows__fail_win(err, OWS_EVERIFY, GetLastError(), "OpenProcessToken", NULL,
				     "cannot read the command's token");
	BOOL ok = GetTokenInformation(tok, TokenIsAppContainer, &is_ac, sizeof(is_ac), &len);
	DWORD e = GetLastError();
	CloseHandle(tok);
	if (!ok)
		return ows__fail_win(err, OWS_EVERIFY, e, "GetTokenInformation(TokenIsAppContainer)",
				     NULL, "cannot tell whether the command runs in the AppContainer");
	if (!is_ac)
		return ows__fail(err, OWS_EVERIFY, 0, "TokenIsAppContainer", NULL,
				 "the command started outside the AppContainer");
	return 0;
}

int ows__win_spawn_in_job(HANDLE job, const char *const argv[], char *const envp[],
			  const char *cwd, const int stdio[3], HANDLE *process, DWORD *pid,
			  ows_error *err)
{
	return ows__win_spawn_contained(job, NULL, argv, envp, cwd, stdio, process, pid, err);
}

int ows__win_spawn_contained(HANDLE job, SECURITY_CAPABILITIES *caps, const char *const argv[],
			     char *const envp[], const char *cwd, const int stdio[3],
			     HANDLE *process, DWORD *pid, ows_error *err)
{
	int rc = 0;
	HANDLE std[3] = {INVALID_HANDLE_VALUE, INVALID_HANDLE_VALUE, INVALID_HANDLE_VALUE};
	wchar_t *line = ows__win_cmdline(argv, err);
	wchar_t *env = line ? ows__win_envblock(envp, err) : NULL;
	wchar_t *wcwd = cwd ? ows__wide(cwd) : NULL;
	if (!line || !env || (cwd && !wcwd)) {
		rc = err && err->code ? err->code : OWS_ENOMEM;
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		std[i] = ows__win_std_handle(stdio ? stdio[i] : OWS_STDIO_NULL, (DWORD)i);
		if (std[i] == INVALID_HANDLE_VALUE) {
			rc = ows__fail_win(err, OWS_ESPAWN, GetLastError(), "stdio", NULL,
					   "cannot pass a standard stream to the command");
			goto out;
		}
	}
	/* Only the three streams are inherited, nothing else the host holds. */
	SIZE_T size = 0;
	DWORD nattrs = caps ? 2 : 1;
	InitializeProcThreadAttributeList(NULL, nattrs, 0, &size);
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = malloc(size);
	if (!attrs || !InitializeProcThreadAttributeList(attrs, nattrs, 0, &size)) {
		free(attrs);
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	HANDLE list[3] = {std[0], std[1], std[2]};
	int nlist = 3;
	if (std[2] == std[1])
		nlist = 2;
	UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, list,
				  (SIZE_T)nlist * sizeof(HANDLE), NULL, NULL);
	if (caps && !UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES,
					       caps, sizeof(*caps), NULL, NULL)) {
		rc = ows__fail_win(err, OWS_ESETUP, GetLastError(), "UpdateProcThreadAttribute",
				   NULL, "cannot ask for the AppContainer");
		DeleteProcThreadAttributeList(attrs);
		free(attrs);
		goto out;
	}
	STARTUPINFOEXW si;
	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = std[0];
	si.StartupInfo.hStdOutput = std[1];
	si.StartupInfo.hStdError = std[2];
	si.lpAttributeList = attrs;
	PROCESS_INFORMATION pi;
	BOOL ok = CreateProcessW(NULL, line, NULL, NULL, TRUE,
				 CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
					 EXTENDED_STARTUPINFO_PRESENT | CREATE_NO_WINDOW,
				 env, wcwd, &si.StartupInfo, &pi);
	DWORD e = GetLastError();
	DeleteProcThreadAttributeList(attrs);
	free(attrs);
	if (!ok) {
		rc = ows__fail_win(err, OWS_ESPAWN, e, argv[0],
				   "check the command's name and that it is a program",
				   "cannot start the command");
		goto out;
	}
	if (!AssignProcessToJobObject(job, pi.hProcess)) {
		e = GetLastError();
		TerminateProcess(pi.hProcess, 1);
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
		rc = ows__fail_win(err, OWS_ESPAWN, e, "AssignProcessToJobObject", NULL,
				   "cannot put the command in the session's job");
		goto out;
	}
	if (caps && (rc = check_contained(pi.hProcess, err)) < 0) {
		TerminateProcess(pi.hProcess, 1);
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
		goto out;
	}
	ResumeThread(pi.hThread);
	CloseHandle(pi.hThread);
	*process = pi.hProcess;
	if (pid)
		*pid = pi.dwProcessId;
out:
	for (int i = 0; i < 3; i++)
		if (std[i] != INVALID_HANDLE_VALUE && (i < 2 || std[i] != std[1]))
			CloseHandle(std[i]);
	free(line);
	free(env);
	free(wcwd);
	return rc;
}
