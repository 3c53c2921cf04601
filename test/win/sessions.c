/*
 * Two and three sessions on one account (spec 000): a live session's journal
 * and grants survive another session's open, and what sessions share (the
 * profile root's traverse entry, a folder two of them hold, WinSta0) stays
 * until the last one goes.
 *
 * The journals, their holding and cleanup's test of it are Wine's real files
 * and sharing modes.  The security calls are a recorded model (the seam
 * ows__win_secops): Wine stores no ACL and knows no OWSandbox account.  Each
 * test's name says "(model of the ACL calls)" where it reads the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owsandbox.h"
#include "record.h"
#include "win.h"
#include "wtap.h"

#include <sddl.h>

/* ------------------------------------------------ the recorded model */

typedef struct model_obj {
	char name[MAX_PATH];
	BYTE acl[4096];
	bool protect;
} model_obj;
static model_obj objs[32];
static int nobjs, nsets;
static PSID admins;

static int model_sid_of(const char *account, PSID *out, ows_error *err)
{
	const char *sddl = !strcmp(account, OWS__WIN_OPEN_USER_A)     ? "S-1-5-21-7-7-7-1001"
			   : !strcmp(account, OWS__WIN_CLOSED_USER_A) ? "S-1-5-21-7-7-7-1002"
								      : NULL;
	PSID s = NULL;
	if (!sddl || !ConvertStringSidToSidA(sddl, &s))
		return ows__fail(err, OWS_ESETUP, 0, account, NULL, "no such account in the model");
	DWORD n = GetLengthSid(s);
	*out = malloc(n);
	CopySid(n, *out, s);
	LocalFree(s);
	return 0;
}

/* Every object starts with one entry of its own (Administrators), which must stay. */
static model_obj *model_find(const char *name)
{
	for (int i = 0; i < nobjs; i++)
		if (!_stricmp(objs[i].name, name))
			return &objs[i];
	model_obj *o = &objs[nobjs++];
	snprintf(o->name, sizeof(o->name), "%s", name);
	PACL acl = (PACL)o->acl;
	InitializeAcl(acl, sizeof(o->acl), ACL_REVISION);
	AddAccessAllowedAce(acl, ACL_REVISION, GENERIC_ALL, admins);
	return o;
}

static DWORD model_get(const char *name, PACL *dacl, bool *protect, PSECURITY_DESCRIPTOR *sd)
{
	model_obj *o = model_find(name);
	PACL acl = (PACL)o->acl;
	/* The caller frees *sd, and *dacl lives inside it, as with the real call. */
	void *copy = LocalAlloc(LPTR, acl->AclSize);
	memcpy(copy, acl, acl->AclSize);
	*sd = copy;
	*dacl = copy;
	*protect = o->protect;
	return ERROR_SUCCESS;
}

static DWORD model_set(const char *name, PACL dacl, bool protect)
{
	model_obj *o = model_find(name);
	if (dacl->AclSize > sizeof(o->acl))
		return ERROR_INSUFFICIENT_BUFFER;
	memcpy(o->acl, dacl, dacl->AclSize);
	o->protect = protect;
	nsets++;
	return ERROR_SUCCESS;
}

static const ows__win_secops model = {model_sid_of, model_get, model_set};

/* The mask of the SID's one explicit entry on `name` (0: none; -1: more than one). */
static long entry(const char *name, PSID sid)
{
	PACL acl = (PACL)model_find(name)->acl;
	long mask = 0;
	int found = 0;
	for (DWORD i = 0; i < acl->AceCount; i++) {
		ACCESS_ALLOWED_ACE *a;
		if (GetAce(acl, i, (void **)&a) && a->Header.AceType == ACCESS_ALLOWED_ACE_TYPE &&
		    EqualSid(&a->SidStart, sid)) {
			mask = (long)a->Mask;
			found++;
		}
	}
	return found > 1 ? -1 : mask;
}

