/*
 * ACL grants for the account provider, their journal, and crash recovery;
 * the ACL format is in ../wall/acl_codec.c, the walk over a folder in acl_walk.c.
 *
 * What a grant leaves on the person's files (ACCT = the account, PERSON =
 * the owner of the granted folder):
 *
 *   read-write   every node: u:ACCT:rwX (x on folders and on files that
 *                already have an x bit); every folder also gets the default
 *                entries d:u:ACCT:rwx and d:u:PERSON:rwx, so the person can
 *                edit what the agent creates.
 *   read-only    every node: u:ACCT:r-X.  No default entries: a default ACL
 *                replaces the umask for the person's own new files, and a
 *                read-only share should not change how the person's files
 *                are created.  Files the person adds mid-session are seen by
 *                the account through their "other" bits only.
 *   traverse     the folders from the home root down to the granted folder's
 *                parent: u:ACCT:--x.
 *
 * The mask is widened just enough for the new entry (a node without an ACL
 * gets mask = group bits | the entry) and the owning group's entry
 * (group_obj) is never touched, so the mode's group bits show the mask while
 * the group itself gets no more than before.  Revoke removes the account's
 * entries; a node that had no ACL of its own goes back to a minimal ACL, which
 * the kernel turns back into exactly the old mode bits.  A node that had an
 * ACL of its own is recorded in the journal (a P line, with its old mask)
 * before the first grant touches it, and revoke restores that mask.
 *
 * What is made inside a read-write folder during the session inherits the
 * default entries: u:ACCT and u:PERSON on everything, and on folders
 * d:u:ACCT and d:u:PERSON, which the next files would inherit in turn.
 * Revoke walks the whole tree and takes them off every node the journal
 * does not list: the account's entries, the default entries planted for the
 * person, the person's entry on the person's own nodes (it names their
 * owner, so it never decided anything), and then the mask when nothing
 * named is left (settle_unlisted() gives the rule for the group bits).  On
 * what the agent made (the account's nodes) u:PERSON stays: it is how the
 * person reaches those files.  Changing the account's nodes takes the
 * account's rights or root's; a revoke run by the person skips them.
 *
 * Every entry naming the account is ours: the accounts are hidden system
 * accounts that only owsandbox grants to.  What other live sessions still
 * need (same account, overlapping folders or traverse chains) is kept when
 * one of them revokes.
 *
 * Safety: the walk works on descriptors only.  The granted folder and the
 * home root are opened with RESOLVE_NO_SYMLINKS; below them every name is
 * opened with O_NOFOLLOW relative to its parent's descriptor, and the ACL is
 * read and written through that descriptor (fgetxattr/fsetxattr), or, for a
 * node that cannot be opened for reading (mode 000, a FIFO, a device),
 * through /proc/self/fd/N of an O_PATH descriptor, which names exactly that
 * inode.  Symbolic links are never followed and never granted; a name that
 * vanishes or changes type during the walk is skipped.  Only nodes owned by
 * the person are changed (others' files, and what the agent created, are
 * left alone, and a revoke touches the account's nodes only as above);
 * other filesystems and mount points are not entered.
 *
 * The journal: <state_dir>/journal/<uid>-<name>/<session>.journal, one per
 * session, created locked (flock; ows__create_locked_at(), which falls back to
 * a named temporary file where the state folder's file system has no
 * O_TMPFILE) and held for the session's lifetime.  A
 * journal whose lock is free belongs to a host that died: cleanup revokes
 * what it still lists and removes it.  A lock file, <uid>-<name>/.lock,
 * serialises every grant, revoke and cleanup of one person.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "acl.h"

/* ------------------------------------------------------------ journals */

struct ows__journal {
	struct ows__journal *next;
	char id[64];
	char *dir;      /* <state_dir>/journal/<uid> */
	int dirfd;
	int fd;         /* the journal, O_RDWR|O_APPEND, flock held */
	bool implicit;  /* opened by ows_acl_grant(): closed with its last grant */
};

