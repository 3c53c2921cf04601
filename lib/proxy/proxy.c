/*
 * The allow-list proxy: one event-loop thread in the host process, no thread
 * per connection.  Portable: sockets, the loop and the zero-copy pump are the
 * platform layer's (lib/netio.h); names are resolved by a few resolver
 * threads running getaddrinfo, which is portable and keeps a slow DNS server
 * from stalling the loop (getaddrinfo_a is glibc-only and signals through
 * signals or threads anyway).
 *
 * A connection reads one request head.  CONNECT host:port becomes a tunnel
 * after the check; a plain http:// request is rewritten to origin form and
 * sent, its body counted by Content-Length, and the next request on the
 * connection is read and checked again (keep-alive).  The response side is
 * relayed as bytes.  The resolved address that passed the check is the one
 * connected to: no second resolution, so DNS rebinding cannot slip between.
 *
 * One proxy serves every session of a host process (ows__pxc_open): each
 * session is a client with its own list, its own blocked log and its own
 * listeners, made in its sandbox's network and handed over.  A listener
 * carries the session and the call it was made for, and so does every
 * connection accepted from it: that is how a refusal is told to the call
 * whose command (or what it started) asked, and to no other.  Threads and
 * host ports do not grow with the sessions.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#include "inject.h"
#include "netio.h"
#include "proxy.h"

#define PORT_LO 47800
#define PORT_HI 47899
#define CALL_PORTS (PORT_HI - OWS__PROXY_PORT_INSIDE) /* 47801-47899, one per running call */
#define MAX_ADDRS 8
#define RESOLVERS 4
#define BLOCKED_MAX 1024
#define HEAD_TIMEOUT_MS 30000 /* from a head's first byte to its last, however they trickle */
/*
 * A sandbox's connections at once: a command that opens and holds as many as
 * it can (trickling a byte now and then) reaches this, not the proxy's cap,
 * which the other sessions of the host share.  The proxy's own list
 * (ows_proxy_start) has one client and only the cap.
 */
#define SESSION_CONNS 1024
#define LINGER_MS 2000
#define HTTP_IDLE_MS 120000

typedef enum { C_HEAD, C_WAIT, C_BODY, C_CHUNK, C_TUNNEL, C_CLOSING, C_LINGER } cstate_t;
/* U_ASKING: held while the host's ask hook decides (the ask names it by c->ask_id) */
typedef enum { U_NONE, U_RESOLVING, U_CONNECTING, U_OPEN, U_ASKING } ustate_t;

struct conn;
typedef struct endpoint {
	struct conn *c;
	bool up;
} endpoint;

typedef struct outbuf {
	char *d;
	size_t len, off;
} outbuf;

typedef struct conn {
	struct conn *prev, *next;
	ows__pxc *cl;      /* whose list it is checked against, whose log it goes to */
	uint32_t call;     /* the call whose listener accepted it; 0: the session at large */
	ows__sock cs, us;
	endpoint cep, uep;
	bool c_reg, u_reg;
	bool c_rd_w, c_wr_w, u_rd_w, u_wr_w; /* what the loop watches */
	cstate_t cst;
	ustate_t ust;
	char *in;        /* request head bytes, OWS__HTTP_HEAD_MAX, made on demand */
	size_t in_len;
	outbuf to_c, to_u;
	ows__pump *up, *down;
	bool c_eof, u_eof, c_shut, u_shut, c_hup, u_hup;
	bool in_dirty;     /* bytes in `in` not parsed yet */
	int64_t body_left; /* -1: no limit (a tunnel) */
	ows__chunked chunk; /* C_CHUNK: where the chunked body ends */
	cstate_t after;    /* plain request: the state once the head is on its way */
	bool is_connect;
	char host[OWS__HOST_MAX];
	int kind, port;
	bool private_ok;
	char u_host[OWS__HOST_MAX]; /* the upstream that is open */
	int u_port;
	struct sockaddr_storage addrs[MAX_ADDRS];
	size_t addr_len[MAX_ADDRS];
	int naddr, addr_i;
	int64_t deadline;  /* resolve/connect, or the first response byte; 0: none */
	bool awaiting;     /* a plain request went up and no response byte came back yet */
	int64_t last_ms;
	int64_t head_ms;   /* when the head being read began (or a response last moved) */
	bool closed;       /* in the graveyard */
	bool dead;         /* closed while resolving: freed when the answer comes */
	uint64_t ask_id;   /* U_ASKING: its pending ask */
} conn;

typedef struct rjob {
	struct rjob *next;
	conn *c;
	char host[OWS__HOST_MAX];
	int gai;
	int naddr;
	struct sockaddr_storage addrs[MAX_ADDRS];
	size_t addr_len[MAX_ADDRS];
} rjob;

typedef struct blocked {
	uint32_t call;     /* as the connection's */
	char host[OWS__HOST_MAX];
	int port;
	long count;
	int kind;          /* ows__host_kind of host */
	int64_t first_ms, last_ms;
	bool private_addr; /* listed, but resolved to a private address (the last time) */
	char denied[300];  /* the deny entry that refused it (the last time), or "" */
} blocked;

typedef struct override {
	char name[OWS__HOST_MAX];
	struct sockaddr_storage addr;
	size_t len;
} override;

/* An entry as it was listed, for ows_session_sites_json. */
typedef struct site {
	char text[300];     /* canonical pattern, or "@group" */
	const char *source; /* static */
} site;

/* One session's part of the proxy: everything in it is under px->mu. */
struct ows__pxc {
	ows_proxy *px;
	ows__pattern *pats;
	size_t npats, cap_pats;
	site *sites;
	size_t nsites, cap_sites;
	blocked *blocked;   /* one a site and call, BLOCKED_MAX at most */
	size_t nblocked, cap_blocked;
	bool port_used[CALL_PORTS]; /* 47801 + i is a call's listener, or taken inside */
	int next_port;      /* where the search starts: a port freed is reused last */
	ows__inject *inject; /* the hosts whose TLS is ended for a secret, or NULL; set once */
	int nconns;          /* its connections open: the loop thread's alone */
	ows_ask_fn ask_fn;   /* the ask hook, or NULL: under ask_mu */
	void *ask_ctx;
	int ask_ms;
};

/* A listener handed over by a sandbox: a socket in its own network namespace. */
typedef struct adopted {
	endpoint tag;       /* first, with no conn: how the loop tells it from a connection */
	ows__sock s;
	ows__pxc *cl;
	uint32_t call;      /* 0: the session's own listener */
	int port;           /* the call port it holds in cl->port_used, or 0 */
	struct adopted *next;
} adopted;

/*
 * Work only the loop thread may do (it alone touches listeners and
 * connections once they are watched): a host thread queues it and waits.
 */
typedef struct pxop {
	struct pxop *next;
	ows__pxc *cl;
	uint32_t call;      /* drop this call's listener */
	bool whole;         /* drop every listener and connection of cl */
	bool done;
} pxop;

struct ows_proxy {
	ows__loop *loop;
	ows__sock ls;
	char ltag;
	adopted *adopted;   /* listeners sandboxes handed over: closed and freed at stop */
	pthread_mutex_t amu;
	int port;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;

	pthread_mutex_t mu; /* every client's lists and logs */
	ows__pxc own;       /* ows_proxy_allow's list: the clients of px->ls */

	pthread_mutex_t opmu; /* ops, and their done flags */
	pthread_cond_t opcond;
	pxop *ops;

	int max_conns, idle_ms, connect_timeout_ms, response_timeout_ms;
	override *ov;
	size_t nov;

	pthread_mutex_t rmu; /* resolver queues */
	pthread_cond_t rcond;
	rjob *rq, *rq_tail, *rdone;
	bool rstop;
	pthread_t rth[RESOLVERS];
	int nrth;

	conn *conns;
	int nconns;
	conn *grave;

	/* the thread that calls the ask hooks, started with the first ask: under ask_mu */
	pthread_t ask_thread;
	bool ask_started, ask_stop;
	ows__pxc *calling;  /* whose hook runs now */
};

/* ------------------------------------------------------------ allow list */

/* One entry of the list: an allow and a deny entry of the same host are two. */
static bool same_entry(const ows__pattern *q, const ows__pattern *p)
{
	return q->port == p->port && q->wildcard == p->wildcard && q->deny == p->deny &&
	       strcmp(q->host, p->host) == 0;
}

static int add_pattern_locked(ows__pxc *cl, const ows__pattern *p)
{
	for (size_t i = 0; i < cl->npats; i++) {
		ows__pattern *q = &cl->pats[i];
		if (same_entry(q, p)) {
			q->allow_private = p->allow_private;
			return 0;
		}
	}
	if (cl->npats == cl->cap_pats) {
		size_t cap = cl->cap_pats ? cl->cap_pats * 2 : 32;
		ows__pattern *n = realloc(cl->pats, cap * sizeof(*n));
		if (!n)
			return OWS_ENOMEM;
		cl->pats = n;
		cl->cap_pats = cap;
	}
	cl->pats[cl->npats++] = *p;
	return 0;
}

static void remove_pattern_locked(ows__pxc *cl, const ows__pattern *p)
{
	for (size_t i = 0; i < cl->npats; i++) {
		if (same_entry(&cl->pats[i], p)) {
			cl->pats[i] = cl->pats[--cl->npats];
			return;
		}
	}
}

