/*
 * owsbx-runner.exe: the first process of a command on Windows, started as
 * the sandbox account (CreateProcessWithLogonW), suspended and put in the
 * session's job by the host before it runs a line of code.
 *
 *   owsbx-runner.exe REQUEST_FILE
 *
 * The request is a file in the session's private folder, UTF-16, fields
 * separated by NUL: the standard streams, the working folder, the command
 * line, then the environment entries, then an empty field.  The streams
 * field is three handle values in hex, "IN OUT ERR", that the host
 * duplicated into this process (inheritable) while it was suspended, since
 * handles are not inherited across a logon; empty, the runner's own.  The environment therefore
 * never appears on a command line (CreateProcessWithLogonW's is limited to
 * 1024 characters and visible to every process).  The runner reads it,
 * deletes it, starts the command with exactly that environment (it
 * inherits the account and the job), waits, and exits with its code.
 *
 * A command line of "?prove" runs the proof instead: each entry "+r PATH"
 * must be readable, "+w PATH" writable, "-r PATH" unreadable, "-p PORT"
 * unreachable (the host listens there, outside the proxy's range, on every
 * address of the machine); the exit code is the number of failed checks,
 * and each result is printed.
 */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static bool connects(const struct sockaddr *sa, int len)
{
	SOCKET s = socket(sa->sa_family, SOCK_STREAM, IPPROTO_TCP);
	if (s == INVALID_SOCKET)
		return false;
	bool ok = connect(s, sa, len) == 0;
	closesocket(s);
	return ok;
}

/*
 * Every way the account could reach the host's listener: loopback by name
 * and by address, and each of the machine's own addresses, which Windows
 * also loops back (the firewall rule does not see them; the WFP filters'
 * loopback flag does).
 */
static bool port_unreachable(const wchar_t *port)
{
	WSADATA wd;
	if (WSAStartup(MAKEWORD(2, 2), &wd) != 0)
		return false;
	char name[256] = "localhost", p[16];
	snprintf(p, sizeof(p), "%ls", port);
	const char *hosts[] = {"127.0.0.1", "::1", "localhost", name};
	gethostname(name, sizeof(name));
	bool reached = false;
	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]) && !reached; h++) {
		struct addrinfo hints, *res = NULL;
		memset(&hints, 0, sizeof(hints));
		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(hosts[h], p, &hints, &res) != 0)
			continue;
		for (struct addrinfo *a = res; a && !reached; a = a->ai_next)
			reached = connects(a->ai_addr, (int)a->ai_addrlen);
		freeaddrinfo(res);
	}
	WSACleanup();
	return !reached;
}

static int prove(const wchar_t *const *items, size_t n)
{
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		const wchar_t *e = items[i];
		if (wcslen(e) < 4)
			continue;
		const wchar_t *path = e + 3;
		bool ok;
		if (e[1] == L'p') {
			ok = e[0] == L'-' && port_unreachable(path);
		} else if (e[1] == L'w') {
			wchar_t probe[32768];
			swprintf(probe, 32768, L"%ls\\.owsbx-probe-%lu", path, GetCurrentProcessId());
			HANDLE h = CreateFileW(probe, GENERIC_WRITE, 0, NULL, CREATE_NEW,
					       FILE_FLAG_DELETE_ON_CLOSE, NULL);
			ok = h != INVALID_HANDLE_VALUE;
			if (ok)
				CloseHandle(h);
		} else {
			wchar_t pattern[32768];
			swprintf(pattern, 32768, L"%ls\\*", path);
			WIN32_FIND_DATAW fd;
			HANDLE h = FindFirstFileW(pattern, &fd);
			bool readable = h != INVALID_HANDLE_VALUE;
			if (readable)
				FindClose(h);
			ok = e[0] == L'+' ? readable : !readable;
		}
		wprintf(L"%ls %ls\n", ok ? L"ok" : L"FAILED", e);
		failed += !ok;
	}
	return failed;
}

