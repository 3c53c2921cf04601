/*
 * Private folders and their removal.
 *
 * Each session gets <base>/owsandbox-<uid>/<id>/ with home/, tmp/ and
 * cache/.  A lock file beside it, <id>.lock, is held with flock() for as long
 * as the host lives; a session folder whose lock is free (or missing)
 * belongs to a host that died, and the next open removes it.  The lock
 * lives outside the session folder so that the sandbox cannot remove it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux.h"

/* Below this depth a subtree is moved up to the top instead of descended into. */
#define RMTREE_MAX_DEPTH 64

static int rmtree_fd(int topfd, int dirfd, int depth, unsigned *moved);

/* Empties the folder open at `dirfd`; `topfd` is where too-deep trees are moved. */
static int empty_dir(int topfd, int dirfd, int depth, unsigned *moved)
{
	int rc = 0;
	int dupfd = dup(dirfd);
	if (dupfd < 0)
		return -1;
	DIR *d = fdopendir(dupfd);
	if (!d) {
		close(dupfd);
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = -1;
			continue;
		}
		if (depth >= RMTREE_MAX_DEPTH) {
			char name[32];
			snprintf(name, sizeof(name), ".deep-%u", (*moved)++);
			if (renameat(dirfd, e->d_name, topfd, name) != 0)
				rc = -1;
			continue;
		}
		int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 && errno == EACCES) {
			/* The sandbox may leave a folder it cannot read (chmod 000). */
			if (fchmodat(dirfd, e->d_name, 0700, 0) != 0) { /* openat reports it */ }
			sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (sub < 0) {
			rc = -1;
			continue;
		}
		if (fchmod(sub, 0700) != 0) { /* unlinkat reports what stays */ }
		if (rmtree_fd(topfd, sub, depth + 1, moved) != 0)
			rc = -1;
		close(sub);
		if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)
			rc = -1;
	}
	closedir(d);
	return rc;
}

static int rmtree_fd(int topfd, int dirfd, int depth, unsigned *moved)
{
	return empty_dir(topfd, dirfd, depth, moved);
}

int ows__rmtree_at(int parentfd, const char *name)
{
	int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR || errno == ELOOP)
			return unlinkat(parentfd, name, 0);
		return -1;
	}
	if (fchmod(fd, 0700) != 0) { /* unlinkat reports what stays */ }
	unsigned moved = 0;
	int rc = 0;
	/* Trees deeper than the limit were moved up; go round until none is left. */
	for (int round = 0; round < 1000; round++) {
		unsigned before = moved;
		rc = rmtree_fd(fd, fd, 0, &moved);
		if (moved == before)
			break;
	}
	close(fd);
	if (unlinkat(parentfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

/* Opens (creating if needed) the per-user root, refusing one we do not own. */
static int open_root(const char *root, uid_t owner, mode_t mode, ows_error *err)
{
	if (mkdir(root, mode) != 0 && errno != EEXIST)
		return ows__fail_sys(err, root, "check that the folder above it is writable",
				     "cannot create the private folder root");
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ows__fail_sys(err, root, "remove it if it is not a folder you made",
				     "cannot open the private folder root");
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_uid != owner || (st.st_mode & 0022)) {
		close(fd);
		return ows__fail(err, OWS_EPERM, EPERM, root,
				 "someone else made this folder: remove it, or set private_root",
				 "the private folder root is not owned by you alone");
	}
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) != 0) {
		close(fd);
		return ows__fail_sys(err, root, NULL, "cannot set the private folder root's mode");
	}
	return fd;
}

/* Removes session folders whose host no longer holds their lock. */
static void remove_stale(int rootfd)
{
	int dupfd = dup(rootfd);
	if (dupfd < 0)
		return;
	DIR *d = fdopendir(dupfd);
	if (!d) {
		close(dupfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.' || n > 64)
			continue;
		char lock[80];
		bool is_lock = n > 5 && strcmp(e->d_name + n - 5, ".lock") == 0;
		if (is_lock)
			snprintf(lock, sizeof(lock), "%s", e->d_name);
		else
			snprintf(lock, sizeof(lock), "%s.lock", e->d_name);
		int lfd = openat(rootfd, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) != 0) {
			close(lfd); /* alive */
			continue;
		}
		char dir[80];
		snprintf(dir, sizeof(dir), "%.*s", (int)(is_lock ? n - 5 : n), e->d_name);
		ows__rmtree_at(rootfd, dir);
		if (lfd >= 0) {
			unlinkat(rootfd, lock, 0);
			close(lfd);
		}
	}
	closedir(d);
}

