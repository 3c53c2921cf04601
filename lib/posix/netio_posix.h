/*
 * Between lib/posix/netio_posix.c, the POSIX half of lib/netio.h, and each
 * POSIX system's netio.c (lib/linux/, lib/darwin/): the few socket calls that
 * differ.  Internal.
 */
#ifndef OWS_NETIO_POSIX_H
#define OWS_NETIO_POSIX_H

#include <stdbool.h>

#include "netio.h"

/*
 * send()'s flag that keeps a closed peer from raising SIGPIPE.  macOS has
 * none it documents: its sockets get SO_NOSIGPIPE when they are made
 * (ows__sock_socket, ows__sock_accept_fd) instead.
 */
#ifdef __APPLE__
#define OWS__MSG_NOSIGNAL 0
#else
#define OWS__MSG_NOSIGNAL MSG_NOSIGNAL
#endif

/* A new TCP socket, closed on exec, raising no SIGPIPE; non-blocking when asked.  -1 with errno. */
OWS__HIDDEN int ows__sock_socket(int family, bool nonblock);
/* A connection from `listener`, non-blocking, closed on exec, raising no SIGPIPE; -1 with errno. */
OWS__HIDDEN int ows__sock_accept_fd(int listener);
/* The loop's spare descriptor (see ows__tcp_accept): -1 when it has none. */
OWS__HIDDEN int *ows__loop_spare(ows__loop *l);

#endif /* OWS_NETIO_POSIX_H */