static bool admins_kept(const char *name)
{
	return entry(name, admins) == GENERIC_ALL;
}

/* ---------------------------------------------------------- sessions */

#define HOME "C:\\Users\\me"
static ows_config cfg;
static char jdir[MAX_PATH];

static bool journal_exists(const char *id)
{
	char p[MAX_PATH];
	snprintf(p, sizeof(p), "%s\\%s.journal", jdir, id);
	return GetFileAttributesA(p) != INVALID_FILE_ATTRIBUTES;
}

/* What windows_open does for grants: hold the journal, clean up, grant. */
static HANDLE open_session(const char *id, const char *const *rw, const char *const *ro)
{
	ows_error e = {0};
	HANDLE h = NULL;
	int rc = ows__win_journal_hold(&cfg, id, &h, &e);
	ows_machine_cleanup(&cfg, NULL);
	for (; rc == 0 && rw && *rw; rw++)
		rc = ows_acl_grant(&cfg, id, OWS__WIN_OPEN_USER_A, *rw, OWS_ACCESS_RW, HOME, &e);
	for (; rc == 0 && ro && *ro; ro++)
		rc = ows_acl_grant(&cfg, id, OWS__WIN_OPEN_USER_A, *ro, OWS_ACCESS_RO, HOME, &e);
	if (rc == 0)
		rc = ows_acl_grant(&cfg, id, OWS__WIN_OPEN_USER_A, OWS__WIN_WINSTA, OWS_ACCESS_RO,
				   OWS__WIN_WINSTA, &e);
	if (rc < 0)
		printf("# session %s: %s (%s)\n", id, e.what, e.where);
	return h;
}

/* What windows_close does: revoke every grant, innermost last made first, release. */
static void close_session(const char *id, HANDLE h, const char *const *paths)
{
	size_t n = 0;
	while (paths[n])
		n++;
	ows_acl_revoke(&cfg, id, OWS__WIN_OPEN_USER_A, OWS__WIN_WINSTA, NULL);
	while (n-- > 0)
		ows_acl_revoke(&cfg, id, OWS__WIN_OPEN_USER_A, paths[n], NULL);
	ows__win_journal_release(&cfg, id, h);
}

