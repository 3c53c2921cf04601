/*
 * Under Wine, for real: SID and ACL construction (the exact entry, mask and
 * inheritance flags each grant builds, and revoke keeping every other
 * entry), traverse chains, a pipe with SDDL security, DPAPI, random
 * passwords, the setup record's undo plan, the grant journal with Windows
 * paths, and the INI reader on a config file.  What Wine only stubs is
 * probed in a child process and reported as not provable here.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "record.h"
#include "win.h"
#include "wtap.h"

#include <lm.h>
#include <sddl.h>

static bool contains(const void *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp((const char *)hay + i, needle, m))
			return true;
	return false;
}

static void check_ace(PACL acl, PSID sid, DWORD mask, BYTE flags, const char *what)
{
	ACL_SIZE_INFORMATION info = {0};
	GetAclInformation(acl, &info, sizeof(info), AclSizeInformation);
	int found = 0;
	for (DWORD i = 0; i < info.AceCount; i++) {
		ACCESS_ALLOWED_ACE *a;
		if (GetAce(acl, i, (void **)&a) && a->Header.AceType == ACCESS_ALLOWED_ACE_TYPE &&
		    EqualSid(&a->SidStart, sid)) {
			found++;
			ok(a->Mask == mask, "%s: mask 0x%lx (want 0x%lx)", what, (unsigned long)a->Mask,
			   (unsigned long)mask);
			ok(a->Header.AceFlags == flags, "%s: flags 0x%x (want 0x%x)", what,
			   a->Header.AceFlags, flags);
		}
	}
	ok(found == 1, "%s: exactly one entry for the account (%d)", what, found);
}

static int child_probe(const char *what)
{
	if (!strcmp(what, "logon")) {
		STARTUPINFOW si;
		memset(&si, 0, sizeof(si));
		si.cb = sizeof(si);
		PROCESS_INFORMATION pi;
		memset(&pi, 0, sizeof(pi));
		wchar_t line[] = L"cmd /c exit 0";
		BOOL r = CreateProcessWithLogonW(L"OWSandboxOpenNet", L".", L"x", LOGON_WITH_PROFILE,
						 NULL, line, CREATE_SUSPENDED, NULL, NULL, &si, &pi);
		printf("CreateProcessWithLogonW=%d error=%lu process=%p\n", r, GetLastError(), pi.hProcess);
		return r && pi.hProcess ? 0 : 1;
	}
	if (!strcmp(what, "netuser")) {
		USER_INFO_1 ui;
		memset(&ui, 0, sizeof(ui));
		ui.usri1_name = (LPWSTR)L"OWSandboxProbe";
		ui.usri1_password = (LPWSTR)L"Aa1!aaaaaaaaaaaaaaaa";
		ui.usri1_priv = USER_PRIV_USER;
		ui.usri1_flags = UF_SCRIPT;
		NET_API_STATUS st = NetUserAdd(NULL, 1, (BYTE *)&ui, NULL);
		printf("NetUserAdd=%lu\n", (unsigned long)st);
		return 1; /* kept in the calling process only: never proof */
	}
	if (!strcmp(what, "setsec")) {
		CreateDirectoryW(L"C:\\owsprobe", NULL);
		DWORD e = SetNamedSecurityInfoW((LPWSTR)L"C:\\owsprobe", SE_FILE_OBJECT,
						DACL_SECURITY_INFORMATION, NULL, NULL, NULL, NULL);
		printf("SetNamedSecurityInfoW=%lu\n", (unsigned long)e);
		RemoveDirectoryW(L"C:\\owsprobe");
		return 1;
	}
	return 2;
}

