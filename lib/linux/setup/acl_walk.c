/*
 * The descriptor walk that grants one folder to an account and revokes it
 * (see acl.c for what a grant leaves, and the safety rules it keeps).
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

int ows__acl_target_of(ows_access access)
{
	return access == OWS_ACCESS_RW ? T_RW : T_RO;
}

typedef struct node {
	int fd;          /* readable descriptor for f*xattr, or -1 */
	int pathfd;      /* O_PATH descriptor for /proc/self/fd/N, or -1 */
	bool isdir;
	mode_t mode;
	uid_t uid;
	dev_t dev;
	ino_t ino;
} node;

static ssize_t node_get(const node *n, const char *name, void *buf, size_t size)
{
	if (n->fd >= 0)
		return fgetxattr(n->fd, name, buf, size);
	char p[40];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", n->pathfd);
	return getxattr(p, name, buf, size);
}

static int node_set(const node *n, const char *name, const void *buf, size_t size)
{
	if (n->fd >= 0)
		return fsetxattr(n->fd, name, buf, size, 0);
	char p[40];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", n->pathfd);
	return setxattr(p, name, buf, size, 0);
}

static int node_remove(const node *n, const char *name)
{
	if (n->fd >= 0)
		return fremovexattr(n->fd, name);
	char p[40];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", n->pathfd);
	return removexattr(p, name);
}



static void walk_fail(walk *w, int e, const char *what)
{
	if (w->sys_errno)
		return;
	w->sys_errno = e ? e : EIO;
	w->fail_what = what;
	snprintf(w->fail_where, sizeof(w->fail_where), "%.500s", w->path);
}

bool ows__acl_under_or_eq(const char *p, size_t plen, const char *root, size_t rlen)
{
	return plen >= rlen && memcmp(p, root, rlen) == 0 && (p[rlen] == '\0' || p[rlen] == '/');
}

/* What the node at w->path must carry: this call's wish or what a live grant needs. */
static int wanted(const walk *w, bool isdir, bool in_tree)
{
	int t = in_tree ? w->own : (w->own ? T_TRAVERSE : T_NONE);
	for (size_t i = 0; i < w->nothers; i++) {
		const other *o = &w->others[i];
		if (ows__acl_under_or_eq(w->path, w->len, o->path, o->plen)) {
			if (o->target > t)
				t = o->target;
		} else if (isdir && t < T_TRAVERSE && o->home && ows__acl_under_or_eq(o->path, o->plen, w->path, w->len) &&
			   ows__acl_under_or_eq(w->path, w->len, o->home, o->hlen)) {
			t = T_TRAVERSE;
		}
	}
	if (!isdir && t == T_TRAVERSE)
		t = T_NONE;
	return t;
}

static int perm_of(int target, const node *n)
{
	bool x = n->isdir || (n->mode & 0111);
	switch (target) {
	case T_TRAVERSE: return 1;
	case T_RO: return 4 | (x ? 1 : 0);
	case T_RW: return 6 | (x ? 1 : 0);
	default: return -1;
	}
}

/* Journals the node's own ACL before the first grant changes it. */
static bool record_pre(walk *w, const node *n, char type, const acl *before, bool person_added)
{
	if (w->jfd < 0)
		return true;
	ows__jpre p = {.type = type, .dev = n->dev, .ino = n->ino, .mask = ows__acl_perm(before, TAG_MASK),
		       .person_added = person_added, .acct_uid = w->acct};
	char *line = ows__jline_pre(&p);
	if (!line) {
		w->failed_oom = true;
		return false;
	}
	size_t len = strlen(line);
	ssize_t r = write(w->jfd, line, len);
	free(line);
	if (r != (ssize_t)len) {
		walk_fail(w, errno, "cannot write to the grant journal");
		return false;
	}
	return true;
}

static void handover(walk *w, const node *n, char type)
{
	const ows__jpre *p = ows__jstate_find_pre(w->pre, type, n->dev, n->ino, w->acct);
	if (!p || !w->handover)
		return;
	char *line = ows__jline_pre(p);
	if (!line || ows__strv_push(w->handover, line, NULL) < 0)
		w->failed_oom = true;
	free(line);
}

