/*
 * Machine setup for the windows provider: plan, setup, status, remove.
 *
 * What setup makes (spec 000, "What the setup does"):
 *   OWSandboxOpenNet, OWSandboxClosedNet  local accounts, random passwords
 *        nobody sees, hidden from the sign-in screen (Winlogon UserList),
 *        remote, network, batch and service logon denied (LSA rights)
 *   firewall rule      blocks every outbound connection of the closed account
 *   WFP                a provider, a sublayer and four filters: on loopback (the
 *                      connection's loopback flag, which a connection to the
 *                      machine's own LAN address has too) the closed account
 *                      reaches 47800-47899 and nothing else
 *
 * Setup can be run again: the firewall rule and the WFP filters are replaced,
 * one of each, under the keys the record already holds.
 *   account.cred       the passwords, DPAPI-protected (machine scope), in a
 *                      file only the person, administrators and SYSTEM may read
 *   sandboxes\ journal\  under the state folder
 *   setup.json         the record: every change, in order, saved after each
 *
 * `remove` runs the undo plan of the record (ows__win_undo_plan): exactly
 * what setup changed, in reverse, nothing it found already there.
 */
#define COBJMACROS
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "record.h"
#include "win.h"

#include <initguid.h>
#include <fwpmu.h>
#include <lm.h>
#include <netfw.h>
#include <ntsecapi.h>
#include <sddl.h>
#include <wincrypt.h>

#include "wfp.h"

#ifndef STATUS_SUCCESS
#define STATUS_SUCCESS ((NTSTATUS)0)
#endif

static const char *const DENIED_RIGHTS[] = {
	"SeDenyNetworkLogonRight", "SeDenyRemoteInteractiveLogonRight",
	"SeDenyServiceLogonRight", "SeDenyBatchLogonRight",
};
#define USERLIST_KEY L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon\\SpecialAccounts\\UserList"

/* ------------------------------------------------------------ secrets */

int ows__win_password(wchar_t out[33], ows_error *err)
{
	static const char *const classes[] = {"ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz",
					      "23456789", "!#%+-.=?@_~"};
	unsigned char raw[64];
	if (ows__plat_random(raw, sizeof(raw)) < 0)
		return ows__fail_sys(err, "BCryptGenRandom", NULL, "cannot make a password");
	for (int i = 0; i < 32; i++) {
		/* The first four characters cover each class Windows' complexity rule asks for. */
		const char *set = classes[i < 4 ? i : raw[32 + i] % 4];
		size_t n = strlen(set);
		/* Rejection-free: 256 % n bias is under 1 in 20 and harmless here. */
		out[i] = (wchar_t)set[raw[i] % n];
	}
	/* Shuffle so that the classes are not at fixed positions. */
	for (int i = 31; i > 0; i--) {
		int j = raw[32 + i] % (i + 1);
		wchar_t t = out[i];
		out[i] = out[j];
		out[j] = t;
	}
	out[32] = L'\0';
	SecureZeroMemory(raw, sizeof(raw));
	return 0;
}

static const char ENTROPY[] = "owsandbox account.cred v1";

