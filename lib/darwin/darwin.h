/*
 * macOS back end: declarations shared by the files in lib/darwin/.  Nothing from
 * lib/linux/ or lib/win/: what macOS shares with Linux is lib/posix/posix.h.
 */
#ifndef OWS_DARWIN_H
#define OWS_DARWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

/*
 * libsandbox (in libSystem).  The SDK's <sandbox.h> declares only
 * sandbox_init and sandbox_free_error, and Zig ships no <sandbox.h> at
 * all: these are the library's own exported symbols (libSystem's .tbd
 * lists _sandbox_check and _SANDBOX_CHECK_NO_REPORT), declared as the
 * sandboxes that use them (Chromium, WebKit) declare them.
 *
 * sandbox_check(pid, NULL, SANDBOX_FILTER_NONE) is 1 when `pid` runs under
 * a sandbox, 0 when not.  With an operation and a filter it is 0 when the
 * profile of `pid` allows that operation on the filter's argument, 1 when
 * it refuses it; SANDBOX_CHECK_NO_REPORT keeps the refusal out of the log.
 * -1 is an error (errno: ESRCH for a pid that is gone).
 */
enum {
	OWS__SANDBOX_FILTER_NONE = 0,
	OWS__SANDBOX_FILTER_PATH = 1,
};
extern const int SANDBOX_CHECK_NO_REPORT; /* a flag or'ed into the filter type */
int sandbox_check(pid_t pid, const char *operation, int type, ...);

/* Where every seatbelt command starts: absolute, never looked up in a PATH. */
#define OWS__SANDBOX_EXEC "/usr/bin/sandbox-exec"

/* ---------------------------------------------- lifetime (lifetime.c) */

#define OWS__SB_MARKER_MAX 96

/* Two fresh paths that exist nowhere (under /private/var/empty), for a session's profile. */
OWS__HIDDEN int ows__sb_make_markers(char allow[OWS__SB_MARKER_MAX],
				     char deny[OWS__SB_MARKER_MAX], ows_error *err);
/* Whether `pid` is alive, the person's, and under the profile with these markers. */
OWS__HIDDEN bool ows__sb_is_ours(pid_t pid, const char *allow, const char *deny);
/*
 * SIGKILL to every process of the person's under the profile with these
 * markers, pass after pass until one finds none: 0, or -1 when the passes
 * ran out (a fork bomb outrunning them) or the pids could not be listed.
 */
OWS__HIDDEN int ows__sb_sweep(const char *allow, const char *deny);

/* A live session's record (lifetime.c says what it holds and where). */
typedef struct ows__sb_record {
	int fd;        /* locked while the host lives; -1 */
	char dir[64];
} ows__sb_record;

/* Writes the record, locked, before the session's first process starts. */
OWS__HIDDEN int ows__sb_record_write(ows__sb_record *r, const char *id, const char *allow,
				     const char *deny, const char *root, const char *home,
				     ows_error *err);
/* Drops it: removed once every process is gone (`remove`), else left, unlocked, for cleanup. */
OWS__HIDDEN void ows__sb_record_drop(ows__sb_record *r, const char *id, bool remove);

/*
 * Whether this process can open seatbelt sessions: false when it runs
 * inside a sandbox of its own (macOS does not nest them) or when
 * sandbox-exec is missing, with why and the one thing to do.
 */
OWS__HIDDEN bool ows__sb_usable(char *why, size_t why_len, char *fix, size_t fix_len);

/*
 * Ends what seatbelt sessions of hosts that died (killed, crashed) left:
 * every process still under their profile, their private folders, their
 * canaries and records.  Returns how many such sessions it ended, or a
 * negative code (the records left for the next try).
 */
OWS__HIDDEN int ows__sb_cleanup(ows_error *err);

#endif /* OWS_DARWIN_H */