/* After our entry left a journaled node: the mask as it was before any grant. */
static void restore_mask(acl *a, const ows__jpre *p)
{
	int mi = ows__acl_find(a, TAG_MASK, NO_ID);
	if (p && p->mask >= 0) {
		if (mi >= 0)
			a->e[mi].perm = (uint16_t)p->mask;
		else
			ows__acl_set(a, TAG_MASK, NO_ID, (uint16_t)p->mask);
	} else if (mi >= 0 && !ows__acl_has_named(a)) {
		ows__acl_del(a, mi);
	}
}

/*
 * After our entries left a node the journal does not list.  Such a node had
 * no ACL of its own before the grant (one that had is journaled), or was
 * made during the session and inherited the default entries of a
 * read-write grant.  What is left of it is then ours too, and goes:
 *
 *  - a named entry for the node's owner, when the owner is the person: it
 *    can only come from our d:u:PERSON, and it never decides anything (the
 *    owner is checked against user_obj).  On what the agent made, u:PERSON
 *    is how the person reaches those files, and it stays.
 *  - the mask, once no named entry is left: the group class's bits then
 *    become group_obj & mask, what the group effectively had.  For a node
 *    that was there before, the grant set the mask to group_obj | our entry,
 *    so that is group_obj again, the mode as it was (or as a chmod during
 *    the session left it: a chmod of an ACL's node sets the mask).  For a
 *    node made under our default ACL the kernel ignored the umask and gave
 *    group_obj the folder's group bits and the mask the creating mode's,
 *    so the group keeps the narrower of the two, which is what the umask
 *    would have given for the usual umask matching the folder's mode, and
 *    never more than the group could do while the session ran.
 *  - while named entries are left (the person's own, inherited from a
 *    default ACL of the person's) the mask stays as it is: we never widen.
 */
static void settle_unlisted(acl *a, uint32_t owner_entry)
{
	int oi = owner_entry == NO_ID ? -1 : ows__acl_find(a, TAG_USER, owner_entry);
	if (oi >= 0)
		ows__acl_del(a, oi);
	int mi = ows__acl_find(a, TAG_MASK, NO_ID);
	if (mi < 0 || ows__acl_has_named(a))
		return;
	int gi = ows__acl_find(a, TAG_GROUP_OBJ, NO_ID);
	if (gi >= 0)
		a->e[gi].perm &= a->e[mi].perm;
	ows__acl_del(a, mi);
}

/*
 * A grant on a node whose ACL has no room for our entry (ext4 holds about
 * 500 in a block, the kernel 8191) leaves that node as it is: the account
 * cannot reach it, so the wall stays closed there, and the rest of the
 * folder is granted; refusing every session over the folder for one file
 * would leave the person nothing but to remove it by hand.  A revoke only
 * takes entries away and never runs out of room.
 */
static bool skip_if_full(walk *w, int e)
{
	if (w->own == T_NONE || (e != ENOSPC && e != E2BIG))
		return false;
	w->skipped++;
	return true;
}

