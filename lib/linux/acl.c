/*
 * ACL grants for the account provider, their journal, and crash recovery.
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
 * session, created locked (flock) and held for the session's lifetime.  A
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

#include "linux.h"

#define XA_ACCESS "system.posix_acl_access"
#define XA_DEFAULT "system.posix_acl_default"

#define TAG_USER_OBJ 0x01
#define TAG_USER 0x02
#define TAG_GROUP_OBJ 0x04
#define TAG_GROUP 0x08
#define TAG_MASK 0x10
#define TAG_OTHER 0x20
#define NO_ID 0xffffffffU

#define ACL_MAX 128
#define XA_SIZE (4 + 8 * ACL_MAX)

/* ------------------------------------------------------------ ACL values */

typedef struct acl_ent {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
} acl_ent;

typedef struct acl {
	acl_ent e[ACL_MAX];
	int n;
} acl;

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static bool acl_parse(const unsigned char *buf, size_t len, acl *a)
{
	if (len < 4 || (len - 4) % 8 || (len - 4) / 8 > ACL_MAX || get32(buf) != 2)
		return false;
	a->n = (int)((len - 4) / 8);
	for (int i = 0; i < a->n; i++) {
		const unsigned char *p = buf + 4 + 8 * i;
		a->e[i] = (acl_ent){get16(p), get16(p + 2), get32(p + 4)};
	}
	return true;
}

static size_t acl_encode(const acl *a, unsigned char *buf)
{
	put32(buf, 2);
	for (int i = 0; i < a->n; i++) {
		unsigned char *p = buf + 4 + 8 * i;
		put16(p, a->e[i].tag);
		put16(p + 2, a->e[i].perm);
		put32(p + 4, a->e[i].id);
	}
	return 4 + 8 * (size_t)a->n;
}

static void acl_from_mode(acl *a, mode_t m)
{
	a->n = 3;
	a->e[0] = (acl_ent){TAG_USER_OBJ, (m >> 6) & 7, NO_ID};
	a->e[1] = (acl_ent){TAG_GROUP_OBJ, (m >> 3) & 7, NO_ID};
	a->e[2] = (acl_ent){TAG_OTHER, m & 7, NO_ID};
}

static int acl_find(const acl *a, uint16_t tag, uint32_t id)
{
	for (int i = 0; i < a->n; i++)
		if (a->e[i].tag == tag && (id == NO_ID || a->e[i].id == id))
			return i;
	return -1;
}

static int acl_perm(const acl *a, uint16_t tag)
{
	int i = acl_find(a, tag, NO_ID);
	return i < 0 ? -1 : a->e[i].perm;
}

/* Sets or inserts an entry, keeping the kernel's order: by tag, then by id. */
static bool acl_set(acl *a, uint16_t tag, uint32_t id, uint16_t perm)
{
	int i = acl_find(a, tag, id);
	if (i >= 0) {
		a->e[i].perm = perm;
		return true;
	}
	if (a->n == ACL_MAX)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->e[i].tag > tag || (a->e[i].tag == tag && a->e[i].id > id))
			break;
	memmove(&a->e[i + 1], &a->e[i], (size_t)(a->n - i) * sizeof(acl_ent));
	a->e[i] = (acl_ent){tag, perm, id};
	a->n++;
	return true;
}

static void acl_del(acl *a, int i)
{
	memmove(&a->e[i], &a->e[i + 1], (size_t)(a->n - i - 1) * sizeof(acl_ent));
	a->n--;
}

static bool acl_has_named(const acl *a)
{
	for (int i = 0; i < a->n; i++)
		if (a->e[i].tag == TAG_USER || a->e[i].tag == TAG_GROUP)
			return true;
	return false;
}

/* What a recalculated mask would be: the group entry and every named entry. */
static uint16_t acl_union(const acl *a)
{
	uint16_t m = 0;
	for (int i = 0; i < a->n; i++)
		if (a->e[i].tag == TAG_USER || a->e[i].tag == TAG_GROUP || a->e[i].tag == TAG_GROUP_OBJ)
			m |= a->e[i].perm;
	return m;
}

