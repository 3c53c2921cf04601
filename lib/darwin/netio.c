/*
 * The proxy's platform layer on macOS: kqueue (its read and write filters
 * are level-triggered unless EV_CLEAR is asked for), an EVFILT_USER event to
 * wake the loop, and a pump through a user-space buffer (macOS has no
 * splice).  Sockets get SO_NOSIGPIPE, since macOS documents no MSG_NOSIGNAL.
 * See lib/netio.h; the POSIX rest is lib/posix/netio_posix.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/event.h>
#include <sys/socket.h>
#include <unistd.h>

#include "posix/netio_posix.h"

/* Close on exec, no SIGPIPE, and non-blocking when asked; closes fd on failure. */
static int sock_setup(int fd, bool nonblock)
{
	int one = 1, fl = 0;
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one)) < 0 ||
	    (nonblock && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0))) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Another thread's fork between socket() and FD_CLOEXEC could carry the
 * socket into a child: macOS has no SOCK_CLOEXEC.  The spawns of this
 * library use posix_spawn with POSIX_SPAWN_CLOEXEC_DEFAULT, which closes it.
 */
int ows__sock_socket(int family, bool nonblock)
{
	return sock_setup(socket(family, SOCK_STREAM, 0), nonblock);
}

int ows__sock_accept_fd(int listener)
{
	return sock_setup(accept(listener, NULL, NULL), true);
}

/* ------------------------------------------------------------ event loop */

#define WAKE_IDENT 1

struct ows__loop {
	int kq;
	char wake_tag;
	int spare; /* /dev/null, given up to accept a connection when no descriptor is left */
};

int *ows__loop_spare(ows__loop *l)
{
	return &l->spare;
}

