/*
 * The checks both sides of the launcher's contract make (launch.h).  Linked into the
 * setuid launcher: pure functions of their arguments, no allocation, no I/O.
 */
#include <limits.h>
#include <string.h>

#include "launch.h"

bool ows__launch_path_is_canonical(const char *p)
{
	size_t n = strnlen(p, PATH_MAX);
	if (n < 2 || n >= PATH_MAX || p[0] != '/' || p[n - 1] == '/')
		return false;
	for (const char *s = p; *s; s++) {
		if (*s != '/')
			continue;
		if (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || !s[2])) ||
		    (s[1] == '.' && s[2] == '.' && (s[3] == '/' || !s[3])))
			return false;
	}
	return true;
}

bool ows__launch_dir_is_trusted(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 &&
	       (!(st->st_mode & 022) || (st->st_mode & S_ISVTX));
}
