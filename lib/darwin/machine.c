/*
 * The machine on macOS: nothing to install.  The seatbelt provider needs
 * only what macOS ships (/usr/bin/sandbox-exec) and a host that is not
 * itself in a sandbox; status says whether sessions would be refused and
 * why, cleanup ends what hosts that died left.  The Linux calls with no
 * macOS meaning (ACL grants, AppArmor) say so.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "darwin.h"

static int dump(json_t *j, char **out, ows_error *err)
{
	*out = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	json_decref(j);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

static int machine_plan(const ows_config *c, const ows_setup_options *o, char **plan,
			ows_error *err)
{
	if (!plan)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "plan_json is NULL");
	*plan = NULL;
	json_t *notes = json_pack("[s]", "nothing to set up on macOS: the seatbelt provider uses "
				  "what macOS ships; `owsbx machine sandbox status` says whether "
				  "sessions can start");
	return dump(json_pack("{s:[], s:o, s:s, s:b, s:s}", "changes", "notes", notes, "command",
			      "", "blocked", 0, "config", c ? ows_config_path(c) : ""),
		    plan, err);
}

static int machine_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	(void)c;
	(void)err;
	if (o && o->progress)
		o->progress(o->progress_ctx, "nothing to set up on macOS");
	return 0;
}

static int machine_remove(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	(void)c;
	(void)err;
	if (o && o->progress)
		o->progress(o->progress_ctx, "nothing to remove on macOS");
	return 0;
}

/* Sessions of hosts that died: their processes, private folders and records. */
int ows__machine_cleanup(const ows_config *c, ows_error *err)
{
	(void)c; /* the records live in one place whatever the config */
	return ows__sb_cleanup(err);
}

static void row(json_t *rows, int *failing, const char *item, bool ok, const char *fix,
		const char *fmt, ...) OWS__PRINTF(6, 7);
static void row(json_t *rows, int *failing, const char *item, bool ok, const char *fix,
		const char *fmt, ...)
{
	char detail[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (!ok)
		(*failing)++;
	json_t *j = json_pack("{s:s, s:b, s:s, s:s}", "item", item, "ok", ok, "state",
			      ok ? "ok" : "fail", "detail", detail);
	if (!ok && fix && *fix)
		json_object_set_new(j, "fix", json_string(fix));
	json_array_append_new(rows, j);
}

/* One row: would seatbelt sessions start here, and if not, why (nested, no sandbox-exec). */
static int machine_status(const ows_config *c, char **status, ows_error *err)
{
	if (!status)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "status_json is NULL");
	*status = NULL;
	json_t *rows = json_array();
	int failing = 0;
	char why[512], fix[256];
	bool usable = ows__sb_usable(why, sizeof(why), fix, sizeof(fix));
	if (usable)
		row(rows, &failing, "seatbelt", true, NULL, "sessions can start: %s", why);
	else
		row(rows, &failing, "seatbelt", false, fix,
		    "sessions on this machine are refused: %s", why);
	const char *provider = c && c->provider ? c->provider : "";
	if (strcmp(provider, "") != 0 && strcmp(provider, "seatbelt") != 0 &&
	    strcmp(provider, "direct") != 0)
		row(rows, &failing, "provider", false,
		    "set provider = seatbelt under [sandbox] in the machine's config",
		    "the config's provider %s does not exist on macOS", provider);
	json_t *out = json_pack("{s:s, s:b, s:o, s:i, s:s}", "provider_in_config", provider,
				"set_up", failing == 0, "rows", rows, "failing", failing, "config",
				c ? ows_config_path(c) : "");
	int rc = dump(out, status, err);
	return rc < 0 ? rc : failing;
}

/* The machine's own setup (lib/machine.c): the seatbelt's and direct's. */
const ows__machine_ops ows__machine_own = {
	.plan = machine_plan,
	.setup = machine_setup,
	.status = machine_status,
	.remove = machine_remove,
	.cleanup = ows__machine_cleanup,
	.report = ows__report_json, /* provider.c */
};

/* ------------------------------------------------- what macOS does not have */

int ows_acl_grant(const ows_config *c, const char *session_id, const char *account,
		  const char *path, ows_access access, const char *home_root, ows_error *err)
{
	(void)c, (void)session_id, (void)account, (void)access, (void)home_root;
	return ows__fail(err, OWS_ENOSYS, 0, path, "the seatbelt provider needs no grant",
			 "ACL grants are for the Linux account provider; macOS sessions are "
			 "walled by their Seatbelt profile");
}

int ows_acl_revoke(const ows_config *c, const char *session_id, const char *account,
		   const char *path, ows_error *err)
{
	(void)c, (void)session_id, (void)account;
	return ows__fail(err, OWS_ENOSYS, 0, path, "the seatbelt provider needs no grant",
			 "ACL grants are for the Linux account provider; macOS has none to revoke");
}

/* AppArmor is a Linux module: nothing to grant here. */
int ows_apparmor_profile(const char *exe, const char *name, char **out, ows_error *err)
{
	(void)exe, (void)name;
	if (out)
		*out = NULL;
	return ows__fail(err, OWS_ENOSYS, 0, NULL, "macOS needs no AppArmor profile",
			 "AppArmor profiles are for Linux");
}