int ows__private_create(ows__private *pv, const char *base, const char *id, uid_t uid,
			gid_t gid, ows_error *err)
{
	memset(pv, 0, sizeof(*pv));
	pv->lock_fd = -1;
	uid_t me = geteuid();
	/* A root host's root is 0711 so that the account it drops to can pass through. */
	mode_t mode = (me == 0 && uid != 0) ? 0711 : 0700;
	if (!(pv->root = ows__asprintf(err, "%s/owsandbox-%u", base, (unsigned)me)))
		return OWS_ENOMEM;
	int rootfd = open_root(pv->root, me, mode, err);
	if (rootfd < 0)
		return rootfd;
	remove_stale(rootfd);

	int rc;
	char lock[64];
	snprintf(lock, sizeof(lock), "%s.lock", id);
	/* Created locked, then linked, so no cleaner ever sees it unlocked. */
	int lfd = openat(rootfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", lfd);
	if (lfd < 0 || flock(lfd, LOCK_EX) != 0 ||
	    linkat(AT_FDCWD, proc, rootfd, lock, AT_SYMLINK_FOLLOW) != 0) {
		rc = ows__fail_sys(err, pv->root, NULL, "cannot create the session's lock");
		if (lfd >= 0)
			close(lfd);
		close(rootfd);
		return rc;
	}
	pv->lock_fd = lfd;
	if (!(pv->dir = ows__asprintf(err, "%s/%s", pv->root, id))) {
		rc = OWS_ENOMEM;
		goto fail;
	}
	if (mkdirat(rootfd, id, 0700) != 0) {
		rc = ows__fail_sys(err, pv->dir, NULL, "cannot create the private folder");
		goto fail;
	}
	int dfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = ows__fail_sys(err, pv->dir, NULL, "cannot open the private folder");
		goto fail;
	}
	static const char *const subdirs[] = {"home", "tmp", "cache"};
	rc = 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(subdirs) && rc == 0; i++) {
		if (mkdirat(dfd, subdirs[i], 0700) != 0 ||
		    (uid != me && fchownat(dfd, subdirs[i], uid, gid, AT_SYMLINK_NOFOLLOW) != 0))
			rc = ows__fail_sys(err, pv->dir, NULL, "cannot create %s in the private folder",
					   subdirs[i]);
	}
	if (rc == 0 && uid != me && fchown(dfd, uid, gid) != 0)
		rc = ows__fail_sys(err, pv->dir, NULL, "cannot hand the private folder over");
	close(dfd);
	if (rc < 0)
		goto fail;
	close(rootfd);
	return 0;
fail:
	ows__rmtree_at(rootfd, id);
	unlinkat(rootfd, lock, 0);
	close(rootfd);
	close(pv->lock_fd);
	pv->lock_fd = -1;
	free(pv->dir);
	pv->dir = NULL;
	return rc;
}

int ows__private_remove(ows__private *pv, ows_error *err)
{
	int rc = 0;
	if (pv->dir) {
		int rootfd = open(pv->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (rootfd >= 0) {
			const char *id = strrchr(pv->dir, '/') + 1;
			char lock[80];
			snprintf(lock, sizeof(lock), "%s.lock", id);
			if (ows__rmtree_at(rootfd, id) != 0)
				rc = ows__fail_sys(err, pv->dir, "remove it by hand",
						   "cannot remove the private folder completely");
			unlinkat(rootfd, lock, 0);
			close(rootfd);
			/* The per-user root goes too once no session uses it. */
			rmdir(pv->root);
		}
	}
	if (pv->lock_fd >= 0)
		close(pv->lock_fd);
	pv->lock_fd = -1;
	free(pv->dir);
	free(pv->root);
	pv->dir = pv->root = NULL;
	return rc;
}
