/*
 * The guard's walk: every repository git or Mercurial would find under a
 * read-write folder, at open and after each command; and every FIFO there,
 * at open and before each command.
 *
 * git takes a folder for a repository when it holds `.git` (a folder, a
 * `gitdir:` file or a link), and when the folder is itself a git directory
 * (setup.c's is_git_directory: a HEAD, with objects and refs beside it or
 * in the folder a `commondir` names).  A `cd` into either, under a prompt
 * that runs `git status`, runs what that repository's config and hooks
 * name.  Mercurial takes any `.hg` the same way, and runs its hgrc's hooks
 * and extensions.  The test here is a superset of git's (names, not
 * contents), so nothing git would take is missed.
 *
 * Nothing is followed: each folder is opened with no link anywhere on its
 * way below the session folder, so a link the agent swaps in mid-walk
 * leads nowhere.  The walk goes as deep as a path can be named (PATH_MAX),
 * which is as deep as git itself runs (it cannot stat its way further).
 * One descriptor is open at a time; what is left to read is a list.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#include <linux/openat2.h>
#endif

#include "posix.h"

/* The names a folder's listing is read for. */
enum {
	HAS_DOTGIT = 1 << 0,
	HAS_DOTHG = 1 << 1,
	HAS_HEAD = 1 << 2,
	HAS_OBJECTS = 1 << 3,
	HAS_REFS = 1 << 4,
	HAS_COMMONDIR = 1 << 5,
};

static const struct {
	const char *name;
	unsigned bit;
} marks[] = {
	{".git", HAS_DOTGIT}, {".hg", HAS_DOTHG}, {"HEAD", HAS_HEAD},
	{"objects", HAS_OBJECTS}, {"refs", HAS_REFS}, {"commondir", HAS_COMMONDIR},
};

/* `rel` below `root`, a folder, with no link on the way ("" is root itself). */
static int open_below(int root, const char *rel)
{
	if (!rel[0])
		return openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#ifdef __APPLE__
	return openat(root, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW_ANY | O_CLOEXEC);
#else
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
#endif
}

/*
 * A folder of the caller's own that it may not read or enter: made
 * readable and searchable to its owner (u+rx), then opened.  The agent
 * under `landlock` is the person: a folder it closed to its owner would
 * hide a repository from the walk until the person opened it again.
 */
static int open_repaired(int root, const char *rel)
{
	int fd = open_below(root, rel);
#ifdef __linux__
	if (fd >= 0 || errno != EACCES)
		return fd;
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	int p = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
	struct stat st;
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
	if (p >= 0 && fstat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	    chmod(proc, (st.st_mode & 07777) | S_IRUSR | S_IXUSR) == 0)
		fd = open_below(root, rel);
	if (p >= 0)
		close(p);
#endif
	return fd;
}

static int add(ows__repos *r, const char *folder, const char *rel, const char *name,
	       enum ows__repo_kind kind, const struct stat *st, ows_error *err)
{
	if (r->len == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		ows__repo *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		r->v = v;
		r->cap = cap;
	}
	ows__repo *e = &r->v[r->len];
	e->path = ows__asprintf(err, "%s%s%s%s%s", folder, rel[0] ? "/" : "", rel,
				name ? "/" : "", name ? name : "");
	if (!e->path)
		return OWS_ENOMEM;
	e->kind = kind;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	r->len++;
	return 0;
}

/*
 * Reads one folder: reports what git or Mercurial would take for a
 * repository there, and queues its subfolders.  A folder that cannot be
 * opened is counted in r->unread (the agent may have closed one to the
 * person), never an error: the walk must not stop at it.
 */
static int read_folder(int root, const char *folder, const char *rel, bool repair,
		       ows__strv *todo, ows__repos *r, ows_error *err)
{
	int fd = repair && rel[0] ? open_repaired(root, rel) : open_below(root, rel);
	struct stat st;
	/* Listed but not entered: what is below could not be opened. */
	if (repair && fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & S_IXUSR) == 0)
		(void)fchmod(fd, (st.st_mode & 07777) | S_IXUSR);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		r->unread++;
		return 0;
	}
	size_t base = strlen(folder) + 1 + strlen(rel);
	unsigned has = 0;
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		const char *n = e->d_name;
		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		for (size_t i = 0; i < OWS__ARRAY_LEN(marks); i++)
			if (strcmp(n, marks[i].name) == 0)
				has |= marks[i].bit;
		/* One stat: where the type is unknown, and for a FIFO's identity. */
		bool dir = e->d_type == DT_DIR, fifo = false;
		if (e->d_type == DT_UNKNOWN || e->d_type == DT_FIFO) {
			bool there = fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) == 0;
			dir = there && S_ISDIR(st.st_mode);
			fifo = there && S_ISFIFO(st.st_mode);
		}
		/* A FIFO: the sandbox must not meet one it was not shown covered. */
		if (fifo)
			rc = add(r, folder, rel, n, OWS_REPO_FIFO, &st, err);
		/* Deeper than a path can name: git cannot run there either. */
		if (dir && base + 1 + strlen(n) < PATH_MAX - 16)
			rc = ows__strv_pushf(todo, err, "%s%s%s", rel, rel[0] ? "/" : "", n);
	}
	if (rc == 0 && (has & HAS_DOTGIT) && fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0)
		rc = add(r, folder, rel, ".git", OWS_REPO_DOTGIT, &st, err);
	if (rc == 0 && (has & HAS_DOTHG) && fstatat(fd, ".hg", &st, AT_SYMLINK_NOFOLLOW) == 0)
		rc = add(r, folder, rel, ".hg", OWS_REPO_HG, &st, err);
	bool gitdir = (has & HAS_HEAD) &&
		      ((has & (HAS_OBJECTS | HAS_REFS)) == (HAS_OBJECTS | HAS_REFS) ||
		       (has & HAS_COMMONDIR));
	if (rc == 0 && gitdir && fstat(fd, &st) == 0)
		rc = add(r, folder, rel, NULL, OWS_REPO_GITDIR, &st, err);
	closedir(d);
	return rc;
}

int ows__repos_find(const char *folder, bool repair, ows__repos *r, ows_error *err)
{
	int root = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		r->unread++;
		return 0;
	}
	ows__strv todo = {0};
	int rc = read_folder(root, folder, "", repair, &todo, r, err);
	while (rc == 0 && todo.len) {
		char *rel = todo.v[--todo.len];
		todo.v[todo.len] = NULL;
		rc = read_folder(root, folder, rel, repair, &todo, r, err);
		free(rel);
	}
	ows__strv_free(&todo);
	close(root);
	return rc;
}

void ows__repos_free(ows__repos *r)
{
	for (size_t i = 0; i < r->len; i++)
		free(r->v[i].path);
	free(r->v);
	*r = (ows__repos){0};
}