/* Keeps the entry as listed (once per source), or forgets it from every source. */
static int note_site_locked(ows__pxc *cl, const char *text, const char *source, bool add)
{
	for (size_t i = 0; i < cl->nsites;) {
		if (strcmp(cl->sites[i].text, text) == 0 && (!add || strcmp(cl->sites[i].source, source) == 0)) {
			if (add)
				return 0;
			memmove(&cl->sites[i], &cl->sites[i + 1], (cl->nsites - i - 1) * sizeof(site));
			cl->nsites--;
			continue;
		}
		i++;
	}
	if (!add)
		return 0;
	if (cl->nsites == cl->cap_sites) {
		size_t cap = cl->cap_sites ? cl->cap_sites * 2 : 16;
		site *n = realloc(cl->sites, cap * sizeof(*n));
		if (!n)
			return OWS_ENOMEM;
		cl->sites = n;
		cl->cap_sites = cap;
	}
	site *e = &cl->sites[cl->nsites++];
	snprintf(e->text, sizeof(e->text), "%s", text);
	e->source = source;
	return 0;
}

/* Applies a pattern or @group: add (true) or remove (false). */
static int change(ows__pxc *cl, const char *text, const char *source, bool add, ows_error *err)
{
	if (!cl)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "no proxy");
	const char *const *group = NULL;
	const char *one[2] = {text, NULL};
	if (text && text[0] == '@') {
		group = ows__sites_group(text);
		if (!group)
			return ows__site_check(text, err);
	} else {
		group = one;
	}
	size_t n = 0;
	while (group[n])
		n++;
	ows__pattern *ps = ows__calloc(n, sizeof(*ps), err);
	if (!ps)
		return OWS_ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ows__pattern_parse(group[i], &ps[i], err) < 0) {
			free(ps);
			return OWS_EINVAL;
		}
	char listed[300];
	if (text[0] == '@')
		snprintf(listed, sizeof(listed), "%s", text);
	else
		ows__pattern_format(&ps[0], listed);
	int rc = 0;
	pthread_mutex_t *mu = &cl->px->mu;
	pthread_mutex_lock(mu);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (add)
			rc = add_pattern_locked(cl, &ps[i]);
		else
			remove_pattern_locked(cl, &ps[i]);
	}
	if (rc == 0)
		rc = note_site_locked(cl, listed, source, add);
	pthread_mutex_unlock(mu);
	free(ps);
	if (rc < 0)
		return ows__fail(err, rc, 0, text, NULL, "cannot add the site");
	return 0;
}

/*
 * The entry that decides host:port: a deny entry that covers it, whatever
 * the order the entries came in (a deny wins), else the first allow entry
 * that covers it, else NULL.  *private_ok: some covering allow entry opted in.
 */
static const ows__pattern *match_locked(const ows__pxc *cl, const char *host, int kind, int port,
					bool *private_ok)
{
	const ows__pattern *first = NULL;
	*private_ok = false;
	for (size_t i = 0; i < cl->npats; i++) {
		const ows__pattern *p = &cl->pats[i];
		if (!ows__pattern_match(p, host, kind, port))
			continue;
		if (p->deny)
			return p;
		if (!first)
			first = p;
		*private_ok |= p->allow_private;
	}
	return first;
}

/* Is host:port let through for the connection's session?  When a deny entry
 * refuses it, `denied` is that entry, else "". */
static bool allowed(ows__pxc *cl, const char *host, int kind, int port, bool *private_ok,
		    char denied[300])
{
	denied[0] = '\0';
	pthread_mutex_lock(&cl->px->mu);
	const ows__pattern *m = match_locked(cl, host, kind, port, private_ok);
	if (m && m->deny)
		ows__pattern_format(m, denied);
	pthread_mutex_unlock(&cl->px->mu);
	return m && !m->deny;
}

/* `denied`: the deny entry that refused it, or NULL. */
static void record_blocked(ows_proxy *px, const conn *c, bool private_addr, const char *denied)
{
	ows__pxc *cl = c->cl;
	const char *host = c->host;
	int port = c->port;
	int64_t now = ows__now_ms();
	pthread_mutex_lock(&px->mu);
	blocked *b = NULL;
	for (size_t i = 0; i < cl->nblocked; i++)
		if (cl->blocked[i].port == port && cl->blocked[i].call == c->call &&
		    strcmp(cl->blocked[i].host, host) == 0)
			b = &cl->blocked[i];
	if (!b && cl->nblocked == cl->cap_blocked && cl->cap_blocked < BLOCKED_MAX) {
		/* grown as refusals come: most sessions have a few, or none */
		size_t cap = cl->cap_blocked ? cl->cap_blocked * 2 : 8;
		blocked *n = realloc(cl->blocked, cap * sizeof(*n));
		if (n) {
			cl->blocked = n;
			cl->cap_blocked = cap;
		}
	}
	if (!b && cl->nblocked < cl->cap_blocked) {
		b = &cl->blocked[cl->nblocked++];
		memset(b, 0, sizeof(*b));
		snprintf(b->host, sizeof(b->host), "%s", host);
		b->port = port;
		b->call = c->call;
		b->kind = c->kind;
		b->first_ms = now;
	}
	if (b) {
		b->count++;
		b->last_ms = now;
		b->private_addr = private_addr;
		snprintf(b->denied, sizeof(b->denied), "%s", denied ? denied : "");
	}
	pthread_mutex_unlock(&px->mu);
}

/* ------------------------------------------------------------ resolver */

/* Resolves j->host as the proxy does: the hosts file's answer, else getaddrinfo. */
static void resolve_job(const ows_proxy *px, rjob *j)
{
	j->naddr = 0;
	j->gai = 0;
	bool overridden = false;
	for (size_t i = 0; i < px->nov; i++)
		if (strcmp(px->ov[i].name, j->host) == 0 && j->naddr < MAX_ADDRS) {
			overridden = true;
			memcpy(&j->addrs[j->naddr], &px->ov[i].addr, px->ov[i].len);
			j->addr_len[j->naddr++] = px->ov[i].len;
		}
	if (overridden)
		return;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_ADDRCONFIG};
	struct addrinfo *res = NULL;
	j->gai = getaddrinfo(j->host, NULL, &hints, &res);
	for (struct addrinfo *ai = res; ai && j->naddr < MAX_ADDRS; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(j->addrs[0]))
			continue;
		memcpy(&j->addrs[j->naddr], ai->ai_addr, ai->ai_addrlen);
		j->addr_len[j->naddr++] = ai->ai_addrlen;
	}
	if (res)
		freeaddrinfo(res);
}

static void *resolver_main(void *arg)
{
	ows_proxy *px = arg;
	pthread_mutex_lock(&px->rmu);
	for (;;) {
		while (!px->rq && !px->rstop)
			pthread_cond_wait(&px->rcond, &px->rmu);
		if (px->rstop)
			break;
		rjob *j = px->rq;
		px->rq = j->next;
		if (!px->rq)
			px->rq_tail = NULL;
		pthread_mutex_unlock(&px->rmu);
		resolve_job(px, j);
		pthread_mutex_lock(&px->rmu);
		j->next = px->rdone;
		px->rdone = j;
		ows__loop_wake(px->loop);
	}
	pthread_mutex_unlock(&px->rmu);
	return NULL;
}

static int resolve_start(ows_proxy *px, conn *c)
{
	rjob *j = calloc(1, sizeof(*j));
	if (!j)
		return OWS_ENOMEM;
	j->c = c;
	snprintf(j->host, sizeof(j->host), "%s", c->host);
	pthread_mutex_lock(&px->rmu);
	if (px->rq_tail)
		px->rq_tail->next = j;
	else
		px->rq = j;
	px->rq_tail = j;
	pthread_cond_signal(&px->rcond);
	pthread_mutex_unlock(&px->rmu);
	return 0;
}

/* ------------------------------------------------------------ asks */

/*
 * The ask hook's pending asks, one per held connection, process-wide so that
 * ows_ask_answer needs only the id (a binding may answer after its session
 * is gone: the id is then simply not found).  The loop owns the connection;
 * an ask names it, and the loop drops the ask (under ask_mu) before the
 * connection can go, so a pointer found under ask_mu is alive.
 */
typedef enum { ASK_QUEUED, ASK_CALLED, ASK_ANSWERED } askstate_t;

typedef struct ask {
	struct ask *next;
	uint64_t id;
	ows_proxy *px;
	conn *c;
	askstate_t st;
	bool allow;
} ask;

#define ASK_DEFAULT_MS 60000

static pthread_mutex_t ask_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ask_cond = PTHREAD_COND_INITIALIZER;
static ask *asks;
static uint64_t ask_last; /* ids are never reused */

static ask *ask_find_locked(uint64_t id)
{
	for (ask *a = asks; a; a = a->next)
		if (a->id == id)
			return a;
	return NULL;
}

static void ask_answer_locked(ask *a, bool allow)
{
	a->st = ASK_ANSWERED;
	a->allow = allow;
	ows__loop_wake(a->px->loop);
}

/* The oldest ask of px not handed to its hook yet (asks are pushed at the head). */
static ask *ask_next_locked(const ows_proxy *px)
{
	ask *found = NULL;
	for (ask *a = asks; a; a = a->next)
		if (a->px == px && a->st == ASK_QUEUED)
			found = a;
	return found;
}

