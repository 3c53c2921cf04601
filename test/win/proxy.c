/*
 * The allow-list proxy on Winsock (lib/win/netio.c), under Wine or Windows:
 * a tunnel to a listed echo server on loopback carries bytes both ways, an
 * unlisted site gets a 403 naming it, garbage a 400, the blocked log has it,
 * and a site allowed at run time is reachable at once.
 */
#include <winsock2.h>
#include <ws2tcpip.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owsandbox.h"
#include "wtap.h"

static SOCKET echo_listener;

static DWORD WINAPI echo_main(LPVOID arg)
{
	(void)arg;
	for (;;) {
		SOCKET c = accept(echo_listener, NULL, NULL);
		if (c == INVALID_SOCKET)
			return 0;
		char buf[4096];
		int n;
		while ((n = recv(c, buf, sizeof(buf), 0)) > 0)
			send(c, buf, n, 0);
		closesocket(c);
	}
}

static SOCKET dial(int port)
{
	SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((u_short)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	DWORD ms = 5000;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, (const char *)&ms, sizeof(ms));
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) != 0) {
		closesocket(s);
		return INVALID_SOCKET;
	}
	return s;
}

/* Sends `req`, reads the answer's head (and what came with it) into buf. */
static int ask(int port, const char *req, char *buf, int cap, SOCKET *keep)
{
	SOCKET s = dial(port);
	if (s == INVALID_SOCKET)
		return -1;
	send(s, req, (int)strlen(req), 0);
	int len = 0;
	while (len < cap - 1) {
		int n = recv(s, buf + len, cap - 1 - len, 0);
		if (n <= 0)
			break;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") && (keep || strstr(buf, "Connection: close") == NULL))
			break;
	}
	buf[len] = '\0';
	if (keep)
		*keep = s;
	else
		closesocket(s);
	return len;
}

int main(void)
{
	wtap_init();
	WSADATA wd;
	WSAStartup(MAKEWORD(2, 2), &wd);
	echo_listener = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int alen = sizeof(a);
	bind(echo_listener, (struct sockaddr *)&a, sizeof(a));
	listen(echo_listener, 16);
	getsockname(echo_listener, (struct sockaddr *)&a, &alen);
	int echo_port = ntohs(a.sin_port);
	CreateThread(NULL, 0, echo_main, NULL, 0, NULL);

	char listed[64];
	snprintf(listed, sizeof(listed), "127.0.0.1:%d", echo_port);
	const char *hosts[] = {listed, NULL};
	ows_proxy_options o;
	ows_proxy_options_init(&o);
	o.hosts = hosts;
	ows_error err;
	ows_error_clear(&err);
	ows_proxy *px = NULL;
	int rc = ows_proxy_start(&o, &px, &err);
	ok(rc == 0, "the proxy starts (%s)", err.what);
	if (rc != 0)
		return wtap_done();
	int port = ows_proxy_port(px);
	ok(port >= 47800 && port <= 47899, "it listens in 47800-47899 (%d)", port);

	char req[256], buf[4096];
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n", echo_port);
	SOCKET t = INVALID_SOCKET;
	ask(port, req, buf, sizeof(buf), &t);
	ok(strncmp(buf, "HTTP/1.1 200 Connection established\r\n\r\n", 39) == 0,
	   "a listed site: 200 Connection established");
	send(t, "ping", 4, 0);
	int n = recv(t, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	ok(strcmp(buf, "ping") == 0, "the tunnel carries bytes both ways (got '%s')", buf);
	closesocket(t);

	ask(port, "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n", buf, sizeof(buf), NULL);
	ok(strncmp(buf, "HTTP/1.1 403", 12) == 0 && strstr(buf, "blocked.test:443"),
	   "an unlisted site: 403 naming it");
	ask(port, "HELLO\r\n\r\n", buf, sizeof(buf), NULL);
	ok(strncmp(buf, "HTTP/1.1 400", 12) == 0, "garbage: 400");

	char *json = NULL;
	ows_proxy_blocked_json(px, 0, &json, NULL);
	ok(json && strstr(json, "\"host\":\"blocked.test\",\"port\":443,\"count\":1"),
	   "the blocked log has it (%s)", json ? json : "NULL");
	ows_free(json);

	ok(ows_proxy_disallow(px, listed, NULL) == 0, "remove the site at run time");
	ask(port, req, buf, sizeof(buf), NULL);
	ok(strncmp(buf, "HTTP/1.1 403", 12) == 0, "refused at once");
	ok(ows_proxy_allow(px, listed, NULL) == 0, "allow it again");
	ask(port, req, buf, sizeof(buf), &t);
	ok(strncmp(buf, "HTTP/1.1 200", 12) == 0, "reachable at once");
	closesocket(t);

	ows_proxy_stop(px);
	ok(1, "the proxy stops");
	closesocket(echo_listener);
	return wtap_done();
}
