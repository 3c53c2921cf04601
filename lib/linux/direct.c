/*
 * The `direct` provider: no wall.  Commands run as the host runs them, with
 * the same minimal environment, and every event says "enforcement": "none".
 * It exists only when asked for by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux.h"
#include "platform.h"


static int direct_open(ows_session *s, const ows_policy *policy, const ows_config *config,
		       ows_error *err)
{
	int rc;
	ows__private *pv = ows__calloc(1, sizeof(*pv), err);
	if (!pv)
		return OWS_ENOMEM;
	const char *base = config->private_root ? config->private_root : "/tmp";
	if ((rc = ows__private_create(pv, base, s->id, geteuid(), getegid(), err)) < 0) {
		free(pv);
		return rc;
	}
	struct passwd *pw = getpwuid(geteuid());
	ows__strv paths = {0};
	rc = ows__session_layout(s, policy, pv->dir, '/', pw ? pw->pw_name : NULL, "direct", &paths,
				 err);
	ows__strv_free(&paths);
	if (rc == 0 && !(s->private_dir = ows__strdup(pv->dir, err)))
		rc = OWS_ENOMEM;
	ows__check none = {.name = "wall", .detail = "direct: no wall; asked for by name", .passed = 1};
	if (rc == 0 && !(s->proof_json = ows__proof_json("direct", ows__net_name(s->net), &none, 1, NULL)))
		rc = OWS_ENOMEM;
	if (rc < 0) {
		ows__private_remove(pv, NULL);
		free(pv);
		return rc;
	}
	s->enforcement = "none";
	s->impl = pv;
	return 0;
}

static int direct_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
			char *const envp[], const char *cwd, const int stdio[3], ows_error *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int null = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	for (int i = 0; i < 3; i++) {
		int fd = stdio[i];
		if (fd == OWS_STDIO_NULL) {
			if (null < 0)
				null = open("/dev/null", O_RDWR | O_CLOEXEC);
			fd = null;
		}
		posix_spawn_file_actions_adddup2(&fa, fd, i);
	}
	posix_spawn_file_actions_addchdir_np(&fa, cwd);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
	/* posix_spawnp looks in the host's PATH; the session's is in envp. */
	const char *path = NULL;
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	if (path)
		setenv("PATH", path, 1);
	pid_t pid;
	int r = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv, envp);
	if (path) {
		if (saved)
			setenv("PATH", saved, 1);
		else
			unsetenv("PATH");
	}
	free(saved);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (null >= 0)
		close(null);
	if (r != 0)
		return ows__fail(err, OWS_ESPAWN, r, argv[0], "check the command's name",
				 "the command could not start: %s", strerror(r));
	proc->pid = pid;
	/* Readable once it has exited: its wait, and the host's ows_proc_fd(). */
	proc->exit_fd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

static int direct_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err)
{
	if (ows__proc_get_exit(proc, NULL))
		return 1;
	if (proc->exit_fd >= 0) {
		struct pollfd pfd = {.fd = proc->exit_fd, .events = POLLIN};
		int r;
		do
			r = poll(&pfd, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		if (r == 0)
			return 0;
	}
	int st;
	pid_t r;
	do
		r = waitpid(proc->pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return ows__fail_sys(err, "waitpid", NULL, "cannot wait for the command");
	ows__proc_set_exit(proc, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 1;
}

static int direct_kill(ows_session *s, ows_proc *proc, int signo, ows_error *err)
{
	if (kill(-proc->pid, signo) != 0 && kill(proc->pid, signo) != 0 && errno != ESRCH)
		return ows__fail_sys(err, "kill", NULL, "cannot signal the command");
	return 0;
}

/* No wall means no containment: end the process groups this session started. */
static void direct_stop(ows_session *s)
{
	/* Spawns in flight add to the list meanwhile; close ends what they start. */
	ows__plat_global_lock();
	for (ows_proc *p = s->procs; p; p = p->next)
		if (!p->exited && p->pid > 0)
			kill(-p->pid, SIGKILL);
	ows__plat_global_unlock();
}

static int direct_close(ows_session *s, ows_error *err)
{
	for (ows_proc *p = s->procs; p; p = p->next)
		if (!ows__proc_get_exit(p, NULL) && p->pid > 0) {
			kill(-p->pid, SIGKILL);
			direct_wait(s, p, -1, NULL);
		}
	ows__private *pv = s->impl;
	int rc = ows__private_remove(pv, err);
	free(pv);
	s->impl = NULL;
	return rc;
}

const ows__provider ows__direct_provider = {
	.name = "direct",
	.open = direct_open,
	.spawn = direct_spawn,
	.wait = direct_wait,
	.kill = direct_kill,
	.stop = direct_stop,
	.close = direct_close,
};