static void *asker_main(void *arg)
{
	ows_proxy *px = arg;
	pthread_mutex_lock(&ask_mu);
	for (;;) {
		ask *a = NULL;
		while (!px->ask_stop && !(a = ask_next_locked(px)))
			pthread_cond_wait(&ask_cond, &ask_mu);
		if (px->ask_stop)
			break;
		a->st = ASK_CALLED;
		ows__pxc *cl = a->c->cl;
		ows_ask_fn fn = cl->ask_fn;
		void *ctx = cl->ask_ctx;
		uint64_t id = a->id;
		char host[OWS__HOST_MAX];
		snprintf(host, sizeof(host), "%s", a->c->host);
		int port = a->c->port;
		if (!fn) { /* the session stopped asking */
			ask_answer_locked(a, false);
			continue;
		}
		px->calling = cl; /* its close waits for this call to return */
		pthread_mutex_unlock(&ask_mu);
		int r = fn(ctx, id, host, port);
		pthread_mutex_lock(&ask_mu);
		px->calling = NULL;
		pthread_cond_broadcast(&ask_cond);
		if (r != OWS_ASK_LATER && (a = ask_find_locked(id)) && a->st == ASK_CALLED)
			ask_answer_locked(a, r == OWS_ASK_ALLOW);
	}
	pthread_mutex_unlock(&ask_mu);
	return NULL;
}

/* Loop thread: holds c and queues an ask for it; false when its session does not ask. */
static bool ask_start(ows_proxy *px, conn *c, int64_t now)
{
	ows__pxc *cl = c->cl;
	pthread_mutex_lock(&ask_mu);
	ask *a = cl->ask_fn ? calloc(1, sizeof(*a)) : NULL;
	if (a && !px->ask_started) {
		if (pthread_create(&px->ask_thread, NULL, asker_main, px) == 0) {
			px->ask_started = true;
		} else {
			free(a);
			a = NULL;
		}
	}
	if (!a) {
		pthread_mutex_unlock(&ask_mu);
		return false;
	}
	a->id = ++ask_last;
	a->px = px;
	a->c = c;
	a->next = asks;
	asks = a;
	c->ask_id = a->id;
	c->ust = U_ASKING;
	c->deadline = now + cl->ask_ms;
	pthread_cond_broadcast(&ask_cond);
	pthread_mutex_unlock(&ask_mu);
	return true;
}

/* Loop thread: forgets c's ask (closed, or its deadline passed). */
static void ask_drop(conn *c)
{
	if (!c->ask_id)
		return;
	pthread_mutex_lock(&ask_mu);
	for (ask **ap = &asks; *ap; ap = &(*ap)->next)
		if ((*ap)->id == c->ask_id) {
			ask *a = *ap;
			*ap = a->next;
			free(a);
			break;
		}
	pthread_mutex_unlock(&ask_mu);
	c->ask_id = 0;
	if (c->ust == U_ASKING)
		c->ust = U_NONE;
}

/* Loop thread: the asks of px answered since, off the list, oldest last. */
static ask *asks_answered(ows_proxy *px)
{
	ask *done = NULL;
	pthread_mutex_lock(&ask_mu);
	for (ask **ap = &asks; *ap;) {
		ask *a = *ap;
		if (a->px != px || a->st != ASK_ANSWERED) {
			ap = &a->next;
			continue;
		}
		*ap = a->next;
		a->next = done;
		done = a;
	}
	pthread_mutex_unlock(&ask_mu);
	return done;
}

int ows_ask_answer(uint64_t ask_id, int allow, ows_error *err)
{
	pthread_mutex_lock(&ask_mu);
	ask *a = ask_find_locked(ask_id);
	bool pending = a && a->st != ASK_ANSWERED;
	if (pending)
		ask_answer_locked(a, allow != 0);
	pthread_mutex_unlock(&ask_mu);
	if (!pending)
		return ows__fail(err, OWS_ENOTFOUND, 0, NULL, NULL,
				 "no such ask: answered already, timed out, or its connection ended");
	return 0;
}

int ows__pxc_set_ask(ows__pxc *cl, ows_ask_fn fn, void *ctx, int timeout_ms, ows_error *err)
{
	if (timeout_ms < 0)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "give 0 for the default (60 s)",
				 "a negative ask timeout");
	pthread_mutex_lock(&ask_mu);
	cl->ask_fn = fn;
	cl->ask_ctx = ctx;
	cl->ask_ms = timeout_ms ? timeout_ms : ASK_DEFAULT_MS;
	if (!fn)
		for (ask *a = asks; a; a = a->next)
			if (a->c->cl == cl && a->st != ASK_ANSWERED)
				ask_answer_locked(a, false);
	pthread_mutex_unlock(&ask_mu);
	return 0;
}

/* The client's hook is called no more once this returns; its asks go with its connections. */
static void ask_forget_client(ows__pxc *cl)
{
	pthread_mutex_lock(&ask_mu);
	cl->ask_fn = NULL;
	while (cl->px->calling == cl)
		pthread_cond_wait(&ask_cond, &ask_mu);
	pthread_mutex_unlock(&ask_mu);
}

static void ask_thread_stop(ows_proxy *px)
{
	pthread_mutex_lock(&ask_mu);
	bool started = px->ask_started;
	px->ask_stop = true;
	pthread_cond_broadcast(&ask_cond);
	pthread_mutex_unlock(&ask_mu);
	if (started)
		pthread_join(px->ask_thread, NULL);
}

/* ------------------------------------------------------------ connections */

static void conn_close(ows_proxy *px, conn *c);

static void upstream_reset(ows_proxy *px, conn *c)
{
	if (c->us != OWS__NOSOCK)
		ows__loop_close(px->loop, c->us, c->u_reg);
	c->us = OWS__NOSOCK;
	c->u_reg = c->u_rd_w = c->u_wr_w = false;
	ows__pump_free(c->up);
	ows__pump_free(c->down);
	c->up = c->down = NULL;
	c->u_eof = c->u_shut = c->u_hup = false;
	if (c->ust != U_RESOLVING) /* the resolver holds c until it answers */
		c->ust = U_NONE;
	c->u_host[0] = '\0';
	c->awaiting = false;
	free(c->to_u.d);
	c->to_u = (outbuf){0};
}

static void conn_close(ows_proxy *px, conn *c)
{
	if (c->closed)
		return;
	c->closed = true;
	if (c->cs != OWS__NOSOCK) {
		ows__loop_close(px->loop, c->cs, c->c_reg);
		c->cs = OWS__NOSOCK;
	}
	ask_drop(c);
	bool resolving = c->ust == U_RESOLVING;
	upstream_reset(px, c);
	/* off the live list, onto the graveyard (freed after this batch of
	 * events), unless a resolver still holds it */
	if (c->prev)
		c->prev->next = c->next;
	else
		px->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->nconns--;
	c->cl->nconns--;
	c->prev = NULL;
	if (resolving) {
		c->dead = true;
		c->next = NULL;
		return;
	}
	c->next = px->grave;
	px->grave = c;
}

static void conn_free(conn *c)
{
	free(c->in);
	free(c->to_c.d);
	free(c->to_u.d);
	free(c);
}

static int out_set(outbuf *b, const char *d, size_t n)
{
	free(b->d);
	*b = (outbuf){0};
	if (!n)
		return 0;
	b->d = malloc(n);
	if (!b->d)
		return OWS_ENOMEM;
	memcpy(b->d, d, n);
	b->len = n;
	return 0;
}

/* Writes what is queued; 0 when empty, OWS__AGAIN, or a negative errno. */
static long out_flush(outbuf *b, ows__sock s)
{
	while (b->off < b->len) {
		long n = ows__sock_send(s, b->d + b->off, b->len - b->off);
		if (n < 0)
			return n;
		b->off += (size_t)n;
	}
	free(b->d);
	*b = (outbuf){0};
	return 0;
}

/* Answers the client with an error and closes once it is sent. */
static void respond(conn *c, int status, const char *reason, const char *extra_header,
		    const char *body)
{
	char head[512];
	size_t blen = strlen(body);
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
			 status, reason, blen, extra_header ? extra_header : "");
	char *all = malloc((size_t)n + blen);
	free(c->to_c.d);
	c->to_c = (outbuf){0};
	if (all) {
		memcpy(all, head, (size_t)n);
		memcpy(all + n, body, blen);
		c->to_c = (outbuf){.d = all, .len = (size_t)n + blen};
	}
	c->cst = C_CLOSING;
	c->deadline = 0;
}

static void host_port(const conn *c, char *out, size_t cap)
{
	bool v6 = c->kind == OWS__HOST_IPV6;
	snprintf(out, cap, "%s%s%s:%d", v6 ? "[" : "", c->host, v6 ? "]" : "", c->port);
}

/* `addr`: the private address a listed name resolved to; `denied`: the deny entry. */
static void refuse(ows_proxy *px, conn *c, const char *addr, const char *denied)
{
	char hp[300], body[1400], hdr[360];
	host_port(c, hp, sizeof(hp));
	if (denied) {
		/* No way to allow it is suggested: a deny entry is the person's own choice. */
		record_blocked(px, c, false, denied);
		snprintf(body, sizeof(body),
			 "owsbx proxy: refused %s: the site is denied by this sandbox's list "
			 "(entry %s).\nA deny entry wins over every allow entry; only the person "
			 "running the sandbox can take it back.\n",
			 hp, denied);
	} else if (addr) {
		record_blocked(px, c, true, NULL);
		snprintf(body, sizeof(body),
			 "owsbx proxy: refused %s: the name resolves to %s, an address on this "
			 "machine or a private network.\nA listed site reaches such an address only "
			 "when the person opts it in: ask them to allow the site as %s+private "
			 "(owsbx run --allow-site %s+private).\n",
			 hp, addr, hp, hp);
	} else {
		record_blocked(px, c, false, NULL);
		snprintf(body, sizeof(body),
			 "owsbx proxy: refused %s: the site is not on this sandbox's allow list.\n"
			 "To reach it, ask the person running the sandbox to allow %s (for example "
			 "owsbx run --allow-site %s, or \"Allow for this session\").\n",
			 hp, hp, hp);
	}
	snprintf(hdr, sizeof(hdr), "X-Owsbx-Blocked: %s\r\n", hp);
	respond(c, 403, "Forbidden", hdr, body);
}

