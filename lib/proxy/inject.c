/*
 * Credentials kept outside the sandbox: see inject.h for what is promised.
 *
 * The proxy's loop thread checks and connects a CONNECT as for any tunnel;
 * one whose host:port an injected entry names is handed here with both
 * sockets, and a thread of its own serves it with blocking-style mbedTLS
 * calls over the non-blocking sockets and a poll of the two.  Such tunnels
 * are few (a tool's API calls), so a thread each keeps the TLS state
 * machines out of the event loop at no cost that matters.
 *
 * No thread shares a key or certificate with another while it uses it:
 * mbedTLS caches precomputed points inside an EC key's group on first use,
 * so one key used by two threads would be written by both at once.  Each
 * parses its own leaf key, and takes a parsed trust store from a small pool
 * (parsing the system's costs about 7 ms), giving it back at the end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/oid.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#ifdef __linux__
#include <sys/mman.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "inject.h"
#include "platform.h"
#include "proxy.h"
#include "record.h"

/*
 * Injected tunnels served at once (a thread each): a session's share, and the
 * host process's, so that one session's burst never takes every thread.
 */
#define MAX_RELAYS 32
#define MAX_RELAYS_ALL 256
#define TRIM_EVERY_MS 2000

static atomic_int relays_all;      /* every session's, for MAX_RELAYS_ALL */
#ifdef __GLIBC__
static _Atomic int64_t trimmed_ms; /* when relay_end last gave memory back */
#endif
#define HANDSHAKE_MS 15000
#define IDLE_MS (10 * 60 * 1000)   /* a tunnel with no byte either way for this long ends */
#define RELAY_STACK (256 * 1024)
#define HEAD_MAX 16384
#define VALID_DAYS 30
#define TRUST_POOL 4               /* parsed trust stores kept for the next tunnels */

typedef struct rule {
	char host[OWS__HOST_MAX];
	int port;
	char header[OWS__INJECT_HEADER_MAX];
	char *secret;
	char *placeholder;
	size_t len;
} rule;

typedef struct leaf {
	char host[OWS__HOST_MAX];
	unsigned char *der;
	size_t len;
} leaf;

typedef struct relay {
	struct relay *prev, *next;
	ows__inject *inj;
	ows__sock cs, us;
	char host[OWS__HOST_MAX];
	int port;
	char *pre;
	size_t pre_len;
} relay;

/* A parsed trust store, used by one relay at a time. */
typedef struct trust {
	struct trust *next;
	mbedtls_x509_crt crt;
} trust;

typedef struct rng {
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
} rng;

struct ows__inject {
	pthread_mutex_t mu;      /* everything below that changes */
	pthread_cond_t gone;     /* a relay ended */
	rule *rules;
	size_t nrules;
	rng rng;                 /* for signing leaves, under mu */
	mbedtls_pk_context ca_key;
	mbedtls_pk_context leaf_key; /* one key for every host's certificate */
	unsigned char *leaf_key_der;
	size_t leaf_key_len;
	unsigned char *ca_der;
	size_t ca_der_len;
	char *ca_pem;
	char ca_name[128];
	char not_before[16], not_after[16];
	leaf *leaves;
	size_t nleaves;
	char *system_pem;        /* the system's trust store as read at start */
	size_t system_len;
	char *trust_pem;         /* the system's and the extra CA: for the real hosts */
	size_t trust_len;        /* NUL included, as mbedtls_x509_crt_parse wants for PEM */
	relay *relays;
	int nrelays;
	bool stopping;
	trust *pool;             /* parsed stores no relay is using */
	int npool;
};

/* ---------------------------------------------------------------- helpers */

/*
 * Where a secret is kept.  On Linux its pages are left out of every child
 * the host forks or clones (MADV_DONTFORK): the landlock provider's init is
 * a clone of the host that never execs, and must not carry the secrets of
 * this session or of any other into the sandbox, even where it cannot be
 * read; they stay out of core dumps too.
 */
static char *secret_alloc(size_t n)
{
#ifdef __linux__
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, n, MADV_DONTFORK) != 0) {
		munmap(p, n);
		return NULL;
	}
	madvise(p, n, MADV_DONTDUMP);
	return p;
#else
	return malloc(n);
#endif
}

static void secret_free(char *p, size_t n)
{
	if (!p)
		return;
	mbedtls_platform_zeroize(p, n);
#ifdef __linux__
	munmap(p, n);
#else
	free(p);
#endif
}

static int fail_tls(ows_error *err, int code, const char *what)
{
	char buf[160];
	mbedtls_strerror(code, buf, sizeof(buf));
	return ows__fail(err, OWS_ESYS, 0, "TLS", NULL, "%s: %s", what, buf);
}

static int rng_seed(rng *r, ows_error *err)
{
	static const char who[] = "owsandbox inject";
	mbedtls_entropy_init(&r->entropy);
	mbedtls_ctr_drbg_init(&r->drbg);
	int rc = mbedtls_ctr_drbg_seed(&r->drbg, mbedtls_entropy_func, &r->entropy,
				       (const unsigned char *)who, sizeof(who) - 1);
	return rc ? fail_tls(err, rc, "cannot seed the random generator") : 0;
}

static void rng_free(rng *r)
{
	mbedtls_ctr_drbg_free(&r->drbg);
	mbedtls_entropy_free(&r->entropy);
}

/* memmem, which mingw lacks. */
static const char *find(const char *hay, size_t n, const char *needle, size_t m)
{
	if (m == 0 || m > n)
		return NULL;
	for (const char *p = hay; (p = memchr(p, needle[0], n - (size_t)(p - hay) - m + 1));
	     p++) {
		if (memcmp(p, needle, m) == 0)
			return p;
		if ((size_t)(p - hay) + m >= n)
			break;
	}
	return NULL;
}

void ows__inject_swap(char *d, size_t n, const char *from, const char *to, size_t len)
{
	for (char *p = d; (p = (char *)find(p, n - (size_t)(p - d), from, len)); p += len)
		memcpy(p, to, len);
}

static int grow(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 4096;
	while (n < need)
		n *= 2;
	char *p = realloc(*buf, n);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

static int append(char **out, size_t *len, size_t *cap, const char *d, size_t n)
{
	if (grow(out, cap, *len + n) < 0)
		return -1;
	memcpy(*out + *len, d, n);
	*len += n;
	return 0;
}

/* Where the system keeps its trust store as one PEM file. */
static const char *const trust_files[] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Arch */
	"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
	"/etc/ssl/ca-bundle.pem",             /* openSUSE */
	"/etc/ssl/cert.pem",                  /* macOS, Alpine */
};

static void trust_free(trust *t)
{
	if (t) {
		mbedtls_x509_crt_free(&t->crt);
		free(t);
	}
}

/* A parsed trust store for one relay: the pool's, or a fresh one. */
static trust *trust_take(ows__inject *inj)
{
	pthread_mutex_lock(&inj->mu);
	trust *t = inj->pool;
	if (t) {
		inj->pool = t->next;
		inj->npool--;
	}
	pthread_mutex_unlock(&inj->mu);
	if (t || !(t = calloc(1, sizeof(*t))))
		return t;
	mbedtls_x509_crt_init(&t->crt);
	/* a certificate the store has and mbedTLS cannot read is no matter */
	if (mbedtls_x509_crt_parse(&t->crt, (const unsigned char *)inj->trust_pem,
				   inj->trust_len) < 0) {
		trust_free(t);
		return NULL;
	}
	return t;
}

static void trust_give(ows__inject *inj, trust *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&inj->mu);
	bool keep = inj->npool < TRUST_POOL;
	if (keep) {
		t->next = inj->pool;
		inj->pool = t;
		inj->npool++;
	}
	pthread_mutex_unlock(&inj->mu);
	if (!keep)
		trust_free(t);
}

