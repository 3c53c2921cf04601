/*
 * owsbx's per-OS pieces on Windows (cli/os.h).  The arguments arrive in
 * UTF-16 (wmain, -municode) and go on in UTF-8, the library's encoding.
 */
#include <windows.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

static char *utf8_of(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	if (n <= 0)
		return NULL;
	char *s = malloc((size_t)n);
	if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
		free(s);
		return NULL;
	}
	return s;
}

int wmain(int argc, wchar_t **wargv); /* the entry -municode names */
int wmain(int argc, wchar_t **wargv)
{
	char **argv = calloc((size_t)argc + 1, sizeof(*argv));
	for (int i = 0; argv && i < argc; i++) {
		if (!(argv[i] = utf8_of(wargv[i]))) {
			fprintf(stderr, "owsbx: argument %d is not valid UTF-16\n", i);
			return 2;
		}
	}
	if (!argv) {
		fputs("owsbx: out of memory\n", stderr);
		return 2;
	}
	/* What owsbx prints is UTF-8; the console shows it as such. */
	SetConsoleOutputCP(CP_UTF8);
	int rc = owsbx_main(argc, argv);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	return rc;
}

/* The C library's Ctrl-C and Ctrl-Break (a console control handler underneath); no SIGHUP. */
void owsbx_os_catch_signals(void (*handler)(int))
{
	signal(SIGINT, handler);
	signal(SIGTERM, handler);
	signal(SIGBREAK, handler);
}

/* Windows has no SIGPIPE: a write to a closed pipe fails with an error already. */
void owsbx_os_ignore_sigpipe(void)
{
}

bool owsbx_os_stderr_is_tty(void)
{
	DWORD mode;
	return GetConsoleMode(GetStdHandle(STD_ERROR_HANDLE), &mode) != 0;
}

char *owsbx_os_getcwd(void)
{
	DWORD n = GetCurrentDirectoryW(0, NULL);
	if (n == 0)
		return NULL;
	wchar_t *w = malloc(n * sizeof(*w));
	if (!w)
		return NULL;
	char *s = GetCurrentDirectoryW(n, w) > 0 ? utf8_of(w) : NULL;
	free(w);
	return s;
}

/* Elevated: the token's elevation, which an administrator without UAC's prompt has too. */
bool owsbx_os_is_admin(void)
{
	HANDLE tok;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return false;
	TOKEN_ELEVATION e = {0};
	DWORD len = 0;
	bool elevated = GetTokenInformation(tok, TokenElevation, &e, sizeof(e), &len) &&
			e.TokenIsElevated;
	CloseHandle(tok);
	return elevated;
}

/* Sockets are handles, not C library descriptors: there is no limit to raise. */
void owsbx_os_raise_nofile(void)
{
}

/* The Linux launcher has no Windows counterpart: the windows provider needs none. */
char *owsbx_os_beside_self(const char *name)
{
	return NULL;
}

/* The runner lives in a Linux container: a Windows build has none. */
int owsbx_os_runner(const struct owsbx_args *a)
{
	(void)a;
	fputs("owsbx: runner: the tool runner runs in an OpenShell (Linux) sandbox, not on "
	      "Windows\n", stderr);
	return 2;
}

void owsbx_os_sleep_ms(unsigned ms)
{
	Sleep(ms);
}
