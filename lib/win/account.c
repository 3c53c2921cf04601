/*
 * The `windows` provider: the reference design (spec 000).
 *
 * Commands run as OWSandboxOpenNet (`open`) or OWSandboxClosedNet (`none`;
 * `allowlist`, through the session's proxy on Winsock), accounts that machine setup
 * made.  At open: the session folders are granted to the account (acl.c,
 * journaled first, in a journal the session holds open), a private folder
 * under the state folder is made and granted, WinSta0 is opened to the
 * account (reference-counted like the folders), a job (kill on close, no breakaway) and a desktop of the
 * session's own are created, and the wall is proved from inside by the
 * runner.  Each command is the runner, started with CreateProcessWithLogonW
 * as the account, suspended, put in the job, then resumed; it reads its
 * command and environment from a request file (cli/win/runner.c).
 */
#include <winsock2.h>
#include <ws2tcpip.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "record.h"
#include "win.h"

#include <sddl.h>

typedef struct win_impl {
	ows__win_base base; /* first: the shared wait and kill find it there */
	char *state_dir;
	char account[32];
	wchar_t password[33];
	HANDLE journal; /* held open for the session's life: cleanup leaves it */
	char **granted;
	size_t ngranted;
	char *private_dir;
	HDESK desktop;
	wchar_t desktop_name[64];
	wchar_t runner[MAX_PATH];
} win_impl;

static int machine_ready(const ows_config *c, ows_error *err)
{
	json_t *rec = NULL;
	int rc = ows__record_load(c->state_dir, &rec, err);
	json_decref(rec);
	if (rc < 0)
		return ows__fail(err, OWS_ESETUP, 0, c->state_dir, OWS__WIN_SETUP_HINT,
				 "the Windows sandbox is not set up on this machine");
	return 0;
}

static void impl_free(win_impl *w, ows_session *s)
{
	ows__win_base_close(&w->base);
	if (w->desktop)
		CloseDesktop(w->desktop);
	ows_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.state_dir = w->state_dir; /* all that revoke reads: where the journal is */
	for (size_t i = w->ngranted; i-- > 0;) {
		ows_acl_revoke(&cfg, s->id, w->account, w->granted[i], NULL);
		free(w->granted[i]);
	}
	free(w->granted);
	if (w->journal)
		ows__win_journal_release(&cfg, s->id, w->journal);
	if (w->private_dir)
		ows__win_rmtree(w->private_dir, NULL);
	free(w->private_dir);
	free(w->state_dir);
	SecureZeroMemory(w->password, sizeof(w->password));
	free(w);
}

static int grant(win_impl *w, ows_session *s, const ows_config *c, const char *path,
		 ows_access access, const char *home, ows_error *err)
{
	int rc = ows_acl_grant(c, s->id, w->account, path, access, home, err);
	if (rc < 0)
		return rc;
	if (!(w->granted[w->ngranted] = ows__strdup(path, err)))
		return OWS_ENOMEM;
	w->ngranted++;
	return 0;
}

/* The streams' values in the runner, as the request's first field ("" for none). */
static bool hand_over_streams(HANDLE runner, const HANDLE std[3], wchar_t *field, size_t len)
{
	HANDLE remote[3] = {NULL, NULL, NULL};
	for (int i = 0; i < 3; i++) {
		/* Inheritable in the runner, so that the command it starts inherits them. */
		if (!DuplicateHandle(GetCurrentProcess(), std[i], runner, &remote[i], 0, TRUE,
				     DUPLICATE_SAME_ACCESS))
			return false;
	}
	swprintf(field, len, L"%llx %llx %llx", (unsigned long long)(uintptr_t)remote[0],
		 (unsigned long long)(uintptr_t)remote[1], (unsigned long long)(uintptr_t)remote[2]);
	return true;
}