/*
 * The journals this process holds.  The one piece of process-wide state in
 * the library: a flock belongs to an open file, so a journal's liveness is
 * the process's, and ows_acl_grant() must find the journal it opened.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static ows__journal *registry;

static bool id_is_safe(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n > 63 || id[0] == '.' || id[0] == '-')
		return false;
	for (const char *c = id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return false;
	return true;
}

/* A user name as part of a file name: any name passwd can hold but a '/' (none may). */
static bool user_name_fits(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32)
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/*
 * A person's journal folder is <uid>-<user name>: a uid is recycled once its
 * person is deleted, and that person's journals (the folders they granted,
 * and P records of inodes that may be reused) are not the next holder's.
 * Someone given a deleted person's name and uid is taken for that person.
 * The folder of the layout before, <uid>, may hold a dead host's journals
 * from before an upgrade: cleanup takes those for its person only when
 * their grants lie in that person's home (see ows_machine_cleanup).
 */
static int journal_leaf(uid_t uid, char *buf, size_t len, char *home, size_t home_len,
			ows_error *err)
{
	struct passwd pw, *res = NULL;
	char pwbuf[4096];
	int e = getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res);
	if (!res || !user_name_fits(pw.pw_name))
		return ows__fail(err, OWS_EPERM, e ? e : ENOENT, NULL, "run as a person with a passwd entry",
				 "uid %u has no safe user name for the grant journal", (unsigned)uid);
	if ((size_t)snprintf(buf, len, "%u-%s", (unsigned)uid, pw.pw_name) >= len ||
	    (home && (size_t)snprintf(home, home_len, "%s", pw.pw_dir) >= home_len))
		return ows__fail(err, OWS_EINVAL, ENAMETOOLONG, pw.pw_name, NULL, "user name or home too long");
	return 0;
}

/* Opens <state_dir>/journal/<leaf>, a person's folder there; creates it if asked. */
static int open_uid_dir(const ows_config *c, uid_t uid, const char *name, bool create,
			char **dirpath, ows_error *err)
{
	char *top = ows__asprintf(err, "%s/journal", c->state_dir);
	if (!top)
		return OWS_ENOMEM;
	int tfd = (int)ows__acl_openat2(AT_FDCWD, top, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
	if (tfd < 0) {
		int rc = ows__fail(err, OWS_ESETUP, errno, top,
				   "run `owsbx machine sandbox setup` as root (it creates the state folder)",
				   "the grant journal folder is missing");
		free(top);
		return rc;
	}
	if (create && mkdirat(tfd, name, 0700) != 0 && errno != EEXIST) {
		int rc = ows__fail(err, errno == EACCES ? OWS_ESETUP : OWS_ESYS, errno, top,
				   "run `owsbx machine sandbox setup` as root, or ask for the sandbox group",
				   "cannot create your folder in the grant journal");
		close(tfd);
		free(top);
		return rc;
	}
	int fd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(tfd);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		int rc = (e == ENOENT && !create) ? OWS_ENOTFOUND
						  : ows__fail(err, OWS_ESYS, e, top, NULL,
							      "cannot open your folder in the grant journal");
		free(top);
		return rc;
	}
	if (st.st_uid != uid || (st.st_mode & 0077)) {
		close(fd);
		int rc = ows__fail(err, OWS_EPERM, EPERM, top,
				   "remove the folder named after your uid there; it is not yours alone",
				   "the grant journal folder %s is not owned by uid %u alone", name,
				   (unsigned)uid);
		free(top);
		return rc;
	}
	if (dirpath && !(*dirpath = ows__asprintf(err, "%s/%s", top, name))) {
		close(fd);
		free(top);
		return OWS_ENOMEM;
	}
	free(top);
	return fd;
}

/* Serialises grants, revokes and cleanups of one person across processes. */
static int lock_dir(int dirfd, ows_error *err)
{
	int fd = openat(dirfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ows__fail_sys(err, ".lock", NULL, "cannot open the grant journal's lock");
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			int rc = ows__fail_sys(err, ".lock", NULL, "cannot lock the grant journal");
			close(fd);
			return rc;
		}
	}
	return fd;
}

