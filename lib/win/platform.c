/*
 * The operating-system calls of the portable core, on Windows (see lib/platform.h).
 * Nothing provider-specific: accounts and permissions are account.c's and acl.c's.
 */
#include <windows.h>
#include <bcrypt.h>
#include <shlobj.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "platform.h"
#include "win.h"

const char ows__plat_fopen_read[] = "r";

const char *ows__plat_config_path(void) { return OWS__WIN_STATE_DIR "\\config.ini"; }
const char *ows__plat_state_dir(void) { return OWS__WIN_STATE_DIR; }
const char *ows__plat_default_provider(void) { return "windows"; }
const char *ows__plat_provider_hint(void) { return "use windows or direct"; }

wchar_t *ows__wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	if (n <= 0) {
		errno = EILSEQ;
		return NULL;
	}
	wchar_t *w = malloc((size_t)n * sizeof(wchar_t));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
	return w;
}

char *ows__narrow(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	if (n <= 0) {
		errno = EILSEQ;
		return NULL;
	}
	char *s = malloc((size_t)n);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
	return s;
}

int ows__win_errno(DWORD e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_DRIVE:
		return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_PRIVILEGE_NOT_HELD:
		return EACCES;
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ENOMEM;
	case ERROR_DIRECTORY:
		return ENOTDIR;
	case ERROR_DIR_NOT_EMPTY:
		return ENOTEMPTY;
	default:
		return EIO;
	}
}

int ows__fail_win(ows_error *err, int code, DWORD e, const char *where, const char *hint,
		  const char *what)
{
	char text[160] = "";
	FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0,
		       text, sizeof(text), NULL);
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == '.'))
		text[--n] = '\0';
	return ows__fail(err, code ? code : OWS_ESYS, (int)e, where, hint, "%s: error %lu%s%s",
			 what, (unsigned long)e, n ? ", " : "", text);
}

bool ows__win_is_wine(void)
{
	HMODULE nt = GetModuleHandleW(L"ntdll.dll");
	return nt && GetProcAddress(nt, "wine_get_version") != NULL;
}

bool ows__win_is_admin(void)
{
	BYTE buf[SECURITY_MAX_SID_SIZE];
	DWORD n = sizeof(buf);
	BOOL member = FALSE;
	if (!CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, buf, &n) ||
	    !CheckTokenMembership(NULL, buf, &member))
		return false;
	return member != FALSE;
}

bool ows__plat_path_is_absolute(const char *p)
{
	if (!p)
		return false;
	if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
	    (p[2] == '\\' || p[2] == '/'))
		return true;
	return (p[0] == '\\' && p[1] == '\\') || (p[0] == '/' && p[1] == '/');
}

bool ows__plat_is_sep(char c) { return c == '\\' || c == '/'; }

bool ows__plat_is_root(const char *p)
{
	return p[0] && p[1] == ':' && ows__plat_is_sep(p[2]) && p[3] == '\0';
}

const char *ows__plat_untrusted_link(const char *path, char *buf, size_t len)
{
	(void)path;
	(void)buf;
	(void)len;
	return NULL; /* NTFS links need an administrator or developer mode to make */
}

char *ows__plat_realpath(const char *path)
{
	wchar_t *w = ows__wide(path);
	if (!w)
		return NULL;
	/* The final path of the folder itself: junctions and links resolved. */
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE |
			       FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE) {
		errno = ows__win_errno(GetLastError());
		return NULL;
	}
	wchar_t buf[32768];
	DWORD n = GetFinalPathNameByHandleW(h, buf, 32768, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	CloseHandle(h);
	if (n == 0 || n >= 32768) {
		errno = n ? ENAMETOOLONG : ows__win_errno(GetLastError());
		return NULL;
	}
	wchar_t *p = buf;
	if (wcsncmp(p, L"\\\\?\\UNC\\", 8) == 0) {
		p += 6;
		p[0] = L'\\';
	} else if (wcsncmp(p, L"\\\\?\\", 4) == 0) {
		p += 4;
	}
	size_t len = wcslen(p);
	while (len > 3 && p[len - 1] == L'\\')
		p[--len] = L'\0';
	return ows__narrow(p);
}

