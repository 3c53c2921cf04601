/*
 * The `appcontainer` provider (spec 004): no administrator, no accounts.
 *
 * One AppContainer profile per session, OWSandbox.<session id>.  Its SID
 * gets an inheritable entry on every session folder (modify, or read and
 * execute) and on the private folder, and each read-write one is labelled
 * Low integrity for the session (labels below); `none` asks for no capability, `open`
 * for internetClient (loopback isolation keeps it off the host's
 * loopback); `allowlist` needs an elevated helper to exempt the container
 * for the proxy's port, which does not exist yet, so it is refused.  Every
 * command is started suspended with PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES,
 * put in the session's kill-on-close job, and resumed only once its token says
 * TokenIsAppContainer (job.c); children of an AppContainer process stay in it.
 * Open proves that once with a probe child before the session counts as started.
 *
 * What open made is written first to a marker, <base>\owsandbox-ac\<id>.ac,
 * held open without delete sharing while the session lives: the next open
 * finds the markers of killed hosts (they open with DELETE) and undoes them.
 *
 * The profile functions are looked up at run time: Wine 8's userenv.dll does
 * not export them, and an import it lacks would stop every program linking
 * this library from loading there.  mingw-w64's userenv.h declares them; the
 * pointer types below follow those declarations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "record.h"
#include "win.h"

#include <sddl.h>
#include <userenv.h>

typedef HRESULT(WINAPI *create_profile_fn)(PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD,
					    PSID *);
typedef HRESULT(WINAPI *delete_profile_fn)(PCWSTR);
typedef HRESULT(WINAPI *derive_sid_fn)(PCWSTR, PSID *);

typedef struct ac_api {
	create_profile_fn create;
	delete_profile_fn del;
	derive_sid_fn derive;
} ac_api;

static INIT_ONCE api_once = INIT_ONCE_STATIC_INIT;
static ac_api api; /* written once under api_once, read only after */

static BOOL CALLBACK api_load(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
	HMODULE m = LoadLibraryW(L"userenv.dll");
	if (m) {
		/* Through void*: the C standard has no cast between function pointer types. */
		FARPROC c = GetProcAddress(m, "CreateAppContainerProfile");
		FARPROC d = GetProcAddress(m, "DeleteAppContainerProfile");
		FARPROC s = GetProcAddress(m, "DeriveAppContainerSidFromAppContainerName");
		memcpy(&api.create, &c, sizeof(c));
		memcpy(&api.del, &d, sizeof(d));
		memcpy(&api.derive, &s, sizeof(s));
	}
	return TRUE;
}

/* The profile functions, or OWS_EUNSUPPORTED naming the one missing. */
static int api_get(const ac_api **out, ows_error *err)
{
	InitOnceExecuteOnce(&api_once, api_load, NULL, NULL);
	*out = &api;
	if (!api.create || !api.del || !api.derive)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "CreateAppContainerProfile",
				 "the appcontainer provider needs Windows 10 1809 or later",
				 "userenv.dll does not export the AppContainer profile functions");
	return 0;
}

/* ------------------------------------------------------------ marker */

static char *marker_dir(const ows_config *config, ows_error *err)
{
	char tmp[MAX_PATH + 1];
	const char *base = config && config->private_root ? config->private_root : NULL;
	if (!base) {
		DWORD n = GetTempPathA(sizeof(tmp), tmp);
		if (n == 0 || n > MAX_PATH)
			return ows__fail_win(err, 0, GetLastError(), "GetTempPath", NULL,
					     "cannot find the temporary folder"), NULL;
		base = tmp;
	}
	size_t bl = strlen(base);
	return ows__asprintf(err, "%s%sowsandbox-ac", base,
			     bl && ows__plat_is_sep(base[bl - 1]) ? "" : "\\");
}

