/*
 * Init's start: ows__init_main, from clone to the server, in order: the host's signal
 * dispositions and descriptors left behind, the ids and limits, the root (root.c), the
 * shared copies and the proxy's listener, then restrict, prove, serve.  Runs between
 * clone and exec in a copy of a host that may have had threads: no allocation, no locks.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"

/* Where the argument and environment strings are: fields 48-51 of /proc/self/stat. */
static struct {
	unsigned long arg_start, arg_end, env_start, env_end;
} areas;

static void find_areas(void)
{
	static char buf[2048];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *at = strrchr(buf, ')'); /* the name before it may hold anything */
	unsigned long v[4] = {0};
	for (int field = 2; at && *at && field < 51;) {
		if (*at++ != ' ')
			continue;
		if (++field < 48)
			continue;
		unsigned long x = 0;
		while (*at >= '0' && *at <= '9')
			x = x * 10 + (unsigned long)(*at++ - '0');
		v[field - 48] = x;
	}
	if (v[0] < v[1] && v[2] < v[3]) {
		areas.arg_start = v[0];
		areas.arg_end = v[1];
		areas.env_start = v[2];
		areas.env_end = v[3];
	}
}

/*
 * /proc/PID/cmdline and environ show the strings of init's argument and
 * environment area to every process inside, and so does each reaper, a fork
 * of init.  Under landlock that area is the host's (`owsbx run --env
 * X=TOKEN`, a server's own arguments): once nothing of the plan is read from
 * it (the proof is done), it becomes init's name and zeros.
 */
static void hide_host_args(void)
{
	static const char name[] = "owsbx-init";
	if (!areas.arg_end)
		return;
	size_t n = areas.arg_end - areas.arg_start;
	memset((void *)areas.arg_start, 0, n);
	memcpy((void *)areas.arg_start, name, n > sizeof(name) ? sizeof(name) : n - 1);
	memset((void *)areas.env_start, 0, areas.env_end - areas.env_start);
}

void ows__init_main(struct ows__plan *p)
{
	/* Dispositions the host ignored (SIGPIPE, often) would survive exec. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	/* Keep only the control socket; the host's other descriptors stay outside. */
	if (p->ctl != 3) {
		if (dup3(p->ctl, 3, O_CLOEXEC) < 0)
			_exit(127);
		p->ctl = 3;
	}
	syscall(SYS_close_range, 4, ~0U, 0);
	p->init_pid = (pid_t)syscall(SYS_getpid);
	ows__init_spare_reapers(); /* while the host's /proc is in view */
	if (p->host_args)
		find_areas();
	ows__root_ids_and_limits(p); /* while /proc/self is still init's own to write (dumpable) */
	/* Init holds a copy of the host's memory: no command may read or trace it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		ows__init_die(p, "set non-dumpable", NULL);
	ows__root_build(p);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; null >= 0 && i < 3; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
	ows__init_open_channels(p);
	ows__init_drop_identity(p);
	ows__init_restrict(p);
	ows__init_prove(p);
	if (p->host_args)
		hide_host_args();
	ows__init_serve(p);
}
