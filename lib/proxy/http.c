/*
 * The proxy's request parser: a request line and headers, strictly.  What it
 * accepts it also rewrites for the upstream, so that what the allow list
 * judged is exactly what is sent (one Host, no hop-by-hop headers, one
 * framing of the body).  Fuzzed by test/fuzz/proxy_fuzz.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy.h"

#define MAX_HEADERS 128

bool ows__http_is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int bad(ows__http_req *req, const char *why)
{
	free(req->upstream_head);
	req->upstream_head = NULL;
	req->error = why;
	return -1;
}

void ows__http_req_release(ows__http_req *req)
{
	if (req) {
		free(req->upstream_head);
		req->upstream_head = NULL;
	}
}

/* "host:port" or "[v6]:port" (port optional when def_port > 0). */
static int parse_authority(const char *s, size_t len, int def_port, ows__http_req *req)
{
	const char *port = NULL;
	size_t hlen = len;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return -1;
		hlen = (size_t)(close - s) + 1;
		if (hlen < len) {
			if (s[hlen] != ':')
				return -1;
			port = s + hlen + 1;
		}
	} else {
		const char *colon = memchr(s, ':', len);
		if (colon) {
			hlen = (size_t)(colon - s);
			port = colon + 1;
		}
	}
	if (port) {
		size_t plen = len - (size_t)(port - s);
		if (plen == 0 || plen > 5)
			return -1;
		int p = 0;
		for (size_t i = 0; i < plen; i++) {
			if (port[i] < '0' || port[i] > '9')
				return -1;
			p = p * 10 + (port[i] - '0');
		}
		if (p < 1 || p > 65535)
			return -1;
		req->port = p;
	} else {
		if (def_port <= 0)
			return -1;
		req->port = def_port;
	}
	if (memchr(s, '@', hlen))
		return -1;
	req->host_kind = ows__host_normalize(s, hlen, req->host);
	return req->host_kind < 0 ? -1 : 0;
}

bool ows__http_name_is(const char *name, size_t nlen, const char *want)
{
	return strlen(want) == nlen && strncasecmp(name, want, nlen) == 0;
}

