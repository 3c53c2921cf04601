/*
 * The proxy's platform layer on Windows (Winsock): WSAPoll over a table of
 * watched sockets, a loopback socket pair to wake the loop, and a pump that
 * is a user-space buffer (Windows has no splice; TransmitFile only sends
 * files).  See lib/netio.h.
 *
 * Known limits: the table is searched linearly (fine for the few hundred
 * connections of one session); WSAPoll before Windows 10 2004 may not report
 * a refused connect, which then ends in the connect timeout (504), not 502.
 */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netio.h"

static int wsa_fail(ows_error *err, const char *where, const char *what)
{
	int e = WSAGetLastError();
	return ows__fail(err, OWS_ESYS, e, where, NULL, "%s (%s)", what, ows__net_strerror(-e));
}

const char *ows__net_strerror(int code)
{
	static __thread char buf[200];
	DWORD e = (DWORD)(code < 0 ? -code : code);
	if (!FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0,
			    buf, sizeof(buf), NULL))
		snprintf(buf, sizeof(buf), "Winsock error %lu", (unsigned long)e);
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf;
}

const char *ows__resolve_strerror(int gai)
{
	return ows__net_strerror(gai);
}

int ows__net_init(ows_error *err)
{
	WSADATA wd;
	int e = WSAStartup(MAKEWORD(2, 2), &wd);
	if (e != 0)
		return ows__fail(err, OWS_ESYS, e, "WSAStartup", NULL, "cannot start Winsock");
	return 0;
}

void ows__net_thread_init(void)
{
	/* no SIGPIPE here */
}

static void nonblocking(SOCKET s)
{
	u_long one = 1;
	ioctlsocket(s, FIONBIO, &one);
}

static void nodelay(SOCKET s)
{
	BOOL one = TRUE;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof(one));
}

int ows__tcp_listen_loopback(int port, int lo, int hi, ows__sock *out, int *port_out,
			     ows_error *err)
{
	SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (s == INVALID_SOCKET)
		return wsa_fail(err, "socket", "cannot make the proxy's socket");
	/* Not SO_REUSEADDR: on Windows it lets another program take the port. */
	BOOL one = TRUE;
	setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&one, sizeof(one));
	struct sockaddr_in sin = {.sin_family = AF_INET};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int first = port ? port : lo, last = port ? port : hi;
	for (int p = first; p <= last; p++) {
		sin.sin_port = htons((u_short)p);
		if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			if (listen(s, SOMAXCONN) != 0)
				break;
			nonblocking(s);
			*out = (ows__sock)s;
			*port_out = p;
			return 0;
		}
		int e = WSAGetLastError();
		if (e != WSAEADDRINUSE && e != WSAEACCES)
			break;
	}
	int rc = wsa_fail(err, "127.0.0.1", "cannot listen for the proxy");
	closesocket(s);
	return rc;
}

int ows__sock_listener_ready(ows__sock s, ows_error *err)
{
	BOOL listening = FALSE;
	int len = sizeof(listening);
	if (getsockopt((SOCKET)s, SOL_SOCKET, SO_ACCEPTCONN, (char *)&listening, &len) != 0 ||
	    !listening)
		return ows__fail(err, OWS_EINVAL, 0, "listener", NULL, "not a listening socket");
	nonblocking((SOCKET)s);
	return 0;
}

ows__sock ows__tcp_accept(ows__loop *loop, ows__sock listener, const char *busy, size_t busy_len)
{
	/* Winsock has no per-process descriptor table to run out of. */
	(void)loop;
	(void)busy;
	(void)busy_len;
	SOCKET s = accept((SOCKET)listener, NULL, NULL);
	if (s == INVALID_SOCKET)
		return OWS__NOSOCK;
	nonblocking(s);
	nodelay(s);
	return (ows__sock)s;
}