static int marker_line(HANDLE h, const char *kind, const char *what, ows_error *err)
{
	char line[MAX_PATH * 3 + 16];
	int n = snprintf(line, sizeof(line), "%s %s\n", kind, what);
	DWORD w;
	if (n < 0 || (size_t)n >= sizeof(line))
		return ows__fail(err, OWS_EINVAL, 0, what, NULL, "the path is too long");
	if (!WriteFile(h, line, (DWORD)n, &w, NULL) || w != (DWORD)n || !FlushFileBuffers(h))
		return ows__fail_win(err, 0, GetLastError(), "WriteFile", NULL,
				     "cannot write the AppContainer marker");
	return 0;
}

static void label_restore(char *rest);

/* Undoes one marker's lines: every grant's entry and label, the private folder, the profile. */
static void undo_marker(const ac_api *a, char *text)
{
	PSID sid = NULL;
	/* By hand, not strtok: its state is the process's, and sessions open on several threads. */
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp++ = '\0';
		if (strcmp(line, "profile") == 0) {
			wchar_t *w = ows__wide(sp);
			if (sid)
				FreeSid(sid);
			sid = NULL;
			if (w && FAILED(a->derive(w, &sid)))
				sid = NULL;
			if (w)
				a->del(w);
			free(w);
		} else if (strcmp(line, "grant") == 0 && sid) {
			ows__acl_set_sid(sp, sid, 0, NULL);
		} else if (strcmp(line, "label") == 0) {
			label_restore(sp);
		} else if (strcmp(line, "dir") == 0) {
			ows__win_rmtree(sp, NULL);
		}
	}
	if (sid)
		FreeSid(sid);
}

/* Markers whose host is gone: a live one is held open without delete sharing. */
static void sweep_stale(const ac_api *a, const char *dir)
{
	char *pattern = ows__asprintf(NULL, "%s\\*.ac", dir);
	wchar_t *wp = pattern ? ows__wide(pattern) : NULL;
	WIN32_FIND_DATAW fd;
	HANDLE f = wp ? FindFirstFileW(wp, &fd) : INVALID_HANDLE_VALUE;
	while (f != INVALID_HANDLE_VALUE) {
		char *name = ows__narrow(fd.cFileName);
		char *path = name ? ows__asprintf(NULL, "%s\\%s", dir, name) : NULL;
		wchar_t *w = path ? ows__wide(path) : NULL;
		HANDLE h = w ? CreateFileW(w, GENERIC_READ | DELETE, 0, NULL, OPEN_EXISTING, 0, NULL)
			     : INVALID_HANDLE_VALUE;
		if (h != INVALID_HANDLE_VALUE) {
			CloseHandle(h);
			char *text = NULL;
			size_t len = 0;
			if (ows__read_file(path, &text, &len, NULL) == 0) {
				undo_marker(a, text);
				DeleteFileW(w);
			}
			free(text);
		}
		free(w);
		free(path);
		free(name);
		if (!FindNextFileW(f, &fd)) {
			FindClose(f);
			f = INVALID_HANDLE_VALUE;
		}
	}
	free(wp);
	free(pattern);
}

/* ------------------------------------------------------------ labels */

/*
 * An AppContainer process runs at Low integrity, and a folder keeps its
 * Medium label whatever its DACL grants: Windows refuses writes from below
 * (no-write-up).  So each read-write folder is labelled Low, inherited, for
 * the session; its earlier label is written to the marker first ("label
 * SDDL PATH", "-" for none) and put back at close, or by the next open's
 * sweep when the host was killed.
 */


int ows__ac_label_sd(const wchar_t *sddl, PSECURITY_DESCRIPTOR *sd, PACL *sacl, ows_error *err)
{
	BOOL present = FALSE, defaulted = FALSE;
	*sd = NULL;
	*sacl = NULL;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, sd, NULL) ||
	    !GetSecurityDescriptorSacl(*sd, &present, sacl, &defaulted)) {
		DWORD e = GetLastError();
		LocalFree(*sd);
		*sd = NULL;
		return ows__fail_win(err, 0, e, "SDDL", NULL, "cannot build the integrity label");
	}
	return 0;
}

