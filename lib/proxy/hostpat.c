/*
 * Sites: host names, allow-list patterns (host:port, *.suffix), the named groups of sites
 * (@code-hosting... as the product documents offer them under "Choose sites…"), the
 * allow-sites file reader, and which addresses count as public.  Pure parsing and
 * matching, no I/O but the file reader's: the fuzz target runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#include "proxy.h"

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int ows__host_normalize(const char *in, size_t len, char out[OWS__HOST_MAX])
{
	if (len >= 2 && in[0] == '[' && in[len - 1] == ']') {
		in++;
		len -= 2;
		if (len == 0 || len >= 64 || !memchr(in, ':', len))
			return -1;
	}
	if (len > 0 && in[len - 1] == '.' && !memchr(in, ':', len))
		len--;
	if (len == 0 || len > 253)
		return -1;
	for (size_t i = 0; i < len; i++)
		out[i] = lower(in[i]);
	out[len] = '\0';
	if (memchr(out, '\0', len))
		return -1;

	unsigned char addr[16];
	if (memchr(out, ':', len)) {
		/* only an IPv6 literal has colons; no zone ids */
		if (inet_pton(AF_INET6, out, addr) != 1)
			return -1;
		return OWS__HOST_IPV6;
	}
	/* A name whose last label is numeric is an IPv4 literal or nothing:
	 * "1.2.3.4" is one, "010.1" and "4294967295" are refused rather than
	 * given to a resolver that reads them as addresses. */
	const char *last = strrchr(out, '.');
	last = last ? last + 1 : out;
	bool numeric_tail = *last != '\0';
	for (const char *c = last; *c; c++)
		numeric_tail &= *c >= '0' && *c <= '9';
	if (numeric_tail)
		return inet_pton(AF_INET, out, addr) == 1 ? OWS__HOST_IPV4 : -1;

	size_t label = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = out[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63)
				return -1;
			if (out[i - 1] == '-' || out[i - label] == '-')
				return -1;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return -1;
		label++;
	}
	return OWS__HOST_NAME;
}

static bool v4_is_public(const unsigned char a[4])
{
	uint32_t x = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	static const struct { uint32_t net, mask; } blocked[] = {
		{0x00000000, 0xff000000}, /* 0/8 "this network", unspecified */
		{0x0a000000, 0xff000000}, /* 10/8 */
		{0x64400000, 0xffc00000}, /* 100.64/10 CGNAT */
		{0x7f000000, 0xff000000}, /* 127/8 */
		{0xa9fe0000, 0xffff0000}, /* 169.254/16 link-local */
		{0xac100000, 0xfff00000}, /* 172.16/12 */
		{0xc0000000, 0xffffff00}, /* 192.0.0/24 protocol assignments */
		{0xc0a80000, 0xffff0000}, /* 192.168/16 */
		{0xc6120000, 0xfffe0000}, /* 198.18/15 benchmarking */
		{0xe0000000, 0xf0000000}, /* 224/4 multicast */
		{0xf0000000, 0xf0000000}, /* 240/4 reserved, broadcast */
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(blocked); i++)
		if ((x & blocked[i].mask) == blocked[i].net)
			return false;
	return true;
}

bool ows__addr_is_public(const struct sockaddr *sa)
{
	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		unsigned char a[4];
		memcpy(a, &s4->sin_addr, 4);
		return v4_is_public(a);
	}
	if (sa->sa_family != AF_INET6)
		return false;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	unsigned char a[16];
	memcpy(a, &s6->sin6_addr, 16);
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
	static const unsigned char zero[16] = {0};
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return v4_is_public(a + 12);
	if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1))
		return false; /* :: and ::1 */
	if (memcmp(a, zero, 12) == 0)
		return false; /* IPv4-compatible, deprecated */
	if ((a[0] & 0xfe) == 0xfc)
		return false; /* fc00::/7 unique local */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return false; /* fe80::/10 link-local */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return false; /* fec0::/10 site-local, deprecated */
	if (a[0] == 0xff)
		return false; /* multicast */
	return true;
}

