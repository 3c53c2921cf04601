/*
 * The ACL grants' parts, shared by lib/linux/setup/acl*.c:
 *   acl_walk.c    the descriptor walk that grants and revokes one folder
 *   acl.c         the grant journal, the public calls and crash cleanup
 * and the xattr format they build on, lib/linux/wall/acl_codec.h (the
 * launcher's too).
 * See acl.c for what a grant leaves on the person's files.
 */
#ifndef OWS_LINUX_ACL_H
#define OWS_LINUX_ACL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "linux/linux.h"
#include "linux/wall/acl_codec.h"

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
