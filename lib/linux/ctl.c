/*
 * The host's side of a session's init: the proof, spawn, wait, kill and
 * close, over the control socket.  Shared by the Linux providers.  Host
 * side only: nothing here runs inside the sandbox or in the launcher.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/wall/init.h"
#include "proxy/proxy.h"
#include "record.h"

/* Receives one message and at most one descriptor with it (*fd, else -1). */
static int recv_msg_fd(int sock, void *buf, size_t size, int timeout_ms, int *fd, ows_error *err)
{
	*fd = -1;
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	for (;;) {
		int r = poll(&pfd, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ows__fail_sys(err, "poll", NULL, "cannot wait for the sandbox");
		if (r == 0)
			return 0;
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {.iov_base = buf, .iov_len = size};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ows__fail_sys(err, "recvmsg", NULL, "lost the sandbox's control socket");
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
		if (n == 0)
			return OWS_ESTATE;
		return (int)n;
	}
}

/* A message that carries no descriptor: any that came with it is closed. */
static int recv_msg(int sock, void *buf, size_t size, int timeout_ms, ows_error *err)
{
	int fd;
	int n = recv_msg_fd(sock, buf, size, timeout_ms, &fd, err);
	if (fd >= 0)
		close(fd);
	return n;
}

static int receive_proof_into(ows_session *s, ows__ctl *c, const char *provider,
			      struct ows__proof_msg *pm, ows_error *err)
{
	int fd, n;
	/* An allowlist sandbox hands over its proxy listener before the proof. */
	while ((n = recv_msg_fd(c->fd, pm, sizeof(*pm), 30000, &fd, err)) ==
		       (int)sizeof(struct ows__msg) &&
	       pm->hdr.type == OWS_MSG_LISTENER && fd >= 0 && c->listener < 0)
		c->listener = fd;
	if (fd >= 0 && fd != c->listener)
		close(fd);
	if (n == 0)
		return ows__fail(err, OWS_ETIMEDOUT, 0, "sandbox init", "try again; report it if it persists",
				 "the sandbox did not finish setting up in 30 s");
	if (n == OWS_ESTATE)
		return ows__fail(err, OWS_ESYS, 0, "sandbox init", NULL,
				 "the sandbox ended while setting up");
	if (n < 0)
		return n;
	if (pm->hdr.type == OWS_MSG_FAIL) {
		pm->hdr.text[sizeof(pm->hdr.text) - 1] = '\0';
		return ows__fail(err, OWS_EUNSUPPORTED, pm->hdr.err, pm->hdr.text,
				 "run `owsbx report` to see what this machine can enforce",
				 "the wall could not be built: %s failed: %s", pm->hdr.text,
				 strerror(pm->hdr.err));
	}
	if (pm->hdr.type != OWS_MSG_PROOF || pm->n > OWS_INIT_MAX_CHECKS ||
	    (size_t)n != offsetof(struct ows__proof_msg, checks) + pm->n * sizeof(ows__check))
		return ows__fail(err, OWS_ESYS, EPROTO, "sandbox init", NULL,
				 "the sandbox sent a malformed proof");
	for (uint32_t i = 0; i < pm->n; i++) {
		pm->checks[i].name[sizeof(pm->checks[i].name) - 1] = '\0';
		pm->checks[i].detail[sizeof(pm->checks[i].detail) - 1] = '\0';
	}
	bool passed = false;
	s->proof_json = ows__proof_json(provider, ows__net_name(s->net), pm->checks, pm->n, &passed);
	if (!s->proof_json)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (!passed) {
		for (uint32_t i = 0; i < pm->n; i++)
			if (!pm->checks[i].passed)
				return ows__fail(err, OWS_EVERIFY, 0, pm->checks[i].name,
						 "the session was refused; run `owsbx verify` for the "
						 "whole proof",
						 "the wall failed its proof: %s", pm->checks[i].detail);
	}
	return 0;
}

int ows__ctl_receive_proof(ows_session *s, ows__ctl *c, const char *provider, ows_error *err)
{
	struct ows__proof_msg *pm = ows__calloc(1, sizeof(*pm), err);
	if (!pm)
		return OWS_ENOMEM;
	int rc = receive_proof_into(s, c, provider, pm, err);
	free(pm);
	return rc;
}

int ows__ctl_adopt_listener(ows_session *s, ows__ctl *c, ows_error *err)
{
	if (!s->proxy)
		return 0;
	if (c->listener < 0)
		return ows__fail(err, OWS_ESYS, EPROTO, "sandbox init", NULL,
				 "the sandbox did not hand over its proxy listener");
	/* The proof reached the proxy through this socket; now the proxy serves it. */
	int rc = ows__pxc_adopt(s->proxy, c->listener, 0, 0, err);
	c->listener = -1;
	return rc;
}

/* A call's own proxy listener, handed over with STARTED: the proxy serves it for that call. */
static void adopt_call_listener(ows_session *s, const struct ows__msg *m, int fd)
{
	if (fd < 0)
		return;
	if (m->type != OWS_MSG_STARTED || !m->code || !s->proxy) {
		close(fd);
		return;
	}
	/* On failure the call still runs; its proxy port just answers nothing. */
	ows__pxc_adopt(s->proxy, fd, m->id, m->code, NULL);
}

/*
 * Sets the exit of `p` from its status channel, once init has sent it there
 * or gone: the EXITED message, else (end of file, nothing yet from an init
 * that ended) the sandbox killed it.  Called when the channel is readable,
 * or once init is gone; never by two threads for one proc.
 */
static void collect_exit(ows_proc *p)
{
	if (ows__proc_get_exit(p, NULL))
		return;
	struct ows__msg m;
	ssize_t n = -1;
	if (p->exit_fd >= 0) {
		do
			n = recv(p->exit_fd, &m, sizeof(m), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
	}
	bool told = n == (ssize_t)sizeof(m) && m.type == OWS_MSG_EXITED;
	if (!told)
		ows__proc_set_killed(p, SIGKILL);
	else if (m.err > 0)
		ows__proc_set_killed(p, m.err);
	else
		ows__proc_set_exit(p, m.code);
	if (told) /* under `none`: its internet sockets, refused (channels.c) */
		p->offline_calls = m.offline_calls;
	/* ows_proc_fd stays readable from now on, whether or not the sender (the call's
	 * reaper) has closed its end yet: it sends the exit, then closes. */
	if (p->exit_fd >= 0)
		shutdown(p->exit_fd, SHUT_RD);
}

/* Sets every handle's exit: the sandbox is gone.  No call is in flight (close). */
static void sandbox_gone(ows_session *s, ows__ctl *c)
{
	c->gone = true;
	for (ows_proc *p = s->procs; p; p = p->next)
		collect_exit(p);
}

/* Reads one message of the setup, waiting up to timeout_ms; 1 when one came into *m. */
static int pump(ows__ctl *c, struct ows__msg *m, int timeout_ms, ows_error *err)
{
	if (c->gone)
		return OWS_ESTATE;
	int n = recv_msg(c->fd, m, sizeof(*m), timeout_ms, err);
	if (n == OWS_ESTATE) {
		c->gone = true;
		return OWS_ESTATE;
	}
	if (n <= 0)
		return n;
	return n == (int)sizeof(*m) ? 1 : 0;
}

/* Waits until fd is readable: 1, 0 when timeout_ms (< 0: none) passed first, or -1. */
static int poll_in(int fd, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : ows__now_ms() + timeout_ms;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	for (;;) {
		int left = -1;
		if (deadline >= 0) {
			int64_t l = deadline - ows__now_ms();
			left = l < 0 ? 0 : l > 0x7fffffff ? 0x7fffffff : (int)l;
		}
		int r = poll(&pfd, 1, left);
		if (r >= 0 || errno != EINTR)
			return r < 0 ? -1 : r > 0;
	}
}

/* The command's arguments, environment and cwd, in a sealed memfd for init to map. */
static int request_memfd(const char *const argv[], char *const envp[], const char *cwd,
			 ows_error *err)
{
	uint32_t counts[2] = {0, 0};
	int memfd = memfd_create("owsandbox-spawn", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return ows__fail_sys(err, "memfd_create", NULL, "cannot pass the command");
	while (argv[counts[0]])
		counts[0]++;
	while (envp[counts[1]])
		counts[1]++;
	FILE *f = fdopen(dup(memfd), "w");
	if (!f) {
		close(memfd);
		return ows__fail_sys(err, "fdopen", NULL, "cannot pass the command");
	}
	fwrite(counts, sizeof(counts), 1, f);
	for (uint32_t i = 0; i < counts[0]; i++)
		fwrite(argv[i], strlen(argv[i]) + 1, 1, f);
	for (uint32_t i = 0; i < counts[1]; i++)
		fwrite(envp[i], strlen(envp[i]) + 1, 1, f);
	fwrite(cwd, strlen(cwd) + 1, 1, f);
	if (fclose(f) != 0) {
		close(memfd);
		return ows__fail_sys(err, "memfd", NULL, "cannot pass the command");
	}
	fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	return memfd;
}

/*
 * init's reply on the command's own channel: 0 when it started.  A STARTED
 * may bring the call's own proxy listener, which the proxy serves from now.
 */
static int spawn_reply(ows_session *s, ows_proc *proc, int chan, const char *const argv[],
		       const char *cwd, ows_error *err)
{
	struct ows__msg r;
	int fd = -1;
	int n = recv_msg_fd(chan, &r, sizeof(r), -1, &fd, NULL);
	if (n != (int)sizeof(r) || (r.type != OWS_MSG_STARTED && r.type != OWS_MSG_SPAWN_FAIL)) {
		if (fd >= 0)
			close(fd);
		return ows__fail(err, OWS_ESTATE, 0, NULL, "open a new session",
				 "the sandbox ended before the command started");
	}
	adopt_call_listener(s, &r, fd);
	if (r.type == OWS_MSG_STARTED)
		return 0;
	r.text[sizeof(r.text) - 1] = '\0';
	if (strcmp(r.text, "proxy port") == 0)
		proc->proxy_port_err = r.err ? r.err : EINVAL;
	const char *hint = r.err == ENOENT && strcmp(r.text, "exec") == 0
		? "check the command's name; only the system and the session's "
		  "folders are visible inside"
		: strcmp(r.text, "cwd") == 0
		? "use a working folder inside a session folder"
		: NULL;
	return ows__fail(err, OWS_ESPAWN, r.err, strcmp(r.text, "cwd") == 0 ? cwd : argv[0], hint,
			 "the command could not start (%s): %s", r.text, strerror(r.err));
}

/*
 * Each command has a status channel of its own (init.h): a socket pair whose
 * other end goes to init with the request.  The reply and the exit come back
 * there, so that spawns and waits on other threads never read each other's
 * messages, and the host's end is the command's ows_proc_fd().
 */
int ows__ctl_spawn(ows_session *s, ows__ctl *c, ows_proc *proc, const char *const argv[],
		   char *const envp[], const char *cwd, const int stdio[3], ows_error *err)
{
	int null = -1, chan[2] = {-1, -1}, rc;

	if (c->gone)
		return ows__fail(err, OWS_ESTATE, 0, NULL, "open a new session",
				 "the sandbox has ended");
	if ((rc = ows__guard_fifos(c->guard, err)) < 0)
		return rc;
	int memfd = request_memfd(argv, envp, cwd, err);
	if (memfd < 0)
		return memfd;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) != 0) {
		rc = ows__fail_sys(err, "socketpair", NULL, "cannot make the command's status channel");
		goto out;
	}
	int fds[5] = {memfd, stdio[0], stdio[1], stdio[2], chan[1]};
	for (int i = 1; i < 4; i++)
		if (fds[i] == OWS_STDIO_NULL) {
			if (null < 0 && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
				rc = ows__fail_sys(err, "/dev/null", NULL, "cannot open /dev/null");
				goto out;
			}
			fds[i] = null;
		}
	struct ows__msg m = {.type = OWS_MSG_SPAWN, .id = proc->id, .code = proc->proxy_port};
	if (ows__send_fds(c->fd, &m, fds, 5) != 0) {
		rc = errno == EPIPE || errno == ECONNRESET
			? ows__fail(err, OWS_ESTATE, errno, NULL, "open a new session",
				    "the sandbox has ended")
			: ows__fail_sys(err, "sendmsg", "open a new session", "cannot reach the sandbox");
		goto out;
	}
	/* Only init holds the other end now: its end of file is init's. */
	close(chan[1]);
	chan[1] = -1;
	if ((rc = spawn_reply(s, proc, chan[0], argv, cwd, err)) == 0) {
		proc->exit_fd = chan[0];
		chan[0] = -1;
	}
out:
	for (int i = 0; i < 2; i++)
		if (chan[i] >= 0)
			close(chan[i]);
	if (null >= 0)
		close(null);
	close(memfd);
	return rc;
}

int ows__ctl_wait(ows_session *s, ows__ctl *c, ows_proc *proc, int timeout_ms, ows_error *err)
{
	if (!ows__proc_get_exit(proc, NULL)) {
		int r = proc->exit_fd >= 0 ? poll_in(proc->exit_fd, timeout_ms) : 1;
		if (r < 0)
			return ows__fail_sys(err, "poll", NULL, "cannot wait for the command");
		if (r == 0)
			return 0;
		collect_exit(proc);
	}
	/* What the command left at a guarded name is moved aside before the person's tools see it. */
	ows__session_lock(s);
	ows__guard_sweep(c->guard, s->id, &s->moved_aside, &s->modes_restored, NULL);
	ows__session_unlock(s);
	return 1;
}

int ows__ctl_kill(ows_session *s, ows__ctl *c, ows_proc *proc, int signo, ows_error *err)
{
	if (c->gone)
		return 0;
	struct ows__msg m = {.type = OWS_MSG_KILL, .id = proc->id, .code = signo};
	if (send(c->fd, &m, sizeof(m), MSG_NOSIGNAL) < 0) {
		if (errno == EPIPE || errno == ECONNRESET)
			return 0; /* the sandbox has ended, and the command with it */
		return ows__fail_sys(err, "send", NULL, "cannot reach the sandbox");
	}
	return 0;
}

void ows__ctl_stop(ows__ctl *c)
{
	/* Init reads end of file, ends everything and exits; the descriptor stays
	 * ours (no other thread's send can reach a reused number) until close. */
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
}

void ows__ctl_close(ows_session *s, ows__ctl *c)
{
	/* Closing the socket tells init to end everything; waiting for init returns
	 * only once the kernel has emptied its PID namespace. */
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->pid > 0) {
		int st;
		while (waitpid(c->pid, &st, __WALL) < 0 && errno == EINTR)
			;
		c->pid = 0;
	}
	if (c->listener >= 0)
		close(c->listener);
	c->listener = -1;
	if (s) {
		sandbox_gone(s, c);
		/* Nothing inside runs any more: this sweep is the last word. */
		ows__guard_sweep(c->guard, s->id, &s->moved_aside, &s->modes_restored, NULL);
	}
	ows__guard_watch_free(c->guard);
	c->guard = NULL;
	c->gone = true;
}

