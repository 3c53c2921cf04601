/*
 * The POSIX ACL xattr format (version 2, little-endian entries), as values
 * (acl_codec.h).  Linked by the setuid launcher: no I/O, no allocation.
 */
#include <string.h>

#include "acl_codec.h"

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

bool ows__acl_parse(const unsigned char *buf, size_t len, acl *a)
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

size_t ows__acl_encode(const acl *a, unsigned char *buf)
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

void ows__acl_from_mode(acl *a, mode_t m)
{
	a->n = 3;
	a->e[0] = (acl_ent){TAG_USER_OBJ, (m >> 6) & 7, NO_ID};
	a->e[1] = (acl_ent){TAG_GROUP_OBJ, (m >> 3) & 7, NO_ID};
	a->e[2] = (acl_ent){TAG_OTHER, m & 7, NO_ID};
}

int ows__acl_find(const acl *a, uint16_t tag, uint32_t id)
{
	for (int i = 0; i < a->n; i++)
		if (a->e[i].tag == tag && (id == NO_ID || a->e[i].id == id))
			return i;
	return -1;
}

int ows__acl_perm(const acl *a, uint16_t tag)
{
	int i = ows__acl_find(a, tag, NO_ID);
	return i < 0 ? -1 : a->e[i].perm;
}

/* Sets or inserts an entry, keeping the kernel's order: by tag, then by id. */
bool ows__acl_set(acl *a, uint16_t tag, uint32_t id, uint16_t perm)
{
	int i = ows__acl_find(a, tag, id);
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

void ows__acl_del(acl *a, int i)
{
	memmove(&a->e[i], &a->e[i + 1], (size_t)(a->n - i - 1) * sizeof(acl_ent));
	a->n--;
}

bool ows__acl_has_named(const acl *a)
{
	for (int i = 0; i < a->n; i++)
		if (a->e[i].tag == TAG_USER || a->e[i].tag == TAG_GROUP)
			return true;
	return false;
}

/* What a recalculated mask would be: the group entry and every named entry. */
uint16_t ows__acl_union(const acl *a)
{
	uint16_t m = 0;
	for (int i = 0; i < a->n; i++)
		if (a->e[i].tag == TAG_USER || a->e[i].tag == TAG_GROUP || a->e[i].tag == TAG_GROUP_OBJ)
			m |= a->e[i].perm;
	return m;
}

/* Copies the entries in use only: an acl is 64 KiB, most hold a handful. */
void ows__acl_copy(acl *dst, const acl *src)
{
	dst->n = src->n;
	memcpy(dst->e, src->e, (size_t)src->n * sizeof(acl_ent));
}

bool ows__acl_eq(const acl *x, const acl *y)
{
	return x->n == y->n && memcmp(x->e, y->e, (size_t)x->n * sizeof(acl_ent)) == 0;
}

static int inherit_find(const acl_ent *inh, int ninh, uint16_t tag, uint32_t id)
{
	for (int i = 0; i < ninh; i++)
		if (inh[i].tag == tag && inh[i].id == id)
			return i;
	return -1;
}

/*
 * What an ACL of a node the account made may keep once the node is handed
 * back to the person (the launcher, at close; the person's revoke follows):
 *
 *  - an entry naming another user or group only as far as `inh`, the
 *    default ACL the node would have inherited from the person (that of
 *    the nearest folder above that is the person's, or of an agent-made
 *    folder as settled here), gives the same entry, with at most its bits;
 *    so a default entry the agent planted for someone else is gone and
 *    with it what the person's later files there would inherit;
 *  - the owner's, group's, mask's and others' bits less what `person_umask`
 *    clears: a chmod 777 or an `o::rwx` default of the agent's
 *    opens nothing the person's own file would not;
 *  - the entries naming `acct` and `person` as they are: the revoke takes
 *    the account's and settles the rest (acl_walk.c, settle_unlisted);
 *  - a mask with nothing named left is folded into the group's entry, so
 *    that the ACL is the plain mode it says.
 *
 * True when anything changed.
 */
bool ows__acl_settle_handback(acl *a, const acl_ent *inh, int ninh, mode_t person_umask, uint32_t acct,
			      uint32_t person)
{
	bool changed = false;
	for (int i = a->n; i-- > 0;) {
		acl_ent *e = &a->e[i];
		uint16_t keep = 7;
		if (e->tag == TAG_USER_OBJ)
			keep = (uint16_t)(~person_umask >> 6 & 7);
		else if (e->tag == TAG_GROUP_OBJ || e->tag == TAG_MASK)
			keep = (uint16_t)(~person_umask >> 3 & 7);
		else if (e->tag == TAG_OTHER)
			keep = (uint16_t)(~person_umask & 7);
		else if (e->tag == TAG_USER && (e->id == acct || e->id == person))
			keep = 7;
		else if (inherit_find(inh, ninh, e->tag, e->id) < 0) {
			ows__acl_del(a, i);
			changed = true;
			continue;
		} else
			keep = inh[inherit_find(inh, ninh, e->tag, e->id)].perm;
		changed |= (e->perm & ~keep) != 0;
		e->perm &= keep;
	}
	int mi = ows__acl_find(a, TAG_MASK, NO_ID), gi = ows__acl_find(a, TAG_GROUP_OBJ, NO_ID);
	if (mi >= 0 && gi >= 0 && !ows__acl_has_named(a)) {
		a->e[gi].perm &= a->e[mi].perm;
		ows__acl_del(a, mi);
		changed = true;
	}
	return changed;
}
