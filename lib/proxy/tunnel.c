/*
 * The client side of a CONNECT tunnel: what `owsbx connect` runs for ssh.  Relays one
 * connection's bytes through the proxy; it checks no site (the proxy does).
 */
#include <stdio.h>
#include <string.h>

#include "netio.h"
#include "proxy.h"

int ows_proxy_tunnel(const char *proxy_host, int proxy_port, const char *host, int port,
		     int in_fd, int out_fd, ows_error *err)
{
	if (!proxy_host || !host || port < 1 || port > 65535 || proxy_port < 1 || proxy_port > 65535)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "give HOST PORT and the proxy's port",
				 "bad tunnel arguments");
	char h[OWS__HOST_MAX];
	int kind = ows__host_normalize(host, strlen(host), h);
	if (kind < 0)
		return ows__fail(err, OWS_EINVAL, 0, host, NULL, "not a host name or address");
	ows__sock s;
	int rc = ows__tcp_connect_blocking(proxy_host, proxy_port, &s, err);
	if (rc < 0)
		return rc;
	char req[600];
	bool v6 = kind == OWS__HOST_IPV6;
	int n = snprintf(req, sizeof(req), "CONNECT %s%s%s:%d HTTP/1.1\r\nHost: %s%s%s:%d\r\n\r\n",
			 v6 ? "[" : "", h, v6 ? "]" : "", port, v6 ? "[" : "", h, v6 ? "]" : "", port);
	for (int off = 0; off < n;) {
		long w = ows__sock_send(s, req + off, (size_t)(n - off));
		if (w < 0) {
			ows__sock_close(s);
			return ows__fail(err, OWS_ESYS, (int)-w, "send", NULL, "cannot talk to the proxy");
		}
		off += (int)w;
	}
	/* the answer's head, byte counts bounded; what follows it is the tunnel's */
	char buf[16384];
	size_t len = 0;
	char *end = NULL;
	while (!end && len < sizeof(buf) - 1) {
		long r = ows__sock_recv(s, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (!end) {
		ows__sock_close(s);
		return ows__fail(err, OWS_ESYS, 0, proxy_host, "is it an owsbx proxy?",
				 "the proxy closed without an answer");
	}
	size_t head = (size_t)(end - buf) + 4;
	if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0) {
		/* the proxy's own words: the first line of the body, else the status */
		char what[240];
		const char *body = buf + head;
		const char *nl = strchr(body, '\n');
		if (*body)
			snprintf(what, sizeof(what), "%.*s", nl ? (int)(nl - body) : 200, body);
		else
			snprintf(what, sizeof(what), "%.*s", (int)strcspn(buf, "\r"), buf);
		ows__sock_close(s);
		return ows__fail(err, OWS_EPERM, 0, host, "ask the person to allow the site",
				 "%s", what);
	}
	rc = ows__relay_stdio(s, in_fd, out_fd, buf + head, len - head, err);
	ows__sock_close(s);
	return rc;
}