int ows__dpapi_protect(const void *data, size_t len, void **out, size_t *out_len, ows_error *err)
{
	DATA_BLOB in = {(DWORD)len, (BYTE *)data}, ent = {sizeof(ENTROPY) - 1, (BYTE *)ENTROPY}, res;
	if (!CryptProtectData(&in, L"owsandbox", &ent, NULL, NULL,
			      CRYPTPROTECT_UI_FORBIDDEN | CRYPTPROTECT_LOCAL_MACHINE, &res))
		return ows__fail_win(err, 0, GetLastError(), "CryptProtectData", NULL,
				     "cannot protect the password store");
	*out = malloc(res.cbData);
	if (*out)
		memcpy(*out, res.pbData, res.cbData);
	*out_len = res.cbData;
	LocalFree(res.pbData);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

int ows__dpapi_unprotect(const void *data, size_t len, void **out, size_t *out_len,
			 ows_error *err)
{
	DATA_BLOB in = {(DWORD)len, (BYTE *)data}, ent = {sizeof(ENTROPY) - 1, (BYTE *)ENTROPY}, res;
	if (!CryptUnprotectData(&in, NULL, &ent, NULL, NULL, CRYPTPROTECT_UI_FORBIDDEN, &res))
		return ows__fail_win(err, OWS_ESETUP, GetLastError(), "CryptUnprotectData",
				     OWS__WIN_SETUP_HINT, "cannot read the password store");
	*out = malloc(res.cbData + 1);
	if (*out) {
		memcpy(*out, res.pbData, res.cbData);
		((char *)*out)[res.cbData] = '\0';
	}
	*out_len = res.cbData;
	SecureZeroMemory(res.pbData, res.cbData);
	LocalFree(res.pbData);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

int ows__win_password_of(const char *state_dir, const char *account, wchar_t out[33],
			 ows_error *err)
{
	char *path = ows__asprintf(err, "%s\\account.cred", state_dir);
	char *blob = NULL;
	void *plain = NULL;
	size_t len = 0, plen = 0;
	json_t *j = NULL;
	int rc = path ? ows__read_file(path, &blob, &len, err) : OWS_ENOMEM;
	if (rc == 0)
		rc = ows__dpapi_unprotect(blob, len, &plain, &plen, err);
	if (rc == 0 && (!(j = json_loadb(plain, plen, 0, NULL)) ||
			!json_is_string(json_object_get(j, account))))
		rc = ows__fail(err, OWS_ESETUP, 0, path, OWS__WIN_SETUP_HINT,
			       "the password store has no password for %s", account);
	if (rc == 0) {
		wchar_t *w = ows__wide(json_string_value(json_object_get(j, account)));
		if (w && wcslen(w) == 32)
			wcscpy(out, w);
		else
			rc = ows__fail(err, OWS_ESETUP, 0, path, OWS__WIN_SETUP_HINT,
				       "the password store is damaged");
		free(w);
	}
	if (plain)
		SecureZeroMemory(plain, plen);
	json_decref(j);
	free(plain);
	free(blob);
	free(path);
	return rc;
}

/* ------------------------------------------------------------- record */

static json_t *change(json_t *rec, const char *item)
{
	json_t *c = json_pack("{s:s}", "item", item);
	json_array_append_new(json_object_get(rec, "changes"), c);
	return c;
}

json_t *ows__win_undo_plan(json_t *rec)
{
	json_t *plan = json_array();
	json_t *changes = json_object_get(rec, "changes");
	for (size_t i = json_array_size(changes); plan && i-- > 0;) {
		json_t *c = json_array_get(changes, i);
		const char *item = json_string_value(json_object_get(c, "item"));
		if (!item)
			continue;
		if (!strcmp(item, "account") && json_is_true(json_object_get(c, "created")))
			json_array_append_new(plan, json_pack("{s:s, s:O}", "undo", "delete_account",
							      "name", json_object_get(c, "name")));
		else if (!strcmp(item, "hidden") && json_is_true(json_object_get(c, "created")))
			json_array_append_new(plan, json_pack("{s:s, s:O}", "undo",
							      "delete_userlist_value", "name",
							      json_object_get(c, "name")));
		else if (!strcmp(item, "logon_rights") && json_array_size(json_object_get(c, "added")))
			json_array_append_new(plan, json_pack("{s:s, s:O, s:O}", "undo",
							      "remove_account_rights", "name",
							      json_object_get(c, "name"), "rights",
							      json_object_get(c, "added")));
		else if (!strcmp(item, "firewall_rule") && json_is_true(json_object_get(c, "created")))
			json_array_append_new(plan, json_pack("{s:s, s:O}", "undo",
							      "delete_firewall_rule", "name",
							      json_object_get(c, "name")));
		else if (!strcmp(item, "wfp"))
			json_array_append_new(plan, json_pack("{s:s, s:O, s:O, s:O}", "undo",
							      "delete_wfp", "filters",
							      json_object_get(c, "filters"), "sublayer",
							      json_object_get(c, "sublayer"), "provider",
							      json_object_get(c, "provider")));
		else if (!strcmp(item, "file") && json_is_true(json_object_get(c, "created")))
			json_array_append_new(plan, json_pack("{s:s, s:O}", "undo", "delete_file",
							      "path", json_object_get(c, "path")));
		else if (!strcmp(item, "folder") && json_is_true(json_object_get(c, "created")))
			json_array_append_new(plan, json_pack("{s:s, s:O}", "undo", "remove_folder",
							      "path", json_object_get(c, "path")));
	}
	return plan;
}

/* ---------------------------------------------------------- the steps */

typedef struct mctx {
	const ows_config *c;
	ows_setup_options o;
	ows_error *err;
	json_t *rec;
	wchar_t pw_open[33], pw_closed[33];
} mctx;

static void progress(mctx *m, const char *step)
{
	if (m->o.progress)
		m->o.progress(m->o.progress_ctx, step);
}

static int save(mctx *m)
{
	return ows__record_save(m->c->state_dir, m->rec, m->err);
}

static bool account_exists(const wchar_t *name)
{
	USER_INFO_0 *ui = NULL;
	NET_API_STATUS st = NetUserGetInfo(NULL, name, 0, (BYTE **)&ui);
	if (ui)
		NetApiBufferFree(ui);
	return st == NERR_Success;
}

static int step_folder(mctx *m, const char *path)
{
	bool existed = ows__plat_is_dir(path);
	int rc = ows__win_mkdir_p(path, m->err);
	if (rc < 0)
		return rc;
	json_t *c = change(m->rec, "folder");
	json_object_set_new(c, "path", json_string(path));
	json_object_set_new(c, "created", json_boolean(!existed));
	return save(m);
}

static int step_account(mctx *m, const wchar_t *name, const char *name8, wchar_t *pw)
{
	progress(m, name8);
	json_t *c = change(m->rec, "account");
	json_object_set_new(c, "name", json_string(name8));
	bool existed = account_exists(name);
	if ((ows__win_password(pw, m->err)) < 0)
		return OWS_ESYS;
	if (!existed) {
		USER_INFO_1 ui;
		memset(&ui, 0, sizeof(ui));
		ui.usri1_name = (LPWSTR)name;
		ui.usri1_password = pw;
		ui.usri1_priv = USER_PRIV_USER;
		ui.usri1_comment = (LPWSTR)L"owsandbox: runs an AI agent's commands";
		ui.usri1_flags = UF_SCRIPT | UF_DONT_EXPIRE_PASSWD | UF_PASSWD_CANT_CHANGE;
		NET_API_STATUS st = NetUserAdd(NULL, 1, (BYTE *)&ui, NULL);
		if (st != NERR_Success)
			return ows__fail_win(m->err, 0, st, name8, NULL, "cannot create the account");
	} else {
		/* Ours from an earlier run: a new password, since the old one is not kept twice. */
		USER_INFO_1003 pi = {pw};
		NET_API_STATUS st = NetUserSetInfo(NULL, name, 1003, (BYTE *)&pi, NULL);
		if (st != NERR_Success)
			return ows__fail_win(m->err, 0, st, name8, NULL, "cannot set the account's password");
	}
	json_object_set_new(c, "created", json_boolean(!existed));
	int rc = save(m);
	if (rc < 0)
		return rc;

	/* Hidden from the sign-in screen. */
	HKEY key;
	json_t *h = change(m->rec, "hidden");
	json_object_set_new(h, "name", json_string(name8));
	DWORD zero = 0, type, size = sizeof(DWORD);
	LSTATUS ls = RegCreateKeyExW(HKEY_LOCAL_MACHINE, USERLIST_KEY, 0, NULL, 0, KEY_READ | KEY_WRITE,
				     NULL, &key, NULL);
	if (ls != ERROR_SUCCESS)
		return ows__fail_win(m->err, 0, (DWORD)ls, "Winlogon UserList", NULL,
				     "cannot hide the account from the sign-in screen");
	bool had = RegQueryValueExW(key, name, NULL, &type, NULL, &size) == ERROR_SUCCESS;
	ls = RegSetValueExW(key, name, 0, REG_DWORD, (const BYTE *)&zero, sizeof(zero));
	RegCloseKey(key);
	if (ls != ERROR_SUCCESS)
		return ows__fail_win(m->err, 0, (DWORD)ls, "Winlogon UserList", NULL,
				     "cannot hide the account from the sign-in screen");
	json_object_set_new(h, "created", json_boolean(!had));
	if ((rc = save(m)) < 0)
		return rc;

	/* Logon rights: record the ones we add, before adding them. */
	PSID sid = NULL;
	if ((rc = ows__sid_of(name8, &sid, m->err)) < 0)
		return rc;
	LSA_OBJECT_ATTRIBUTES oa;
	memset(&oa, 0, sizeof(oa));
	LSA_HANDLE pol;
	NTSTATUS ns = LsaOpenPolicy(NULL, &oa, POLICY_LOOKUP_NAMES | POLICY_CREATE_ACCOUNT, &pol);
	if (ns != STATUS_SUCCESS) {
		free(sid);
		return ows__fail_win(m->err, 0, LsaNtStatusToWinError(ns), "LsaOpenPolicy", NULL,
				     "cannot change the account's logon rights");
	}
	json_t *r = change(m->rec, "logon_rights");
	json_object_set_new(r, "name", json_string(name8));
	json_t *added = json_array();
	json_object_set_new(r, "added", added);
	for (size_t i = 0; i < OWS__ARRAY_LEN(DENIED_RIGHTS) && rc == 0; i++) {
		wchar_t wr[64];
		swprintf(wr, 64, L"%hs", DENIED_RIGHTS[i]);
		LSA_UNICODE_STRING us = {(USHORT)(wcslen(wr) * 2), (USHORT)(wcslen(wr) * 2 + 2), wr};
		json_array_append_new(added, json_string(DENIED_RIGHTS[i]));
		if ((rc = save(m)) < 0)
			break;
		ns = LsaAddAccountRights(pol, sid, &us, 1);
		if (ns != STATUS_SUCCESS)
			rc = ows__fail_win(m->err, 0, LsaNtStatusToWinError(ns), DENIED_RIGHTS[i], NULL,
					   "cannot deny the logon right");
	}
	LsaClose(pol);
	free(sid);
	return rc;
}

static char *sid_string(const char *account, ows_error *err)
{
	PSID sid = NULL;
	wchar_t *ws = NULL;
	char *s = NULL;
	if (ows__sid_of(account, &sid, err) == 0 && ConvertSidToStringSidW(sid, &ws))
		s = ows__narrow(ws);
	LocalFree(ws);
	free(sid);
	return s;
}

/* The closed account as the one user a firewall rule or WFP filter applies to. */
static int closed_account_sddl(wchar_t sddl[256], ows_error *err)
{
	char *sid = sid_string(OWS__WIN_CLOSED_USER_A, err);
	if (!sid)
		return OWS_ESYS;
	swprintf(sddl, 256, L"O:LSD:(A;;CC;;;%hs)", sid);
	free(sid);
	return 0;
}

/* The firewall's rules through COM: the real ops behind ows__win_fwops. */
typedef struct fw_com {
	INetFwPolicy2 *pol;
	INetFwRules *rules;
	bool uninit;
} fw_com;

static HRESULT fw_open(fw_com *c)
{
	memset(c, 0, sizeof(*c));
	HRESULT hr = CoInitializeEx(NULL, COINIT_APARTMENTTHREADED);
	c->uninit = SUCCEEDED(hr);
	hr = CoCreateInstance(&CLSID_NetFwPolicy2, NULL, CLSCTX_INPROC_SERVER, &IID_INetFwPolicy2,
			      (void **)&c->pol);
	if (SUCCEEDED(hr))
		hr = INetFwPolicy2_get_Rules(c->pol, &c->rules);
	return hr;
}

static void fw_close(fw_com *c)
{
	if (c->rules)
		INetFwRules_Release(c->rules);
	if (c->pol)
		INetFwPolicy2_Release(c->pol);
	if (c->uninit)
		CoUninitialize();
}

static bool fw_exists(void *ctx, const wchar_t *name)
{
	fw_com *c = ctx;
	INetFwRule *rule = NULL;
	BSTR bn = SysAllocString(name);
	HRESULT hr = INetFwRules_Item(c->rules, bn, &rule);
	SysFreeString(bn);
	if (rule)
		INetFwRule_Release(rule);
	return SUCCEEDED(hr);
}

static HRESULT fw_remove(void *ctx, const wchar_t *name)
{
	fw_com *c = ctx;
	BSTR bn = SysAllocString(name);
	HRESULT hr = INetFwRules_Remove(c->rules, bn);
	SysFreeString(bn);
	return hr;
}

static HRESULT fw_add(void *ctx, const wchar_t *name, const wchar_t *users)
{
	fw_com *c = ctx;
	INetFwRule *rule = NULL;
	INetFwRule3 *rule3 = NULL;
	BSTR bn = SysAllocString(name), bu = SysAllocString(users);
	HRESULT hr = CoCreateInstance(&CLSID_NetFwRule, NULL, CLSCTX_INPROC_SERVER, &IID_INetFwRule,
				      (void **)&rule);
	if (SUCCEEDED(hr))
		hr = INetFwRule_QueryInterface(rule, &IID_INetFwRule3, (void **)&rule3);
	if (SUCCEEDED(hr))
		hr = INetFwRule_put_Name(rule, bn);
	if (SUCCEEDED(hr))
		hr = INetFwRule_put_Direction(rule, NET_FW_RULE_DIR_OUT);
	if (SUCCEEDED(hr))
		hr = INetFwRule_put_Action(rule, NET_FW_ACTION_BLOCK);
	if (SUCCEEDED(hr))
		hr = INetFwRule3_put_LocalUserAuthorizedList(rule3, bu);
	if (SUCCEEDED(hr))
		hr = INetFwRule_put_Enabled(rule, VARIANT_TRUE);
	if (SUCCEEDED(hr))
		hr = INetFwRules_Add(c->rules, rule);
	if (rule3)
		INetFwRule3_Release(rule3);
	if (rule)
		INetFwRule_Release(rule);
	SysFreeString(bn);
	SysFreeString(bu);
	return hr;
}

/* Rules are found by name and Remove takes one at a time; more than this is not ours. */
#define FW_MAX_SAME_NAME 64

HRESULT ows__win_fw_remove_all(const ows__win_fwops *ops, const wchar_t *name)
{
	HRESULT hr = S_OK;
	for (int i = 0; i < FW_MAX_SAME_NAME && SUCCEEDED(hr) && ops->exists(ops->ctx, name); i++)
		hr = ops->remove(ops->ctx, name);
	return hr;
}

/*
 * Exactly one rule of that name, for `users`: what an earlier setup left
 * (the same rule, or the duplicates older setups added on every run) goes,
 * then one is added, so that a re-run also takes a new account SID.
 */
HRESULT ows__win_fw_ensure_one(const ows__win_fwops *ops, const wchar_t *name,
			       const wchar_t *users)
{
	HRESULT hr = ows__win_fw_remove_all(ops, name);
	return SUCCEEDED(hr) ? ops->add(ops->ctx, name, users) : hr;
}

/* The record's change for `item`, the one an earlier setup wrote, else a new one. */
static json_t *change_once(json_t *rec, const char *item)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(rec, "changes"), i, c) {
		const char *it = json_string_value(json_object_get(c, "item"));
		if (it && !strcmp(it, item))
			return c;
	}
	return change(rec, item);
}

