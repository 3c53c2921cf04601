/*
 * The appcontainer provider and the `owsbx exec` shim under Wine: what Wine
 * implements is run, what it lacks is a skip naming the missing call, never
 * a pass.  Each Win32 call is probed where it is used: the profile functions
 * in userenv.dll, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES in a child,
 * TokenIsAppContainer on a token.  The shim's exit codes are those of a
 * child process (this program re-run as the shim).
 */
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "internal.h"
#include "win.h"
#include "wtap.h"

static char self[MAX_PATH];
static char dir[MAX_PATH];

/* Re-run as the shim: `appcontainer.exe exec POLICY -- ARGV`. */
static int run_self(const char *args)
{
	char line[3 * MAX_PATH];
	snprintf(line, sizeof(line), "\"%s\" %s", self, args);
	STARTUPINFOA si = {.cb = sizeof(si)};
	PROCESS_INFORMATION pi;
	if (!CreateProcessA(NULL, line, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi))
		return -1;
	DWORD code = 0;
	WaitForSingleObject(pi.hProcess, INFINITE);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return (int)code;
}

static void write_policy(const char *name, const char *json, char *path)
{
	snprintf(path, MAX_PATH, "%s\\%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fputs(json, f);
		fclose(f);
	}
}

static int has_export(const char *fn)
{
	HMODULE m = LoadLibraryW(L"userenv.dll");
	return m && GetProcAddress(m, fn) != NULL;
}

static void test_registered(void)
{
	ows_policy *p = NULL;
	ows_error err = {0};
	ok(ows_policy_new(&p, &err) == 0 && ows_policy_set_provider(p, "appcontainer", &err) == 0,
	   "the appcontainer provider is registered");
	ows_policy_free(p);
	char *rep = NULL;
	ok(ows_report_json(NULL, &rep, &err) == 0 && rep &&
		   strstr(rep, "\"appcontainer.profile\"") && strstr(rep, "\"appcontainer.token\"") &&
		   strstr(rep, "\"appcontainer.network.allowlist\""),
	   "owsbx report lists spec 004's rows for appcontainer");
	/* Wine: every measured row must say so, none may claim enforced. */
	if (is_wine() && !has_export("CreateAppContainerProfile"))
		ok(rep && !strstr(rep, "\"appcontainer.profile\",\"status\":\"enforced\"") &&
			   strstr(rep, "\"name\":\"appcontainer.token\",\"status\":\"not provable here\""),
		   "under Wine the report says not provable here, never enforced");
	ows_free(rep);
}

static void test_profile(void)
{
	static const char *fns[] = {"CreateAppContainerProfile", "DeleteAppContainerProfile",
				    "DeriveAppContainerSidFromAppContainerName"};
	for (size_t i = 0; i < 3; i++)
		if (has_export(fns[i]))
			ok(1, "userenv.dll exports %s", fns[i]);
		else
			skip(fns[i], is_wine() ? "Wine stubs it: userenv.dll does not export it"
					       : "userenv.dll does not export it");
	PSID sid = NULL;
	bool made = false;
	ows_error err = {0};
	int rc = ows__ac_profile_make(L"owstest.OWSandbox.profile", &sid, &made, &err);
	if (rc == OWS_EUNSUPPORTED) {
		skip("CreateAppContainerProfile makes a profile", "Wine stubs CreateAppContainerProfile");
		ok(strstr(err.what, "userenv.dll") != NULL, "its absence is an error naming userenv.dll");
		return;
	}
	ok(rc == 0 && sid, "CreateAppContainerProfile makes a profile (%s)", err.what);
	if (sid)
		FreeSid(sid);
	if (made)
		ows__ac_profile_drop(L"owstest.OWSandbox.profile");
}

/* A well-formed AppContainer SID no profile stands for: enough to ask CreateProcess for one. */
static PSID fake_container_sid(void)
{
	SID_IDENTIFIER_AUTHORITY pkg = SECURITY_APP_PACKAGE_AUTHORITY;
	PSID sid = NULL;
	AllocateAndInitializeSid(&pkg, 8, SECURITY_APP_PACKAGE_BASE_RID, 1, 2, 3, 4, 5, 6, 7, &sid);
	return sid;
}

