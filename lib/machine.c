/*
 * The public machine calls (ows_machine_*, ows_report_json) on every platform: which
 * setup a call is for (the options' provider, through the provider table), and the
 * machine's config for a NULL one; the setups themselves are the platforms' and
 * openshell's (struct ows__machine_ops).  Decides nothing about a machine itself.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

void ows_setup_options_init(ows_setup_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

/* The setup a provider needs: its own, or the platform's. */
static const ows__machine_ops *machine_of(const ows__provider *p)
{
	return p && p->machine ? p->machine : &ows__machine_own;
}

/* The setup `name` needs: NULL names the machine's own; a name this platform lacks is refused. */
static int pick(const char *name, const ows__machine_ops **m, ows_error *err)
{
	const ows__provider *p = NULL;
	if (name && !(p = ows__provider_find(name)))
		return ows__fail(err, OWS_EUNSUPPORTED, 0, name,
				 "run `owsbx report` to see the providers this machine offers",
				 "this provider cannot be set up here");
	*m = machine_of(p);
	return 0;
}

/* The options' provider; a host built against an older header passes a struct without it. */
static const char *provider_of(const ows_setup_options *o)
{
	bool has = o && o->size >= offsetof(ows_setup_options, provider) + sizeof(o->provider);
	return has ? o->provider : NULL;
}

/*
 * Each call below: the setup it is for, then the config given or, for NULL, the machine's
 * (ows_config_load(NULL)), as the header says, held for the call and released after it.
 */

int ows_machine_plan(const ows_config *c, const ows_setup_options *o, char **plan, ows_error *err)
{
	const ows__machine_ops *m = NULL;
	ows_config machine;
	const ows_config *use;
	int rc = pick(provider_of(o), &m, err);
	if (rc == 0 && (rc = ows__config_or_machine(c, &machine, &use, err)) == 0) {
		rc = m->plan(use, o, plan, err);
		ows__config_release(&machine);
	}
	return rc;
}

int ows_machine_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	const ows__machine_ops *m = NULL;
	ows_config machine;
	const ows_config *use;
	int rc = pick(provider_of(o), &m, err);
	if (rc == 0 && (rc = ows__config_or_machine(c, &machine, &use, err)) == 0) {
		rc = m->setup(use, o, err);
		ows__config_release(&machine);
	}
	return rc;
}

int ows_machine_status_of(const ows_config *c, const char *provider, char **status,
			  ows_error *err)
{
	const ows__machine_ops *m = NULL;
	ows_config machine;
	const ows_config *use;
	if (status)
		*status = NULL;
	int rc = pick(provider, &m, err);
	if (rc == 0 && (rc = ows__config_or_machine(c, &machine, &use, err)) == 0) {
		rc = m->status(use, status, err);
		ows__config_release(&machine);
	}
	return rc;
}

int ows_machine_status(const ows_config *c, char **status, ows_error *err)
{
	return ows_machine_status_of(c, NULL, status, err);
}

/* The machine's own setup, whichever provider the options name (openshell removes nothing). */
int ows_machine_remove(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(c, &machine, &use, err);
	if (rc == 0)
		rc = ows__machine_own.remove(use, o, err);
	ows__config_release(&machine);
	return rc;
}

int ows_machine_cleanup(const ows_config *c, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(c, &machine, &use, err);
	if (rc == 0)
		rc = ows__machine_own.cleanup(use, err);
	ows__config_release(&machine);
	return rc;
}

int ows_report_json(const ows_config *c, char **out, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(c, &machine, &use, err);
	if (rc == 0)
		rc = ows__machine_own.report(use, out, err);
	ows__config_release(&machine);
	return rc;
}
