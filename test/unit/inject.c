/*
 * Credential injection's filters (lib/inject.c): the request side puts the
 * secret in the named header of each request head and nowhere else, however
 * the bytes arrive; what it cannot frame safely it refuses; the response
 * side turns every copy of the secret back into its placeholder, also one
 * split across reads.  test/sh/inject.sh attacks the whole path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
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

/* The scrubber's output for `in` fed in two pieces split at `cut`, flushed at the end. */
static char *scrub(const char *in, size_t n, size_t cut)
{
	ows__scrub *s = ows__scrub_new(inj, "api.example.com", 443);
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

	check_request("the header gets the secret",
		      "GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n",
		      "GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n");
	check_request("a header name in any case",
		      "GET / HTTP/1.1\r\nauthorization:token %s\r\n\r\n",
		      "GET / HTTP/1.1\r\nauthorization:token %s\r\n\r\n");
	char *in = with("GET /%s HTTP/1.1\r\nX-Other: %s\r\nCookie: a=%s\r\n\r\n", ph);
	char *out = filter("api.example.com", in, 0, NULL);
	is_str(out, in, "a placeholder in the URL or another header stays one");
	free(out);
	out = filter("other.example.com", "GET / HTTP/1.1\r\nAuthorization: x\r\n\r\n", 0, NULL);
	is_str(out, "GET / HTTP/1.1\r\nAuthorization: x\r\n\r\n", "another host's filter passes all");
	free(out);
	free(in);

	/* bodies pass untouched, and the request after one is read as a request */
	in = with("POST /a HTTP/1.1\r\nContent-Length: 68\r\n\r\n"
		  "\r\n\r\nAuthorization: Bearer %s"
		  "GET /b HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", ph);
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
	in = with("POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "40\r\nAuthorization: Bearer %s\r\n0\r\n\r\n"
		  "GET /d HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", ph);
	out = filter("api.example.com", in, 3, NULL);
	char *d = out ? strstr(out, "GET /d") : NULL;
	ok(out && strstr(out, ph) && strstr(out, ph) < d, "a chunked body keeps its placeholder");
	ok(d && strstr(d, secret), "and the request after it gets the secret");
	free(out);
	free(in);

	check_refused("Content-Length and Transfer-Encoding both",
		      "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		      "both");
	check_refused("two different lengths",
		      "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
		      "Content-Length");
	check_refused("a coding other than chunked",
		      "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "coding");
	check_refused("CONNECT inside", "CONNECT a:443 HTTP/1.1\r\n\r\n", "CONNECT");
	check_refused("an upgrade", "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", "upgrade");
	check_refused("a folded header", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "folded");
	check_refused("a space before the colon", "GET / HTTP/1.1\r\nAuthorization : x\r\n\r\n",
		      "header line");
	char *big = malloc(17000);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	memset(big + 19, 'a', 16980);
	big[16999] = '\0';
	check_refused("a head over 16 KiB", big, "16 KiB");
	free(big);

	/* the response side */
	char *resp = with("HTTP/1.1 200 OK\r\nContent-Length: 52\r\n\r\n{\"token\": \"%s\"}", secret);
	char *want = with("HTTP/1.1 200 OK\r\nContent-Length: 52\r\n\r\n{\"token\": \"%s\"}", ph);
	size_t n = strlen(resp);
	bool all = true;
	for (size_t cut = 0; cut <= n; cut++) {
		out = scrub(resp, n, cut);
		all &= strcmp(out, want) == 0;
		free(out);
	}
	ok(all, "a secret in a response comes back as the placeholder, split anywhere");
	free(resp);
	free(want);
	ows__scrub *s = ows__scrub_new(inj, "api.example.com", 443);
	char *o = NULL;
	size_t len = 0, cap = 0;
	ows__scrub_feed(s, "hello ghp_0123", 14, false, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 8, "what may begin the secret is held back");
	is_int((int)len, 6, "the rest goes on");
	ows__scrub_feed(s, "4x", 2, false, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 0, "and let go when it turns out not to be");
	ows__scrub_feed(s, "ghp_01", 6, true, &o, &len, &cap);
	is_int((int)ows__scrub_held(s), 0, "a flush holds nothing");
	ok(len == 22 && memcmp(o, "hello ghp_01234xghp_01", 22) == 0, "and loses nothing");
	free(o);
	ows__scrub_free(s);

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