static void unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int read_all(int fd, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -1;
	for (;;) {
		if (n == cap) {
			char *b = realloc(buf, cap *= 2);
			if (!b) {
				free(buf);
				return -1;
			}
			buf = b;
		}
		ssize_t r = pread(fd, buf + n, cap - n, (off_t)n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int journal_state(int fd, ows__jstate *st, ows_error *err)
{
	char *text;
	size_t len;
	if (read_all(fd, &text, &len) != 0)
		return ows__fail_sys(err, "grant journal", NULL, "cannot read the grant journal");
	int rc = ows__jstate_parse(text, len, st, err);
	free(text);
	return rc;
}

static int journal_append(int fd, const char *line, bool sync, ows_error *err)
{
	size_t len = strlen(line);
	if (write(fd, line, len) != (ssize_t)len || (sync && fdatasync(fd) != 0))
		return ows__fail_sys(err, "grant journal", "check the free space under the state folder",
				     "cannot write to the grant journal");
	return 0;
}

static bool is_journal_name(const char *name)
{
	size_t n = strlen(name);
	return n > 8 && n <= 80 && name[0] != '.' && strcmp(name + n - 8, ".journal") == 0;
}

/* Live grants the walk must keep: other live journals' and `own`'s, except `skip`. */
typedef struct keep {
	other *v;
	size_t n;
	ows__strv live_paths; /* live journals of others with a grant for the account */
} keep;

static void keep_free(keep *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].path);
		free(k->v[i].home);
	}
	free(k->v);
	ows__strv_free(&k->live_paths);
	memset(k, 0, sizeof(*k));
}

static int keep_add_state(keep *k, const ows__jstate *st, uint32_t acct, const char *skip_path,
			  ows_error *err)
{
	for (size_t i = 0; i < st->ngrants; i++) {
		const ows__jgrant *g = &st->grants[i];
		if (g->acct_uid != acct || (skip_path && strcmp(g->path, skip_path) == 0))
			continue;
		other *v = realloc(k->v, (k->n + 1) * sizeof(*v));
		if (!v)
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		k->v = v;
		other *o = &k->v[k->n];
		memset(o, 0, sizeof(*o));
		o->person = g->person_uid;
		o->target = ows__acl_target_of(g->access);
		o->path = strdup(g->path);
		o->home = g->home ? strdup(g->home) : NULL;
		if (!o->path || (g->home && !o->home)) {
			free(o->path);
			free(o->home);
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		}
		o->plen = strlen(o->path);
		o->hlen = o->home ? strlen(o->home) : 0;
		k->n++;
	}
	return 0;
}

/*
 * Collects the live grants for `acct` in the person's journal folder: every
 * journal whose lock is held by a host (not `self_fd`'s), plus the grants
 * of `self_state` other than `skip_path`.
 */
static int keep_collect(int dirfd, const char *dirpath, int self_fd, const ows__jstate *self_state,
			uint32_t acct, const char *skip_path, keep *k, ows_error *err)
{
	memset(k, 0, sizeof(*k));
	int rc = self_state ? keep_add_state(k, self_state, acct, skip_path, err) : 0;
	if (rc < 0)
		return rc;
	struct stat self_st = {0};
	if (self_fd >= 0)
		fstat(self_fd, &self_st);
	DIR *d = ows__opendir_at(dirfd);
	if (!d)
		return ows__fail_sys(err, dirpath, NULL, "cannot list the grant journal");
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (!is_journal_name(e->d_name))
			continue;
		int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) != 0 || (self_fd >= 0 && st.st_ino == self_st.st_ino && st.st_dev == self_st.st_dev)) {
			close(fd);
			continue;
		}
		if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			close(fd); /* nobody holds it: a dead host's, for cleanup */
			continue;
		}
		/* Held: a live host's journal (or one of ours, opened by this process). */
		ows__jstate js;
		if (journal_state(fd, &js, NULL) == 0) {
			size_t before = k->n;
			rc = keep_add_state(k, &js, acct, NULL, err);
			if (rc == 0 && k->n > before)
				rc = ows__strv_pushf(&k->live_paths, err, "%s/%s", dirpath, e->d_name);
			ows__jstate_free(&js);
		}
		close(fd);
	}
	closedir(d);
	return rc;
}