static void fail_upstream(conn *c, int status, const char *what)
{
	char hp[300], body[700];
	host_port(c, hp, sizeof(hp));
	snprintf(body, sizeof(body), "owsbx proxy: %s %s\n", what, hp);
	respond(c, status, status == 504 ? "Gateway Timeout" : "Bad Gateway", NULL, body);
}

static void connect_next(ows_proxy *px, conn *c, int64_t now)
{
	int last = 0;
	while (c->addr_i < c->naddr) {
		struct sockaddr_storage *ss = &c->addrs[c->addr_i++];
		if (ss->ss_family == AF_INET)
			((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)c->port);
		else
			((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)c->port);
		ows__sock s = OWS__NOSOCK;
		last = ows__tcp_connect_start((struct sockaddr *)ss, c->addr_len[c->addr_i - 1], &s);
		if (last == 0) {
			c->us = s;
			c->ust = U_CONNECTING;
			c->deadline = now + px->connect_timeout_ms;
			return;
		}
	}
	char what[200];
	snprintf(what, sizeof(what), "cannot connect (%s) to",
		 last ? ows__net_strerror(last) : "no address");
	fail_upstream(c, 502, what);
}

/* Is one of the answer's addresses not public?  Then a[cap] names the first. */
static bool first_private(const rjob *j, char *a, size_t cap)
{
	for (int i = 0; i < j->naddr; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&j->addrs[i];
		if (ows__addr_is_public(sa))
			continue;
		snprintf(a, cap, "?");
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, (socklen_t)cap);
		else
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a,
				  (socklen_t)cap);
		return true;
	}
	return false;
}

/* The resolver's answer for c: check every address, then connect. */
static void resolved(ows_proxy *px, conn *c, rjob *j, int64_t now)
{
	c->ust = U_NONE;
	if (j->gai != 0 || j->naddr == 0) {
		char what[300];
		snprintf(what, sizeof(what), "cannot resolve the name (%s) of",
			 j->gai ? ows__resolve_strerror(j->gai) : "no address");
		fail_upstream(c, 502, what);
		return;
	}
	char a[OWS__ADDR_TEXT_MAX];
	if (!c->private_ok && first_private(j, a, sizeof(a))) {
		refuse(px, c, a, NULL);
		return;
	}
	memcpy(c->addrs, j->addrs, sizeof(c->addrs));
	memcpy(c->addr_len, j->addr_len, sizeof(c->addr_len));
	c->naddr = j->naddr;
	c->addr_i = 0;
	connect_next(px, c, now);
}

/* The one address of an IP literal. */
static void literal_job(const char *host, int kind, rjob *j)
{
	j->naddr = 1;
	j->gai = 0;
	if (kind == OWS__HOST_IPV4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&j->addrs[0];
		s->sin_family = AF_INET;
		inet_pton(AF_INET, host, &s->sin_addr);
		j->addr_len[0] = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&j->addrs[0];
		s->sin6_family = AF_INET6;
		inet_pton(AF_INET6, host, &s->sin6_addr);
		j->addr_len[0] = sizeof(*s);
	}
}

/* A literal address needs no resolver. */
static void literal(ows_proxy *px, conn *c, int64_t now)
{
	rjob j = {0};
	literal_job(c->host, c->kind, &j);
	resolved(px, c, &j, now);
}

/*
 * A CONNECT to a host an injected credential names: both sockets leave the
 * loop for the injector's thread, with what the client sent after its head.
 */
static void hand_to_injector(ows_proxy *px, conn *c)
{
	ows__sock cs = c->cs, us = c->us;
	if (c->c_reg)
		ows__loop_forget(px->loop, cs);
	if (c->u_reg)
		ows__loop_forget(px->loop, us);
	c->cs = c->us = OWS__NOSOCK;
	c->c_reg = c->u_reg = false;
	ows__inject_serve(c->cl->inject, cs, us, c->host, c->port, c->in, c->in_len, NULL);
	conn_close(px, c);
}

