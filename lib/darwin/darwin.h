/* macOS back end: declarations shared by the files in lib/darwin/. */
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
 */
enum {
	OWS__SANDBOX_FILTER_NONE = 0,
	OWS__SANDBOX_FILTER_PATH = 1,
};
extern const int SANDBOX_CHECK_NO_REPORT; /* a flag or'ed into the filter type */
int sandbox_check(pid_t pid, const char *operation, int type, ...);

/* Where every seatbelt command starts: absolute, never looked up in a PATH. */
#define OWS__SANDBOX_EXEC "/usr/bin/sandbox-exec"

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
