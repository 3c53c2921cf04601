/*
 * The proxy's platform layer on Linux: epoll (level-triggered), an eventfd
 * to wake the loop, and splice(2) through a pipe so that relayed bytes never
 * enter user space.  See lib/netio.h; the POSIX rest is
 * lib/posix/netio_posix.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "posix/netio_posix.h"

int ows__sock_socket(int family, bool nonblock)
{
	return socket(family, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
}

int ows__sock_accept_fd(int listener)
{
	return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

struct ows__loop {
	int ep;
	int wake;
	char wake_tag;
	int spare; /* /dev/null, given up to accept a connection when no descriptor is left */
};

int *ows__loop_spare(ows__loop *l)
{
	return &l->spare;
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
/* Bytes a pump copies through user space before it takes a pipe: a request or a
 * response smaller than this costs a recv and a send, where a pipe would cost a
 * pipe2, three splices and two closes (perf: pipe2 and the pipes' release were 5%
 * of the proxy's time at 10,000 short tunnels a second). */
#define OWS__COPY_MAX 16384

struct ows__pump {
	int pipe[2];  /* -1 until a read fills the copy buffer: then bulk, spliced */
	char *buf;    /* before the pipe: the bytes read, until sent; NULL when none */
	size_t off;   /* where in buf the unsent bytes start */
	size_t pending;
	size_t cap;   /* the pipe's size */
	bool full;    /* a fill found no room (slots, not bytes, ran out) */
	bool grown;
	bool bulk;    /* a read filled the copy buffer: the next fill makes the pipe */
};

static long pump_errno(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? OWS__AGAIN : -errno;
}

/* Copy mode: one read into a buffer made for it and freed once sent, so that an idle
 * tunnel holds neither a buffer nor a pipe. */
static long pump_copy_fill(ows__pump *p, int from, size_t max)
{
	if (p->pending)
		return OWS__AGAIN;
	if (!p->buf && !(p->buf = malloc(OWS__COPY_MAX)))
		return -ENOMEM;
	if (max > OWS__COPY_MAX)
		max = OWS__COPY_MAX;
	ssize_t n = recv(from, p->buf, max, MSG_DONTWAIT);
	if (n <= 0) {
		long r = n == 0 ? OWS__EOF : pump_errno();
		free(p->buf);
		p->buf = NULL;
		return r;
	}
	p->off = 0;
	p->pending = (size_t)n;
	p->bulk = (size_t)n == OWS__COPY_MAX;
	return (long)n;
}

static long pump_copy_drain(ows__pump *p, int to)
{
	ssize_t n = send(to, p->buf + p->off, p->pending, OWS__MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0)
		return pump_errno();
	p->off += (size_t)n;
	p->pending -= (size_t)n;
	if (!p->pending) {
		free(p->buf);
		p->buf = NULL;
	}
	return (long)n;
}

long ows__pump_fill(ows__pump **pp, ows__sock from, size_t max)
{
	ows__pump *p = *pp;
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return -ENOMEM;
		p->pipe[0] = p->pipe[1] = -1;
		*pp = p;
	}
	if (p->pipe[0] < 0 && (!p->bulk || p->pending))
		return pump_copy_fill(p, (int)from, max);
	if (p->pipe[0] < 0) {
		if (pipe2(p->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			p->pipe[0] = p->pipe[1] = -1;
			return -errno;
		}
		p->cap = 65536;
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
	return pump_errno();
}

long ows__pump_drain(ows__pump *p, ows__sock to)
{
	if (!p || p->pending == 0)
		return 0;
	if (p->buf)
		return pump_copy_drain(p, (int)to);
	ssize_t n = splice(p->pipe[0], NULL, (int)to, NULL, p->pending,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n > 0) {
		p->pending -= (size_t)n;
		p->full = false;
		return (long)n;
	}
	if (n == 0)
		return OWS__AGAIN;
	return pump_errno();
}

size_t ows__pump_pending(const ows__pump *p)
{
	return p ? p->pending : 0;
}

size_t ows__pump_room(const ows__pump *p)
{
	if (!p)
		return 1u << 20;
	if (p->full || p->buf)
		return 0; /* the copy buffer holds one read at a time */
	if (p->pipe[0] < 0)
		return p->bulk ? 65536 : OWS__COPY_MAX;
	return p->pending >= p->cap ? 0 : p->cap - p->pending;
}

void ows__pump_free(ows__pump *p)
{
	if (!p)
		return;
	if (p->pipe[0] >= 0) {
		close(p->pipe[0]);
		close(p->pipe[1]);
	}
	free(p->buf);
	free(p);
}