static int label_set(const char *path, const wchar_t *sddl, ows_error *err)
{
	PSECURITY_DESCRIPTOR sd;
	PACL sacl;
	int rc = ows__ac_label_sd(sddl, &sd, &sacl, err);
	wchar_t *w = rc == 0 ? ows__wide(path) : NULL;
	if (rc == 0 && !w)
		rc = ows__fail(err, OWS_EINVAL, EILSEQ, path, NULL, "the path is not valid UTF-8");
	DWORD e = w ? SetNamedSecurityInfoW(w, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, NULL,
					    NULL, NULL, sacl)
		    : ERROR_SUCCESS;
	if (rc == 0 && e != ERROR_SUCCESS)
		rc = ows__fail_win(err, 0, e, path, "check that you own the folder",
				   "cannot set the folder's integrity label");
	free(w);
	LocalFree(sd);
	return rc;
}

/* The folder's label as SDDL ("S:" with no entry when it has none); LocalFree. */
static wchar_t *label_get(const char *path)
{
	wchar_t *w = ows__wide(path), *sddl = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	PACL sacl = NULL;
	if (w && GetNamedSecurityInfoW(w, SE_FILE_OBJECT, LABEL_SECURITY_INFORMATION, NULL, NULL,
				       NULL, &sacl, &sd) == ERROR_SUCCESS)
		ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1,
								     LABEL_SECURITY_INFORMATION,
								     &sddl, NULL);
	LocalFree(sd);
	free(w);
	return sddl;
}

/* "label SDDL PATH": the folder gets its earlier label back ("-": none, as "S:" says). */
static void label_restore(char *rest)
{
	char *sp = strchr(rest, ' ');
	if (!sp)
		return;
	*sp++ = '\0';
	wchar_t *sddl = ows__wide(strcmp(rest, "-") ? rest : "S:");
	if (sddl)
		label_set(sp, sddl, NULL);
	free(sddl);
}

/* ------------------------------------------------------------ session */

typedef struct ac_impl {
	ows__win_base base; /* first: the shared wait and kill find it there */
	const ac_api *api;
	wchar_t profile[64];
	bool made;          /* the profile is ours to delete */
	PSID sid;           /* FreeSid */
	PSID internet;      /* internetClient's capability SID, `open` only; FreeSid */
	SID_AND_ATTRIBUTES cap;
	SECURITY_CAPABILITIES caps;
	ows__strv granted;
	ows__strv labels;   /* "SDDL PATH": the read-write folders' earlier labels */
	char *dir;          /* the private folder */
	char *marker;
	HANDLE marker_h;
} ac_impl;

static void impl_free(ac_impl *a)
{
	ows__win_base_close(&a->base); /* the job first: nothing runs while grants go */
	for (size_t i = a->granted.len; a->sid && i-- > 0;)
		ows__acl_set_sid(a->granted.v[i], a->sid, 0, NULL);
	for (size_t i = a->labels.len; i-- > 0;)
		label_restore(a->labels.v[i]);
	ows__strv_free(&a->labels);
	if (a->dir)
		ows__win_rmtree(a->dir, NULL);
	if (a->made)
		a->api->del(a->profile);
	if (a->marker_h && a->marker_h != INVALID_HANDLE_VALUE) {
		CloseHandle(a->marker_h);
		wchar_t *w = ows__wide(a->marker);
		if (w)
			DeleteFileW(w);
		free(w);
	}
	if (a->sid)
		FreeSid(a->sid);
	if (a->internet)
		FreeSid(a->internet);
	ows__strv_free(&a->granted);
	free(a->dir);
	free(a->marker);
	free(a);
}

int ows__ac_profile_make(const wchar_t *name, PSID *sid, bool *made, ows_error *err)
{
	const ac_api *a;
	int rc = api_get(&a, err);
	if (rc < 0)
		return rc;
	HRESULT hr = a->create(name, name, L"owsandbox session", NULL, 0, sid);
	/* The name holds the session id or the probe's pid: one already there is ours, left by a
	 * host killed before its marker was written, and ours to delete too. */
	if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS))
		hr = a->derive(name, sid);
	*made = SUCCEEDED(hr);
	if (FAILED(hr))
		return ows__fail_win(err, OWS_ESETUP, (DWORD)hr, "CreateAppContainerProfile", NULL,
				     "cannot create the session's AppContainer profile");
	return 0;
}

