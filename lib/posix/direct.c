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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef __APPLE__
#include <sys/syscall.h>
#endif

#include "platform.h"
#include "posix.h"

#ifdef __APPLE__
/* /tmp is a link there, and the private folder's root is opened without following one. */
#define DIRECT_TMP "/private/tmp"
#else
#define DIRECT_TMP "/tmp"
#endif


static int direct_open(ows_session *s, const ows_policy *policy, const ows_config *config,
		       ows_error *err)
{
	int rc;
	ows__private *pv = ows__calloc(1, sizeof(*pv), err);
	if (!pv)
		return OWS_ENOMEM;
	const char *base = config->private_root ? config->private_root : DIRECT_TMP;
	if ((rc = ows__private_create(pv, base, s->id, geteuid(), getegid(), err)) < 0) {
		free(pv);
		return rc;
	}
	struct passwd pwbuf, *pw = NULL;
	char pwstr[4096];
	if (getpwuid_r(geteuid(), &pwbuf, pwstr, sizeof(pwstr), &pw) != 0)
		pw = NULL; /* reentrant: other threads of the host open sessions too */
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

/*
 * posix_spawnp would look in the host's PATH, and setting the session's in
 * the host's environment races with every other thread: the session's PATH
 * (from envp) is searched here instead.  An errno.
 */
static int spawn_in_path(pid_t *pid, const char *file, char *const envp[],
			 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
			 char *const argv[])
{
	if (strchr(file, '/'))
		return posix_spawn(pid, file, fa, attr, argv, envp);
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	int best = ENOENT;
	for (const char *d = path;;) {
		size_t n = strcspn(d, ":");
		char buf[4096];
		if (n + strlen(file) + 2 <= sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1), n ? d : ".", file);
			if (access(buf, X_OK) == 0)
				return posix_spawn(pid, buf, fa, attr, argv, envp);
			if (errno == EACCES)
				best = EACCES;
		}
		if (!d[n])
			break;
		d += n + 1;
	}
	return best;
}

#ifndef __APPLE__
/* A pidfd; macOS's exit descriptor (a kqueue) is in lib/darwin/sandbox.c. */
int ows__exit_fd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}
#endif

int ows__direct_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
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
	short flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK;
#ifdef POSIX_SPAWN_CLOEXEC_DEFAULT
	/* macOS: the three descriptors above and nothing else of the host reach the
	 * command (a descriptor is a way past Seatbelt's path rules). */
	flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
	posix_spawnattr_setflags(&attr, flags);
	pid_t pid;
	int r = spawn_in_path(&pid, argv[0], envp, &fa, &attr, (char *const *)argv);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (null >= 0)
		close(null);
	if (r != 0)
		return ows__fail(err, OWS_ESPAWN, r, argv[0], "check the command's name",
				 "the command could not start: %s", strerror(r));
	/* Under the lock: a close on another thread reads it in ows__direct_stop(). */
	ows__plat_global_lock();
	proc->pid = pid;
	ows__plat_global_unlock();
	/* Readable once it has exited: its wait, and the host's ows_proc_fd(). */
	proc->exit_fd = ows__exit_fd_open(pid);
	return 0;
}

int ows__direct_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err)
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
	if (WIFSIGNALED(st))
		ows__proc_set_killed(proc, WTERMSIG(st));
	else
		ows__proc_set_exit(proc, WEXITSTATUS(st));
	return 1;
}

int ows__direct_kill(ows_session *s, ows_proc *proc, int signo, ows_error *err)
{
	if (kill(-proc->pid, signo) != 0 && kill(proc->pid, signo) != 0 && errno != ESRCH)
		return ows__fail_sys(err, "kill", NULL, "cannot signal the command");
	return 0;
}

/* No wall means no containment: end the process groups this session started. */
void ows__direct_stop(ows_session *s)
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
			ows__direct_wait(s, p, -1, NULL);
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
	.spawn = ows__direct_spawn,
	.wait = ows__direct_wait,
	.kill = ows__direct_kill,
	.stop = ows__direct_stop,
	.close = direct_close,
};