int ows__win_runner_request(HANDLE runner, const HANDLE std[3], const wchar_t *path,
			    const wchar_t *cwd, const wchar_t *line, const wchar_t *entries,
			    ows_error *err)
{
	wchar_t streams[64] = L"";
	if (std && !hand_over_streams(runner, std, streams, 64))
		return ows__fail_win(err, OWS_ESPAWN, GetLastError(), "DuplicateHandle", NULL,
				     "cannot pass the standard streams to the runner");
	HANDLE h = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return ows__fail_win(err, OWS_ESPAWN, GetLastError(), "the runner's request", NULL,
				     "cannot write the command's request");
	size_t elen = 0;
	while (entries && entries[elen])
		elen += wcslen(entries + elen) + 1;
	DWORD n;
	BOOL ok = WriteFile(h, streams, (DWORD)((wcslen(streams) + 1) * 2), &n, NULL) &&
		  WriteFile(h, cwd, (DWORD)((wcslen(cwd) + 1) * 2), &n, NULL) &&
		  WriteFile(h, line, (DWORD)((wcslen(line) + 1) * 2), &n, NULL) &&
		  (!elen || WriteFile(h, entries, (DWORD)(elen * 2), &n, NULL)) &&
		  WriteFile(h, L"\0", 2, &n, NULL);
	DWORD e = GetLastError();
	CloseHandle(h);
	if (!ok) {
		DeleteFileW(path);
		return ows__fail_win(err, OWS_ESPAWN, e, "the runner's request", NULL,
				     "cannot write the command's request");
	}
	return 0;
}

/*
 * The runner as the account, suspended, in the job; then its request (named by
 * the proc's id, 0 for the proof: unique in the session, also for spawns on
 * several threads) with the command's streams duplicated into it, since
 * handles are not inherited across a logon; then resumed.  stdio NULL: the
 * runner's own streams (the proof's).
 */
static int start_runner(win_impl *w, uint32_t id, const wchar_t *cwd, const wchar_t *cmdline,
			const wchar_t *entries, const int *stdio, HANDLE *proc, DWORD *pid,
			ows_error *err)
{
	wchar_t req[MAX_PATH];
	swprintf(req, MAX_PATH, L"%hs\\req-%u.bin", w->private_dir, (unsigned)id);
	wchar_t line[2 * MAX_PATH + 8];
	swprintf(line, sizeof(line) / sizeof(line[0]), L"\"%ls\" \"%ls\"", w->runner, req);
	wchar_t desk[96];
	swprintf(desk, 96, L"WinSta0\\%ls", w->desktop_name);
	wchar_t *user = ows__wide(w->account);
	STARTUPINFOW si;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.lpDesktop = desk;
	PROCESS_INFORMATION pi;
	memset(&pi, 0, sizeof(pi));
	BOOL ok = user && CreateProcessWithLogonW(user, L".", w->password, LOGON_WITH_PROFILE,
						  w->runner, line,
						  CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
							  CREATE_NO_WINDOW,
						  NULL, cwd, &si, &pi);
	DWORD e = GetLastError();
	free(user);
	/* Wine returns FALSE with error 0 and runs nothing: say so rather than guess. */
	if (!ok || !pi.hProcess)
		return ows__fail_win(err, OWS_ESPAWN, e, "CreateProcessWithLogonW",
				     OWS__WIN_SETUP_HINT, "cannot start the runner as the sandbox account");
	int rc = 0;
	if (!AssignProcessToJobObject(w->base.job, pi.hProcess))
		rc = ows__fail_win(err, OWS_ESPAWN, GetLastError(), "AssignProcessToJobObject", NULL,
				   "cannot put the runner in the session's job");
	HANDLE std[3] = {INVALID_HANDLE_VALUE, INVALID_HANDLE_VALUE, INVALID_HANDLE_VALUE};
	for (int i = 0; rc == 0 && stdio && i < 3; i++)
		if ((std[i] = ows__win_std_handle(stdio[i], (DWORD)i)) == INVALID_HANDLE_VALUE)
			rc = ows__fail_win(err, OWS_ESPAWN, GetLastError(), "stdio", NULL,
					   "cannot pass a standard stream to the command");
	if (rc == 0)
		rc = ows__win_runner_request(pi.hProcess, stdio ? std : NULL, req, cwd, cmdline,
					     entries, err);
	for (int i = 0; i < 3; i++)
		if (std[i] != INVALID_HANDLE_VALUE)
			CloseHandle(std[i]);
	if (rc < 0) {
		TerminateProcess(pi.hProcess, 1);
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
		return rc;
	}
	ResumeThread(pi.hThread);
	CloseHandle(pi.hThread);
	*proc = pi.hProcess;
	if (pid)
		*pid = pi.dwProcessId;
	return 0;
}