static void apply_access(walk *w, const node *n, int target)
{
	unsigned char *buf = w->tmp->buf;
	acl *cur = &w->tmp->cur, *next = &w->tmp->next;
	ssize_t len = node_get(n, XA_ACCESS, buf, XA_SIZE);
	bool had = len >= 0;
	if (len < 0) {
		if (errno != ENODATA) {
			walk_fail(w, errno, "cannot read the ACL");
			return;
		}
		ows__acl_from_mode(cur, n->mode);
	} else if (!ows__acl_parse(buf, (size_t)len, cur)) {
		walk_fail(w, EINVAL, "cannot understand the ACL");
		return;
	}
	ows__acl_copy(next, cur);
	int perm = perm_of(target, n);
	int i = ows__acl_find(next, TAG_USER, w->acct);
	if (perm >= 0) {
		if (i < 0 && had && !record_pre(w, n, 'a', cur, false))
			return;
		if (!ows__acl_set(next, TAG_USER, w->acct, (uint16_t)perm)) {
			if (!skip_if_full(w, ENOSPC))
				walk_fail(w, ENOSPC, "the ACL is full");
			return;
		}
		int mi = ows__acl_find(next, TAG_MASK, NO_ID);
		if (mi < 0)
			ows__acl_set(next, TAG_MASK, NO_ID, ows__acl_union(next));
		else
			next->e[mi].perm |= (uint16_t)perm;
		if (w->own == T_NONE && i >= 0)
			handover(w, n, 'a');
	} else {
		const ows__jpre *p = ows__jstate_find_pre(w->pre, 'a', n->dev, n->ino, w->acct);
		uint32_t owner = n->uid == w->person && w->person != w->acct ? w->person : NO_ID;
		if (i >= 0)
			ows__acl_del(next, i);
		if (p && i >= 0)
			restore_mask(next, p);
		else if (!p && (i >= 0 || (owner != NO_ID && ows__acl_find(next, TAG_USER, owner) >= 0)))
			settle_unlisted(next, owner);
	}
	if (ows__acl_eq(cur, next))
		return;
	size_t out = ows__acl_encode(next, buf);
	if (node_set(n, XA_ACCESS, buf, out) != 0) {
		if (errno == EPERM)
			w->skipped++;
		else if (!skip_if_full(w, errno))
			walk_fail(w, errno, "cannot set the ACL");
		return;
	}
	w->changed++;
}

static void apply_default(walk *w, const node *n, int target)
{
	unsigned char *buf = w->tmp->buf;
	acl *cur = &w->tmp->cur, *next = &w->tmp->next;
	ssize_t len = node_get(n, XA_DEFAULT, buf, XA_SIZE);
	bool had = len >= 0;
	if (len < 0) {
		if (errno != ENODATA) {
			walk_fail(w, errno, "cannot read the default ACL");
			return;
		}
		cur->n = 0;
	} else if (!ows__acl_parse(buf, (size_t)len, cur)) {
		walk_fail(w, EINVAL, "cannot understand the default ACL");
		return;
	}
	ows__acl_copy(next, cur);
	int i = ows__acl_find(next, TAG_USER, w->acct);
	bool person = w->person != w->acct;
	if (target == T_RW) {
		if (!had) {
			/* A fresh default ACL starts from the folder's own bits, as setfacl does. */
			acl *access = &w->tmp->access;
			ssize_t alen = node_get(n, XA_ACCESS, buf, XA_SIZE); /* cur is parsed: buf is free */
			if (alen < 0 || !ows__acl_parse(buf, (size_t)alen, access))
				ows__acl_from_mode(access, n->mode);
			next->n = 0;
			ows__acl_set(next, TAG_USER_OBJ, NO_ID, (uint16_t)ows__acl_perm(access, TAG_USER_OBJ));
			ows__acl_set(next, TAG_GROUP_OBJ, NO_ID, (uint16_t)ows__acl_perm(access, TAG_GROUP_OBJ));
			ows__acl_set(next, TAG_OTHER, NO_ID, (uint16_t)ows__acl_perm(access, TAG_OTHER));
		} else if (i < 0) {
			bool added = person && ows__acl_find(cur, TAG_USER, w->person) < 0;
			if (!record_pre(w, n, 'd', cur, added))
				return;
		}
		if ((i < 0 && person && !ows__acl_set(next, TAG_USER, w->person, 7)) ||
		    !ows__acl_set(next, TAG_USER, w->acct, 7)) {
			if (!skip_if_full(w, ENOSPC))
				walk_fail(w, ENOSPC, "the default ACL is full");
			return;
		}
		int mi = ows__acl_find(next, TAG_MASK, NO_ID);
		if (mi < 0)
			ows__acl_set(next, TAG_MASK, NO_ID, ows__acl_union(next));
		else
			next->e[mi].perm = 7;
		if (w->own == T_NONE && i >= 0)
			handover(w, n, 'd');
	} else if (i >= 0) {
		/*
		 * On a folder the journal does not list (there before without a
		 * default ACL, or made during the session and given ours by
		 * inheritance) the person's entry goes with the account's: else
		 * what is made there later keeps inheriting from us.
		 */
		ows__acl_del(next, i);
		const ows__jpre *p = ows__jstate_find_pre(w->pre, 'd', n->dev, n->ino, w->acct);
		int pi = person ? ows__acl_find(next, TAG_USER, w->person) : -1;
		if (pi >= 0 && (!p || p->person_added))
			ows__acl_del(next, pi);
		restore_mask(next, p);
		int mi = ows__acl_find(next, TAG_MASK, NO_ID);
		if (!p && !ows__acl_has_named(next))
			next->n = 0; /* there was no default ACL before us */
		else if (!p && mi >= 0)
			next->e[mi].perm = ows__acl_union(next); /* ours was rwx: what setfacl would compute */
	}
	if (ows__acl_eq(cur, next))
		return;
	int rc;
	if (next->n == 0) {
		rc = node_remove(n, XA_DEFAULT);
		if (rc != 0 && errno == ENODATA)
			rc = 0;
	} else {
		size_t out = ows__acl_encode(next, buf);
		rc = node_set(n, XA_DEFAULT, buf, out);
	}
	if (rc != 0) {
		if (errno == EPERM)
			w->skipped++;
		else if (!skip_if_full(w, errno))
			walk_fail(w, errno, "cannot set the default ACL");
		return;
	}
	w->changed++;
}

