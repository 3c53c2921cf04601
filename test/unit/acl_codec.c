/* test/unit/acl_codec.c: the POSIX ACL values (lib/linux/wall/acl_codec.c): any size the kernel
 * takes, and what an agent-made node keeps at handback. */
#include <stdlib.h>
#include <string.h>

#include "linux/wall/acl_codec.h"
#include "tap.h"

#define ACCT 998
#define PERSON 1000
#define NOBODY 65534

static acl a; /* 64 KiB each: not on the stack */
static acl b;
static unsigned char buf[XA_SIZE + 8];

/* "u::7 u:998:7 g::5 m::5 o::5" as an acl, entries in the kernel's order. */
static void set(acl *x, const char *text)
{
	x->n = 0;
	for (const char *p = text; *p;) {
		char kind = p[0];
		char *end;
		uint32_t id = p[2] == ':' ? NO_ID : (uint32_t)strtoul(p + 2, &end, 10);
		const char *perm = strchr(p + 2, ':') + 1;
		uint16_t tag = kind == 'o' ? TAG_OTHER : kind == 'm' ? TAG_MASK
			       : kind == 'u' ? (id == NO_ID ? TAG_USER_OBJ : TAG_USER)
					     : (id == NO_ID ? TAG_GROUP_OBJ : TAG_GROUP);
		ows__acl_set(x, tag, id, (uint16_t)(*perm - '0'));
		p = perm + 1;
		while (*p == ' ')
			p++;
	}
}

static int same(const char *want)
{
	set(&b, want);
	return ows__acl_eq(&a, &b);
}

int main(void)
{
	/* Size: the kernel's limit, a 64 KiB value. */
	a.n = 0;
	ows__acl_set(&a, TAG_USER_OBJ, NO_ID, 6);
	for (uint32_t i = 0; a.n < ACL_MAX - 3; i++)
		ows__acl_set(&a, TAG_USER, 300000 + i, 4);
	ows__acl_set(&a, TAG_GROUP_OBJ, NO_ID, 4);
	ows__acl_set(&a, TAG_MASK, NO_ID, 4);
	ok(ows__acl_set(&a, TAG_OTHER, NO_ID, 0) && a.n == ACL_MAX, "an ACL holds %d entries", ACL_MAX);
	size_t len = ows__acl_encode(&a, buf);
	ok(len == 65532, "which encode to a value of %zu bytes, within XATTR_SIZE_MAX", len);
	ok(!ows__acl_set(&a, TAG_USER, 1, 7), "one more entry does not fit");
	ok(ows__acl_parse(buf, len, &b) && ows__acl_eq(&a, &b), "it parses back whole");
	ok(ows__acl_parse(buf, 4 + 8 * 500, &b) && b.n == 500, "500 entries, what ext4 holds, parse");
	ok(!ows__acl_parse(buf, len + 8, &b), "a value past the kernel's limit is refused");

	/* Handback: what the agent set for others goes, what the umask clears goes. */
	set(&a, "u::7 u:998:7 u:1000:7 u:65534:7 g::7 g:65534:7 m::7 o::7");
	ok(ows__acl_settle_handback(&a, NULL, 0, 022, ACCT, PERSON), "an agent's open ACL changes");
	ok(same("u::7 u:998:7 u:1000:7 g::5 m::5 o::5"),
	   "entries for others go; the account's and the person's stay for the revoke; umask 022 applies");
	set(&b, "u::7 u:65534:5 g::5 m::5 o::5");
	acl_ent inh[8];
	memcpy(inh, b.e, (size_t)b.n * sizeof(acl_ent));
	int ninh = b.n;
	set(&a, "u::7 u:65534:7 g::7 g:65534:7 m::7 o::7");
	ows__acl_settle_handback(&a, inh, ninh, 022, ACCT, PERSON);
	ok(same("u::7 u:65534:5 g::5 m::5 o::5"),
	   "an entry the person's default ACL gives stays, with at most its bits");
	set(&a, "u::6 g::6 g:65534:6 m::4 o::0");
	ows__acl_settle_handback(&a, NULL, 0, 022, ACCT, PERSON);
	ok(same("u::6 g::4 o::0"), "with nothing named left the mask folds into the group's entry");
	ows__acl_from_mode(&a, 0777);
	ok(ows__acl_settle_handback(&a, NULL, 0, 027, ACCT, PERSON) && same("u::7 g::5 o::0"),
	   "a chmod 777 becomes 750 under umask 027");
	ows__acl_from_mode(&a, 0644);
	ok(!ows__acl_settle_handback(&a, NULL, 0, 022, ACCT, PERSON) && same("u::6 g::4 o::4"),
	   "a 644 file under umask 022 is left as it is");
	set(&a, "u::7 u:998:7 u:1000:7 g::5 m::7 o::5");
	ok(!ows__acl_settle_handback(&a, NULL, 0, 0, ACCT, PERSON),
	   "an inherited ACL of ours alone, umask 0: nothing to do (the revoke settles it)");
	return done_testing();
}