void ows__ac_profile_drop(const wchar_t *name)
{
	const ac_api *a;
	if (api_get(&a, NULL) == 0)
		a->del(name);
}

int ows__ac_internet_sid(PSID *out, ows_error *err)
{
	SID_IDENTIFIER_AUTHORITY pkg = SECURITY_APP_PACKAGE_AUTHORITY;
	if (!AllocateAndInitializeSid(&pkg, SECURITY_BUILTIN_CAPABILITY_RID_COUNT,
				      SECURITY_CAPABILITY_BASE_RID,
				      SECURITY_CAPABILITY_INTERNET_CLIENT, 0, 0, 0, 0, 0, 0, out))
		return ows__fail_win(err, OWS_ESETUP, GetLastError(), "AllocateAndInitializeSid",
				     NULL, "cannot name the internetClient capability");
	return 0;
}

/* A read-write folder labelled Low for the session, its earlier label journaled first. */
static int label_low(ac_impl *a, const char *path, ows_error *err)
{
	wchar_t *old = label_get(path);
	char *old8 = old ? ows__narrow(old) : NULL;
	LocalFree(old);
	/* "S:" alone (or nothing read) is no label: "-" in the marker. */
	char *line = ows__asprintf(err, "%s %s", old8 && strcmp(old8, "S:") ? old8 : "-", path);
	free(old8);
	int rc = line ? marker_line(a->marker_h, "label", line, err) : OWS_ENOMEM;
	if (rc == 0 && (rc = ows__strv_push(&a->labels, line, err)) == 0)
		rc = label_set(path, OWS__AC_LOW_LABEL, err);
	free(line);
	return rc;
}

static int grant(ac_impl *a, const char *path, ows__ace_kind kind, ows_error *err)
{
	int rc = kind == OWS__ACE_RW ? label_low(a, path, err) : 0;
	if (rc == 0)
		rc = marker_line(a->marker_h, "grant", path, err);
	if (rc == 0 && (rc = ows__acl_set_sid(path, a->sid, kind, err)) == 0 &&
	    ows__strv_push(&a->granted, path, err) < 0)
		rc = OWS_ENOMEM;
	return rc;
}

/* The marker first, then the profile: a host killed between them leaves a marker to sweep. */
static int make_container(ac_impl *a, ows_session *s, const ows_config *config, ows_error *err)
{
	char *dir = marker_dir(config, err);
	int rc = dir ? ows__win_mkdir_p(dir, err) : OWS_ENOMEM;
	if (rc == 0)
		sweep_stale(a->api, dir);
	if (rc == 0 && !(a->marker = ows__asprintf(err, "%s\\%s.ac", dir, s->id)))
		rc = OWS_ENOMEM;
	wchar_t *w = rc == 0 ? ows__wide(a->marker) : NULL;
	a->marker_h = w ? CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ, NULL, CREATE_NEW, 0, NULL)
			: INVALID_HANDLE_VALUE;
	free(w);
	if (rc == 0 && a->marker_h == INVALID_HANDLE_VALUE)
		rc = ows__fail_win(err, OWS_ESETUP, GetLastError(), a->marker, NULL,
				   "cannot write the AppContainer marker");
	swprintf(a->profile, 64, L"OWSandbox.%.40hs", s->id);
	char name[64];
	snprintf(name, sizeof(name), "OWSandbox.%.40s", s->id);
	if (rc == 0)
		rc = marker_line(a->marker_h, "profile", name, err);
	if (rc == 0)
		rc = ows__ac_profile_make(a->profile, &a->sid, &a->made, err);
	if (rc == 0 && s->net == OWS_NET_OPEN) {
		rc = ows__ac_internet_sid(&a->internet, err);
		a->cap.Sid = a->internet;
		a->cap.Attributes = SE_GROUP_ENABLED;
	}
	a->caps.AppContainerSid = a->sid;
	a->caps.Capabilities = a->internet ? &a->cap : NULL;
	a->caps.CapabilityCount = a->internet ? 1 : 0;
	free(dir);
	return rc;
}