static int step_firewall(mctx *m)
{
	progress(m, "firewall rule");
	wchar_t sddl[256];
	if (closed_account_sddl(sddl, m->err) < 0)
		return OWS_ESYS;
	json_t *c = change_once(m->rec, "firewall_rule");
	char *name8 = ows__narrow(OWS__WIN_FIREWALL_RULE);
	json_object_set_new(c, "name", json_string(name8 ? name8 : ""));
	free(name8);
	json_object_set_new(c, "created", json_true());
	int rc = save(m);
	if (rc < 0)
		return rc;
	fw_com com;
	HRESULT hr = fw_open(&com);
	ows__win_fwops ops = {&com, fw_exists, fw_remove, fw_add};
	if (SUCCEEDED(hr))
		hr = ows__win_fw_ensure_one(&ops, OWS__WIN_FIREWALL_RULE, sddl);
	fw_close(&com);
	if (FAILED(hr))
		return ows__fail_win(m->err, 0, (DWORD)hr, "INetFwPolicy2", NULL,
				     "cannot write the firewall rule");
	return 0;
}

static void guid_str(const GUID *g, char out[40])
{
	snprintf(out, 40, "%08lx-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 (unsigned long)g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
		 g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}

static int new_guid(GUID *g)
{
	if (ows__plat_random(g, sizeof(*g)) < 0)
		return -1;
	g->Data3 = (unsigned short)((g->Data3 & 0x0fff) | 0x4000); /* version 4 */
	g->Data4[0] = (unsigned char)((g->Data4[0] & 0x3f) | 0x80);
	return 0;
}

static bool parse_guid(const char *s, GUID *g)
{
	unsigned long d1;
	unsigned d2, d3, b[8];
	if (!s || sscanf(s, "%8lx-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x", &d1, &d2, &d3, &b[0], &b[1],
			 &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]) != 11)
		return false;
	g->Data1 = d1;
	g->Data2 = (unsigned short)d2;
	g->Data3 = (unsigned short)d3;
	for (int i = 0; i < 8; i++)
		g->Data4[i] = (unsigned char)b[i];
	return true;
}

