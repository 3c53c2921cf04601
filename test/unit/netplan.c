/*
 * What each network mode keeps on each Landlock ABI (view.c): only `open`
 * before ABI 6 lacks a promise, and runs only when the config chose it,
 * partial; the refusal names the ways out.  No kernel is asked.
 */
#include <string.h>

#include "linux/wall/view.h"
#include "tap.h"

int main(void)
{
	static const ows_net nets[] = {OWS_NET_NONE, OWS_NET_ALLOWLIST, OWS_NET_OPEN};
	ows__partial out[OWS__MAX_PARTIAL];
	ows_error err;
	int n;

	for (int abi = 1; abi <= 7; abi++)
		for (size_t i = 0; i < 3; i++) {
			const char *name = ows__net_name(nets[i]);
			bool lacks = nets[i] == OWS_NET_OPEN && abi < 6;
			ows_error_clear(&err);
			int rc = ows__net_partial(nets[i], abi, false, out, &n, &err);
			is_int(rc, lacks ? OWS_EUNSUPPORTED : 0, "ABI %d, %s, refuse: %s", abi, name,
			       lacks ? "refused" : "whole");
			is_int(n, 0, "ABI %d, %s, refuse: nothing partial", abi, name);
			rc = ows__net_partial(nets[i], abi, true, out, &n, &err);
			is_int(rc, 0, "ABI %d, %s, partial chosen: runs", abi, name);
			is_int(n, lacks ? 1 : 0, "ABI %d, %s, partial chosen: %d promise(s) partial",
			       abi, name, lacks ? 1 : 0);
		}

	ows_error_clear(&err);
	ows__net_partial(OWS_NET_OPEN, 2, false, out, &n, &err);
	ok(strstr(err.what, "Landlock ABI 2 has no scopes") != NULL, "the refusal says why: %s",
	   err.what);
	ok(strstr(err.hint, "--net none or allowlist") && strstr(err.hint, "Linux 6.12") &&
	       strstr(err.hint, "open_without_scopes = partial"),
	   "and every way out: %s", err.hint);
	ows__net_partial(OWS_NET_OPEN, 2, true, out, &n, &err);
	is_str(out[0].promise, "unix_sockets.outside", "the promise is named as owsbx report does");
	ok(strstr(out[0].why, "needs ABI 6, Linux 6.12") != NULL, "with what would keep it: %s",
	   out[0].why);

	struct ows__plan plan = {0};
	ok(!ows__plan_is_partial(&plan, OWS__PROMISE_UNIX_OUTSIDE), "an empty plan keeps it");
	plan.partial[0] = out[0];
	plan.npartial = 1;
	ok(ows__plan_is_partial(&plan, OWS__PROMISE_UNIX_OUTSIDE), "a partial plan says so");
	ok(!ows__plan_is_partial(&plan, "signals.outside"), "and only for that promise");
	return done_testing();
}
