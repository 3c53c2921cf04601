/*
 * Credential injection's filters (lib/proxy/inject.c): the request side puts the
 * secret in the named header of each request head and nowhere else, however
 * the bytes arrive; what it cannot frame safely it refuses; the response
 * side turns every copy of the secret back into its placeholder, also one
 * split across reads.  test/sh/inject.sh attacks the whole path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/inject.h"
#include "tap.h"

static const char secret[] = "ghp_0123456789abcdefghijABCDEFGHIJklmnopqr";
#define SLEN (sizeof(secret) - 1)
static char ph[SLEN + 1];
static ows__inject *inj;

/* Feeds `in` in pieces of `step` bytes (0: whole); the output, or NULL when refused. */
static char *filter(const char *host, const char *in, size_t step, const char **why)
{
	ows__reqfilter *f = ows__reqfilter_new(inj, host, 443);
	char *out = NULL;
	size_t len = 0, cap = 0, n = strlen(in);
	int rc = 0;
	for (size_t off = 0; rc == 0 && off < n;) {
		size_t k = step && step < n - off ? step : n - off;
		rc = ows__reqfilter_feed(f, in + off, k, &out, &len, &cap);
		off += k;
	}
	if (why)
		*why = rc < 0 ? ows__reqfilter_error(f) : "";
	ows__reqfilter_free(f);
	if (rc < 0) {
		free(out);
		return NULL;
	}
	out = realloc(out, len + 1);
	out[len] = '\0';
	return out;
}

/* `text` with every "%s" replaced by `v` (the placeholder, or the secret), fresh. */
static char *with(const char *text, const char *v)
{
	char *s = malloc(strlen(text) * (strlen(v) + 1) + 1), *o = s;
	for (const char *p = text; *p;)
		if (p[0] == '%' && p[1] == 's') {
			o = stpcpy(o, v);
			p += 2;
		} else {
			*o++ = *p++;
		}
	*o = '\0';
	return s;
}

static void check_request(const char *desc, const char *fmt_in, const char *fmt_want)
{
	char *in = with(fmt_in, ph);
	char *whole = filter("api.example.com", in, 0, NULL);
	char *bytes = filter("api.example.com", in, 1, NULL);
	char *exp = with(fmt_want, secret);
	is_str(whole, exp, "%s", desc);
	is_str(bytes, exp, "%s, fed a byte at a time", desc);
	free(in);
	free(exp);
	free(whole);
	free(bytes);
}

static void check_refused(const char *desc, const char *in, const char *why_want)
{
	const char *why = NULL;
	char *out = filter("api.example.com", in, 0, &why);
	ok(out == NULL, "refused: %s", desc);
	ok(why && strstr(why, why_want), "  says why: %s (%s)", why_want, why ? why : "");
	free(out);
}

/* The scrubber's output for `in` fed in two pieces split at `cut`, then the end. */
static char *scrub(const char *in, size_t n, size_t cut, ows__reqfilter *rq)
{
	ows__scrub *s = ows__scrub_new(inj, "api.example.com", 443, rq);
	char *out = NULL;
	size_t len = 0, cap = 0;
	ows__scrub_feed(s, in, cut, false, &out, &len, &cap);
	ows__scrub_feed(s, in + cut, n - cut, false, &out, &len, &cap);
	ows__scrub_feed(s, NULL, 0, true, &out, &len, &cap);
	ows__scrub_free(s);
	out = realloc(out, len + 1);
	out[len] = '\0';
	return out;
}

