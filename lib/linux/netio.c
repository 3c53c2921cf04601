/*
 * The proxy's platform layer on Linux: epoll (level-triggered), an eventfd
 * to wake the loop, and splice(2) through a pipe so that relayed bytes never
 * enter user space.  See lib/netio.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netio.h"

const char *ows__net_strerror(int code)
{
	return strerror(code < 0 ? -code : code);
}

const char *ows__resolve_strerror(int gai)
{
	return gai_strerror(gai);
}

int ows__net_init(ows_error *err)
{
	(void)err;
	return 0;
}

void ows__net_thread_init(void)
{
	/* A peer that closed makes send/splice fail with EPIPE; the signal the
	 * kernel would also raise stays pending on this thread, blocked. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int ows__tcp_listen_loopback(int port, int lo, int hi, ows__sock *out, int *port_out,
			     ows_error *err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ows__fail_sys(err, "socket", NULL, "cannot make the proxy's socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sin = {.sin_family = AF_INET};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int first = port ? port : lo, last = port ? port : hi;
	int e = 0;
	for (int p = first; p <= last; p++) {
		sin.sin_port = htons((uint16_t)p);
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			if (listen(fd, 1024) < 0) {
				e = errno;
				break;
			}
			*out = fd;
			*port_out = p;
			return 0;
		}
		e = errno;
		if (e != EADDRINUSE && e != EACCES)
			break;
	}
	close(fd);
	errno = e;
	char where[64];
	if (port)
		snprintf(where, sizeof(where), "127.0.0.1:%d", port);
	else
		snprintf(where, sizeof(where), "127.0.0.1:%d-%d", lo, hi);
	return ows__fail_sys(err, where, "stop another proxy or give a free port",
			     "cannot listen for the proxy");
}

int ows__sock_listener_ready(ows__sock s, ows_error *err)
{
	int fd = (int)s, listening = 0;
	socklen_t len = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
		return ows__fail(err, OWS_EINVAL, errno, "listener", NULL, "not a listening socket");
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return ows__fail_sys(err, "fcntl", NULL, "cannot make the listener non-blocking");
	return 0;
}

struct ows__loop {
	int ep;
	int wake;
	char wake_tag;
	int spare; /* /dev/null, given up to accept a connection when no descriptor is left */
};

/* Out of descriptors: takes one pending connection with the spare, answers it, closes it. */
static bool refuse_busy(ows__loop *l, int listener, const char *busy, size_t busy_len)
{
	if (!l || l->spare < 0)
		return false;
	close(l->spare);
	int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		if (send(fd, busy, busy_len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* the client is gone already: nothing to tell */
		}
		close(fd);
	}
	l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

ows__sock ows__tcp_accept(ows__loop *l, ows__sock listener, const char *busy, size_t busy_len)
{
	for (;;) {
		int fd = accept4((int)listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE) &&
		    refuse_busy(l, (int)listener, busy, busy_len))
			continue;
		if (fd < 0)
			return OWS__NOSOCK;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return fd;
	}
}

int ows__tcp_connect_start(const struct sockaddr *sa, size_t salen, ows__sock *out)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, sa, (socklen_t)salen) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	*out = fd;
	return 0;
}

int ows__tcp_connect_result(ows__sock s)
{
	int e = 0;
	socklen_t len = sizeof(e);
	if (getsockopt((int)s, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		return errno;
	return e;
}

int ows__tcp_connect_blocking(const char *host, int port, ows__sock *out, ows_error *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	int g = getaddrinfo(host, ps, &hints, &res);
	if (g != 0)
		return ows__fail(err, OWS_EINVAL, 0, host, "give the proxy as 127.0.0.1:PORT",
				 "cannot resolve the proxy's address: %s", gai_strerror(g));
	int e = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			freeaddrinfo(res);
			*out = fd;
			return 0;
		}
		e = errno;
		close(fd);
	}
	freeaddrinfo(res);
	errno = e;
	char where[300];
	snprintf(where, sizeof(where), "%s:%d", host, port);
	return ows__fail_sys(err, where, "is the proxy running? (owsbx proxy)",
			     "cannot connect to the proxy");
}

