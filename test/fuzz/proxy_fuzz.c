/*
 * Fuzz target for the proxy's request parser and pattern matcher (libFuzzer
 * entry point; test/fuzz/driver.c runs it without libFuzzer).  Besides not
 * crashing, it checks what the proxy relies on: a parsed head lies within the
 * input, the rewritten head is one string of the stated length with one Host
 * and no proxy headers, a host normalises to itself, a pattern's canonical
 * form parses back to the same pattern and matches its own host (a deny entry
 * without a port: on every port).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) \
	do { \
		if (!(c)) \
			abort(); \
	} while (0)

static void fuzz_request(const char *buf, size_t len)
{
	ows__http_req r;
	int rc = ows__http_parse(buf, len, &r);
	if (rc == 0) {
		CHECK(len < OWS__HTTP_HEAD_MAX);
		return;
	}
	if (rc < 0) {
		CHECK(r.error != NULL && r.upstream_head == NULL);
		return;
	}
	CHECK(r.head_len >= 4 && r.head_len <= len);
	CHECK(memcmp(buf + r.head_len - 4, "\r\n\r\n", 4) == 0);
	CHECK(r.port >= 1 && r.port <= 65535);
	char h[OWS__HOST_MAX];
	CHECK(ows__host_normalize(r.host, strlen(r.host), h) == r.host_kind);
	CHECK(strcmp(h, r.host) == 0);
	if (r.is_connect) {
		CHECK(r.upstream_head == NULL);
	} else {
		CHECK(r.upstream_head && strlen(r.upstream_head) == r.upstream_head_len);
		CHECK(!(r.chunked && r.content_length >= 0));
		/* the rewritten head parses as an origin-form request: one Host line */
		const char *p = r.upstream_head;
		int hosts = 0;
		while ((p = strstr(p, "\r\n")) && p[2] != '\r') {
			p += 2;
			hosts += strncasecmp(p, "host:", 5) == 0;
			CHECK(strncasecmp(p, "proxy-", 6) != 0);
		}
		CHECK(hosts == 1);
		CHECK(r.upstream_head_len >= 4 &&
		      strcmp(r.upstream_head + r.upstream_head_len - 4, "\r\n\r\n") == 0);
	}
	ows__http_req_release(&r);
}

static void fuzz_pattern(const char *buf, size_t len)
{
	char text[512];
	if (len >= sizeof(text))
		len = sizeof(text) - 1;
	memcpy(text, buf, len);
	text[len] = '\0';
	ows__pattern p, q;
	if (ows__pattern_parse(text, &p, NULL) < 0)
		return;
	char canon[300];
	ows__pattern_format(&p, canon);
	CHECK(ows__pattern_parse(canon, &q, NULL) == 0);
	CHECK(q.port == p.port && q.wildcard == p.wildcard && q.allow_private == p.allow_private &&
	      q.deny == p.deny && strcmp(q.host, p.host) == 0);
	CHECK(!p.deny || !p.allow_private);
	if (!p.wildcard) {
		CHECK(ows__pattern_match(&p, p.host, p.kind, p.port));
	} else {
		char sub[OWS__HOST_MAX + 4];
		if (strlen(p.host) + 2 < OWS__HOST_MAX) {
			strcpy(sub, "a.");
			strcat(sub, p.host);
			CHECK(ows__pattern_match(&p, sub, OWS__HOST_NAME, p.port));
		}
		CHECK(!ows__pattern_match(&p, p.host, OWS__HOST_NAME, p.port));
	}
	if (p.port == OWS__PORT_ANY) /* a deny entry for every port */
		CHECK(p.deny && ows__pattern_match(&p, p.host, p.kind, 8080) != p.wildcard);
	else
		CHECK(!ows__pattern_match(&p, p.host, p.kind, p.port == 1 ? 2 : p.port - 1));
}

/* Chunk framing: fed whole or in two pieces, the same bytes belong to the body. */
static void fuzz_chunked(const char *buf, size_t len)
{
	ows__chunked a = {0}, b = {0};
	bool da = false, db = false;
	long ka = ows__chunked_feed(&a, buf, len, &da);
	CHECK(ka <= (long)len);
	size_t cut = len / 2;
	long k1 = ows__chunked_feed(&b, buf, cut, &db);
	long kb = k1;
	if (k1 >= 0 && !db) {
		long k2 = ows__chunked_feed(&b, buf + cut, len - cut, &db);
		kb = k2 < 0 ? -1 : k1 + k2;
	}
	if (ka >= 0 && kb >= 0)
		CHECK(ka == kb && da == db);
	else
		CHECK(ka < 0 && kb < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	/* the first byte picks the target, so one corpus serves all */
	const char *buf = (const char *)data + 1;
	if ((data[0] & 3) == 1 || (data[0] & 3) == 3)
		fuzz_pattern(buf, size - 1);
	else if ((data[0] & 3) == 2)
		fuzz_chunked(buf, size - 1);
	else
		fuzz_request(buf, size - 1);
	char h[OWS__HOST_MAX];
	if (size - 1 < 300)
		ows__host_normalize(buf, size - 1, h);
	return 0;
}
