/*
 * The Windows providers, by name, their shared process handling, and what this machine
 * can enforce (the own setup's report entry).  Starts no session by itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "win.h"

extern const ows__provider ows__windows_provider;
extern const ows__provider ows__direct_provider;
extern const ows__provider ows__appcontainer_provider;

const ows__provider *ows__provider_find(const char *name)
{
	static const ows__provider *const providers[] = {
		&ows__windows_provider,
		&ows__direct_provider,
		&ows__appcontainer_provider,
	};
	for (size_t i = 0; name && i < OWS__ARRAY_LEN(providers); i++)
		if (strcmp(providers[i]->name, name) == 0)
			return providers[i];
	return NULL;
}

static int proc_put(ows__win_base *b, ows_proc *p, HANDLE h, ows_error *err)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->procs[i] == p) { /* a freed handle's address, reused */
			CloseHandle(b->handles[i]);
			b->handles[i] = h;
			return 0;
		}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		ows_proc **np = realloc(b->procs, cap * sizeof(*np));
		if (np)
			b->procs = np;
		HANDLE *nh = np ? realloc(b->handles, cap * sizeof(*nh)) : NULL;
		if (!nh) {
			TerminateProcess(h, 1);
			CloseHandle(h);
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		}
		b->handles = nh;
		b->cap = cap;
	}
	b->procs[b->n] = p;
	b->handles[b->n++] = h;
	return 0;
}

int ows__win_proc_put(ows_session *s, ows_proc *p, HANDLE h, ows_error *err)
{
	ows__session_lock(s);
	int rc = proc_put(s->impl, p, h, err);
	ows__session_unlock(s);
	return rc;
}

/* Borrowed: the table keeps it until close, which no call in flight outlives. */
static HANDLE handle_of(ows_session *s, ows_proc *p)
{
	ows__win_base *b = s->impl;
	HANDLE h = NULL;
	ows__session_lock(s);
	for (size_t i = 0; b && i < b->n && !h; i++)
		if (b->procs[i] == p)
			h = b->handles[i];
	ows__session_unlock(s);
	return h;
}

int ows__win_proc_wait(ows_session *s, ows_proc *p, int timeout_ms, ows_error *err)
{
	HANDLE h = handle_of(s, p);
	if (!h)
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "no such process in this session");
	DWORD r = WaitForSingleObject(h, timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
	if (r == WAIT_TIMEOUT)
		return 0;
	if (r != WAIT_OBJECT_0)
		return ows__fail_win(err, 0, GetLastError(), "WaitForSingleObject", NULL,
				     "cannot wait for the command");
	DWORD code = 0;
	GetExitCodeProcess(h, &code);
	ows__proc_set_exit(p, (int)code);
	return 1;
}

int ows__win_proc_kill(ows_session *s, ows_proc *p, int signo, ows_error *err)
{
	HANDLE h = handle_of(s, p);
	if (!h)
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "no such process in this session");
	/* Windows has no signals: any signal ends the command, with 128+N like a shell. */
	if (!TerminateProcess(h, (UINT)(128 + (signo > 0 ? signo : 9))) &&
	    WaitForSingleObject(h, 0) != WAIT_OBJECT_0)
		return ows__fail_win(err, 0, GetLastError(), "TerminateProcess", NULL,
				     "cannot end the command");
	return 0;
}

void ows__win_proc_stop(ows_session *s)
{
	ows__win_base *b = s->impl;
	if (b && b->job)
		TerminateJobObject(b->job, 137);
}

void ows__win_proc_collect(ows_session *s)
{
	for (ows_proc *p = s->procs; p; p = p->next) {
		HANDLE h = ows__proc_get_exit(p, NULL) ? NULL : handle_of(s, p);
		DWORD code = 137;
		if (h && WaitForSingleObject(h, 5000) == WAIT_OBJECT_0)
			GetExitCodeProcess(h, &code);
		if (!ows__proc_get_exit(p, NULL))
			ows__proc_set_exit(p, (int)code);
	}
}

void ows__win_base_close(ows__win_base *b)
{
	if (b->job) {
		TerminateJobObject(b->job, 137);
		CloseHandle(b->job);
		b->job = NULL;
	}
	for (size_t i = 0; i < b->n; i++) {
		WaitForSingleObject(b->handles[i], 5000);
		CloseHandle(b->handles[i]);
	}
	free(b->procs);
	free(b->handles);
	b->procs = NULL;
	b->handles = NULL;
	b->n = b->cap = 0;
}