/*
 * A grant changes the person's nodes only.  A revoke also takes our entries
 * off what the agent made inside the tree (the account's own nodes, which
 * inherited them), once no live grant wants them there; that takes the
 * account's own rights or root's, and is skipped when the caller has neither.
 */
static void apply(walk *w, const node *n, bool in_tree)
{
	bool agents = w->own == T_NONE && in_tree && n->uid == w->acct && w->acct != w->person;
	if (n->uid != w->person && !agents) {
		w->skipped++; /* someone else's */
		return;
	}
	int t = wanted(w, n->isdir, in_tree);
	if (agents && t != T_NONE) {
		w->skipped++; /* a live grant's: the last revoke takes them */
		return;
	}
	apply_access(w, n, t);
	if (n->isdir && in_tree)
		apply_default(w, n, t);
}

/* Fills type, owner and identity; false for a link or something we must not touch. */
static bool node_stat(walk *w, node *n, bool in_tree)
{
	int fd = n->fd >= 0 ? n->fd : n->pathfd;
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO,
		  &sx) != 0) {
		walk_fail(w, errno, "cannot stat");
		return false;
	}
	n->mode = sx.stx_mode;
	n->uid = sx.stx_uid;
	n->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	n->ino = sx.stx_ino;
	n->isdir = S_ISDIR(sx.stx_mode);
	if (S_ISLNK(sx.stx_mode))
		return false;
	if (!in_tree)
		return true; /* the home and the folders above the granted one */
	if (n->dev != w->dev || (sx.stx_attributes & sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
		w->skipped++; /* another filesystem or a mount point: not ours to walk */
		return false;
	}
	return true;
}

static void node_close(node *n)
{
	if (n->fd >= 0)
		close(n->fd);
	if (n->pathfd >= 0)
		close(n->pathfd);
	n->fd = n->pathfd = -1;
}

/*
 * Opens `name` under `dirfd` without following a link: a readable descriptor
 * when possible (a folder for walking, a regular file for fsetxattr), else
 * an O_PATH one.  False when the name is gone or is a link.
 */
