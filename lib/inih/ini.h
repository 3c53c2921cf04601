/*
 * The subset of inih's API (https://github.com/benhoyt/inih, BSD-3) that
 * lib/config.c uses, for builds where upstream inih is not available (the
 * Windows cross-build here: Debian ships no inih source or mingw build).
 * Implemented in lib/inih/ini.c with inih's default behaviour:
 *   - "[section]" lines, "name = value" and "name : value" pairs;
 *   - ';' and '#' start a comment line; " ;" starts an inline comment;
 *   - leading and trailing white space is trimmed, a UTF-8 BOM is skipped;
 *   - the handler returns non-zero on success; parsing goes on after an
 *     error (INI_STOP_ON_FIRST_ERROR 0) and the first error line is returned.
 * Returns 0 on success, the line number of the first error, or -1 when the
 * file cannot be opened, -2 when out of memory.
 * A Windows developer may build upstream inih instead (see docs/windows.md);
 * it has the same header name and the same functions.
 */
#ifndef OWS_INIH_COMPAT_H
#define OWS_INIH_COMPAT_H

#include <stdio.h>

typedef int (*ini_handler)(void *user, const char *section, const char *name,
			   const char *value);

int ini_parse(const char *filename, ini_handler handler, void *user);
int ini_parse_file(FILE *file, ini_handler handler, void *user);
int ini_parse_string(const char *string, ini_handler handler, void *user);

#endif /* OWS_INIH_COMPAT_H */
