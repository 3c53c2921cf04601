/*
 * The runner's proof (cli/win/runner.c "?prove"), under Wine: what the windows
 * provider asks of it before a session starts.  Wine cannot start it as the
 * sandbox account, so it runs as the same user, with no wall: each check must
 * FAIL where the thing it checks is reachable, and pass where it is not.  That
 * is what makes the proof able to refuse a session.  The closed modes' check:
 * a port outside the proxy's range that the host listens on, on every address
 * of the machine (loopback and the LAN address alike), must be out of reach.
 */
#include <winsock2.h>
#include <ws2tcpip.h>

#include <stdio.h>
#include <string.h>

#include "win.h"
#include "wtap.h"

static wchar_t runner[MAX_PATH + 32];

/* The runner's exit code for a proof of `entries` (NUL-separated, ending in an empty one). */
static DWORD prove(const wchar_t *entries)
{
	wchar_t dir[MAX_PATH], req[MAX_PATH], cmd[2 * MAX_PATH + 64];
	GetTempPathW(MAX_PATH, dir);
	swprintf(req, MAX_PATH, L"%lsowstest-proof-%lu.bin", dir, GetCurrentProcessId());
	DeleteFileW(req);
	swprintf(cmd, sizeof(cmd) / sizeof(cmd[0]), L"\"%ls\" \"%ls\"", runner, req);
	STARTUPINFOW si;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	PROCESS_INFORMATION pi;
	if (!CreateProcessW(runner, cmd, NULL, NULL, FALSE, CREATE_SUSPENDED | CREATE_NO_WINDOW,
			    NULL, NULL, &si, &pi))
		return 999;
	DWORD code = 998;
	if (ows__win_runner_request(pi.hProcess, NULL, req, dir, L"?prove", entries, NULL) == 0) {
		ResumeThread(pi.hThread);
		WaitForSingleObject(pi.hProcess, 60000);
		GetExitCodeProcess(pi.hProcess, &code);
	} else {
		TerminateProcess(pi.hProcess, 1);
	}
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	DeleteFileW(req);
	return code;
}

/* As the provider listens: one dual-stack socket on every address. */
static SOCKET listen_any(int *port)
{
	SOCKET l = socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP);
	DWORD off = 0;
	setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, (const char *)&off, sizeof(off));
	struct sockaddr_in6 a;
	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_any;
	int len = sizeof(a);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&a, &len)) {
		closesocket(l);
		return INVALID_SOCKET;
	}
	*port = ntohs(a.sin6_port);
	return l;
}

/* Only on IPv4 loopback: reachable by 127.0.0.1, the case the old filters covered. */
static SOCKET listen_v4_loopback(int *port)
{
	SOCKET l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int len = sizeof(a);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&a, &len)) {
		closesocket(l);
		return INVALID_SOCKET;
	}
	*port = ntohs(a.sin_port);
	return l;
}

int main(void)
{
	wtap_init();
	WSADATA wd;
	WSAStartup(MAKEWORD(2, 2), &wd);
	GetModuleFileNameW(NULL, runner, MAX_PATH);
	wchar_t *slash = wcsrchr(runner, L'\\');
	if (slash)
		wcscpy(slash + 1, L"..\\owsbx-runner.exe");

	wchar_t e[512];
	int port = 0;
	SOCKET l = listen_any(&port);
	ok(l != INVALID_SOCKET, "the host listens on every address (port %d)", port);
	swprintf(e, 512, L"-p %d%lc", port, L'\0');
	e[wcslen(e) + 1] = L'\0';
	DWORD code = prove(e);
	ok(code == 1, "a port the host listens on, reachable: the proof fails and would refuse "
		      "the session (exit %lu)", (unsigned long)code);
	closesocket(l);
	code = prove(e);
	ok(code == 0, "the same port with nothing there: the proof passes (exit %lu)",
	   (unsigned long)code);

	SOCKET l4 = listen_v4_loopback(&port);
	swprintf(e, 512, L"-p %d%lc", port, L'\0');
	e[wcslen(e) + 1] = L'\0';
	code = l4 != INVALID_SOCKET ? prove(e) : 997;
	ok(code == 1, "reachable on 127.0.0.1 only: still found (exit %lu)", (unsigned long)code);
	closesocket(l4);

	/* The folder checks beside it: "+w" writes in the folder, "-r" must not list. */
	wchar_t tmp[MAX_PATH];
	GetTempPathW(MAX_PATH, tmp);
	tmp[wcslen(tmp) - 1] = L'\0';
	size_t n = (size_t)swprintf(e, 512, L"+w %ls", tmp) + 1;
	e[n] = L'\0';
	ok(prove(e) == 0, "a writable folder passes +w (a file is written in it)");
	n = (size_t)swprintf(e, 512, L"+w %ls\\owstest-no-such-folder", tmp) + 1;
	e[n] = L'\0';
	ok(prove(e) == 1, "a folder that cannot be written in fails +w");
	n = (size_t)swprintf(e, 512, L"-r %ls", tmp) + 1;
	e[n] = L'\0';
	ok(prove(e) == 1, "a readable folder fails -r");
	WSACleanup();
	return wtap_done();
}