static int load_trust(ows__inject *inj, const char *extra, ows_error *err)
{
	const char *from = NULL;
	for (size_t i = 0; i < OWS__ARRAY_LEN(trust_files) && !inj->system_pem; i++)
		if (ows__read_file(trust_files[i], &inj->system_pem, &inj->system_len, NULL) == 0)
			from = trust_files[i];
	if (!inj->system_pem)
		return ows__fail(err, OWS_ESETUP, ENOENT, trust_files[0],
				 "install the system's CA certificates (ca-certificates)",
				 "no system trust store to check the real hosts with");
	size_t elen = 0;
	char *e = NULL;
	int rc = extra ? ows__read_file(extra, &e, &elen, err) : 0;
	if (rc < 0)
		return rc;
	inj->trust_len = inj->system_len + 1 + elen + 1;
	inj->trust_pem = malloc(inj->trust_len);
	if (!inj->trust_pem) {
		free(e);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	memcpy(inj->trust_pem, inj->system_pem, inj->system_len);
	inj->trust_pem[inj->system_len] = '\n';
	if (e)
		memcpy(inj->trust_pem + inj->system_len + 1, e, elen);
	inj->trust_pem[inj->trust_len - 1] = '\0';
	free(e);
	/* at least one certificate must come out of it, or no host would verify; the
	 * parsed store is the pool's first */
	trust *t = trust_take(inj);
	if (!t || t->crt.version == 0) {
		trust_free(t);
		return ows__fail(err, OWS_ESETUP, 0, extra ? extra : from,
				 "check the PEM file", "no certificate could be read");
	}
	trust_give(inj, t);
	return 0;
}

/* ----------------------------------------------------------- certificates */

static void validity(ows__inject *inj)
{
	time_t now = time(NULL);
	time_t from = now - 3600, to = now + (time_t)VALID_DAYS * 86400;
	struct tm a, b;
#ifdef _WIN32
	gmtime_s(&a, &from);
	gmtime_s(&b, &to);
#else
	gmtime_r(&from, &a);
	gmtime_r(&to, &b);
#endif
	strftime(inj->not_before, sizeof(inj->not_before), "%Y%m%d%H%M%S", &a);
	strftime(inj->not_after, sizeof(inj->not_after), "%Y%m%d%H%M%S", &b);
}

static int gen_key(mbedtls_pk_context *key, rng *r, ows_error *err)
{
	int rc = mbedtls_pk_setup(key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
	if (rc == 0)
		rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(*key),
					 mbedtls_ctr_drbg_random, &r->drbg);
	return rc ? fail_tls(err, rc, "cannot make a key") : 0;
}

/* A DER length, short or long form; returns its size. */
static size_t der_len(unsigned char *p, size_t n)
{
	if (n < 128) {
		p[0] = (unsigned char)n;
		return 1;
	}
	p[0] = 0x81 + (n > 255);
	if (n > 255) {
		p[1] = (unsigned char)(n >> 8);
		p[2] = (unsigned char)n;
		return 3;
	}
	p[1] = (unsigned char)n;
	return 2;
}

/* subjectAltName: SEQUENCE { [2] dNSName host } */
static size_t san_der(const char *host, unsigned char *out)
{
	size_t hl = strlen(host);
	unsigned char name[4];
	size_t nl = der_len(name, hl);
	size_t inner = 1 + nl + hl;
	size_t o = 0;
	out[o++] = 0x30;
	o += der_len(out + o, inner);
	out[o++] = 0x82;
	memcpy(out + o, name, nl);
	o += nl;
	memcpy(out + o, host, hl);
	return o + hl;
}

/*
 * Writes a certificate signed by the CA (or by itself when `subject_key`
 * is the CA's): DER into a fresh buffer.
 */
static int write_cert(ows__inject *inj, const char *subject, mbedtls_pk_context *subject_key,
		      const char *host, unsigned char **der, size_t *len, ows_error *err)
{
	bool ca = host == NULL;
	mbedtls_x509write_cert w;
	mbedtls_mpi serial;
	mbedtls_x509write_crt_init(&w);
	mbedtls_mpi_init(&serial);
	unsigned char sn[16];
	int rc = mbedtls_ctr_drbg_random(&inj->rng.drbg, sn, sizeof(sn));
	sn[0] &= 0x7f; /* positive */
	sn[0] |= 0x01; /* and not shortened */
	if (rc == 0)
		rc = mbedtls_mpi_read_binary(&serial, sn, sizeof(sn));
	mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
	mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
	mbedtls_x509write_crt_set_subject_key(&w, subject_key);
	mbedtls_x509write_crt_set_issuer_key(&w, &inj->ca_key);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_serial(&w, &serial);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_subject_name(&w, subject);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_issuer_name(&w, inj->ca_name);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_validity(&w, inj->not_before, inj->not_after);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_basic_constraints(&w, ca, ca ? 0 : -1);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_key_usage(
			&w, ca ? MBEDTLS_X509_KU_KEY_CERT_SIGN | MBEDTLS_X509_KU_CRL_SIGN
			       : MBEDTLS_X509_KU_DIGITAL_SIGNATURE);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_subject_key_identifier(&w);
	if (rc == 0)
		rc = mbedtls_x509write_crt_set_authority_key_identifier(&w);
	if (rc == 0 && !ca) {
		unsigned char san[300];
		size_t n = san_der(host, san);
		rc = mbedtls_x509write_crt_set_extension(&w, MBEDTLS_OID_SUBJECT_ALT_NAME,
							 MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME),
							 0, san, n);
		/* extKeyUsage: serverAuth */
		static const unsigned char eku[] = {0x30, 0x0a, 0x06, 0x08, 0x2b, 0x06,
						    0x01, 0x05, 0x05, 0x07, 0x03, 0x01};
		if (rc == 0)
			rc = mbedtls_x509write_crt_set_extension(
				&w, MBEDTLS_OID_EXTENDED_KEY_USAGE,
				MBEDTLS_OID_SIZE(MBEDTLS_OID_EXTENDED_KEY_USAGE), 0, eku, sizeof(eku));
	}
	unsigned char buf[4096];
	int n = rc == 0 ? mbedtls_x509write_crt_der(&w, buf, sizeof(buf), mbedtls_ctr_drbg_random,
						    &inj->rng.drbg)
			: rc;
	mbedtls_x509write_crt_free(&w);
	mbedtls_mpi_free(&serial);
	if (n <= 0)
		return fail_tls(err, n, "cannot make a certificate");
	/* the DER is written at the end of the buffer */
	if (!(*der = malloc((size_t)n)))
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	memcpy(*der, buf + sizeof(buf) - n, (size_t)n);
	*len = (size_t)n;
	return 0;
}

