/*
 * The lifetime of seatbelt sessions (lib/darwin/sandbox.c says why it is
 * done so): the exit descriptor of a command, the sweep that ends every
 * process under a session's profile, and the records that let the next
 * open, or `owsbx machine sandbox cleanup`, end what a killed host left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libproc.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/event.h>
#include <sys/file.h>
#include <sys/proc_info.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "darwin.h"
#include "posix/posix.h"

#ifndef SZOMB
#define SZOMB 5 /* <sys/proc.h>: awaiting collection by its parent */
#endif

/* Where the markers live: root's, empty by design, so no one can make a name in it. */
#define MARKER_DIR "/private/var/empty"
/* A full pass over the person's processes, then a pause that doubles up to the last. */
#define SWEEP_ROUNDS 60
#define SWEEP_PAUSE_MAX_MS 100

/* ------------------------------------------------------------ exit descriptor */

/*
 * The proc's exit_fd (ows_proc_fd): a kqueue that turns readable when `pid`
 * exits (EVFILT_PROC, NOTE_EXIT).  A pid that exited already (a zombie: no
 * one but us reaps it) gives ESRCH: then a user event, triggered at once,
 * makes it readable.  A kqueue is not inherited across fork.
 */
int ows__exit_fd_open(pid_t pid)
{
	int kq = kqueue();
	if (kq < 0)
		return -1;
	/* Best effort: a kqueue is not inherited across fork either way. */
	(void)fcntl(kq, F_SETFD, FD_CLOEXEC);
	struct kevent ev;
	EV_SET(&ev, (uintptr_t)pid, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL);
	if (kevent(kq, &ev, 1, NULL, 0, NULL) == 0)
		return kq;
	if (errno == ESRCH) {
		EV_SET(&ev, 1, EVFILT_USER, EV_ADD, NOTE_TRIGGER, 0, NULL);
		if (kevent(kq, &ev, 1, NULL, 0, NULL) == 0)
			return kq;
	}
	close(kq);
	return -1;
}

/* -------------------------------------------------------------- the sweep */

/* Whether `pid` is alive, the person's, and under the profile with these markers. */
static bool is_ours_as(pid_t pid, uid_t me, const char *allow, const char *deny)
{
	struct proc_bsdinfo bi;
	if (proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &bi, sizeof(bi)) != (int)sizeof(bi))
		return false; /* gone, or not ours to ask about */
	if (bi.pbi_status == SZOMB || (bi.pbi_uid != me && bi.pbi_ruid != me))
		return false;
	const int by_path = OWS__SANDBOX_FILTER_PATH | SANDBOX_CHECK_NO_REPORT;
	/* 1 sandboxed or refused, 0 not or allowed, -1 an error (the pid gone): only a clear
	 * answer both ways counts. */
	return sandbox_check(pid, NULL, OWS__SANDBOX_FILTER_NONE) > 0 &&
	       sandbox_check(pid, "file-read-metadata", by_path, allow) == 0 &&
	       sandbox_check(pid, "file-read-metadata", by_path, deny) > 0;
}

/* Every pid there is, into *pids (caller frees): the count, or -1. */
static int list_pids(pid_t **pids)
{
	*pids = NULL;
	for (int tries = 0; tries < 4; tries++) {
		int n = proc_listallpids(NULL, 0);
		if (n <= 0)
			return -1;
		int cap = n + 256; /* room for what starts meanwhile */
		pid_t *buf = calloc((size_t)cap, sizeof(*buf));
		if (!buf)
			return -1;
		n = proc_listallpids(buf, cap * (int)sizeof(*buf));
		if (n > 0 && n < cap) {
			*pids = buf;
			return n;
		}
		free(buf);
	}
	return -1;
}

/* One pass: SIGKILL to each process of the session.  How many it found, or -1. */
static int sweep_pass(const char *allow, const char *deny)
{
	pid_t *pids;
	int n = list_pids(&pids);
	if (n < 0)
		return -1;
	uid_t me = geteuid();
	pid_t self = getpid();
	int found = 0;
	for (int i = 0; i < n; i++)
		if (pids[i] > 1 && pids[i] != self && is_ours_as(pids[i], me, allow, deny)) {
			kill(pids[i], SIGKILL);
			found++;
		}
	free(pids);
	return found;
}

