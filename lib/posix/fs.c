/*
 * Private folders and their removal.
 *
 * Each session gets <base>/owsandbox-<uid>/<id>/ with home/, tmp/ and
 * cache/.  The host holds an flock() on the session folder itself for as
 * long as it lives; a folder whose lock is free belongs to a host that died,
 * and the next open removes it.  A folder is built under a dot-name and
 * renamed into place with the lock already held, so no cleaner ever sees a
 * live folder unlocked.  The sandbox cannot take the lock away: it cannot
 * unlink or replace its own folder, whose parent it does not see.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "posix.h"

/* Below this depth a subtree is moved up to the top instead of descended into. */
#define RMTREE_MAX_DEPTH 64

static int empty_dir(int topfd, int dirfd, int depth, unsigned *moved);

DIR *ows__opendir_at(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

/* Empties the folder open at `dirfd`; `topfd` is where too-deep trees are moved. */
static int empty_dir(int topfd, int dirfd, int depth, unsigned *moved)
{
	int rc = 0;
	DIR *d = ows__opendir_at(dirfd);
	if (!d)
		return -1;
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
			/* The inode number keeps the name unique among earlier moves. */
			char name[48];
			snprintf(name, sizeof(name), ".deep-%llu", (unsigned long long)e->d_ino);
			if (renameat(dirfd, e->d_name, topfd, name) != 0)
				rc = -1;
			(*moved)++;
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
		if (empty_dir(topfd, sub, depth + 1, moved) != 0)
			rc = -1;
		close(sub);
		if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)
			rc = -1;
	}
	closedir(d);
	return rc;
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
		rc = empty_dir(fd, fd, 0, &moved);
		if (moved == before)
			break;
	}
	close(fd);
	if (unlinkat(parentfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

/*
 * Opens `base`, the folder that holds the per-user root, making what is
 * missing of it (0755, like mkdir -p).  No part of it may be a link, or a
 * folder others may write in without the sticky bit: someone else could put
 * a folder of their choosing in its place, under the per-user root's checks.
 */
static int open_base(const char *base, ows_error *err)
{
	if (base[0] != '/')
		return ows__fail(err, OWS_EINVAL, EINVAL, base, "give an absolute path",
				 "the private folder root is not absolute");
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *rest = base;
	while (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) != 0)
			break;
		if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
			close(fd);
			return ows__fail(err, OWS_EPERM, EPERM, base,
					 "choose a private_root no other user can write in",
					 "a folder on the way to the private folder root is "
					 "writable by everyone, without the sticky bit");
		}
		while (*rest == '/')
			rest++;
		if (!*rest)
			return fd;
		char name[NAME_MAX + 1];
		size_t n = strcspn(rest, "/");
		if (n >= sizeof(name)) {
			close(fd);
			return ows__fail(err, OWS_EINVAL, ENAMETOOLONG, base, NULL,
					 "a name in the private folder root is too long");
		}
		memcpy(name, rest, n);
		name[n] = '\0';
		rest += n;
		bool made = mkdirat(fd, name, 0755) == 0;
		if (!made && errno != EEXIST) {
			close(fd);
			return ows__fail_sys(err, base, "check that the folder above it is writable",
					     "cannot create the private folder root");
		}
		int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (sub < 0 && (errno == ELOOP || errno == ENOTDIR))
			return ows__fail(err, OWS_EPERM, errno, base,
					 "give the private_root without links in it",
					 "a part of the private folder root is a link or not a folder");
		/* The umask must not close what a root host's account passes through. */
		if (sub >= 0 && made && fchmod(sub, 0755) != 0) {
			close(sub);
			sub = -1;
		}
		fd = sub;
	}
	int rc = ows__fail_sys(err, base, NULL, "cannot open the private folder root");
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Opens (creating if needed) the per-user root, refusing one we do not own. */
static int open_root(const char *base, const char *root, uid_t owner, mode_t mode,
		     ows_error *err)
{
	int basefd = open_base(base, err);
	if (basefd < 0)
		return basefd;
	const char *name = strrchr(root, '/') + 1;
	if (mkdirat(basefd, name, mode) != 0 && errno != EEXIST) {
		close(basefd);
		return ows__fail_sys(err, root, "check that the folder above it is writable",
				     "cannot create the private folder root");
	}
	int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(basefd);
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
	DIR *d = ows__opendir_at(rootfd);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || e->d_name[1] == '.'))
			continue;
		int fd = openat(rootfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			unlinkat(rootfd, e->d_name, 0); /* not a folder: nothing of ours */
			continue;
		}
		struct stat st;
		/* A folder still being built is young; leave it to its builder. */
		bool building = e->d_name[0] == '.' && fstat(fd, &st) == 0 &&
				st.st_mtime > time(NULL) - 60;
		if (!building && flock(fd, LOCK_EX | LOCK_NB) == 0)
			ows__rmtree_at(rootfd, e->d_name);
		close(fd);
	}
	closedir(d);
}