/*
 * The four filters, on the v4 and v6 connect layers: permit the proxy's
 * ports, block the rest of loopback, for the closed account.  Loopback is
 * the connection's loopback flag, not 127/8 and ::1: a connection to the
 * machine's own LAN address is looped back too, and the firewall rule (which
 * does not see loopback) would let it through.
 */
void ows__wfp_loopback_filters(ows__wfp_filters *w, FWP_BYTE_BLOB *user, const GUID *prov,
			       const GUID *sub, const GUID keys[4])
{
	memset(w, 0, sizeof(*w));
	w->prov = *prov;
	w->ports.valueLow.type = FWP_UINT16;
	w->ports.valueLow.uint16 = OWS__PROXY_PORT_FIRST;
	w->ports.valueHigh.type = FWP_UINT16;
	w->ports.valueHigh.uint16 = OWS__PROXY_PORT_LAST;
	for (int i = 0; i < 4; i++) {
		bool v6 = i >= 2, permit = i % 2 == 0;
		FWPM_FILTER_CONDITION0 *cond = w->cond[i];
		cond[0].fieldKey = OWS_FWPM_CONDITION_ALE_USER_ID;
		cond[0].matchType = FWP_MATCH_EQUAL;
		cond[0].conditionValue.type = FWP_SECURITY_DESCRIPTOR_TYPE;
		cond[0].conditionValue.sd = user;
		cond[1].fieldKey = OWS_FWPM_CONDITION_FLAGS;
		cond[1].matchType = FWP_MATCH_FLAGS_ALL_SET;
		cond[1].conditionValue.type = FWP_UINT32;
		cond[1].conditionValue.uint32 = FWP_CONDITION_FLAG_IS_LOOPBACK;
		cond[2].fieldKey = OWS_FWPM_CONDITION_IP_REMOTE_PORT;
		cond[2].matchType = FWP_MATCH_RANGE;
		cond[2].conditionValue.type = FWP_RANGE_TYPE;
		cond[2].conditionValue.rangeValue = &w->ports;
		FWPM_FILTER0 *f = &w->f[i];
		f->filterKey = keys[i];
		f->displayData.name = (wchar_t *)(permit ? L"owsandbox: closed account to the proxy's ports"
							 : L"owsandbox: closed account, rest of loopback");
		f->flags = FWPM_FILTER_FLAG_PERSISTENT;
		f->providerKey = &w->prov;
		f->layerKey = v6 ? OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V6 : OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V4;
		f->subLayerKey = *sub;
		f->weight.type = FWP_UINT8;
		f->weight.uint8 = permit ? 15 : 14;
		f->numFilterConditions = permit ? 3 : 2;
		f->filterCondition = cond;
		f->action.type = permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK;
	}
}