int main(void)
{
	ows_error err = {0};
	if (ows__inject_new("unit", NULL, &inj, &err) < 0)
		bail_out("cannot make an injector: %s", err.what);
	ok(ows__inject_placeholder(secret, SLEN, ph, NULL) == 0, "a placeholder is made");
	is_int((int)strlen(ph), (int)SLEN, "of the secret's length");
	ok(strncmp(ph, "ghp_", 4) == 0, "keeping its type prefix");
	ok(strcmp(ph, secret) != 0 && !strstr(ph, secret + 4), "and nothing else of it");
	char ph2[SLEN + 1] = {0};
	ows__inject_placeholder(secret, SLEN, ph2, NULL);
	ok(strcmp(ph, ph2) != 0, "two placeholders differ");

	ok(ows__inject_add(inj, "api.example.com", 443, "Authorization", secret, ph, SLEN, NULL) ==
		   0, "a rule for api.example.com:443");
	ok(ows__inject_add(inj, "*.example.com", 443, "Authorization", secret, ph, SLEN, NULL) < 0,
	   "refused: a wildcard host");
	ok(ows__inject_add(inj, "10.0.0.1", 443, "Authorization", secret, ph, SLEN, NULL) < 0,
	   "refused: an address");
	ok(ows__inject_add(inj, "api.example.com", 443, "Bad Header", secret, ph, SLEN, NULL) < 0,
	   "refused: a header name with a space");
	ok(ows__inject_add(inj, "api.example.com", 443, "Authorization", "short_one", "short_two", 9,
			   NULL) < 0, "refused: a secret too short to stand in for");
	ok(ows__inject_add(inj, "api.example.com", 443, "Authorization", "has a space in it ok",
			   "has_a_space_in_it_ok", 20, NULL) < 0,
	   "refused: a secret a header cannot carry as is");
	ok(ows__inject_wants(inj, "api.example.com", 443), "its TLS is ended");
	ok(!ows__inject_wants(inj, "api.example.com", 8443), "not on another port");
	ok(!ows__inject_wants(inj, "example.com", 443), "not for another host");
	ok(ows__inject_is_placeholder(inj, ph, SLEN), "the placeholder is known as one");

#define TAIL "Accept-Encoding: identity\r\nConnection: keep-alive\r\n\r\n"
	check_request("the header gets the secret",
		      "GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n",
		      "GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n" TAIL);
	check_request("a header name in any case, what goes up is the head parsed",
		      "GET / HTTP/1.1\r\nauthorization:token %s\r\nHOST: API.example.com:443\r\n"
		      "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n",
		      "GET / HTTP/1.1\r\nHost: api.example.com\r\nauthorization: token %s\r\n"
		      "Accept-Encoding: identity\r\nConnection: close\r\n\r\n");
	check_request("an https:// URL naming the tunnel's host",
		      "GET https://api.example.com/x HTTP/1.1\r\nHost: api.example.com\r\n"
		      "Authorization: Bearer %s\r\n\r\n",
		      "GET /x HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n" TAIL);
	check_request("a transfer coding in any case and spacing is sent as parsed",
		      "POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding:  CHUNKED \r\n"
		      "Authorization: %s\r\n\r\n0\r\n\r\n",
		      "POST / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: %s\r\n"
		      "Transfer-Encoding: chunked\r\n" TAIL "0\r\n\r\n");
	check_request("the same length twice is sent once",
		      "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2\r\n"
		      "Authorization: %s\r\nContent-Length: 02\r\n\r\nab",
		      "POST / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: %s\r\n"
		      "Content-Length: 2\r\n" TAIL "ab");
	char *in = with("GET /%s HTTP/1.1\r\nHost: api.example.com\r\nX-Other: %s\r\nCookie: a=%s\r\n\r\n", ph);
	char *out = filter("api.example.com", in, 0, NULL);
	ok(out && strstr(out, "GET /") && strstr(out, "X-Other: ") && strstr(out, "Cookie: a=") &&
		   !strstr(out, secret + 4),
	   "a placeholder in the URL or another header stays one");
	free(out);
	out = filter("other.example.com",
		     "GET / HTTP/1.1\r\nHost: other.example.com\r\nAuthorization: x\r\n\r\n", 0, NULL);
	is_str(out, "GET / HTTP/1.1\r\nHost: other.example.com\r\nAuthorization: x\r\n" TAIL,
	       "another host's filter puts nothing in");
	free(out);
	free(in);

	/* bodies pass untouched, and the request after one is read as a request */
	in = with("POST /a HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 68\r\n\r\n"
		  "\r\n\r\nAuthorization: Bearer %s"
		  "GET /b HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n", ph);
	for (size_t step = 0; step <= 7; step += 7) {
		out = filter("api.example.com", in, step, NULL);
		char *body = out ? strstr(out, "\r\n\r\n") : NULL;
		ok(body && strncmp(body + 4, "\r\n\r\nAuthorization: Bearer ", 26) == 0 &&
			   strncmp(body + 30, ph, 10) == 0,
		   "a Content-Length body keeps its placeholder (pieces of %zu)", step);
		ok(out && strstr(out, "GET /b") && strstr(strstr(out, "GET /b"), secret),
		   "the next request's header gets the secret (pieces of %zu)", step);
		free(out);
	}
	free(in);
	in = with("POST /c HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "40\r\nAuthorization: Bearer %s\r\n0\r\n\r\n"
		  "GET /d HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n", ph);
	out = filter("api.example.com", in, 3, NULL);
	char *d = out ? strstr(out, "GET /d") : NULL;
	ok(out && strstr(out, ph) && strstr(out, ph) < d, "a chunked body keeps its placeholder");
	ok(d && strstr(d, secret), "and the request after it gets the secret");
	free(out);
	free(in);

#define H "Host: api.example.com\r\n"
	check_refused("Content-Length and Transfer-Encoding both",
		      "POST / HTTP/1.1\r\n" H "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		      "both");
	check_refused("two different lengths",
		      "POST / HTTP/1.1\r\n" H "Content-Length: 3\r\nContent-Length: 4\r\n\r\n",
		      "Content-Length");
	check_refused("a coding other than chunked",
		      "POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip, chunked\r\n\r\n", "chunked");
	check_refused("chunked twice in one header",
		      "POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked, chunked\r\n\r\n", "chunked");
	check_refused("two Transfer-Encoding headers",
		      "POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n"
		      "Transfer-Encoding: chunked\r\n\r\n", "chunked");
	check_refused("a head that ends in a bare LF",
		      "GET / HTTP/1.1\r\n" H "Authorization: x\n\r\nContent-Length: 5\r\n\r\n", "CR LF");
	check_refused("a Content-Length behind a bare LF",
		      "POST / HTTP/1.1\r\n" H "X-A: b\nContent-Length: 40\r\n\r\n", "CR LF");
	check_refused("a Content-Length behind a bare CR",
		      "POST / HTTP/1.1\r\n" H "X-A: b\rContent-Length: 40\r\n\r\n", "CR without LF");
	check_refused("a control byte in a value", "GET / HTTP/1.1\r\n" H "X-A: b\x0b\r\n\r\n",
		      "control");
	check_refused("CONNECT inside", "CONNECT a:443 HTTP/1.1\r\n\r\n", "CONNECT");
	check_refused("an upgrade", "GET / HTTP/1.1\r\n" H "Upgrade: websocket\r\n\r\n", "upgrade");
	check_refused("a folded header", "GET / HTTP/1.1\r\n" H "X: a\r\n b\r\n\r\n", "folded");
	check_refused("a space before the colon",
		      "GET / HTTP/1.1\r\n" H "Authorization : x\r\n\r\n", "header line");
	check_refused("a Host naming another host",
		      "GET / HTTP/1.1\r\nHost: other.example.com\r\n\r\n", "Host");
	check_refused("a Host naming another port",
		      "GET / HTTP/1.1\r\nHost: api.example.com:8443\r\n\r\n", "Host");
	check_refused("a second Host", "GET / HTTP/1.1\r\n" H "Host: other.example.com\r\n\r\n",
		      "Host");
	check_refused("no Host", "GET / HTTP/1.1\r\nAuthorization: x\r\n\r\n", "Host");
	check_refused("a URL naming another host",
		      "GET https://other.example.com/ HTTP/1.1\r\n" H "\r\n", "another host");
	check_refused("a URL naming another port",
		      "GET https://api.example.com:8443/ HTTP/1.1\r\n" H "\r\n", "another host");
	check_refused("an http:// URL", "GET http://api.example.com/ HTTP/1.1\r\n" H "\r\n",
		      "https://");
	char *big = malloc(17000);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	memset(big + 19, 'a', 16980);
	big[16999] = '\0';
	check_refused("a head over 16 KiB", big, "too large");
	free(big);

	/* the response side */
	char *resp = with("HTTP/1.1 200 OK\r\nContent-Length: 55\r\n\r\n{\"token\": \"%s\"}", secret);
	char *want = with("HTTP/1.1 200 OK\r\nContent-Length: 55\r\n\r\n{\"token\": \"%s\"}", ph);
	size_t n = strlen(resp);
	bool all = true;
	for (size_t cut = 0; cut <= n; cut++) {
		out = scrub(resp, n, cut, NULL);
		all &= strcmp(out, want) == 0;
		free(out);
	}
	ok(all, "a secret in a response comes back as the placeholder, split anywhere");
	free(resp);
	free(want);

	/* a chunk boundary inside the secret: de-chunked, scrubbed, sent on in chunks */
	resp = with("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "a\r\n{\"t\": \"ghp\r\n"
		    "27;ext=1\r\n_0123456789abcdefghijABCDEFGHIJklmnopqr\r\n"
		    "2\r\n\"}\r\n0\r\nX-Trailer: %s\r\n\r\n"
		    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", secret);
	n = strlen(resp);
	all = true;
	char *first = NULL;
	for (size_t cut = 0; cut <= n; cut++) {
		out = scrub(resp, n, cut, NULL);
		all &= !strstr(out, secret) && !strstr(out, secret + 4) &&
		       strstr(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") != NULL;
		if (!first)
			first = out;
		else
			free(out);
	}
	ok(all, "a chunked answer with the secret across a chunk boundary: never the secret");
	char *dech = NULL;
	if (first) {
		/* de-chunk what came out: the body is the placeholder's */
		dech = calloc(1, strlen(first) + 1);
		const char *p = strstr(first, "\r\n\r\n") + 4;
		for (;;) {
			unsigned long sz = strtoul(p, (char **)&p, 16);
			p += 2;
			if (!sz)
				break;
			strncat(dech, p, sz);
			p += sz + 2;
		}
	}
	char *want_body = with("{\"t\": \"%s\"}", ph);
	is_str(dech, want_body, "and de-chunked it is the placeholder, in place");
	free(want_body);
	free(dech);
	free(first);
	free(resp);

	const char *refusals[][2] = {
		{"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		 "compressed"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "coding"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "Content-Length"},
		{"HTTP/1.1 200 OK\r\nX: a\rContent-Length: 3\r\n\r\n", "CR"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunked"},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(refusals); i++) {
		ows__scrub *s = ows__scrub_new(inj, "api.example.com", 443, NULL);
		char *o = NULL;
		size_t len = 0, cap = 0;
		int rc = ows__scrub_feed(s, refusals[i][0], strlen(refusals[i][0]), false, &o, &len, &cap);
		ok(rc < 0 && strstr(ows__scrub_error(s), refusals[i][1]), "an answer refused: %s (%s)",
		   refusals[i][1], ows__scrub_error(s));
		free(o);
		ows__scrub_free(s);
	}

	/* held for as long as it takes, not for a time */
	ows__scrub *s = ows__scrub_new(inj, "api.example.com", 443, NULL);
	char *o = NULL;
	size_t len = 0, cap = 0;
	ows__scrub_feed(s, "HTTP/1.1 200 OK\r\n\r\nhello ghp_0123", 33, false, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 8, "what may begin the secret is held back");
	is_int((int)len, 25, "the rest goes on");
	ows__scrub_feed(s, "4x", 2, false, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 0, "and let go when it turns out not to be");
	ows__scrub_feed(s, "ghp_0123456789abcdef", 20, false, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 20, "a longer start is held too");
	ows__scrub_feed(s, NULL, 0, true, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 0, "the end of the connection holds nothing");
	ok(len == 55 && memcmp(o + 19, "hello ghp_01234x", 16) == 0 && memcmp(o + 35, ph, 20) == 0 &&
		   !memmem(o, len, secret + 4, 6),
	   "and a body that ends inside the secret ends with the placeholder's part of it");
	free(o);
	ows__scrub_free(s);

	/* a HEAD's answer has no body, whatever its Content-Length says */
	ows__reqfilter *f = ows__reqfilter_new(inj, "api.example.com", 443);
	o = NULL;
	len = cap = 0;
	const char *two = "HEAD / HTTP/1.1\r\n" H "\r\nGET / HTTP/1.1\r\n" H "\r\n";
	ows__reqfilter_feed(f, two, strlen(two), &o, &len, &cap);
	free(o);
	s = ows__scrub_new(inj, "api.example.com", 443, f);
	resp = with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n"
		    "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n%s", secret);
	o = NULL;
	len = cap = 0;
	ows__scrub_feed(s, resp, strlen(resp), false, &o, &len, &cap);
	ok(len == strlen(resp) && memcmp(o + len - SLEN, ph, SLEN) == 0 && ows__scrub_held(s) == 0,
	   "a 1xx, a HEAD's answer, then a body: the secret in the body is found");
	free(o);
	free(resp);
	ows__scrub_free(s);
	ows__reqfilter_free(f);

	const char *pem = ows__inject_ca_pem(inj);
	ok(pem && strncmp(pem, "-----BEGIN CERTIFICATE-----", 27) == 0, "the session CA as PEM");
	size_t bl = 0;
	char *bundle = ows__inject_bundle_pem(inj, &bl, NULL);
	ok(bundle && bl > strlen(pem) && strstr(bundle, pem) == bundle + bl - strlen(pem),
	   "the bundle is the system's store, then the session's CA");
	free(bundle);
	ows__inject_free(inj);
	return done_testing();
}
