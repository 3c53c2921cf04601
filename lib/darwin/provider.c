/*
 * The macOS providers, by name, and what this machine can enforce (`owsbx report`, the
 * own setup's report entry).  Reads and asks only: it starts no session.
 */
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "darwin.h"

extern const ows__provider ows__seatbelt_provider;
extern const ows__provider ows__direct_provider;
extern const ows__provider ows__openshell_provider;

const ows__provider *ows__provider_find(const char *name)
{
	static const ows__provider *const providers[] = {
		&ows__seatbelt_provider,
		&ows__direct_provider,
		&ows__openshell_provider,
	};
	for (size_t i = 0; name && i < OWS__ARRAY_LEN(providers); i++)
		if (strcmp(providers[i]->name, name) == 0)
			return providers[i];
	return NULL;
}

static void add(json_t *caps, const char *name, const char *status, const char *why)
{
	json_array_append_new(caps, json_pack("{s:s, s:s, s:s}", "name", name, "status", status,
					      "why", why));
}

/* A promise of the seatbelt provider: as it keeps it, or unavailable when it cannot run here. */
static void add_promise(json_t *caps, bool usable, const char *name, const char *status,
			const char *why)
{
	if (usable)
		add(caps, name, status, why);
	else
		add(caps, name, "unavailable", "the seatbelt provider cannot run here (see "
		    "provider.seatbelt)");
}

/* The rows are named as Linux names them (lib/linux/report.c) where the promise is the same. */
static void add_seatbelt_rows(json_t *caps, bool usable)
{
	add_promise(caps, usable, "files.session_folders", "enforced",
		    "Seatbelt profile: the session's folders at their own paths, read-write or "
		    "read-only as asked; the system read-only; one private folder under /tmp; "
		    "everything else refused");
	add_promise(caps, usable, "files.home_hidden", "enforced",
		    "the profile grants nothing in the home but the toolchains shared read-only; "
		    "the proof lists it, reads a file planted in it and ~/.ssh, and is refused");
	add_promise(caps, usable, "network.none", "enforced",
		    "the profile allows no network operation; the proof reaches for a loopback "
		    "port and is refused");
	add_promise(caps, usable, "network.allowlist", "enforced",
		    "the profile allows localhost on the session proxy's port and nothing else; "
		    "the proxy keeps the allow list; a program that ignores the proxy variables has "
		    "no network");
	add_promise(caps, usable, "network.open", "enforced", "any host; files are still the wall");
	add_promise(caps, usable, "processes.end_with_session", "partial",
		    "every process of the session, double-forked daemons too, carries the profile "
		    "and its markers, and is killed at close; but macOS has no PID namespace: a "
		    "host killed with SIGKILL leaves them running until the next seatbelt session "
		    "opens or `owsbx machine sandbox cleanup` runs, and a process that turns into "
		    "another uid (a setuid program) is not found");
}

int ows__report_json(const ows_config *config, char **out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	*out = NULL;
	json_t *caps = json_array();
	if (!caps)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	char why[512], fix[256], row[800];
	bool usable = ows__sb_usable(why, sizeof(why), fix, sizeof(fix));
	snprintf(row, sizeof(row), "%s%s%s", why, fix[0] ? "; to fix: " : "", fix);
	add(caps, "seatbelt.not_nested", usable ? "enforced" : "unavailable", row);
	add(caps, "provider.seatbelt", usable ? "enforced" : "unavailable",
	    usable ? "Seatbelt profile rendered per session, started with sandbox-exec; needs no "
		     "setup"
		   : row);
	add_seatbelt_rows(caps, usable);
	add(caps, "secrets.environment", "enforced",
	    "minimal environment; secret-looking names never passed");
	add(caps, "limits.wall_time", "enforced", "the host ends the command when time runs out");
	add(caps, "limits.memory_processes_cpu", "unavailable",
	    "Seatbelt has no resource limits: a seatbelt session that asks for memory, process or "
	    "CPU limits is refused");
	add(caps, "provider.direct", "partial", "no wall at all; used only when asked for by name");

	json_t *root = json_pack("{s:s, s:s, s:o}", "version", OWS_VERSION, "config",
				 config ? ows_config_path(config) : "", "capabilities", caps);
	*out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}