/* Appends P records to the journals of the live hosts that keep those nodes. */
static void hand_over(const keep *k, const ows__strv *lines)
{
	if (!lines->len)
		return;
	for (size_t i = 0; i < k->live_paths.len; i++) {
		int fd = open(k->live_paths.v[i], O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		for (size_t j = 0; j < lines->len; j++)
			if (write(fd, lines->v[j], strlen(lines->v[j])) < 0)
				break;
		close(fd);
	}
}

/*
 * Revokes one grant listed in `st` (the journal open at `jfd`), keeping what
 * live grants still need, then writes its R line.  Caller holds the dir lock.
 */
static int revoke_one(int dirfd, const char *dirpath, int jfd, const ows__jstate *st,
		      const ows__jgrant *g, ows_error *err)
{
	keep k;
	int rc = keep_collect(dirfd, dirpath, jfd, st, g->acct_uid, g->path, &k, err);
	if (rc < 0) {
		keep_free(&k);
		return rc;
	}
	ows__strv lines = {0};
	walk *w = calloc(1, sizeof(*w));
	if (!w) {
		keep_free(&k);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	w->acct = g->acct_uid;
	w->person = g->person_uid;
	w->own = T_NONE;
	w->others = k.v;
	w->nothers = k.n;
	w->pre = st;
	w->jfd = -1;
	w->handover = &lines;
	rc = ows__acl_walk_grant(w, g->path, g->home, err);
	free(w);
	if (rc == 0) {
		hand_over(&k, &lines);
		char *line = ows__jline_revoke(g->acct_uid, g->path);
		rc = line ? journal_append(jfd, line, false, err)
			  : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		free(line);
	}
	ows__strv_free(&lines);
	keep_free(&k);
	return rc;
}

/* Creates <dir>/<id>.journal, locked before anyone can see it; adopts a dead host's. */
static int journal_create(int dirfd, const char *dirpath, const char *id, uid_t uid, ows_error *err)
{
	char name[96];
	snprintf(name, sizeof(name), "%s.journal", id);
	char head[32];
	snprintf(head, sizeof(head), "owsj1 %u\n", (unsigned)uid);
	int fd = ows__create_locked_at(dirfd, name, head);
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, fl | O_APPEND);
		return fd;
	}
	if (errno != EEXIST)
		return ows__fail_sys(err, dirpath, "check that the state folder's file system is writable",
				     "cannot create the grant journal");
	/* A journal of this id exists: adopt it if its host is dead. */
	fd = openat(dirfd, name, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ows__fail_sys(err, dirpath, NULL, "cannot open the grant journal");
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return ows__fail(err, OWS_ESTATE, EBUSY, id, "use a fresh session id",
				 "another live host holds this session's grant journal");
	}
	return fd;
}

int ows__journal_open(const ows_config *c, const char *session_id, ows__journal **out,
		      ows_error *err)
{
	*out = NULL;
	if (!c || !c->state_dir)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "no config");
	if (!id_is_safe(session_id))
		return ows__fail(err, OWS_EINVAL, 0, session_id ? session_id : "(null)",
				 "use letters, digits, '-', '_' and '.'", "bad session id");
	pthread_mutex_lock(&registry_lock);
	for (ows__journal *j = registry; j; j = j->next) {
		if (strcmp(j->id, session_id) == 0) {
			pthread_mutex_unlock(&registry_lock);
			return ows__fail(err, OWS_ESTATE, EBUSY, session_id, NULL,
					 "this session's grant journal is already open");
		}
	}
	pthread_mutex_unlock(&registry_lock);
	ows__journal *j = ows__calloc(1, sizeof(*j), err);
	if (!j)
		return OWS_ENOMEM;
	j->fd = -1;
	snprintf(j->id, sizeof(j->id), "%s", session_id);
	char leaf[64];
	int lr = journal_leaf(geteuid(), leaf, sizeof(leaf), NULL, 0, err);
	if (lr < 0) {
		free(j);
		return lr;
	}
	j->dirfd = open_uid_dir(c, geteuid(), leaf, true, &j->dir, err);
	if (j->dirfd < 0) {
		int rc = j->dirfd;
		free(j);
		return rc;
	}
	int lfd = lock_dir(j->dirfd, err);
	if (lfd < 0) {
		close(j->dirfd);
		free(j->dir);
		free(j);
		return lfd;
	}
	j->fd = journal_create(j->dirfd, j->dir, session_id, geteuid(), err);
	unlock_dir(lfd);
	if (j->fd < 0) {
		int rc = j->fd;
		close(j->dirfd);
		free(j->dir);
		free(j);
		return rc;
	}
	pthread_mutex_lock(&registry_lock);
	j->next = registry;
	registry = j;
	pthread_mutex_unlock(&registry_lock);
	*out = j;
	return 0;
}