int ows__tcp_connect_start(const struct sockaddr *sa, size_t salen, ows__sock *out)
{
	SOCKET s = socket(sa->sa_family, SOCK_STREAM, IPPROTO_TCP);
	if (s == INVALID_SOCKET)
		return -WSAGetLastError();
	nonblocking(s);
	nodelay(s);
	if (connect(s, sa, (int)salen) != 0 && WSAGetLastError() != WSAEWOULDBLOCK) {
		int e = WSAGetLastError();
		closesocket(s);
		return -e;
	}
	*out = (ows__sock)s;
	return 0;
}

int ows__tcp_connect_result(ows__sock s)
{
	int e = 0;
	int len = sizeof(e);
	if (getsockopt((SOCKET)s, SOL_SOCKET, SO_ERROR, (char *)&e, &len) != 0)
		return WSAGetLastError();
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
		return ows__fail(err, OWS_EINVAL, g, host, "give the proxy as 127.0.0.1:PORT",
				 "cannot resolve the proxy's address");
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		SOCKET s = socket(ai->ai_family, SOCK_STREAM, IPPROTO_TCP);
		if (s == INVALID_SOCKET)
			continue;
		if (connect(s, ai->ai_addr, (int)ai->ai_addrlen) == 0) {
			freeaddrinfo(res);
			*out = (ows__sock)s;
			return 0;
		}
		closesocket(s);
	}
	freeaddrinfo(res);
	return wsa_fail(err, host, "cannot connect to the proxy");
}

static long wsa_result(int r)
{
	if (r > 0)
		return r;
	if (r == 0)
		return OWS__EOF;
	int e = WSAGetLastError();
	return e == WSAEWOULDBLOCK || e == WSAEINTR ? OWS__AGAIN : -e;
}

long ows__sock_recv(ows__sock s, void *buf, size_t n)
{
	return wsa_result(recv((SOCKET)s, buf, n > INT_MAX ? INT_MAX : (int)n, 0));
}

long ows__sock_send(ows__sock s, const void *buf, size_t n)
{
	long r = wsa_result(send((SOCKET)s, buf, n > INT_MAX ? INT_MAX : (int)n, 0));
	return r == OWS__EOF ? OWS__AGAIN : r;
}

void ows__sock_shutdown_wr(ows__sock s)
{
	shutdown((SOCKET)s, SD_SEND);
}

void ows__sock_shutdown_rdwr(ows__sock s)
{
	if (s != OWS__NOSOCK)
		shutdown((SOCKET)s, SD_BOTH);
}

int ows__sock_poll(ows__pollsock *p, int n, int timeout_ms)
{
	WSAPOLLFD fds[8];
	if (n < 1 || n > (int)OWS__ARRAY_LEN(fds))
		return -WSAEINVAL;
	for (int i = 0; i < n; i++) {
		fds[i] = (WSAPOLLFD){.fd = p[i].s == OWS__NOSOCK ? INVALID_SOCKET : (SOCKET)p[i].s,
				     .events = (SHORT)((p[i].rd ? POLLRDNORM : 0) |
						       (p[i].wr ? POLLWRNORM : 0))};
		p[i].ready = false;
	}
	int r = WSAPoll(fds, (ULONG)n, timeout_ms);
	if (r == SOCKET_ERROR)
		return -WSAGetLastError();
	for (int i = 0; i < n; i++)
		p[i].ready = fds[i].revents != 0;
	return r;
}

void ows__sock_close(ows__sock s)
{
	if (s != OWS__NOSOCK)
		closesocket((SOCKET)s);
}

/* ------------------------------------------------------------ event loop */

typedef struct watched {
	SOCKET s;
	void *ptr;
	SHORT events;
} watched;

struct ows__loop {
	CRITICAL_SECTION mu; /* the table is the loop thread's; the wake socket is shared */
	watched *w;
	size_t n, cap;
	WSAPOLLFD *pfd;      /* scratch for WSAPoll, cap + 1 */
	SOCKET wake_rd, wake_wr;
};