static void connected(ows_proxy *px, conn *c, int64_t now)
{
	if (c->is_connect && c->cl->inject && ows__inject_wants(c->cl->inject, c->host, c->port)) {
		hand_to_injector(px, c);
		return;
	}
	c->ust = U_OPEN;
	c->deadline = 0;
	snprintf(c->u_host, sizeof(c->u_host), "%s", c->host);
	c->u_port = c->port;
	if (c->is_connect) {
		static const char ok200[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		out_set(&c->to_c, ok200, sizeof(ok200) - 1);
		/* bytes the client sent after its CONNECT head go up first */
		if (c->in_len)
			out_set(&c->to_u, c->in, c->in_len);
		free(c->in);
		c->in = NULL;
		c->in_len = 0;
		c->cst = C_TUNNEL;
		c->body_left = -1;
	} else {
		c->cst = c->after;
		c->awaiting = true;
		c->deadline = now + px->response_timeout_ms;
	}
}

/* Resolves (or takes the literal address of) a checked request's host, then connects. */
static void go_upstream(ows_proxy *px, conn *c, int64_t now)
{
	if (c->kind != OWS__HOST_NAME) {
		literal(px, c, now);
		return;
	}
	if (resolve_start(px, c) < 0) {
		respond(c, 502, "Bad Gateway", NULL, "owsbx proxy: out of memory\n");
		return;
	}
	c->ust = U_RESOLVING;
	c->deadline = now + px->connect_timeout_ms;
}

/* May an unlisted site be asked about?  When its session has a hook. */
static bool askable(const conn *c)
{
	pthread_mutex_lock(&ask_mu);
	bool hook = c->cl->ask_fn != NULL;
	pthread_mutex_unlock(&ask_mu);
	return hook;
}

static void progress(ows_proxy *px, conn *c, bool c_rd, bool u_rd, int64_t now);
static void watch(ows_proxy *px, conn *c);

/* The hook's answers: a yes goes on as a listed site would, a no is the usual refusal. */
static void take_asks(ows_proxy *px, int64_t now)
{
	ask *done = asks_answered(px);
	while (done) {
		ask *a = done;
		done = a->next;
		conn *c = a->c;
		c->ask_id = 0;
		c->ust = U_NONE;
		c->deadline = 0;
		/*
		 * A yes is the exact entry host:port for this request: naming an
		 * address or localhost exactly opts it in, as it does listed; a
		 * name that resolves to a private address is still refused.
		 */
		c->private_ok = c->kind != OWS__HOST_NAME || strcmp(c->host, "localhost") == 0;
		if (a->allow)
			go_upstream(px, c, now);
		else
			refuse(px, c, NULL, NULL);
		progress(px, c, false, false, now);
		watch(px, c);
		free(a);
	}
}

/* A parsed head is in c->in: check it and send it on its way. */
static void handle_request(ows_proxy *px, conn *c, int64_t now)
{
	ows__http_req req;
	int r = ows__http_parse(c->in, c->in_len, &req);
	if (r == 0)
		return;
	if (r < 0) {
		char body[300];
		snprintf(body, sizeof(body), "owsbx proxy: bad request: %s\n", req.error);
		respond(c, 400, "Bad Request", NULL, body);
		return;
	}
	memmove(c->in, c->in + req.head_len, c->in_len - req.head_len);
	c->in_len -= req.head_len;
	c->in_dirty = c->in_len > 0;
	c->head_ms = now; /* what follows is the next head's, from now */
	c->is_connect = req.is_connect;
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->kind = req.host_kind;
	c->port = req.port;
	bool priv = false;
	char denied[300];
	bool asking = false;
	if (!allowed(c->cl, c->host, c->kind, c->port, &priv, denied)) {
		asking = !denied[0] && askable(c);
		if (!asking) {
			ows__http_req_release(&req);
			refuse(px, c, NULL, denied[0] ? denied : NULL);
			return;
		}
	}
	c->private_ok = priv;
	char *head = NULL;
	size_t head_len = 0;
	if (!c->is_connect) {
		size_t take = 0;
		c->after = C_HEAD;
		if (req.chunked) {
			bool done = false;
			c->chunk = (ows__chunked){0};
			long k = ows__chunked_feed(&c->chunk, c->in, c->in_len, &done);
			if (k < 0) {
				ows__http_req_release(&req);
				respond(c, 400, "Bad Request", NULL,
					"owsbx proxy: bad request: bad chunked framing\n");
				return;
			}
			take = (size_t)k;
			c->after = done ? C_HEAD : C_CHUNK;
		} else if (req.content_length > 0) {
			take = (uint64_t)req.content_length < c->in_len ? (size_t)req.content_length
								      : c->in_len;
		}
		head_len = req.upstream_head_len + take;
		head = malloc(head_len);
		if (!head) {
			ows__http_req_release(&req);
			respond(c, 502, "Bad Gateway", NULL, "owsbx proxy: out of memory\n");
			return;
		}
		memcpy(head, req.upstream_head, req.upstream_head_len);
		memcpy(head + req.upstream_head_len, c->in, take);
		memmove(c->in, c->in + take, c->in_len - take);
		c->in_len -= take;
		c->in_dirty = c->in_len > 0;
		c->body_left = req.content_length > 0 ? req.content_length - (int64_t)take : 0;
		if (c->body_left > 0)
			c->after = C_BODY;
	}
	ows__http_req_release(&req);

	if (!asking && !c->is_connect && c->ust == U_OPEN && !c->u_eof && !c->u_shut &&
	    c->u_port == c->port && strcmp(c->u_host, c->host) == 0 && !c->to_u.len) {
		/* keep-alive to the same site: the checked request goes up now */
		c->to_u = (outbuf){.d = head, .len = head_len};
		c->cst = c->after;
		c->awaiting = true;
		c->deadline = now + px->response_timeout_ms;
		return;
	}
	upstream_reset(px, c);
	if (head)
		c->to_u = (outbuf){.d = head, .len = head_len};
	c->cst = C_WAIT;
	if (asking && !ask_start(px, c, now)) {
		refuse(px, c, NULL, NULL);
		return;
	}
	if (!asking)
		go_upstream(px, c, now);
}

/* Moves whatever can move on c without blocking. */
static void progress(ows_proxy *px, conn *c, bool c_rd, bool u_rd, int64_t now)
{
	for (int round = 0; round < 16 && !c->closed; round++) {
		bool moved = false;
		long r;

		if (c->to_c.len) {
			r = out_flush(&c->to_c, c->cs);
			if (r < 0 && r != OWS__AGAIN)
				goto drop;
			moved |= r == 0;
		}
		if (c->cst == C_CLOSING && !c->to_c.len) {
			/* read what the client still sends before closing, so that
			 * the answer is not lost to a reset */
			ows__sock_shutdown_wr(c->cs);
			upstream_reset(px, c);
			c->cst = C_LINGER;
			c->deadline = now + LINGER_MS;
		}
		if (c->cst == C_LINGER) {
			char sink[4096];
			while (c_rd) {
				r = ows__sock_recv(c->cs, sink, sizeof(sink));
				if (r == OWS__AGAIN)
					c_rd = false;
				else if (r <= 0)
					goto drop;
			}
			return;
		}
		if (c->cst == C_CLOSING || c->cst == C_WAIT)
			return;

		if (c->ust == U_OPEN && !c->to_c.len) {
			if (ows__pump_pending(c->down)) {
				r = ows__pump_drain(c->down, c->cs);
				if (r < 0 && r != OWS__AGAIN)
					goto drop;
				moved |= r > 0;
			}
			if (ows__pump_room(c->down) && !c->u_eof && u_rd) {
				r = ows__pump_fill(&c->down, c->us, 1u << 20);
				if (r > 0) {
					moved = true;
					c->awaiting = false;
					c->head_ms = now; /* a next head may wait for this response */
					if (!c->is_connect)
						c->deadline = 0;
				} else if (r == OWS__AGAIN) {
					u_rd = false;
				} else {
					c->u_eof = true; /* EOF, or an error that ends it the same way */
					moved = true;
				}
			}
		}

		if (c->ust == U_OPEN) {
			if (ows__pump_pending(c->up)) {
				r = ows__pump_drain(c->up, c->us);
				if (r < 0 && r != OWS__AGAIN)
					goto drop;
				moved |= r > 0;
			}
			if (!ows__pump_pending(c->up) && c->to_u.len) {
				r = out_flush(&c->to_u, c->us);
				if (r < 0 && r != OWS__AGAIN)
					goto drop;
				moved |= r == 0;
			}
			if (ows__pump_room(c->up) && !c->to_u.len &&
			    (c->cst == C_BODY || c->cst == C_TUNNEL) && !c->c_eof && c_rd &&
			    c->body_left != 0) {
				size_t max = c->body_left > 0 && c->body_left < (1 << 20)
						     ? (size_t)c->body_left
						     : 1u << 20;
				r = ows__pump_fill(&c->up, c->cs, max);
				if (r > 0) {
					moved = true;
					if (c->body_left > 0)
						c->body_left -= r;
				} else if (r == OWS__AGAIN) {
					c_rd = false;
				} else {
					c->c_eof = true;
					moved = true;
				}
			}
			if (c->cst == C_BODY && c->body_left == 0) {
				c->cst = C_HEAD;
				moved = true;
			}
		}

		if (c->cst == C_CHUNK && c->ust == U_OPEN && !c->to_u.len &&
		    !ows__pump_pending(c->up)) {
			/* chunked bodies pass through user space: their end must be seen */
			if (!c->in_len && c_rd && !c->c_eof) {
				if (!c->in && !(c->in = malloc(OWS__HTTP_HEAD_MAX)))
					goto drop;
				r = ows__sock_recv(c->cs, c->in, OWS__HTTP_HEAD_MAX);
				if (r > 0)
					c->in_len = (size_t)r;
				else if (r == OWS__AGAIN)
					c_rd = false;
				else
					c->c_eof = true;
			}
			if (c->in_len) {
				bool done = false;
				long k = ows__chunked_feed(&c->chunk, c->in, c->in_len, &done);
				if (k < 0 || out_set(&c->to_u, c->in, (size_t)k) < 0)
					goto drop; /* the request is half sent: nothing to answer */
				memmove(c->in, c->in + k, c->in_len - (size_t)k);
				c->in_len -= (size_t)k;
				if (done) {
					c->cst = C_HEAD;
					c->in_dirty = c->in_len > 0;
				}
				moved = true;
				continue;
			}
		}

		if (c->cst == C_HEAD && !c->c_eof) {
			if (c_rd && c->in_len < OWS__HTTP_HEAD_MAX) {
				if (!c->in && !(c->in = malloc(OWS__HTTP_HEAD_MAX)))
					goto drop;
				r = ows__sock_recv(c->cs, c->in + c->in_len, OWS__HTTP_HEAD_MAX - c->in_len);
				if (r > 0) {
					if (!c->in_len)
						c->head_ms = now; /* a head begins */
					c->in_len += (size_t)r;
					c->in_dirty = true;
				} else if (r == OWS__AGAIN) {
					c_rd = false;
				} else {
					c->c_eof = true;
				}
			}
			/* the next request waits until the last one is wholly sent */
			if (c->in_dirty && !c->to_u.len && !ows__pump_pending(c->up)) {
				c->in_dirty = false;
				handle_request(px, c, now);
				moved = true;
				continue;
			}
		}

		if (c->cst == C_TUNNEL) {
			if (c->c_eof && !ows__pump_pending(c->up) && !c->to_u.len && !c->u_shut) {
				ows__sock_shutdown_wr(c->us);
				c->u_shut = true;
			}
			if (c->u_shut && c->u_eof && !ows__pump_pending(c->down) && !c->to_c.len)
				goto drop; /* both ways done: no need to say so first */
			if (c->u_eof && !ows__pump_pending(c->down) && !c->to_c.len && !c->c_shut) {
				ows__sock_shutdown_wr(c->cs);
				c->c_shut = true;
			}
			if (c->u_shut && c->c_shut)
				goto drop;
		} else if (c->cst == C_HEAD || c->cst == C_BODY || c->cst == C_CHUNK) {
			if (c->ust == U_OPEN && c->u_eof && c->awaiting) {
				fail_upstream(c, 502, "no answer (the connection closed) from");
				continue;
			}
			if (c->ust == U_OPEN && c->u_eof && !ows__pump_pending(c->down) && !c->to_c.len)
				goto drop; /* the response ended with its connection */
			if (c->c_eof) {
				if (c->cst != C_HEAD || c->ust != U_OPEN)
					goto drop;
				if (!c->u_shut) {
					ows__sock_shutdown_wr(c->us);
					c->u_shut = true;
				}
			}
		}
		if (!moved)
			break;
	}
	return;
drop:
	conn_close(px, c);
}

static void watch_one(ows_proxy *px, ows__sock s, endpoint *ep, bool *reg, bool *wr_rd,
		      bool *wr_wr, bool hup, bool rd, bool wr)
{
	if (s == OWS__NOSOCK)
		return;
	if (hup && !rd && !wr) {
		/* a hung-up socket nobody waits on would wake the loop for ever */
		if (*reg)
			ows__loop_forget(px->loop, s);
		*reg = false;
		return;
	}
	if (*reg && *wr_rd == rd && *wr_wr == wr)
		return;
	if (ows__loop_watch(px->loop, s, ep, !*reg, rd, wr) == 0) {
		*reg = true;
		*wr_rd = rd;
		*wr_wr = wr;
	}
}

static void watch(ows_proxy *px, conn *c)
{
	if (c->closed)
		return;
	bool up_idle = !ows__pump_pending(c->up) && !c->to_u.len;
	bool crd = !c->c_eof &&
		   ((c->cst == C_HEAD && c->in_len < OWS__HTTP_HEAD_MAX) || c->cst == C_LINGER ||
		    (c->cst == C_CHUNK && c->ust == U_OPEN && up_idle && !c->in_len) ||
		    ((c->cst == C_BODY || c->cst == C_TUNNEL) && c->ust == U_OPEN && !c->to_u.len &&
		     ows__pump_room(c->up) && c->body_left != 0));
	bool cwr = c->to_c.len || ows__pump_pending(c->down);
	bool urd = false, uwr = false;
	if (c->ust == U_CONNECTING) {
		uwr = true;
	} else if (c->ust == U_OPEN) {
		urd = !c->u_eof && !c->to_c.len && ows__pump_room(c->down) &&
		      c->cst != C_CLOSING && c->cst != C_LINGER;
		uwr = !up_idle;
	}
	watch_one(px, c->cs, &c->cep, &c->c_reg, &c->c_rd_w, &c->c_wr_w, c->c_hup, crd, cwr);
	watch_one(px, c->us, &c->uep, &c->u_reg, &c->u_rd_w, &c->u_wr_w, c->u_hup, urd, uwr);
}

static void on_connect_ready(ows_proxy *px, conn *c, int64_t now)
{
	int e = ows__tcp_connect_result(c->us);
	if (e == 0) {
		connected(px, c, now);
		return;
	}
	ows__loop_close(px->loop, c->us, c->u_reg);
	c->us = OWS__NOSOCK;
	c->u_reg = c->u_hup = false;
	c->ust = U_NONE;
	if (c->addr_i < c->naddr) {
		connect_next(px, c, now);
		return;
	}
	char what[200];
	snprintf(what, sizeof(what), "cannot connect (%s) to", ows__net_strerror(e));
	fail_upstream(c, 502, what);
}

static const char busy503[] =
	"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 42\r\n"
	"Connection: close\r\n\r\nowsbx proxy: too many connections; retry\n";

/* Every pending connection of a listener, checked against `cl`'s list, told to `call`. */
static void accept_all(ows_proxy *px, ows__sock listener, ows__pxc *cl, uint32_t call,
		       int64_t now)
{
	for (;;) {
		ows__sock s = ows__tcp_accept(px->loop, listener, busy503, sizeof(busy503) - 1);
		if (s == OWS__NOSOCK)
			return;
		bool room = px->nconns < px->max_conns &&
			    (cl == &px->own || cl->nconns < SESSION_CONNS);
		conn *c = room ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			ows__sock_send(s, busy503, sizeof(busy503) - 1);
			ows__sock_close(s);
			continue;
		}
		c->cl = cl;
		c->call = call;
		c->cs = s;
		c->us = OWS__NOSOCK;
		c->cep = (endpoint){c, false};
		c->uep = (endpoint){c, true};
		c->cst = C_HEAD;
		c->last_ms = c->head_ms = now;
		c->next = px->conns;
		if (px->conns)
			px->conns->prev = c;
		px->conns = c;
		px->nconns++;
		cl->nconns++;
		watch(px, c);
	}
}

