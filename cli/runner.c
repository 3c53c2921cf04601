/*
 * `owsbx runner`: the tool runner of an OpenShell sandbox (spec 002).  It is
 * the sandbox's main command, and OpenShell's Docker driver ends the sandbox
 * when the main command exits (crates/openshell-driver-docker/src/lib.rs: "main-process
 * exit is terminal"), so it stays up, reaping what it inherits, until the
 * sandbox is stopped (SIGTERM) or interrupted.  `sandbox exec` needs nothing
 * else of it: OpenShell's supervisor runs each command itself.
 *
 * `owsbx runner --probe ...` is the proof from inside the sandbox, run by the
 * host through `sandbox exec`: one line per check, "ok|fail<TAB>name<TAB>detail",
 * then "end".  It decides nothing; the host judges the lines and refuses the
 * session on a failure or a missing line.  Only libc: the runner is built
 * static for Linux, to run in an image that has none of the host's libraries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "args.h"
#include "os.h"

/* How long a connection from inside may take to be refused or answered. */
#define PROBE_TIMEOUT_MS 5000

static void report(bool ok, const char *name, const char *what, const char *detail)
{
	printf("%s\t%s %s\t%s\n", ok ? "ok" : "fail", name, what, detail);
}

/* A file made and removed in `dir`, and the folder listed. */
static void check_rw(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/.owsbx-proof-%ld", dir, (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int e = errno;
	bool wrote = fd >= 0 && write(fd, "x", 1) == 1;
	if (fd >= 0)
		close(fd);
	bool removed = fd >= 0 && unlink(path) == 0;
	DIR *d = opendir(dir);
	if (d)
		closedir(d);
	report(wrote && removed && d, "read-write", dir,
	       fd < 0 ? strerror(e) : !wrote || !removed ? "could not write and remove a file"
			: !d ? "not listable" : "a file written and removed");
}

/* The folder listed, and no file can be made in it. */
static void check_ro(const char *dir)
{
	DIR *d = opendir(dir);
	int le = errno;
	if (d)
		closedir(d);
	char path[4096];
	snprintf(path, sizeof(path), "%s/.owsbx-proof-%ld", dir, (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	report(d && fd < 0, "read-only", dir,
	       !d ? strerror(le) : fd >= 0 ? "a file could be created" : "listed, not writable");
}

/* Not there, or not readable: a file of the person's home the session must not have. */
static void check_absent(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	if (fd >= 0)
		close(fd);
	report(fd < 0, "not readable", path, fd < 0 ? strerror(e) : "it could be opened");
}

static bool parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : 0;
	if (!colon || n == 0 || n >= sizeof(host))
		return false;
	memcpy(host, s, n);
	host[n] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)port);
	return *end == '\0' && port > 0 && port < 65536 && inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

/* A TCP connection to `sa`, within PROBE_TIMEOUT_MS: the socket, or -1 with errno. */
static int connect_to(const struct sockaddr_in *sa)
{
	/* fcntl, not SOCK_NONBLOCK: the CLI this is part of builds for macOS too */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		return fd;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int err = errno, e = 0;
	socklen_t len = sizeof(e);
	if (err == EINPROGRESS && poll(&p, 1, PROBE_TIMEOUT_MS) == 1 &&
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0)
		return fd;
	close(fd);
	errno = err == EINPROGRESS ? (e ? e : ETIMEDOUT) : err;
	return -1;
}

/* A listener the host opened outside the sandbox must not be reachable. */
static void check_unreachable(const char *addr)
{
	struct sockaddr_in sa;
	if (!parse_addr(addr, &sa)) {
		report(false, "network direct", addr, "not an IPv4 address and port");
		return;
	}
	int fd = connect_to(&sa);
	int e = errno;
	if (fd >= 0)
		close(fd);
	report(fd < 0, "network direct", addr, fd < 0 ? strerror(e) : "reached the host");
}

/* The proxy the sandbox's variables name, as http://ADDR:PORT; NULL when none is named. */
static const char *proxy_var(void)
{
	static const char *const names[] = {"HTTPS_PROXY", "https_proxy", "ALL_PROXY",
					    "all_proxy", "HTTP_PROXY", "http_proxy"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]);
		if (v && v[0])
			return v;
	}
	return NULL;
}

/* The proxy's answer to CONNECT target: its status code, 0 when it did not answer. */
static int proxy_status(int fd, const char *target)
{
	char req[600], buf[256];
	int n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (n <= 0 || (size_t)n >= sizeof(req) || write(fd, req, (size_t)n) != n)
		return 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, PROBE_TIMEOUT_MS) != 1)
		return 0;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	int status = 0;
	return sscanf(buf, "HTTP/1.%*d %d", &status) == 1 ? status : 0;
}

/* Through the sandbox's proxy, if it names one, `target` must be refused: 403. */
static void check_refused(const char *target)
{
	const char *v = proxy_var();
	if (!v) {
		report(true, "network refuses", target, "no proxy is named inside");
		return;
	}
	const char *addr = strncmp(v, "http://", 7) == 0 ? v + 7 : v;
	char hostport[128];
	snprintf(hostport, sizeof(hostport), "%.*s", (int)strcspn(addr, "/"), addr);
	struct sockaddr_in sa;
	if (!parse_addr(hostport, &sa)) {
		report(false, "network refuses", target, "the proxy is not named by an address");
		return;
	}
	int fd = connect_to(&sa);
	if (fd < 0) {
		report(true, "network refuses", target, "the proxy cannot be reached");
		return;
	}
	int st = proxy_status(fd, target);
	close(fd);
	char detail[64];
	snprintf(detail, sizeof(detail), "the proxy answered %d", st);
	/* 403 is a refusal (OpenShell's proxy and ours answer a denied CONNECT so); 200 let it
	 * through, and 502 tried to: the host is on its list. */
	report(st == 403, "network refuses", target, detail);
}

static int probe(const owsbx_args *a)
{
	for (size_t i = 0; i < a->probe.nrw; i++)
		check_rw(a->probe.rw[i]);
	for (size_t i = 0; i < a->probe.nro; i++)
		check_ro(a->probe.ro[i]);
	for (size_t i = 0; i < a->probe.nabsent; i++)
		check_absent(a->probe.absent[i]);
	if (a->probe.reach)
		check_unreachable(a->probe.reach);
	if (a->probe.refused)
		check_refused(a->probe.refused);
	puts("end");
	return fflush(stdout) == 0 ? 0 : 1;
}

/* Stays up until SIGTERM, SIGINT or SIGHUP, reaping any child it inherits. */
static int stay_up(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
		perror("owsbx runner: sigprocmask");
		return 1;
	}
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig != SIGCHLD)
			return 0;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

int owsbx_os_runner(const owsbx_args *a)
{
	return a->probe.on ? probe(a) : stay_up();
}