static bool node_open(walk *w, int dirfd, const char *name, unsigned char dtype, node *n)
{
	n->fd = n->pathfd = -1;
	int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	if (dtype == DT_DIR)
		flags |= O_DIRECTORY;
	if (dtype == DT_DIR || dtype == DT_REG) {
		n->fd = openat(dirfd, name, flags);
		if (n->fd < 0 && errno == ENOENT)
			return false;
	}
	if (n->fd < 0) {
		/* A link, something changed, a node we may not read, a FIFO or a device. */
		n->pathfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (n->pathfd < 0) {
			if (errno != ENOENT)
				walk_fail(w, errno, "cannot open");
			return false;
		}
	}
	if (!node_stat(w, n, true)) {
		node_close(n);
		return false;
	}
	if (n->fd < 0 && (n->isdir || S_ISREG(n->mode))) {
		/* Reopen for reading through the very inode, if its mode allows. */
		char p[40];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", n->pathfd);
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (n->isdir ? O_DIRECTORY : 0));
		if (fd >= 0)
			n->fd = fd;
	}
	return true;
}

long ows__acl_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};
	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * The tree is walked by a few threads sharing a stack of folders to do,
 * each named by its path relative to the granted folder and reopened from
 * the granted folder's descriptor with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_XDEV: no link is followed, nothing outside is reached, no
 * mount is crossed, and no descriptor is held per level of depth.
 */
typedef struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char **v;
	size_t n, cap;
	int busy;
	int rootfd;       /* O_PATH descriptor of the granted folder */
	const walk *base; /* what every worker's walk starts from */
	bool oom;
} queue;

#define WALK_THREADS_MAX 4