/*
 * A listener for the closed-mode proof: every address of the machine, IPv4
 * and IPv6 (one dual-stack socket), on a port outside the proxy's range,
 * which the account must not reach.
 */
static SOCKET listen_outside_range(int *port)
{
	for (int tries = 0; tries < 8; tries++) {
		SOCKET l = socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP);
		if (l == INVALID_SOCKET)
			return l;
		DWORD off = 0;
		setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, (const char *)&off, sizeof(off));
		struct sockaddr_in6 a;
		memset(&a, 0, sizeof(a));
		a.sin6_family = AF_INET6;
		a.sin6_addr = in6addr_any;
		int len = sizeof(a);
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 4) == 0 &&
		    getsockname(l, (struct sockaddr *)&a, &len) == 0) {
			*port = ntohs(a.sin6_port);
			if (*port < OWS__PROXY_PORT_FIRST || *port > OWS__PROXY_PORT_LAST)
				return l;
		}
		closesocket(l);
	}
	return INVALID_SOCKET;
}

static int prove(win_impl *w, ows_session *s, const ows_policy *p, const char *home,
		 ows_error *err)
{
	/* Closed modes: a port outside the proxy's range, listened on, must be out of reach. */
	WSADATA wd;
	bool closed = s->net != OWS_NET_OPEN, ws = closed && WSAStartup(MAKEWORD(2, 2), &wd) == 0;
	int port = 0;
	SOCKET l = ws ? listen_outside_range(&port) : INVALID_SOCKET;
	if (closed && l == INVALID_SOCKET) {
		if (ws)
			WSACleanup();
		return ows__fail(err, OWS_EVERIFY, 0, "proof", NULL,
				 "cannot listen on a local port for the closed mode's proof");
	}
	/* Entries: every folder as granted, the profile unreadable, the port unreachable. */
	size_t cap = 24;
	for (size_t i = 0; i < p->nfolders; i++)
		cap += strlen(p->folders[i].path) + 8;
	cap += (home ? strlen(home) : 0) + strlen(w->private_dir) + 16;
	wchar_t *entries = ows__calloc(cap, sizeof(wchar_t), err);
	if (!entries)
		return OWS_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < p->nfolders; i++)
		n += (size_t)swprintf(entries + n, cap - n, L"%ls %hs",
				      p->folders[i].access == OWS_ACCESS_RW ? L"+w" : L"+r",
				      p->folders[i].path) + 1;
	n += (size_t)swprintf(entries + n, cap - n, L"+w %hs", w->private_dir) + 1;
	if (home)
		n += (size_t)swprintf(entries + n, cap - n, L"-r %hs", home) + 1;
	if (closed)
		n += (size_t)swprintf(entries + n, cap - n, L"-p %d", port) + 1;
	entries[n] = L'\0';
	wchar_t cwd[MAX_PATH];
	swprintf(cwd, MAX_PATH, L"%hs", w->private_dir);
	HANDLE h = NULL;
	int rc = start_runner(w, 0 /* no proc has id 0 */, cwd, L"?prove", entries, NULL, &h, NULL,
			      err);
	free(entries);
	ows__check chk = {.name = "proof from inside", .passed = 0};
	if (rc == 0) {
		DWORD code = 1;
		WaitForSingleObject(h, 30000);
		GetExitCodeProcess(h, &code);
		CloseHandle(h);
		chk.passed = code == 0;
		snprintf(chk.detail, sizeof(chk.detail), "%lu failed checks (folders, profile%s)",
			 (unsigned long)code, closed ? ", a local port outside 47800-47899" : "");
	} else {
		snprintf(chk.detail, sizeof(chk.detail), "the runner did not start");
	}
	if (l != INVALID_SOCKET)
		closesocket(l);
	if (ws)
		WSACleanup();
	s->proof_json = ows__proof_json("windows", ows__net_name(s->net), &chk, 1, NULL);
	if (rc == 0 && !chk.passed)
		rc = ows__fail(err, OWS_EVERIFY, 0, "proof", "run `owsbx machine sandbox status`",
			       "the wall failed its proof from inside");
	return rc;
}