static void test_spawn(void)
{
	HANDLE job = NULL, h = NULL;
	ows_error err = {0};
	PSID sid = fake_container_sid();
	SECURITY_CAPABILITIES caps = {.AppContainerSid = sid};
	char cmd[MAX_PATH + 32];
	snprintf(cmd, sizeof(cmd), "%s\\System32\\cmd.exe",
		 getenv("SystemRoot") ? getenv("SystemRoot") : "C:\\Windows");
	const char *argv[] = {cmd, "/c", "exit 0", NULL};
	int rc = ows__job_create(NULL, &job, &err);
	if (rc == 0)
		rc = ows__win_spawn_contained(job, &caps, argv, NULL, NULL, NULL, &h, NULL, &err);
	if (rc == 0) {
		ok(1, "a child started with SECURITY_CAPABILITIES has TokenIsAppContainer");
		WaitForSingleObject(h, INFINITE);
		CloseHandle(h);
	} else if (rc == OWS_EVERIFY) {
		/* Wine starts it and ignores the attribute: the check must refuse it. */
		skip("a child started with SECURITY_CAPABILITIES runs in an AppContainer",
		     "Wine stubs PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES: the child starts "
		     "with the host's token");
		ok(strstr(err.what, "outside the AppContainer") != NULL,
		   "a child whose token is not an AppContainer's is refused before it runs (%s)",
		   err.what);
	} else {
		/* Wine 8: UpdateProcThreadAttribute refuses the attribute with ERROR_NOT_SUPPORTED. */
		skip("a child started with SECURITY_CAPABILITIES runs in an AppContainer",
		     is_wine() ? "Wine stubs PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES "
				 "(UpdateProcThreadAttribute fails)"
			       : err.what);
	}
	if (job)
		CloseHandle(job);
	FreeSid(sid);
	/* The same spawn without caps runs as before: the direct path is unchanged. */
	const char *argv2[] = {cmd, "/c", "exit 3", NULL};
	job = NULL;
	h = NULL;
	DWORD code = 0;
	rc = ows__job_create(NULL, &job, &err);
	if (rc == 0 && (rc = ows__win_spawn_in_job(job, argv2, NULL, NULL, NULL, &h, NULL, &err)) == 0) {
		WaitForSingleObject(h, INFINITE);
		GetExitCodeProcess(h, &code);
		CloseHandle(h);
	}
	ok(rc == 0 && code == 3, "a spawn without capabilities is not checked for a container");
	if (job)
		CloseHandle(job);
}

static void test_token(void)
{
	HANDLE tok = NULL;
	DWORD is_ac = 7, len = 0;
	BOOL got = OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok) &&
		   GetTokenInformation(tok, TokenIsAppContainer, &is_ac, sizeof(is_ac), &len);
	if (tok)
		CloseHandle(tok);
	if (got)
		ok(is_ac == 0, "TokenIsAppContainer is answered, and 0 for the host's own token");
	else
		skip("TokenIsAppContainer is answered", "Wine stubs GetTokenInformation(TokenIsAppContainer)");
}

static void test_shim(void)
{
	char none[MAX_PATH], allow[MAX_PATH], bad[MAX_PATH], args[3 * MAX_PATH];
	write_policy("none.json", "{\"network\": \"none\"}", none);
	write_policy("allow.json", "{\"network\": \"allowlist\", \"hosts\": [\"example.com\"]}", allow);
	write_policy("bad.json", "{\"network\": ", bad);
	ok(run_self("exec") == OWSBX_EXIT_USAGE, "exec without a policy and a command exits 2");
	snprintf(args, sizeof(args), "exec \"%s\" -- owstest-no-such-command", none);
	ok(run_self(args) == OWSBX_EXIT_START, "a command that does not exist exits 71");
	snprintf(args, sizeof(args), "exec \"%s\" -- cmd /c exit 0", bad);
	ok(run_self(args) == OWSBX_EXIT_SETUP, "a policy that does not parse exits 70");
	snprintf(args, sizeof(args), "exec \"%s\" -- cmd /c exit 0", allow);
	ok(run_self(args) == OWSBX_EXIT_SETUP,
	   "allowlist, which needs the elevated helper, is refused with 70");
	snprintf(args, sizeof(args), "exec \"%s\" -- cmd /c exit 5", none);
	int code = run_self(args);
	if (!has_export("CreateAppContainerProfile"))
		ok(code == OWSBX_EXIT_SETUP, "a profile that cannot be made exits 70 (got %d)", code);
	else
		ok(code == 5, "the command's exit code is passed on (got %d)", code);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec"))
		return owsbx_exec(argc - 2, argv + 2);
	wtap_init();
	GetModuleFileNameA(NULL, self, MAX_PATH);
	char tmp[MAX_PATH];
	GetTempPathA(MAX_PATH, tmp);
	snprintf(dir, sizeof(dir), "%sowstest-ac-%lu", tmp, (unsigned long)GetCurrentProcessId());
	CreateDirectoryA(dir, NULL);
	test_registered();
	test_profile();
	test_spawn();
	test_token();
	test_shim();
	ows__win_rmtree(dir, NULL);
	/* The label a read-write folder gets for the session: writes from Low pass. */
	{
		PSECURITY_DESCRIPTOR sd = NULL;
		PACL sacl = NULL;
		ows_error le = {0};
		SYSTEM_MANDATORY_LABEL_ACE *ace = NULL;
		BYTE low[SECURITY_MAX_SID_SIZE];
		DWORD lowlen = sizeof(low);
		CreateWellKnownSid(WinLowLabelSid, NULL, low, &lowlen);
		bool built = ows__ac_label_sd(OWS__AC_LOW_LABEL, &sd, &sacl, &le) == 0 && sacl &&
			     sacl->AceCount == 1 && GetAce(sacl, 0, (void **)&ace);
		ok(built && ace->Header.AceType == SYSTEM_MANDATORY_LABEL_ACE_TYPE &&
			   EqualSid((PSID)&ace->SidStart, low) &&
			   ace->Mask == SYSTEM_MANDATORY_LABEL_NO_WRITE_UP &&
			   ace->Header.AceFlags == (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE),
		   "a read-write folder's label is Low, no-write-up, inherited by files and folders");
		LocalFree(sd);
		sd = NULL;
		sacl = NULL;
		ok(ows__ac_label_sd(L"S:", &sd, &sacl, &le) == 0 && (!sacl || sacl->AceCount == 0),
		   "a folder that had no label gets none back (\"S:\")");
		LocalFree(sd);
	}
	return wtap_done();
}
