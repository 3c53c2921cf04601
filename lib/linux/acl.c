/*
 * ACL grants for the account provider arrive with the `account` work.
 * Until then these calls say so, with the way around it.
 */
#include "linux.h"

static int not_yet(ows_error *err, const char *what)
{
	return ows__fail(err, OWS_ENOSYS, 0, what,
			 "use the landlock provider, which needs no setup",
			 "the account provider is not available in this version");
}

int ows_machine_cleanup(const ows_config *c, ows_error *err)
{
	return not_yet(err, "machine sandbox cleanup");
}

int ows_acl_grant(const ows_config *c, const char *session_id, const char *account,
		  const char *path, ows_access access, const char *home_root, ows_error *err)
{
	return not_yet(err, "acl grant");
}

int ows_acl_revoke(const ows_config *c, const char *session_id, const char *account,
		   const char *path, ows_error *err)
{
	return not_yet(err, "acl revoke");
}
