/*
 * A host linked against the import library (libowsandbox.dll.a, -lowsandbox), as a C
 * program on Windows links the DLL: it starts only when owsandbox.dll is found (here
 * from the current folder, build/win, where test/win/run.sh runs it) and calls it.
 */
#include <string.h>

#include "owsandbox.h"
#include "wtap.h"

int main(void)
{
	wtap_init();
	HMODULE m = GetModuleHandleW(L"owsandbox.dll");
	ok(m != NULL, "the program runs with owsandbox.dll loaded (linked by its import library)");
	ok(strcmp(ows_version(), OWSTEST_VERSION) == 0, "ows_version(): %s", ows_version());
	char *report = NULL;
	ows_error err;
	ows_error_clear(&err);
	int rc = ows_report_json(NULL, &report, &err);
	ok(rc == 0 && report && strstr(report, "\"capabilities\""),
	   "ows_report_json() returns the capabilities (rc %d)", rc);
	ows_free(report);
	return wtap_done();
}
