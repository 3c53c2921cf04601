/*
 * Channels to the person's programs: which unix sockets a command may
 * connect to (channels.c).  Init-side code: no allocation, no locks but the
 * one it owns.
 */
#ifndef OWS_LINUX_CHANNELS_H
#define OWS_LINUX_CHANNELS_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "linux/linux.h"

/* What init opens before it restricts itself, for every call's reaper. */
struct ows__chan {
	int diag;        /* NETLINK_SOCK_DIAG in the sandbox's network, or -1: no supervision */
	int *lock;       /* shared by the reapers: one question at a time on `diag` */
	bool offline;    /* the network is `none`: the reapers count the internet sockets refused */
};

/* A reaper's side of its command's connect() calls. */
#define OWS_CHAN_MAX_PENDING 32
struct ows__chan_supervisor {
	const struct ows__chan *ch;
	int notify;    /* the command's seccomp listener, or -1 */
	int npending;  /* connects that block, answered once the socket says how they ended */
	struct {
		uint64_t id;
		int fd;
	} pending[OWS_CHAN_MAX_PENDING];
	/* Under `none` (ch->offline): the internet sockets the command asked for, each
	 * refused; told to the host with its exit, for it to say the network is off. */
	uint32_t offline_calls;
};

/* Init, before it restricts itself: the diag socket and the lock.  0, or an errno. */
OWS__HIDDEN int ows__chan_open(struct ows__chan *ch);

/*
 * The filter a command adds, with SECCOMP_FILTER_FLAG_NEW_LISTENER: every
 * connect() goes to its reaper, and under `none` (`offline`) every socket()
 * of another family than AF_UNIX, which init's filter sends there too; a
 * unix socket other than STREAM or SEQPACKET is refused, and so are
 * pidfd_getfd (which the reaper, under init's filter only, needs) and a
 * seccomp listener of the command's own.  Written into insns (room for
 * `max`); its length, or -1 when it does not fit.
 */
OWS__HIDDEN int ows__chan_filter(struct sock_filter *insns, size_t max, bool offline);

/* The descriptors to poll for the supervisor (at most 1 + OWS_CHAN_MAX_PENDING). */
OWS__HIDDEN int ows__chan_pollfds(const struct ows__chan_supervisor *s, struct pollfd *pfd,
				  int max);
/* Answers what those descriptors say: a new connect(), or a pending one that ended. */
OWS__HIDDEN void ows__chan_serve(struct ows__chan_supervisor *s, const struct pollfd *pfd, int n);

#endif /* OWS_LINUX_CHANNELS_H */