/* Provider operations for an impl whose first member is its ows__ctl. */
int ows__ctl_op_spawn(ows_session *s, ows_proc *proc, const char *const argv[], char *const envp[],
		      const char *cwd, const int stdio[3], ows_error *err)
{
	return ows__ctl_spawn(s, s->impl, proc, argv, envp, cwd, stdio, err);
}

int ows__ctl_op_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err)
{
	return ows__ctl_wait(s, s->impl, proc, timeout_ms, err);
}

int ows__ctl_op_kill(ows_session *s, ows_proc *proc, int signo, ows_error *err)
{
	return ows__ctl_kill(s, s->impl, proc, signo, err);
}

void ows__ctl_op_stop(ows_session *s)
{
	if (s->impl)
		ows__ctl_stop(s->impl);
}

/* ---------------------------------------------------------- proof probes */

int ows__unix_listen(const char *addr, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (len > sizeof(sa.sun_path))
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memcpy(sa.sun_path, addr, len);
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) != 0 ||
	    listen(fd, 1) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int ows__abstract_probe(const char *id, char *name, size_t size, socklen_t *len)
{
	name[0] = '\0';
	int n = snprintf(name + 1, size - 1, "owsandbox-probe-%s", id);
	*len = (socklen_t)n + 1;
	int fd = ows__unix_listen(name, *len);
	if (fd < 0)
		*len = 0;
	return fd;
}

