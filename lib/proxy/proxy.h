/*
 * The allow-list proxy's portable parts, shared between lib/proxy/proxy.c, the
 * patterns and named groups of sites (hostpat.c), the request parser (http.c),
 * the proxy's environment for a sandbox (proxy_env.c), the tests and the fuzz
 * target.  Nothing here touches a socket; lib/netio.h is the platform layer.
 */
#ifndef OWS_PROXY_INTERNAL_H
#define OWS_PROXY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

struct sockaddr;

#define OWS__HOST_MAX 254 /* 253 characters of a DNS name, NUL */
#define OWS__ADDR_TEXT_MAX 72 /* an address as text: INET6_ADDRSTRLEN here and on Windows */

/* ------------------------------------------------------------- host names */

typedef enum ows__host_kind {
	OWS__HOST_NAME = 1,
	OWS__HOST_IPV4 = 2,
	OWS__HOST_IPV6 = 3, /* kept without brackets */
} ows__host_kind;

/*
 * Normalises a host as a client wrote it (`len` bytes, no port): lower-cased,
 * one trailing dot dropped, IPv6 literals given with or without brackets and
 * stored without.  Names are LDH labels (plus '_') of 1-63 characters, 253 in
 * all.  Returns the kind, or -1 when it is not a host.
 */
OWS__HIDDEN int ows__host_normalize(const char *in, size_t len, char out[OWS__HOST_MAX]);

/*
 * True when an address may be reached without the person's opt-in: not
 * loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
 * (169.254/16, fe80::/10), CGNAT (100.64/10), multicast, broadcast, reserved
 * (0/8, 240/4) or unspecified; IPv4-mapped and NAT64 (64:ff9b::/96) IPv6 are
 * judged by the IPv4 address inside.
 */
OWS__HIDDEN bool ows__addr_is_public(const struct sockaddr *sa);

/* ---------------------------------------------------------------- patterns */

/*
 * An allow-list entry.  Text form:
 *   host:port           exactly that host and port
 *   host                port 443
 *   *.example.com:443   any subdomain of example.com (not example.com)
 *   10.0.0.5:8080       an IP literal matches only when listed exactly
 *   [::1]:8080          the same for IPv6
 *   NAME...+private     also when NAME resolves to a loopback, private or
 *                       link-local address (an internal registry); listing
 *                       an IP literal or `localhost` exactly implies it
 *   !PATTERN            a deny entry: refuses what it covers even when an
 *                       allow entry covers it too (a deny wins, whatever the
 *                       order they were listed); the same hosts as above, but
 *                       without a port, or with port `*`, every port; no
 *                       +private, no @group
 */
#define OWS__PORT_ANY 0 /* a deny entry's port when it covers every port */

typedef struct ows__pattern {
	char host[OWS__HOST_MAX]; /* without "*." for a wildcard */
	int port;                 /* OWS__PORT_ANY only on a deny entry */
	bool wildcard;
	bool allow_private;
	bool deny;
	int kind;                 /* ows__host_kind of host (a wildcard is a NAME) */
} ows__pattern;

/* Parses one pattern; OWS_EINVAL naming it when it is not one. */
OWS__HIDDEN int ows__pattern_parse(const char *text, ows__pattern *out, ows_error *err);
/* The canonical text form ("*.example.com:443+private", "!evil.com:*"); `out` has 300 bytes. */
OWS__HIDDEN void ows__pattern_format(const ows__pattern *p, char out[300]);
/* Does `p` cover this normalised host and port? */
OWS__HIDDEN bool ows__pattern_match(const ows__pattern *p, const char *host, int kind, int port);

/*
 * Checks a pattern or a group name ("@package-registries") as given on a
 * command line or in a policy, without keeping it.  0 or OWS_EINVAL.
 */
OWS__HIDDEN int ows__site_check(const char *text, ows_error *err);

/* ----------------------------------------------------- client environment */

/*
 * The variables that point the common tools at the proxy on 127.0.0.1:port
 * (curl, wget, git, pip, npm/yarn, cargo, Go, Node 24+, Java, ssh through
 * `ssh_tunnel_cmd`), as NAME=VALUE appended to *out.  `ssh_tunnel_cmd` is the
 * ProxyCommand for ssh with %h %p (e.g. "/path/owsbx connect %h %p"); NULL
 * leaves GIT_SSH_COMMAND alone.
 */
OWS__HIDDEN int ows__proxy_env(int port, const char *ssh_tunnel_cmd, ows__strv *out,
			       ows_error *err);
/*
 * True for a host variable that would point a tool elsewhere (another proxy,
 * a NO_PROXY exemption, a proxy command) and must not pass into an allowlist
 * sandbox.  Case-insensitive.
 */
