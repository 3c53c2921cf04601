/*
 * owsandbox.dll as a host that loads it at run time sees it (Python's ctypes
 * does the same, with LoadLibrary and GetProcAddress): every function the
 * header declares is there by name, the export table holds exactly those
 * (no ows__ internals, no dependency's symbols), and calls through the
 * pointers work.  ows_exports.h is made from include/owsandbox.h by the
 * Makefile, with the same sed as the .def file and test/sh/shared.sh.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wtap.h"

static const char *const declared[] = {
#include "ows_exports.h"
};
#define NDECLARED (sizeof(declared) / sizeof(declared[0]))

static bool is_declared(const char *name)
{
	for (size_t i = 0; i < NDECLARED; i++)
		if (strcmp(declared[i], name) == 0)
			return true;
	return false;
}

/* build/win/test/dll.exe -> build/win/owsandbox.dll, by full path (no search order). */
static HMODULE load_dll(void)
{
	wchar_t path[MAX_PATH + 32];
	DWORD n = GetModuleFileNameW(NULL, path, MAX_PATH);
	if (n == 0 || n >= MAX_PATH)
		return NULL;
	wchar_t *slash = wcsrchr(path, L'\\');
	if (!slash)
		return NULL;
	wcscpy(slash + 1, L"..\\owsandbox.dll");
	return LoadLibraryW(path);
}

/* The names in the module's export directory; how many, or -1 when it has none. */
static int export_names(HMODULE m, const char ***out)
{
	const BYTE *base = (const BYTE *)m;
	const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
	const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
	const IMAGE_DATA_DIRECTORY *dir = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
	if (!dir->VirtualAddress)
		return -1;
	const IMAGE_EXPORT_DIRECTORY *ex = (const IMAGE_EXPORT_DIRECTORY *)(base + dir->VirtualAddress);
	const DWORD *names = (const DWORD *)(base + ex->AddressOfNames);
	const char **v = calloc(ex->NumberOfNames + 1, sizeof(*v));
	if (!v)
		return -1;
	for (DWORD i = 0; i < ex->NumberOfNames; i++)
		v[i] = (const char *)(base + names[i]);
	*out = v;
	return (int)ex->NumberOfNames;
}

typedef const char *(*version_fn)(void);
typedef int (*report_fn)(const void *config, char **out, void *err);
typedef void (*free_fn)(void *p);

int main(void)
{
	wtap_init();
	ok(NDECLARED >= 60, "the header declares OWS_API functions (%zu)", NDECLARED);
	HMODULE m = load_dll();
	ok(m != NULL, "LoadLibrary loads owsandbox.dll (error %lu)", m ? 0UL : GetLastError());
	if (!m)
		return wtap_done();

	size_t missing = 0;
	for (size_t i = 0; i < NDECLARED; i++) {
		if (!GetProcAddress(m, declared[i])) {
			printf("# missing: %s\n", declared[i]);
			missing++;
		}
	}
	ok(missing == 0, "GetProcAddress finds every function the header declares (%zu missing)",
	   missing);
	ok(GetProcAddress(m, "ows__fail") == NULL, "an internal (ows__fail) is not exported");

	const char **names = NULL;
	int n = export_names(m, &names);
	size_t extra = 0;
	for (int i = 0; i < n; i++) {
		if (!is_declared(names[i])) {
			printf("# exported but not declared: %s\n", names[i]);
			extra++;
		}
	}
	ok(n == (int)NDECLARED && extra == 0,
	   "the export table is exactly the header's functions (%d exported, %zu declared, %zu extra)",
	   n, NDECLARED, extra);
	/* control: the comparison sees a name the header does not declare */
	ok(!is_declared("ows__fail") && !is_declared("json_loads"),
	   "control: a name outside the header is seen as extra");
	free(names);

	version_fn version = (version_fn)(void (*)(void))GetProcAddress(m, "ows_version");
	const char *v = version ? version() : NULL;
	ok(v && strcmp(v, OWSTEST_VERSION) == 0, "ows_version() through the pointer: %s (want %s)",
	   v ? v : "(none)", OWSTEST_VERSION);
	report_fn report = (report_fn)(void (*)(void))GetProcAddress(m, "ows_report_json");
	free_fn ows_free_p = (free_fn)(void (*)(void))GetProcAddress(m, "ows_free");
	char *json = NULL;
	int rc = report && ows_free_p ? report(NULL, &json, NULL) : -1;
	ok(rc == 0 && json && strstr(json, "\"capabilities\""),
	   "ows_report_json() through the pointer returns the capabilities (rc %d)", rc);
	if (ows_free_p)
		ows_free_p(json);
	ok(FreeLibrary(m), "FreeLibrary unloads it");
	return wtap_done();
}