/*
 * A session's probes live only while it opens, and its abstract probe listens
 * all that time; a host killed meanwhile leaves the canary in the home and the
 * named socket behind.  Such a file is the caller's, a minute old, and its id
 * has no listener in /proc/self/net/unix.
 */
static bool probe_stale(int dirfd, const char *name, const char *id, mode_t type,
			const char *listening)
{
	struct stat st;
	char needle[64];
	snprintf(needle, sizeof(needle), "@owsandbox-probe-%.32s\n", id);
	return strlen(id) >= 32 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == type && st.st_uid == geteuid() &&
	       st.st_mtime < time(NULL) - 60 && !strstr(listening, needle);
}

static void probes_sweep_dir(const char *dir, const char *prefix, const char *suffix,
			     mode_t type, const char *listening)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = dirfd >= 0 ? fdopendir(dirfd) : NULL;
	if (!d) {
		if (dirfd >= 0)
			close(dirfd);
		return;
	}
	size_t np = strlen(prefix), ns = strlen(suffix);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n >= np + 32 + ns && strncmp(e->d_name, prefix, np) == 0 &&
		    strcmp(e->d_name + n - ns, suffix) == 0 &&
		    probe_stale(dirfd, e->d_name, e->d_name + np, type, listening))
			unlinkat(dirfd, e->d_name, 0);
	}
	closedir(d);
}

