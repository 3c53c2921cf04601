/*
 * Channels to the person's programs: which unix sockets a command may
 * connect to, and which FIFOs it may open (channels.c).
 * Init-side code: no allocation, no locks but the one it owns.
 */
#ifndef OWS_LINUX_CHANNELS_H
#define OWS_LINUX_CHANNELS_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "linux/linux.h"

#define OWS_CHAN_MAX_MOUNTS 12

/* What init opens before it restricts itself, for every call's reaper. */
struct ows__chan {
	int diag;        /* NETLINK_SOCK_DIAG in the sandbox's network, or -1: no supervision */
	int *lock;       /* shared by the reapers: one question at a time on `diag` */
	bool offline;    /* the network is `none`: the reapers count the internet sockets refused */
	mode_t closed;   /* the write bits a command's umask keeps (ows__plan_closed_bits) */
	/*
	 * Mount ids: where a FIFO is the sandbox's own (its memory file systems,
	 * its private folder, pipes); what a reaper's own descriptors lie on (anon
	 * inodes, pidfds), never reopened for a command; /proc.
	 */
	uint64_t own_fifo[OWS_CHAN_MAX_MOUNTS];
	int nown_fifo;
	uint64_t never[2];
	uint64_t proc;
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
	/* Blocking opens of the sandbox's own FIFOs that wait for the other end (a
	 * writer for a reader, a reader for a writer): asked again, without blocking,
	 * until it comes or the caller goes. */
	int nwaiting;
	struct {
		uint64_t id;
		int fd;     /* a writer's: O_PATH, the FIFO; a reader's: the FIFO, open to read */
		int flags;  /* the open's, and O_CLOEXEC for the command's descriptor */
	} waiting[OWS_CHAN_MAX_PENDING];
};

/* Init, before it restricts itself: the diag socket and the lock.  0, or an errno. */
OWS__HIDDEN int ows__chan_open(struct ows__chan *ch);

/*
 * Init, in its new root: notes the mounts of `own` (the paths of the memory
 * file systems it made and of the private folder's bind) as the places a
 * FIFO of the sandbox's own lies, and the mounts of pipes, anon inodes,
 * pidfds and /proc.  0, or an errno.
 */
OWS__HIDDEN int ows__chan_note_mounts(struct ows__chan *ch, const char *const *own, int n);

/*
 * The filter a command adds, with SECCOMP_FILTER_FLAG_NEW_LISTENER: every
 * connect() goes to its reaper, every open() of what may be there (not
 * O_PATH, a folder, nor O_CREAT | O_EXCL; init's filter refuses openat2:
 * its flags lie in memory), and under `none` (`offline`) every socket()
 * of another family than AF_UNIX, which init's filter sends there too; a
 * unix socket other than STREAM or SEQPACKET is refused, and so are
 * pidfd_getfd (which the reaper, under init's filter only, needs) and a
 * seccomp listener of the command's own; a umask without all of `closed`
 * goes to the reaper; prctl(PR_SET_DUMPABLE, 0) is skipped (the reaper
 * reads its caller's memory), and Landlock is off (EOPNOTSUPP: a domain of
 * the command's own would not bind the reaper, which makes its opens).  Written into insns (room for
 * `max`); its length, or -1 when it does not fit.
 */
OWS__HIDDEN int ows__chan_filter(struct sock_filter *insns, size_t max, bool offline,
				  mode_t closed);

/* The reaper, once its command started: how its listener wakes the command. */
OWS__HIDDEN void ows__chan_begin(struct ows__chan_supervisor *s);

/* The descriptors to poll for the supervisor (at most 1 + OWS_CHAN_MAX_PENDING). */
OWS__HIDDEN int ows__chan_pollfds(const struct ows__chan_supervisor *s, struct pollfd *pfd,
				  int max);
/* Answers what those descriptors say: a new call, or a pending connect() that ended. */
OWS__HIDDEN void ows__chan_serve(struct ows__chan_supervisor *s, const struct pollfd *pfd, int n);

/* How long the reaper's poll may wait (ms, -1: for ever): opens that wait are asked again. */
OWS__HIDDEN int ows__chan_timeout(const struct ows__chan_supervisor *s);
/* Asks the waiting opens again; called after each poll. */
OWS__HIDDEN void ows__chan_retry(struct ows__chan_supervisor *s);

#endif /* OWS_LINUX_CHANNELS_H */
