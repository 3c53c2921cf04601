/* The proxy's portable rules: host names, patterns, groups, addresses, the request parser. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "tap.h"

static bool match(const char *pattern, const char *host, int port)
{
	ows__pattern p;
	char h[OWS__HOST_MAX];
	if (ows__pattern_parse(pattern, &p, NULL) < 0)
		return false;
	int kind = ows__host_normalize(host, strlen(host), h);
	return kind > 0 && ows__pattern_match(&p, h, kind, port);
}

static bool is_public(const char *addr)
{
	struct sockaddr_storage ss = {0};
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	else
		bail_out("bad test address %s", addr);
	return ows__addr_is_public((struct sockaddr *)&ss);
}

static const char *fmt(const char *pattern)
{
	static char out[300];
	ows__pattern p;
	if (ows__pattern_parse(pattern, &p, NULL) < 0)
		return "(invalid)";
	ows__pattern_format(&p, out);
	return out;
}

static int parse(const char *s, ows__http_req *req)
{
	return ows__http_parse(s, strlen(s), req);
}

int main(void)
{
	char h[OWS__HOST_MAX];
	is_int(ows__host_normalize("GitHub.COM.", 11, h), OWS__HOST_NAME, "a name with a trailing dot");
	is_str(h, "github.com", "lower-cased, trailing dot dropped");
	is_int(ows__host_normalize("[::1]", 5, h), OWS__HOST_IPV6, "a bracketed IPv6 literal");
	is_int(ows__host_normalize("10.0.0.1", 8, h), OWS__HOST_IPV4, "an IPv4 literal");
	is_int(ows__host_normalize("010.1", 5, h), -1, "a numeric oddity is not a host");
	is_int(ows__host_normalize("2130706433", 10, h), -1, "a decimal address is not a host");
	is_int(ows__host_normalize("a..b", 4, h), -1, "an empty label");
	is_int(ows__host_normalize("-a.com", 6, h), -1, "a label starting with '-'");
	is_int(ows__host_normalize("a b.com", 7, h), -1, "a space");

	ok(match("github.com:443", "github.com", 443), "exact host:port");
	ok(!match("github.com:443", "github.com", 22), "another port is not listed");
	ok(match("github.com", "GITHUB.com.", 443), "a bare host means 443, names normalised");
	ok(!match("github.com", "api.github.com", 443), "an exact host does not cover subdomains");
	ok(match("*.example.com:443", "a.b.example.com", 443), "a wildcard covers subdomains");
	ok(!match("*.example.com:443", "example.com", 443), "a wildcard does not cover the apex");
	ok(!match("*.example.com:443", "badexample.com", 443), "nor a name that merely ends alike");
	ok(!match("github.com:443", "127.0.0.1", 443), "an IP literal is refused unless listed");
	ok(match("127.0.0.1:8080", "127.0.0.1", 8080), "a listed IP literal matches exactly");
	ok(match("[::1]:8080", "[::1]", 8080), "so does a listed IPv6 literal");
	ok(!match("localhost:8080", "127.0.0.1", 8080), "localhost does not cover its address");
	is_str(fmt("GitHub.com"), "github.com:443", "canonical form");
	is_str(fmt("*.Corp.example:8443+private"), "*.corp.example:8443+private", "wildcard, +private");
	is_str(fmt("localhost:3000"), "localhost:3000", "localhost listed exactly");
	ows__pattern p;
	ok(ows__pattern_parse("localhost:3000", &p, NULL) == 0 && p.allow_private,
	   "listing localhost exactly is the opt-in to its address");
	ok(ows__pattern_parse("github.com:443", &p, NULL) == 0 && !p.allow_private,
	   "a name is not opted in to private addresses by default");
	const char *bad[] = {"", "*", "*.com", "*.10.0.0.1:443", "host:0", "host:65536", "host:",
			     "::1:443", "http://x", "a/b", "h:443:1", "x+private+private", NULL};
	for (int i = 0; bad[i]; i++)
		is_str(fmt(bad[i]), "(invalid)", "refused pattern '%s'", bad[i]);

	ok(match("!evil.example", "evil.example", 443) && match("!evil.example", "evil.example", 22),
	   "a deny entry without a port covers every port");
	ok(match("!evil.example:*", "evil.example", 8080), "so does one with port *");
	ok(match("!evil.example:22", "evil.example", 22) && !match("!evil.example:22", "evil.example", 443),
	   "a deny entry with a port covers that port only");
	ok(match("!*.evil.example", "a.evil.example", 80) && !match("!*.evil.example", "evil.example", 80),
	   "a deny wildcard covers subdomains, not the apex");
	ok(match("![::1]", "::1", 9) && !match("!10.0.0.5", "10.0.0.6", 443), "deny IP literals");
	is_str(fmt("!Evil.Example"), "!evil.example:*", "a deny entry's canonical form");
	is_str(fmt("!*.evil.example:8443"), "!*.evil.example:8443", "with a port, a wildcard");
	ok(ows__pattern_parse("!10.0.0.5:80", &p, NULL) == 0 && p.deny && !p.allow_private,
	   "a deny entry of an address is not an opt-in to anything");
	const char *bad_deny[] = {"!", "!!x.example", "!*", "!x.example:", "!x.example:**",
				  "x.example:*", "!x.example+private", "!@code-hosting", NULL};
	for (int i = 0; bad_deny[i]; i++)
		is_str(fmt(bad_deny[i]), "(invalid)", "refused deny pattern '%s'", bad_deny[i]);
	ows_error e;
	ows_error_clear(&e);
	ok(ows__site_check("!git.example:443+private", &e) == OWS_EINVAL && strstr(e.what, "+private"),
	   "+private on a deny entry is refused by name: %s", e.what);
	ows_error_clear(&e);
	ok(ows__site_check("!@code-hosting", &e) == OWS_EINVAL && strstr(e.what, "group"),
	   "so is a denied group: %s", e.what);

	ok(ows__site_check("@package-registries", NULL) == 0, "a named group");
	ok(ows__site_check("@nope", NULL) < 0, "an unknown group");
	const char *const *g = ows__sites_group("code-hosting");
	bool gh = false, gl = false;
	for (; g && *g; g++) {
		gh |= strcmp(*g, "github.com:443") == 0;
		gl |= strcmp(*g, "gitlab.com:443") == 0;
	}
	ok(gh && gl, "code hosting has GitHub and GitLab");
	int seen = 0;
	for (g = ows__sites_group("@package-registries"); g && *g; g++)
		seen += strstr(*g, "pypi.org") || strstr(*g, "npmjs.org") || strstr(*g, "crates.io") ||
			strstr(*g, "proxy.golang.org");
	ok(seen >= 4, "package registries: PyPI, npm, crates.io, the Go proxy");
	seen = 0;
	for (g = ows__sites_group("search-apis"); g && *g; g++)
		seen += strstr(*g, "brave") || strstr(*g, "tavily") || strstr(*g, "duckduckgo");
	ok(seen >= 3, "search APIs: Brave, Tavily, DuckDuckGo");
	for (const char *const *n = ows__sites_group_names(); *n; n++)
		for (g = ows__sites_group(*n); *g; g++)
			if (ows__pattern_parse(*g, &p, NULL) < 0)
				ok(0, "group %s entry %s parses", *n, *g);

	const char *private_addrs[] = {"127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255",
				       "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
				       "224.0.0.1", "255.255.255.255", "::1", "::", "fc00::1",
				       "fd12::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
				       "64:ff9b::a00:1", NULL};
	for (int i = 0; private_addrs[i]; i++)
		ok(!is_public(private_addrs[i]), "%s needs the opt-in", private_addrs[i]);
	const char *public_addrs[] = {"1.1.1.1", "140.82.112.3", "172.32.0.1", "100.128.0.1",
				      "2606:4700::1111", "::ffff:8.8.8.8", NULL};
	for (int i = 0; public_addrs[i]; i++)
		ok(is_public(public_addrs[i]), "%s is public", public_addrs[i]);

	char dir[] = "/tmp/owstest-proxyrules-XXXXXX";
	ok(mkdtemp(dir) != NULL, "a temp folder");
	char path[300];
	snprintf(path, sizeof(path), "%s/sites", dir);
	FILE *f = fopen(path, "w");
	fputs("# allowed\n  github.com:443  # the forge\n\n@search-apis\n*.corp.example:8443+private\n", f);
	fclose(f);
	ows__strv sv = {0};
	is_int(ows__sites_file_read(path, &sv, NULL), 0, "a sites file reads");
	is_int(sv.len, 3, "three entries, comments and blanks skipped");
	is_str(sv.len > 0 ? sv.v[0] : NULL, "github.com:443", "trimmed");
	ows__strv_free(&sv);
	f = fopen(path, "w");
	fputs("github.com\nnot a host\n", f);
	fclose(f);
	ows_error err;
	ows_error_clear(&err);
	ok(ows__sites_file_read(path, &sv, &err) == OWS_EINVAL && strstr(err.where, ":2"),
	   "a bad line is named by FILE:LINE (%s)", err.where);
	ows__strv_free(&sv);
	unlink(path);
	rmdir(dir);

	ows__http_req r;
	is_int(parse("CONNECT GitHub.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n", &r), 1,
	       "CONNECT parses");
	ok(r.is_connect && strcmp(r.host, "github.com") == 0 && r.port == 443, "host and port");
	is_int(parse("CONNECT [::1]:22 HTTP/1.1\r\n\r\n", &r), 1, "CONNECT to IPv6");
	ok(r.host_kind == OWS__HOST_IPV6 && r.port == 22, "IPv6 host and port");
	is_int(parse("CONNECT github.com HTTP/1.1\r\n\r\n", &r), -1, "CONNECT needs a port");
	is_int(parse("CONNECT github.com:443 HTTP/1.1\r\nHost: x", &r), 0, "an unfinished head waits");
	is_int(parse("\x16\x03\x01\x02", &r), -1, "TLS bytes fail at once");
	is_int(parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n", &r), -1, "origin form is not a proxy request");
	is_int(parse("GET https://a/ HTTP/1.1\r\n\r\n", &r), -1, "https:// must use CONNECT");
	is_int(parse("GET http://u@a/ HTTP/1.1\r\n\r\n", &r), -1, "no user info in the URL");
	is_int(parse("GET http://a/ HTTP/1.1\nHost: a\n\n", &r), -1, "bare LF");
	is_int(parse("GET http://a/ HTTP/1.1\r\nX: 1\r\n y\r\n\r\n", &r), -1, "folded header");
	is_int(parse("GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &r),
	       -1, "two different lengths");
	is_int(parse("POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		     &r), -1, "length and chunked");
	is_int(parse("GET http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", &r), -1,
	       "an unknown transfer coding");
	is_int(parse("GET http://A.example:8080/x?y=1 HTTP/1.1\r\nHost: evil\r\nProxy-Connection: "
		     "keep-alive\r\nProxy-Authorization: x\r\nAccept: */*\r\nContent-Length: 3\r\n\r\nabc",
		     &r), 1, "a plain request parses");
	ok(strcmp(r.host, "a.example") == 0 && r.port == 8080 && r.content_length == 3 && !r.close,
	   "its host, port, length, keep-alive");
	is_str(r.upstream_head,
	       "GET /x?y=1 HTTP/1.1\r\nHost: a.example:8080\r\nAccept: */*\r\nContent-Length: 3\r\n"
	       "Connection: keep-alive\r\n\r\n",
	       "rewritten: origin form, one Host, no proxy headers");
	ows__http_req_release(&r);
	is_int(parse("GET http://a.example?q HTTP/1.0\r\n\r\n", &r), 1, "HTTP/1.0, query only");
	ok(r.close && r.port == 80 && strncmp(r.upstream_head, "GET /?q HTTP/1.0\r\nHost: a.example\r\n", 35) == 0,
	   "1.0 closes; the path gains its slash");
	ows__http_req_release(&r);
	char big[OWS__HTTP_HEAD_MAX + 10];
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET http://a/ HTTP/1.1\r\nX: ", 27);
	is_int(ows__http_parse(big, sizeof(big), &r), -1, "a head over the limit");

	ows__chunked ch = {0};
	bool done = false;
	const char *body = "4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nX-T: 1\r\n\r\nGET http://next/";
	long k = ows__chunked_feed(&ch, body, strlen(body), &done);
	ok(done && k == (long)(strstr(body, "GET") - body), "a chunked body ends after its trailers");
	ch = (ows__chunked){0};
	done = false;
	long total = 0;
	for (size_t i = 0; i < strlen(body) && !done; i++) {
		done = false;
		k = ows__chunked_feed(&ch, body + i, 1, &done);
		total += k;
		if (done)
			break;
	}
	ok(done && total == (long)(strstr(body, "GET") - body), "the same, fed one byte at a time");
	ch = (ows__chunked){0};
	ok(ows__chunked_feed(&ch, "zz\r\n", 4, &done) < 0, "a chunk size that is not hex");
	ch = (ows__chunked){0};
	ok(ows__chunked_feed(&ch, "3\r\nabcd", 8, &done) < 0, "chunk data longer than its size");
	ch = (ows__chunked){0};
	ok(ows__chunked_feed(&ch, "ffffffffffffffff1\r\n", 19, &done) < 0, "a chunk size that overflows");

	ows__strv env = {0};
	is_int(ows__proxy_env(47801, "/opt/owsbx connect %h %p", &env, NULL), 0, "the client environment");
	bool https = false, lower = false, java = false, ssh = false, noproxy = false;
	for (size_t i = 0; i < env.len; i++) {
		https |= strcmp(env.v[i], "HTTPS_PROXY=http://127.0.0.1:47801") == 0;
		lower |= strcmp(env.v[i], "https_proxy=http://127.0.0.1:47801") == 0;
		java |= strstr(env.v[i], "JAVA_TOOL_OPTIONS=") && strstr(env.v[i], "https.proxyPort=47801");
		ssh |= strcmp(env.v[i], "GIT_SSH_COMMAND=ssh -o ProxyCommand='/opt/owsbx connect %h %p'") == 0;
		noproxy |= strcmp(env.v[i], "NO_PROXY=") == 0;
		const char *eq = strchr(env.v[i], '=');
		if (!ows__proxy_env_is_ours(env.v[i], (size_t)(eq - env.v[i])))
			ok(0, "%s is in the list of proxy variables", env.v[i]);
	}
	ok(https && lower && java && ssh && noproxy, "HTTPS_PROXY, https_proxy, Java, git over ssh, empty NO_PROXY");
	ok(ows__proxy_env_is_ours("no_proxy", 8) && ows__proxy_env_is_ours("git_proxy_command", 17) &&
	   !ows__proxy_env_is_ours("PATH", 4), "which host variables are replaced");
	ows__strv_free(&env);
	return done_testing();
}