/*
 * Ends every process under the profile with these markers (darwin.h): passes until
 * one finds none.  A process killed goes on showing until it is a zombie,
 * and one killed inside fork() leaves a child the next pass finds: between
 * passes that found something, a pause (1 ms, doubling up to 100 ms) lets
 * them finish dying.  0 once a full pass found none; -1 when the passes
 * ran out first (a fork bomb outrunning them) or the pids cannot be listed.
 */
int ows__sb_sweep(const char *allow, const char *deny)
{
	long pause_ms = 1;
	for (int round = 0; round < SWEEP_ROUNDS; round++) {
		int found = sweep_pass(allow, deny);
		if (found <= 0)
			return found;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = pause_ms * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		}
		if (pause_ms < SWEEP_PAUSE_MAX_MS)
			pause_ms *= 2;
	}
	return -1;
}

bool ows__sb_is_ours(pid_t pid, const char *allow, const char *deny)
{
	return is_ours_as(pid, geteuid(), allow, deny);
}

/* ----------------------------------------------------------------- records */
/*
 * One file per live session, named by its id, in /private/tmp/owsandbox-UID-seatbelt
 * (0700, the person's): /tmp is emptied at boot, when every process of every
 * session is gone too.  No sandbox sees the folder.  The host holds an
 * flock on its record from before the first process of the session starts
 * (the proof) until the last has been ended; a record whose lock is free
 * is a dead host's.
 *
 *   owsbx-seatbelt 1
 *   pid HOST_PID
 *   allow MARKER_ALLOW
 *   deny MARKER_DENY
 *   root PRIVATE_ROOT        the folder holding the private folder <id>
 *   home HOME                where its canary may be left, or -
 */

static int records_open(char *dir, size_t len, bool create, ows_error *err)
{
	snprintf(dir, len, "/private/tmp/owsandbox-%u-seatbelt", (unsigned)geteuid());
	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
		return ows__fail_sys(err, dir, "check that /tmp is writable",
				     "cannot create the folder of the seatbelt sessions' records");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (!create && errno == ENOENT)
			return OWS_ENOTFOUND;
		return ows__fail_sys(err, dir, "remove it if it is not a folder you made",
				     "cannot open the folder of the seatbelt sessions' records");
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 0077)) {
		close(fd);
		return ows__fail(err, OWS_EPERM, EPERM, dir,
				 "someone else made this folder: remove it",
				 "the folder of the seatbelt sessions' records is not yours alone");
	}
	return fd;
}

static bool is_session_id(const char *s)
{
	size_t n = strlen(s);
	if (n != 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ows__hexval(s[i]) < 0)
			return false;
	return true;
}

int ows__sb_record_write(ows__sb_record *r, const char *id, const char *allow, const char *deny,
			 const char *root, const char *home, ows_error *err)
{
	char text[PATH_MAX * 2 + 512];
	int n = snprintf(text, sizeof(text),
			 "owsbx-seatbelt 1\npid %d\nallow %s\ndeny %s\nroot %s\nhome %s\n",
			 (int)getpid(), allow, deny, root, home ? home : "-");
	if (n < 0 || (size_t)n >= sizeof(text) || strchr(root, '\n') ||
	    (home && strchr(home, '\n')))
		return ows__fail(err, OWS_EINVAL, 0, root, "choose a private_root without a "
				 "newline", "the session's record cannot hold this path");
	int dirfd = records_open(r->dir, sizeof(r->dir), true, err);
	if (dirfd < 0)
		return dirfd;
	r->fd = ows__create_locked_at(dirfd, id, text);
	int e = errno;
	close(dirfd);
	if (r->fd < 0) {
		errno = e;
		return ows__fail_sys(err, r->dir, NULL, "cannot write the session's record");
	}
	return 0;
}

void ows__sb_record_drop(ows__sb_record *r, const char *id, bool remove)
{
	if (r->fd < 0)
		return;
	if (remove) {
		int dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd >= 0) {
			unlinkat(dirfd, id, 0);
			close(dirfd);
		}
	}
	close(r->fd);
	r->fd = -1;
}

