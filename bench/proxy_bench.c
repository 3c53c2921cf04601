/*
 * Load generator and server for bench/proxy.sh.  Every client mode reaches the server
 * through a CONNECT: to our proxy and tinyproxy, which answer the 200 themselves, or
 * through a forwarder that passes the CONNECT on (HAProxy, the splice relay below), to
 * which the server answers the 200.  So one client serves every column.
 *   proxy_bench serve                        the server; prints its port.  Answers a
 *                                            CONNECT head with a 200, a small GET with a
 *                                            small response, and discards anything else
 *   proxy_bench relay PORT                   a plain splice relay to PORT, thread per
 *                                            direction: the floor of a user-space relay;
 *                                            prints its port
 *   proxy_bench send PORT BYTES [PROXYPORT]  bulk send; prints MB/s
 *   proxy_bench open PORT PROXYPORT SECS W   tunnels per second by W workers, each
 *                                            opening, checking the 200, sending one small
 *                                            request, reading its response, closing;
 *                                            prints the rate, p50 and p99 (ms)
 *   proxy_bench ping PORT PROXYPORT N        N small requests one after another through
 *                                            one tunnel; prints p50 and p99 (ms)
 *   proxy_bench hold PORT PROXYPORT N        opens N tunnels, prints "held", waits on stdin
 */
#define _GNU_SOURCE /* splice, accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

static const char small_req[] = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n";
static const char small_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
static const char connect_ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		exit(1);
	}
	return fd;
}

static void write_all(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w <= 0) {
			perror("write");
			exit(1);
		}
		b += w;
		n -= (size_t)w;
	}
}

/* Reads what comes into buf[len..cap); the new length.  Exits when the peer closed. */
static size_t read_more(int fd, char *buf, size_t len, size_t cap, const char *what)
{
	ssize_t r = read(fd, buf + len, cap - len);
	if (r <= 0) {
		fprintf(stderr, "%s: closed\n", what);
		exit(1);
	}
	return len + (size_t)r;
}

/* CONNECT through the proxy; returns the tunnel or exits. */
static int tunnel(int port, int proxy)
{
	int fd = dial(proxy);
	char req[128], buf[512];
	int n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
			 port, port);
	write_all(fd, req, (size_t)n);
	size_t len = 0;
	while (len < sizeof(buf) - 1) {
		len = read_more(fd, buf, len, sizeof(buf) - 1, "tunnel");
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0) {
		fprintf(stderr, "tunnel refused: %s\n", buf);
		exit(1);
	}
	return fd;
}

/* One small request and its whole response; exits on anything else. */
static void small_exchange(int fd)
{
	write_all(fd, small_req, sizeof(small_req) - 1);
	char buf[sizeof(small_resp)];
	size_t len = 0;
	while (len < sizeof(small_resp) - 1)
		len = read_more(fd, buf, len, sizeof(small_resp) - 1, "small request");
	if (memcmp(buf, small_resp, len) != 0) {
		fprintf(stderr, "small request: wrong response\n");
		exit(1);
	}
}

static int listen_loopback(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4096) < 0) {
		perror("listen");
		exit(1);
	}
	getsockname(l, (struct sockaddr *)&a, &al);
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	return l;
}

/* ------------------------------------------------------------------ serve */

/* A server connection: heads are gathered here; bulk bytes are read past it. */
typedef struct sconn {
	int fd;
	bool discard; /* neither a CONNECT nor a small request: bulk, thrown away */
	size_t len;
	char buf[256];
} sconn;

/* Answers every whole head in c->buf; false when the connection is to be closed. */
static bool serve_heads(sconn *c)
{
	for (;;) {
		if (c->len && c->buf[0] != 'C' && c->buf[0] != 'G') {
			c->discard = true;
			c->len = 0;
			return true;
		}
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
		if (!end)
			return c->len < sizeof(c->buf); /* a head longer than that is not ours */
		size_t head = (size_t)(end + 4 - c->buf);
		const char *ans = c->buf[0] == 'C' ? connect_ok : small_resp;
		size_t n = c->buf[0] == 'C' ? sizeof(connect_ok) - 1 : sizeof(small_resp) - 1;
		if (send(c->fd, ans, n, MSG_NOSIGNAL) != (ssize_t)n)
			return false;
		memmove(c->buf, c->buf + head, c->len - head);
		c->len -= head;
	}
}

static bool serve_read(sconn *c)
{
	static char bulk[1 << 20];
	ssize_t r = c->discard ? read(c->fd, bulk, sizeof(bulk))
			       : read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
	if (r <= 0)
		return r < 0 && errno == EAGAIN;
	if (c->discard)
		return true;
	c->len += (size_t)r;
	return serve_heads(c);
}

static _Noreturn void serve(void)
{
	int l = listen_loopback();
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			sconn *c = evs[i].data.ptr;
			if (!c) {
				int fd = accept4(l, NULL, NULL, SOCK_NONBLOCK);
				if (fd < 0 || !(c = calloc(1, sizeof(*c)))) {
					if (fd >= 0)
						close(fd);
					continue;
				}
				int one = 1;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				c->fd = fd;
				ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = c};
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				continue;
			}
			if (!serve_read(c)) {
				close(c->fd);
				free(c);
			}
		}
	}
}

/* ------------------------------------------------------------------ relay */

typedef struct dir { int from, to; } dir;

