/*
 * The POSIX half of ows_session_run(): the command's stdio on pipes, one
 * poll loop that writes its stdin, reads both of its streams and watches for
 * its exit, and the per-call timeout.  Built on the public spawn API only.
 *
 * The traps a host would otherwise meet, each handled here:
 *  - the child's ends of the pipes are closed in the host once spawned, or
 *    the host itself would keep them open and never see end of file;
 *  - both streams are read while waiting, so that a command filling one pipe
 *    never blocks on it while the host waits for the other or for its exit;
 *  - stdin is written non-blocking from the same loop, so a command that
 *    never reads it cannot deadlock the call; a command that closes it gives
 *    EPIPE, never a SIGPIPE that would end the host (write_nosigpipe);
 *  - the call ends at the command's exit and a short drain, not at end of
 *    file: a daemon it left behind may hold the pipes open for ever;
 *  - the timeout kills the call (ows_proc_kill(SIGKILL): under the Linux
 *    sandboxes the command's whole tree, daemons that left its process
 *    group too) and waits for the pipes to be let go of.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* After the exit, what is already in the pipes and what a straggler writes at once. */
#define RUN_DRAIN_MS 100
/* After a kill, until every killed process has let go of the pipes. */
#define RUN_KILL_DRAIN_MS 2000
#define RUN_CHUNK 65536
/*
 * Where the command gives no exit descriptor (the direct provider where
 * pidfd_open is missing: before Linux 5.3, or under valgrind), its exit is
 * asked for this often instead.
 */
#define RUN_NO_FD_SLICE_MS 10

enum { IN, OUT, ERR };

struct run {
	ows__run_io *io;
	ows_proc *proc;
	int fd[3];            /* the host's ends: stdin's write end, stdout's and stderr's read ends */
	int exit_fd;          /* ows_proc_fd(): readable once the command has exited (borrowed);
				 -1 where the provider has none (see RUN_NO_FD_SLICE_MS) */
	const char *in;       /* what is left to write */
	size_t in_left;
	int64_t deadline;     /* monotonic ms at which the timeout kills; -1: none */
	int64_t spawned_at;
	int64_t drain_until;  /* set at the exit */
	bool exited;
	bool killed;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

#ifdef __APPLE__
/*
 * macOS has neither pipe2 nor sigtimedwait.  The pipe is made close-on-exec
 * after the fact (a fork by another thread in between could inherit it; macOS
 * offers no atomic way), and marked F_SETNOSIGPIPE once, here: a write to a
 * stdin the command closed then gives EPIPE, no signal.
 */
static int pipe_cloexec(int p[2])
{
	if (pipe(p) != 0)
		return -1;
	bool ok = true;
	for (int i = 0; i < 2 && ok; i++)
		ok = fcntl(p[i], F_SETFD, FD_CLOEXEC) == 0 && fcntl(p[i], F_SETNOSIGPIPE, 1) == 0;
	if (ok)
		return 0;
	int e = errno;
	close(p[0]);
	close(p[1]);
	errno = e;
	return -1;
}

static ssize_t write_nosigpipe(int fd, const void *buf, size_t n)
{
	return write(fd, buf, n);
}
#else
static int pipe_cloexec(int p[2])
{
	return pipe2(p, O_CLOEXEC);
}

/*
 * Writes to the command's stdin without a SIGPIPE ending the host when the
 * command has closed it: the signal is blocked in this thread for the write,
 * and the one the write raised is taken back before the mask is restored.
 * The process's signal dispositions stay the host's; a SIGPIPE that was
 * already pending is left alone.
 */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t n)
{
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigemptyset(&pending);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE) == 1;
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t w = write(fd, buf, n);
	int e = errno;
	if (w < 0 && e == EPIPE && !was_pending) {
		static const struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}
#endif

/*
 * The pipes: host[] gets the host's ends (non-blocking), child[] the ends the
 * command gets (closed by the caller once spawned).  Both close on exec, so
 * that no other program the host starts meanwhile inherits them.  Without
 * input stdin is /dev/null.
 */