static void add(json_t *caps, const char *name, const char *status, const char *why)
{
	json_array_append_new(caps, json_pack("{s:s, s:s, s:s}", "name", name, "status", status,
					      "why", why));
}

/* Spec 004's table for the appcontainer provider, as ows__ac_probe measured it. */
/* A call that is not there is Wine's stub under Wine, and an older Windows elsewhere. */
static const char *ac_status(ows__ac_result r)
{
	if (r == OWS__AC_MISSING && ows__win_is_wine())
		return "not provable here";
	return r == OWS__AC_OK ? "enforced" : "unavailable";
}

static void add_ac(json_t *caps, const char *name, ows__ac_result r, const char *how,
		   const char *why)
{
	char text[320];
	snprintf(text, sizeof(text), "%s%s%s", how, r == OWS__AC_OK ? "" : ": ",
		 r == OWS__AC_OK ? "" : why);
	add(caps, name, ac_status(r), text);
}

static void add_appcontainer(json_t *caps)
{
	ows__ac_measure m;
	ows__ac_probe(&m);
	ows__ac_result fs = m.profile == OWS__AC_OK ? m.token : m.profile;
	add_ac(caps, "appcontainer.profile", m.profile, "one AppContainer profile per session",
	       m.why);
	add_ac(caps, "appcontainer.token", m.token,
	       "a probe child started in the container has TokenIsAppContainer", m.why);
	/* These follow from the token; the report does not probe a folder or a pipe itself. */
	add_ac(caps, "appcontainer.files.session_folders", fs,
	       "an inheritable entry for the container's SID per session folder (follows from "
	       "the AppContainer token; not probed by the report)", m.why);
	add_ac(caps, "appcontainer.ipc", fs,
	       "AppContainer object isolation (follows from the token; not probed by the report)",
	       m.why);
	add_ac(caps, "appcontainer.network.none", m.network, "no network capability", m.why);
	add_ac(caps, "appcontainer.network.open", m.network,
	       "internetClient; loopback isolation keeps it off loopback", m.why);
	add(caps, "appcontainer.network.allowlist", "unavailable",
	    "needs an elevated helper to exempt the container for the proxy's port; not built");
	add_ac(caps, "appcontainer.processes.end_with_session", m.started,
	       "children stay in the container and in a kill-on-close job", m.why);
	add(caps, "appcontainer.no_link_local", "unavailable", "internetClient reaches link-local");
	add(caps, "appcontainer.exec_writable_deny", "unavailable",
	    "any readable binary is executable without application control");
}

int ows__report_json(const ows_config *config, char **out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	*out = NULL;
	json_t *caps = json_array();
	if (!caps)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	char *st = NULL;
	int failing = ows_machine_status(config, &st, NULL);
	ows_free(st);
	bool ready = failing == 0;
	bool wine = ows__win_is_wine();
	add(caps, "provider.windows", ready ? "enforced" : "unavailable",
	    ready ? "hidden accounts, folder permissions, firewall rule and WFP filters, job object"
		  : "needs machine setup: " OWS__WIN_SETUP_HINT);
	add(caps, "files.session_folders", ready ? "enforced" : "unavailable",
	    "one permission entry per session folder, revoked at close");
	add(caps, "files.home_hidden", ready ? "enforced" : "unavailable",
	    "another account cannot read the person's profile");
	add(caps, "network.open", ready ? "enforced" : "unavailable",
	    "runs as " OWS__WIN_OPEN_USER_A "; files are still the wall");
	add(caps, "network.none", ready ? "enforced" : "unavailable",
	    "runs as " OWS__WIN_CLOSED_USER_A ": firewall blocks outbound, WFP closes loopback");
	add(caps, "network.allowlist", "partial",
	    "the session's proxy on Winsock; the closed account's WFP filters need real Windows");
	add(caps, "processes.end_with_session", "enforced",
	    "a job object with kill-on-close and no breakaway");
	add(caps, "secrets.environment", "enforced",
	    "minimal environment; secret-looking names never passed");
	add(caps, "limits.memory_processes_cpu", "enforced", "job object limits");
	add(caps, "provider.direct", "partial", "no wall at all; used only when asked for by name");
	add_appcontainer(caps);
	json_t *root = json_pack("{s:s, s:s, s:b, s:o}", "version", OWS_VERSION, "config",
				 config ? ows_config_path(config) : "", "wine", wine,
				 "capabilities", caps);
	*out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

/* AppArmor is a Linux module: nothing to grant here. */
int ows_apparmor_profile(const char *exe, const char *name, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	return ows__fail(err, OWS_ENOSYS, 0, NULL, NULL, "AppArmor profiles are for Linux");
}