static bool acl_eq(const acl *x, const acl *y)
{
	return x->n == y->n && memcmp(x->e, y->e, (size_t)x->n * sizeof(acl_ent)) == 0;
}

/* ------------------------------------------------------------- the nodes */

enum { T_NONE = 0, T_TRAVERSE = 1, T_RO = 2, T_RW = 3 };

static int target_of(ows_access access)
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

typedef struct other {
	uint32_t person;
	int target;     /* T_RO or T_RW on its tree */
	char *path;
	size_t plen;
	char *home;     /* NULL: no traverse chain */
	size_t hlen;
} other;

/* One walk: a grant or a revoke of one folder for one account. */
typedef struct walk {
	uint32_t acct;
	uint32_t person;
	int own;              /* what this call wants on the tree: T_NONE for a revoke */
	const other *others;  /* live grants of the same account that must be kept */
	size_t nothers;
	const ows__jstate *pre; /* the journal's P records (revoke) */
	int jfd;              /* journal to write P records to before a change (grant), or -1 */
	ows__strv *handover;  /* P records of nodes others keep (revoke), or NULL */
	dev_t dev;            /* the tree's filesystem */
	char path[8192];
	size_t len;
	unsigned long changed, skipped;
	int sys_errno;        /* first failure */
	char fail_where[512];
	const char *fail_what;
	bool failed_oom;
} walk;

static void walk_fail(walk *w, int e, const char *what)
{
	if (w->sys_errno)
		return;
	w->sys_errno = e ? e : EIO;
	w->fail_what = what;
	snprintf(w->fail_where, sizeof(w->fail_where), "%.500s", w->path);
}

static bool under_or_eq(const char *p, size_t plen, const char *root, size_t rlen)
{
	return plen >= rlen && memcmp(p, root, rlen) == 0 && (p[rlen] == '\0' || p[rlen] == '/');
}