static int make_pipes(bool with_input, int host[3], int child[3], ows_error *err)
{
	for (int i = 0; i < 3; i++)
		host[i] = child[i] = -1;
	child[IN] = OWS_STDIO_NULL;
	for (int i = with_input ? IN : OUT; i <= ERR; i++) {
		int p[2];
		if (pipe_cloexec(p) != 0)
			return ows__fail_sys(err, "pipe", "raise the host's open-file limit",
					     "cannot make a pipe for the command");
		/* p[0] reads, p[1] writes: stdin is written by the host, the others read. */
		host[i] = i == IN ? p[1] : p[0];
		child[i] = i == IN ? p[0] : p[1];
		if (set_nonblock(host[i]) != 0)
			return ows__fail_sys(err, "fcntl", NULL, "cannot make a pipe non-blocking");
	}
	return 0;
}

static void feed_stdin(struct run *r)
{
	while (r->in_left > 0) {
		size_t n = r->in_left < RUN_CHUNK ? r->in_left : RUN_CHUNK;
		ssize_t w = write_nosigpipe(r->fd[IN], r->in, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0)
			break; /* EPIPE: the command does not read the rest; it is not an error */
		r->in += w;
		r->in_left -= (size_t)w;
	}
	close_fd(&r->fd[IN]); /* all written, or not wanted: the command sees end of file */
}

/*
 * One read of a stream into its sink; the pipe is closed at end of file or on
 * an error.  Whether anything was read.
 */