/* A connected pair on loopback: what socketpair() is elsewhere. */
static int loopback_pair(SOCKET *rd, SOCKET *wr)
{
	SOCKET l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int len = sizeof(a);
	*rd = *wr = INVALID_SOCKET;
	if (l == INVALID_SOCKET || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(l, 1) != 0 || getsockname(l, (struct sockaddr *)&a, &len) != 0)
		goto fail;
	*wr = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (*wr == INVALID_SOCKET || connect(*wr, (struct sockaddr *)&a, sizeof(a)) != 0)
		goto fail;
	*rd = accept(l, NULL, NULL);
	if (*rd == INVALID_SOCKET)
		goto fail;
	closesocket(l);
	nonblocking(*rd);
	nonblocking(*wr);
	return 0;
fail:
	if (l != INVALID_SOCKET)
		closesocket(l);
	if (*wr != INVALID_SOCKET)
		closesocket(*wr);
	return -1;
}

int ows__loop_new(ows__loop **out, ows_error *err)
{
	ows__loop *l = ows__calloc(1, sizeof(*l), err);
	if (!l)
		return OWS_ENOMEM;
	InitializeCriticalSection(&l->mu);
	if (loopback_pair(&l->wake_rd, &l->wake_wr) != 0) {
		int rc = wsa_fail(err, "socket", "cannot make the proxy's wake-up sockets");
		DeleteCriticalSection(&l->mu);
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

void ows__loop_free(ows__loop *l)
{
	if (!l)
		return;
	closesocket(l->wake_rd);
	closesocket(l->wake_wr);
	DeleteCriticalSection(&l->mu);
	free(l->w);
	free(l->pfd);
	free(l);
}

static watched *find(ows__loop *l, SOCKET s)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->w[i].s == s)
			return &l->w[i];
	return NULL;
}

int ows__loop_watch(ows__loop *l, ows__sock s, void *ptr, bool add, bool rd, bool wr)
{
	SHORT ev = (SHORT)((rd ? POLLRDNORM : 0) | (wr ? POLLWRNORM : 0));
	watched *w = find(l, (SOCKET)s);
	if (!w) {
		if (!add)
			return -ENOENT;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 64;
			watched *nw = realloc(l->w, cap * sizeof(*nw));
			WSAPOLLFD *np = nw ? realloc(l->pfd, (cap + 1) * sizeof(*np)) : NULL;
			if (nw)
				l->w = nw;
			if (!np)
				return -ENOMEM;
			l->pfd = np;
			l->cap = cap;
		}
		w = &l->w[l->n++];
		w->s = (SOCKET)s;
	}
	w->ptr = ptr;
	w->events = ev;
	return 0;
}

void ows__loop_forget(ows__loop *l, ows__sock s)
{
	watched *w = find(l, (SOCKET)s);
	if (w)
		*w = l->w[--l->n];
}

void ows__loop_close(ows__loop *l, ows__sock s, bool watched_)
{
	if (watched_)
		ows__loop_forget(l, s);
	closesocket((SOCKET)s);
}

int ows__loop_wait(ows__loop *l, ows__event *out, int max, int timeout_ms)
{
	if (!l->pfd && !(l->pfd = calloc(1, sizeof(*l->pfd))))
		return -ENOMEM;
	l->pfd[0] = (WSAPOLLFD){.fd = l->wake_rd, .events = POLLRDNORM};
	for (size_t i = 0; i < l->n; i++)
		l->pfd[i + 1] = (WSAPOLLFD){.fd = l->w[i].s, .events = l->w[i].events};
	int r = WSAPoll(l->pfd, (ULONG)(l->n + 1), timeout_ms);
	if (r <= 0)
		return r == 0 ? 0 : -WSAGetLastError();
	int k = 0;
	if (l->pfd[0].revents) {
		char buf[64];
		while (recv(l->wake_rd, buf, sizeof(buf), 0) > 0) {
		}
		out[k++] = (ows__event){.ptr = NULL};
	}
	for (size_t i = 0; i < l->n && k < max; i++) {
		SHORT re = l->pfd[i + 1].revents;
		if (!re)
			continue;
		out[k++] = (ows__event){.ptr = l->w[i].ptr,
					.rd = (re & (POLLRDNORM | POLLHUP | POLLERR)) != 0,
					.wr = (re & (POLLWRNORM | POLLHUP | POLLERR)) != 0,
					.hup = (re & (POLLHUP | POLLERR)) != 0};
	}
	return k;
}

