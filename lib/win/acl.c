/*
 * Folder permissions for the sandbox account: what each grant adds, adding
 * and removing it, the grant journal, and pipes only the account may open.
 *
 * A grant is one explicit entry for the account's SID on the folder
 * (modify, or read and execute; inherited by folders and files beneath, so
 * Windows, not we, carries it down the tree), plus a traverse-only entry on
 * each folder between it and the profile root.  It is journaled before it
 * is made: <state_dir>\journal\<session>.journal, in the portable format of
 * lib/journal.c, the account's RID in the uid's place.  Revoke removes
 * exactly the SID's explicit entries and keeps the folder's protection.
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

/* Adds (kind != 0) or removes (kind == 0) the SID's entry on one path. */
static int set_entry(const char *path, PSID sid, ows__ace_kind kind, ows_error *err)
{
	wchar_t *w = ows__wide(path);
	if (!w)
		return ows__fail(err, OWS_EINVAL, EILSEQ, path, NULL, "the path is not valid UTF-8");
	PACL dacl = NULL, nacl = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	DWORD e = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					&dacl, NULL, &sd);
	int rc = 0;
	if (e != ERROR_SUCCESS) {
		rc = ows__fail_win(err, 0, e, path, NULL, "cannot read the folder's permissions");
		goto out;
	}
	SECURITY_DESCRIPTOR_CONTROL ctl = 0;
	DWORD rev;
	GetSecurityDescriptorControl(sd, &ctl, &rev);
	rc = kind ? ows__acl_add(dacl, sid, kind, &nacl, err) : ows__acl_remove_sid(dacl, sid, &nacl, err);
	if (rc < 0)
		goto out;
	/* The folder keeps its protection state: inherited entries stay as they were. */
	SECURITY_INFORMATION si = DACL_SECURITY_INFORMATION |
				  (ctl & SE_DACL_PROTECTED ? PROTECTED_DACL_SECURITY_INFORMATION
							   : UNPROTECTED_DACL_SECURITY_INFORMATION);
	e = SetNamedSecurityInfoW(w, SE_FILE_OBJECT, si, NULL, NULL, nacl, NULL);
	if (e != ERROR_SUCCESS)
		rc = ows__fail_win(err, 0, e, path, "check that you own the folder",
				   kind ? "cannot grant the sandbox access" : "cannot revoke the grant");
out:
	LocalFree(nacl);
	LocalFree(sd);
	free(w);
	return rc;
}

/* The AppContainer provider's grants: a SID no account name stands for, not journaled. */
int ows__acl_set_sid(const char *path, PSID sid, ows__ace_kind kind, ows_error *err)
{
	return set_entry(path, sid, kind, err);
}

static int acl_grant(const ows_config *config, const char *session_id, const char *account,
		     const char *path, ows_access access, const char *home_root, ows_error *err)
{
	if (!config || !session_id || !account || !path || !home_root)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "an argument is NULL");
	if (access != OWS_ACCESS_RO && access != OWS_ACCESS_RW)
		return ows__fail(err, OWS_EINVAL, 0, path, NULL, "unknown access");
	PSID sid = NULL, me = NULL;
	ows__strv chain = {0};
	char *jpath = NULL, *line = NULL;
	int rc = ows__sid_of(account, &sid, err);
	if (rc < 0)
		goto out;
	char user[256];
	DWORD ul = sizeof(user);
	uint32_t person = 0;
	if (GetUserNameA(user, &ul) && ows__sid_of(user, &me, NULL) == 0)
		person = rid_of(me);
	if (!(jpath = journal_path(config, session_id, err)) ||
	    !(line = ows__jline_grant(account, rid_of(sid), person, access, path,
				      strcmp(home_root, path) ? home_root : NULL))) {
		rc = err && err->code ? err->code : OWS_ENOMEM;
		goto out;
	}
	/* Journaled first: a host that dies after this line leaves it to cleanup. */
	if ((rc = journal_append(jpath, line, err)) < 0 ||
	    (rc = ows__traverse_chain(path, home_root, &chain, err)) < 0)
		goto out;
	for (size_t i = 0; i < chain.len && rc == 0; i++)
		rc = set_entry(chain.v[i], sid, OWS__ACE_TRAVERSE, err);
	if (rc == 0)
		rc = set_entry(path, sid, access == OWS_ACCESS_RW ? OWS__ACE_RW : OWS__ACE_RO, err);
out:
	ows__strv_free(&chain);
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
	char *jpath = NULL, *text = NULL, *line = NULL;
	ows__jstate st = {0};
	ows__strv chain = {0};
	int rc = ows__sid_of(account, &sid, err);
	if (rc < 0 || !(jpath = journal_path(config, session_id, err)))
		goto out;
	size_t len = 0;
	if ((rc = ows__read_file(jpath, &text, &len, err)) < 0 ||
	    (rc = ows__jstate_parse(text, len, &st, err)) < 0)
		goto out;
	const char *home = NULL;
	for (size_t i = 0; i < st.ngrants; i++)
		if (st.grants[i].acct_uid == rid_of(sid) && strcmp(st.grants[i].path, path) == 0)
			home = st.grants[i].home;
	rc = set_entry(path, sid, 0, err);
	if (rc == 0 && home && (rc = ows__traverse_chain(path, home, &chain, err)) == 0)
		for (size_t i = chain.len; i-- > 0 && rc == 0;)
			rc = set_entry(chain.v[i], sid, 0, err);
	if (rc == 0 && (line = ows__jline_revoke(rid_of(sid), path)))
		rc = journal_append(jpath, line, err);
out:
	ows__jstate_free(&st);
	ows__strv_free(&chain);
	free(sid);
	free(jpath);
	free(text);
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

int ows_machine_cleanup(const ows_config *config, ows_error *err)
{
	ows_config defaults;
	int rc, revoked = 0;
	if (!config) {
		if ((rc = ows__config_machine(&defaults, err)) < 0)
			return rc;
		config = &defaults;
	}
	char *pattern = ows__asprintf(err, "%s\\journal\\*.journal", config->state_dir);
	wchar_t *w = pattern ? ows__wide(pattern) : NULL;
	WIN32_FIND_DATAW fd;
	HANDLE h = w ? FindFirstFileW(w, &fd) : INVALID_HANDLE_VALUE;
	rc = 0;
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
	if (config == &defaults)
		ows__config_release(&defaults);
	return revoked;
}