/* Refuses a deny entry that cannot mean what it says (a group, +private); 0 otherwise. */
static int deny_misuse(const char *text, size_t len, ows_error *err)
{
	if (text[1] == '@')
		return ows__fail(err, OWS_EINVAL, 0, text,
				 "deny the group's hosts one by one, such as !gist.github.com",
				 "a deny entry names a host, not a group");
	if (len > 8 && strcmp(text + len - 8, "+private") == 0)
		return ows__fail(err, OWS_EINVAL, 0, text,
				 "drop +private: a deny entry refuses the site whatever it resolves to",
				 "+private on a deny entry");
	return 0;
}

int ows__pattern_parse(const char *text, ows__pattern *out, ows_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!text)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "give a host such as github.com:443",
				 "no site pattern");
	size_t len = strlen(text);
	const char *s = text;
	if (s[0] == '!') {
		if (deny_misuse(text, len, err) < 0)
			return OWS_EINVAL;
		out->deny = true;
		s++;
		len--;
	}
	if (len > 8 && strcmp(s + len - 8, "+private") == 0) {
		out->allow_private = true;
		len -= 8;
	}
	if (len >= 2 && s[0] == '*' && s[1] == '.') {
		out->wildcard = true;
		s += 2;
		len -= 2;
	}
	/* split host and port: "[v6]:port", "host:port", "host" */
	const char *host = s;
	size_t hlen = len;
	const char *port = NULL;
	size_t plen = 0;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			goto bad;
		hlen = (size_t)(close - s) + 1;
		if (hlen < len) {
			if (s[hlen] != ':')
				goto bad;
			port = s + hlen + 1;
			plen = len - hlen - 1;
		}
	} else {
		const char *colon = NULL;
		for (size_t i = 0; i < len; i++)
			if (s[i] == ':') {
				if (colon)
					goto bad; /* a bare IPv6 literal needs brackets */
				colon = s + i;
			}
		if (colon) {
			hlen = (size_t)(colon - s);
			port = colon + 1;
			plen = len - hlen - 1;
		}
	}
	/* "!evil.com" means the site, not its port 443: a deny entry without a port covers all */
	out->port = out->deny ? OWS__PORT_ANY : 443;
	if (port && out->deny && plen == 1 && port[0] == '*') {
		port = NULL;
	} else if (port) {
		if (plen == 0 || plen > 5)
			goto bad;
		int p = 0;
		for (size_t i = 0; i < plen; i++) {
			if (port[i] < '0' || port[i] > '9')
				goto bad;
			p = p * 10 + (port[i] - '0');
		}
		if (p < 1 || p > 65535)
			goto bad;
		out->port = p;
	}
	int kind = ows__host_normalize(host, hlen, out->host);
	if (kind < 0)
		goto bad;
	if (out->wildcard && (kind != OWS__HOST_NAME || !strchr(out->host, '.')))
		goto bad; /* "*.com" and "*.10.0.0.1" cover too much or nothing */
	out->kind = kind;
	/* Naming an address or localhost exactly is the opt-in. */
	if (!out->deny && !out->wildcard &&
	    (kind != OWS__HOST_NAME || strcmp(out->host, "localhost") == 0))
		out->allow_private = true;
	return 0;
bad:
	if (strstr(text, "://"))
		return ows__fail(err, OWS_EINVAL, 0, text,
				 "drop the scheme and any path: HOST or HOST:PORT (example.com, "
				 "example.com:8443)",
				 "a site is a host, not a URL");
	return ows__fail(err, OWS_EINVAL, 0, text,
			 out->deny ? "deny with !host, !host:port, !host:* or !*.domain (no port: "
				     "every port)"
				   : "use host:port, *.domain:port or a bare host (port 443); add "
				     "+private for an internal host; ! in front denies it",
			 "not a site pattern");
}

void ows__pattern_format(const ows__pattern *p, char out[300])
{
	bool implied = !p->wildcard && (p->kind != OWS__HOST_NAME || strcmp(p->host, "localhost") == 0);
	char port[8] = "*";
	if (p->port != OWS__PORT_ANY)
		snprintf(port, sizeof(port), "%d", p->port);
	snprintf(out, 300, "%s%s%s%s%s:%s%s", p->deny ? "!" : "", p->wildcard ? "*." : "",
		 p->kind == OWS__HOST_IPV6 ? "[" : "", p->host, p->kind == OWS__HOST_IPV6 ? "]" : "",
		 port, p->allow_private && !implied ? "+private" : "");
}