int main(void)
{
	wtap_init();
	BYTE ab[SECURITY_MAX_SID_SIZE];
	DWORD an = sizeof(ab);
	CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, ab, &an);
	admins = ab;
	PSID acct = NULL;
	model_sid_of(OWS__WIN_OPEN_USER_A, &acct, NULL);

	char state[MAX_PATH];
	GetTempPathA(sizeof(state), state);
	snprintf(state + strlen(state), sizeof(state) - strlen(state), "owstest-sessions-%lu",
		 (unsigned long)GetCurrentProcessId());
	snprintf(jdir, sizeof(jdir), "%s\\journal", state);
	CreateDirectoryA(state, NULL);
	CreateDirectoryA(jdir, NULL);
	memset(&cfg, 0, sizeof(cfg));
	cfg.state_dir = state;
	ows__win_secops_use(&model);

	const long RW = OWS__MASK_RW, RO = OWS__MASK_RO, TR = OWS__MASK_TRAVERSE,
		   WS = OWS__MASK_WINSTA;

	/* 1. A second session's open leaves the first's journal and grants. */
	const char *a_rw[] = {HOME "\\proj", NULL};
	HANDLE a = open_session("owstest-a", a_rw, NULL);
	ok(a != INVALID_HANDLE_VALUE && journal_exists("owstest-a") &&
		   entry(HOME "\\proj", acct) == RW && entry(HOME, acct) == TR,
	   "session A holds its journal; proj read-write, the profile root traverse "
	   "(model of the ACL calls)");
	ok(ows_machine_cleanup(&cfg, NULL) == 0, "cleanup takes nothing from a live session");
	const char *b_ro[] = {HOME "\\docs", NULL};
	HANDLE b = open_session("owstest-b", NULL, b_ro);
	ok(journal_exists("owstest-a") && entry(HOME "\\proj", acct) == RW &&
		   entry(HOME, acct) == TR && entry(HOME "\\docs", acct) == RO,
	   "session B's open (cleanup included) leaves A's journal and grants "
	   "(model of the ACL calls)");

	/* A dead host's journal: nobody holds it; cleanup takes it, and only what it alone held. */
	ows_acl_grant(&cfg, "owstest-dead", OWS__WIN_OPEN_USER_A, HOME "\\old\\x", OWS_ACCESS_RW,
		      HOME, NULL);
	ok(entry(HOME "\\old\\x", acct) == RW && entry(HOME "\\old", acct) == TR,
	   "a dead host's grant is in place (model of the ACL calls)");
	ok(ows_machine_cleanup(&cfg, NULL) == 1 && !journal_exists("owstest-dead") &&
		   entry(HOME "\\old\\x", acct) == 0 && entry(HOME "\\old", acct) == 0 &&
		   entry(HOME, acct) == TR,
	   "cleanup revokes a dead host's journal, keeps the root the live sessions pass "
	   "(model of the ACL calls)");

	/* 2. Two sessions: closing one keeps what the other holds. */
	const char *b_paths[] = {HOME "\\docs", NULL};
	close_session("owstest-b", b, b_paths);
	ok(!journal_exists("owstest-b") && entry(HOME "\\docs", acct) == 0 &&
		   entry(HOME, acct) == TR && entry(HOME "\\proj", acct) == RW &&
		   entry(OWS__WIN_WINSTA, acct) == WS,
	   "2 sessions: B's close removes its folder and journal; A keeps proj, the root's "
	   "traverse and WinSta0 (model of the ACL calls)");

	/* 3. Three sessions on one folder: read-only, read-write, read-only. */
	const char *shared[] = {HOME "\\shared", NULL};
	HANDLE c = open_session("owstest-c", shared, NULL);
	HANDLE d = open_session("owstest-d", NULL, shared);
	ok(entry(HOME "\\shared", acct) == RW, "3 sessions: one entry, the strongest held "
					       "(model of the ACL calls)");
	close_session("owstest-c", c, shared);
	ok(entry(HOME "\\shared", acct) == RO && entry(HOME, acct) == TR &&
		   entry(OWS__WIN_WINSTA, acct) == WS,
	   "3 sessions: the read-write session's close leaves the read-only one its entry "
	   "(model of the ACL calls)");
	close_session("owstest-a", a, a_rw);
	ok(entry(HOME "\\proj", acct) == 0 && entry(HOME "\\shared", acct) == RO &&
		   entry(HOME, acct) == TR && entry(OWS__WIN_WINSTA, acct) == WS,
	   "3 sessions: A's close removes proj; the root and WinSta0 stay for D "
	   "(model of the ACL calls)");
	close_session("owstest-d", d, shared);
	ok(entry(HOME "\\shared", acct) == 0 && entry(HOME, acct) == 0 &&
		   entry(OWS__WIN_WINSTA, acct) == 0,
	   "the last session out removes the root's traverse, the folder and WinSta0 "
	   "(model of the ACL calls)");
	bool kept = true;
	for (int i = 0; i < nobjs; i++)
		kept = kept && admins_kept(objs[i].name);
	ok(kept && nobjs >= 7, "every object keeps the entries that were not ours (%d objects)",
	   nobjs);
	WIN32_FIND_DATAA fd;
	char pat[MAX_PATH];
	snprintf(pat, sizeof(pat), "%s\\*.journal", jdir);
	HANDLE fh = FindFirstFileA(pat, &fd);
	ok(fh == INVALID_HANDLE_VALUE, "no journal is left behind");
	if (fh != INVALID_HANDLE_VALUE)
		FindClose(fh);

	ows__win_secops_use(NULL);
	free(acct);
	RemoveDirectoryA(jdir);
	RemoveDirectoryA(state);
	return wtap_done();
}