/* ------------------------------------------------------------ ops */

/* Loop thread: closes the listeners an op names (and, for a whole client, its connections). */
static void run_op(ows_proxy *px, const pxop *op)
{
	pthread_mutex_lock(&px->amu);
	for (adopted **ap = &px->adopted; *ap;) {
		adopted *a = *ap;
		if (a->cl != op->cl || (!op->whole && a->call != op->call)) {
			ap = &a->next;
			continue;
		}
		*ap = a->next;
		ows__loop_close(px->loop, a->s, true);
		if (a->port) {
			pthread_mutex_lock(&px->mu);
			a->cl->port_used[a->port - OWS__PROXY_PORT_INSIDE - 1] = false;
			pthread_mutex_unlock(&px->mu);
		}
		free(a);
	}
	pthread_mutex_unlock(&px->amu);
	if (!op->whole)
		return;
	conn *next;
	for (conn *c = px->conns; c; c = next) {
		next = c->next;
		if (c->cl == op->cl)
			conn_close(px, c);
	}
}

static void take_ops(ows_proxy *px)
{
	pthread_mutex_lock(&px->opmu);
	pxop *ops = px->ops;
	px->ops = NULL;
	pthread_mutex_unlock(&px->opmu);
	while (ops) {
		pxop *op = ops;
		ops = op->next;
		run_op(px, op);
		pthread_mutex_lock(&px->opmu);
		op->done = true; /* the op is the waiter's: not touched after this */
		pthread_cond_broadcast(&px->opcond);
		pthread_mutex_unlock(&px->opmu);
	}
}

/* Host thread: has the loop run `op`, and waits until it has. */
static void post_op(ows_proxy *px, pxop *op)
{
	if (!px->thread_started) {
		run_op(px, op);
		return;
	}
	pthread_mutex_lock(&px->opmu);
	op->next = px->ops;
	px->ops = op;
	ows__loop_wake(px->loop);
	while (!op->done)
		pthread_cond_wait(&px->opcond, &px->opmu);
	pthread_mutex_unlock(&px->opmu);
}

static void take_answers(ows_proxy *px, int64_t now)
{
	pthread_mutex_lock(&px->rmu);
	rjob *done = px->rdone;
	px->rdone = NULL;
	pthread_mutex_unlock(&px->rmu);
	while (done) {
		rjob *j = done;
		done = j->next;
		conn *c = j->c;
		if (c->dead) {
			conn_free(c);
		} else if (c->cst != C_WAIT || c->ust != U_RESOLVING) {
			c->ust = U_NONE; /* answered too late: already refused or timed out */
		} else {
			resolved(px, c, j, now);
			progress(px, c, false, false, now);
			watch(px, c);
		}
		free(j);
	}
}

static void sweep(ows_proxy *px, int64_t now)
{
	conn *next;
	for (conn *c = px->conns; c; c = next) {
		next = c->next;
		if (c->deadline && now >= c->deadline) {
			if (c->cst == C_LINGER) {
				conn_close(px, c);
				continue;
			}
			char what[120];
			if (c->ust == U_ASKING) {
				ask_drop(c); /* no answer in time: as refused */
				refuse(px, c, NULL, NULL);
			} else if (c->ust == U_RESOLVING || c->ust == U_CONNECTING) {
				snprintf(what, sizeof(what), "no answer within %d ms from",
					 px->connect_timeout_ms);
				fail_upstream(c, 504, what);
			} else if (c->awaiting) {
				snprintf(what, sizeof(what), "no response within %d ms from",
					 px->response_timeout_ms);
				fail_upstream(c, 504, what);
			} else {
				c->deadline = 0;
			}
			progress(px, c, false, false, now);
			watch(px, c);
			continue;
		}
		int idle = px->idle_ms;
		int head = idle < HEAD_TIMEOUT_MS ? idle : HEAD_TIMEOUT_MS;
		if (c->cst == C_HEAD && c->in_len && now - c->head_ms > head) {
			/* a head that trickles in is not given more time for each byte */
			conn_close(px, c);
			continue;
		}
		if (c->cst == C_HEAD && c->ust == U_NONE && idle > HEAD_TIMEOUT_MS)
			idle = HEAD_TIMEOUT_MS; /* a request head is slow to come */
		else if (c->cst != C_TUNNEL && idle > HTTP_IDLE_MS)
			idle = HTTP_IDLE_MS;    /* a keep-alive connection between requests */
		if (c->cst != C_WAIT && !c->deadline && now - c->last_ms > idle)
			conn_close(px, c);
	}
}

static void *loop_main(void *arg)
{
	ows_proxy *px = arg;
	ows__net_thread_init();
	ows__event ev[256];
	int64_t next_sweep = 0;
	while (!atomic_load(&px->stop)) {
		int n = ows__loop_wait(px->loop, ev, 256, 100);
		int64_t now = ows__now_ms();
		for (int i = 0; i < n; i++) {
			if (!ev[i].ptr) {
				take_answers(px, now);
				if (px->ask_started) /* the loop's own flag: no lock while none asks */
					take_asks(px, now);
				continue;
			}
			if (ev[i].ptr == &px->ltag) {
				accept_all(px, px->ls, &px->own, 0, now);
				continue;
			}
			if (!((endpoint *)ev[i].ptr)->c) { /* a listener a sandbox handed over */
				adopted *a = ev[i].ptr;
				accept_all(px, a->s, a->cl, a->call, now);
				continue;
			}
			endpoint *e = ev[i].ptr;
			conn *c = e->c;
			if (c->closed)
				continue;
			c->last_ms = now;
			if (e->up) {
				c->u_hup |= ev[i].hup;
				if (c->ust == U_CONNECTING) {
					if (ev[i].wr || ev[i].hup)
						on_connect_ready(px, c, now);
					progress(px, c, false, false, now);
				} else {
					progress(px, c, false, ev[i].rd, now);
				}
			} else {
				c->c_hup |= ev[i].hup;
				progress(px, c, ev[i].rd, false, now);
			}
			watch(px, c);
		}
		if (now >= next_sweep) {
			sweep(px, now);
			next_sweep = now + 100;
		}
		/* after the batch: no event of it still points at what an op frees */
		take_ops(px);
		while (px->grave) {
			conn *c = px->grave;
			px->grave = c->next;
			conn_free(c);
		}
	}
	while (px->conns)
		conn_close(px, px->conns);
	while (px->grave) {
		conn *c = px->grave;
		px->grave = c->next;
		conn_free(c);
	}
	return NULL;
}

/* ------------------------------------------------------------ public API */

void ows_proxy_options_init(ows_proxy_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

#define HAS(opts, field) \
	((opts) && (opts)->size >= offsetof(ows_proxy_options, field) + sizeof((opts)->field))

static int read_hosts_file(ows_proxy *px, const char *path, ows_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return ows__fail_sys(err, path, NULL, "cannot read the proxy's hosts file");
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *save = NULL;
		char *addr = strtok_r(line, " \t\r\n", &save);
		if (!addr)
			continue;
		struct sockaddr_storage ss = {0};
		size_t len;
		if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
			ss.ss_family = AF_INET;
			len = sizeof(struct sockaddr_in);
		} else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
			ss.ss_family = AF_INET6;
			len = sizeof(struct sockaddr_in6);
		} else {
			continue;
		}
		char *name;
		while ((name = strtok_r(NULL, " \t\r\n", &save))) {
			override *n = realloc(px->ov, (px->nov + 1) * sizeof(*n));
			if (!n) {
				fclose(f);
				return ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
			}
			px->ov = n;
			override *o = &px->ov[px->nov];
			if (ows__host_normalize(name, strlen(name), o->name) != OWS__HOST_NAME)
				continue;
			o->addr = ss;
			o->len = len;
			px->nov++;
		}
	}
	fclose(f);
	return 0;
}