/* The private folder, laid out and granted; Windows programs read these names. */
static int make_private(ac_impl *a, ows_session *s, const ows_policy *policy,
			const ows_config *config, ows_error *err)
{
	char *base = marker_dir(config, err);
	a->dir = base ? ows__asprintf(err, "%s\\%s", base, s->id) : NULL;
	free(base);
	ows__strv paths = {0};
	int rc = a->dir ? marker_line(a->marker_h, "dir", a->dir, err) : OWS_ENOMEM;
	if (rc == 0)
		rc = ows__session_layout(s, policy, a->dir, '\\', getenv("USERNAME"), "appcontainer",
					 &paths, err);
	for (size_t i = 0; rc == 0 && i < 3; i++)
		rc = ows__win_mkdir_p(paths.v[i], err);
	if (rc == 0)
		rc = grant(a, a->dir, OWS__ACE_RW, err);
	if (rc == 0) {
		ows__strv_pushf(&s->env, err, "USERPROFILE=%s", paths.v[0]);
		ows__strv_pushf(&s->env, err, "TEMP=%s", paths.v[1]);
		ows__strv_pushf(&s->env, err, "TMP=%s", paths.v[1]);
		ows__strv_pushf(&s->env, err, "LOCALAPPDATA=%s", paths.v[2]);
		const char *sr = getenv("SystemRoot");
		if (sr)
			ows__strv_pushf(&s->env, err, "SystemRoot=%s", sr);
	}
	ows__strv_free(&paths);
	return rc;
}

/* cmd.exe: every AppContainer may read and run the system folder. */
static void cmd_path(char *out, size_t len)
{
	const char *sr = getenv("SystemRoot");
	snprintf(out, len, "%s\\System32\\cmd.exe", sr ? sr : "C:\\Windows");
}

/* cmd.exe's exit code for argv, started in the container and the job (-1: not started). */
static long contained_exit(ac_impl *a, const char *const argv[], ows_error *err)
{
	HANDLE h = NULL;
	if (ows__win_spawn_contained(a->base.job, &a->caps, argv, NULL, a->dir, NULL, &h, NULL,
				     err) < 0)
		return -1;
	DWORD code = 1;
	WaitForSingleObject(h, 30000);
	GetExitCodeProcess(h, &code);
	CloseHandle(h);
	return (long)code;
}

/* From inside, a file written and removed in each read-write folder: the label and the grant. */
static int prove_writes(ac_impl *a, const ows_policy *policy, char *detail, size_t len)
{
	char cmd[MAX_PATH + 32];
	cmd_path(cmd, sizeof(cmd));
	int failed = 0;
	for (size_t i = 0; i <= policy->nfolders; i++) {
		const char *dir = i < policy->nfolders ? policy->folders[i].path : a->dir;
		if (i < policy->nfolders && policy->folders[i].access != OWS_ACCESS_RW)
			continue;
		char probe[MAX_PATH * 2];
		snprintf(probe, sizeof(probe), "%s\\.owsbx-probe-%lu", dir,
			 (unsigned long)GetCurrentProcessId());
		const char *write[] = {cmd, "/d", "/c", "copy", "/y", "NUL", probe, NULL};
		const char *del[] = {cmd, "/d", "/c", "del", "/f", "/q", probe, NULL};
		if (contained_exit(a, write, NULL) != 0) {
			if (!failed++)
				snprintf(detail, len, "cannot write in %s from inside", dir);
		}
		contained_exit(a, del, NULL);
	}
	if (!failed)
		snprintf(detail, len, "a file written in each read-write folder from inside");
	return failed;
}

