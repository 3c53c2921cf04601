/*
 * The operating-system calls of the portable core that differ on macOS (see
 * lib/platform.h).  The POSIX rest is lib/posix/platform_posix.c, built here
 * too.
 *
 * The seatbelt provider needs no administrator: a session's state (record,
 * journal, private folders' bookkeeping) lives in the user's own
 * ~/Library/Application Support/owsandbox.  The config stays a machine file,
 * OWS_CONFIG_DEFAULT_PATH, which only an administrator can write: a setting
 * the agent's own account could change would be no wall.
 */
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform.h"

/* Under the user's home; without one (a daemon's account), under /. */
#define OWS__MAC_STATE "/Library/Application Support/owsandbox"

const char *ows__plat_config_path(void) { return OWS_CONFIG_DEFAULT_PATH; }
const char *ows__plat_default_provider(void) { return "seatbelt"; }
const char *ows__plat_provider_hint(void) { return "use seatbelt or direct"; }

/* Worked out once, from the password database (not $HOME, which the caller's environment sets). */
static char state_dir[1024];
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

static void find_state_dir(void)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_dir &&
	    res->pw_dir[0] == '/' &&
	    snprintf(state_dir, sizeof(state_dir), "%s" OWS__MAC_STATE, res->pw_dir) <
		    (int)sizeof(state_dir))
		return;
	snprintf(state_dir, sizeof(state_dir), "%s", OWS__MAC_STATE);
}

const char *ows__plat_state_dir(void)
{
	pthread_once(&state_once, find_state_dir);
	return state_dir;
}

/* arc4random_buf draws from the kernel's generator; it cannot fail. */
int ows__plat_random(void *buf, size_t n)
{
	arc4random_buf(buf, n);
	return 0;
}