static void journal_forget(ows__journal *j)
{
	pthread_mutex_lock(&registry_lock);
	for (ows__journal **p = &registry; *p; p = &(*p)->next) {
		if (*p == j) {
			*p = j->next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (j->fd >= 0)
		close(j->fd);
	close(j->dirfd);
	free(j->dir);
	free(j);
}

/* Revokes every grant still listed; returns how many, or a negative code. */
static int revoke_all(int dirfd, const char *dirpath, int jfd, ows_error *err)
{
	ows__jstate st;
	int rc = journal_state(jfd, &st, err);
	if (rc < 0)
		return rc;
	int count = 0;
	/* Last grant first: a later, narrower grant goes before the wider one. */
	for (size_t i = st.ngrants; i-- > 0;) {
		ows__jgrant g = st.grants[i];
		st.ngrants = i; /* the grants still to go count as live for this one */
		int r = revoke_one(dirfd, dirpath, jfd, &st, &g, err);
		st.ngrants = i + 1;
		if (r < 0)
			rc = r;
		else
			count++;
	}
	ows__jstate_free(&st);
	return rc < 0 ? rc : count;
}

int ows__journal_close(ows__journal *j, ows_error *err)
{
	if (!j)
		return 0;
	int lfd = lock_dir(j->dirfd, err);
	if (lfd < 0) {
		journal_forget(j); /* the lock goes with it: cleanup will revoke */
		return lfd;
	}
	int rc = revoke_all(j->dirfd, j->dir, j->fd, err);
	if (rc >= 0) {
		char name[96];
		snprintf(name, sizeof(name), "%s.journal", j->id);
		unlinkat(j->dirfd, name, 0);
		rc = 0;
	}
	/* On failure the journal stays, unlocked once closed: the next cleanup retries. */
	unlock_dir(lfd);
	journal_forget(j);
	return rc;
}

int ows__journal_close_session(const ows_config *c, const char *session_id, ows_error *err)
{
	ows__journal *j = NULL;
	pthread_mutex_lock(&registry_lock);
	for (j = registry; j; j = j->next)
		if (strcmp(j->id, session_id ? session_id : "") == 0)
			break;
	pthread_mutex_unlock(&registry_lock);
	return j ? ows__journal_close(j, err) : 0;
}

static ows__journal *journal_find(const char *session_id)
{
	ows__journal *j;
	pthread_mutex_lock(&registry_lock);
	for (j = registry; j; j = j->next)
		if (strcmp(j->id, session_id) == 0)
			break;
	pthread_mutex_unlock(&registry_lock);
	return j;
}

/* ---------------------------------------------------------- public calls */

static int resolve_account(const char *account, uint32_t *uid, ows_error *err)
{
	if (!account || !ows__name_is_safe(account))
		return ows__fail(err, OWS_EINVAL, 0, account ? account : "(null)", NULL,
				 "bad account name");
	struct passwd pw, *res = NULL;
	char buf[4096];
	int e = getpwnam_r(account, &pw, buf, sizeof(buf), &res);
	if (!res)
		return ows__fail(err, OWS_ESETUP, e, account,
				 "run `owsbx machine sandbox setup` as root", "no such account");
	if (pw.pw_uid == 0)
		return ows__fail(err, OWS_EINVAL, 0, account, NULL, "will not grant to root");
	*uid = pw.pw_uid;
	return 0;
}

static char *clean_copy(const char *p, ows_error *err)
{
	char *s = ows__strdup(p, err);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static int acl_grant(const ows_config *c, const char *session_id, const char *account,
		     const char *path_in, ows_access access, const char *home_in, ows_error *err)
{
	if (!c)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "config is NULL");
	if (access != OWS_ACCESS_RO && access != OWS_ACCESS_RW)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "bad access");
	uint32_t acct;
	int rc = resolve_account(account, &acct, err);
	if (rc < 0)
		return rc;
	char *path = clean_copy(path_in, err), *home = home_in ? clean_copy(home_in, err) : NULL;
	if (!path || (home_in && !home)) {
		rc = OWS_ENOMEM;
		goto out;
	}
	if (!ows__acl_path_is_clean(path) || (home && !ows__acl_path_is_clean(home))) {
		rc = ows__fail(err, OWS_EINVAL, 0, path, "give absolute paths without '.' or '..'",
			       "bad path to grant");
		goto out;
	}
	if (home && (!ows__acl_under_or_eq(path, strlen(path), home, strlen(home)) || strcmp(path, home) == 0)) {
		rc = ows__fail(err, OWS_EINVAL, 0, path, "grant a folder inside the home, not the home",
			       "the folder is not inside %s", home);
		goto out;
	}
	struct stat st;
	int pfd = (int)ows__acl_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC | O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
	if (pfd < 0 || fstat(pfd, &st) != 0) {
		rc = ows__fail_sys(err, path, "give a folder that exists, with no symbolic link on the way",
				   "cannot open the folder to grant");
		if (pfd >= 0)
			close(pfd);
		goto out;
	}
	close(pfd);
	if (S_ISLNK(st.st_mode)) {
		rc = ows__fail(err, OWS_EINVAL, ELOOP, path, "give the real folder, not a link",
			       "will not grant a symbolic link");
		goto out;
	}
	if (geteuid() != 0 && st.st_uid != geteuid()) {
		rc = ows__fail(err, OWS_EPERM, EPERM, path, "share only folders you own",
			       "the folder belongs to someone else");
		goto out;
	}

	ows__journal *j = journal_find(session_id ? session_id : "");
	if (!j) {
		rc = ows__journal_open(c, session_id, &j, err);
		if (rc < 0)
			goto out;
		j->implicit = true;
	}
	int lfd = lock_dir(j->dirfd, err);
	if (lfd < 0) {
		rc = lfd;
		goto out;
	}
	ows__jstate self;
	rc = journal_state(j->fd, &self, err);
	if (rc == 0) {
		keep k;
		rc = keep_collect(j->dirfd, j->dir, j->fd, &self, acct, path, &k, err);
		char *line = rc == 0 ? ows__jline_grant(account, acct, st.st_uid, access, path, home) : NULL;
		if (rc == 0 && !line)
			rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		if (rc == 0)
			rc = journal_append(j->fd, line, true, err);
		free(line);
		if (rc == 0) {
			walk *w = calloc(1, sizeof(*w));
			if (!w) {
				rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
			} else {
				w->acct = acct;
				w->person = st.st_uid;
				w->own = ows__acl_target_of(access);
				w->others = k.v;
				w->nothers = k.n;
				w->jfd = j->fd;
				rc = ows__acl_walk_grant(w, path, home, err);
				free(w);
			}
			if (rc < 0) {
				/* Take back what was made, so that nothing stays half-granted. */
				ows__jstate now;
				if (journal_state(j->fd, &now, NULL) == 0) {
					for (size_t i = 0; i < now.ngrants; i++)
						if (now.grants[i].acct_uid == acct && strcmp(now.grants[i].path, path) == 0) {
							ows__jgrant g = now.grants[i];
							revoke_one(j->dirfd, j->dir, j->fd, &now, &g, NULL);
							break;
						}
					ows__jstate_free(&now);
				}
			}
		}
		keep_free(&k);
		ows__jstate_free(&self);
	}
	unlock_dir(lfd);
	if (rc < 0 && j->implicit) {
		ows__jstate now;
		if (journal_state(j->fd, &now, NULL) == 0) {
			if (now.ngrants == 0)
				ows__journal_close(j, NULL);
			ows__jstate_free(&now);
		}
	}
out:
	free(path);
	free(home);
	return rc;
}

static int acl_revoke(const ows_config *c, const char *session_id, const char *account,
		      const char *path_in, ows_error *err)
{
	if (!c)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "config is NULL");
	uint32_t acct;
	int rc = resolve_account(account, &acct, err);
	if (rc < 0)
		return rc;
	ows__journal *j = journal_find(session_id ? session_id : "");
	if (!j)
		return ows__fail(err, OWS_ENOTFOUND, 0, session_id ? session_id : "(null)",
				 "revoke from the process that granted; a dead host's grants go with `owsbx machine sandbox cleanup`",
				 "this process holds no grant journal for the session");
	char *path = clean_copy(path_in, err);
	if (!path)
		return OWS_ENOMEM;
	int lfd = lock_dir(j->dirfd, err);
	if (lfd < 0) {
		free(path);
		return lfd;
	}
	ows__jstate st;
	rc = journal_state(j->fd, &st, err);
	bool empty = false;
	if (rc == 0) {
		const ows__jgrant *g = NULL;
		for (size_t i = 0; i < st.ngrants; i++)
			if (st.grants[i].acct_uid == acct && strcmp(st.grants[i].path, path) == 0)
				g = &st.grants[i];
		if (!g) {
			rc = ows__fail(err, OWS_ENOTFOUND, 0, path, NULL,
				       "the session has no grant of this folder to %s", account);
		} else {
			ows__jgrant copy = *g;
			rc = revoke_one(j->dirfd, j->dir, j->fd, &st, &copy, err);
			empty = rc == 0 && st.ngrants == 1;
		}
		ows__jstate_free(&st);
	}
	unlock_dir(lfd);
	if (empty && j->implicit)
		ows__journal_close(j, NULL);
	free(path);
	return rc;
}