/* The keys an earlier setup recorded, or new ones recorded now. */
static int wfp_keys(mctx *m, json_t *c, GUID *prov, GUID *sub, GUID keys[4], bool *had)
{
	json_t *fl = json_object_get(c, "filters");
	*had = json_array_size(fl) == 4 &&
	       parse_guid(json_string_value(json_object_get(c, "provider")), prov) &&
	       parse_guid(json_string_value(json_object_get(c, "sublayer")), sub);
	for (size_t i = 0; *had && i < 4; i++)
		*had = parse_guid(json_string_value(json_array_get(fl, i)), &keys[i]);
	if (*had)
		return 0;
	char gs[40];
	if (new_guid(prov) || new_guid(sub))
		return ows__fail_sys(m->err, "random", NULL, "cannot make the filters' keys");
	guid_str(prov, gs);
	json_object_set_new(c, "provider", json_string(gs));
	guid_str(sub, gs);
	json_object_set_new(c, "sublayer", json_string(gs));
	fl = json_array();
	for (int i = 0; i < 4; i++) {
		if (new_guid(&keys[i]))
			return ows__fail_sys(m->err, "random", NULL, "cannot make the filters' keys");
		guid_str(&keys[i], gs);
		json_array_append_new(fl, json_string(gs));
	}
	json_object_set_new(c, "filters", fl);
	return save(m); /* the keys are recorded before anything is made */
}

static int undo_step(json_t *s, ows_error *err);

static int step_wfp(mctx *m)
{
	progress(m, "loopback filters");
	wchar_t sddl[256];
	if (closed_account_sddl(sddl, m->err) < 0)
		return OWS_ESYS;
	GUID prov, sub, keys[4];
	bool had;
	json_t *c = change_once(m->rec, "wfp");
	int rc = wfp_keys(m, c, &prov, &sub, keys, &had);
	if (rc < 0)
		return rc;
	/* A re-run replaces what the earlier setup made under the same keys: one set, current. */
	if (had) {
		json_t *undo = json_pack("{s:s, s:O, s:O, s:O}", "undo", "delete_wfp", "filters",
					 json_object_get(c, "filters"), "sublayer",
					 json_object_get(c, "sublayer"), "provider",
					 json_object_get(c, "provider"));
		rc = undo ? undo_step(undo, m->err) : OWS_ENOMEM;
		json_decref(undo);
		if (rc < 0)
			return rc;
	}
	PSECURITY_DESCRIPTOR sd = NULL;
	ULONG sdlen = 0;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, &sdlen))
		return ows__fail_win(m->err, 0, GetLastError(), "SDDL", NULL,
				     "cannot build the filters' user condition");
	HANDLE eng = NULL;
	FWPM_SESSION0 session;
	memset(&session, 0, sizeof(session));
	DWORD e = FwpmEngineOpen0(NULL, RPC_C_AUTHN_DEFAULT, NULL, &session, &eng);
	if (e == ERROR_SUCCESS)
		e = FwpmTransactionBegin0(eng, 0);
	FWPM_PROVIDER0 p;
	memset(&p, 0, sizeof(p));
	p.providerKey = prov;
	p.displayData.name = (wchar_t *)L"owsandbox";
	p.flags = FWPM_PROVIDER_FLAG_PERSISTENT;
	if (e == ERROR_SUCCESS)
		e = FwpmProviderAdd0(eng, &p, NULL);
	FWPM_SUBLAYER0 sl;
	memset(&sl, 0, sizeof(sl));
	sl.subLayerKey = sub;
	sl.displayData.name = (wchar_t *)L"owsandbox closed account";
	sl.flags = FWPM_SUBLAYER_FLAG_PERSISTENT;
	sl.providerKey = &prov;
	sl.weight = 0x8000;
	if (e == ERROR_SUCCESS)
		e = FwpmSubLayerAdd0(eng, &sl, NULL);
	FWP_BYTE_BLOB user = {sdlen, (UINT8 *)sd};
	ows__wfp_filters w;
	ows__wfp_loopback_filters(&w, &user, &prov, &sub, keys);
	for (int i = 0; i < 4 && e == ERROR_SUCCESS; i++)
		e = FwpmFilterAdd0(eng, &w.f[i], NULL, NULL);
	if (eng) {
		if (e == ERROR_SUCCESS)
			e = FwpmTransactionCommit0(eng);
		else
			FwpmTransactionAbort0(eng);
		FwpmEngineClose0(eng);
	}
	LocalFree(sd);
	if (e != ERROR_SUCCESS)
		return ows__fail_win(m->err, 0, e, "Fwpm", NULL, "cannot write the loopback filters");
	return 0;
}