void ows__probes_sweep(const char *home)
{
	char *listening = NULL;
	size_t len = 0;
	if (ows__read_file("/proc/self/net/unix", &listening, &len, NULL) < 0)
		return; /* without the list nothing can be told dead */
	if (home)
		probes_sweep_dir(home, ".owsandbox-canary-", "", S_IFREG, listening);
	probes_sweep_dir("/dev/shm", ".owsandbox-probe-", ".sock", S_IFSOCK, listening);
	probes_sweep_dir("/tmp", ".owsandbox-probe-", ".sock", S_IFSOCK, listening);
	free(listening);
}

int ows__ctl_send_share(ows_session *s, ows__ctl *c, const ows__file *files, size_t nfiles,
			ows_error *err)
{
	int memfd = memfd_create("owsandbox-share", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return ows__fail_sys(err, "memfd_create", NULL, "cannot pass the shared copies");
	int rc = 0;
	for (size_t i = 0; i < nfiles && rc == 0; i++) {
		uint32_t h[3] = {files[i].dir ? 0 : 1, (uint32_t)strlen(files[i].path),
				 (uint32_t)files[i].len};
		struct iovec iov[3] = {{h, sizeof(h)}, {files[i].path, h[1]},
				       {files[i].data, files[i].len}};
		size_t want = sizeof(h) + h[1] + h[2];
		ssize_t w = writev(memfd, iov, files[i].len ? 3 : 2);
		if (w != (ssize_t)want)
			rc = ows__fail_sys(err, "memfd", NULL, "cannot pass the shared copies");
	}
	fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	struct ows__msg m = {.type = OWS_MSG_SHARE};
	if (rc == 0 && ows__send_fds(c->fd, &m, &memfd, 1) != 0)
		rc = ows__fail_sys(err, "sendmsg", NULL, "cannot reach the sandbox");
	close(memfd);
	while (rc == 0) {
		struct ows__msg r;
		int n = pump(c, &r, 30000, err);
		if (n < 0)
			return ows__fail(err, OWS_ESTATE, 0, NULL, NULL,
					 "the sandbox ended before taking the shared copies");
		if (n == 0)
			return ows__fail(err, OWS_ETIMEDOUT, 0, NULL, NULL,
					 "the sandbox did not take the shared copies in 30 s");
		if (r.type != OWS_MSG_SHARED)
			continue;
		if (r.err) {
			r.text[sizeof(r.text) - 1] = '\0';
			return ows__fail(err, OWS_ESYS, r.err, r.text, NULL,
					 "the shared copies could not be written: %s", strerror(r.err));
		}
		break;
	}
	return rc;
}