int ows__private_create(ows__private *pv, const char *base, const char *id, uid_t uid,
			gid_t gid, ows_error *err)
{
	static const char *const subdirs[] = {"home", "tmp", "cache"};
	memset(pv, 0, sizeof(*pv));
	pv->lock_fd = -1;
	uid_t me = geteuid();
	/* A root host's root is 0711 so that the account it drops to can pass through. */
	mode_t mode = (me == 0 && uid != 0) ? 0711 : 0700;
	if (!(pv->root = ows__asprintf(err, "%s/owsandbox-%u", base, (unsigned)me)))
		return OWS_ENOMEM;
	int rootfd = open_root(base, pv->root, me, mode, err);
	if (rootfd < 0)
		return rootfd;
	remove_stale(rootfd);

	int rc = 0;
	char building[80];
	snprintf(building, sizeof(building), ".new-%s", id);
	if (!(pv->dir = ows__asprintf(err, "%s/%s", pv->root, id))) {
		close(rootfd);
		return OWS_ENOMEM;
	}
	int dfd = -1;
	if (mkdirat(rootfd, building, 0700) != 0 ||
	    (dfd = openat(rootfd, building, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    flock(dfd, LOCK_EX) != 0) {
		rc = ows__fail_sys(err, pv->dir, "check that the folder is writable",
				   "cannot create the private folder");
		goto fail;
	}
	for (size_t i = 0; i < OWS__ARRAY_LEN(subdirs) && rc == 0; i++)
		if (mkdirat(dfd, subdirs[i], 0700) != 0 ||
		    (uid != me && fchownat(dfd, subdirs[i], uid, gid, AT_SYMLINK_NOFOLLOW) != 0))
			rc = ows__fail_sys(err, pv->dir, NULL, "cannot create %s in the private folder",
					   subdirs[i]);
	if (rc == 0 && uid != me && fchown(dfd, uid, gid) != 0)
		rc = ows__fail_sys(err, pv->dir, NULL, "cannot hand the private folder over");
	if (rc == 0 && renameat(rootfd, building, rootfd, id) != 0)
		rc = ows__fail_sys(err, pv->dir, NULL, "cannot move the private folder into place");
	if (rc < 0)
		goto fail;
	pv->lock_fd = dfd;
	close(rootfd);
	return 0;
fail:
	ows__rmtree_at(rootfd, building);
	if (dfd >= 0)
		close(dfd);
	close(rootfd);
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
			if (ows__rmtree_at(rootfd, id) != 0)
				rc = ows__fail_sys(err, pv->dir, "remove it by hand",
						   "cannot remove the private folder completely");
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

/* ------------------------------------------------- a file locked from birth */

bool ows__tmpfile_off;

#ifdef O_TMPFILE /* Linux; macOS has none and takes the named file (create_named) */
/* O_TMPFILE refused because the file system or kernel has none (not a real error). */
static bool no_tmpfile(int e)
{
	return e == EOPNOTSUPP || e == EISDIR || e == EINVAL;
}
#endif

#ifdef O_TMPFILE
/* Locks the unnamed file `fd`, writes `head` and links it to `name`; closes it on failure. */
static int link_unnamed(int fd, int dirfd, const char *name, const char *head)
{
	char proc[40];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (flock(fd, LOCK_EX) != 0 || ows__plat_write_all(fd, head, strlen(head)) != 0 ||
	    linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}
#endif

/*
 * The same through a named temporary file, .NAME.XXXXXX (O_EXCL, a name no one
 * else made), linked to `name` once locked and written, then unlinked whatever
 * happened.  Linked, not renamed: a rename would replace a file already called
 * `name`, where the caller needs EEXIST.  No fsync: the caller syncs what must
 * last, and an empty file is what a crash before the write leaves either way.
 */
static int create_named(int dirfd, const char *name, const char *head)
{
	char tmp[NAME_MAX + 1];
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		unsigned long r = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16) ^
				  (unsigned long)tries * 2654435761UL;
		if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%06lx", name, r & 0xffffff) >= sizeof(tmp)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1; /* EEXIST a hundred times: someone is making these names on purpose */
	bool linked = flock(fd, LOCK_EX) == 0 && ows__plat_write_all(fd, head, strlen(head)) == 0 &&
		      linkat(dirfd, tmp, dirfd, name, 0) == 0;
	int e = errno;
	unlinkat(dirfd, tmp, 0);
	if (!linked) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int ows__create_locked_at(int dirfd, const char *name, const char *head)
{
#ifdef O_TMPFILE
	if (!ows__tmpfile_off) {
		int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			return link_unnamed(fd, dirfd, name, head);
		if (!no_tmpfile(errno))
			return -1;
	}
#endif
	return create_named(dirfd, name, head);
}

bool ows__is_create_temp(const char *name)
{
	size_t n = strlen(name);
	if (n < 9 || name[0] != '.' || name[n - 7] != '.')
		return false;
	for (size_t i = n - 6; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

/* ------------------------------------------------------ proof probes */

char *ows__canary_plant(const char *home, const char *id, ows_error *err)
{
	char *path = ows__asprintf(err, "%s/.owsandbox-canary-%s", home, id);
	if (!path)
		return NULL;
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(path); /* a home we cannot write: the other checks still stand */
		return NULL;
	}
	if (fchmod(fd, 0644) != 0 || write(fd, id, strlen(id)) < 0) {
		/* whatever the umask, a readable file is the point; its name alone proves it */
	}
	close(fd);
	return path;
}
