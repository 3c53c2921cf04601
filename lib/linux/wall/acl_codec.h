/*
 * The POSIX ACL xattr format (version 2, little-endian entries) as values
 * (acl_codec.c): parsing, encoding and the few edits grants and hand-backs
 * make.  Pure functions on caller's buffers: no I/O, no allocation, so the
 * setuid launcher links it as it is (lib/linux/setup/acl.h builds on it).
 */
#ifndef OWS_LINUX_ACL_CODEC_H
#define OWS_LINUX_ACL_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

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

#endif /* OWS_LINUX_ACL_CODEC_H */
