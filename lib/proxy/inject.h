/*
 * Credentials kept outside the sandbox (lib/proxy/inject.c).  A shared login
 * marked `inject` reaches the sandbox as a placeholder of the secret's
 * length; for the entry's hosts only, the proxy ends the sandbox's TLS with
 * a certificate from a CA made for this session (its key never leaves the
 * host process), puts the secret in place of the placeholder in the one
 * request header the entry names, and speaks TLS again to the real host,
 * whose certificate it verifies against the system's trust store.
 *
 * Nothing else is rewritten: a placeholder in a body, in a URL, in another
 * header or sent to any other host stays a placeholder.  The response side
 * is relayed with every copy of a secret turned back into its placeholder,
 * so that a host echoing the header does not hand the secret in.
 */
#ifndef OWS_INJECT_H
#define OWS_INJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"
#include "netio.h"

typedef struct ows__inject ows__inject;

/* Secrets shorter than this are refused: too short for a placeholder to stand in. */
#define OWS__INJECT_SECRET_MIN 16
#define OWS__INJECT_SECRET_MAX 4096
/* Header names are HTTP tokens; "Authorization" unless an entry names another. */
#define OWS__INJECT_HEADER_MAX 64

/*
 * A session's injector: a fresh CA (EC P-256, valid 30 days) and the system's
 * trust store read now, plus the PEM file `extra_ca` (NULL: none) trusted
 * besides it for the real hosts (a company's TLS gateway, a test's server).
 */
OWS__HIDDEN int ows__inject_new(const char *session_id, const char *extra_ca,
				ows__inject **out, ows_error *err);
/* Stops every connection it serves, waits for them, forgets the secrets. */
OWS__HIDDEN void ows__inject_free(ows__inject *inj);

/*
 * Fills placeholder[0..len) for a secret of `len` bytes: the secret's own
 * type prefix ("gho_", "npm_": up to and including a '_' in its first 12
 * bytes) and then random letters and digits, never equal to the secret.
 */
OWS__HIDDEN int ows__inject_placeholder(const char *secret, size_t len, char *placeholder,
					ows_error *err);

/*
 * Puts `secret` in place of `placeholder` (the same length) in the request
 * header `header` sent to host:port, a host name (no wildcard, no address).
 */
OWS__HIDDEN int ows__inject_add(ows__inject *inj, const char *host, int port, const char *header,
				const char *secret, const char *placeholder, size_t len,
				ows_error *err);

/* Every copy of from[0..len) in d[0..n) becomes to[0..len), in place. */
OWS__HIDDEN void ows__inject_swap(char *d, size_t n, const char *from, const char *to,
				  size_t len);

/* Turns every secret added into its placeholder in d[0..len), in place: for
 * whatever else goes into the sandbox (other entries' copies, variables). */
OWS__HIDDEN void ows__inject_hide(const ows__inject *inj, char *d, size_t len);

/* Is v[0..len) the placeholder of a secret added? */
OWS__HIDDEN bool ows__inject_is_placeholder(const ows__inject *inj, const char *v, size_t len);

/* Does a CONNECT to host:port get its TLS ended here? */
OWS__HIDDEN bool ows__inject_wants(const ows__inject *inj, const char *host, int port);

/* The session's CA certificate (PEM, NUL-terminated, borrowed), and the system's
 * trust store followed by it (caller frees), for the sandbox's trust files. */
OWS__HIDDEN const char *ows__inject_ca_pem(const ows__inject *inj);
OWS__HIDDEN char *ows__inject_bundle_pem(const ows__inject *inj, size_t *len, ows_error *err);

/*
 * Serves one CONNECT the proxy checked and connected: `client` has had no
 * answer yet, `upstream` is connected to host:port; both non-blocking, both
 * owned from now on (closed also on failure).  `pre` holds bytes the client
 * sent after its CONNECT head.  A thread of its own does the rest: TLS to
 * the host first (a 502 to the client when it does not verify), then the
 * 200, then TLS with the client.  OWS_ESTATE when too many are served (the
 * proxy answers 503).
 */
OWS__HIDDEN int ows__inject_serve(ows__inject *inj, ows__sock client, ows__sock upstream,
				  const char *host, int port, const char *pre, size_t pre_len,
				  ows_error *err);

/* ------------------------------------------------ for tests: the filters */

/*
 * The request side's framing: each head is parsed as strictly as the
 * proxy's own requests (ows__http_parse_in_tunnel: CRLF only, no control
 * bytes, no folding, one length, a Host naming the tunnel's host) and what
 * goes upstream is the head it parsed, rewritten, with the secret put in
 * the named header; bodies (Content-Length or chunked) pass untouched.  A
 * request the filter cannot frame so (or an Upgrade, or a head over 16 KiB)
 * ends the connection.
 */
typedef struct ows__reqfilter ows__reqfilter;
OWS__HIDDEN ows__reqfilter *ows__reqfilter_new(const ows__inject *inj, const char *host, int port);
OWS__HIDDEN void ows__reqfilter_free(ows__reqfilter *f);
/* Appends what is to go upstream to *out (grown with realloc, *cap its size);
 * -1 when the stream is refused (ows__reqfilter_error says why). */
OWS__HIDDEN int ows__reqfilter_feed(ows__reqfilter *f, const char *in, size_t n, char **out,
				    size_t *len, size_t *cap);
OWS__HIDDEN const char *ows__reqfilter_error(const ows__reqfilter *f);

/*
 * The response side: responses framed as the client frames them (a HEAD's
 * answer by `rq`'s requests), every secret of host:port in a head or a
 * decoded body back to its placeholder, a chunked body de-chunked and sent
 * on re-chunked, what may begin a secret held until more comes or its body
 * ends (a body that ends inside a secret ends with that part of the
 * placeholder).  -1 for what cannot be scrubbed (a compressed body, a
 * transfer coding other than chunked, a malformed frame): ows__scrub_error.
 * `eof`: the host closed; a body that ends with the connection ends here.
 */
typedef struct ows__scrub ows__scrub;
OWS__HIDDEN ows__scrub *ows__scrub_new(const ows__inject *inj, const char *host, int port,
				       ows__reqfilter *rq);
OWS__HIDDEN void ows__scrub_free(ows__scrub *s);
OWS__HIDDEN int ows__scrub_feed(ows__scrub *s, const char *in, size_t n, bool eof, char **out,
				size_t *len, size_t *cap);
OWS__HIDDEN size_t ows__scrub_held(const ows__scrub *s);
OWS__HIDDEN const char *ows__scrub_error(const ows__scrub *s);

#endif /* OWS_INJECT_H */
