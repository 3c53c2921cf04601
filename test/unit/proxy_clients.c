/*
 * The host's one proxy and its clients (lib/proxy/proxy.h, ows__pxc_*), over real
 * loopback sockets, without a sandbox: two clients share one proxy (one set
 * of threads) and keep their own lists, sources and refusals; a listener
 * adopted for a call tells that call's refusals to it alone; a call's end
 * closes its listener and frees its port; call ports go round; the last
 * client's end stops the proxy's threads.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "tap.h"
#include "../selfcount.h"

/* A listener on 127.0.0.1, any port: *port says which. */
static int listener(int *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 16) != 0 ||
	    getsockname(s, (struct sockaddr *)&sa, &len) != 0)
		bail_out("listener: %s", strerror(errno));
	*port = ntohs(sa.sin_port);
	return s;
}

/* The status line's code of a plain request for http://HOST/ through 127.0.0.1:port; -1: none. */
static int request(int port, const char *host)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {10, 0};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(s);
		return -1;
	}
	char req[512], buf[64] = "";
	int n = snprintf(req, sizeof(req), "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", host, host);
	ssize_t got = write(s, req, (size_t)n) == n ? read(s, buf, sizeof(buf) - 1) : -1;
	close(s);
	if (got < 12)
		return -1;
	buf[got] = '\0';
	return atoi(buf + 9);
}

/*
 * A plain request for http://127.0.0.1:up/ through 127.0.0.1:port, answered
 * by this process on the upstream listener `ul`: the code the client gets.
 */
static int request_upstream(int port, int ul, int up)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {10, 0};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(ul, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char req[256], buf[512] = "";
	int n = snprintf(req, sizeof(req), "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", up);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || write(s, req, (size_t)n) != n) {
		close(s);
		return -1;
	}
	int u = accept(ul, NULL, NULL); /* the proxy, on the client's behalf */
	static const char answer[] = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
	if (u >= 0) {
		setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (read(u, buf, sizeof(buf)) > 0 && write(u, answer, sizeof(answer) - 1) < 0)
			diag("the proxy went away before the answer");
		close(u);
	}
	ssize_t got = read(s, buf, sizeof(buf) - 1);
	close(s);
	if (got < 12)
		return -1;
	buf[got] = '\0';
	return atoi(buf + 9);
}

static char *blocked(ows__pxc *cl, int64_t call)
{
	char *out = NULL;
	if (ows__pxc_blocked_json(cl, 0, call, &out, NULL) < 0)
		bail_out("blocked_json");
	return out;
}

static bool names(const char *json, const char *host)
{
	char want[300];
	snprintf(want, sizeof(want), "\"host\":\"%s\"", host);
	return json && strstr(json, want) != NULL;
}

