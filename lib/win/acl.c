/*
 * Folder permissions for the sandbox account: what each grant adds, adding
 * and removing it, the grant journal, and pipes only the account may open.
 *
 * A grant is one explicit entry for the account's SID on the folder
 * (modify, or read and execute; inherited by folders and files beneath, so
 * Windows, not we, carries it down the tree), plus a traverse-only entry on
 * each folder between it and the profile root.  It is journaled before it
 * is made: <state_dir>\journal\<session>.journal, in the portable format of
 * lib/journal.c, the account's RID in the uid's place.  A live session
 * holds its journal open; cleanup takes only the journals no one holds.
 *
 * Entries are the account's, but grants are per session: two sessions on
 * one account may hold the same folder, and every grant passes through the
 * profile root.  So each grant or revoke sets the account's one explicit
 * entry on every object it touches to what the active grants of all the
 * journals still need there (reference counting by the journals), and the
 * last session out removes it.  Revoke keeps the folder's protection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "record.h"
#include "win.h"

#include <sddl.h>
#include <unistd.h>

void ows__ace_entry(PSID sid, ows__ace_kind kind, EXPLICIT_ACCESS_W *ea)
{
	memset(ea, 0, sizeof(*ea));
	ea->grfAccessMode = GRANT_ACCESS;
	switch (kind) {
	case OWS__ACE_RW:
		ea->grfAccessPermissions = OWS__MASK_RW;
		ea->grfInheritance = OWS__INHERIT_TREE;
		break;
	case OWS__ACE_RO:
		ea->grfAccessPermissions = OWS__MASK_RO;
		ea->grfInheritance = OWS__INHERIT_TREE;
		break;
	case OWS__ACE_WINSTA:
		ea->grfAccessPermissions = OWS__MASK_WINSTA;
		ea->grfInheritance = NO_INHERITANCE;
		break;
	default:
		ea->grfAccessPermissions = OWS__MASK_TRAVERSE;
		ea->grfInheritance = NO_INHERITANCE;
		break;
	}
	ea->Trustee.TrusteeForm = TRUSTEE_IS_SID;
	ea->Trustee.TrusteeType = TRUSTEE_IS_USER;
	ea->Trustee.ptstrName = (LPWSTR)sid;
}

int ows__acl_add(PACL old, PSID sid, ows__ace_kind kind, PACL *out, ows_error *err)
{
	EXPLICIT_ACCESS_W ea;
	ows__ace_entry(sid, kind, &ea);
	DWORD e = SetEntriesInAclW(1, &ea, old, out);
	if (e != ERROR_SUCCESS)
		return ows__fail_win(err, 0, e, "SetEntriesInAclW", NULL,
				     "cannot build the permission entries");
	return 0;
}

int ows__acl_remove_sid(PACL old, PSID sid, PACL *out, ows_error *err)
{
	*out = NULL;
	ACL_SIZE_INFORMATION info = {0};
	if (old && !GetAclInformation(old, &info, sizeof(info), AclSizeInformation))
		return ows__fail_win(err, 0, GetLastError(), "GetAclInformation", NULL,
				     "cannot read the folder's permissions");
	DWORD size = old ? info.AclBytesInUse : sizeof(ACL);
	PACL acl = LocalAlloc(LPTR, size < sizeof(ACL) ? sizeof(ACL) : size);
	if (!acl)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (!InitializeAcl(acl, size < sizeof(ACL) ? sizeof(ACL) : size, ACL_REVISION)) {
		LocalFree(acl);
		return ows__fail_win(err, 0, GetLastError(), "InitializeAcl", NULL,
				     "cannot build the permission entries");
	}
	for (DWORD i = 0; old && i < info.AceCount; i++) {
		ACE_HEADER *h;
		if (!GetAce(old, i, (void **)&h))
			continue;
		PSID ace_sid = NULL;
		if (h->AceType == ACCESS_ALLOWED_ACE_TYPE)
			ace_sid = &((ACCESS_ALLOWED_ACE *)h)->SidStart;
		else if (h->AceType == ACCESS_DENIED_ACE_TYPE)
			ace_sid = &((ACCESS_DENIED_ACE *)h)->SidStart;
		/* Only our explicit entries go; inherited ones are the parent's to keep. */
		if (ace_sid && !(h->AceFlags & INHERITED_ACE) && EqualSid(ace_sid, sid))
			continue;
		if (!AddAce(acl, ACL_REVISION, MAXDWORD, h, h->AceSize)) {
			DWORD e = GetLastError();
			LocalFree(acl);
			return ows__fail_win(err, 0, e, "AddAce", NULL,
					     "cannot build the permission entries");
		}
	}
	*out = acl;
	return 0;
}