static int step_store(mctx *m, const char *person_sid)
{
	progress(m, "password store");
	char *path = ows__asprintf(m->err, "%s\\account.cred", m->c->state_dir);
	char *o = ows__narrow(m->pw_open), *cl = ows__narrow(m->pw_closed);
	json_t *j = json_pack("{s:s, s:s}", OWS__WIN_OPEN_USER_A, o ? o : "",
			      OWS__WIN_CLOSED_USER_A, cl ? cl : "");
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	void *blob = NULL;
	size_t blen = 0;
	int rc = path && text ? 0 : OWS_ENOMEM;
	if (rc == 0) {
		json_t *c = change(m->rec, "file");
		json_object_set_new(c, "path", json_string(path));
		json_object_set_new(c, "created", json_true());
		rc = save(m);
	}
	if (rc == 0)
		rc = ows__dpapi_protect(text, strlen(text), &blob, &blen, m->err);
	if (rc == 0)
		rc = ows__write_file(path, blob, blen, 0600, m->err);
	if (rc == 0) {
		/* Only the person, administrators and the system: nobody else, no inheritance. */
		wchar_t sddl[256];
		swprintf(sddl, 256, L"D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FR;;;%hs)", person_sid);
		PSECURITY_DESCRIPTOR sd = NULL;
		PACL dacl = NULL;
		BOOL present, def;
		wchar_t *wp = ows__wide(path);
		DWORD e = ERROR_INVALID_PARAMETER;
		if (wp && ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL) &&
		    GetSecurityDescriptorDacl(sd, &present, &dacl, &def))
			e = SetNamedSecurityInfoW(wp, SE_FILE_OBJECT,
						  DACL_SECURITY_INFORMATION |
							  PROTECTED_DACL_SECURITY_INFORMATION,
						  NULL, NULL, dacl, NULL);
		LocalFree(sd);
		free(wp);
		if (e != ERROR_SUCCESS)
			rc = ows__fail_win(m->err, 0, e, path, NULL, "cannot protect the password store");
	}
	if (text)
		SecureZeroMemory(text, strlen(text));
	if (o)
		SecureZeroMemory(o, strlen(o));
	if (cl)
		SecureZeroMemory(cl, strlen(cl));
	free(text);
	free(o);
	free(cl);
	free(blob);
	free(path);
	json_decref(j);
	return rc;
}

static int load_or_new(mctx *m)
{
	int rc = ows__record_load(m->c->state_dir, &m->rec, m->err);
	if (rc == OWS_ENOTFOUND) {
		if (m->err)
			ows_error_clear(m->err);
		m->rec = json_pack("{s:i, s:s, s:[], s:b}", "version", OWS__RECORD_VERSION,
				   "provider", "windows", "changes", "proved", 0);
		return m->rec ? 0 : OWS_ENOMEM;
	}
	return rc;
}

static int need_admin(ows_error *err)
{
	return ows__fail(err, OWS_EPERM, 0, "administrator", OWS__WIN_SETUP_HINT,
			 "setting up the Windows sandbox needs an administrator");
}

static int machine_plan(const ows_config *c, const ows_setup_options *o, char **plan,
			ows_error *err)
{
	if (!plan)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "plan is NULL");
	json_t *ch = json_array();
	const wchar_t *users[] = {OWS__WIN_OPEN_USER, OWS__WIN_CLOSED_USER};
	const char *users8[] = {OWS__WIN_OPEN_USER_A, OWS__WIN_CLOSED_USER_A};
	for (int i = 0; i < 2; i++) {
		bool there = account_exists(users[i]);
		json_array_append_new(ch, json_pack("{s:s, s:s, s:s}", "item", "account", "name",
						    users8[i], "change",
						    there ? "new random password" : "create, hidden, random password"));
		json_array_append_new(ch, json_pack("{s:s, s:s, s:s}", "item", "logon_rights", "name",
						    users8[i], "change",
						    "deny network, remote, batch and service logon"));
	}
	json_array_append_new(ch, json_pack("{s:s, s:s}", "item", "firewall_rule", "change",
					     "block all outbound for " OWS__WIN_CLOSED_USER_A));
	json_array_append_new(ch, json_pack("{s:s, s:s}", "item", "wfp", "change",
					     "loopback: only 47800-47899 for " OWS__WIN_CLOSED_USER_A));
	json_array_append_new(ch, json_pack("{s:s, s:s}", "item", "file", "change",
					     "account.cred: passwords, DPAPI, person+admins+SYSTEM"));
	json_array_append_new(ch, json_pack("{s:s, s:s}", "item", "folder", "change",
					     "sandboxes and journal folders under the state folder"));
	json_t *root = json_pack("{s:s, s:s, s:b, s:o}", "provider", "windows", "state_dir",
				 c->state_dir, "admin", ows__win_is_admin(), "changes", ch);
	*plan = root ? json_dumps(root, JSON_COMPACT | JSON_INDENT(0)) : NULL;
	json_decref(root);
	(void)o;
	return *plan ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