static bool drain_once(struct run *r, int which, char *buf)
{
	ssize_t n;
	do
		n = read(r->fd[which], buf, RUN_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		ows__sink_put(&r->io->sink[which - 1], buf, (size_t)n);
	else if (n == 0 || errno != EAGAIN)
		close_fd(&r->fd[which]);
	return n > 0;
}

/*
 * At the end of the drain, what is still in the pipes: all the command wrote
 * before it exited is read, however slow the host's callback was meanwhile.
 * Bounded by a pipe's largest size, so a daemon that keeps writing cannot
 * hold the call.
 */
#define RUN_SWEEP_CHUNKS 16
static void final_sweep(struct run *r, char *buf)
{
	for (int which = OUT; which <= ERR; which++)
		for (int i = 0; i < RUN_SWEEP_CHUNKS && r->fd[which] >= 0; i++)
			if (!drain_once(r, which, buf))
				break;
}

/* Whether the command has exited (without waiting); negative when the session is gone. */
static int check_exit(struct run *r, ows_error *err)
{
	int code;
	int rc = ows_proc_wait(r->proc, 0, &code, err);
	if (rc == 1) {
		int64_t now = mono_ms();
		r->exited = true;
		r->io->exit_code = code;
		r->io->wall_ms = now - r->spawned_at;
		r->drain_until = now + (r->killed ? RUN_KILL_DRAIN_MS : RUN_DRAIN_MS);
		close_fd(&r->fd[IN]);
	}
	return rc;
}

static int kill_command(struct run *r, ows_error *err)
{
	r->killed = true;
	return ows_proc_kill(r->proc, SIGKILL, err);
}

/* How long the next poll may sleep: until the timeout or the end of the drain. */
static int poll_timeout(const struct run *r, int64_t now)
{
	int64_t until = -1;
	if (r->exited)
		until = r->drain_until;
	else if (r->deadline >= 0 && !r->killed)
		until = r->deadline;
	int t = until < 0 ? -1 : until <= now ? 0 : until - now > 60000 ? 60000 : (int)(until - now);
	if (!r->exited && r->exit_fd < 0 && (t < 0 || t > RUN_NO_FD_SLICE_MS))
		t = RUN_NO_FD_SLICE_MS;
	return t;
}

/* One round: sleep in poll until something is ready, then serve it.  1 when the run is over. */
static int run_round(struct run *r, char *buf, ows_error *err)
{
	int64_t now = mono_ms();
	if (r->exited && r->fd[OUT] < 0 && r->fd[ERR] < 0)
		return 1;
	if (r->exited && now >= r->drain_until) {
		final_sweep(r, buf);
		return 1;
	}
	if (!r->exited && !r->killed && r->deadline >= 0 && now >= r->deadline) {
		r->io->timed_out = true;
		int rc = kill_command(r, err);
		if (rc < 0)
			return rc;
	}
	struct pollfd pfd[4];
	int slot[4], n = 0;
	int efd = r->exited ? -1 : r->exit_fd;
	for (int i = IN; i <= ERR; i++)
		if (r->fd[i] >= 0) {
			pfd[n] = (struct pollfd){.fd = r->fd[i], .events = i == IN ? POLLOUT : POLLIN};
			slot[n++] = i;
		}
	if (efd >= 0) {
		pfd[n] = (struct pollfd){.fd = efd, .events = POLLIN};
		slot[n++] = -1;
	}
	int ready = poll(pfd, (nfds_t)n, poll_timeout(r, now));
	if (ready < 0 && errno != EINTR)
		return ows__fail_sys(err, "poll", NULL, "cannot wait for the command's output");
	for (int i = 0; ready > 0 && i < n; i++) {
		if (!pfd[i].revents || slot[i] < 0)
			continue;
		if (slot[i] == IN)
			feed_stdin(r);
		else
			drain_once(r, slot[i], buf);
	}
	/* Out of memory for the output: the command is ended rather than left unread. */
	if (!r->killed && (r->io->sink[0].failed || r->io->sink[1].failed)) {
		int rc = kill_command(r, err);
		if (rc < 0)
			return rc;
	}
	/* Asked when the exit descriptor spoke (that answer does not block), or each slice. */
	bool ask = !r->exited && r->exit_fd < 0;
	for (int i = 0; !r->exited && ready > 0 && i < n; i++)
		ask = ask || (slot[i] < 0 && pfd[i].revents);
	if (!ask)
		return 0;
	int rc = check_exit(r, err);
	return rc < 0 ? rc : 0;
}

/* The session's own time limit, when it comes before the call's. */
static int64_t call_deadline(const ows_session *s, int timeout_ms, int64_t now)
{
	int64_t d = timeout_ms > 0 ? now + timeout_ms : -1;
	if (s->has_wall_limit) {
		int64_t left = s->deadline_ms - ows__now_ms();
		int64_t sd = now + (left > 0 ? left : 0);
		if (d < 0 || sd < d)
			d = sd;
	}
	return d;
}

static int spawn_on_pipes(ows_session *s, const char *const argv[], struct run *r,
			  ows_error *err)
{
	const ows_run_options *o = r->io->opts;
	int child[3];
	int rc = make_pipes(o->input != NULL, r->fd, child, err);
	if (rc == 0) {
		ows_spawn_options so;
		ows_spawn_options_init(&so);
		so.cwd = o->cwd;
		so.env = o->env;
		memcpy(so.stdio, child, sizeof(so.stdio));
		r->spawned_at = mono_ms();
		rc = ows_session_spawn(s, argv, &so, &r->proc, err);
	}
	if (rc == 0)
		r->exit_fd = ows_proc_fd(r->proc);
	/* The command has its own copies: the host's would hold the pipes open. */
	for (int i = 0; i < 3; i++)
		if (child[i] >= 0)
			close(child[i]);
	return rc;
}

int ows__run_exchange(ows_session *s, const char *const argv[], ows__run_io *io,
		      ows_error *err)
{
	struct run r = {.io = io, .fd = {-1, -1, -1}, .exit_fd = -1, .deadline = -1};
	r.in = io->opts->input;
	r.in_left = io->opts->input ? io->opts->input_len : 0;
	char *buf = ows__calloc(1, RUN_CHUNK, err);
	int rc = buf ? spawn_on_pipes(s, argv, &r, err) : OWS_ENOMEM;
	io->proc = r.proc;
	if (rc == 0) {
		r.deadline = call_deadline(s, io->opts->timeout_ms, r.spawned_at);
		if (r.fd[IN] >= 0 && r.in_left == 0)
			close_fd(&r.fd[IN]); /* empty input: end of file at once */
		while ((rc = run_round(&r, buf, err)) == 0)
			;
		if (rc == 1)
			rc = 0;
	}
	if (rc < 0 && r.proc && !r.exited) {
		/* Whatever failed, the call leaves no command of its own running. */
		ows_proc_kill(r.proc, SIGKILL, NULL);
		ows_proc_wait(r.proc, -1, NULL, NULL);
	}
	for (int i = 0; i < 3; i++)
		close_fd(&r.fd[i]);
	free(buf);
	return rc;
}