/* What the node at w->path must carry: this call's wish or what a live grant needs. */
static int wanted(const walk *w, bool isdir, bool in_tree)
{
	int t = in_tree ? w->own : (w->own ? T_TRAVERSE : T_NONE);
	for (size_t i = 0; i < w->nothers; i++) {
		const other *o = &w->others[i];
		if (under_or_eq(w->path, w->len, o->path, o->plen)) {
			if (o->target > t)
				t = o->target;
		} else if (isdir && t < T_TRAVERSE && o->home && under_or_eq(o->path, o->plen, w->path, w->len) &&
			   under_or_eq(w->path, w->len, o->home, o->hlen)) {
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
	ows__jpre p = {.type = type, .dev = n->dev, .ino = n->ino, .mask = acl_perm(before, TAG_MASK),
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
	int mi = acl_find(a, TAG_MASK, NO_ID);
	if (p && p->mask >= 0) {
		if (mi >= 0)
			a->e[mi].perm = (uint16_t)p->mask;
		else
			acl_set(a, TAG_MASK, NO_ID, (uint16_t)p->mask);
	} else if (mi >= 0 && !acl_has_named(a)) {
		acl_del(a, mi);
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
	int oi = owner_entry == NO_ID ? -1 : acl_find(a, TAG_USER, owner_entry);
	if (oi >= 0)
		acl_del(a, oi);
	int mi = acl_find(a, TAG_MASK, NO_ID);
	if (mi < 0 || acl_has_named(a))
		return;
	int gi = acl_find(a, TAG_GROUP_OBJ, NO_ID);
	if (gi >= 0)
		a->e[gi].perm &= a->e[mi].perm;
	acl_del(a, mi);
}

static void apply_access(walk *w, const node *n, int target)
{
	unsigned char buf[XA_SIZE];
	acl cur, next;
	ssize_t len = node_get(n, XA_ACCESS, buf, sizeof(buf));
	bool had = len >= 0;
	if (len < 0) {
		if (errno != ENODATA) {
			walk_fail(w, errno, "cannot read the ACL");
			return;
		}
		acl_from_mode(&cur, n->mode);
	} else if (!acl_parse(buf, (size_t)len, &cur)) {
		walk_fail(w, EINVAL, "cannot understand the ACL");
		return;
	}
	next = cur;
	int perm = perm_of(target, n);
	int i = acl_find(&next, TAG_USER, w->acct);
	if (perm >= 0) {
		if (i < 0 && had && !record_pre(w, n, 'a', &cur, false))
			return;
		if (!acl_set(&next, TAG_USER, w->acct, (uint16_t)perm)) {
			walk_fail(w, ENOSPC, "the ACL is full");
			return;
		}
		int mi = acl_find(&next, TAG_MASK, NO_ID);
		if (mi < 0)
			acl_set(&next, TAG_MASK, NO_ID, acl_union(&next));
		else
			next.e[mi].perm |= (uint16_t)perm;
		if (w->own == T_NONE && i >= 0)
			handover(w, n, 'a');
	} else {
		const ows__jpre *p = ows__jstate_find_pre(w->pre, 'a', n->dev, n->ino, w->acct);
		uint32_t owner = n->uid == w->person && w->person != w->acct ? w->person : NO_ID;
		if (i >= 0)
			acl_del(&next, i);
		if (p && i >= 0)
			restore_mask(&next, p);
		else if (!p && (i >= 0 || (owner != NO_ID && acl_find(&next, TAG_USER, owner) >= 0)))
			settle_unlisted(&next, owner);
	}
	if (acl_eq(&cur, &next))
		return;
	size_t out = acl_encode(&next, buf);
	if (node_set(n, XA_ACCESS, buf, out) != 0) {
		if (errno == EPERM)
			w->skipped++;
		else
			walk_fail(w, errno, "cannot set the ACL");
		return;
	}
	w->changed++;
}

static void apply_default(walk *w, const node *n, int target)
{
	unsigned char buf[XA_SIZE];
	acl cur, next;
	ssize_t len = node_get(n, XA_DEFAULT, buf, sizeof(buf));
	bool had = len >= 0;
	if (len < 0) {
		if (errno != ENODATA) {
			walk_fail(w, errno, "cannot read the default ACL");
			return;
		}
		cur.n = 0;
	} else if (!acl_parse(buf, (size_t)len, &cur)) {
		walk_fail(w, EINVAL, "cannot understand the default ACL");
		return;
	}
	next = cur;
	int i = acl_find(&next, TAG_USER, w->acct);
	bool person = w->person != w->acct;
	if (target == T_RW) {
		if (!had) {
			/* A fresh default ACL starts from the folder's own bits, as setfacl does. */
			acl access;
			unsigned char abuf[XA_SIZE];
			ssize_t alen = node_get(n, XA_ACCESS, abuf, sizeof(abuf));
			if (alen < 0 || !acl_parse(abuf, (size_t)alen, &access))
				acl_from_mode(&access, n->mode);
			next.n = 0;
			acl_set(&next, TAG_USER_OBJ, NO_ID, (uint16_t)acl_perm(&access, TAG_USER_OBJ));
			acl_set(&next, TAG_GROUP_OBJ, NO_ID, (uint16_t)acl_perm(&access, TAG_GROUP_OBJ));
			acl_set(&next, TAG_OTHER, NO_ID, (uint16_t)acl_perm(&access, TAG_OTHER));
		} else if (i < 0) {
			bool added = person && acl_find(&cur, TAG_USER, w->person) < 0;
			if (!record_pre(w, n, 'd', &cur, added))
				return;
		}
		if (i < 0 && person && !acl_set(&next, TAG_USER, w->person, 7)) {
			walk_fail(w, ENOSPC, "the default ACL is full");
			return;
		}
		if (!acl_set(&next, TAG_USER, w->acct, 7)) {
			walk_fail(w, ENOSPC, "the default ACL is full");
			return;
		}
		int mi = acl_find(&next, TAG_MASK, NO_ID);
		if (mi < 0)
			acl_set(&next, TAG_MASK, NO_ID, acl_union(&next));
		else
			next.e[mi].perm = 7;
		if (w->own == T_NONE && i >= 0)
			handover(w, n, 'd');
	} else if (i >= 0) {
		/*
		 * On a folder the journal does not list (there before without a
		 * default ACL, or made during the session and given ours by
		 * inheritance) the person's entry goes with the account's: else
		 * what is made there later keeps inheriting from us.
		 */
		acl_del(&next, i);
		const ows__jpre *p = ows__jstate_find_pre(w->pre, 'd', n->dev, n->ino, w->acct);
		int pi = person ? acl_find(&next, TAG_USER, w->person) : -1;
		if (pi >= 0 && (!p || p->person_added))
			acl_del(&next, pi);
		restore_mask(&next, p);
		int mi = acl_find(&next, TAG_MASK, NO_ID);
		if (!p && !acl_has_named(&next))
			next.n = 0; /* there was no default ACL before us */
		else if (!p && mi >= 0)
			next.e[mi].perm = acl_union(&next); /* ours was rwx: what setfacl would compute */
	}
	if (acl_eq(&cur, &next))
		return;
	int rc;
	if (next.n == 0) {
		rc = node_remove(n, XA_DEFAULT);
		if (rc != 0 && errno == ENODATA)
			rc = 0;
	} else {
		size_t out = acl_encode(&next, buf);
		rc = node_set(n, XA_DEFAULT, buf, out);
	}
	if (rc != 0) {
		if (errno == EPERM)
			w->skipped++;
		else
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

static long do_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
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
	n.fd = (int)do_openat2(q->rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY, resolve);
	if (n.fd < 0 && errno == EACCES)
		n.pathfd = (int)do_openat2(q->rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve);
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
		ks[i].w.changed = ks[i].w.skipped = 0;
		ks[i].w.sys_errno = 0;
		ks[i].w.handover = w->handover ? &ks[i].handover : NULL;
		ks[i].root = root;
		ks[i].rootlen = strlen(root);
	}
	/* Signals stay with the calling thread: workers block them all. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < nthreads; i++)
		started[i] = pthread_create(&tids[i], NULL, worker_main, &ks[i]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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
static bool path_is_clean(const char *p)
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
	root.pathfd = (int)do_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC | O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
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
		int fd = (int)do_openat2(AT_FDCWD, home, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
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
	int tfd = (int)do_openat2(AT_FDCWD, top, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
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
		o->target = target_of(g->access);
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
	rc = walk_grant(w, g->path, g->home, err);
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
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	char proc[40];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	char head[32];
	snprintf(head, sizeof(head), "owsj1 %u\n", (unsigned)uid);
	if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(fd, head, strlen(head)) != (ssize_t)strlen(head)) {
		int rc = ows__fail_sys(err, dirpath, NULL, "cannot create the grant journal");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0) {
		int fl = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, fl | O_APPEND);
		return fd;
	}
	close(fd);
	if (errno != EEXIST)
		return ows__fail_sys(err, dirpath, NULL, "cannot create the grant journal");
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

int ows_acl_grant(const ows_config *c, const char *session_id, const char *account,
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
	if (!path_is_clean(path) || (home && !path_is_clean(home))) {
		rc = ows__fail(err, OWS_EINVAL, 0, path, "give absolute paths without '.' or '..'",
			       "bad path to grant");
		goto out;
	}
	if (home && (!under_or_eq(path, strlen(path), home, strlen(home)) || strcmp(path, home) == 0)) {
		rc = ows__fail(err, OWS_EINVAL, 0, path, "grant a folder inside the home, not the home",
			       "the folder is not inside %s", home);
		goto out;
	}
	struct stat st;
	int pfd = (int)do_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC | O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
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
				w->own = target_of(access);
				w->others = k.v;
				w->nothers = k.n;
				w->jfd = j->fd;
				rc = walk_grant(w, path, home, err);
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

int ows_acl_revoke(const ows_config *c, const char *session_id, const char *account,
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
		if (hl < 2 || !under_or_eq(at, strlen(at), home, hl))
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

int ows_machine_cleanup(const ows_config *c, ows_error *err)
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
	int tfd = (int)do_openat2(AT_FDCWD, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
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
