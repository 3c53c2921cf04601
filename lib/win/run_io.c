/*
 * The run call's platform half on Windows: not built yet.  The portable
 * half (options, the JSON form) links; the call itself says so.
 */
#include "internal.h"

int ows__run_exchange(ows_session *s, const char *const argv[], ows__run_io *io,
		      ows_error *err)
{
	(void)s;
	(void)argv;
	(void)io;
	return ows__fail(err, OWS_ENOSYS, 0, "ows_session_run",
			 "use ows_session_spawn with pipes of your own for now",
			 "the run call is not available on Windows yet");
}