int ows__sid_of(const char *account, PSID *out, ows_error *err)
{
	*out = NULL;
	wchar_t *w = ows__wide(account);
	if (!w)
		return ows__fail(err, OWS_EINVAL, EILSEQ, account, NULL, "bad account name");
	BYTE sid[SECURITY_MAX_SID_SIZE];
	DWORD sidlen = sizeof(sid);
	wchar_t dom[256];
	DWORD domlen = 256;
	SID_NAME_USE use;
	BOOL ok = LookupAccountNameW(NULL, w, sid, &sidlen, dom, &domlen, &use);
	DWORD e = GetLastError();
	free(w);
	if (!ok)
		return ows__fail_win(err, e == ERROR_NONE_MAPPED ? OWS_ESETUP : OWS_ESYS, e, account,
				     OWS__WIN_SETUP_HINT, "cannot find the sandbox account");
	DWORD n = GetLengthSid(sid);
	if (!(*out = malloc(n)))
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	CopySid(n, *out, sid);
	return 0;
}

static uint32_t rid_of(PSID sid)
{
	UCHAR n = *GetSidSubAuthorityCount(sid);
	return n ? (uint32_t)*GetSidSubAuthority(sid, n - 1u) : 0;
}

int ows__traverse_chain(const char *path, const char *home_root, ows__strv *out,
			ows_error *err)
{
	size_t hl = strlen(home_root), pl = strlen(path);
	memset(out, 0, sizeof(*out));
	/* Only a folder strictly inside the root has folders to pass through. */
	if (pl <= hl || _strnicmp(path, home_root, hl) != 0 || !ows__plat_is_sep(path[hl]))
		return 0;
	int rc = ows__strv_push(out, home_root, err);
	for (size_t i = hl + 1; rc == 0 && i < pl; i++)
		if (ows__plat_is_sep(path[i]))
			rc = ows__strv_pushf(out, err, "%.*s", (int)i, path);
	if (rc < 0)
		ows__strv_free(out);
	return rc;
}

int ows__pipe_create(const wchar_t *name, const wchar_t *sddl, HANDLE *out, ows_error *err)
{
	PSECURITY_DESCRIPTOR sd = NULL;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL))
		return ows__fail_win(err, 0, GetLastError(), "SDDL", NULL,
				     "cannot build the pipe's security descriptor");
	SECURITY_ATTRIBUTES sa = {sizeof(sa), sd, FALSE};
	HANDLE h = CreateNamedPipeW(name, PIPE_ACCESS_DUPLEX | FILE_FLAG_FIRST_PIPE_INSTANCE |
					  FILE_FLAG_OVERLAPPED,
				    PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
					    PIPE_REJECT_REMOTE_CLIENTS,
				    1, 65536, 65536, 0, &sa);
	DWORD e = GetLastError();
	LocalFree(sd);
	if (h == INVALID_HANDLE_VALUE)
		return ows__fail_win(err, 0, e, "CreateNamedPipeW", NULL, "cannot create the pipe");
	*out = h;
	return 0;
}

/* ------------------------------------------------------ the security calls */

/*
 * "\\.\winsta\NAME" names a window station in a journal (absolute, as the
 * journal wants, and in the device namespace, so never a session's folder);
 * anything else is a file path.
 */
#define WINSTA_PREFIX "\\\\.\\winsta\\"

static bool is_winsta(const char *path)
{
	return strncmp(path, WINSTA_PREFIX, sizeof(WINSTA_PREFIX) - 1) == 0;
}

