/*
 * Machine setup's network pieces, where Wine stubs the calls (its firewall COM
 * does nothing, its Fwpm* refuse or abort): the firewall rule's logic runs against
 * a recorded model of INetFwRules, and the WFP filters are read as setup would
 * hand them to FwpmFilterAdd0.  Test names say "(model ...)" where they read one.
 */
#include <stdio.h>
#include <string.h>

#include "win.h"
#include "wfp.h"
#include "wtap.h"

/* ------------------------------------------- a model of INetFwRules */

static wchar_t rules[16][128];
static int nrules, adds, removes;

static bool m_exists(void *ctx, const wchar_t *name)
{
	for (int i = 0; i < nrules; i++)
		if (!wcscmp(rules[i], name))
			return true;
	return false;
}

/* As INetFwRules::Remove: one rule of that name goes. */
static HRESULT m_remove(void *ctx, const wchar_t *name)
{
	removes++;
	for (int i = 0; i < nrules; i++)
		if (!wcscmp(rules[i], name)) {
			memmove(rules[i], rules[i + 1], sizeof(rules[0]) * (size_t)(nrules - i - 1));
			nrules--;
			return S_OK;
		}
	return S_OK;
}

/* As INetFwRules::Add: names are not unique, a second rule of a name is added beside. */
static HRESULT m_add(void *ctx, const wchar_t *name, const wchar_t *users)
{
	adds++;
	if (nrules == 16)
		return E_FAIL;
	wcsncpy(rules[nrules++], name, 127);
	return S_OK;
}

static int count(const wchar_t *name)
{
	int n = 0;
	for (int i = 0; i < nrules; i++)
		n += !wcscmp(rules[i], name);
	return n;
}

static bool is_guid(const GUID *a, const GUID *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

int main(void)
{
	wtap_init();
	const ows__win_fwops ops = {NULL, m_exists, m_remove, m_add};
	const wchar_t *name = OWS__WIN_FIREWALL_RULE, *users = L"O:LSD:(A;;CC;;;S-1-5-21-7-7-7-1002)";
	wcscpy(rules[nrules++], L"someone else's rule");

	ok(SUCCEEDED(ows__win_fw_ensure_one(&ops, name, users)) && count(name) == 1,
	   "setup makes one firewall rule (model of INetFwRules)");
	ok(SUCCEEDED(ows__win_fw_ensure_one(&ops, name, users)) && count(name) == 1,
	   "setup run again: still one rule (model of INetFwRules; %d)", count(name));
	wcscpy(rules[nrules++], name);
	wcscpy(rules[nrules++], name);
	ok(SUCCEEDED(ows__win_fw_ensure_one(&ops, name, users)) && count(name) == 1,
	   "the duplicates older setups left are replaced by one (model of INetFwRules)");
	ok(SUCCEEDED(ows__win_fw_remove_all(&ops, name)) && count(name) == 0,
	   "remove leaves no rule of that name (model of INetFwRules)");
	ok(count(L"someone else's rule") == 1 && nrules == 1,
	   "a rule of another name is never touched");

	/* The WFP filters as setup hands them to FwpmFilterAdd0. */
	BYTE sdbuf[64] = {0};
	FWP_BYTE_BLOB user = {sizeof(sdbuf), sdbuf};
	GUID prov = {1, 2, 3, {4}}, sub = {5, 6, 7, {8}}, keys[4];
	for (int i = 0; i < 4; i++)
		keys[i] = (GUID){(unsigned long)(9 + i), 0, 0, {0}};
	ows__wfp_filters w;
	ows__wfp_loopback_filters(&w, &user, &prov, &sub, keys);
	bool flag = true, no_addr = true, user_all = true;
	for (int i = 0; i < 4; i++) {
		const FWPM_FILTER0 *f = &w.f[i];
		bool has_flag = false;
		for (UINT32 k = 0; k < f->numFilterConditions; k++) {
			const FWPM_FILTER_CONDITION0 *c = &f->filterCondition[k];
			if (is_guid(&c->fieldKey, &OWS_FWPM_CONDITION_FLAGS))
				has_flag = c->matchType == FWP_MATCH_FLAGS_ALL_SET &&
					   c->conditionValue.type == FWP_UINT32 &&
					   c->conditionValue.uint32 == FWP_CONDITION_FLAG_IS_LOOPBACK;
			no_addr &= !is_guid(&c->fieldKey, &OWS_FWPM_CONDITION_IP_REMOTE_ADDRESS);
		}
		flag &= has_flag;
		user_all &= f->numFilterConditions >= 2 &&
			    is_guid(&f->filterCondition[0].fieldKey, &OWS_FWPM_CONDITION_ALE_USER_ID) &&
			    f->filterCondition[0].conditionValue.sd == &user;
	}
	ok(flag, "every loopback filter matches the connection's loopback flag "
		 "(FWP_CONDITION_FLAG_IS_LOOPBACK), so the machine's LAN address is covered");
	ok(no_addr, "no filter names 127/8 or ::1: an address list would miss the LAN address");
	ok(user_all, "every filter is the closed account's only (ALE user condition)");
	ok(is_guid(&w.f[0].layerKey, &OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V4) &&
		   is_guid(&w.f[1].layerKey, &OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V4) &&
		   is_guid(&w.f[2].layerKey, &OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V6) &&
		   is_guid(&w.f[3].layerKey, &OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V6),
	   "IPv4 and IPv6 connect layers, two filters each");
	ok(w.f[0].action.type == FWP_ACTION_PERMIT && w.f[1].action.type == FWP_ACTION_BLOCK &&
		   w.f[0].weight.uint8 > w.f[1].weight.uint8 && w.f[0].numFilterConditions == 3 &&
		   w.ports.valueLow.uint16 == OWS__PROXY_PORT_FIRST &&
		   w.ports.valueHigh.uint16 == OWS__PROXY_PORT_LAST,
	   "the proxy's ports 47800-47899 are permitted above the block of the rest");
	ok(is_guid(&w.f[3].filterKey, &keys[3]) && is_guid(w.f[3].providerKey, &prov) &&
		   is_guid(&w.f[3].subLayerKey, &sub),
	   "the filters carry the recorded keys, so remove and a re-run find them");
	return wtap_done();
}