/* Does every grant of the journal lie in `home`? */
static bool grants_in_home(const ows__jstate *js, const char *home)
{
	size_t hl = strlen(home);
	for (size_t i = 0; i < js->ngrants; i++) {
		const char *at = js->grants[i].home ? js->grants[i].home : js->grants[i].path;
		if (hl < 2 || !ows__acl_under_or_eq(at, strlen(at), home, hl))
			return false;
	}
	return true;
}

/*
 * Revokes and removes the dead journals in one person's folder.  With
 * `home_only`, a journal is taken only when all its grants lie in that home;
 * any other is left whole, for root's cleanup.
 */
static int cleanup_dir(int dirfd, const char *dirpath, uid_t uid, const char *home_only,
		       ows_error *err)
{
	int lfd = lock_dir(dirfd, err);
	if (lfd < 0)
		return lfd;
	DIR *d = ows__opendir_at(dirfd);
	if (!d) {
		unlock_dir(lfd);
		return ows__fail_sys(err, dirpath, NULL, "cannot list the grant journal");
	}
	int total = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (ows__is_create_temp(e->d_name)) {
			/* A journal half made by a host killed before it linked it: it lists no
			 * grant, and no live host makes one without this folder's lock. */
			unlinkat(dirfd, e->d_name, 0);
			continue;
		}
		if (!is_journal_name(e->d_name))
			continue;
		int fd = openat(dirfd, e->d_name, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0 || st.st_nlink == 0) {
			close(fd); /* a live host's, or already cleaned */
			continue;
		}
		if (st.st_uid != uid) {
			close(fd); /* not the person's: never act on it */
			continue;
		}
		ows__jstate js;
		int r = journal_state(fd, &js, err);
		if (r == 0 && home_only && !grants_in_home(&js, home_only)) {
			ows__jstate_free(&js);
			close(fd); /* perhaps a deleted person's, whose uid is now this one */
			continue;
		}
		if (r == 0) {
			for (size_t i = js.ngrants; i-- > 0;) {
				ows__jgrant g = js.grants[i];
				/* A person's journal acts on that person's files only; root's on anyone's. */
				if (uid != 0 && g.person_uid != uid)
					continue;
				js.ngrants = i;
				int r1 = revoke_one(dirfd, dirpath, fd, &js, &g, err);
				js.ngrants = i + 1;
				if (r1 < 0)
					r = r1;
				else
					total++;
			}
			ows__jstate_free(&js);
		}
		if (r == 0)
			unlinkat(dirfd, e->d_name, 0);
		else
			rc = r;
		close(fd);
	}
	closedir(d);
	unlock_dir(lfd);
	return rc < 0 ? rc : total;
}