/* The object's name as Windows takes it: a window station's without the prefix. */
static wchar_t *object_name(const char *name, bool *winsta)
{
	*winsta = is_winsta(name);
	return ows__wide(*winsta ? name + sizeof(WINSTA_PREFIX) - 1 : name);
}

static DWORD real_get(const char *name, PACL *dacl, bool *protect, PSECURITY_DESCRIPTOR *sd)
{
	bool winsta;
	wchar_t *w = object_name(name, &winsta);
	if (!w)
		return ERROR_INVALID_NAME;
	DWORD e;
	if (!winsta) {
		e = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					  dacl, NULL, sd);
	} else {
		/* Window stations have no unique names: by handle, as the docs require. */
		HWINSTA h = OpenWindowStationW(w, FALSE, READ_CONTROL);
		e = h ? GetSecurityInfo(h, SE_WINDOW_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					dacl, NULL, sd)
		      : GetLastError();
		if (h)
			CloseWindowStation(h);
	}
	free(w);
	SECURITY_DESCRIPTOR_CONTROL ctl = 0;
	DWORD rev;
	if (e == ERROR_SUCCESS)
		GetSecurityDescriptorControl(*sd, &ctl, &rev);
	*protect = (ctl & SE_DACL_PROTECTED) != 0;
	return e;
}

static DWORD real_set(const char *name, PACL dacl, bool protect)
{
	bool winsta;
	wchar_t *w = object_name(name, &winsta);
	if (!w)
		return ERROR_INVALID_NAME;
	DWORD e;
	if (!winsta) {
		/* The folder keeps its protection state: inherited entries stay as they were. */
		SECURITY_INFORMATION si = DACL_SECURITY_INFORMATION |
					  (protect ? PROTECTED_DACL_SECURITY_INFORMATION
						   : UNPROTECTED_DACL_SECURITY_INFORMATION);
		e = SetNamedSecurityInfoW(w, SE_FILE_OBJECT, si, NULL, NULL, dacl, NULL);
	} else {
		HWINSTA h = OpenWindowStationW(w, FALSE, READ_CONTROL | WRITE_DAC);
		e = h ? SetSecurityInfo(h, SE_WINDOW_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					dacl, NULL)
		      : GetLastError();
		if (h)
			CloseWindowStation(h);
	}
	free(w);
	return e;
}

static const ows__win_secops real_ops = {ows__sid_of, real_get, real_set};
static const ows__win_secops *secops = &real_ops;

void ows__win_secops_use(const ows__win_secops *ops)
{
	secops = ops ? ops : &real_ops;
}

/*
 * One lock for every grant and revoke on the machine: each reads what all the
 * journals hold and then writes the entry, so two hosts must not interleave.
 */
static HANDLE grants_lock(void)
{
	HANDLE m = CreateMutexW(NULL, FALSE, L"Global\\OWSandboxGrants");
	/* WAIT_ABANDONED: a host died holding it; the journals are still the truth. */
	if (m)
		WaitForSingleObject(m, INFINITE);
	return m;
}

static void grants_unlock(HANDLE m)
{
	if (m) {
		ReleaseMutex(m);
		CloseHandle(m);
	}
}

/* ------------------------------------------------------------ on disk */

static char *journal_path(const ows_config *c, const char *id, ows_error *err)
{
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == '-'))
			return ows__fail(err, OWS_EINVAL, 0, id, NULL, "bad session id"), NULL;
	return ows__asprintf(err, "%s\\journal\\%s.journal", c->state_dir, id);
}

static int journal_append(const char *path, const char *line, ows_error *err)
{
	int fd = ows__plat_open_append(path);
	if (fd < 0)
		return ows__fail_sys(err, path, OWS__WIN_SETUP_HINT, "cannot write the grant journal");
	int rc = ows__plat_write_all(fd, line, strlen(line)) < 0 || ows__plat_commit(fd, 0600) < 0
			 ? ows__fail_sys(err, path, NULL, "cannot write the grant journal")
			 : 0;
	close(fd);
	return rc;
}

static int journal_read(const char *path, ows__jstate *st)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ows__read_file(path, &text, &len, NULL);
	if (rc == 0)
		rc = ows__jstate_parse(text, len, st, NULL);
	free(text);
	return rc;
}