static int machine_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	if (o && o->size < sizeof(*o))
		return ows__fail(err, OWS_EINVAL, 0, "ows_setup_options.size", NULL, "struct too small");
	if (!ows__win_is_admin())
		return need_admin(err);
	mctx m = {.c = c, .err = err};
	ows_setup_options_init(&m.o);
	if (o)
		m.o = *o;
	char user[256];
	DWORD ul = sizeof(user);
	char *person = GetUserNameA(user, &ul) ? sid_string(user, err) : NULL;
	char *sandboxes = ows__asprintf(err, "%s\\sandboxes", c->state_dir);
	char *journal = ows__asprintf(err, "%s\\journal", c->state_dir);
	int rc = person && sandboxes && journal ? 0 : OWS_ESYS;
	if (rc == 0 && (rc = ows__win_mkdir_p(c->state_dir, err)) == 0 && (rc = load_or_new(&m)) == 0 &&
	    (rc = step_folder(&m, c->state_dir)) == 0 && (rc = step_folder(&m, sandboxes)) == 0 &&
	    (rc = step_folder(&m, journal)) == 0 &&
	    (rc = step_account(&m, OWS__WIN_OPEN_USER, OWS__WIN_OPEN_USER_A, m.pw_open)) == 0 &&
	    (rc = step_account(&m, OWS__WIN_CLOSED_USER, OWS__WIN_CLOSED_USER_A, m.pw_closed)) == 0 &&
	    (rc = step_firewall(&m)) == 0 && (rc = step_wfp(&m)) == 0 &&
	    (rc = step_store(&m, person)) == 0) {
		/* The wall, proved from inside a throwaway sandbox. */
		progress(&m, "proof");
		ows_policy *p = NULL;
		char *report = NULL;
		rc = ows_policy_new(&p, err);
		if (rc == 0)
			rc = ows_policy_set_provider(p, "windows", err);
		if (rc == 0)
			rc = ows_verify(p, c, &report, err);
		ows_free(report);
		ows_policy_free(p);
		json_object_set_new(m.rec, "proved", json_boolean(rc == 0));
		int src = save(&m);
		if (rc == 0)
			rc = src;
	}
	SecureZeroMemory(m.pw_open, sizeof(m.pw_open));
	SecureZeroMemory(m.pw_closed, sizeof(m.pw_closed));
	json_decref(m.rec);
	free(person);
	free(sandboxes);
	free(journal);
	return rc;
}

static int machine_status(const ows_config *c, char **status, ows_error *err)
{
	if (!status)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "status is NULL");
	*status = NULL;
	json_t *rows = json_array(), *rec = NULL;
	int failing = 0;
	const char *fix = ows__win_is_admin() ? "owsbx machine sandbox setup" : OWS__WIN_SETUP_HINT;
#define ROW(item, ok, what)                                                                    \
	do {                                                                                       \
		json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:s}", "item", item, "state",  \
						      (ok) ? "ok" : "missing", "what", what, "fix",   \
						      (ok) ? "" : fix));                              \
		failing += !(ok);                                                                  \
	} while (0)
	bool have = ows__record_load(c->state_dir, &rec, NULL) == 0;
	ROW("record", have, "setup.json, intact");
	ROW("account " OWS__WIN_OPEN_USER_A, account_exists(OWS__WIN_OPEN_USER), "hidden local account");
	ROW("account " OWS__WIN_CLOSED_USER_A, account_exists(OWS__WIN_CLOSED_USER), "hidden local account");
	json_t *changes = json_object_get(rec, "changes");
	bool fw = false, wfp = false, store = false;
	size_t i;
	json_t *ch;
	json_array_foreach(changes, i, ch) {
		const char *item = json_string_value(json_object_get(ch, "item"));
		fw |= item && !strcmp(item, "firewall_rule");
		wfp |= item && !strcmp(item, "wfp");
		store |= item && !strcmp(item, "file");
	}
	/* The live firewall and WFP state is read only on Windows (Wine aborts in Fwpm). */
	if (fw && !ows__win_is_wine()) {
		INetFwPolicy2 *pol = NULL;
		INetFwRules *rules = NULL;
		INetFwRule *rule = NULL;
		HRESULT hr = CoInitializeEx(NULL, COINIT_APARTMENTTHREADED);
		bool un = SUCCEEDED(hr);
		BSTR name = SysAllocString(OWS__WIN_FIREWALL_RULE);
		hr = CoCreateInstance(&CLSID_NetFwPolicy2, NULL, CLSCTX_INPROC_SERVER,
				      &IID_INetFwPolicy2, (void **)&pol);
		if (SUCCEEDED(hr))
			hr = INetFwPolicy2_get_Rules(pol, &rules);
		if (SUCCEEDED(hr))
			hr = INetFwRules_Item(rules, name, &rule);
		fw = SUCCEEDED(hr);
		if (rule)
			INetFwRule_Release(rule);
		if (rules)
			INetFwRules_Release(rules);
		if (pol)
			INetFwPolicy2_Release(pol);
		SysFreeString(name);
		if (un)
			CoUninitialize();
	}
	ROW("firewall rule", fw, "blocks outbound for " OWS__WIN_CLOSED_USER_A);
	ROW("wfp filters", wfp, "loopback: 47800-47899 only, for " OWS__WIN_CLOSED_USER_A);
	ROW("password store", store, "account.cred, DPAPI");
	char *sb = ows__asprintf(err, "%s\\sandboxes", c->state_dir);
	ROW("sandboxes folder", sb && ows__plat_is_dir(sb), "per-session private folders");
	free(sb);
	ROW("proof", json_is_true(json_object_get(rec, "proved")), "the wall proved at setup");
