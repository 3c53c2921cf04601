/* owsbx's per-OS pieces on Linux and macOS (cli/os.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "os.h"

int main(int argc, char **argv)
{
	return owsbx_main(argc, argv);
}

void owsbx_os_catch_signals(void (*handler)(int))
{
	struct sigaction sa = {.sa_handler = handler};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void owsbx_os_ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

char *owsbx_os_getcwd(void)
{
	return getcwd(NULL, 0);
}

bool owsbx_os_stderr_is_tty(void)
{
	return isatty(STDERR_FILENO) == 1;
}

bool owsbx_os_is_admin(void)
{
	return geteuid() == 0;
}

void owsbx_os_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* /proc/self/exe is Linux's; on macOS there is none, and so no launcher found beside owsbx. */
char *owsbx_os_beside_self(const char *name)
{
	char self[4096];
	size_t room = strlen(name) + 1;
	if (room >= sizeof(self))
		return NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - room);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	strcpy(slash + 1, name);
	return access(self, R_OK) == 0 ? strdup(self) : NULL;
}

void owsbx_os_sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL); /* a signal ends it early: the caller looks at what came */
}
