/*
 * STUB, for the macbuild branch only: lets `make macos` link the library and
 * the CLI before the seatbelt provider (lib/darwin/sandbox.c, provider.c,
 * machine.c, written on another branch) exists.  No provider is found and
 * every machine, report and ACL call answers OWS_ENOSYS.  Delete this file
 * when those land: it defines the same names.
 */
#include <string.h>

#include "internal.h"

static int not_yet(ows_error *err, const char *what)
{
	return ows__fail(err, OWS_ENOSYS, 0, what, "build the branch with lib/darwin/sandbox.c",
			 "this macOS build has no provider yet (lib/darwin/stub_provider.c)");
}

const ows__provider *ows__provider_find(const char *name)
{
	(void)name;
	return NULL;
}

void ows_setup_options_init(ows_setup_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

int ows_catalog_json(const ows_config *config, char **out, ows_error *err)
{
	return not_yet(err, "catalog");
}

int ows_report_json(const ows_config *config, char **out, ows_error *err)
{
	return not_yet(err, "report");
}

int ows_apparmor_profile(const char *exe, const char *name, char **out, ows_error *err)
{
	return not_yet(err, "apparmor");
}

int ows_machine_plan(const ows_config *config, const ows_setup_options *opts, char **plan_json,
		     ows_error *err)
{
	return not_yet(err, "machine plan");
}

int ows_machine_setup(const ows_config *config, const ows_setup_options *opts, ows_error *err)
{
	return not_yet(err, "machine setup");
}

int ows_machine_status(const ows_config *config, char **status_json, ows_error *err)
{
	return not_yet(err, "machine status");
}

int ows_machine_remove(const ows_config *config, const ows_setup_options *opts, ows_error *err)
{
	return not_yet(err, "machine remove");
}

int ows_machine_cleanup(const ows_config *config, ows_error *err)
{
	return not_yet(err, "machine cleanup");
}

int ows_acl_grant(const ows_config *config, const char *session_id, const char *account,
		  const char *path, ows_access access, const char *home_root, ows_error *err)
{
	return not_yet(err, "acl");
}

int ows_acl_revoke(const ows_config *config, const char *session_id, const char *account,
		   const char *path, ows_error *err)
{
	return not_yet(err, "acl");
}