bool ows__plat_is_dir(const char *path)
{
	wchar_t *w = ows__wide(path);
	if (!w)
		return false;
	DWORD a = GetFileAttributesW(w);
	free(w);
	return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

char *ows__plat_home_dir(void)
{
	wchar_t *w = NULL;
	if (SHGetKnownFolderPath(&FOLDERID_Profile, 0, NULL, &w) != S_OK) {
		CoTaskMemFree(w);
		const char *up = getenv("USERPROFILE");
		return up ? ows__plat_realpath(up) : NULL;
	}
	char *s = ows__narrow(w);
	CoTaskMemFree(w);
	char *real = s ? ows__plat_realpath(s) : NULL;
	free(s);
	return real;
}

const char *const *ows__plat_environ(void)
{
	return (const char *const *)_environ;
}

int64_t ows__plat_now_ms(void)
{
	FILETIME ft;
	GetSystemTimePreciseAsFileTime(&ft);
	uint64_t t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
	/* 100 ns ticks since 1601 to ms since 1970. */
	return (int64_t)(t / 10000) - 11644473600000LL;
}

int ows__plat_random(void *buf, size_t n)
{
	if (n > 0xffffffffu || !BCRYPT_SUCCESS(BCryptGenRandom(NULL, buf, (ULONG)n,
							  BCRYPT_USE_SYSTEM_PREFERRED_RNG))) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* _wopen for a UTF-8 path; the descriptor is not inherited (_O_NOINHERIT). */
static int wopen(const char *path, int flags, int mode)
{
	wchar_t *w = ows__wide(path);
	if (!w)
		return -1;
	int fd = _wopen(w, flags | _O_BINARY | _O_NOINHERIT, mode);
	free(w);
	return fd;
}

int ows__plat_open_append(const char *path)
{
	return wopen(path, _O_WRONLY | _O_CREAT | _O_APPEND, _S_IREAD | _S_IWRITE);
}

int ows__plat_open_read(const char *path)
{
	/* A final reparse point (symbolic link, junction) is refused, as O_NOFOLLOW does. */
	wchar_t *w = ows__wide(path);
	if (!w)
		return -1;
	DWORD a = GetFileAttributesW(w);
	free(w);
	if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_REPARSE_POINT)) {
		errno = ELOOP;
		return -1;
	}
	return wopen(path, _O_RDONLY, 0);
}

int ows__plat_open_new(const char *path)
{
	return wopen(path, _O_WRONLY | _O_CREAT | _O_EXCL, _S_IREAD | _S_IWRITE);
}

int ows__plat_write_all(int fd, const void *buf, size_t n)
{
	size_t off = 0;
	while (off < n) {
		size_t chunk = n - off > 0x40000000u ? 0x40000000u : n - off;
		int w = _write(fd, (const char *)buf + off, (unsigned)chunk);
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

int ows__plat_commit(int fd, unsigned mode)
{
	/* Windows has no mode bits: who may read the file is its folder's ACL. */
	(void)mode;
	return _commit(fd);
}

int ows__plat_replace(const char *from, const char *to)
{
	wchar_t *wf = ows__wide(from), *wt = ows__wide(to);
	BOOL ok = wf && wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
	DWORD e = GetLastError();
	free(wf);
	free(wt);
	if (!ok) {
		errno = ows__win_errno(e);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ locks */

static SRWLOCK global_lock = SRWLOCK_INIT;
static CONDITION_VARIABLE global_cond = CONDITION_VARIABLE_INIT;

void ows__plat_global_lock(void) { AcquireSRWLockExclusive(&global_lock); }
void ows__plat_global_unlock(void) { ReleaseSRWLockExclusive(&global_lock); }
void ows__plat_global_wait(void) { SleepConditionVariableSRW(&global_cond, &global_lock, INFINITE, 0); }
void ows__plat_global_wake(void) { WakeAllConditionVariable(&global_cond); }

struct ows__mutex {
	SRWLOCK l;
};

ows__mutex *ows__plat_mutex_new(void)
{
	ows__mutex *m = malloc(sizeof(*m));
	if (m)
		InitializeSRWLock(&m->l);
	return m;
}

void ows__plat_mutex_lock(ows__mutex *m) { AcquireSRWLockExclusive(&m->l); }
void ows__plat_mutex_unlock(ows__mutex *m) { ReleaseSRWLockExclusive(&m->l); }
void ows__plat_mutex_free(ows__mutex *m) { free(m); }
