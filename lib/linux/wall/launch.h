/*
 * The contract between the account provider and its setuid launcher.
 *
 * account.c builds the launcher's command line, machine.c writes the record
 * the launcher trusts and installs it, and cli/launch/launcher.c takes both apart
 * again without trusting either; what they must agree on is said here once,
 * and the checks are the same code on both sides (launch.c).
 */
#ifndef OWS_LINUX_LAUNCH_H
#define OWS_LINUX_LAUNCH_H

#include <stdbool.h>
#include <sys/stat.h>

#include "internal.h"
#include "posix/posix.h"

/* Limits of one request: larger requests are refused before the launcher runs. */
#define OWS_LAUNCH_MAX_FOLDERS 32   /* --rw and --ro together */
#define OWS_LAUNCH_MAX_GUARDED OWS__GUARD_MAX /* --guard and --pin together (posix.h) */
#define OWS_LAUNCH_MAX_SOCKETS 4    /* --probe-socket */
#define OWS_LAUNCH_MAX_MASKS 64     /* --mask */
#define OWS_LAUNCH_MAX_ARG 4000     /* bytes in one argument */
#define OWS_LAUNCH_ID_LEN 32        /* --session: lower-case hex */

/*
 * Requests (argv[1]) and their options, each followed by one value:
 *   session  --account closed|open --net none|allowlist|open --session ID
 *            --rw ABS, --ro ABS, --home ABS, --guard ABS, --pin ABS, --mask ABS,
 *            --proxy-port N (allowlist only, in 47800-47899),
 *            --memory-mb N, --processes N, --cpu-percent N, --probe-socket ABS,
 *            --open-without-scopes partial (--net open only: run it partial where
 *            Landlock has no scopes, ows__net_partial)
 *   cleanup  --session ID
 * ABS is absolute and canonical (ows__launch_path_is_canonical); --guard and
 * --pin lie inside a --rw folder; --mask is a FIFO or socket inside a folder
 * of the request, covered with an empty file of mode 0 inside.
 */

/*
 * The record beside the launcher, "<launcher>.conf": one key=value a line,
 * '#' comments, every key exactly once, in this order when setup writes it.
 */
#define OWS_LAUNCH_CONF_KEYS                                                          \
	{"closed_uid", "closed_gid", "open_uid", "open_gid", "group_gid", "state_dir"}

/* Absolute, no "//", "." or ".." component, no trailing '/', shorter than PATH_MAX. */
OWS__HIDDEN bool ows__launch_path_is_canonical(const char *p);
/* A folder that may hold the launcher or its record: root's, and not writable by
 * others unless sticky (a sticky /tmp above a root-owned folder is accepted). */
OWS__HIDDEN bool ows__launch_dir_is_trusted(const struct stat *st);

#endif /* OWS_LINUX_LAUNCH_H */
