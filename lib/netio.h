/*
 * The proxy's platform layer: sockets, an event loop, and the pump that moves
 * bytes between two sockets.  lib/linux/netio.c implements it with epoll,
 * eventfd and splice through a pipe (zero-copy); a lib/win/netio.c would
 * implement the same names with Winsock (WSAPoll or IOCP, a socket pair for
 * the wake-up, a user-space buffer in the pump).  Everything above this
 * header is portable.  Threads and locks are POSIX threads, which mingw-w64
 * also provides (winpthreads).
 */
#ifndef OWS_NETIO_H
#define OWS_NETIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

struct sockaddr;

/* A socket: an fd here, a SOCKET on Windows; OWS__NOSOCK when none. */
typedef intptr_t ows__sock;
#define OWS__NOSOCK ((ows__sock)-1)

/* Non-blocking I/O results besides a byte count: */
#define OWS__AGAIN (-1000) /* would block */
#define OWS__EOF 0

/* Words for a negative code from this layer, or for a resolver (getaddrinfo) error. */
OWS__HIDDEN const char *ows__net_strerror(int code);
OWS__HIDDEN const char *ows__resolve_strerror(int gai);

/*
 * Once per proxy: the platform's network start-up.  It leaves the descriptor
 * limit alone (that is the host's to choose): a connection that comes when
 * none is left is refused with a 503 (ows__tcp_accept), not dropped.
 */
OWS__HIDDEN int ows__net_init(ows_error *err);

/* At the start of the proxy's thread: a closed peer must not raise SIGPIPE. */
OWS__HIDDEN void ows__net_thread_init(void);

/*
 * Listens on 127.0.0.1: on `port`, or when it is 0 on the first free port in
 * [lo, hi].  Non-blocking.  Fills *port_out.
 */
OWS__HIDDEN int ows__tcp_listen_loopback(int port, int lo, int hi, ows__sock *out, int *port_out,
					 ows_error *err);
/* Makes a listening socket from elsewhere fit for the loop (non-blocking); checks it listens. */
OWS__HIDDEN int ows__sock_listener_ready(ows__sock s, ows_error *err);
struct ows__loop;
/*
 * A new non-blocking connection, or OWS__NOSOCK (nothing pending, or an
 * error).  When the process has no descriptor left, each pending connection
 * is taken with the loop's spare descriptor, sent `busy` and closed: a full
 * table refuses cleanly, where a connection left pending would keep the
 * listener readable and the loop spinning.
 */
OWS__HIDDEN ows__sock ows__tcp_accept(struct ows__loop *loop, ows__sock listener, const char *busy,
				      size_t busy_len);
/* Starts a non-blocking connect; 0 (in progress or done) or a negative errno. */
OWS__HIDDEN int ows__tcp_connect_start(const struct sockaddr *sa, size_t salen, ows__sock *out);
/* After the socket turned writable: 0 when connected, else the errno. */
OWS__HIDDEN int ows__tcp_connect_result(ows__sock s);
/* Blocking connect to a loopback-or-any address given as "host:port" (for clients). */
OWS__HIDDEN int ows__tcp_connect_blocking(const char *host, int port, ows__sock *out,
					  ows_error *err);

/* Bytes read (>0), OWS__EOF, OWS__AGAIN or a negative errno. */
OWS__HIDDEN long ows__sock_recv(ows__sock s, void *buf, size_t n);
/* Bytes written (>0), OWS__AGAIN or a negative errno; never raises SIGPIPE. */
OWS__HIDDEN long ows__sock_send(ows__sock s, const void *buf, size_t n);
OWS__HIDDEN void ows__sock_shutdown_wr(ows__sock s);
/* Both ways: a thread blocked on the socket in ows__sock_poll wakes. */
OWS__HIDDEN void ows__sock_shutdown_rdwr(ows__sock s);
OWS__HIDDEN void ows__sock_close(ows__sock s);

/* One socket of an ows__sock_poll: what to wait for, and whether it came
 * (also set for an error or a hang-up, which the next call reports). */
typedef struct ows__pollsock {
	ows__sock s;
	bool rd, wr;
	bool ready;
} ows__pollsock;

/* Waits up to timeout_ms (-1: no limit) for one of n sockets: the number
 * ready, 0 at the timeout, or a negative errno.  For a thread of its own
 * (the injected tunnels), not for the loop. */
OWS__HIDDEN int ows__sock_poll(ows__pollsock *p, int n, int timeout_ms);

/* ------------------------------------------------------------ event loop */

typedef struct ows__loop ows__loop;

typedef struct ows__event {
	void *ptr;      /* as registered; NULL for a wake-up */
	bool rd, wr, hup;
} ows__event;

OWS__HIDDEN int ows__loop_new(ows__loop **out, ows_error *err);
OWS__HIDDEN void ows__loop_free(ows__loop *loop);
/* Registers `s` (add) or changes what it waits for; level-triggered. */
OWS__HIDDEN int ows__loop_watch(ows__loop *loop, ows__sock s, void *ptr, bool add, bool rd,
				bool wr);
OWS__HIDDEN void ows__loop_forget(ows__loop *loop, ows__sock s);
/* Closes a socket that may be watched (`watched`): one call on Linux, where
 * closing is enough; a WSAPoll set would drop it first. */
OWS__HIDDEN void ows__loop_close(ows__loop *loop, ows__sock s, bool watched);
/* Up to `max` events; 0 after timeout_ms; negative on error. */
OWS__HIDDEN int ows__loop_wait(ows__loop *loop, ows__event *ev, int max, int timeout_ms);
/* Makes a waiting ows__loop_wait return (any thread). */
OWS__HIDDEN void ows__loop_wake(ows__loop *loop);

/* ------------------------------------------------------------------ pump */

/*
 * One direction of a relay.  Bytes read from a socket wait in the pump until
 * the other socket takes them.  On Linux they never enter user space (splice
 * through a pipe, made at the first byte so that an idle tunnel holds none).
 */
typedef struct ows__pump ows__pump;

/* Moves up to `max` bytes from `from` into the pump (made when *pp is NULL).
 * Bytes (>0), OWS__EOF, OWS__AGAIN or a negative errno. */
OWS__HIDDEN long ows__pump_fill(ows__pump **pp, ows__sock from, size_t max);
/* Moves what the pump holds into `to`: bytes (>=0), OWS__AGAIN or a negative errno. */
OWS__HIDDEN long ows__pump_drain(ows__pump *p, ows__sock to);
OWS__HIDDEN size_t ows__pump_pending(const ows__pump *p);
/* How much more a fill may take now (0: wait for a drain). */
OWS__HIDDEN size_t ows__pump_room(const ows__pump *p);
OWS__HIDDEN void ows__pump_free(ows__pump *p);

/* --------------------------------------------------------------- tunnel */

/*
 * Relays between a connected socket and two descriptors (stdin, stdout) until
 * both directions end: the client side of `owsbx connect`.  `pre` holds bytes
 * already read from the socket.  0 or a negative code.
 */
OWS__HIDDEN int ows__relay_stdio(ows__sock s, int in_fd, int out_fd, const char *pre,
				 size_t pre_len, ows_error *err);

#endif /* OWS_NETIO_H */
