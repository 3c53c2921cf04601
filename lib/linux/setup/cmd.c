/*
 * Runs the system's own tools (useradd, groupadd, gpasswd, nft) for machine
 * setup: absolute paths, an argv and no shell, a fixed environment, no
 * inherited descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

typedef struct grow {
	char *p;
	size_t len, cap;
} grow;

static int grow_read(grow *g, int fd)
{
	if (g->len + 4097 > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8192;
		char *np = realloc(g->p, cap);
		if (!np)
			return -1;
		g->p = np;
		g->cap = cap;
	}
	ssize_t n = read(fd, g->p + g->len, 4096);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	g->len += (size_t)n;
	g->p[g->len] = '\0';
	return n > 0;
}

int ows__cmd_run(const char *const argv[], const char *input, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
	if (pipe2(in_p, O_CLOEXEC) < 0 || pipe2(out_p, O_CLOEXEC) < 0 ||
	    pipe2(err_p, O_CLOEXEC) < 0) {
		int rc = ows__fail_sys(err, "pipe2", NULL, "cannot run %s", argv[0]);
		for (int i = 0; i < 2; i++) {
			if (in_p[i] >= 0) close(in_p[i]);
			if (out_p[i] >= 0) close(out_p[i]);
			if (err_p[i] >= 0) close(err_p[i]);
		}
		return rc;
	}
	pid_t pid = fork();
	if (pid == 0) {
		static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(in_p[0], 0) < 0 || dup2(out_p[1], 1) < 0 || dup2(err_p[1], 2) < 0)
			_exit(127);
		syscall(__NR_close_range, 3U, ~0U, 0U);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	close(in_p[0]);
	close(out_p[1]);
	close(err_p[1]);
	if (pid < 0) {
		close(in_p[1]);
		close(out_p[0]);
		close(err_p[0]);
		return ows__fail_sys(err, "fork", NULL, "cannot run %s", argv[0]);
	}
	grow o = {0}, e = {0};
	size_t in_len = input ? strlen(input) : 0, in_off = 0;
	int in_fd = in_p[1];
	if (in_len == 0) {
		close(in_fd);
		in_fd = -1;
	}
	int out_fd = out_p[0], err_fd = err_p[0];
	/* A tool that exits without reading its input must not kill the host with SIGPIPE. */
	sigset_t pipe_set, old_mask;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigset_t pending;
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	while (in_fd >= 0 || out_fd >= 0 || err_fd >= 0) {
		struct pollfd pf[3] = {{in_fd, POLLOUT, 0}, {out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
		if (poll(pf, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (in_fd >= 0 && pf[0].revents) {
			ssize_t w = write(in_fd, input + in_off, in_len - in_off);
			if (w > 0)
				in_off += (size_t)w;
			if (w < 0 && errno != EINTR && errno != EAGAIN)
				in_off = in_len;
			if (in_off >= in_len) {
				close(in_fd);
				in_fd = -1;
			}
		}
		if (out_fd >= 0 && pf[1].revents && grow_read(&o, out_fd) <= 0) {
			close(out_fd);
			out_fd = -1;
		}
		if (err_fd >= 0 && pf[2].revents && grow_read(&e, err_fd) <= 0) {
			close(err_fd);
			err_fd = -1;
		}
	}
	sigpending(&pending);
	if (!was_pending && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int rc = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char cmdline[400] = "";
		for (size_t i = 0; argv[i]; i++) {
			size_t n = strlen(cmdline);
			snprintf(cmdline + n, sizeof(cmdline) - n, "%s%s", i ? " " : "", argv[i]);
		}
		char *msg = e.p ? e.p : o.p ? o.p : "";
		size_t ml = strlen(msg);
		while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' '))
			msg[--ml] = '\0';
		rc = ows__fail(err, OWS_ESYS, 0, cmdline, NULL, "%s failed (%s %d): %.150s",
			       argv[0], WIFEXITED(st) ? "exit" : "signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), msg);
	}
	if (rc == 0 && out) {
		*out = o.p ? o.p : strdup("");
		o.p = NULL;
		if (!*out)
			rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	free(o.p);
	free(e.p);
	return rc;
}
