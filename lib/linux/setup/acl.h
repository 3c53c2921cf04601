/*
 * The ACL grants' parts, shared by the files of lib/linux/acl*.c:
 *   acl_codec.c   the POSIX ACL xattr format, as values
 *   acl_walk.c    the descriptor walk that grants and revokes one folder
 *   acl.c         the grant journal, the public calls and crash cleanup
 * See acl.c for what a grant leaves on the person's files.
 */
#ifndef OWS_LINUX_ACL_H
#define OWS_LINUX_ACL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "linux/linux.h"

#define XA_ACCESS "system.posix_acl_access"
#define XA_DEFAULT "system.posix_acl_default"

#define TAG_USER_OBJ 0x01
#define TAG_USER 0x02
#define TAG_GROUP_OBJ 0x04
#define TAG_GROUP 0x08
#define TAG_MASK 0x10
#define TAG_OTHER 0x20
#define NO_ID 0xffffffffU

/*
 * The kernel's limit: an xattr value holds at most XATTR_SIZE_MAX (64 KiB)
 * bytes, a 4-byte header and 8 bytes an entry.  ext4 fits about 500 entries
 * in a block, XFS and tmpfs many more; a reader that takes fewer fails on a
 * file the agent can make, and every later grant and revoke with it.
 */
#define ACL_MAX ((65536 - 4) / 8)
#define XA_SIZE (4 + 8 * ACL_MAX)

typedef struct acl_ent {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
} acl_ent;

typedef struct acl {
	acl_ent e[ACL_MAX];
	int n;
} acl;

OWS__HIDDEN bool ows__acl_parse(const unsigned char *buf, size_t len, acl *a);
OWS__HIDDEN size_t ows__acl_encode(const acl *a, unsigned char *buf);
OWS__HIDDEN void ows__acl_from_mode(acl *a, mode_t m);
OWS__HIDDEN int ows__acl_find(const acl *a, uint16_t tag, uint32_t id);
OWS__HIDDEN int ows__acl_perm(const acl *a, uint16_t tag);
OWS__HIDDEN bool ows__acl_set(acl *a, uint16_t tag, uint32_t id, uint16_t perm);
OWS__HIDDEN void ows__acl_del(acl *a, int i);
OWS__HIDDEN bool ows__acl_has_named(const acl *a);
OWS__HIDDEN uint16_t ows__acl_union(const acl *a);
OWS__HIDDEN void ows__acl_copy(acl *dst, const acl *src);
OWS__HIDDEN bool ows__acl_eq(const acl *x, const acl *y);
OWS__HIDDEN bool ows__acl_settle_handback(acl *a, const acl_ent *inh, int ninh, mode_t person_umask, uint32_t acct,
					  uint32_t person);

/* A walker's room for one node's ACLs (about 260 KiB): on the heap, one per thread. */
typedef struct acl_scratch {
	unsigned char buf[XA_SIZE];
	acl cur, next, access;
} acl_scratch;

enum { T_NONE = 0, T_TRAVERSE = 1, T_RO = 2, T_RW = 3 };

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
	acl_scratch *tmp;     /* this walker's own */
	char path[8192];
	size_t len;
	unsigned long changed, skipped;
	int sys_errno;        /* first failure */
	char fail_where[512];
	const char *fail_what;
	bool failed_oom;
} walk;

OWS__HIDDEN int ows__acl_target_of(ows_access access);
OWS__HIDDEN bool ows__acl_under_or_eq(const char *p, size_t plen, const char *root, size_t rlen);
OWS__HIDDEN long ows__acl_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve);
OWS__HIDDEN bool ows__acl_path_is_clean(const char *p);
OWS__HIDDEN int ows__acl_walk_grant(walk *w, const char *path, const char *home, ows_error *err);

#endif /* OWS_LINUX_ACL_H */