#undef ROW
	json_t *root = json_pack("{s:s, s:b, s:i, s:o}", "provider", "windows", "admin",
				 ows__win_is_admin(), "failing", failing, "rows", rows);
	*status = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	json_decref(rec);
	return *status ? failing : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

static int undo_step(json_t *s, ows_error *err)
{
	const char *what = json_string_value(json_object_get(s, "undo"));
	const char *name = json_string_value(json_object_get(s, "name"));
	const char *path = json_string_value(json_object_get(s, "path"));
	wchar_t *w = ows__wide(name ? name : path ? path : "");
	int rc = 0;
	if (!w)
		return OWS_ENOMEM;
	if (!strcmp(what, "delete_account")) {
		NET_API_STATUS st = NetUserDel(NULL, w);
		if (st != NERR_Success && st != NERR_UserNotFound)
			rc = ows__fail_win(err, 0, st, name, NULL, "cannot delete the account");
	} else if (!strcmp(what, "delete_userlist_value")) {
		HKEY key;
		if (RegOpenKeyExW(HKEY_LOCAL_MACHINE, USERLIST_KEY, 0, KEY_WRITE, &key) == ERROR_SUCCESS) {
			RegDeleteValueW(key, w);
			RegCloseKey(key);
		}
	} else if (!strcmp(what, "remove_account_rights")) {
		PSID sid = NULL;
		LSA_OBJECT_ATTRIBUTES oa;
		memset(&oa, 0, sizeof(oa));
		LSA_HANDLE pol;
		/* The account may be gone already (its rights went with it). */
		if (ows__sid_of(name, &sid, NULL) == 0 &&
		    LsaOpenPolicy(NULL, &oa, POLICY_LOOKUP_NAMES | POLICY_CREATE_ACCOUNT, &pol) == STATUS_SUCCESS) {
			size_t i;
			json_t *r;
			json_array_foreach(json_object_get(s, "rights"), i, r) {
				wchar_t wr[64];
				swprintf(wr, 64, L"%hs", json_string_value(r));
				LSA_UNICODE_STRING us = {(USHORT)(wcslen(wr) * 2), (USHORT)(wcslen(wr) * 2 + 2), wr};
				LsaRemoveAccountRights(pol, sid, FALSE, &us, 1);
			}
			LsaClose(pol);
		}
		free(sid);
	} else if (!strcmp(what, "delete_firewall_rule")) {
		fw_com com;
		HRESULT hr = fw_open(&com);
		ows__win_fwops ops = {&com, fw_exists, fw_remove, fw_add};
		if (SUCCEEDED(hr))
			hr = ows__win_fw_remove_all(&ops, w);
		fw_close(&com);
		if (FAILED(hr))
			rc = ows__fail_win(err, 0, (DWORD)hr, name, NULL, "cannot delete the firewall rule");
	} else if (!strcmp(what, "delete_wfp")) {
		HANDLE eng = NULL;
		DWORD e = FwpmEngineOpen0(NULL, RPC_C_AUTHN_DEFAULT, NULL, NULL, &eng);
		size_t i;
		json_t *f;
		GUID g;
		json_array_foreach(json_object_get(s, "filters"), i, f)
			if (e == ERROR_SUCCESS && parse_guid(json_string_value(f), &g))
				FwpmFilterDeleteByKey0(eng, &g);
		if (e == ERROR_SUCCESS && parse_guid(json_string_value(json_object_get(s, "sublayer")), &g))
			FwpmSubLayerDeleteByKey0(eng, &g);
		if (e == ERROR_SUCCESS && parse_guid(json_string_value(json_object_get(s, "provider")), &g))
			FwpmProviderDeleteByKey0(eng, &g);
		if (eng)
			FwpmEngineClose0(eng);
		if (e != ERROR_SUCCESS)
			rc = ows__fail_win(err, 0, e, "Fwpm", NULL, "cannot remove the loopback filters");
	} else if (!strcmp(what, "delete_file")) {
		if (!DeleteFileW(w) && GetLastError() != ERROR_FILE_NOT_FOUND)
			rc = ows__fail_win(err, 0, GetLastError(), path, NULL, "cannot delete the file");
	} else if (!strcmp(what, "remove_folder")) {
		/* setup.json is the record; it goes last, with the state folder itself. */
		char *rec = ows__asprintf(NULL, "%s\\" OWS__RECORD_FILE, path);
		wchar_t *wr = rec ? ows__wide(rec) : NULL;
		if (wr)
			DeleteFileW(wr);
		free(wr);
		free(rec);
		if (!RemoveDirectoryW(w) && GetLastError() != ERROR_FILE_NOT_FOUND)
			rc = ows__win_rmtree(path, err);
	}
	free(w);
	return rc;
}

static int machine_remove(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	(void)o;
	if (!ows__win_is_admin())
		return need_admin(err);
	json_t *rec = NULL;
	int rc = ows__record_load(c->state_dir, &rec, err);
	if (rc == 0) {
		json_t *plan = ows__win_undo_plan(rec);
		size_t i;
		json_t *s;
		json_array_foreach(plan, i, s) {
			int r = undo_step(s, err);
			if (r < 0 && rc == 0)
				rc = r;
		}
		json_decref(plan);
	}
	json_decref(rec);
	return rc;
}

/* The machine's own setup (lib/machine.c): every Windows provider's. */
const ows__machine_ops ows__machine_own = {
	.plan = machine_plan,
	.setup = machine_setup,
	.status = machine_status,
	.remove = machine_remove,
	.cleanup = ows__machine_cleanup, /* acl.c */
	.report = ows__report_json,      /* provider.c */
};
