/*
 * The operating-system calls of the portable core that differ on Linux (see
 * lib/platform.h): where the machine's files are, its providers, and the
 * random source.  The POSIX rest is lib/posix/platform_posix.c, which the
 * macOS build shares.
 */
#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

#include "platform.h"

const char *ows__plat_config_path(void) { return OWS_CONFIG_DEFAULT_PATH; }
const char *ows__plat_state_dir(void) { return "/var/lib/owsandbox"; }
const char *ows__plat_default_provider(void) { return "landlock"; }
const char *ows__plat_provider_hint(void) { return "use landlock, account, direct or openshell"; }

int ows__plat_random(void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = getrandom((char *)buf + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}