int ows__loop_new(ows__loop **out, ows_error *err)
{
	ows__loop *l = ows__calloc(1, sizeof(*l), err);
	if (!l)
		return OWS_ENOMEM;
	l->kq = kqueue();
	l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct kevent wake;
	EV_SET(&wake, WAKE_IDENT, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, &l->wake_tag);
	if (l->kq < 0 || l->spare < 0 || fcntl(l->kq, F_SETFD, FD_CLOEXEC) < 0 ||
	    kevent(l->kq, &wake, 1, NULL, 0, NULL) < 0) {
		int rc = ows__fail_sys(err, "kqueue", NULL, "cannot make the proxy's event loop");
		ows__loop_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

void ows__loop_free(ows__loop *l)
{
	if (!l)
		return;
	if (l->kq >= 0)
		close(l->kq);
	if (l->spare >= 0)
		close(l->spare);
	free(l);
}

/*
 * One filter of a socket on (added, or enabled again) or off (deleted: a
 * listener never has a write filter).  EV_RECEIPT gives each change its own
 * answer; turning off a filter that is not there is no error.
 */
static int change(ows__loop *l, ows__sock s, int16_t filter, bool on, void *ptr)
{
	struct kevent k, r;
	EV_SET(&k, (uintptr_t)s, filter, (on ? EV_ADD | EV_ENABLE : EV_DELETE) | EV_RECEIPT, 0, 0,
	       ptr);
	if (kevent(l->kq, &k, 1, &r, 1, NULL) < 0)
		return -errno;
	if ((r.flags & EV_ERROR) && r.data != 0 && !(r.data == ENOENT && !on))
		return -(int)r.data;
	return 0;
}

/* Adding and changing are the same call on kqueue. */
int ows__loop_watch(ows__loop *l, ows__sock s, void *ptr, bool add, bool rd, bool wr)
{
	(void)add;
	int rc = change(l, s, EVFILT_READ, rd, ptr);
	return rc < 0 ? rc : change(l, s, EVFILT_WRITE, wr, ptr);
}

void ows__loop_forget(ows__loop *l, ows__sock s)
{
	change(l, s, EVFILT_READ, false, NULL);
	change(l, s, EVFILT_WRITE, false, NULL);
}

void ows__loop_close(ows__loop *l, ows__sock s, bool watched)
{
	(void)l;
	(void)watched; /* the last close of a descriptor removes its kqueue filters */
	close((int)s);
}

/*
 * What epoll calls a hang-up: the socket cannot be written any more (the
 * write filter's end of file), or the connection failed (an error number in
 * fflags).  A read filter's plain end of file is the peer's shutdown: readable.
 */
static void add_event(ows__event *e, const struct kevent *k)
{
	bool eof = (k->flags & EV_EOF) != 0;
	bool error = (k->flags & EV_ERROR) != 0 || (eof && k->fflags != 0);
	if (k->filter == EVFILT_READ)
		e->rd = true;
	if (k->filter == EVFILT_WRITE) {
		e->wr = true;
		e->hup = e->hup || eof;
	}
	if (error)
		e->rd = e->wr = e->hup = true;
}

int ows__loop_wait(ows__loop *l, ows__event *out, int max, int timeout_ms)
{
	struct kevent evs[256];
	if (max > 256)
		max = 256;
	struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
	int n = kevent(l->kq, NULL, 0, evs, max, timeout_ms < 0 ? NULL : &ts);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	/* One event per socket, as epoll gives: its read and write filters come separately. */
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (evs[i].udata == &l->wake_tag) {
			out[m++] = (ows__event){.ptr = NULL};
			continue;
		}
		int j = 0;
		while (j < m && (out[j].ptr != evs[i].udata || !out[j].ptr))
			j++;
		if (j == m)
			out[m++] = (ows__event){.ptr = evs[i].udata};
		add_event(&out[j], &evs[i]);
	}
	return m;
}

void ows__loop_wake(ows__loop *l)
{
	struct kevent k;
	EV_SET(&k, WAKE_IDENT, EVFILT_USER, 0, NOTE_TRIGGER, 0, &l->wake_tag);
	kevent(l->kq, &k, 1, NULL, 0, NULL);
}

/* ------------------------------------------------------------------ pump */

#define PUMP_CAP 65536

/* Bytes wait in buf[off, off + pending). */
struct ows__pump {
	size_t off;
	size_t pending;
	char buf[PUMP_CAP];
};

static long again_or_errno(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? OWS__AGAIN : -errno;
}

long ows__pump_fill(ows__pump **pp, ows__sock from, size_t max)
{
	ows__pump *p = *pp;
	if (!p) {
		/* No buffer until the first byte: an idle tunnel holds none. */
		char b;
		ssize_t k = recv((int)from, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (k == 0)
			return OWS__EOF;
		if (k < 0)
			return again_or_errno();
		p = malloc(sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->off = p->pending = 0;
		*pp = p;
	}
	if (p->off > 0 && p->off + p->pending == PUMP_CAP) {
		memmove(p->buf, p->buf + p->off, p->pending);
		p->off = 0;
	}
	size_t room = PUMP_CAP - p->off - p->pending;
	if (max > room)
		max = room;
	if (max == 0)
		return OWS__AGAIN;
	ssize_t n = recv((int)from, p->buf + p->off + p->pending, max, 0);
	if (n > 0) {
		p->pending += (size_t)n;
		return (long)n;
	}
	return n == 0 ? OWS__EOF : again_or_errno();
}

long ows__pump_drain(ows__pump *p, ows__sock to)
{
	if (!p || p->pending == 0)
		return 0;
	ssize_t n = send((int)to, p->buf + p->off, p->pending, 0);
	if (n > 0) {
		p->off += (size_t)n;
		p->pending -= (size_t)n;
		if (p->pending == 0)
			p->off = 0;
		return (long)n;
	}
	return n == 0 ? OWS__AGAIN : again_or_errno();
}

size_t ows__pump_pending(const ows__pump *p)
{
	return p ? p->pending : 0;
}

size_t ows__pump_room(const ows__pump *p)
{
	return p ? PUMP_CAP - p->pending : PUMP_CAP;
}

void ows__pump_free(ows__pump *p)
{
	free(p);
}