OWS__HIDDEN bool ows__proxy_env_is_ours(const char *name, size_t len);

/* ------------------------------------------------------------ named groups */

/*
 * The hosts of a named group ("code-hosting", "package-registries",
 * "search-apis"; a leading '@' is accepted), as a NULL-terminated static
 * array of patterns, or NULL when there is no such group.
 */
OWS__HIDDEN const char *const *ows__sites_group(const char *name);
/* The group names, NULL-terminated, static. */
OWS__HIDDEN const char *const *ows__sites_group_names(void);

/*
 * Reads an allow-sites file: one pattern or @group per line, '#' starts a
 * comment, blank lines ignored, surrounding spaces trimmed.  Each entry is
 * checked (ows__site_check) and appended to *out, which the caller owns.
 * OWS_ESYS when unreadable, OWS_EINVAL naming "FILE:LINE" when an entry is bad.
 */
OWS__HIDDEN int ows__sites_file_read(const char *path, ows__strv *out, ows_error *err);

/*
 * The port a sandbox with a network of its own listens on for its proxy
 * (ows__pxc_adopt).  Every such sandbox has its own loopback, so one port
 * serves them all; it stays in 47800-47899, the range the proof tells apart
 * from the ports outside it.  The ports above it, 47801-47899, are the
 * running calls' own listeners (ows__pxc_port_take).
 */
#define OWS__PROXY_PORT_INSIDE 47800

/* ------------------------------------------------- the host's one proxy */

/*
 * One session's part of the proxy every session of the host process shares:
 * its list, the sites it entered as (sources), its blocked log, its
 * listeners.  The shared proxy starts with the first client and stops with
 * the last (the library's one process-wide object, under its own lock), so
 * that threads and host ports do not grow with the sessions.  A client is
 * thread-safe.
 */
typedef struct ows__pxc ows__pxc;

OWS__HIDDEN int ows__pxc_open(ows__pxc **out, ows_error *err);
/* Closes the client's listeners and connections, then frees it. */
OWS__HIDDEN void ows__pxc_close(ows__pxc *cl);
/* A pattern or @group, listed with its source ("machine", "policy",
 * "credential", "session": static); removal forgets it from every source. */
OWS__HIDDEN int ows__pxc_allow(ows__pxc *cl, const char *pattern, const char *source,
			       ows_error *err);
OWS__HIDDEN int ows__pxc_disallow(ows__pxc *cl, const char *pattern, ows_error *err);
/*
 * Ends the TLS of CONNECTs to the injector's hosts to put its secrets in
 * (lib/proxy/inject.h); the client owns it from now on and frees it at close.
 * Called once, before the session's commands run.
 */
struct ows__inject;
OWS__HIDDEN void ows__pxc_inject(ows__pxc *cl, struct ows__inject *inj);
/* The ask hook (ows_session_set_ask): fn NULL stops asking and refuses the pending asks. */
OWS__HIDDEN int ows__pxc_set_ask(ows__pxc *cl, ows_ask_fn fn, void *ctx, int timeout_ms,
				 ows_error *err);
/* Turns the injected secrets in each of `texts` into their placeholders, in place. */
OWS__HIDDEN void ows__pxc_hide(ows__pxc *cl, ows__strv *texts);
/* The entries as listed: canonical patterns or "@group", and their sources, appended. */
OWS__HIDDEN int ows__pxc_sites(ows__pxc *cl, ows__strv *patterns, ows__strv *sources,
			       ows_error *err);

/*
 * Serves a listening socket made in the session's sandbox (owned from now
 * on, closed also on failure).  `call` 0 is the session's own listener;
 * otherwise what is accepted from it, and refused, belongs to that call,
 * until ows__pxc_end_call.  `port`: the call port it holds (frees it then).
 */
OWS__HIDDEN int ows__pxc_adopt(ows__pxc *cl, intptr_t s, uint32_t call, int port,
			       ows_error *err);
/* Where the sandbox shares the host's network (Windows): a listener on the
 * host's loopback in 47800-47899, at *port, for the session at large. */
OWS__HIDDEN int ows__pxc_listen_loopback(ows__pxc *cl, int *port, ows_error *err);
/*
 * A port for one call's listener, in 47801-47899, or 0 when all are taken
 * (the call then shares the session's).  A freed port is reused last.
 */
OWS__HIDDEN int ows__pxc_port_take(ows__pxc *cl);
/* Gives back a port no listener took; `taken_inside`: something in the
 * sandbox listens there, so it stays out of use. */
OWS__HIDDEN void ows__pxc_port_drop(ows__pxc *cl, int port, bool taken_inside);
/* Closes the call's listener and frees its port; its connections run on. */
OWS__HIDDEN void ows__pxc_end_call(ows__pxc *cl, uint32_t call);