/* A probe child, started in the container and in the job; its token is checked before it runs. */
static int prove(ac_impl *a, ows_session *s, const ows_policy *policy, ows_error *err)
{
	char cmd[MAX_PATH + 32];
	cmd_path(cmd, sizeof(cmd));
	const char *argv[] = {cmd, "/c", "exit 0", NULL};
	HANDLE h = NULL;
	int rc = ows__win_spawn_contained(a->base.job, &a->caps, argv, NULL, a->dir, NULL, &h,
					  NULL, err);
	ows__check chk[3] = {
		{.name = "AppContainer token", .passed = rc == 0},
		{.name = "network capability", .passed = rc == 0},
		{.name = "read-write folders", .passed = false},
	};
	snprintf(chk[0].detail, sizeof(chk[0].detail), "%s",
		 rc == 0 ? "the probe child's token has TokenIsAppContainer"
			 : "the probe child did not start in the AppContainer");
	snprintf(chk[1].detail, sizeof(chk[1].detail), "%s",
		 a->internet ? "internetClient only; loopback isolation keeps it off loopback"
			     : "no capability: no network");
	if (rc == 0) {
		WaitForSingleObject(h, 30000);
		CloseHandle(h);
		chk[2].passed = prove_writes(a, policy, chk[2].detail, sizeof(chk[2].detail)) == 0;
	} else {
		snprintf(chk[2].detail, sizeof(chk[2].detail), "not tried: no probe child");
	}
	s->proof_json = ows__proof_json("appcontainer", ows__net_name(s->net), chk, 3, NULL);
	if (rc == 0 && !chk[2].passed)
		rc = ows__fail(err, OWS_EVERIFY, 0, "proof", NULL, "%s", chk[2].detail);
	return rc;
}

static int ac_open(ows_session *s, const ows_policy *policy, const ows_config *config,
		   ows_error *err)
{
	if (s->net == OWS_NET_ALLOWLIST)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "network", "use network none or open",
				 "allowlist needs an elevated helper to exempt the AppContainer "
				 "for the proxy's port, which is not built yet");
	if (policy->credentials.len)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "credentials", "leave credentials out for now",
				 "the appcontainer provider does not copy credentials in yet");
	ac_impl *a = ows__calloc(1, sizeof(*a), err);
	if (!a)
		return OWS_ENOMEM;
	a->marker_h = INVALID_HANDLE_VALUE;
	int rc = api_get(&a->api, err);
	if (rc == 0)
		rc = make_container(a, s, config, err);
	/* The same rule as the windows provider: the person's home itself is never granted. */
	char *home = ows__plat_home_dir();
	for (size_t i = 0; rc == 0 && i < policy->nfolders; i++) {
		const ows__folder *f = &policy->folders[i];
		if ((rc = ows__check_folder_vs_home(f->path, home, err)) == 0)
			rc = grant(a, f->path, f->access == OWS_ACCESS_RW ? OWS__ACE_RW : OWS__ACE_RO,
				   err);
	}
	free(home);
	if (rc == 0)
		rc = make_private(a, s, policy, config, err);
	if (rc == 0)
		rc = ows__job_create(policy, &a->base.job, err);
	if (rc == 0)
		rc = prove(a, s, policy, err);
	if (rc == 0 && !(s->private_dir = ows__strdup(a->dir, err)))
		rc = OWS_ENOMEM;
	if (rc < 0) {
		impl_free(a);
		return rc;
	}
	s->enforcement = "full";
	s->impl = a;
	return 0;
}

static int ac_spawn(ows_session *s, ows_proc *proc, const char *const argv[], char *const envp[],
		    const char *cwd, const int stdio[3], ows_error *err)
{
	ac_impl *a = s->impl;
	HANDLE h;
	DWORD pid;
	int rc = ows__win_spawn_contained(a->base.job, &a->caps, argv, envp, cwd, stdio, &h, &pid,
					  err);
	if (rc < 0)
		return rc;
	proc->pid = (int)pid;
	return ows__win_proc_put(s, proc, h, err);
}

static int ac_close(ows_session *s, ows_error *err)
{
	ac_impl *a = s->impl;
	if (!a)
		return 0;
	ows__win_proc_collect(s);
	impl_free(a); /* the job, the grants, the folder, the profile, the marker */
	s->impl = NULL;
	return 0;
}

/* ------------------------------------------------------------ report */