/* `listen_here`: a listener of its own on the host's loopback, or only adopted ones. */
static int proxy_start(const ows_proxy_options *opts, bool listen_here, ows_proxy **out,
		       ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "no place to put the proxy");
	*out = NULL;
	ows_proxy *px = ows__calloc(1, sizeof(*px), err);
	if (!px)
		return OWS_ENOMEM;
	pthread_mutex_init(&px->mu, NULL);
	pthread_mutex_init(&px->amu, NULL);
	pthread_mutex_init(&px->rmu, NULL);
	pthread_cond_init(&px->rcond, NULL);
	pthread_mutex_init(&px->opmu, NULL);
	pthread_cond_init(&px->opcond, NULL);
	px->own.px = px;
	px->ls = OWS__NOSOCK;
	px->max_conns = HAS(opts, max_conns) && opts->max_conns > 0 ? opts->max_conns : 4096;
	px->idle_ms = HAS(opts, idle_ms) && opts->idle_ms > 0 ? opts->idle_ms : 3600000;
	px->connect_timeout_ms =
		HAS(opts, connect_timeout_ms) && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
									       : 15000;
	px->response_timeout_ms = HAS(opts, response_timeout_ms) && opts->response_timeout_ms > 0
					  ? opts->response_timeout_ms
					  : 120000;
	int rc = 0;
	int port = HAS(opts, port) ? opts->port : 0;
	if (rc == 0 && (port < 0 || port > 65535))
		rc = ows__fail(err, OWS_EINVAL, 0, "port", "give 1-65535, or 0 for 47800-47899",
			       "not a port: %d", port);
	if (rc == 0 && HAS(opts, hosts) && opts->hosts)
		for (const char *const *h = opts->hosts; *h && rc == 0; h++)
			rc = change(&px->own, *h, "policy", true, err);
	if (rc == 0 && HAS(opts, hosts_file) && opts->hosts_file)
		rc = read_hosts_file(px, opts->hosts_file, err);
	if (rc == 0)
		rc = ows__net_init(err);
	if (rc == 0)
		rc = ows__loop_new(&px->loop, err);
	if (rc == 0 && listen_here)
		rc = ows__tcp_listen_loopback(port, PORT_LO, PORT_HI, &px->ls, &px->port, err);
	if (rc == 0 && listen_here &&
	    ows__loop_watch(px->loop, px->ls, &px->ltag, true, true, false) < 0)
		rc = ows__fail(err, OWS_ESYS, 0, "epoll_ctl", NULL, "cannot watch the proxy's socket");
	for (int i = 0; rc == 0 && i < RESOLVERS; i++) {
		int e = pthread_create(&px->rth[i], NULL, resolver_main, px);
		if (e != 0) {
			errno = e;
			rc = ows__fail_sys(err, "pthread_create", NULL, "cannot start a resolver thread");
		} else {
			px->nrth++;
		}
	}
	if (rc == 0) {
		int e = pthread_create(&px->thread, NULL, loop_main, px);
		if (e != 0) {
			errno = e;
			rc = ows__fail_sys(err, "pthread_create", NULL, "cannot start the proxy's thread");
		} else {
			px->thread_started = true;
		}
	}
	if (rc < 0) {
		ows_proxy_stop(px);
		return rc;
	}
	*out = px;
	return 0;
}

int ows_proxy_start(const ows_proxy_options *opts, ows_proxy **out, ows_error *err)
{
	return proxy_start(opts, true, out, err);
}

int ows_proxy_port(const ows_proxy *proxy)
{
	return proxy ? proxy->port : -1;
}

int ows_proxy_allow(ows_proxy *proxy, const char *pattern, ows_error *err)
{
	return change(proxy ? &proxy->own : NULL, pattern, "session", true, err);
}

int ows_proxy_disallow(ows_proxy *proxy, const char *pattern, ows_error *err)
{
	return change(proxy ? &proxy->own : NULL, pattern, NULL, false, err);
}

int ows_proxy_allow_file(ows_proxy *proxy, const char *path, ows_error *err)
{
	if (!proxy || !path)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "no proxy or no file");
	ows__strv sites = {0};
	int rc = ows__sites_file_read(path, &sites, err);
	for (size_t i = 0; rc == 0 && i < sites.len; i++)
		rc = change(&proxy->own, sites.v[i], "policy", true, err);
	ows__strv_free(&sites);
	return rc;
}

/*
 * The entry that lets a refused site through: the site itself when it was not
 * listed; with +private when it was, and resolved to a private address.
 */
static void blocked_allow(const blocked *b, char out[300])
{
	ows__pattern p = {.port = b->port, .allow_private = b->private_addr, .kind = b->kind};
	snprintf(p.host, sizeof(p.host), "%s", b->host);
	ows__pattern_format(&p, out);
}

/* The end of b's JSON object: why it was refused, and the entry that lets it through
 * unless a deny entry refused it (that one is the person's to take back). */
static size_t blocked_why(const blocked *b, char *out, size_t cap)
{
	if (b->denied[0])
		return (size_t)snprintf(out, cap, "\"reason\":\"denied\",\"denied_by\":\"%s\"}",
					b->denied);
	char allow[300];
	blocked_allow(b, allow);
	return (size_t)snprintf(out, cap, "\"reason\":\"%s\",\"allow\":\"%s\"}",
				b->private_addr ? "private address" : "not listed", allow);
}

/* Does record b belong in a list for `call` (OWS__PXC_ALL: every call, merged)? */
static bool blocked_wanted(const blocked *b, int64_t call, int64_t since_ms)
{
	return b->last_ms >= since_ms && (call == OWS__PXC_ALL || b->call == (uint32_t)call);
}

/* The same site refused to several calls is one entry of the session's list. */
static void blocked_merge(blocked *into, const blocked *b)
{
	into->count += b->count;
	if (b->first_ms < into->first_ms)
		into->first_ms = b->first_ms;
	if (b->last_ms >= into->last_ms) {
		into->last_ms = b->last_ms;
		into->private_addr = b->private_addr;
		memcpy(into->denied, b->denied, sizeof(into->denied));
	}
}

static int blocked_json_locked(const ows__pxc *cl, int64_t since_ms, int64_t call, char **out,
			       ows_error *err)
{
	blocked *list = cl->nblocked ? malloc(cl->nblocked * sizeof(*list)) : NULL;
	size_t n = 0;
	if (cl->nblocked && !list)
		return ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
	for (size_t i = 0; i < cl->nblocked; i++) {
		const blocked *b = &cl->blocked[i];
		if (!blocked_wanted(b, call, since_ms))
			continue;
		size_t k = 0;
		while (k < n && !(list[k].port == b->port && strcmp(list[k].host, b->host) == 0))
			k++;
		if (k < n)
			blocked_merge(&list[k], b);
		else
			list[n++] = *b;
	}
	size_t cap = 3 + n * (OWS__HOST_MAX + 300 + 200);
	char *s = malloc(cap);
	if (!s) {
		free(list);
		return ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
	}
	size_t o = 0;
	s[o++] = '[';
	for (size_t i = 0; i < n; i++) {
		const blocked *b = &list[i];
		/* hosts and entries are normalised names or addresses: nothing to escape */
		o += (size_t)snprintf(s + o, cap - o,
				      "%s{\"host\":\"%s\",\"port\":%d,\"count\":%ld,\"first_ms\":%lld,"
				      "\"last_ms\":%lld,",
				      i ? "," : "", b->host, b->port, b->count,
				      (long long)b->first_ms, (long long)b->last_ms);
		o += blocked_why(b, s + o, cap - o);
	}
	s[o++] = ']';
	s[o] = '\0';
	free(list);
	*out = s;
	return 0;
}

static int client_blocked_json(ows__pxc *cl, int64_t since_ms, int64_t call, char **out,
			       ows_error *err)
{
	if (out)
		*out = NULL;
	if (!cl || !out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "no proxy or no place for the answer");
	pthread_mutex_lock(&cl->px->mu);
	int rc = blocked_json_locked(cl, since_ms, call, out, err);
	pthread_mutex_unlock(&cl->px->mu);
	return rc;
}

int ows_proxy_blocked_json(ows_proxy *proxy, int64_t since_ms, char **out, ows_error *err)
{
	return client_blocked_json(proxy ? &proxy->own : NULL, since_ms, OWS__PXC_ALL, out, err);
}

static void client_release(ows__pxc *cl)
{
	free(cl->pats);
	free(cl->sites);
	free(cl->blocked);
}