#define OWS__PXC_ALL (-1) /* every call's refusals, merged by site */
/* The refusals of `call` (0: the session's own listener; OWS__PXC_ALL) at or
 * after since_ms, as ows_proxy_blocked_json gives them.  Caller frees. */
OWS__HIDDEN int ows__pxc_blocked_json(ows__pxc *cl, int64_t since_ms, int64_t call, char **out,
				      ows_error *err);

/* What the proxy would do with host:port, without connecting. */
typedef struct ows__verdict {
	bool allowed;
	char host[OWS__HOST_MAX]; /* normalised */
	int port;
	char pattern[300];        /* the entry that covers it (a deny entry for "denied"), or "" */
	const char *reason;       /* refused: "not listed", "denied", "private address",
				     "does not resolve" */
	char allow[300];          /* refused: the entry that would let it through, or "" (always
				     for "denied": only the person may take a deny entry back) */
	char addr[OWS__ADDR_TEXT_MAX]; /* "private address": the address it resolved to */
} ows__verdict;

/* 1 allowed, 0 refused (v says why), OWS_EINVAL for a bad host or port.
 * Resolves names as the proxy does (blocking: call it from a host thread). */
OWS__HIDDEN int ows__pxc_check(ows__pxc *cl, const char *host, int port, ows__verdict *v,
			       ows_error *err);

/* ---------------------------------------------------------- request parser */

#define OWS__HTTP_HEAD_MAX 16384 /* bytes of request line and headers */

typedef struct ows__http_req {
	bool is_connect;
	char method[24];
	char host[OWS__HOST_MAX]; /* normalised */
	int host_kind;
	int port;
	int version_minor;        /* HTTP/1.x */
	int64_t content_length;   /* -1: none given */
	bool chunked;
	bool close;               /* the client asked to close after this request */
	bool upgrade;             /* it asked for another protocol (Upgrade is dropped) */
	size_t head_len;          /* bytes of the head in the input, CRLFCRLF included */
	/*
	 * Plain requests only: the head to send upstream (origin-form target,
	 * Host set to the target, hop-by-hop and proxy headers dropped,
	 * "Connection: keep-alive" or "close" as the client asked), malloc'd.
	 */
	char *upstream_head;
	size_t upstream_head_len;
	const char *error;        /* why the request is bad (static) */
} ows__http_req;

/* An HTTP token character (RFC 9110's tchar). */
OWS__HIDDEN bool ows__http_is_tchar(unsigned char c);
/* Is name[0..nlen) `want`, case-insensitively (header names, codings)? */
OWS__HIDDEN bool ows__http_name_is(const char *name, size_t nlen, const char *want);

/*
 * Parses a proxy request head from buf[0..len).  Returns 1 with *req filled
 * (free req->upstream_head), 0 when more bytes are needed (and len is below
 * OWS__HTTP_HEAD_MAX), -1 when the request is bad (req->error says why;
 * nothing to free).  Never reads past len.
 */
OWS__HIDDEN int ows__http_parse(const char *buf, size_t len, ows__http_req *req);
/*
 * The same, strictly alike, for a request inside a tunnel whose TLS the proxy
 * ended for host:port (a normalised name): origin form, or an https:// URL
 * naming host:port; one Host, naming host:port (443 when it names no port),
 * required in HTTP/1.1; no CONNECT.  The upstream head names host:port, asks
 * for Accept-Encoding: identity (its response is read as text) and carries
 * Content-Length or Transfer-Encoding: chunked as parsed.
 */
OWS__HIDDEN int ows__http_parse_in_tunnel(const char *buf, size_t len, const char *host, int port,
					  ows__http_req *req);
OWS__HIDDEN void ows__http_req_release(ows__http_req *req);

/*
 * Where a chunked request body ends, so that the next request on the
 * connection is read as a request (and checked), not relayed as body bytes.
 * The body is relayed as it came, framing and trailers included.
 */
typedef struct ows__chunked {
	int state;
	uint64_t left;   /* bytes of chunk data still to come */
	unsigned line;   /* bytes of the current size, extension or trailer line */
} ows__chunked;

/*
 * Feeds body bytes; returns how many belong to the body (all of them unless
 * it ended: then *done is set and the rest is the next request), or -1 when
 * the framing is bad.
 */
OWS__HIDDEN long ows__chunked_feed(ows__chunked *st, const char *buf, size_t len, bool *done);
/* Are the next bytes chunk data (the rest: sizes, extensions, CRLFs, trailers)? */
OWS__HIDDEN bool ows__chunked_in_data(const ows__chunked *st);

#endif /* OWS_PROXY_INTERNAL_H */