/*
 * Held from the session's open to its close: readable and appendable by the
 * grant calls, never openable for delete, which is how cleanup tells a live
 * host's journal from a dead one's.  Not inherited by anything spawned.
 */
int ows__win_journal_hold(const ows_config *c, const char *session_id, HANDLE *out,
			  ows_error *err)
{
	*out = INVALID_HANDLE_VALUE;
	char *path = journal_path(c, session_id, err);
	wchar_t *w = path ? ows__wide(path) : NULL;
	int rc = w ? 0 : (err && err->code ? err->code : OWS_ENOMEM);
	if (rc == 0) {
		HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
				       OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
		if (h == INVALID_HANDLE_VALUE)
			rc = ows__fail_win(err, 0, GetLastError(), path, OWS__WIN_SETUP_HINT,
					   "cannot open the grant journal");
		*out = h;
	}
	free(w);
	free(path);
	return rc;
}

void ows__win_journal_release(const ows_config *c, const char *session_id, HANDLE held)
{
	if (held && held != INVALID_HANDLE_VALUE)
		CloseHandle(held);
	char *path = journal_path(c, session_id, NULL);
	wchar_t *w = path ? ows__wide(path) : NULL;
	ows__jstate st;
	/* A grant still active (a revoke failed) leaves the journal to cleanup. */
	if (w && journal_read(path, &st) == 0) {
		if (st.ngrants == 0)
			DeleteFileW(w);
		ows__jstate_free(&st);
	}
	free(w);
	free(path);
}

/* ------------------------------------------------------- reference counts */

static ows__ace_kind kind_of(const ows__jgrant *g)
{
	if (is_winsta(g->path))
		return OWS__ACE_WINSTA;
	return g->access == OWS_ACCESS_RW ? OWS__ACE_RW : OWS__ACE_RO;
}

/* Each kind's mask holds the next one's (RW > RO > traverse); 0 is none. */
static ows__ace_kind stronger(ows__ace_kind a, ows__ace_kind b)
{
	if (!a || (b && b < a))
		return b;
	return a;
}

/* What one grant needs on `target`: its own entry, a traverse entry on its way, or none. */
static ows__ace_kind grant_needs(const ows__jgrant *g, const char *target)
{
	if (_stricmp(g->path, target) == 0)
		return kind_of(g);
	ows__strv chain = {0};
	ows__ace_kind k = 0;
	if (g->home && ows__traverse_chain(g->path, g->home, &chain, NULL) == 0)
		for (size_t i = 0; i < chain.len && !k; i++)
			if (_stricmp(chain.v[i], target) == 0)
				k = OWS__ACE_TRAVERSE;
	ows__strv_free(&chain);
	return k;
}

/*
 * The entry the account needs on `target` for every active grant of every
 * journal on the machine, live or left by a dead host, but the one grant
 * (skip_id, skip_path) being revoked: what another session holds stays until
 * the last one goes.
 */
static ows__ace_kind still_needed(const ows_config *c, uint32_t rid, const char *target,
				  const char *skip_id, const char *skip_path)
{
	char *pattern = ows__asprintf(NULL, "%s\\journal\\*.journal", c->state_dir);
	wchar_t *w = pattern ? ows__wide(pattern) : NULL;
	WIN32_FIND_DATAW fd;
	HANDLE h = w ? FindFirstFileW(w, &fd) : INVALID_HANDLE_VALUE;
	ows__ace_kind want = 0;
	while (h != INVALID_HANDLE_VALUE) {
		char *name = ows__narrow(fd.cFileName);
		char *path = name ? ows__asprintf(NULL, "%s\\journal\\%s", c->state_dir, name) : NULL;
		size_t idlen = name ? strlen(name) - strlen(".journal") : 0;
		bool self = skip_id && name && strlen(skip_id) == idlen &&
			    strncmp(name, skip_id, idlen) == 0;
		ows__jstate st;
		if (path && journal_read(path, &st) == 0) {
			for (size_t i = 0; i < st.ngrants; i++) {
				const ows__jgrant *g = &st.grants[i];
				if (g->acct_uid != rid ||
				    (self && skip_path && _stricmp(g->path, skip_path) == 0))
					continue;
				want = stronger(want, grant_needs(g, target));
			}
			ows__jstate_free(&st);
		}
		free(path);
		free(name);
		if (!FindNextFileW(h, &fd)) {
			FindClose(h);
			h = INVALID_HANDLE_VALUE;
		}
	}
	free(w);
	free(pattern);
	return want;
}