static void q_push(queue *q, walk *w, const char *rel)
{
	char *copy = strdup(rel);
	pthread_mutex_lock(&q->mu);
	if (copy && q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		char **v = realloc(q->v, cap * sizeof(*v));
		if (v) {
			q->v = v;
			q->cap = cap;
		}
	}
	if (!copy || q->n == q->cap) {
		free(copy);
		w->failed_oom = true;
	} else {
		q->v[q->n++] = copy;
		pthread_cond_signal(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
}

/* A file, device or link found in a folder; folders are queued, not opened here. */
static void walk_entry(walk *w, queue *q, const char *rel, int dirfd, const char *name,
		       unsigned char dtype)
{
	size_t nl = strlen(name), saved = w->len;
	if (w->len + 1 + nl >= sizeof(w->path)) {
		walk_fail(w, ENAMETOOLONG, "path too long");
		return;
	}
	char sub[4096];
	if (snprintf(sub, sizeof(sub), "%s%s%s", strcmp(rel, ".") ? rel : "", strcmp(rel, ".") ? "/" : "",
		     name) >= (int)sizeof(sub)) {
		walk_fail(w, ENAMETOOLONG, "path too long");
		return;
	}
	if (dtype == DT_DIR) {
		q_push(q, w, sub);
		return;
	}
	w->path[w->len] = '/';
	memcpy(w->path + w->len + 1, name, nl + 1);
	w->len += 1 + nl;
	node n;
	if (dtype != DT_LNK && node_open(w, dirfd, name, dtype, &n)) {
		if (n.isdir)
			q_push(q, w, sub); /* DT_UNKNOWN, or it became a folder */
		else
			apply(w, &n, true);
		node_close(&n);
	}
	w->len = saved;
	w->path[saved] = '\0';
}

/* Opens one queued folder, applies the walk to it and to its files, queues its folders. */
static void walk_one_dir(walk *w, queue *q, const char *rel, const char *root, size_t rootlen)
{
	bool is_root = strcmp(rel, ".") == 0;
	size_t rl = strlen(rel);
	if (rootlen + 1 + rl >= sizeof(w->path)) {
		walk_fail(w, ENAMETOOLONG, "path too long");
		return;
	}
	memcpy(w->path, root, rootlen);
	w->len = rootlen;
	if (!is_root) {
		w->path[w->len++] = '/';
		memcpy(w->path + w->len, rel, rl);
		w->len += rl;
	}
	w->path[w->len] = '\0';
	const uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	node n = {.fd = -1, .pathfd = -1};
	n.fd = (int)ows__acl_openat2(q->rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY, resolve);
	if (n.fd < 0 && errno == EACCES)
		n.pathfd = (int)ows__acl_openat2(q->rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve);
	if (n.fd < 0 && n.pathfd < 0) {
		/* Gone, or turned into a link or a file, or a mount point: not ours to walk. */
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && errno != EXDEV)
			walk_fail(w, errno, "cannot open");
		return;
	}
	if (node_stat(w, &n, !is_root) && n.isdir) {
		apply(w, &n, true);
		if (n.fd >= 0) {
			int fd = dup(n.fd);
			DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
			if (!d) {
				if (fd >= 0)
					close(fd);
				walk_fail(w, errno, "cannot list");
			} else {
				struct dirent *e;
				while ((e = readdir(d))) {
					const char *nm = e->d_name;
					if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
						continue;
					walk_entry(w, q, rel, dirfd(d), nm, e->d_type);
				}
				closedir(d);
			}
		}
	}
	node_close(&n);
}

typedef struct worker {
	queue *q;
	walk w;
	const char *root;
	size_t rootlen;
	ows__strv handover;
} worker;

static void *worker_main(void *arg)
{
	worker *k = arg;
	queue *q = k->q;
	for (;;) {
		pthread_mutex_lock(&q->mu);
		while (q->n == 0 && q->busy > 0)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->n == 0) {
			pthread_cond_broadcast(&q->cv);
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		char *rel = q->v[--q->n];
		q->busy++;
		pthread_mutex_unlock(&q->mu);
		walk_one_dir(&k->w, q, rel, k->root, k->rootlen);
		free(rel);
		pthread_mutex_lock(&q->mu);
		q->busy--;
		if (q->n == 0 && q->busy == 0)
			pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
}

/* Walks the folder open at `rootfd` (O_PATH) with a few threads; merges into `w`. */
static void walk_tree(walk *w, int rootfd)
{
	queue q = {.rootfd = rootfd, .base = w};
	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.cv, NULL);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = cpus < 1 ? 1 : cpus > WALK_THREADS_MAX ? WALK_THREADS_MAX : (int)cpus;
	worker *ks = calloc((size_t)nthreads, sizeof(*ks));
	pthread_t tids[WALK_THREADS_MAX];
	bool started[WALK_THREADS_MAX] = {false};
	if (!ks) {
		w->failed_oom = true;
		return;
	}
	char *root = strdup(w->path);
	if (!root) {
		free(ks);
		w->failed_oom = true;
		return;
	}
	q_push(&q, w, ".");
	for (int i = 0; i < nthreads; i++) {
		ks[i].q = &q;
		ks[i].w = *w;
		if (!(ks[i].w.tmp = malloc(sizeof(acl_scratch)))) {
			nthreads = i; /* the walkers that have their room do the work */
			break;
		}
		ks[i].w.changed = ks[i].w.skipped = 0;
		ks[i].w.sys_errno = 0;
		ks[i].w.handover = w->handover ? &ks[i].handover : NULL;
		ks[i].root = root;
		ks[i].rootlen = strlen(root);
	}
	if (nthreads == 0)
		w->failed_oom = true;
	/* Signals stay with the calling thread: workers block them all. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < nthreads; i++)
		started[i] = pthread_create(&tids[i], NULL, worker_main, &ks[i]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (nthreads > 0)
		worker_main(&ks[0]);
	for (int i = 1; i < nthreads; i++)
		if (started[i])
			pthread_join(tids[i], NULL);
	for (int i = 0; i < nthreads; i++) {
		walk *k = &ks[i].w;
		w->changed += k->changed;
		w->skipped += k->skipped;
		w->failed_oom |= k->failed_oom;
		if (k->sys_errno && !w->sys_errno) {
			w->sys_errno = k->sys_errno;
			w->fail_what = k->fail_what;
			memcpy(w->fail_where, k->fail_where, sizeof(w->fail_where));
		}
		for (size_t j = 0; j < ks[i].handover.len; j++)
			if (ows__strv_push(w->handover, ks[i].handover.v[j], NULL) < 0)
				w->failed_oom = true;
		ows__strv_free(&ks[i].handover);
		free(k->tmp);
	}
	for (size_t i = 0; i < q.n; i++)
		free(q.v[i]);
	free(q.v);
	free(root);
	free(ks);
	pthread_mutex_destroy(&q.mu);
	pthread_cond_destroy(&q.cv);
	snprintf(w->path, sizeof(w->path), "%s", "");
	w->len = 0;
}

/* A clean absolute path: "/x/y", no "." or ".." or empty component, no trailing "/". */
bool ows__acl_path_is_clean(const char *p)
{
	if (!p || p[0] != '/' || !p[1] || strlen(p) >= 4096)
		return false;
	for (const char *c = p; *c;) {
		const char *s = c + 1, *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		c = s + n;
	}
	return true;
}

/*
 * Applies the walk to `path` and its tree, then to the folders from `home`
 * down to path's parent (the traverse chain).  Never follows a link.
 */
static int walk_grant(walk *w, const char *path, const char *home, ows_error *err)
{
	node root = {.fd = -1, .pathfd = -1};
	root.pathfd = (int)ows__acl_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC | O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
	struct stat st;
	if (root.pathfd < 0 && w->own == T_NONE && errno == ENOENT) {
		/* Revoking a folder that is gone: only the traverse chain is left to do. */
	} else if (root.pathfd < 0) {
		return ows__fail_sys(err, path, "give a folder that exists, without a symbolic link on the way",
				     "cannot open the folder to grant");
	} else if (fstat(root.pathfd, &st) != 0 || S_ISLNK(st.st_mode)) {
		close(root.pathfd);
		return ows__fail(err, OWS_EINVAL, ELOOP, path, "give the real folder, not a link",
				 "will not grant through a symbolic link");
	}
	snprintf(w->path, sizeof(w->path), "%s", path);
	w->len = strlen(w->path);
	if (root.pathfd < 0) {
		/* gone */
	} else if ((w->dev = st.st_dev), S_ISDIR(st.st_mode)) {
		walk_tree(w, root.pathfd);
	} else if (node_stat(w, &root, false)) {
		char p[40];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", root.pathfd);
		if (S_ISREG(root.mode))
			root.fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		apply(w, &root, true);
	}
	node_close(&root);

	if (home) {
		/* Home root, then one component at a time down to the folder's parent. */
		int fd = (int)ows__acl_openat2(AT_FDCWD, home, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
		if (fd < 0) {
			walk_fail(w, errno, "cannot open the home root");
		} else {
			size_t hlen = strlen(home);
			const char *rest = path + hlen; /* "/a/b/granted" */
			snprintf(w->path, sizeof(w->path), "%s", home);
			w->len = hlen;
			while (fd >= 0) {
				node n = {.fd = -1, .pathfd = fd};
				if (node_stat(w, &n, false) && n.isdir)
					apply(w, &n, false);
				const char *s = rest + 1, *e = strchr(s, '/');
				if (!e) {
					close(fd);
					break; /* the granted folder itself: done above */
				}
				char comp[256];
				size_t cl = (size_t)(e - s);
				if (cl >= sizeof(comp)) {
					close(fd);
					break;
				}
				memcpy(comp, s, cl);
				comp[cl] = '\0';
				int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (next < 0 && !(w->own == T_NONE && errno == ENOENT))
					walk_fail(w, errno, "cannot open a folder above the granted one");
				close(fd);
				fd = next;
				memcpy(w->path + w->len, rest, cl + 1);
				w->len += cl + 1;
				w->path[w->len] = '\0';
				rest = e;
			}
		}
	}
	if (w->failed_oom)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (w->sys_errno) {
		errno = w->sys_errno;
		return ows__fail_sys(err, w->fail_where, NULL, "%s", w->fail_what);
	}
	return 0;
}

/* The same, in a walker's room of its own (see acl_scratch). */
int ows__acl_walk_grant(walk *w, const char *path, const char *home, ows_error *err)
{
	w->tmp = malloc(sizeof(*w->tmp));
	if (!w->tmp)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	int rc = walk_grant(w, path, home, err);
	free(w->tmp);
	w->tmp = NULL;
	return rc;
}
