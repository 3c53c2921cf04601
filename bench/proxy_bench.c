/*
 * Load generator for bench/proxy.sh.
 *   proxy_bench sink                         a discard server; prints its port
 *   proxy_bench send PORT BYTES [PROXYPORT]  bulk send; prints MB/s
 *   proxy_bench open PORT PROXYPORT SECS W   tunnels opened per second by W workers,
 *                                            each opening, checking the 200, closing;
 *                                            prints rate and median latency (ms)
 *   proxy_bench hold PORT PROXYPORT N        opens N tunnels, prints "held", waits on stdin
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

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

/* CONNECT through the proxy; returns the tunnel or exits. */
static int tunnel(int port, int proxy)
{
	int fd = dial(proxy);
	char req[128], buf[512];
	int n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
			 port, port);
	if (write(fd, req, (size_t)n) != n)
		exit(1);
	size_t len = 0;
	while (len < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0) {
			fprintf(stderr, "tunnel: closed\n");
			exit(1);
		}
		len += (size_t)r;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	if (!strstr(buf, " 200")) {
		fprintf(stderr, "tunnel refused: %s\n", buf);
		exit(1);
	}
	return fd;
}

static int sink(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	bind(l, (struct sockaddr *)&a, sizeof(a));
	listen(l, 4096);
	getsockname(l, (struct sockaddr *)&a, &al);
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	static char buf[1 << 20];
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == l) {
				int c = accept(l, NULL, NULL);
				if (c >= 0) {
					ev = (struct epoll_event){.events = EPOLLIN, .data.fd = c};
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				continue;
			}
			if (read(fd, buf, sizeof(buf)) <= 0)
				close(fd);
		}
	}
}

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
		double t = now() - t0;
		close(fd);
		if (r->n < r->cap)
			r->lat[r->n] = t;
		r->n++;
	}
	return NULL;
}

static int open_rate(int workers)
{
	pthread_t th[64];
	wres r[64];
	for (int i = 0; i < workers; i++) {
		r[i] = (wres){0, calloc(1000000, sizeof(double)), 1000000};
		pthread_create(&th[i], NULL, opener, &r[i]);
	}
	long total = 0, nl = 0;
	double *all = calloc(64000000 / 8, sizeof(double));
	for (int i = 0; i < workers; i++) {
		pthread_join(th[i], NULL);
		total += r[i].n;
		for (long k = 0; k < r[i].n && k < r[i].cap && nl < 64000000 / 8; k++)
			all[nl++] = r[i].lat[k];
	}
	qsort(all, (size_t)nl, sizeof(double), cmp_double);
	printf("%.0f %.3f %.3f\n", total / g_secs, all[nl / 2] * 1e3, all[nl * 99 / 100] * 1e3);
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (argc >= 2 && strcmp(argv[1], "sink") == 0)
		return sink();
	if (argc >= 4 && strcmp(argv[1], "send") == 0)
		return send_bulk(atoi(argv[2]), atoll(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	if (argc >= 6 && strcmp(argv[1], "open") == 0) {
		g_port = atoi(argv[2]);
		g_proxy = atoi(argv[3]);
		g_secs = atof(argv[4]);
		return open_rate(atoi(argv[5]) > 64 ? 64 : atoi(argv[5]));
	}
	if (argc >= 5 && strcmp(argv[1], "hold") == 0) {
		int n = atoi(argv[4]);
		for (int i = 0; i < n; i++)
			tunnel(atoi(argv[2]), atoi(argv[3]));
		printf("held\n");
		fflush(stdout);
		char c;
		while (read(0, &c, 1) > 0) {
		}
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of bench/proxy_bench.c\n");
	return 2;
}
