/* A tiny TAP helper for the Windows tests run under Wine (and on Windows). */
#ifndef OWS_WTAP_H
#define OWS_WTAP_H

#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdio.h>
#include <windows.h>

static int wtap_n, wtap_failed;

static inline void wtap_init(void)
{
	_setmode(_fileno(stdout), _O_BINARY); /* "\n", not "\r\n" */
	setvbuf(stdout, NULL, _IONBF, 0);
}

static void ok(int cond, const char *fmt, ...) __attribute__((format(gnu_printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++wtap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		wtap_failed++;
}

/* Not provable here: a TAP skip with the reason, never a pass. */
static inline void skip(const char *what, const char *why)
{
	printf("ok %d - %s # SKIP not provable here: %s\n", ++wtap_n, what, why);
}

static inline int wtap_done(void)
{
	printf("1..%d\n", wtap_n);
	return wtap_failed ? 1 : 0;
}

static inline int is_wine(void)
{
	HMODULE nt = GetModuleHandleW(L"ntdll.dll");
	return nt && GetProcAddress(nt, "wine_get_version") != NULL;
}

#endif