long ows__sock_recv(ows__sock s, void *buf, size_t n)
{
	ssize_t r = recv((int)s, buf, n, 0);
	if (r > 0)
		return (long)r;
	if (r == 0)
		return OWS__EOF;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? OWS__AGAIN : -errno;
}

long ows__sock_send(ows__sock s, const void *buf, size_t n)
{
	ssize_t r = send((int)s, buf, n, MSG_NOSIGNAL);
	if (r >= 0)
		return r > 0 ? (long)r : OWS__AGAIN;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? OWS__AGAIN : -errno;
}

void ows__sock_shutdown_wr(ows__sock s)
{
	shutdown((int)s, SHUT_WR);
}

void ows__sock_close(ows__sock s)
{
	if (s != OWS__NOSOCK)
		close((int)s);
}

/* ------------------------------------------------------------ event loop */

int ows__loop_new(ows__loop **out, ows_error *err)
{
	ows__loop *l = ows__calloc(1, sizeof(*l), err);
	if (!l)
		return OWS_ENOMEM;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (l->ep < 0 || l->wake < 0 || l->spare < 0) {
		int rc = ows__fail_sys(err, "epoll_create1", NULL, "cannot make the proxy's event loop");
		ows__loop_free(l);
		return rc;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->wake_tag};
	epoll_ctl(l->ep, EPOLL_CTL_ADD, l->wake, &ev);
	*out = l;
	return 0;
}

void ows__loop_free(ows__loop *l)
{
	if (!l)
		return;
	if (l->ep >= 0)
		close(l->ep);
	if (l->wake >= 0)
		close(l->wake);
	if (l->spare >= 0)
		close(l->spare);
	free(l);
}

int ows__loop_watch(ows__loop *l, ows__sock s, void *ptr, bool add, bool rd, bool wr)
{
	struct epoll_event ev = {.events = (rd ? EPOLLIN | EPOLLRDHUP : 0) | (wr ? EPOLLOUT : 0),
				 .data.ptr = ptr};
	if (epoll_ctl(l->ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, (int)s, &ev) < 0)
		return -errno;
	return 0;
}

void ows__loop_forget(ows__loop *l, ows__sock s)
{
	epoll_ctl(l->ep, EPOLL_CTL_DEL, (int)s, NULL);
}

void ows__loop_close(ows__loop *l, ows__sock s, bool watched)
{
	(void)l;
	(void)watched; /* the last close of a descriptor leaves epoll by itself */
	close((int)s);
}