/* The SID's explicit entries on one object replaced by one of `want` (0: none). */
static int reset_entry(const char *path, PSID sid, ows__ace_kind want, ows_error *err)
{
	PACL dacl = NULL, bare = NULL, nacl = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	bool protect = false;
	DWORD e = secops->get_dacl(path, &dacl, &protect, &sd);
	int rc = 0;
	if (e != ERROR_SUCCESS) {
		rc = ows__fail_win(err, 0, e, path, NULL, "cannot read the folder's permissions");
		goto out;
	}
	if ((rc = ows__acl_remove_sid(dacl, sid, &bare, err)) < 0 ||
	    (want && (rc = ows__acl_add(bare, sid, want, &nacl, err)) < 0))
		goto out;
	e = secops->set_dacl(path, nacl ? nacl : bare, protect);
	if (e != ERROR_SUCCESS)
		rc = ows__fail_win(err, 0, e, path, "check that you own the folder",
				   want ? "cannot grant the sandbox access" : "cannot revoke the grant");
out:
	LocalFree(nacl);
	LocalFree(bare);
	LocalFree(sd);
	return rc;
}

/*
 * Every object one grant touches (the path, then the folders on its way,
 * innermost first) set to what the journals still need there.
 */
static int settle(const ows_config *c, PSID sid, const char *path, const char *home,
		  const char *skip_id, const char *skip_path, ows_error *err)
{
	ows__strv chain = {0};
	int rc = home ? ows__traverse_chain(path, home, &chain, err) : 0;
	if (rc == 0)
		rc = reset_entry(path, sid, still_needed(c, rid_of(sid), path, skip_id, skip_path),
				 err);
	for (size_t i = chain.len; i-- > 0 && rc == 0;)
		rc = reset_entry(chain.v[i], sid,
				 still_needed(c, rid_of(sid), chain.v[i], skip_id, skip_path), err);
	ows__strv_free(&chain);
	return rc;
}

/* The AppContainer provider's grants: a SID no account name stands for, not journaled. */
int ows__acl_set_sid(const char *path, PSID sid, ows__ace_kind kind, ows_error *err)
{
	return reset_entry(path, sid, kind, err);
}

static int acl_grant(const ows_config *config, const char *session_id, const char *account,
		     const char *path, ows_access access, const char *home_root, ows_error *err)
{
	if (!config || !session_id || !account || !path || !home_root)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "an argument is NULL");
	if (access != OWS_ACCESS_RO && access != OWS_ACCESS_RW)
		return ows__fail(err, OWS_EINVAL, 0, path, NULL, "unknown access");
	PSID sid = NULL, me = NULL;
	char *jpath = NULL, *line = NULL;
	HANDLE lock = NULL;
	int rc = secops->sid_of(account, &sid, err);
	if (rc < 0)
		goto out;
	char user[256];
	DWORD ul = sizeof(user);
	uint32_t person = 0;
	if (GetUserNameA(user, &ul) && ows__sid_of(user, &me, NULL) == 0)
		person = rid_of(me);
	const char *home = strcmp(home_root, path) ? home_root : NULL;
	if (!(jpath = journal_path(config, session_id, err)) ||
	    !(line = ows__jline_grant(account, rid_of(sid), person, access, path, home))) {
		rc = err && err->code ? err->code : OWS_ENOMEM;
		goto out;
	}
	lock = grants_lock();
	/* Journaled first: a host that dies after this line leaves it to cleanup. */
	if ((rc = journal_append(jpath, line, err)) == 0)
		rc = settle(config, sid, path, home, NULL, NULL, err);
out:
	grants_unlock(lock);
	free(sid);
	free(me);
	free(jpath);
	free(line);
	return rc;
}

