/*
 * The closed account's WFP filters and its firewall rule, built apart from
 * the engine and COM calls: Wine stubs both, so the tests read what would be
 * written (the filters) and run the rule's logic against a model of the calls.
 */
#ifndef OWS_WIN_WFP_H
#define OWS_WIN_WFP_H

#include "win.h"

#include <fwpmu.h>

#include "wfp_compat.h"

typedef struct ows__wfp_filters {
	FWPM_FILTER0 f[4];
	FWPM_FILTER_CONDITION0 cond[4][3];
	FWP_RANGE0 ports;
	GUID prov;
} ows__wfp_filters;

/* Fills *w; the filters point into it and at `user` (borrowed). */
OWS__HIDDEN void ows__wfp_loopback_filters(ows__wfp_filters *w, FWP_BYTE_BLOB *user,
					   const GUID *prov, const GUID *sub, const GUID keys[4]);

/* The firewall's rules by name: INetFwRules, or a model of it in the tests. */
typedef struct ows__win_fwops {
	void *ctx;
	bool (*exists)(void *ctx, const wchar_t *name);
	HRESULT (*remove)(void *ctx, const wchar_t *name); /* one rule of that name */
	HRESULT (*add)(void *ctx, const wchar_t *name, const wchar_t *users);
} ows__win_fwops;

/* No rule of that name left. */
OWS__HIDDEN HRESULT ows__win_fw_remove_all(const ows__win_fwops *ops, const wchar_t *name);
/* Exactly one rule of that name, for `users` (SDDL), whatever was there. */
OWS__HIDDEN HRESULT ows__win_fw_ensure_one(const ows__win_fwops *ops, const wchar_t *name,
					   const wchar_t *users);

#endif /* OWS_WIN_WFP_H */