void ows_proxy_stop(ows_proxy *px)
{
	if (!px)
		return;
	if (px->thread_started) {
		atomic_store(&px->stop, true);
		ows__loop_wake(px->loop);
		pthread_join(px->thread, NULL);
	}
	ask_thread_stop(px); /* the loop's end dropped every ask of px */
	pthread_mutex_lock(&px->rmu);
	px->rstop = true;
	pthread_cond_broadcast(&px->rcond);
	pthread_mutex_unlock(&px->rmu);
	for (int i = 0; i < px->nrth; i++)
		pthread_join(px->rth[i], NULL);
	rjob *lists[2] = {px->rq, px->rdone};
	for (int k = 0; k < 2; k++)
		while (lists[k]) {
			rjob *j = lists[k];
			lists[k] = j->next;
			if (j->c->dead)
				conn_free(j->c);
			free(j);
		}
	if (px->ls != OWS__NOSOCK)
		ows__sock_close(px->ls);
	while (px->adopted) {
		adopted *a = px->adopted;
		px->adopted = a->next;
		ows__sock_close(a->s);
		free(a);
	}
	pthread_mutex_destroy(&px->amu);
	ows__loop_free(px->loop);
	pthread_mutex_destroy(&px->mu);
	pthread_mutex_destroy(&px->rmu);
	pthread_cond_destroy(&px->rcond);
	pthread_mutex_destroy(&px->opmu);
	pthread_cond_destroy(&px->opcond);
	client_release(&px->own);
	free(px->ov);
	free(px);
}

/* Watches a listener for `cl`; owns `s` from now on, also on failure. */
static int adopt(ows__pxc *cl, ows__sock s, uint32_t call, int port, ows_error *err)
{
	ows_proxy *px = cl->px;
	adopted *a = calloc(1, sizeof(*a));
	int rc = a ? ows__sock_listener_ready(s, err)
		   : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (rc < 0) {
		free(a);
		ows__sock_close(s);
		return rc;
	}
	a->s = s;
	a->cl = cl;
	a->call = call;
	a->port = port;
	pthread_mutex_lock(&px->amu);
	a->next = px->adopted;
	px->adopted = a;
	pthread_mutex_unlock(&px->amu);
	/* Listed for ows_proxy_stop (or the client's end) to close; the loop knows it by its empty tag. */
	if (ows__loop_watch(px->loop, s, a, true, true, false) < 0)
		return ows__fail_sys(err, "epoll", NULL, "cannot watch the sandbox's listener");
	return 0;
}

/* ---------------------------------------------------- the host's one proxy */

/*
 * The proxy every session of this process shares: started with the first
 * client, stopped with the last, so that a host with no allowlist session
 * runs no proxy thread.  The only process-wide state of the library, under
 * its own lock.
 */
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static ows_proxy *shared_px;
static size_t shared_clients;

static int shared_acquire(ows_proxy **out, ows_error *err)
{
	int rc = 0;
	pthread_mutex_lock(&shared_mu);
	if (!shared_px)
		rc = proxy_start(NULL, false, &shared_px, err);
	if (rc == 0) {
		shared_clients++;
		*out = shared_px;
	}
	pthread_mutex_unlock(&shared_mu);
	return rc;
}

static void shared_release(void)
{
	pthread_mutex_lock(&shared_mu);
	if (shared_clients && --shared_clients == 0) {
		ows_proxy_stop(shared_px);
		shared_px = NULL;
	}
	pthread_mutex_unlock(&shared_mu);
}

int ows__pxc_open(ows__pxc **out, ows_error *err)
{
	*out = NULL;
	ows__pxc *cl = ows__calloc(1, sizeof(*cl), err);
	if (!cl)
		return OWS_ENOMEM;
	int rc = shared_acquire(&cl->px, err);
	if (rc < 0) {
		free(cl);
		return rc;
	}
	*out = cl;
	return 0;
}

void ows__pxc_close(ows__pxc *cl)
{
	if (!cl)
		return;
	ask_forget_client(cl);
	pxop op = {.cl = cl, .whole = true};
	post_op(cl->px, &op);
	/* the loop hands it nothing more: its tunnels end here */
	ows__inject_free(cl->inject);
	client_release(cl);
	free(cl);
	shared_release();
}

void ows__pxc_inject(ows__pxc *cl, ows__inject *inj)
{
	pthread_mutex_lock(&cl->px->mu);
	ows__inject *old = cl->inject;
	cl->inject = inj;
	pthread_mutex_unlock(&cl->px->mu);
	ows__inject_free(old);
}

void ows__pxc_hide(ows__pxc *cl, ows__strv *texts)
{
	pthread_mutex_lock(&cl->px->mu);
	for (size_t i = 0; cl->inject && i < texts->len; i++)
		ows__inject_hide(cl->inject, texts->v[i], strlen(texts->v[i]));
	pthread_mutex_unlock(&cl->px->mu);
}

int ows__pxc_allow(ows__pxc *cl, const char *pattern, const char *source, ows_error *err)
{
	return change(cl, pattern, source, true, err);
}

int ows__pxc_disallow(ows__pxc *cl, const char *pattern, ows_error *err)
{
	return change(cl, pattern, NULL, false, err);
}

int ows__pxc_adopt(ows__pxc *cl, ows__sock s, uint32_t call, int port, ows_error *err)
{
	if (!cl || s == OWS__NOSOCK) {
		if (s != OWS__NOSOCK)
			ows__sock_close(s);
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "no proxy or no listener");
	}
	if (port < OWS__PROXY_PORT_INSIDE + 1 || port > PORT_HI)
		port = 0;
	return adopt(cl, s, call, port, err);
}

int ows__pxc_listen_loopback(ows__pxc *cl, int *port, ows_error *err)
{
	ows__sock s = OWS__NOSOCK;
	int rc = ows__tcp_listen_loopback(0, PORT_LO, PORT_HI, &s, port, err);
	return rc < 0 ? rc : adopt(cl, s, 0, 0, err);
}

int ows__pxc_port_take(ows__pxc *cl)
{
	int port = 0;
	if (!cl)
		return 0;
	pthread_mutex_lock(&cl->px->mu);
	for (int k = 0; k < CALL_PORTS && !port; k++) {
		int i = (cl->next_port + k) % CALL_PORTS;
		if (!cl->port_used[i]) {
			cl->port_used[i] = true;
			cl->next_port = (i + 1) % CALL_PORTS;
			port = OWS__PROXY_PORT_INSIDE + 1 + i;
		}
	}
	pthread_mutex_unlock(&cl->px->mu);
	return port;
}

void ows__pxc_port_drop(ows__pxc *cl, int port, bool taken_inside)
{
	if (!cl || port < OWS__PROXY_PORT_INSIDE + 1 || port > PORT_HI)
		return;
	pthread_mutex_lock(&cl->px->mu);
	cl->port_used[port - OWS__PROXY_PORT_INSIDE - 1] = taken_inside;
	pthread_mutex_unlock(&cl->px->mu);
}

void ows__pxc_end_call(ows__pxc *cl, uint32_t call)
{
	if (!cl || !call)
		return;
	pxop op = {.cl = cl, .call = call};
	post_op(cl->px, &op);
}

int ows__pxc_blocked_json(ows__pxc *cl, int64_t since_ms, int64_t call, char **out,
			  ows_error *err)
{
	return client_blocked_json(cl, since_ms, call, out, err);
}

int ows__pxc_sites(ows__pxc *cl, ows__strv *patterns, ows__strv *sources, ows_error *err)
{
	int rc = 0;
	pthread_mutex_lock(&cl->px->mu);
	for (size_t i = 0; i < cl->nsites && rc == 0; i++) {
		rc = ows__strv_push(patterns, cl->sites[i].text, err);
		if (rc == 0)
			rc = ows__strv_push(sources, cl->sites[i].source, err);
	}
	pthread_mutex_unlock(&cl->px->mu);
	return rc;
}

int ows__pxc_check(ows__pxc *cl, const char *host, int port, ows__verdict *v, ows_error *err)
{
	memset(v, 0, sizeof(*v));
	char h[OWS__HOST_MAX];
	int kind = host ? ows__host_normalize(host, strlen(host), h) : -1;
	if (kind < 0)
		return ows__fail(err, OWS_EINVAL, 0, host ? host : "(null)",
				 "give a host name or an IP address, without a port", "not a host");
	if (port < 1 || port > 65535)
		return ows__fail(err, OWS_EINVAL, 0, "port", "give 1-65535", "not a port: %d", port);
	snprintf(v->host, sizeof(v->host), "%s", h);
	v->port = port;
	ows__pattern self = {.port = port, .kind = kind};
	snprintf(self.host, sizeof(self.host), "%s", h);
	bool private_ok = false;
	pthread_mutex_lock(&cl->px->mu);
	const ows__pattern *m = match_locked(cl, h, kind, port, &private_ok);
	bool denied = m && m->deny;
	if (m)
		ows__pattern_format(m, v->pattern);
	pthread_mutex_unlock(&cl->px->mu);
	if (denied) {
		v->reason = "denied";
		return 0;
	}
	if (!m) {
		v->reason = "not listed";
		ows__pattern_format(&self, v->allow);
		return 0;
	}
	/* Resolved as the proxy would, so that a rebinding name is refused here too. */
	rjob j = {0};
	if (kind == OWS__HOST_NAME) {
		snprintf(j.host, sizeof(j.host), "%s", h);
		resolve_job(cl->px, &j);
	} else {
		literal_job(h, kind, &j);
	}
	if (j.gai != 0 || j.naddr == 0) {
		v->reason = "does not resolve";
		return 0;
	}
	if (!private_ok && first_private(&j, v->addr, sizeof(v->addr))) {
		v->reason = "private address";
		self.allow_private = true;
		ows__pattern_format(&self, v->allow);
		return 0;
	}
	v->allowed = true;
	return 1;
}