/* Does a comma-separated header value hold `token` (case-insensitive)? */
static bool has_token(const char *v, size_t vlen, const char *token)
{
	size_t tl = strlen(token);
	size_t i = 0;
	while (i < vlen) {
		while (i < vlen && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t start = i;
		while (i < vlen && v[i] != ',')
			i++;
		size_t end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (end - start == tl && strncasecmp(v + start, token, tl) == 0)
			return true;
	}
	return false;
}

/* Appends to a buffer that was sized to fit; a full buffer is noticed at the end. */
OWS__PRINTF(4, 5) static void append(char *out, size_t *o, size_t cap, const char *fmt, ...)
{
	if (*o >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + *o, cap - *o, fmt, ap);
	va_end(ap);
	*o = n < 0 ? cap : (*o + (size_t)n > cap ? cap : *o + (size_t)n);
}

/*
 * Where a request is parsed: a proxy request (absolute http:// URL or
 * CONNECT), or one inside a tunnel whose TLS the proxy ended for `host`:`port`
 * (origin form, or an https:// URL naming that authority).
 */
typedef struct where {
	const char *host; /* NULL: a proxy request */
	int port;
} where;

/* Does the authority s[0..len) (port `def_port` when it names none) name w's? */
static bool names_target(const char *s, size_t len, int def_port, const where *w)
{
	ows__http_req a;
	return parse_authority(s, len, def_port, &a) == 0 && a.host_kind == OWS__HOST_NAME &&
	       a.port == w->port && strcmp(a.host, w->host) == 0;
}

/* The request line's target: req's host and port, and the path to send. */
static int parse_target(const char *target, size_t tlen, const where *w, ows__http_req *req,
			const char **path, size_t *path_len)
{
	*path = "/";
	*path_len = 1;
	if (w->host) {
		if (req->is_connect)
			return bad(req, "CONNECT inside a tunnel");
		snprintf(req->host, sizeof(req->host), "%s", w->host);
		req->host_kind = OWS__HOST_NAME;
		req->port = w->port;
		if (target[0] == '/') {
			*path = target;
			*path_len = tlen;
			return 0;
		}
		if (tlen < 8 || strncasecmp(target, "https://", 8) != 0)
			return bad(req, "a request in a tunnel needs a path or an https:// URL");
	} else if (req->is_connect) {
		return parse_authority(target, tlen, 0, req) < 0 ? bad(req, "CONNECT needs host:port")
								 : 0;
	} else if (tlen < 7 || strncasecmp(target, "http://", 7) != 0) {
		if (tlen >= 8 && strncasecmp(target, "https://", 8) == 0)
			return bad(req, "https:// goes through CONNECT, not a plain request");
		return bad(req, "a proxy request needs an absolute http:// URL");
	}
	size_t skip = w->host ? 8 : 7;
	const char *auth = target + skip;
	size_t alen = 0;
	while (skip + alen < tlen && auth[alen] != '/' && auth[alen] != '?' && auth[alen] != '#')
		alen++;
	if (w->host && !names_target(auth, alen, 443, w))
		return bad(req, "the URL names another host than the tunnel's");
	if (!w->host && parse_authority(auth, alen, 80, req) < 0)
		return bad(req, "the URL has no valid host");
	if (skip + alen < tlen) {
		*path = auth + alen;
		*path_len = tlen - skip - alen;
	}
	return 0;
}

/* Where the head ends (CRLFCRLF included): 0 when more is needed, -1 when bad. */
static int head_end(const char *buf, size_t len, ows__http_req *req, size_t *end)
{
	size_t limit = len < OWS__HTTP_HEAD_MAX ? len : OWS__HTTP_HEAD_MAX;
	*end = 0;
	for (size_t k = 0; k < limit; k++) {
		if (buf[k] == '\n' && (k == 0 || buf[k - 1] != '\r'))
			return bad(req, "a line ends without CR LF");
		if (buf[k] == '\0')
			return bad(req, "a NUL byte in the request head");
		if (buf[k] == '\r' && k + 1 < limit && buf[k + 1] != '\n')
			return bad(req, "a CR without LF in the request head");
		if (k >= 3 && buf[k] == '\n' && buf[k - 1] == '\r' && buf[k - 2] == '\n' &&
		    buf[k - 3] == '\r') {
			*end = k + 1;
			return 1;
		}
	}
	return len >= OWS__HTTP_HEAD_MAX ? bad(req, "the request head is too large") : 0;
}

static int parse(const char *buf, size_t len, const where *w, ows__http_req *req)
{
	memset(req, 0, sizeof(*req));
	req->content_length = -1;
	size_t limit = len < OWS__HTTP_HEAD_MAX ? len : OWS__HTTP_HEAD_MAX;

	/* Fail fast on what is not a request line (a TLS hello, binary). */
	size_t i = 0;
	while (i < limit && ows__http_is_tchar((unsigned char)buf[i]))
		i++;
	if (i < limit && (buf[i] != ' ' || i == 0))
		return bad(req, "the request line does not start with a method");
	if (i >= sizeof(req->method))
		return bad(req, "the method is too long");

	size_t end;
	int r = head_end(buf, len, req, &end);
	if (r <= 0)
		return r;
	req->head_len = end;

	/* Request line. */
	const char *eol = memchr(buf, '\r', end);
	size_t mlen = i;
	memcpy(req->method, buf, mlen);
	req->method[mlen] = '\0';
	const char *target = buf + mlen + 1;
	const char *sp = memchr(target, ' ', (size_t)(eol - target));
	if (!sp || sp == target)
		return bad(req, "the request line has no target");
	size_t tlen = (size_t)(sp - target);
	for (size_t k = 0; k < tlen; k++)
		if ((unsigned char)target[k] <= 0x20 || (unsigned char)target[k] >= 0x7f)
			return bad(req, "the target has a character a URL cannot have");
	const char *ver = sp + 1;
	if (eol - ver != 8 || memcmp(ver, "HTTP/1.", 7) != 0 || (ver[7] != '0' && ver[7] != '1'))
		return bad(req, "not HTTP/1.0 or HTTP/1.1");
	req->version_minor = ver[7] - '0';

	const char *path;
	size_t path_len;
	req->is_connect = strcmp(req->method, "CONNECT") == 0;
	if (parse_target(target, tlen, w, req, &path, &path_len) < 0)
		return -1;
	bool path_needs_slash = path[0] != '/';

	/* Headers. */
	bool keep_alive = false, close = false, te_seen = false;
	int nheaders = 0, nhost = 0;
	size_t cap = end + 1024;
	char *out = req->is_connect ? NULL : malloc(cap);
	if (!req->is_connect && !out)
		return bad(req, "out of memory");
	req->upstream_head = out;
	size_t o = 0;
	int def_port = w->host ? 443 : 80;
	if (out) {
		char hostbuf[OWS__HOST_MAX + 16];
		bool v6 = req->host_kind == OWS__HOST_IPV6;
		if (req->port == def_port)
			snprintf(hostbuf, sizeof(hostbuf), "%s%s%s", v6 ? "[" : "", req->host, v6 ? "]" : "");
		else
			snprintf(hostbuf, sizeof(hostbuf), "%s%s%s:%d", v6 ? "[" : "", req->host,
				 v6 ? "]" : "", req->port);
		append(out, &o, cap, "%s %s%.*s HTTP/1.%d\r\nHost: %s\r\n",
				      req->method, path_needs_slash ? "/" : "", (int)path_len, path,
				      req->version_minor, hostbuf);
	}
	const char *p = eol + 2;
	while (p < buf + end - 2) {
		const char *le = memchr(p, '\r', (size_t)(buf + end - p));
		if (++nheaders > MAX_HEADERS)
			return bad(req, "too many headers");
		if (*p == ' ' || *p == '\t')
			return bad(req, "folded header lines are not accepted");
		const char *colon = p;
		while (colon < le && ows__http_is_tchar((unsigned char)*colon))
			colon++;
		if (colon == p || colon >= le || *colon != ':')
			return bad(req, "a header line is not NAME: value");
		size_t nlen = (size_t)(colon - p);
		const char *v = colon + 1;
		while (v < le && (*v == ' ' || *v == '\t'))
			v++;
		const char *ve = le;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		for (const char *c = v; c < ve; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				return bad(req, "a header value has a control character");
		size_t vlen = (size_t)(ve - v);
		bool drop = false;
		if (ows__http_name_is(p, nlen, "content-length")) {
			if (vlen == 0 || vlen > 15)
				return bad(req, "Content-Length is not a number");
			int64_t n = 0;
			for (size_t k = 0; k < vlen; k++) {
				if (v[k] < '0' || v[k] > '9')
					return bad(req, "Content-Length is not a number");
				n = n * 10 + (v[k] - '0');
			}
			if (req->content_length >= 0 && req->content_length != n)
				return bad(req, "two different Content-Length headers");
			req->content_length = n;
			drop = true; /* sent once, as parsed, at the end */
		} else if (ows__http_name_is(p, nlen, "transfer-encoding")) {
			if (te_seen || !ows__http_name_is(v, vlen, "chunked"))
				return bad(req, "only Transfer-Encoding: chunked is accepted");
			te_seen = true;
			req->chunked = true;
			drop = true; /* sent as "chunked", at the end */
		} else if (ows__http_name_is(p, nlen, "connection") || ows__http_name_is(p, nlen, "proxy-connection")) {
			close |= has_token(v, vlen, "close");
			keep_alive |= has_token(v, vlen, "keep-alive");
			drop = true;
		} else if (ows__http_name_is(p, nlen, "host")) {
			/* in a tunnel, a front end that routes by Host must route to the host verified */
			if (w->host && (++nhost > 1 || !names_target(v, vlen, 443, w)))
				return bad(req, "the Host header names another host than the tunnel's");
			drop = true;
		} else if (ows__http_name_is(p, nlen, "upgrade")) {
			req->upgrade = true;
			drop = true;
		} else if (ows__http_name_is(p, nlen, "keep-alive") ||
			   (nlen >= 6 && strncasecmp(p, "proxy-", 6) == 0) || /* ours, not theirs */
			   ows__http_name_is(p, nlen, "te") || ows__http_name_is(p, nlen, "trailer") ||
			   (w->host && ows__http_name_is(p, nlen, "accept-encoding"))) {
			drop = true;
		}
		if (out && !drop) {
			/* name, value: never longer than the line they came from */
			append(out, &o, cap, "%.*s: %.*s\r\n", (int)nlen, p, (int)vlen, v);
		}
		p = le + 2;
	}
	if (req->chunked && req->content_length >= 0)
		return bad(req, "both Content-Length and Transfer-Encoding");
	if (w->host && !nhost && req->version_minor == 1)
		return bad(req, "no Host header");
	req->close = close || (req->version_minor == 0 && !keep_alive);
	if (out) {
		if (req->content_length >= 0)
			append(out, &o, cap, "Content-Length: %lld\r\n", (long long)req->content_length);
		if (req->chunked)
			append(out, &o, cap, "Transfer-Encoding: chunked\r\n");
		if (w->host) /* the response is scrubbed as it comes: not compressed */
			append(out, &o, cap, "Accept-Encoding: identity\r\n");
		append(out, &o, cap, "Connection: %s\r\n\r\n",
				      req->close ? "close" : "keep-alive");
		if (o >= cap)
			return bad(req, "the rewritten head does not fit");
		req->upstream_head_len = o;
	}
	return 1;
}

int ows__http_parse(const char *buf, size_t len, ows__http_req *req)
{
	const where proxy = {NULL, 0};
	return parse(buf, len, &proxy, req);
}

int ows__http_parse_in_tunnel(const char *buf, size_t len, const char *host, int port,
			      ows__http_req *req)
{
	const where tunnel = {host, port};
	return parse(buf, len, &tunnel, req);
}

enum {
	CH_SIZE0, CH_SIZE, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
	CH_TRAILER_START, CH_TRAILER_LINE, CH_TRAILER_LF, CH_END_LF, CH_DONE,
};

#define CH_LINE_MAX 4096

bool ows__chunked_in_data(const ows__chunked *st)
{
	return st->state == CH_DATA && st->left > 0;
}

long ows__chunked_feed(ows__chunked *st, const char *buf, size_t len, bool *done)
{
	*done = false;
	size_t i = 0;
	while (i < len) {
		char c = buf[i];
		switch (st->state) {
		case CH_SIZE0:
		case CH_SIZE: {
			int h = ows__hexval(c);
			if (h >= 0) {
				if (++st->line > 15)
					return -1;
				st->left = st->left * 16 + (uint64_t)h;
				st->state = CH_SIZE;
			} else if (st->state == CH_SIZE && (c == ';' || c == ' ' || c == '\t')) {
				st->state = CH_EXT;
			} else if (st->state == CH_SIZE && c == '\r') {
				st->state = CH_SIZE_LF;
			} else {
				return -1;
			}
			i++;
			break;
		}
		case CH_EXT:
			if (c == '\r')
				st->state = CH_SIZE_LF;
			else if (c == '\n' || ++st->line > CH_LINE_MAX)
				return -1;
			i++;
			break;
		case CH_SIZE_LF:
			if (c != '\n')
				return -1;
			i++;
			st->line = 0;
			st->state = st->left ? CH_DATA : CH_TRAILER_START;
			break;
		case CH_DATA: {
			size_t n = len - i < st->left ? len - i : (size_t)st->left;
			i += n;
			st->left -= n;
			if (!st->left)
				st->state = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
			if (c != '\r')
				return -1;
			st->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			if (c != '\n')
				return -1;
			st->state = CH_SIZE0;
			st->line = 0;
			i++;
			break;
		case CH_TRAILER_START:
			st->line = 0;
			st->state = c == '\r' ? CH_END_LF : CH_TRAILER_LINE;
			if (c == '\n')
				return -1;
			i++;
			break;
		case CH_TRAILER_LINE:
			if (c == '\r')
				st->state = CH_TRAILER_LF;
			else if (c == '\n' || ++st->line > CH_LINE_MAX)
				return -1;
			i++;
			break;
		case CH_TRAILER_LF:
			if (c != '\n')
				return -1;
			st->state = CH_TRAILER_START;
			i++;
			break;
		case CH_END_LF:
			if (c != '\n')
				return -1;
			st->state = CH_DONE;
			i++;
			*done = true;
			return (long)i;
		default:
			*done = true;
			return (long)i;
		}
	}
	return (long)i;
}