bool ows__pattern_match(const ows__pattern *p, const char *host, int kind, int port)
{
	if (p->port != port && p->port != OWS__PORT_ANY)
		return false;
	if (!p->wildcard)
		return p->kind == kind && strcmp(p->host, host) == 0;
	if (kind != OWS__HOST_NAME)
		return false;
	size_t hl = strlen(host), sl = strlen(p->host);
	return hl > sl + 1 && host[hl - sl - 1] == '.' && strcmp(host + hl - sl, p->host) == 0;
}

int ows__site_check(const char *text, ows_error *err)
{
	if (text && text[0] == '@') {
		if (ows__sites_group(text))
			return 0;
		return ows__fail(err, OWS_EINVAL, 0, text,
				 "groups: @code-hosting, @package-registries, @search-apis",
				 "no such group of sites");
	}
	ows__pattern p;
	return ows__pattern_parse(text, &p, err);
}

/* ------------------------------------------------------- groups of sites */

static const char *const code_hosting[] = {
	"github.com:443",
	"api.github.com:443",
	"codeload.github.com:443",
	"uploads.github.com:443",
	"objects.githubusercontent.com:443",
	"raw.githubusercontent.com:443",
	"gitlab.com:443",
	"registry.gitlab.com:443",
	NULL,
};

static const char *const package_registries[] = {
	"pypi.org:443",               /* PyPI: index */
	"files.pythonhosted.org:443", /* PyPI: the files */
	"registry.npmjs.org:443",     /* npm */
	"crates.io:443",              /* crates.io: API */
	"index.crates.io:443",        /* crates.io: sparse index */
	"static.crates.io:443",       /* crates.io: the crates */
	"proxy.golang.org:443",       /* Go module proxy */
	"sum.golang.org:443",         /* Go checksum database */
	NULL,
};

static const char *const search_apis[] = {
	"api.search.brave.com:443",
	"api.tavily.com:443",
	"duckduckgo.com:443",
	"html.duckduckgo.com:443",
	"lite.duckduckgo.com:443",
	"api.duckduckgo.com:443",
	NULL,
};

static const struct {
	const char *name;
	const char *const *hosts;
} groups[] = {
	{"code-hosting", code_hosting},
	{"package-registries", package_registries},
	{"search-apis", search_apis},
};

static const char *const group_names[] = {"code-hosting", "package-registries", "search-apis",
					  NULL};

const char *const *ows__sites_group(const char *name)
{
	if (!name)
		return NULL;
	if (name[0] == '@')
		name++;
	for (size_t i = 0; i < OWS__ARRAY_LEN(groups); i++)
		if (strcmp(groups[i].name, name) == 0)
			return groups[i].hosts;
	return NULL;
}

const char *const *ows__sites_group_names(void)
{
	return group_names;
}

int ows__sites_file_read(const char *path, ows__strv *out, ows_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return ows__fail_sys(err, path, "give a readable file, one site per line",
				     "cannot read the allow-sites file");
	char line[1024];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t n = strlen(line);
		if (n == sizeof(line) - 1 && line[n - 1] != '\n' && !feof(f)) {
			char where[600];
			snprintf(where, sizeof(where), "%s:%d", path, lineno);
			rc = ows__fail(err, OWS_EINVAL, 0, where, "one site per line", "line too long");
			break;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		char *e = s + strlen(s);
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
			*--e = '\0';
		if (!*s)
			continue;
		ows_error local;
		ows_error_clear(&local);
		if (ows__site_check(s, &local) < 0) {
			char where[600];
			snprintf(where, sizeof(where), "%s:%d", path, lineno);
			rc = ows__fail(err, OWS_EINVAL, 0, where, local.hint, "%s: %s", local.what, s);
			break;
		}
		if ((rc = ows__strv_push(out, s, err)) < 0)
			break;
	}
	if (rc == 0 && ferror(f))
		rc = ows__fail_sys(err, path, NULL, "cannot read the allow-sites file");
	fclose(f);
	return rc;
}
