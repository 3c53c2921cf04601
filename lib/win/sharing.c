/*
 * Credentials on Windows: not yet.  The Linux catalog (lib/posix/sharing.c) names
 * POSIX paths and copies them into a sandbox home; the windows provider refuses
 * a policy with credentials (account.c), so the catalog says so too, and the
 * DLL still exports every function the header declares.
 */
#include "internal.h"

int ows_catalog_json(const ows_config *config, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	return ows__fail(err, OWS_ENOSYS, 0, "credentials", "leave credentials out for now",
			 "the credential catalog is not available on Windows yet");
}