/* One direction of the relay: socket -> pipe -> socket, blocking, until an end of file. */
static void *relay_dir(void *arg)
{
	dir *d = arg;
	int p[2];
	if (pipe(p) < 0)
		return NULL;
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	for (;;) {
		ssize_t n = splice(d->from, NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE);
		if (n <= 0)
			break;
		while (n > 0) {
			ssize_t w = splice(p[0], NULL, d->to, NULL, (size_t)n, SPLICE_F_MOVE);
			if (w <= 0)
				goto out;
			n -= w;
		}
	}
out:
	shutdown(d->to, SHUT_WR);
	close(p[0]);
	close(p[1]);
	return NULL;
}

static void *relay_conn(void *arg)
{
	int *fds = arg;
	dir up = {fds[0], fds[1]}, down = {fds[1], fds[0]};
	pthread_t t;
	pthread_create(&t, NULL, relay_dir, &down);
	relay_dir(&up);
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);
	free(fds);
	return NULL;
}

static _Noreturn void relay(int port)
{
	int l = listen_loopback();
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		int *fds = malloc(2 * sizeof(int));
		if (!fds) {
			close(c);
			continue;
		}
		int one = 1;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fds[0] = c;
		fds[1] = dial(port);
		pthread_t t;
		pthread_create(&t, NULL, relay_conn, fds);
		pthread_detach(t);
	}
}

/* ------------------------------------------------------------------ clients */

static int send_bulk(int port, long long bytes, int proxy)
{
	int fd = proxy ? tunnel(port, proxy) : dial(port);
	static char buf[1 << 20];
	memset(buf, 'x', sizeof(buf));
	double t0 = now();
	long long left = bytes;
	while (left > 0) {
		ssize_t w = write(fd, buf, left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf));
		if (w <= 0) {
			perror("write");
			return 1;
		}
		left -= w;
	}
	shutdown(fd, SHUT_WR);
	char c;
	while (read(fd, &c, 1) > 0) {
	}
	double t = now() - t0;
	printf("%.0f\n", bytes / t / 1e6);
	close(fd);
	return 0;
}

static int g_port, g_proxy;
static double g_secs;
typedef struct { long n; double *lat; long cap; } wres;

static void *opener(void *arg)
{
	wres *r = arg;
	double end = now() + g_secs;
	while (now() < end) {
		double t0 = now();
		int fd = tunnel(g_port, g_proxy);
		small_exchange(fd);
		close(fd);
		double t = now() - t0;
		if (r->n < r->cap)
			r->lat[r->n] = t;
		r->n++;
	}
	return NULL;
}

/* Prints p50 and p99 of n latencies (seconds) in ms, after `prefix`. */
static void print_pct(const char *prefix, double *lat, long n)
{
	if (n <= 0) {
		printf("%s0 0\n", prefix);
		return;
	}
	qsort(lat, (size_t)n, sizeof(double), cmp_double);
	printf("%s%.3f %.3f\n", prefix, lat[n / 2] * 1e3, lat[n * 99 / 100] * 1e3);
}

static int open_rate(int workers)
{
	enum { CAP = 1000000 };
	pthread_t th[64];
	wres r[64];
	for (int i = 0; i < workers; i++) {
		r[i] = (wres){0, calloc(CAP, sizeof(double)), CAP};
		if (!r[i].lat)
			return 1;
		pthread_create(&th[i], NULL, opener, &r[i]);
	}
	long total = 0, nl = 0;
	double *all = calloc((size_t)workers * CAP, sizeof(double));
	if (!all)
		return 1;
	for (int i = 0; i < workers; i++) {
		pthread_join(th[i], NULL);
		total += r[i].n;
		for (long k = 0; k < r[i].n && k < r[i].cap; k++)
			all[nl++] = r[i].lat[k];
	}
	char rate[32];
	snprintf(rate, sizeof(rate), "%.0f ", total / g_secs);
	print_pct(rate, all, nl);
	return 0;
}

static int ping(int port, int proxy, long n)
{
	double *lat = calloc((size_t)n, sizeof(double));
	if (!lat)
		return 1;
	int fd = tunnel(port, proxy);
	for (long i = 0; i < n; i++) {
		double t0 = now();
		small_exchange(fd);
		lat[i] = now() - t0;
	}
	close(fd);
	print_pct("", lat, n);
	return 0;
}

static int hold(int port, int proxy, int n)
{
	for (int i = 0; i < n; i++)
		tunnel(port, proxy);
	printf("held\n");
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0) {
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		serve();
	if (argc >= 3 && strcmp(argv[1], "relay") == 0)
		relay(atoi(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "send") == 0)
		return send_bulk(atoi(argv[2]), atoll(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	if (argc >= 6 && strcmp(argv[1], "open") == 0) {
		g_port = atoi(argv[2]);
		g_proxy = atoi(argv[3]);
		g_secs = atof(argv[4]);
		return open_rate(atoi(argv[5]) > 64 ? 64 : atoi(argv[5]));
	}
	if (argc >= 5 && strcmp(argv[1], "ping") == 0)
		return ping(atoi(argv[2]), atoi(argv[3]), atol(argv[4]));
	if (argc >= 5 && strcmp(argv[1], "hold") == 0)
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: see the comment at the top of bench/proxy_bench.c\n");
	return 2;
}
