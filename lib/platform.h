/*
 * The few operating-system calls the portable core (the .c files in lib/) makes, each
 * behind one small function.  lib/linux/platform.c and lib/win/platform.c
 * implement them; the Makefile picks the folder.  Internal, ows__plat_*.
 *
 * Paths are the platform's own: "/abs/path" on Linux, "C:\abs\path" (UTF-8)
 * on Windows.  Functions that fail set errno (the C library's, also on
 * Windows) so that ows__fail_sys() reports them the same way.
 */
#ifndef OWS_PLATFORM_H
#define OWS_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#ifndef SIGKILL
#define SIGKILL 9 /* Windows has no SIGKILL; ows_proc_kill() takes it to mean "end it" */
#endif

/* The mode string for fopen() of a text file we only read ("re": close on exec). */
OWS__HIDDEN extern const char ows__plat_fopen_read[];
/* The machine's config file when the host names none. */
OWS__HIDDEN const char *ows__plat_config_path(void);
/* The provider a machine uses when its config names none. */
OWS__HIDDEN const char *ows__plat_default_provider(void);
/* What to say when a config names a provider this platform lacks. */
OWS__HIDDEN const char *ows__plat_provider_hint(void);
/* The machine's state folder default (record, journal, sandboxes). */
OWS__HIDDEN const char *ows__plat_state_dir(void);

/* "/x" on Linux; "C:\x", "C:/x" or "\\server\share\x" on Windows. */
OWS__HIDDEN bool ows__plat_path_is_absolute(const char *path);
/* '/' on Linux; '\\' and '/' on Windows. */
OWS__HIDDEN bool ows__plat_is_sep(char c);
/* The root of a file system: "/", or "C:\" on Windows. */
OWS__HIDDEN bool ows__plat_is_root(const char *path);
/* Canonical absolute path (links resolved); caller frees.  NULL with errno set. */
OWS__HIDDEN char *ows__plat_realpath(const char *path);
/*
 * The first symbolic link on the way to `path` that someone other than the
 * system made (not root's), copied into buf; NULL when there is none.  Such a
 * link may be one an agent planted in an earlier session: a folder named
 * through it is not granted.
 */
OWS__HIDDEN const char *ows__plat_untrusted_link(const char *path, char *buf, size_t len);
/* True when `path` is an existing folder. */
OWS__HIDDEN bool ows__plat_is_dir(const char *path);
/* The calling account's home, canonical; caller frees; NULL when it has none. */
OWS__HIDDEN char *ows__plat_home_dir(void);
/* The host's environment, borrowed. */
OWS__HIDDEN const char *const *ows__plat_environ(void);

/* Milliseconds since the Unix epoch. */
OWS__HIDDEN int64_t ows__plat_now_ms(void);
/* Fills buf with n bytes from the system's random source; 0, or -1 with errno. */
OWS__HIDDEN int ows__plat_random(void *buf, size_t n);

/* Descriptors of the C library (read(), write() and close() work on them). */
/* Opens for appending, creating it 0600; -1 with errno. */
OWS__HIDDEN int ows__plat_open_append(const char *path);
/* Opens an existing file to read, not following a final link; -1 with errno. */
OWS__HIDDEN int ows__plat_open_read(const char *path);
/* Creates a new file to write (fails if it exists); -1 with errno. */
OWS__HIDDEN int ows__plat_open_new(const char *path);
/* Writes all of buf, retrying interrupted writes; 0, or -1 with errno. */
OWS__HIDDEN int ows__plat_write_all(int fd, const void *buf, size_t n);
/* Sets the file's mode (Linux) and flushes it to disk; 0, or -1 with errno. */
OWS__HIDDEN int ows__plat_commit(int fd, unsigned mode);
/* Puts `from` in the place of `to`, replacing it atomically; 0, or -1 with errno. */
OWS__HIDDEN int ows__plat_replace(const char *from, const char *to);

/*
 * Locks.  One process-wide lock with one condition, for the live-handle
 * registry (lib/handles.c): wait releases the lock while it sleeps, wake
 * wakes every waiter.  And plain mutexes, one per handle that needs one.
 */
OWS__HIDDEN void ows__plat_global_lock(void);
OWS__HIDDEN void ows__plat_global_unlock(void);
OWS__HIDDEN void ows__plat_global_wait(void);
OWS__HIDDEN void ows__plat_global_wake(void);
typedef struct ows__mutex ows__mutex;
/* NULL when out of memory. */
OWS__HIDDEN ows__mutex *ows__plat_mutex_new(void);
OWS__HIDDEN void ows__plat_mutex_lock(ows__mutex *m);
OWS__HIDDEN void ows__plat_mutex_unlock(ows__mutex *m);
OWS__HIDDEN void ows__plat_mutex_free(ows__mutex *m);

#endif /* OWS_PLATFORM_H */
