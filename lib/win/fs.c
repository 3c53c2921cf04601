/*
 * Folders on Windows: create with parents, remove a tree without following junctions.
 * Paths only: who may open them is acl.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "win.h"

int ows__win_mkdir_p(const char *path, ows_error *err)
{
	wchar_t *w = ows__wide(path);
	if (!w)
		return ows__fail(err, OWS_EINVAL, EILSEQ, path, NULL, "the path is not valid UTF-8");
	size_t len = wcslen(w);
	int rc = 0;
	for (size_t i = 3; i <= len && rc == 0; i++) {
		if (w[i] != L'\\' && w[i] != L'/' && w[i] != L'\0')
			continue;
		wchar_t saved = w[i];
		w[i] = L'\0';
		if (!CreateDirectoryW(w, NULL) && GetLastError() != ERROR_ALREADY_EXISTS)
			rc = ows__fail_win(err, 0, GetLastError(), path, NULL, "cannot create the folder");
		w[i] = saved;
	}
	free(w);
	return rc;
}

static int rmtree_w(const wchar_t *dir, ows_error *err)
{
	size_t n = wcslen(dir);
	wchar_t *pattern = malloc((n + 3) * sizeof(wchar_t));
	if (!pattern)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	swprintf(pattern, n + 3, L"%ls\\*", dir);
	WIN32_FIND_DATAW fd;
	HANDLE h = FindFirstFileW(pattern, &fd);
	free(pattern);
	int rc = 0;
	if (h != INVALID_HANDLE_VALUE) {
		do {
			if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
				continue;
			size_t m = n + wcslen(fd.cFileName) + 2;
			wchar_t *child = malloc(m * sizeof(wchar_t));
			if (!child) {
				rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
				break;
			}
			swprintf(child, m, L"%ls\\%ls", dir, fd.cFileName);
			if (fd.dwFileAttributes & FILE_ATTRIBUTE_READONLY)
				SetFileAttributesW(child, fd.dwFileAttributes & ~FILE_ATTRIBUTE_READONLY);
			bool isdir = fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY;
			/* A junction or link is removed itself; what it points to is not touched. */
			if (isdir && !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
				if (rmtree_w(child, err) < 0)
					rc = OWS_ESYS;
			} else if (isdir ? !RemoveDirectoryW(child) : !DeleteFileW(child)) {
				char *c = ows__narrow(child);
				rc = ows__fail_win(err, 0, GetLastError(), c, NULL, "cannot remove");
				free(c);
			}
			free(child);
		} while (FindNextFileW(h, &fd));
		FindClose(h);
	}
	if (!RemoveDirectoryW(dir) && GetLastError() != ERROR_FILE_NOT_FOUND && rc == 0) {
		char *c = ows__narrow(dir);
		rc = ows__fail_win(err, 0, GetLastError(), c, NULL, "cannot remove the folder");
		free(c);
	}
	return rc;
}

int ows__win_rmtree(const char *path, ows_error *err)
{
	wchar_t *w = ows__wide(path);
	if (!w)
		return ows__fail(err, OWS_EINVAL, EILSEQ, path, NULL, "the path is not valid UTF-8");
	int rc = rmtree_w(w, err);
	free(w);
	return rc;
}