static int acl_revoke(const ows_config *config, const char *session_id, const char *account,
		      const char *path, ows_error *err)
{
	if (!config || !session_id || !account || !path)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "an argument is NULL");
	PSID sid = NULL;
	char *jpath = NULL, *line = NULL;
	ows__jstate st = {0};
	HANDLE lock = NULL;
	int rc = secops->sid_of(account, &sid, err);
	if (rc < 0 || !(jpath = journal_path(config, session_id, err)))
		goto out;
	lock = grants_lock();
	char *text = NULL;
	size_t len = 0;
	if ((rc = ows__read_file(jpath, &text, &len, err)) == 0)
		rc = ows__jstate_parse(text, len, &st, err);
	free(text);
	if (rc < 0)
		goto out;
	const char *home = NULL;
	for (size_t i = 0; i < st.ngrants; i++)
		if (st.grants[i].acct_uid == rid_of(sid) && strcmp(st.grants[i].path, path) == 0)
			home = st.grants[i].home;
	/* Done first, journaled once done: an entry is never left unaccounted for. */
	if ((rc = settle(config, sid, path, home, session_id, path, err)) == 0 &&
	    (line = ows__jline_revoke(rid_of(sid), path)))
		rc = journal_append(jpath, line, err);
out:
	grants_unlock(lock);
	ows__jstate_free(&st);
	free(sid);
	free(jpath);
	free(line);
	return rc;
}

/* A NULL config is the machine's (ows_config_load(NULL)), as the header says. */
int ows_acl_grant(const ows_config *config, const char *session_id, const char *account,
		  const char *path, ows_access access, const char *home_root, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(config, &machine, &use, err);
	if (rc == 0)
		rc = acl_grant(use, session_id, account, path, access, home_root, err);
	ows__config_release(&machine);
	return rc;
}

int ows_acl_revoke(const ows_config *config, const char *session_id, const char *account,
		   const char *path, ows_error *err)
{
	ows_config machine;
	const ows_config *use;
	int rc = ows__config_or_machine(config, &machine, &use, err);
	if (rc == 0)
		rc = acl_revoke(use, session_id, account, path, err);
	ows__config_release(&machine);
	return rc;
}

int ows__machine_cleanup(const ows_config *config, ows_error *err)
{
	int revoked = 0;
	char *pattern = ows__asprintf(err, "%s\\journal\\*.journal", config->state_dir);
	wchar_t *w = pattern ? ows__wide(pattern) : NULL;
	WIN32_FIND_DATAW fd;
	HANDLE h = w ? FindFirstFileW(w, &fd) : INVALID_HANDLE_VALUE;
	if (h != INVALID_HANDLE_VALUE) {
		do {
			char *name = ows__narrow(fd.cFileName);
			char *path = name ? ows__asprintf(err, "%s\\journal\\%s", config->state_dir, name) : NULL;
			/* A live host holds its journal open without delete sharing. */
			wchar_t *wp = path ? ows__wide(path) : NULL;
			HANDLE lock = wp ? CreateFileW(wp, DELETE, 0, NULL, OPEN_EXISTING, 0, NULL)
					 : INVALID_HANDLE_VALUE;
			if (lock != INVALID_HANDLE_VALUE) {
				CloseHandle(lock);
				char *text = NULL;
				size_t len = 0;
				ows__jstate st;
				if (ows__read_file(path, &text, &len, NULL) == 0 &&
				    ows__jstate_parse(text, len, &st, NULL) == 0) {
					char id[64];
					snprintf(id, sizeof(id), "%.*s", (int)(strlen(name) - 8), name);
					bool all = true;
					for (size_t i = 0; i < st.ngrants; i++) {
						if (ows_acl_revoke(config, id, st.grants[i].account,
								   st.grants[i].path, err) == 0)
							revoked++;
						else
							all = false;
					}
					ows__jstate_free(&st);
					if (all)
						DeleteFileW(wp);
				}
				free(text);
			}
			free(wp);
			free(path);
			free(name);
		} while (FindNextFileW(h, &fd));
		FindClose(h);
	}
	free(w);
	free(pattern);
	return revoked;
}