static int make_ca(ows__inject *inj, const char *session_id, ows_error *err)
{
	char id[40];
	size_t k = 0;
	for (const char *p = session_id ? session_id : ""; *p && k < sizeof(id) - 1; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
			id[k++] = *p;
	id[k] = '\0';
	snprintf(inj->ca_name, sizeof(inj->ca_name), "CN=owsandbox session %s CA,O=owsandbox",
		 k ? id : "-");
	validity(inj);
	int rc = gen_key(&inj->ca_key, &inj->rng, err);
	if (rc == 0)
		rc = gen_key(&inj->leaf_key, &inj->rng, err);
	if (rc == 0)
		rc = write_cert(inj, inj->ca_name, &inj->ca_key, NULL, &inj->ca_der, &inj->ca_der_len,
				err);
	if (rc < 0)
		return rc;
	unsigned char kb[1024];
	int n = mbedtls_pk_write_key_der(&inj->leaf_key, kb, sizeof(kb));
	if (n <= 0)
		return fail_tls(err, n, "cannot keep the key");
	if (!(inj->leaf_key_der = malloc((size_t)n)))
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	memcpy(inj->leaf_key_der, kb + sizeof(kb) - n, (size_t)n);
	inj->leaf_key_len = (size_t)n;
	mbedtls_platform_zeroize(kb, sizeof(kb));
	size_t olen = 0;
	char pem[4096];
	rc = mbedtls_pem_write_buffer("-----BEGIN CERTIFICATE-----\n", "-----END CERTIFICATE-----\n",
				      inj->ca_der, inj->ca_der_len, (unsigned char *)pem,
				      sizeof(pem), &olen);
	if (rc)
		return fail_tls(err, rc, "cannot write the CA");
	return (inj->ca_pem = ows__strdup(pem, err)) ? 0 : OWS_ENOMEM;
}

/* The DER certificate for `host`, made on first use: under inj->mu. */
static int leaf_locked(ows__inject *inj, const char *host, const leaf **out, ows_error *err)
{
	for (size_t i = 0; i < inj->nleaves; i++)
		if (strcmp(inj->leaves[i].host, host) == 0) {
			*out = &inj->leaves[i];
			return 0;
		}
	leaf *more = realloc(inj->leaves, (inj->nleaves + 1) * sizeof(*more));
	if (!more)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	inj->leaves = more;
	leaf *l = &inj->leaves[inj->nleaves];
	memset(l, 0, sizeof(*l));
	snprintf(l->host, sizeof(l->host), "%s", host);
	char subject[OWS__HOST_MAX + 8];
	snprintf(subject, sizeof(subject), "CN=%s", host);
	int rc = write_cert(inj, subject, &inj->leaf_key, host, &l->der, &l->len, err);
	if (rc < 0)
		return rc;
	inj->nleaves++;
	*out = l;
	return 0;
}

/* ------------------------------------------------------------ the object */

int ows__inject_new(const char *session_id, const char *extra_ca, ows__inject **out,
		    ows_error *err)
{
	*out = NULL;
	ows__inject *inj = ows__calloc(1, sizeof(*inj), err);
	if (!inj)
		return OWS_ENOMEM;
	pthread_mutex_init(&inj->mu, NULL);
	pthread_cond_init(&inj->gone, NULL);
	mbedtls_pk_init(&inj->ca_key);
	mbedtls_pk_init(&inj->leaf_key);
	int rc = rng_seed(&inj->rng, err);
	if (rc == 0)
		rc = load_trust(inj, extra_ca, err);
	if (rc == 0)
		rc = make_ca(inj, session_id, err);
	if (rc < 0) {
		ows__inject_free(inj);
		return rc;
	}
	*out = inj;
	return 0;
}

static void forget(char *p, size_t n)
{
	if (p) {
		mbedtls_platform_zeroize(p, n);
		free(p);
	}
}

void ows__inject_free(ows__inject *inj)
{
	if (!inj)
		return;
	pthread_mutex_lock(&inj->mu);
	inj->stopping = true;
	for (relay *r = inj->relays; r; r = r->next) {
		ows__sock_shutdown_rdwr(r->cs);
		ows__sock_shutdown_rdwr(r->us);
	}
	while (inj->nrelays)
		pthread_cond_wait(&inj->gone, &inj->mu);
	pthread_mutex_unlock(&inj->mu);
	for (size_t i = 0; i < inj->nrules; i++) {
		secret_free(inj->rules[i].secret, inj->rules[i].len);
		free(inj->rules[i].placeholder);
	}
	free(inj->rules);
	for (size_t i = 0; i < inj->nleaves; i++)
		free(inj->leaves[i].der);
	free(inj->leaves);
	mbedtls_pk_free(&inj->ca_key);
	mbedtls_pk_free(&inj->leaf_key);
	forget((char *)inj->leaf_key_der, inj->leaf_key_len);
	free(inj->ca_der);
	free(inj->ca_pem);
	while (inj->pool) {
		trust *t = inj->pool;
		inj->pool = t->next;
		trust_free(t);
	}
	free(inj->system_pem);
	free(inj->trust_pem);
	rng_free(&inj->rng);
	pthread_cond_destroy(&inj->gone);
	pthread_mutex_destroy(&inj->mu);
	free(inj);
}

static bool secret_byte(unsigned char c)
{
	return c > 0x20 && c < 0x7f; /* visible ASCII: what a header value can carry as is */
}

static int check_length(size_t len, const char *where, ows_error *err)
{
	if (len >= OWS__INJECT_SECRET_MIN && len <= OWS__INJECT_SECRET_MAX)
		return 0;
	return ows__fail(err, OWS_EINVAL, 0, where, NULL,
			 "a secret of %lu bytes cannot be injected (%d to %d)", (unsigned long)len,
			 OWS__INJECT_SECRET_MIN, OWS__INJECT_SECRET_MAX);
}

int ows__inject_placeholder(const char *secret, size_t len, char *placeholder, ows_error *err)
{
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int rc = check_length(len, NULL, err);
	if (rc < 0)
		return rc;
	size_t keep = 0;
	for (size_t i = 0; i < len && i < 12; i++)
		if (secret[i] == '_')
			keep = i + 1;
	if (len - keep < 12)
		keep = 0; /* too little would be random */
	memcpy(placeholder, secret, keep);
	for (;;) {
		size_t i = keep;
		while (i < len) {
			unsigned char r[64];
			if (ows__plat_random(r, sizeof(r)) != 0)
				return ows__fail_sys(err, "random", NULL, "cannot make a placeholder");
			for (size_t k = 0; k < sizeof(r) && i < len; k++)
				if (r[k] < 248) /* 248 = 4 * 62: no bias */
					placeholder[i++] = alnum[r[k] % 62];
		}
		if (memcmp(placeholder, secret, len) != 0)
			return 0;
	}
}

int ows__inject_add(ows__inject *inj, const char *host, int port, const char *header,
		    const char *secret, const char *placeholder, size_t len, ows_error *err)
{
	char h[OWS__HOST_MAX];
	if (!host || ows__host_normalize(host, strlen(host), h) != OWS__HOST_NAME || port < 1 ||
	    port > 65535)
		return ows__fail(err, OWS_EINVAL, 0, host, "name each host exactly, as host:port",
				 "a secret can only be injected for a host name");
	size_t hl = header ? strlen(header) : 0;
	bool token = hl > 0 && hl < OWS__INJECT_HEADER_MAX;
	for (size_t i = 0; token && i < hl; i++)
		token = ows__http_is_tchar((unsigned char)header[i]);
	if (!token)
		return ows__fail(err, OWS_EINVAL, 0, header ? header : "(none)",
				 "name a request header such as Authorization", "not a header name");
	int rc = check_length(len, host, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < len; i++)
		if (!secret_byte((unsigned char)secret[i]) ||
		    !secret_byte((unsigned char)placeholder[i]))
			return ows__fail(err, OWS_EINVAL, 0, host, NULL,
					 "a secret with spaces or control bytes cannot be injected");
	pthread_mutex_lock(&inj->mu);
	rule *more = realloc(inj->rules, (inj->nrules + 1) * sizeof(*more));
	rule *r = more ? &more[inj->nrules] : NULL;
	if (more)
		inj->rules = more;
	if (r) {
		memset(r, 0, sizeof(*r));
		r->secret = secret_alloc(len);
		r->placeholder = malloc(len);
	}
	if (!r || !r->secret || !r->placeholder) {
		if (r) {
			secret_free(r->secret, len);
			free(r->placeholder);
		}
		pthread_mutex_unlock(&inj->mu);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	snprintf(r->host, sizeof(r->host), "%s", h);
	r->port = port;
	snprintf(r->header, sizeof(r->header), "%s", header);
	memcpy(r->secret, secret, len);
	memcpy(r->placeholder, placeholder, len);
	r->len = len;
	inj->nrules++;
	pthread_mutex_unlock(&inj->mu);
	return 0;
}

/* Rules are added before the proxy sees the injector and never after: no lock to read them. */
bool ows__inject_wants(const ows__inject *inj, const char *host, int port)
{
	for (size_t i = 0; inj && i < inj->nrules; i++)
		if (inj->rules[i].port == port && strcmp(inj->rules[i].host, host) == 0)
			return true;
	return false;
}

void ows__inject_hide(const ows__inject *inj, char *d, size_t len)
{
	for (size_t i = 0; inj && i < inj->nrules; i++)
		ows__inject_swap(d, len, inj->rules[i].secret, inj->rules[i].placeholder,
				 inj->rules[i].len);
}

bool ows__inject_is_placeholder(const ows__inject *inj, const char *v, size_t len)
{
	for (size_t i = 0; i < inj->nrules; i++)
		if (inj->rules[i].len == len && memcmp(inj->rules[i].placeholder, v, len) == 0)
			return true;
	return false;
}

static bool rule_for(const rule *r, const char *host, int port)
{
	return r->port == port && strcmp(r->host, host) == 0;
}

const char *ows__inject_ca_pem(const ows__inject *inj)
{
	return inj->ca_pem;
}

char *ows__inject_bundle_pem(const ows__inject *inj, size_t *len, ows_error *err)
{
	size_t cl = strlen(inj->ca_pem);
	char *b = malloc(inj->system_len + 1 + cl + 1);
	if (!b) {
		ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	memcpy(b, inj->system_pem, inj->system_len);
	size_t n = inj->system_len;
	if (n && b[n - 1] != '\n')
		b[n++] = '\n';
	memcpy(b + n, inj->ca_pem, cl + 1);
	*len = n + cl;
	return b;
}

/* ---------------------------------------------------------- request side */

enum { F_HEAD, F_BODY, F_CHUNK, F_BAD };

struct ows__reqfilter {
	const ows__inject *inj;
	char host[OWS__HOST_MAX];
	int port;
	int state;
	char head[HEAD_MAX];
	size_t hlen;
	uint64_t left;
	ows__chunked chunk;
	const char *error;
	/* the requests sent whose answers have not begun: was each a HEAD? */
	bool heads[64];
	size_t first_head, nheads;
};

ows__reqfilter *ows__reqfilter_new(const ows__inject *inj, const char *host, int port)
{
	ows__reqfilter *f = calloc(1, sizeof(*f));
	if (f) {
		f->inj = inj;
		snprintf(f->host, sizeof(f->host), "%s", host);
		f->port = port;
	}
	return f;
}

void ows__reqfilter_free(ows__reqfilter *f)
{
	if (f) {
		mbedtls_platform_zeroize(f->head, sizeof(f->head));
		free(f);
	}
}

const char *ows__reqfilter_error(const ows__reqfilter *f)
{
	return f->error ? f->error : "";
}

static int refuse(ows__reqfilter *f, const char *why)
{
	f->state = F_BAD;
	f->error = why;
	return -1;
}

/* Puts the secrets of the tunnel's host in the named headers of a head the
 * parser rewrote: one "Name: value" a line, CRLF, nothing folded. */
static void inject_head(const ows__reqfilter *f, char *h, size_t n)
{
	for (char *line = h; line < h + n;) {
		char *end = (char *)find(line, (size_t)(h + n - line), "\r\n", 2);
		if (!end)
			break;
		char *colon = memchr(line, ':', (size_t)(end - line));
		if (colon && line != h) {
			size_t nl = (size_t)(colon - line);
			char *v = colon + 1;
			while (v < end && *v == ' ')
				v++;
			for (size_t i = 0; i < f->inj->nrules; i++) {
				const rule *r = &f->inj->rules[i];
				if (rule_for(r, f->host, f->port) && ows__http_name_is(line, nl, r->header))
					ows__inject_swap(v, (size_t)(end - v), r->placeholder, r->secret,
							 r->len);
			}
		}
		line = end + 2;
	}
}

/* A whole head is at the start of f->head[0..f->hlen): parse it strictly, the
 * way the server will, and queue its rewritten form.  0 more is needed,
 * 1 done (*used: the head's bytes), -1 refused. */
static int take_head(ows__reqfilter *f, size_t *used, char **out, size_t *len, size_t *cap)
{
	ows__http_req req;
	int r = ows__http_parse_in_tunnel(f->head, f->hlen, f->host, f->port, &req);
	if (r < 0)
		return refuse(f, req.error);
	if (r == 0)
		return f->hlen >= HEAD_MAX ? refuse(f, "a request head over 16 KiB") : 0;
	int rc = 0;
	if (req.upgrade)
		rc = refuse(f, "a protocol upgrade inside an injected tunnel");
	else if (f->nheads == OWS__ARRAY_LEN(f->heads))
		rc = refuse(f, "too many requests waiting for their answers");
	if (rc == 0) {
		inject_head(f, req.upstream_head, req.upstream_head_len);
		if (append(out, len, cap, req.upstream_head, req.upstream_head_len) < 0)
			rc = refuse(f, "out of memory");
		mbedtls_platform_zeroize(req.upstream_head, req.upstream_head_len);
	}
	if (rc == 0) {
		/* what the response side must know to frame the answer */
		f->heads[(f->first_head + f->nheads++) % OWS__ARRAY_LEN(f->heads)] =
			strcmp(req.method, "HEAD") == 0;
		if (req.chunked) {
			f->state = F_CHUNK;
			f->chunk = (ows__chunked){0};
		} else if (req.content_length > 0) {
			f->state = F_BODY;
			f->left = (uint64_t)req.content_length;
		}
		*used = req.head_len;
	}
	ows__http_req_release(&req);
	return rc < 0 ? rc : 1;
}

int ows__reqfilter_feed(ows__reqfilter *f, const char *in, size_t n, char **out, size_t *len,
			size_t *cap)
{
	while (n > 0) {
		if (f->state == F_BAD)
			return -1;
		if (f->state == F_HEAD) {
			size_t old = f->hlen, take = n < HEAD_MAX - old ? n : HEAD_MAX - old;
			memcpy(f->head + old, in, take);
			f->hlen += take;
			size_t hl = 0;
			int r = take_head(f, &hl, out, len, cap);
			if (r < 0)
				return -1;
			if (r == 0) {
				in += take;
				n -= take;
				continue;
			}
			/* the head ended in what just came: the rest is its body, or the next */
			mbedtls_platform_zeroize(f->head, f->hlen);
			f->hlen = 0;
			in += hl - old;
			n -= hl - old;
		} else if (f->state == F_BODY) {
			size_t take = (uint64_t)n < f->left ? n : (size_t)f->left;
			if (append(out, len, cap, in, take) < 0)
				return refuse(f, "out of memory");
			f->left -= take;
			in += take;
			n -= take;
			if (f->left == 0)
				f->state = F_HEAD;
		} else {
			bool done = false;
			long k = ows__chunked_feed(&f->chunk, in, n, &done);
			if (k < 0)
				return refuse(f, "bad chunked framing");
			if (append(out, len, cap, in, (size_t)k) < 0)
				return refuse(f, "out of memory");
			in += k;
			n -= (size_t)k;
			if (done)
				f->state = F_HEAD;
		}
	}
	return 0;
}

/* --------------------------------------------------------- response side */

/*
 * Responses are framed as the client will frame them, so that the scrubber
 * sees each body as the client will read it: a chunked body de-chunked (a
 * chunk boundary inside a secret hides nothing) and sent on in chunks of its
 * own, a body the host compressed refused (the request asked for identity;
 * a host that compresses anyway cannot be scrubbed).  What may begin a
 * secret is held for as long as it takes, never for a time the host could
 * outwait; a body that ends inside a secret has that part of it turned into
 * the same part of the placeholder.
 */
enum { R_HEAD, R_BODY, R_CHUNK, R_EOF, R_BAD };

#define RESP_HEAD_MAX 65536

struct ows__scrub {
	const rule **rules;
	size_t nrules;
	ows__reqfilter *rq; /* whose requests these answer; NULL: none was a HEAD */
	int state;
	char *head;         /* a response head as it comes, RESP_HEAD_MAX */
	size_t hlen;
	uint64_t left;      /* R_BODY: bytes still to come */
	ows__chunked chunk; /* R_CHUNK: where the chunked body is */
	char *work;
	size_t cap;
	size_t held;        /* bytes at the start of work kept from the last feed */
	char *piece;        /* a chunk's scrubbed data, before its framing */
	size_t piece_len, piece_cap;
	const char *error;
};

ows__scrub *ows__scrub_new(const ows__inject *inj, const char *host, int port,
			   ows__reqfilter *rq)
{
	ows__scrub *s = calloc(1, sizeof(*s));
	if (!s || !(s->rules = calloc(inj->nrules ? inj->nrules : 1, sizeof(*s->rules))) ||
	    !(s->head = malloc(RESP_HEAD_MAX))) {
		if (s)
			free(s->rules);
		free(s);
		return NULL;
	}
	s->rq = rq;
	for (size_t i = 0; i < inj->nrules; i++)
		if (rule_for(&inj->rules[i], host, port))
			s->rules[s->nrules++] = &inj->rules[i];
	return s;
}

void ows__scrub_free(ows__scrub *s)
{
	if (s) {
		forget(s->work, s->cap);
		forget(s->piece, s->piece_cap);
		forget(s->head, RESP_HEAD_MAX);
		free(s->rules);
		free(s);
	}
}

size_t ows__scrub_held(const ows__scrub *s)
{
	return s->held;
}

const char *ows__scrub_error(const ows__scrub *s)
{
	return s->error ? s->error : "";
}

static int scrub_refuse(ows__scrub *s, const char *why)
{
	s->state = R_BAD;
	s->error = why;
	return -1;
}

/* The longest end of w[0..n) that a secret starts with, shorter than the
 * secret; *r the rule whose secret it is. */
static size_t secret_start_at_end(const ows__scrub *s, const char *w, size_t n, const rule **r)
{
	size_t best = 0;
	for (size_t i = 0; i < s->nrules; i++) {
		const rule *ri = s->rules[i];
		for (size_t k = ri->len - 1 < n ? ri->len - 1 : n; k > best; k--)
			if (memcmp(w + n - k, ri->secret, k) == 0) {
				best = k;
				*r = ri;
				break;
			}
	}
	return best;
}

/* Body bytes through the scrubber: what cannot begin a secret is appended to
 * out; `end`: the body ends here, and a secret begun at its end is hidden. */
static int scrub_data(ows__scrub *s, const char *in, size_t n, bool end, char **out, size_t *len,
		      size_t *cap)
{
	size_t total = s->held + n;
	if (grow(&s->work, &s->cap, total + 1) < 0)
		return -1;
	if (n)
		memcpy(s->work + s->held, in, n);
	for (size_t i = 0; i < s->nrules; i++)
		ows__inject_swap(s->work, total, s->rules[i]->secret, s->rules[i]->placeholder,
				 s->rules[i]->len);
	const rule *r = NULL;
	size_t keep = secret_start_at_end(s, s->work, total, &r);
	if (end && keep) {
		memcpy(s->work + total - keep, r->placeholder, keep);
		keep = 0;
	}
	if (append(out, len, cap, s->work, total - keep) < 0)
		return -1;
	memmove(s->work, s->work + total - keep, keep);
	mbedtls_platform_zeroize(s->work + keep, total - keep);
	s->held = keep;
	return 0;
}

/* Chunked body bytes: de-chunked, scrubbed, and sent on as chunks of their own. */
static int scrub_chunked(ows__scrub *s, const char *in, size_t n, size_t *used, char **out,
			 size_t *len, size_t *cap)
{
	size_t i = 0;
	bool done = false;
	s->piece_len = 0;
	while (i < n && !done) {
		bool data = ows__chunked_in_data(&s->chunk);
		/* framing a byte at a time: it is a few bytes a chunk, and never data */
		size_t give = !data ? 1 : n - i < s->chunk.left ? n - i : (size_t)s->chunk.left;
		long k = ows__chunked_feed(&s->chunk, in + i, give, &done);
		if (k < 0)
			return scrub_refuse(s, "the host's chunked answer is malformed");
		if (data && scrub_data(s, in + i, (size_t)k, false, &s->piece, &s->piece_len,
				       &s->piece_cap) < 0)
			return scrub_refuse(s, "out of memory");
		i += (size_t)k;
	}
	if (done && scrub_data(s, NULL, 0, true, &s->piece, &s->piece_len, &s->piece_cap) < 0)
		return scrub_refuse(s, "out of memory");
	char size[24];
	int sl = snprintf(size, sizeof(size), "%zx\r\n", s->piece_len);
	if ((s->piece_len && (append(out, len, cap, size, (size_t)sl) < 0 ||
			      append(out, len, cap, s->piece, s->piece_len) < 0 ||
			      append(out, len, cap, "\r\n", 2) < 0)) ||
	    (done && append(out, len, cap, "0\r\n\r\n", 5) < 0)) /* trailers are not sent */
		return scrub_refuse(s, "out of memory");
	mbedtls_platform_zeroize(s->piece, s->piece_len);
	if (done)
		s->state = R_HEAD;
	*used = i;
	return 0;
}

/* The value of the header `name` in a response head's line, or NULL. */
static const char *resp_header(const char *line, size_t ll, const char *name, size_t *vl)
{
	const char *colon = memchr(line, ':', ll);
	if (!colon || !ows__http_name_is(line, (size_t)(colon - line), name))
		return NULL;
	const char *v = colon + 1, *e = line + ll;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*vl = (size_t)(e - v);
	return v;
}

/* Was the request this response answers a HEAD?  Taken off the queue. */
static bool answers_head(ows__scrub *s)
{
	ows__reqfilter *f = s->rq;
	if (!f || !f->nheads)
		return false;
	bool head = f->heads[f->first_head];
	f->first_head = (f->first_head + 1) % OWS__ARRAY_LEN(f->heads);
	f->nheads--;
	return head;
}

/* Frames a whole response head h[0..n) (lines end in LF, CR before it allowed). */
static int frame_response(ows__scrub *s, const char *h, size_t n)
{
	if (n < 12 || memcmp(h, "HTTP/1.", 7) != 0 || h[8] != ' ')
		return scrub_refuse(s, "the host's answer is not HTTP/1.x");
	int status = 0;
	for (int k = 9; k < 12; k++)
		status = h[k] >= '0' && h[k] <= '9' ? status * 10 + (h[k] - '0') : -1000;
	if (status < 100)
		return scrub_refuse(s, "the host's answer has no status");
	int64_t length = -1;
	bool chunked = false;
	for (const char *line = (const char *)memchr(h, '\n', n) + 1; line < h + n;) {
		const char *nl = memchr(line, '\n', (size_t)(h + n - line));
		size_t ll = (size_t)(nl - line);
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (ll && (line[0] == ' ' || line[0] == '\t'))
			return scrub_refuse(s, "the host's answer has a folded header");
		size_t vl;
		const char *v;
		if ((v = resp_header(line, ll, "content-length", &vl))) {
			int64_t x = 0;
			for (size_t i = 0; i < vl; i++)
				x = v[i] >= '0' && v[i] <= '9' && x < INT64_MAX / 10 - 9
					    ? x * 10 + (v[i] - '0')
					    : -1;
			if (vl == 0 || x < 0 || (length >= 0 && length != x))
				return scrub_refuse(s, "the host's answer has a bad Content-Length");
			length = x;
		} else if ((v = resp_header(line, ll, "transfer-encoding", &vl))) {
			if (chunked || !ows__http_name_is(v, vl, "chunked"))
				return scrub_refuse(s, "the host's answer has a transfer coding "
						       "other than chunked");
			chunked = true;
		} else if ((v = resp_header(line, ll, "content-encoding", &vl)) &&
			   !ows__http_name_is(v, vl, "identity")) {
			/* asked for identity: a body it compressed anyway cannot be scrubbed */
			return scrub_refuse(s, "the host's answer is compressed (Content-Encoding)");
		}
		line = nl + 1;
	}
	if (status == 101)
		return scrub_refuse(s, "the host switched protocols");
	if (status < 200)
		return 0; /* 100 Continue and the like: the answer is still to come */
	bool head = answers_head(s);
	s->state = R_HEAD;
	if (head || status == 204 || status == 304)
		return 0;
	if (chunked) {
		s->state = R_CHUNK;
		s->chunk = (ows__chunked){0};
	} else if (length > 0) {
		s->state = R_BODY;
		s->left = (uint64_t)length;
	} else if (length < 0) {
		s->state = R_EOF; /* the body ends with the connection */
	}
	return 0;
}

/* Response head bytes: 0 more are needed (all taken), 1 the head ended, -1 refused. */
static int take_response_head(ows__scrub *s, const char *in, size_t n, size_t *used, char **out,
			      size_t *len, size_t *cap)
{
	size_t i = 0;
	for (; i < n; i++) {
		if (s->hlen == RESP_HEAD_MAX)
			return scrub_refuse(s, "the host's answer has a head over 64 KiB");
		char c = s->head[s->hlen++] = in[i];
		if (c == '\0' || (s->hlen >= 2 && s->head[s->hlen - 2] == '\r' && c != '\n'))
			return scrub_refuse(s, "the host's answer has a stray CR or NUL");
		size_t h = s->hlen;
		if (c == '\n' && ((h >= 2 && s->head[h - 2] == '\n') ||
				  (h >= 3 && s->head[h - 2] == '\r' && s->head[h - 3] == '\n')))
			break;
	}
	if (i == n) {
		*used = n;
		return 0;
	}
	*used = i + 1;
	if (frame_response(s, s->head, s->hlen) < 0)
		return -1;
	for (size_t k = 0; k < s->nrules; k++)
		ows__inject_swap(s->head, s->hlen, s->rules[k]->secret, s->rules[k]->placeholder,
				 s->rules[k]->len);
	int rc = append(out, len, cap, s->head, s->hlen);
	mbedtls_platform_zeroize(s->head, s->hlen);
	s->hlen = 0;
	return rc < 0 ? scrub_refuse(s, "out of memory") : 1;
}

int ows__scrub_feed(ows__scrub *s, const char *in, size_t n, bool eof, char **out, size_t *len,
		    size_t *cap)
{
	while (n > 0 && s->state != R_BAD) {
		size_t used = n;
		int rc = 0;
		if (s->state == R_HEAD) {
			rc = take_response_head(s, in, n, &used, out, len, cap);
		} else if (s->state == R_BODY) {
			used = (uint64_t)n < s->left ? n : (size_t)s->left;
			s->left -= used;
			rc = scrub_data(s, in, used, s->left == 0, out, len, cap);
			if (s->left == 0)
				s->state = R_HEAD;
		} else if (s->state == R_CHUNK) {
			rc = scrub_chunked(s, in, n, &used, out, len, cap);
		} else {
			rc = scrub_data(s, in, n, false, out, len, cap);
		}
		if (rc < 0)
			return scrub_refuse(s, s->error ? s->error : "out of memory");
		in += used;
		n -= used;
	}
	if (s->state == R_BAD)
		return -1;
	/* the connection ended: a body cut short ends here too */
	if (eof && (s->state == R_EOF || s->state == R_BODY) &&
	    scrub_data(s, NULL, 0, true, out, len, cap) < 0)
		return scrub_refuse(s, "out of memory");
	return 0;
}

/* ------------------------------------------------------------ the relay */

typedef struct bio {
	ows__sock s;
	const char *pre;
	size_t pre_len, pre_off;
} bio;

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	bio *b = ctx;
	long r = ows__sock_send(b->s, buf, len);
	if (r > 0)
		return (int)r;
	return r == OWS__AGAIN ? MBEDTLS_ERR_SSL_WANT_WRITE : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	bio *b = ctx;
	if (b->pre_off < b->pre_len) {
		size_t n = b->pre_len - b->pre_off < len ? b->pre_len - b->pre_off : len;
		memcpy(buf, b->pre + b->pre_off, n);
		b->pre_off += n;
		return (int)n;
	}
	long r = ows__sock_recv(b->s, buf, len);
	if (r >= 0)
		return (int)r;
	return r == OWS__AGAIN ? MBEDTLS_ERR_SSL_WANT_READ : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* One side's TLS: its context, its configuration and what it holds. */
typedef struct side {
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt chain;
	mbedtls_pk_context key;
	bio io;
	/* what the last read and the last write are waiting for: a TLS read may
	 * need to write and a write to read, and the two paths wait apart */
	struct wants {
		bool rd, wr;
	} on_read, on_write;
} side;

static void side_init(side *t, ows__sock s)
{
	mbedtls_ssl_init(&t->ssl);
	mbedtls_ssl_config_init(&t->conf);
	mbedtls_x509_crt_init(&t->chain);
	mbedtls_pk_init(&t->key);
	t->io = (bio){.s = s};
	t->on_read = t->on_write = (struct wants){0};
}

static void side_free(side *t)
{
	mbedtls_ssl_free(&t->ssl);
	mbedtls_ssl_config_free(&t->conf);
	mbedtls_x509_crt_free(&t->chain);
	mbedtls_pk_free(&t->key);
}

static const char *alpn_http1[] = {"http/1.1", NULL};

static int side_setup(side *t, bool server, rng *r)
{
	int rc = mbedtls_ssl_config_defaults(&t->conf,
					     server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
					     MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (rc)
		return rc;
	mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &r->drbg);
	mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
				     MBEDTLS_SSL_MINOR_VERSION_3); /* TLS 1.2 */
	/* HTTP/1.1 only: the request filter frames HTTP/1.1, and every client falls back to it */
	return mbedtls_ssl_conf_alpn_protocols(&t->conf, alpn_http1);
}

static struct wants wants_of(int rc)
{
	return (struct wants){rc == MBEDTLS_ERR_SSL_WANT_READ, rc == MBEDTLS_ERR_SSL_WANT_WRITE};
}

/* Waits for what `a` (and `b`) wait for, up to `ms`: 0 ready, 1 timed out, <0 an error. */
static int wait_sides(const side *a, const side *b, int ms)
{
	ows__pollsock p[2];
	int n = 0;
	for (const side *t = a; t; t = t == a ? b : NULL)
		p[n++] = (ows__pollsock){t->io.s, t->on_read.rd || t->on_write.rd,
					 t->on_read.wr || t->on_write.wr, false};
	int r = ows__sock_poll(p, n, ms);
	return r < 0 ? r : r == 0;
}

static int handshake(side *t, int64_t deadline)
{
	for (;;) {
		int rc = mbedtls_ssl_handshake(&t->ssl);
		if (rc == 0)
			return 0;
		t->on_read = wants_of(rc);
		if (!t->on_read.rd && !t->on_read.wr)
			return rc;
		int64_t left = deadline - ows__now_ms();
		if (left <= 0 || wait_sides(t, NULL, (int)left) != 0)
			return MBEDTLS_ERR_SSL_TIMEOUT;
	}
}

/* Plain bytes to a socket that may say "again": the 200, or an error answer. */
static void send_plain(ows__sock s, const char *d, size_t n, int64_t deadline)
{
	while (n > 0) {
		long w = ows__sock_send(s, d, n);
		if (w > 0) {
			d += w;
			n -= (size_t)w;
			continue;
		}
		ows__pollsock p = {s, false, true, false};
		int64_t left = deadline - ows__now_ms();
		if (w != OWS__AGAIN || left <= 0 || ows__sock_poll(&p, 1, (int)left) <= 0)
			return;
	}
}

/* An answer of the proxy's own, whole, into msg: its length. */
static int format_answer(char msg[900], int status, const char *reason, const char *what)
{
	return snprintf(msg, 900,
			"HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %lu\r\n"
			"Connection: close\r\n\r\nowsbx proxy: %s\n",
			status, reason, (unsigned long)strlen(what) + 14, what);
}

/* Before the 200: in plain HTTP. */
static void answer(ows__sock s, int status, const char *reason, const char *host, const char *why)
{
	char what[600], msg[900];
	snprintf(what, sizeof(what), "%s %s", why, host);
	int n = format_answer(msg, status, reason, what);
	send_plain(s, msg, (size_t)n, ows__now_ms() + 2000);
}

/* An answer inside the client's TLS for what the filters would not pass, then the end. */
static void answer_tls(side *c, int status, const char *reason, const char *host, const char *why)
{
	char what[600], msg[900];
	snprintf(what, sizeof(what), "%s %s %s", why, status == 400 ? "in a request to" : "from",
		 host);
	int n = format_answer(msg, status, reason, what);
	int64_t deadline = ows__now_ms() + 2000;
	for (int off = 0; off < n;) {
		int w = mbedtls_ssl_write(&c->ssl, (const unsigned char *)msg + off, (size_t)(n - off));
		c->on_write = wants_of(w);
		int64_t left = deadline - ows__now_ms();
		if (w > 0)
			off += w;
		else if ((!c->on_write.rd && !c->on_write.wr) || left <= 0 ||
			 wait_sides(c, NULL, (int)left) != 0)
			return;
	}
	mbedtls_ssl_close_notify(&c->ssl);
}

static int upstream_tls(relay *rl, side *u, trust *store, rng *r)
{
	int rc = store ? side_setup(u, false, r) : MBEDTLS_ERR_X509_ALLOC_FAILED;
	if (rc)
		return rc;
	mbedtls_ssl_conf_authmode(&u->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_ca_chain(&u->conf, &store->crt, NULL);
	if ((rc = mbedtls_ssl_setup(&u->ssl, &u->conf)) == 0 &&
	    (rc = mbedtls_ssl_set_hostname(&u->ssl, rl->host)) == 0) {
		mbedtls_ssl_set_bio(&u->ssl, &u->io, bio_send, bio_recv, NULL);
		rc = handshake(u, ows__now_ms() + HANDSHAKE_MS);
	}
	return rc;
}

/*
 * The name the client's hello asks for, if any, must be the tunnel's host: a
 * front end shared by tenants (a CDN) routes by it, and the secret is for
 * this host only.
 */
static int sni_is_host(void *arg, mbedtls_ssl_context *ssl, const unsigned char *name, size_t len)
{
	const relay *rl = arg;
	char h[OWS__HOST_MAX];
	(void)ssl;
	return ows__host_normalize((const char *)name, len, h) == OWS__HOST_NAME &&
			       strcmp(h, rl->host) == 0
		       ? 0
		       : -1;
}

static int client_tls(relay *rl, side *c, rng *r)
{
	ows__inject *inj = rl->inj;
	const leaf *lf = NULL;
	ows_error e = {0};
	pthread_mutex_lock(&inj->mu);
	int rc = leaf_locked(inj, rl->host, &lf, &e) < 0 ? MBEDTLS_ERR_X509_ALLOC_FAILED : 0;
	if (rc == 0)
		rc = mbedtls_x509_crt_parse_der(&c->chain, lf->der, lf->len);
	pthread_mutex_unlock(&inj->mu);
	if (rc == 0)
		rc = mbedtls_x509_crt_parse_der(&c->chain, inj->ca_der, inj->ca_der_len);
	if (rc == 0)
		rc = mbedtls_pk_parse_key(&c->key, inj->leaf_key_der, inj->leaf_key_len, NULL, 0);
	if (rc == 0)
		rc = side_setup(c, true, r);
	if (rc == 0)
		rc = mbedtls_ssl_conf_own_cert(&c->conf, &c->chain, &c->key);
	if (rc == 0)
		mbedtls_ssl_conf_sni(&c->conf, sni_is_host, rl);
	if (rc == 0 && (rc = mbedtls_ssl_setup(&c->ssl, &c->conf)) == 0) {
		c->io.pre = rl->pre;
		c->io.pre_len = rl->pre_len;
		mbedtls_ssl_set_bio(&c->ssl, &c->io, bio_send, bio_recv, NULL);
		rc = handshake(c, ows__now_ms() + HANDSHAKE_MS);
	}
	return rc;
}

typedef struct flow {
	char *d;
	size_t len, off, cap;
	bool eof;  /* the side it comes from ended */
	bool shut; /* and the side it goes to was told */
} flow;

/* Reads one record's worth from `from` into the flow through `filter`. 1 moved, 0 not, <0 end. */
static int flow_read(side *from, flow *f, unsigned char *tmp, size_t tmp_len, ows__reqfilter *rq,
		     ows__scrub *sc)
{
	from->on_read = (struct wants){0};
	if (f->eof || f->off < f->len)
		return 0;
	int r = mbedtls_ssl_read(&from->ssl, tmp, tmp_len);
	from->on_read = wants_of(r);
	if (from->on_read.rd || from->on_read.wr)
		return 0;
	f->len = f->off = 0;
	if (r == 0 || r == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || r == MBEDTLS_ERR_NET_CONN_RESET ||
	    r == MBEDTLS_ERR_SSL_CONN_EOF) {
		f->eof = true;
		if (sc && ows__scrub_feed(sc, NULL, 0, true, &f->d, &f->len, &f->cap) < 0)
			return -1;
		return 1;
	}
	if (r < 0)
		return -1;
	int rc = rq ? ows__reqfilter_feed(rq, (const char *)tmp, (size_t)r, &f->d, &f->len, &f->cap)
		    : ows__scrub_feed(sc, (const char *)tmp, (size_t)r, false, &f->d, &f->len,
				      &f->cap);
	mbedtls_platform_zeroize(tmp, (size_t)r);
	return rc < 0 ? -1 : 1;
}

static int flow_write(side *to, flow *f)
{
	to->on_write = (struct wants){0};
	if (f->off >= f->len)
		return 0;
	int w = mbedtls_ssl_write(&to->ssl, (const unsigned char *)f->d + f->off, f->len - f->off);
	to->on_write = wants_of(w);
	if (to->on_write.rd || to->on_write.wr)
		return 0;
	if (w <= 0)
		return -1;
	f->off += (size_t)w;
	if (f->off == f->len)
		mbedtls_platform_zeroize(f->d, f->len);
	return 1;
}

/* Relays until the host's side ends (then the client is told), an error, or idleness. */
static void pump(relay *rl, side *c, side *u)
{
	ows__reqfilter *rq = ows__reqfilter_new(rl->inj, rl->host, rl->port);
	ows__scrub *sc = rq ? ows__scrub_new(rl->inj, rl->host, rl->port, rq) : NULL;
	unsigned char *tmp = malloc(MBEDTLS_SSL_MAX_CONTENT_LEN);
	flow up = {0}, down = {0};
	int64_t idle_until = ows__now_ms() + IDLE_MS;
	while (rq && sc && tmp) {
		int moved = 0, r;
		if ((r = flow_read(c, &up, tmp, MBEDTLS_SSL_MAX_CONTENT_LEN, rq, NULL)) < 0)
			break;
		moved |= r;
		if ((r = flow_write(u, &up)) < 0)
			break;
		moved |= r;
		if (up.eof && up.off >= up.len && !up.shut) {
			mbedtls_ssl_close_notify(&u->ssl);
			ows__sock_shutdown_wr(u->io.s);
			up.shut = true;
		}
		if ((r = flow_read(u, &down, tmp, MBEDTLS_SSL_MAX_CONTENT_LEN, NULL, sc)) < 0)
			break;
		moved |= r;
		if ((r = flow_write(c, &down)) < 0)
			break;
		moved |= r;
		if (down.eof && down.off >= down.len) {
			mbedtls_ssl_close_notify(&c->ssl);
			break; /* the host ended: so does the tunnel */
		}
		int64_t now = ows__now_ms();
		if (moved) {
			idle_until = now + IDLE_MS;
			continue;
		}
		if (now >= idle_until || wait_sides(c, u, (int)(idle_until - now)) < 0)
			break;
	}
	if (rq && ows__reqfilter_error(rq)[0])
		answer_tls(c, 400, "Bad Request", rl->host, ows__reqfilter_error(rq));
	else if (sc && ows__scrub_error(sc)[0])
		answer_tls(c, 502, "Bad Gateway", rl->host, ows__scrub_error(sc));
	free(tmp);
	forget(up.d, up.cap);
	forget(down.d, down.cap);
	ows__scrub_free(sc);
	ows__reqfilter_free(rq);
}

/*
 * A relay's TLS allocations (its trust store parse above all) are made in its
 * thread's malloc arena, which glibc keeps when the thread ends: a burst of
 * tunnels left the host tens of MB larger for good.  Given back when the
 * host's last relay ends, and every few seconds while relays end (free
 * memory only: nothing in use moves, no setting changes).
 */
static void give_memory_back(int left)
{
#ifdef __GLIBC__
	int64_t now = ows__now_ms();
	int64_t last = atomic_load(&trimmed_ms);
	if ((left == 0 || now - last >= TRIM_EVERY_MS) &&
	    atomic_compare_exchange_strong(&trimmed_ms, &last, now))
		malloc_trim(0);
#else
	(void)left;
#endif
}

static void relay_end(relay *rl)
{
	ows__inject *inj = rl->inj;
	pthread_mutex_lock(&inj->mu);
	if (rl->prev)
		rl->prev->next = rl->next;
	else
		inj->relays = rl->next;
	if (rl->next)
		rl->next->prev = rl->prev;
	inj->nrelays--;
	int left = atomic_fetch_sub(&relays_all, 1) - 1;
	pthread_cond_broadcast(&inj->gone);
	pthread_mutex_unlock(&inj->mu);
	give_memory_back(left);
}

static void *relay_main(void *arg)
{
	relay *rl = arg;
	ows__net_thread_init();
	rng r;
	side c, u;
	side_init(&c, rl->cs);
	side_init(&u, rl->us);
	ows_error e = {0};
	char why[200];
	trust *store = trust_take(rl->inj);
	int rc = rng_seed(&r, &e) < 0 ? MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED : 0;
	bool up_failed = rc == 0 && (rc = upstream_tls(rl, &u, store, &r)) != 0;
	if (rc == 0) {
		/*
		 * The store is for verifying the host, done now (no renegotiation):
		 * back to the pool, so that a tunnel held open does not keep a
		 * parsed copy of the system's trust store to itself.
		 */
		mbedtls_ssl_conf_ca_chain(&u.conf, NULL, NULL);
		trust_give(rl->inj, store);
		store = NULL;
	}
	if (up_failed) {
		uint32_t flags = mbedtls_ssl_get_verify_result(&u.ssl);
		if (flags != 0 && flags != (uint32_t)-1) {
			char v[160];
			mbedtls_x509_crt_verify_info(v, sizeof(v), "", flags);
			v[strcspn(v, "\n")] = '\0';
			snprintf(why, sizeof(why), "the certificate does not verify (%s):", v);
		} else {
			char t[120];
			mbedtls_strerror(rc, t, sizeof(t));
			snprintf(why, sizeof(why), "cannot speak TLS (%s) to", t);
		}
		answer(rl->cs, 502, "Bad Gateway", rl->host, why);
	} else if (rc == 0) {
		static const char ok200[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		send_plain(rl->cs, ok200, sizeof(ok200) - 1, ows__now_ms() + HANDSHAKE_MS);
		if (client_tls(rl, &c, &r) == 0)
			pump(rl, &c, &u);
	}
	side_free(&c);
	side_free(&u);
	trust_give(rl->inj, store);
	rng_free(&r);
	ows__sock_close(rl->cs);
	ows__sock_close(rl->us);
	relay_end(rl);
	free(rl->pre);
	free(rl);
	return NULL;
}

int ows__inject_serve(ows__inject *inj, ows__sock client, ows__sock upstream, const char *host,
		      int port, const char *pre, size_t pre_len, ows_error *err)
{
	relay *rl = calloc(1, sizeof(*rl));
	int rc = 0;
	if (!rl || (pre_len && !(rl->pre = malloc(pre_len)))) {
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		goto fail;
	}
	rl->inj = inj;
	rl->cs = client;
	rl->us = upstream;
	snprintf(rl->host, sizeof(rl->host), "%s", host);
	rl->port = port;
	if (pre_len)
		memcpy(rl->pre, pre, pre_len);
	rl->pre_len = pre_len;
	pthread_mutex_lock(&inj->mu);
	bool room = !inj->stopping && inj->nrelays < MAX_RELAYS;
	if (room && atomic_fetch_add(&relays_all, 1) >= MAX_RELAYS_ALL) {
		atomic_fetch_sub(&relays_all, 1);
		room = false;
	}
	if (!room) {
		pthread_mutex_unlock(&inj->mu);
		/* one try, no wait: the loop's thread calls this, and a fresh socket takes it */
		static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 49\r\n"
					   "Connection: close\r\n\r\n"
					   "owsbx proxy: too many injected tunnels; retry\n";
		ows__sock_send(client, busy, sizeof(busy) - 1);
		rc = ows__fail(err, OWS_ESTATE, 0, host, "retry", "too many injected tunnels");
		goto fail;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, RELAY_STACK);
	pthread_t th;
	rl->next = inj->relays;
	if (inj->relays)
		inj->relays->prev = rl;
	inj->relays = rl;
	inj->nrelays++;
	int e = pthread_create(&th, &attr, relay_main, rl);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		inj->relays = rl->next;
		if (rl->next)
			rl->next->prev = NULL;
		inj->nrelays--;
		atomic_fetch_sub(&relays_all, 1);
		pthread_mutex_unlock(&inj->mu);
		errno = e;
		rc = ows__fail_sys(err, host, NULL, "cannot start a thread for an injected tunnel");
		goto fail;
	}
	pthread_mutex_unlock(&inj->mu);
	return 0;
fail:
	if (rl)
		free(rl->pre);
	free(rl);
	ows__sock_close(client);
	ows__sock_close(upstream);
	return rc;
}