/* "IN OUT ERR", handle values in hex, each a handle this process holds. */
static bool parse_streams(const wchar_t *field, HANDLE std[3])
{
	const wchar_t *p = field;
	for (int i = 0; i < 3; i++) {
		wchar_t *end;
		unsigned long long v = wcstoull(p, &end, 16);
		DWORD flags;
		if (end == p || v == 0 || !GetHandleInformation((HANDLE)(uintptr_t)v, &flags))
			return false;
		std[i] = (HANDLE)(uintptr_t)v;
		p = end;
	}
	return *p == L'\0';
}

int wmain(int argc, wchar_t **argv);
int wmain(int argc, wchar_t **argv)
{
	if (argc != 2) {
		fwprintf(stderr, L"usage: owsbx-runner.exe REQUEST_FILE\n");
		return 125;
	}
	HANDLE f = CreateFileW(argv[1], GENERIC_READ | DELETE, 0, NULL, OPEN_EXISTING,
			       FILE_FLAG_DELETE_ON_CLOSE, NULL);
	if (f == INVALID_HANDLE_VALUE) {
		fwprintf(stderr, L"owsbx-runner: cannot open the request (%lu)\n", GetLastError());
		return 125;
	}
	LARGE_INTEGER size;
	if (!GetFileSizeEx(f, &size) || size.QuadPart > (1 << 24) || size.QuadPart < 4) {
		CloseHandle(f);
		return 125;
	}
	wchar_t *buf = calloc((size_t)size.QuadPart / 2 + 2, sizeof(wchar_t));
	DWORD got = 0;
	BOOL rd = buf && ReadFile(f, buf, (DWORD)size.QuadPart, &got, NULL);
	CloseHandle(f); /* deleted now: the request lived only as long as needed */
	if (!rd || got != (DWORD)size.QuadPart)
		return 125;
	size_t nw = got / 2;
	const wchar_t *fields[4096];
	size_t nf = 0;
	for (size_t i = 0; i < nw && nf < 4096;) {
		fields[nf++] = buf + i;
		i += wcslen(buf + i) + 1;
		if (buf[i - 1] == L'\0' && i < nw && buf[i] == L'\0')
			break;
	}
	if (nf < 3)
		return 125;
	HANDLE std[3];
	bool handed = *fields[0] != L'\0';
	if (handed && !parse_streams(fields[0], std))
		return 125;
	const wchar_t *cwd = fields[1];
	if (wcscmp(fields[2], L"?prove") == 0)
		return prove(fields + 3, nf - 3);
	/* The environment block: the entries as they are, ending in an empty one. */
	const wchar_t *env = nf > 3 ? fields[3] : L"\0";
	wchar_t *line = _wcsdup(fields[2]);
	STARTUPINFOW si;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = handed ? std[0] : GetStdHandle(STD_INPUT_HANDLE);
	si.hStdOutput = handed ? std[1] : GetStdHandle(STD_OUTPUT_HANDLE);
	si.hStdError = handed ? std[2] : GetStdHandle(STD_ERROR_HANDLE);
	PROCESS_INFORMATION pi;
	if (!line || !CreateProcessW(NULL, line, NULL, NULL, TRUE, CREATE_UNICODE_ENVIRONMENT,
				     (void *)env, *cwd ? cwd : NULL, &si, &pi)) {
		fwprintf(stderr, L"owsbx-runner: cannot start the command (%lu)\n", GetLastError());
		return 127;
	}
	CloseHandle(pi.hThread);
	/* The command holds the streams now: its end of a pipe closes when it exits. */
	for (int i = 0; handed && i < 3; i++)
		CloseHandle(std[i]);
	WaitForSingleObject(pi.hProcess, INFINITE);
	DWORD code = 1;
	GetExitCodeProcess(pi.hProcess, &code);
	return (int)code;
}
