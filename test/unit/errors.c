/* The error model: every code has a name and a text; the first error wins. */
#include <string.h>

#include "internal.h"
#include "tap.h"

int main(void)
{
	for (int code = 0; code >= OWS_ENOSYS; code--) {
		ok(strcmp(ows_err_name(code), "OWS_E?") != 0, "code %d has a name (%s)", code,
		   ows_err_name(code));
		ok(strcmp(ows_strerror(code), "unknown error") != 0, "and a text");
	}
	is_str(ows_err_name(-999), "OWS_E?", "an unknown code says so");
	ows_error err;
	ows_error_clear(&err);
	is_int(ows__fail(&err, OWS_EINVAL, 0, "first", "fix it", "first %d", 1), OWS_EINVAL,
	       "fail returns its code");
	ows__fail(&err, OWS_ESYS, 5, "second", NULL, "second");
	is_str(err.where, "first", "the first error wins");
	is_str(err.what, "first 1", "formatted");
	is_str(err.hint, "fix it", "with its hint");
	ows__fail(NULL, OWS_EINVAL, 0, NULL, NULL, "no struct");
	ok(1, "a NULL error struct is fine");
	is_str(ows_version(), OWS_VERSION, "version");
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", OWS_VERSION_MAJOR, OWS_VERSION_MINOR,
		 OWS_VERSION_PATCH);
	is_str(ows_version(), want, "the version is MAJOR.MINOR.PATCH of the header's macros");
	return done_testing();
}