int ows__loop_wait(ows__loop *l, ows__event *out, int max, int timeout_ms)
{
	struct epoll_event evs[256];
	if (max > 256)
		max = 256;
	int n = epoll_wait(l->ep, evs, max, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &l->wake_tag) {
			uint64_t v;
			if (read(l->wake, &v, sizeof(v)) < 0) {
				/* nothing to drain: another wake-up took it */
			}
			out[i] = (ows__event){.ptr = NULL};
			continue;
		}
		uint32_t e = evs[i].events;
		out[i] = (ows__event){.ptr = evs[i].data.ptr,
				      .rd = (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0,
				      .wr = (e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0,
				      .hup = (e & (EPOLLHUP | EPOLLERR)) != 0};
	}
	return n;
}

void ows__loop_wake(ows__loop *l)
{
	uint64_t one = 1;
	if (write(l->wake, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the loop will wake anyway */
	}
}

/* ------------------------------------------------------------------ pump */

#define OWS__PIPE_BIG (1 << 20)

struct ows__pump {
	int pipe[2];
	size_t pending;
	size_t cap;  /* the pipe's size */
	bool full;   /* a fill found no room (slots, not bytes, ran out) */
	bool grown;
};

long ows__pump_fill(ows__pump **pp, ows__sock from, size_t max)
{
	ows__pump *p = *pp;
	if (!p) {
		/* No pipe until the first byte: most short-lived tunnels and every
		 * idle one would make a pipe only to read an end of file. */
		char b;
		ssize_t k = recv((int)from, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (k == 0)
			return OWS__EOF;
		if (k < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? OWS__AGAIN
										     : -errno;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		if (pipe2(p->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			int e = errno;
			free(p);
			return -e;
		}
		p->cap = 65536;
		*pp = p;
	}
	if (max > p->cap - p->pending)
		max = p->cap - p->pending;
	if (max == 0)
		return OWS__AGAIN;
	ssize_t n = splice((int)from, NULL, p->pipe[1], NULL, max, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n > 0) {
		/* A direction that fills the pipe is a bulk transfer: a larger pipe
		 * halves the system calls per byte.  Idle tunnels keep the default
		 * (pipe pages count against the user's pipe limit). */
		if (!p->grown && (size_t)n >= 65536) {
			p->grown = true;
			int sz = fcntl(p->pipe[1], F_SETPIPE_SZ, OWS__PIPE_BIG);
			if (sz > 0)
				p->cap = (size_t)sz;
		}
		p->pending += (size_t)n;
		return (long)n;
	}
	if (n == 0)
		return OWS__EOF;
	if (errno == EAGAIN && p->pending > 0)
		p->full = true; /* maybe the socket is empty, maybe the pipe: wait for a drain */
	return errno == EAGAIN || errno == EINTR ? OWS__AGAIN : -errno;
}

long ows__pump_drain(ows__pump *p, ows__sock to)
{
	if (!p || p->pending == 0)
		return 0;
	ssize_t n = splice(p->pipe[0], NULL, (int)to, NULL, p->pending,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n > 0) {
		p->pending -= (size_t)n;
		p->full = false;
		return (long)n;
	}
	if (n == 0)
		return OWS__AGAIN;
	return errno == EAGAIN || errno == EINTR ? OWS__AGAIN : -errno;
}

size_t ows__pump_pending(const ows__pump *p)
{
	return p ? p->pending : 0;
}

size_t ows__pump_room(const ows__pump *p)
{
	if (!p)
		return 1u << 20;
	if (p->full || p->pending >= p->cap)
		return 0;
	return p->cap - p->pending;
}

void ows__pump_free(ows__pump *p)
{
	if (!p)
		return;
	close(p->pipe[0]);
	close(p->pipe[1]);
	free(p);
}

/* --------------------------------------------------------------- tunnel */

static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int ows__relay_stdio(ows__sock s, int in_fd, int out_fd, const char *pre, size_t pre_len,
		     ows_error *err)
{
	int fd = (int)s;
	if (pre_len && write_all(out_fd, pre, pre_len) < 0)
		return ows__fail_sys(err, "stdout", NULL, "cannot write the tunnel's output");
	char buf[65536];
	bool in_open = true;
	for (;;) {
		struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = in_fd, .events = POLLIN}};
		int n = poll(pfd, in_open ? 2 : 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ows__fail_sys(err, "poll", NULL, "the tunnel failed");
		}
		if (pfd[0].revents) {
			ssize_t r = recv(fd, buf, sizeof(buf), 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return ows__fail_sys(err, "recv", NULL, "the tunnel broke");
			if (r == 0)
				return 0; /* the far end closed: done */
			if (write_all(out_fd, buf, (size_t)r) < 0)
				return 0; /* nobody reads our output any more */
		}
		if (in_open && pfd[1].revents) {
			ssize_t r = read(in_fd, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				in_open = false;
				shutdown(fd, SHUT_WR);
				continue;
			}
			if (send_all(fd, buf, (size_t)r) < 0)
				return ows__fail_sys(err, "send", NULL, "the tunnel broke");
		}
	}
}
