/*
 * The half of the proxy's platform layer (lib/netio.h) that is plain POSIX
 * sockets and poll: listening, accepting, connecting, sending and the
 * stdio tunnel.  Built for Linux and for macOS (the Makefile's
 * MAC_SHARED_SRCS); the event loop, the pump and the few calls that differ
 * (lib/posix/netio_posix.h) are each OS's netio.c.
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
#include <sys/socket.h>
#include <unistd.h>

#include "netio_posix.h"
#include "platform.h"

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
	int fd = ows__sock_socket(AF_INET, true);
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

/* Out of descriptors: takes one pending connection with the spare, answers it, closes it. */
static bool refuse_busy(ows__loop *l, int listener, const char *busy, size_t busy_len)
{
	if (!l)
		return false;
	int *spare = ows__loop_spare(l);
	if (*spare < 0)
		return false;
	close(*spare);
	int fd = ows__sock_accept_fd(listener);
	if (fd >= 0) {
		if (send(fd, busy, busy_len, OWS__MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* the client is gone already: nothing to tell */
		}
		close(fd);
	}
	*spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

ows__sock ows__tcp_accept(ows__loop *l, ows__sock listener, const char *busy, size_t busy_len)
{
	for (;;) {
		int fd = ows__sock_accept_fd((int)listener);
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
	int fd = ows__sock_socket(sa->sa_family, true);
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
		int fd = ows__sock_socket(ai->ai_family, false);
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
	ssize_t r = send((int)s, buf, n, OWS__MSG_NOSIGNAL);
	if (r >= 0)
		return r > 0 ? (long)r : OWS__AGAIN;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? OWS__AGAIN : -errno;
}

void ows__sock_shutdown_wr(ows__sock s)
{
	shutdown((int)s, SHUT_WR);
}

void ows__sock_shutdown_rdwr(ows__sock s)
{
	if (s != OWS__NOSOCK)
		shutdown((int)s, SHUT_RDWR);
}

int ows__sock_poll(ows__pollsock *p, int n, int timeout_ms)
{
	struct pollfd fds[8];
	if (n < 1 || n > (int)OWS__ARRAY_LEN(fds))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		fds[i] = (struct pollfd){.fd = p[i].s == OWS__NOSOCK ? -1 : (int)p[i].s,
					 .events = (short)((p[i].rd ? POLLIN : 0) |
							   (p[i].wr ? POLLOUT : 0))};
		p[i].ready = false;
	}
	int r;
	do
		r = poll(fds, (nfds_t)n, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		p[i].ready = fds[i].revents != 0;
	return r;
}

void ows__sock_close(ows__sock s)
{
	if (s != OWS__NOSOCK)
		close((int)s);
}

/* --------------------------------------------------------------- tunnel */

static int send_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, OWS__MSG_NOSIGNAL);
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
	if (pre_len && ows__plat_write_all(out_fd, pre, pre_len) < 0)
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
			if (ows__plat_write_all(out_fd, buf, (size_t)r) < 0)
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