static int windows_open(ows_session *s, const ows_policy *policy, const ows_config *config,
			ows_error *err)
{
	if (policy->credentials.len)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "credentials", "leave credentials out for now",
				 "the windows provider does not copy credentials in yet");
	int rc = machine_ready(config, err);
	if (rc < 0)
		return rc;
	win_impl *w = ows__calloc(1, sizeof(*w), err);
	if (!w)
		return OWS_ENOMEM;
	char *home = NULL;
	const char *h, *t, *c;
	ows__strv paths = {0};
	snprintf(w->account, sizeof(w->account), "%s",
		 s->net == OWS_NET_OPEN ? OWS__WIN_OPEN_USER_A : OWS__WIN_CLOSED_USER_A);
	if (!(w->granted = ows__calloc(policy->nfolders + 3, sizeof(char *), err)) ||
	    !(w->state_dir = ows__strdup(config->state_dir, err))) {
		rc = OWS_ENOMEM;
		goto fail;
	}
	if ((rc = ows__win_password_of(config->state_dir, w->account, w->password, err)) < 0)
		goto fail;
	if ((rc = ows__win_journal_hold(config, s->id, &w->journal, err)) < 0)
		goto fail;
	ows_machine_cleanup(config, NULL); /* grants crashed hosts left behind */
	home = ows__plat_home_dir();
	for (size_t i = 0; i < policy->nfolders; i++) {
		const ows__folder *f = &policy->folders[i];
		if ((rc = ows__check_folder_vs_home(f->path, home, err)) < 0 ||
		    (rc = grant(w, s, config, f->path, f->access, home ? home : f->path, err)) < 0)
			goto fail;
	}
	w->private_dir = ows__asprintf(err, "%s\\sandboxes\\%s", config->state_dir, s->id);
	rc = w->private_dir ? ows__session_layout(s, policy, w->private_dir, '\\', w->account,
						  "windows", &paths, err)
			    : OWS_ENOMEM;
	if (rc < 0)
		goto fail;
	h = paths.v[0];
	t = paths.v[1];
	c = paths.v[2];
	if ((rc = ows__win_mkdir_p(h, err)) < 0 || (rc = ows__win_mkdir_p(t, err)) < 0 ||
	    (rc = ows__win_mkdir_p(c, err)) < 0 ||
	    (rc = grant(w, s, config, w->private_dir, OWS_ACCESS_RW, w->private_dir, err)) < 0 ||
	    (rc = grant(w, s, config, OWS__WIN_WINSTA, OWS_ACCESS_RO, OWS__WIN_WINSTA, err)) < 0)
		goto fail;
	ows__strv_pushf(&s->env, err, "USERPROFILE=%s", h);
	ows__strv_pushf(&s->env, err, "TEMP=%s", t);
	ows__strv_pushf(&s->env, err, "TMP=%s", t);
	ows__strv_pushf(&s->env, err, "LOCALAPPDATA=%s", c);
	const char *sr = getenv("SystemRoot");
	if (sr)
		ows__strv_pushf(&s->env, err, "SystemRoot=%s", sr);
	/* allowlist: the closed account reaches only loopback 47800-47899 (the WFP
	 * filters), where the session's proxy listens, on Winsock. */
	int proxy_port;
	if (s->net == OWS_NET_ALLOWLIST &&
	    (rc = ows__session_start_proxy(s, policy, config, NULL, NULL, false, &proxy_port, err)) < 0)
		goto fail;
	if ((rc = ows__job_create(policy, &w->base.job, err)) < 0)
		goto fail;
	/* A desktop of the session's own: no window messages to the person's. */
	char *sid = NULL;
	PSID psid = NULL;
	wchar_t *wsid = NULL;
	if (ows__sid_of(w->account, &psid, err) == 0 && ConvertSidToStringSidW(psid, &wsid))
		sid = ows__narrow(wsid);
	LocalFree(wsid);
	free(psid);
	wchar_t sddl[256];
	swprintf(sddl, 256, L"D:P(A;;GA;;;SY)(A;;GA;;;OW)(A;;GA;;;%hs)", sid ? sid : "SY");
	free(sid);
	PSECURITY_DESCRIPTOR sd = NULL;
	ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL);
	SECURITY_ATTRIBUTES sa = {sizeof(sa), sd, FALSE};
	swprintf(w->desktop_name, 64, L"owsbx-%.16hs", s->id);
	w->desktop = CreateDesktopW(w->desktop_name, NULL, NULL, 0, GENERIC_ALL, &sa);
	LocalFree(sd);
	if (!w->desktop) {
		rc = ows__fail_win(err, 0, GetLastError(), "CreateDesktopW", NULL,
				   "cannot create the session's desktop");
		goto fail;
	}
	DWORD len = GetModuleFileNameW(NULL, w->runner, MAX_PATH);
	wchar_t *slash = len ? wcsrchr(w->runner, L'\\') : NULL;
	if (!slash) {
		rc = ows__fail_win(err, 0, GetLastError(), "GetModuleFileNameW", NULL,
				   "cannot find owsbx-runner.exe");
		goto fail;
	}
	wcscpy(slash + 1, L"owsbx-runner.exe");
	if ((rc = prove(w, s, policy, home, err)) < 0)
		goto fail;
	s->private_dir = ows__strdup(w->private_dir, err);
	s->enforcement = "full";
	s->impl = w;
	free(home);
	ows__strv_free(&paths);
	return 0;