void ows__loop_wake(ows__loop *l)
{
	EnterCriticalSection(&l->mu);
	send(l->wake_wr, "w", 1, 0); /* a full pipe means a wake-up is pending anyway */
	LeaveCriticalSection(&l->mu);
}

/* ------------------------------------------------------------------ pump */

#define PUMP_CAP 65536

struct ows__pump {
	size_t off, len;
	char buf[PUMP_CAP];
};

long ows__pump_fill(ows__pump **pp, ows__sock from, size_t max)
{
	ows__pump *p = *pp;
	if (!p) {
		char b;
		long k = wsa_result(recv((SOCKET)from, &b, 1, MSG_PEEK));
		if (k <= 0)
			return k;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		*pp = p;
	}
	if (p->off == p->len)
		p->off = p->len = 0;
	size_t room = PUMP_CAP - p->len;
	if (max > room)
		max = room;
	if (max == 0)
		return OWS__AGAIN;
	long n = wsa_result(recv((SOCKET)from, p->buf + p->len, (int)max, 0));
	if (n > 0)
		p->len += (size_t)n;
	return n;
}

long ows__pump_drain(ows__pump *p, ows__sock to)
{
	if (!p || p->off == p->len)
		return 0;
	long n = ows__sock_send(to, p->buf + p->off, p->len - p->off);
	if (n > 0)
		p->off += (size_t)n;
	return n;
}

size_t ows__pump_pending(const ows__pump *p)
{
	return p ? p->len - p->off : 0;
}

size_t ows__pump_room(const ows__pump *p)
{
	if (!p)
		return PUMP_CAP;
	return p->off == p->len ? PUMP_CAP : PUMP_CAP - p->len;
}

void ows__pump_free(ows__pump *p)
{
	free(p);
}

/* --------------------------------------------------------------- tunnel */

typedef struct upload {
	SOCKET s;
	int in_fd;
} upload;

/* stdin to the tunnel, on its own thread: a console or pipe handle cannot be polled with sockets. */
static DWORD WINAPI upload_main(LPVOID arg)
{
	upload *u = arg;
	char buf[65536];
	for (;;) {
		int r = _read(u->in_fd, buf, sizeof(buf));
		if (r <= 0)
			break;
		for (int off = 0; off < r;) {
			int w = send(u->s, buf + off, r - off, 0);
			if (w <= 0)
				return 0;
			off += w;
		}
	}
	shutdown(u->s, SD_SEND);
	return 0;
}

int ows__relay_stdio(ows__sock s, int in_fd, int out_fd, const char *pre, size_t pre_len,
		     ows_error *err)
{
	_setmode(in_fd, _O_BINARY);
	_setmode(out_fd, _O_BINARY);
	u_long zero = 0;
	ioctlsocket((SOCKET)s, FIONBIO, &zero);
	if (pre_len && _write(out_fd, pre, (unsigned)pre_len) != (int)pre_len)
		return ows__fail(err, OWS_ESYS, errno, "stdout", NULL, "cannot write the tunnel's output");
	upload u = {(SOCKET)s, in_fd};
	HANDLE th = CreateThread(NULL, 0, upload_main, &u, 0, NULL);
	if (!th)
		return ows__fail(err, OWS_ESYS, (int)GetLastError(), "CreateThread", NULL,
				 "cannot start the tunnel");
	char buf[65536];
	int rc = 0;
	for (;;) {
		int r = recv((SOCKET)s, buf, sizeof(buf), 0);
		if (r == 0)
			break;
		if (r < 0) {
			rc = wsa_fail(err, "recv", "the tunnel broke");
			break;
		}
		if (_write(out_fd, buf, (unsigned)r) != r)
			break;
	}
	/* the far end closed: the upload thread may still sit in a read of stdin */
	TerminateThread(th, 0);
	CloseHandle(th);
	return rc;
}