/* The value of `key` in a record's text, into buf; false when absent or too long. */
static bool record_field(const char *text, const char *key, char *buf, size_t len)
{
	size_t k = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, k) != 0 || l[k] != ' ')
			continue;
		size_t n = strcspn(l + k + 1, "\n");
		if (n == 0 || n >= len)
			return false;
		memcpy(buf, l + k + 1, n);
		buf[n] = '\0';
		return true;
	}
	return false;
}

/* Removes <root>/<id> and the root once empty; the root must be the person's folder. */
static int remove_private(const char *root, const char *id)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	int rc = fstat(fd, &st) == 0 && st.st_uid == geteuid() ? ows__rmtree_at(fd, id) : -1;
	close(fd);
	rmdir(root); /* fails while other sessions use it */
	return rc;
}

/* Ends one dead host's session from its record (locked by us); 1 when done, 0 to retry. */
static int end_dead_session(int fd, const char *id)
{
	char text[PATH_MAX * 2 + 512];
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	if (n <= 0)
		return 1; /* empty: a host killed while it wrote; nothing ran yet */
	text[n] = '\0';
	char allow[96], deny[96], root[PATH_MAX], home[PATH_MAX];
	if (strncmp(text, "owsbx-seatbelt 1\n", 17) != 0 ||
	    !record_field(text, "allow", allow, sizeof(allow)) ||
	    !record_field(text, "deny", deny, sizeof(deny)) ||
	    !record_field(text, "root", root, sizeof(root)) ||
	    !record_field(text, "home", home, sizeof(home)))
		return 1; /* not one of ours as we write them: nothing to act on */
	if (strncmp(allow, MARKER_DIR "/", sizeof(MARKER_DIR)) != 0 ||
	    strncmp(deny, MARKER_DIR "/", sizeof(MARKER_DIR)) != 0)
		return 1;
	if (ows__sb_sweep(allow, deny) != 0)
		return 0;
	if (remove_private(root, id) != 0)
		return 0;
	if (strcmp(home, "-") != 0) {
		char canary[PATH_MAX + 64];
		snprintf(canary, sizeof(canary), "%s/.owsandbox-canary-%s", home, id);
		unlink(canary);
	}
	return 1;
}

int ows__sb_cleanup(ows_error *err)
{
	char dir[64];
	ows_error quiet;
	ows_error_clear(&quiet);
	int dirfd = records_open(dir, sizeof(dir), false, &quiet);
	if (dirfd == OWS_ENOTFOUND)
		return 0; /* no seatbelt session ever ran since boot */
	if (dirfd < 0)
		return ows__fail(err, dirfd, quiet.sys_errno, quiet.where, quiet.hint, "%s",
				 quiet.what);
	DIR *d = ows__opendir_at(dirfd);
	if (!d) {
		close(dirfd);
		return ows__fail_sys(err, dir, NULL, "cannot list the seatbelt sessions' records");
	}
	int ended = 0, left = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (ows__is_create_temp(e->d_name)) {
			/* Half-made by a host killed then; another may be making one now. */
			if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_mtime < time(NULL) - 60)
				unlinkat(dirfd, e->d_name, 0);
			continue;
		}
		if (!is_session_id(e->d_name))
			continue;
		int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) { /* its host is gone */
			if (end_dead_session(fd, e->d_name)) {
				unlinkat(dirfd, e->d_name, 0);
				ended++;
			} else {
				left++;
			}
		}
		close(fd);
	}
	closedir(d);
	close(dirfd);
	if (left)
		return ows__fail(err, OWS_ESYS, 0, dir, "run `owsbx machine sandbox cleanup` again",
				 "%d dead seatbelt session%s could not be ended completely", left,
				 left == 1 ? "" : "s");
	return ended;
}

/* Fresh paths under MARKER_DIR, where no one can make a name: they exist nowhere. */
int ows__sb_make_markers(char allow[OWS__SB_MARKER_MAX], char deny[OWS__SB_MARKER_MAX],
			 ows_error *err)
{
	char hex[33];
	int rc = ows__random_hex(hex, 16, err);
	if (rc < 0)
		return rc;
	snprintf(allow, OWS__SB_MARKER_MAX, "%s/owsandbox-%s-allow", MARKER_DIR,
		 hex);
	snprintf(deny, OWS__SB_MARKER_MAX, "%s/owsandbox-%s-deny", MARKER_DIR, hex);
	return 0;
}