fail:
	impl_free(w, s);
	free(home);
	ows__strv_free(&paths);
	return rc;
}

static int windows_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
			 char *const envp[], const char *cwd, const int stdio[3], ows_error *err)
{
	win_impl *w = s->impl;
	wchar_t *line = ows__win_cmdline(argv, err);
	wchar_t *env = line ? ows__win_envblock(envp, err) : NULL;
	wchar_t *wcwd = cwd ? ows__wide(cwd) : NULL;
	static const int no_stdio[3] = {OWS_STDIO_NULL, OWS_STDIO_NULL, OWS_STDIO_NULL};
	HANDLE h = NULL;
	DWORD pid = 0;
	int rc = line && env && wcwd ? 0 : (err && err->code ? err->code : OWS_ENOMEM);
	if (rc == 0)
		rc = start_runner(w, proc->id, wcwd, line, env, stdio ? stdio : no_stdio, &h, &pid,
				  err);
	if (rc == 0) {
		proc->pid = (int)pid;
		rc = ows__win_proc_put(s, proc, h, err);
	}
	free(line);
	free(env);
	free(wcwd);
	return rc;
}

static int windows_close(ows_session *s, ows_error *err)
{
	win_impl *w = s->impl;
	if (!w)
		return 0;
	(void)err;
	ows__win_proc_collect(s);
	impl_free(w, s); /* the job first, then the grants, then the private folder */
	s->impl = NULL;
	return 0;
}

const ows__provider ows__windows_provider = {
	.name = "windows",
	.open = windows_open,
	.spawn = windows_spawn,
	.wait = ows__win_proc_wait,
	.kill = ows__win_proc_kill,
	.stop = ows__win_proc_stop,
	.close = windows_close,
};