static void probe(const char *self, const char *mode, const char *what, const char *wine_why)
{
	char line[MAX_PATH + 32];
	snprintf(line, sizeof(line), "\"%s\" probe %s", self, mode);
	STARTUPINFOA si;
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	PROCESS_INFORMATION pi;
	DWORD code = 255;
	if (CreateProcessA(NULL, line, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi)) {
		WaitForSingleObject(pi.hProcess, 20000);
		GetExitCodeProcess(pi.hProcess, &code);
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
	}
	char why[256];
	snprintf(why, sizeof(why), "%s (compiled, linked; the probe exited %lu)",
		 is_wine() ? wine_why : "needs an elevated real Windows", (unsigned long)code);
	skip(what, why);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "probe"))
		return child_probe(argv[2]);
	wtap_init();
	ows_error e = {0};

	/* SIDs: a well-known SID stands in for the account (Wine has no real accounts). */
	BYTE sidbuf[SECURITY_MAX_SID_SIZE], other[SECURITY_MAX_SID_SIZE];
	DWORD n = sizeof(sidbuf), n2 = sizeof(other);
	ok(CreateWellKnownSid(WinBuiltinGuestsSid, NULL, sidbuf, &n) &&
		   CreateWellKnownSid(WinBuiltinUsersSid, NULL, other, &n2),
	   "well-known SIDs are built");
	PSID sid = sidbuf;

	PACL base = NULL, rw = NULL, ro = NULL, tr = NULL, back = NULL;
	EXPLICIT_ACCESS_W ea;
	ows__ace_entry(other, OWS__ACE_RO, &ea);
	SetEntriesInAclW(1, &ea, NULL, &base);
	ok(ows__acl_add(base, sid, OWS__ACE_RW, &rw, &e) == 0, "a read-write grant builds");
	check_ace(rw, sid, OWS__MASK_RW, OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE, "read-write");
	ok(OWS__MASK_RW == 0x1301bf, "read-write is Windows' Modify (0x1301bf)");
	ok(ows__acl_add(base, sid, OWS__ACE_RO, &ro, &e) == 0, "a read-only grant builds");
	check_ace(ro, sid, OWS__MASK_RO, OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE, "read-only");
	ok(OWS__MASK_RO == 0x1200a9, "read-only is Windows' Read & execute (0x1200a9)");
	ok(ows__acl_add(base, sid, OWS__ACE_TRAVERSE, &tr, &e) == 0, "a traverse grant builds");
	check_ace(tr, sid, FILE_TRAVERSE | SYNCHRONIZE, 0, "traverse-only, this folder only");
	ok(ows__acl_remove_sid(rw, sid, &back, &e) == 0, "revoke builds");
	ACL_SIZE_INFORMATION i1 = {0}, i2 = {0};
	GetAclInformation(base, &i1, sizeof(i1), AclSizeInformation);
	GetAclInformation(back, &i2, sizeof(i2), AclSizeInformation);
	ACCESS_ALLOWED_ACE *kept = NULL;
	ok(i2.AceCount == i1.AceCount && GetAce(back, 0, (void **)&kept) &&
		   EqualSid(&kept->SidStart, other) && kept->Mask == OWS__MASK_RO,
	   "revoke removes the account's entry and keeps the other one exactly");
	LocalFree(base);
	LocalFree(rw);
	LocalFree(ro);
	LocalFree(tr);
	LocalFree(back);

	ows__strv chain;
	ok(ows__traverse_chain("C:\\Users\\me\\code\\proj", "C:\\Users\\me", &chain, &e) == 0 &&
		   chain.len == 2 && !strcmp(chain.v[0], "C:\\Users\\me") &&
		   !strcmp(chain.v[1], "C:\\Users\\me\\code"),
	   "traverse entries go on the profile root and each folder between");
	ows__strv_free(&chain);
	ok(ows__traverse_chain("D:\\work", "C:\\Users\\me", &chain, &e) == 0 && chain.len == 0,
	   "a folder outside the profile needs no traverse entry");

	/* A pipe only SYSTEM and the owner may open, with client impersonation. */
	HANDLE srv = NULL;
	ok(ows__pipe_create(L"\\\\.\\pipe\\owsbx-test", L"D:P(A;;GA;;;SY)(A;;GA;;;OW)", &srv, &e) == 0,
	   "a pipe with an SDDL descriptor is created (%s)", e.what);
	PSECURITY_DESCRIPTOR psd = NULL;
	PACL pdacl = NULL;
	GetSecurityInfo(srv, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &pdacl, NULL, &psd);
	ACL_SIZE_INFORMATION pi = {0};
	if (pdacl)
		GetAclInformation(pdacl, &pi, sizeof(pi), AclSizeInformation);
	ok(pdacl && pi.AceCount == 2, "the pipe's DACL holds exactly the two entries (%lu)",
	   (unsigned long)pi.AceCount);
	LocalFree(psd);
	HANDLE cli = CreateFileW(L"\\\\.\\pipe\\owsbx-test", GENERIC_READ | GENERIC_WRITE, 0, NULL,
				 OPEN_EXISTING, 0, NULL);
	ok(cli != INVALID_HANDLE_VALUE, "the owner connects");
	DWORD w = 0, r = 0;
	char buf[8] = "";
	WriteFile(cli, "ping", 4, &w, NULL);
	OVERLAPPED ov;
	memset(&ov, 0, sizeof(ov));
	ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
	ReadFile(srv, buf, 4, NULL, &ov);
	ok(GetOverlappedResult(srv, &ov, &r, TRUE) && r == 4 && !memcmp(buf, "ping", 4),
	   "bytes cross the pipe");
	ok(ImpersonateNamedPipeClient(srv) && RevertToSelf(), "the server impersonates its client");
	CloseHandle(ov.hEvent);
	CloseHandle(cli);
	CloseHandle(srv);

	/* DPAPI and passwords. */
	void *blob = NULL, *plain = NULL;
	size_t bl = 0, pl = 0;
	const char secret[] = "{\"OWSandboxOpenNet\":\"pw\"}";
	ok(ows__dpapi_protect(secret, sizeof(secret) - 1, &blob, &bl, &e) == 0 && bl > sizeof(secret) &&
		   !contains(blob, bl, "OWSandbox"),
	   "DPAPI protects the store (no plain text in %zu bytes)", bl);
	ok(ows__dpapi_unprotect(blob, bl, &plain, &pl, &e) == 0 && pl == sizeof(secret) - 1 &&
		   !memcmp(plain, secret, pl),
	   "DPAPI gives it back");
	free(blob);
	free(plain);
	wchar_t p1[33], p2[33];
	ok(ows__win_password(p1, &e) == 0 && ows__win_password(p2, &e) == 0 && wcslen(p1) == 32 &&
		   wcscmp(p1, p2) != 0,
	   "two random passwords: 32 characters, different");
	int cls[4] = {0};
	for (int i = 0; i < 32; i++)
		cls[iswupper(p1[i]) ? 0 : iswlower(p1[i]) ? 1 : iswdigit(p1[i]) ? 2 : 3]++;
	ok(cls[0] && cls[1] && cls[2] && cls[3], "a password has all four character classes");

	/* The setup record and its exact undo plan. */
	json_t *rec = json_loads(
		"{\"version\":1,\"provider\":\"windows\",\"proved\":true,\"changes\":["
		"{\"item\":\"folder\",\"path\":\"C:\\\\ProgramData\\\\OpenWorker\\\\sandbox\",\"created\":true},"
		"{\"item\":\"folder\",\"path\":\"C:\\\\ProgramData\\\\OpenWorker\\\\sandbox\\\\sandboxes\",\"created\":false},"
		"{\"item\":\"account\",\"name\":\"OWSandboxOpenNet\",\"created\":true},"
		"{\"item\":\"hidden\",\"name\":\"OWSandboxOpenNet\",\"created\":true},"
		"{\"item\":\"logon_rights\",\"name\":\"OWSandboxOpenNet\",\"added\":[\"SeDenyNetworkLogonRight\"]},"
		"{\"item\":\"account\",\"name\":\"OWSandboxClosedNet\",\"created\":false},"
		"{\"item\":\"firewall_rule\",\"name\":\"R\",\"created\":true},"
		"{\"item\":\"wfp\",\"provider\":\"p\",\"sublayer\":\"s\",\"filters\":[\"a\",\"b\",\"c\",\"d\"]},"
		"{\"item\":\"file\",\"path\":\"C:\\\\x\\\\account.cred\",\"created\":true}]}",
		0, NULL);
	json_t *plan = ows__win_undo_plan(rec);
	char *ps = json_dumps(plan, JSON_COMPACT);
	const char *want =
		"[{\"undo\":\"delete_file\",\"path\":\"C:\\\\x\\\\account.cred\"},"
		"{\"undo\":\"delete_wfp\",\"filters\":[\"a\",\"b\",\"c\",\"d\"],\"sublayer\":\"s\",\"provider\":\"p\"},"
		"{\"undo\":\"delete_firewall_rule\",\"name\":\"R\"},"
		"{\"undo\":\"remove_account_rights\",\"name\":\"OWSandboxOpenNet\",\"rights\":[\"SeDenyNetworkLogonRight\"]},"
		"{\"undo\":\"delete_userlist_value\",\"name\":\"OWSandboxOpenNet\"},"
		"{\"undo\":\"delete_account\",\"name\":\"OWSandboxOpenNet\"},"
		"{\"undo\":\"remove_folder\",\"path\":\"C:\\\\ProgramData\\\\OpenWorker\\\\sandbox\"}]";
	ok(ps && !strcmp(ps, want),
	   "the undo plan is the record's changes reversed, only what setup created\n#   got  %s", ps);
	char dir[MAX_PATH];
	GetTempPathA(sizeof(dir), dir);
	strcat(dir, "owsrec");
	CreateDirectoryA(dir, NULL);
	json_t *back_rec = NULL;
	ok(ows__record_save(dir, rec, &e) == 0 && ows__record_load(dir, &back_rec, &e) == 0 &&
		   json_equal(back_rec, rec),
	   "the record is saved with its checksum and loads back equal (%s)", e.what);
	json_decref(back_rec);
	free(ps);
	json_decref(plan);
	json_decref(rec);

	/* The grant journal with Windows paths. */
	char *g = ows__jline_grant("OWSandboxOpenNet", 1001, 1000, OWS_ACCESS_RW,
				   "C:\\Users\\me\\my proj", "C:\\Users\\me");
	char *rv = ows__jline_revoke(1001, "C:\\Users\\me\\other");
	char *g2 = ows__jline_grant("OWSandboxOpenNet", 1001, 1000, OWS_ACCESS_RO,
				    "C:\\Users\\me\\other", NULL);
	char text[1024];
	snprintf(text, sizeof(text), "owsj1 1000\n%s%s%s", g, g2, rv);
	ows__jstate st;
	ok(ows__jstate_parse(text, strlen(text), &st, &e) == 0 && st.ngrants == 1 &&
		   !strcmp(st.grants[0].path, "C:\\Users\\me\\my proj") &&
		   !strcmp(st.grants[0].home, "C:\\Users\\me") && st.grants[0].access == OWS_ACCESS_RW,
	   "the journal keeps Windows paths with spaces; a revoked grant drops out");
	ows__jstate_free(&st);
	free(g);
	free(g2);
	free(rv);

	/* The config, read with our INI reader. */
	char cfgpath[MAX_PATH];
	snprintf(cfgpath, sizeof(cfgpath), "%s\\config.ini", dir);
	FILE *f = fopen(cfgpath, "w");
	fputs("; machine\n[sandbox]\nprovider = direct ; inline\nnetwork=open\n"
	      "hosts = github.com:443, pypi.org\nstate_dir = C:\\ProgramData\\ows\n", f);
	fclose(f);
	ows_config *cfg = NULL;
	ok(ows_config_load(cfgpath, &cfg, &e) == 0, "a config loads (%s)", e.what);
	ows_config_free(cfg);
	f = fopen(cfgpath, "w");
	fputs("[sandbox]\nprovider = landlock\n", f);
	fclose(f);
	ows_error_clear(&e);
	ok(ows_config_load(cfgpath, &cfg, &e) == OWS_ECONFIG && strstr(e.hint, "windows"),
	   "a provider Windows lacks is refused, naming the ones it has (%s)", e.hint);
	f = fopen(cfgpath, "w");
	fputs("[sandbox]\nprovider = windows\nthis line is wrong\n", f);
	fclose(f);
	ows_error_clear(&e);
	ok(ows_config_load(cfgpath, &cfg, &e) == OWS_ECONFIG && strstr(e.where, "line 3"),
	   "a syntax error names its line (%s)", e.where);
	DeleteFileA(cfgpath);
	char recf[MAX_PATH];
	snprintf(recf, sizeof(recf), "%s\\setup.json", dir);
	DeleteFileA(recf);
	RemoveDirectoryA(dir);

	/* Status without setup: every row missing, the fix named. */
	ows_config *nc = NULL;
	ows_config_load(NULL, &nc, NULL);
	char *status = NULL;
	int failing = ows_machine_status(nc, &status, &e);
	ok(failing > 0 && status && strstr(status, "\"missing\""),
	   "status on a machine without setup lists what is missing (%d rows)", failing);
	ows_free(status);
	ows_config_free(nc);

	/* What Wine stubs: compiled, linked, probed in a child, never counted. */
	char self[MAX_PATH];
	GetModuleFileNameA(NULL, self, sizeof(self));
	probe(self, "logon", "the runner starts as the account (CreateProcessWithLogonW)",
	      "Wine's CreateProcessWithLogonW returns FALSE and runs nothing");
	probe(self, "netuser", "setup creates the hidden accounts (NetUserAdd, NetUserSetInfo)",
	      "Wine keeps NetUserAdd's user in the calling process; NetUserSetInfo aborts");
	probe(self, "setsec", "grants change the folder's DACL (SetNamedSecurityInfoW)",
	      "Wine's SetNamedSecurityInfoW stores no ACL and enforces nothing");
	skip("logon rights are denied (LsaAddAccountRights)",
	     "Wine returns success and stores nothing (compiled and linked)");
	skip("the firewall rule blocks the closed account (INetFwPolicy2)",
	     "Wine's firewall COM returns S_OK and does nothing (compiled and linked)");
	skip("the WFP filters close loopback except 47800-47899 (Fwpm*)",
	     "Wine returns RPC_S_CANNOT_SUPPORT or aborts (compiled and linked; not called)");
	return wtap_done();
}