int main(void)
{
	int t0 = self_threads();
	ows__pxc *a = NULL, *b = NULL;
	ows_error err;
	ows_error_clear(&err);
	if (ows__pxc_open(&a, &err) < 0 || ows__pxc_open(&b, &err) < 0)
		bail_out("open: %s", err.what);
	int t2 = self_threads();
	ok(t2 - t0 <= 5, "two clients cost one proxy's threads (%d -> %d)", t0, t2);

	ok(ows__pxc_allow(a, "owstest-a.invalid:80", "policy", NULL) == 0 &&
		   ows__pxc_allow(a, "@code-hosting", "machine", NULL) == 0 &&
		   ows__pxc_allow(b, "owstest-b.invalid:80", "session", NULL) == 0,
	   "each client gets its own list");
	ok(ows__pxc_allow(a, "not a pattern!", "policy", NULL) == OWS_EINVAL,
	   "a bad pattern is refused");

	int pa = 0, pb = 0, pc = 0;
	int la = listener(&pa), lb = listener(&pb), lc = listener(&pc);
	ok(ows__pxc_adopt(a, la, 0, 0, NULL) == 0 && ows__pxc_adopt(b, lb, 0, 0, NULL) == 0,
	   "each client serves a listener of its own");
	int call_port = ows__pxc_port_take(a);
	ok(call_port == OWS__PROXY_PORT_INSIDE + 1, "the first call port is 47801 (%d)", call_port);
	ok(ows__pxc_adopt(a, lc, 7, call_port, NULL) == 0, "and a listener for its call 7");

	is_int(request(pb, "owstest-a.invalid"), 403, "b refuses what only a lists");
	is_int(request(pa, "owstest-b.invalid"), 403, "a refuses what only b lists");
	is_int(request(pc, "owstest-c.invalid"), 403, "a refuses an unlisted site to call 7");
	int up = 0, ul = listener(&up);
	char own[64];
	snprintf(own, sizeof(own), "127.0.0.1:%d", up);
	ows__pxc_allow(a, own, "session", NULL);
	is_int(request_upstream(pa, ul, up), 204, "a lets a site it lists through");
	is_int(request_upstream(pb, ul, up), 403, "b, which does not list it, refuses it");
	close(ul);

	char *ja = blocked(a, OWS__PXC_ALL), *jb = blocked(b, OWS__PXC_ALL);
	ok(names(ja, "owstest-b.invalid") && names(ja, "owstest-c.invalid") &&
		   !names(ja, "owstest-a.invalid"),
	   "a's blocked log: its own refusals, all calls merged");
	ok(names(jb, "owstest-a.invalid") && names(jb, "127.0.0.1") && !names(jb, "owstest-b.invalid") &&
		   !names(jb, "owstest-c.invalid"),
	   "b's: its own only");
	free(ja);
	free(jb);
	char *j7 = blocked(a, 7), *j0 = blocked(a, 0);
	ok(names(j7, "owstest-c.invalid") && !names(j7, "owstest-b.invalid"),
	   "call 7's list: what came through its listener, only");
	ok(names(j0, "owstest-b.invalid") && !names(j0, "owstest-c.invalid"),
	   "the session's listener's list: not call 7's");
	free(j7);
	free(j0);

	ows__pxc_end_call(a, 7);
	is_int(request(pc, "owstest-c.invalid"), -1, "once call 7 ends its listener is closed");
	int next = ows__pxc_port_take(a);
	ok(next == OWS__PROXY_PORT_INSIDE + 2, "the next call port goes on round, not back (%d)", next);
	ows__pxc_port_drop(a, next, true);
	int after = ows__pxc_port_take(a);
	ok(after == OWS__PROXY_PORT_INSIDE + 3, "a port taken inside is skipped (%d)", after);
	ows__pxc_port_drop(a, after, false);
	int taken = 0;
	while (ows__pxc_port_take(a))
		taken++;
	is_int(taken, 98, "99 call ports in all, one held inside: 98 more");

	ows__verdict v;
	is_int(ows__pxc_check(a, "GitHub.com.", 443, &v, NULL) >= 0, 1, "check_site on a group's host");
	is_str(v.pattern, "github.com:443", "is matched by the group's entry, the host normalised");
	is_int(ows__pxc_check(b, "github.com", 443, &v, NULL), 0, "b does not list it");
	is_str(v.reason, "not listed", "and says so");
	is_str(v.allow, "github.com:443", "with what would allow it");
	is_int(ows__pxc_check(a, "127.0.0.1", 80, &v, NULL), 0, "an unlisted address is refused");
	is_int(ows__pxc_check(a, "bad host!", 80, &v, NULL), OWS_EINVAL, "a bad host is OWS_EINVAL");

	/* A deny entry wins over the group that lists the host, added before or after it. */
	ok(ows__pxc_allow(a, "!api.github.com", "session", NULL) == 0, "a deny entry is listed");
	is_int(ows__pxc_check(a, "api.github.com", 443, &v, NULL), 0, "a denied group host is refused");
	ok(strcmp(v.reason, "denied") == 0 && strcmp(v.pattern, "!api.github.com:*") == 0 && !v.allow[0],
	   "as denied, by its entry, with no allow entry suggested (%s, %s, '%s')", v.reason, v.pattern,
	   v.allow);
	ows__pxc_check(a, "github.com", 443, &v, NULL); /* may not resolve here: not refused as denied */
	ok(strcmp(v.pattern, "github.com:443") == 0 && strcmp(v.reason ? v.reason : "", "denied"),
	   "its neighbour in the group is not denied (%s)", v.reason ? v.reason : "allowed");
	ows__pxc_allow(a, "!owstest-d.invalid:80", "machine", NULL);
	ows__pxc_allow(a, "owstest-d.invalid:80", "session", NULL);
	is_int(ows__pxc_check(a, "owstest-d.invalid", 80, &v, NULL), 0, "allowed after its deny: refused");
	is_str(v.reason, "denied", "as denied");
	ows__pxc_disallow(a, "owstest-d.invalid:80", NULL);
	ows__pxc_disallow(a, "!owstest-d.invalid:80", NULL);
	ows__pxc_allow(a, "!owstest-a.invalid", "machine", NULL);
	is_int(request(pa, "owstest-a.invalid"), 403, "the proxy refuses a listed site once denied");
	char *jd = blocked(a, 0);
	ok(jd && strstr(jd, "\"host\":\"owstest-a.invalid\",\"port\":80,") &&
		   strstr(jd, "\"reason\":\"denied\",\"denied_by\":\"!owstest-a.invalid:*\"}") &&
		   !strstr(jd, "\"allow\":\"owstest-a.invalid"),
	   "its blocked entry says denied, by which entry, and suggests no allow: %s", jd);
	free(jd);
	ows__pxc_disallow(a, "!owstest-a.invalid:*", NULL);
	ows__pxc_disallow(a, "!api.github.com", NULL);
	ows__pxc_check(a, "api.github.com", 443, &v, NULL);
	is_str(v.pattern, "api.github.com:443", "a deny removed, the group's entry covers it again");

	ows__strv pats = {0}, srcs = {0};
	ows__pxc_sites(a, &pats, &srcs, NULL);
	ok(pats.len == 3 && strcmp(pats.v[0], "owstest-a.invalid:80") == 0 &&
		   strcmp(srcs.v[0], "policy") == 0 && strcmp(pats.v[1], "@code-hosting") == 0 &&
		   strcmp(srcs.v[1], "machine") == 0 && strcmp(srcs.v[2], "session") == 0,
	   "a's sites as listed, with their sources");
	ows__strv_free(&pats);
	ows__strv_free(&srcs);
	ows__pxc_disallow(a, "@code-hosting", NULL);
	ows__pxc_sites(a, &pats, &srcs, NULL);
	is_int((int)pats.len, 2, "a group removed leaves the sites");
	ows__strv_free(&pats);
	ows__strv_free(&srcs);

	ows__pxc_close(a);
	is_int(request(pb, "owstest-a.invalid"), 403, "b is served on after a's end");
	is_int(request(pa, "owstest-a.invalid"), -1, "a's listener closed with it");
	ows__pxc_close(b);
	is_int(self_threads_settled(t0), t0, "the last client's end stops the proxy's threads");
	return done_testing();
}