/* Starts a child in `caps` and a job of its own; reads back what its token holds. */
static ows__ac_result probe_child(SECURITY_CAPABILITIES *caps, PSID internet, bool *has_internet,
				  DWORD *ncaps, char *why, size_t whylen)
{
	HANDLE job = NULL, h = NULL;
	char cmd[MAX_PATH + 32];
	cmd_path(cmd, sizeof(cmd));
	const char *argv[] = {cmd, "/c", "exit 0", NULL};
	ows_error e;
	memset(&e, 0, sizeof(e));
	int rc = ows__job_create(NULL, &job, &e);
	if (rc == 0)
		rc = ows__win_spawn_contained(job, caps, argv, NULL, NULL, NULL, &h, NULL, &e);
	if (rc < 0) {
		snprintf(why, whylen, "%s", e.what);
		if (job)
			CloseHandle(job);
		return OWS__AC_FAILED;
	}
	HANDLE tok = NULL;
	unsigned char buf[512];
	DWORD len = 0;
	*has_internet = false;
	*ncaps = 0;
	if (OpenProcessToken(h, TOKEN_QUERY, &tok) &&
	    GetTokenInformation(tok, TokenCapabilities, buf, sizeof(buf), &len)) {
		TOKEN_GROUPS *g = (TOKEN_GROUPS *)buf;
		*ncaps = g->GroupCount;
		for (DWORD i = 0; i < g->GroupCount; i++)
			if (EqualSid(g->Groups[i].Sid, internet))
				*has_internet = true;
	}
	if (tok)
		CloseHandle(tok);
	WaitForSingleObject(h, 30000);
	CloseHandle(h);
	CloseHandle(job);
	return OWS__AC_OK;
}

void ows__ac_probe(ows__ac_measure *m)
{
	memset(m, 0, sizeof(*m));
	ows_error e;
	memset(&e, 0, sizeof(e));
	const ac_api *a;
	if (api_get(&a, &e) < 0) {
		m->profile = m->started = m->token = m->network = OWS__AC_MISSING;
		snprintf(m->why, sizeof(m->why), "%s", e.what);
		return;
	}
	wchar_t name[64];
	swprintf(name, 64, L"owstest.OWSandbox.probe-%lu", (unsigned long)GetCurrentProcessId());
	PSID sid = NULL, internet = NULL;
	bool made = false;
	if (ows__ac_profile_make(name, &sid, &made, &e) < 0) {
		m->profile = OWS__AC_FAILED;
		m->started = m->token = m->network = OWS__AC_MISSING;
		snprintf(m->why, sizeof(m->why), "%s", e.what);
		return;
	}
	m->profile = OWS__AC_OK;
	SID_AND_ATTRIBUTES cap = {0};
	SECURITY_CAPABILITIES caps = {.AppContainerSid = sid};
	bool open_has = false, none_has = true;
	DWORD open_n = 0, none_n = 1;
	if (ows__ac_internet_sid(&internet, &e) == 0) {
		cap.Sid = internet;
		cap.Attributes = SE_GROUP_ENABLED;
		m->started = probe_child(&caps, internet, &none_has, &none_n, m->why, sizeof(m->why));
		caps.Capabilities = &cap;
		caps.CapabilityCount = 1;
		if (m->started == OWS__AC_OK)
			m->started = probe_child(&caps, internet, &open_has, &open_n, m->why,
						 sizeof(m->why));
	}
	/* The spawn refuses a child whose token lacks TokenIsAppContainer: started means checked. */
	m->token = m->started;
	m->network = m->started == OWS__AC_OK && open_has && !none_has && none_n == 0
			     ? OWS__AC_OK
			     : m->started == OWS__AC_OK ? OWS__AC_FAILED : OWS__AC_MISSING;
	if (m->started == OWS__AC_OK && m->network == OWS__AC_FAILED)
		snprintf(m->why, sizeof(m->why), "token capabilities: %lu with none, %lu with open",
			 (unsigned long)none_n, (unsigned long)open_n);
	if (internet)
		FreeSid(internet);
	if (sid)
		FreeSid(sid);
	if (made)
		a->del(name);
}

const ows__provider ows__appcontainer_provider = {
	.name = "appcontainer",
	.open = ac_open,
	.spawn = ac_spawn,
	.wait = ows__win_proc_wait,
	.kill = ows__win_proc_kill,
	.stop = ows__win_proc_stop,
	.close = ac_close,
};
