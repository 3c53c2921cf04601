/*
 * Machine setup, ACL grants and the account provider arrive with the
 * `account` work.  Until then these calls say so, with the way around it.
 */
#include <string.h>

#include "linux.h"

static int not_yet(ows_error *err, const char *what)
{
	return ows__fail(err, OWS_ENOSYS, 0, what,
			 "use the landlock provider, which needs no setup",
			 "the account provider is not available in this version");
}

void ows_setup_options_init(ows_setup_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

int ows_machine_plan(const ows_config *c, const ows_setup_options *o, char **plan, ows_error *err)
{
	if (plan)
		*plan = NULL;
	return not_yet(err, "machine sandbox setup");
}

int ows_machine_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	return not_yet(err, "machine sandbox setup");
}

int ows_machine_status(const ows_config *c, char **status, ows_error *err)
{
	if (status)
		*status = NULL;
	return not_yet(err, "machine sandbox status");
}

int ows_machine_remove(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	return not_yet(err, "machine sandbox remove");
}