int ows__machine_cleanup(const ows_config *c, ows_error *err)
{
	if (!c)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "config is NULL");
	uid_t me = geteuid();
	if (me != 0) {
		/* The person's folder, then the one of the layout before (<uid>). */
		char leaf[64], old[16], home[4096];
		int rc = journal_leaf(me, leaf, sizeof(leaf), home, sizeof(home), err);
		if (rc < 0)
			return rc;
		snprintf(old, sizeof(old), "%u", (unsigned)me);
		int total = 0;
		for (int i = 0; i < 2 && rc >= 0; i++) {
			char *dir = NULL;
			int dfd = open_uid_dir(c, me, i == 0 ? leaf : old, false, &dir, err);
			if (dfd == OWS_ENOTFOUND)
				continue; /* nothing granted in that layout */
			if (dfd < 0)
				return dfd;
			rc = cleanup_dir(dfd, dir, me, i == 0 ? NULL : home, err);
			close(dfd);
			free(dir);
			if (rc > 0)
				total += rc;
		}
		return rc < 0 ? rc : total;
	}
	/* Root: every person's folder, of either layout, whose owner matches its uid. */
	char *top = ows__asprintf(err, "%s/journal", c->state_dir);
	if (!top)
		return OWS_ENOMEM;
	int tfd = (int)ows__acl_openat2(AT_FDCWD, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
	if (tfd < 0) {
		int rc = ows__fail(err, OWS_ESETUP, errno, top,
				   "run `owsbx machine sandbox setup` as root (it creates the state folder)",
				   "the grant journal folder is missing");
		free(top);
		return rc;
	}
	DIR *d = fdopendir(tfd);
	if (!d) {
		int rc = ows__fail_sys(err, top, NULL, "cannot list the grant journal");
		close(tfd);
		free(top);
		return rc;
	}
	int total = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		errno = 0;
		unsigned long uid = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || errno || uid > UINT32_MAX - 1 ||
		    (*end && (*end != '-' || !user_name_fits(end + 1))))
			continue;
		char *dir = NULL;
		ows_error sub;
		ows_error_clear(&sub);
		/* Root acts for everyone: a deleted person's grants are revoked too. */
		int dfd = open_uid_dir(c, (uid_t)uid, e->d_name, false, &dir, &sub);
		if (dfd < 0)
			continue; /* not owned by that uid: leave it alone */
		int r = cleanup_dir(dfd, dir, (uid_t)uid, NULL, err);
		close(dfd);
		free(dir);
		if (r < 0)
			rc = r;
		else
			total += r;
	}
	closedir(d);
	free(top);
	return rc < 0 ? rc : total;
}

/* ----------------------------------------- the public calls: a NULL config */

/* A NULL config is the machine's (ows_config_load(NULL)), as the header says. */
int ows_acl_grant(const ows_config *c, const char *session_id, const char *account,
		  const char *path_in, ows_access access, const char *home_in, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(c, &machine, &use, err);
	if (rc == 0)
		rc = acl_grant(use, session_id, account, path_in, access, home_in, err);
	ows__config_release(&machine);
	return rc;
}

int ows_acl_revoke(const ows_config *c, const char *session_id, const char *account,
		   const char *path_in, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(c, &machine, &use, err);
	if (rc == 0)
		rc = acl_revoke(use, session_id, account, path_in, err);
	ows__config_release(&machine);
	return rc;
}
