/*
 * The sandbox's init: the first process inside the wall.
 *
 * Both Linux providers start one per session: `landlock` clones it from the
 * host, `account` gets it from the setuid launcher.  It restricts itself,
 * proves the wall from inside, then starts commands on the host's request
 * and reports their exits, over a SOCK_SEQPACKET control socket.  Each
 * command starts under a reaper of its call's (a fork of init, a child
 * subreaper), which reports its exit and can end all it started.  When the
 * socket closes (the session closed, or the host died), init kills every
 * process of its PID namespace and exits.
 *
 * Everything on the init side runs between fork and exec in a copy of a
 * host that may have had threads: it allocates nothing and takes no lock.
 * It only reads a plan the host (or launcher) built, and makes system calls.
 */
#ifndef OWS_LINUX_INIT_H
#define OWS_LINUX_INIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "linux/linux.h"

#define OWS_INIT_MAX_MOUNTS 512 /* the system, folders, what the guard binds (192), masks */
#define OWS_INIT_MAX_RULES 512 /* the view's; /etc split rule by rule when a group's entry is left out */
#define OWS_INIT_MAX_PROBES 8
#define OWS_INIT_MAX_CHECKS 64
#define OWS_INIT_MAX_PROCS 256

/* OWS_M_MASK covers what is at dst, if anything: a folder with an empty read-only
 * tmpfs, anything else with an empty read-only file. */
enum ows__mnt_kind { OWS_M_BIND, OWS_M_TMPFS, OWS_M_PROC, OWS_M_DEVPTS, OWS_M_SYMLINK, OWS_M_MASK };

struct ows__mnt {
	enum ows__mnt_kind kind;
	const char *src;    /* M_BIND: host path; M_SYMLINK: link target */
	const char *dst;    /* path inside, absolute */
	bool rw;
	bool is_file;       /* a bind of one file (a device node) */
	bool dev;           /* keep device nodes usable (no MOUNT_ATTR_NODEV) */
	const char *mode;   /* M_TMPFS */
	uint64_t size;      /* M_TMPFS: bytes, and inodes (nr_inodes); 0: the kernel's default */
	uint64_t inodes;
	bool owned;         /* M_TMPFS: its root is the account's (uid, gid of the plan) */
	bool want_id;       /* M_BIND: the source must still be want_dev/want_ino */
	dev_t want_dev;
	ino_t want_ino;
	int fd;             /* filled by init: the detached mount */
};

struct ows__rule {
	const char *path;
	uint64_t access;
};

struct ows__plan {
	bool userns;                 /* unprivileged host: map our own ids */
	/*
	 * Init shares every namespace of the host: an unprivileged host the
	 * kernel gives no usable user namespace.  Nothing is mounted; Landlock
	 * alone draws the view (rules, no mounts), seccomp closes what the
	 * missing namespaces would have (unix sockets, SysV IPC), and init is a
	 * child subreaper that ends every descendant itself.
	 */
	bool in_host_ns;
	/*
	 * Init is a clone of the host, not of the launcher: its argument and
	 * environment area, which /proc/PID/cmdline and environ show to every
	 * process inside, is the host's (its command line may hold a token).
	 */
	bool host_args;
	pid_t host_pid;              /* in_host_ns: the host, for the proof's signal check */
	pid_t init_pid;              /* set by init: its own pid (1 in a PID namespace) */
	uid_t outer_uid;
	gid_t outer_gid;
	uid_t uid;                   /* the account inside */
	gid_t gid;
	gid_t groups[32];
	int ngroups;                 /* root host: supplementary groups of the target */
	/*
	 * Another account has `gid` as its primary group or is a member of it:
	 * group write opens a file to them, so it goes as write for others does
	 * (the umask init hands on, chmod).
	 */
	bool group_shared;
	int clone_flags;

	struct ows__mnt mounts[OWS_INIT_MAX_MOUNTS];
	int nmounts;
	const char *skeleton[OWS_INIT_MAX_MOUNTS]; /* folders made only to reach a mount: 0111 */
	int nskeleton;
	struct ows__rule rules[OWS_INIT_MAX_RULES];
	int nrules;

	int abi;
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
	ows__seccomp seccomp;
	ows__partial partial[OWS__MAX_PARTIAL]; /* promises kept only in part (view.c) */
	int npartial;

	/* the proof */
	ows_net net;
	const ows__folder *folders;
	size_t nfolders;
	const char *home;
	const char *canary;          /* NULL when nothing could be planted */
	const char *canary_token;
	const char *unix_probes[OWS_INIT_MAX_PROBES];
	int nunix;
	char abstract_name[108];
	socklen_t abstract_len;
	char *const *envp;

	const char *private_dir;     /* made by init on the sandbox's /tmp when set */
	uint16_t proxy_port;         /* allowlist: listen on 127.0.0.1:port inside, for the host */
	const char *priv_home;       /* where shared copies go */
	const ows__file *files;      /* shared copies, relative to priv_home */
	size_t nfiles;
	const char *passwd;          /* the sandbox's /etc/passwd: home is the private home */
	char *const *shared_env;     /* NAME=VALUE set by shared entries: not secrets (the proof) */

	/*
	 * Limits init sets on itself before it restricts itself, for every
	 * command to inherit, and reads back in the proof with the cgroup's.
	 */
	uint64_t nproc;              /* RLIMIT_NPROC, soft and hard; 0: left as it is */
	int oom_score_adj;           /* written to /proc/self/oom_score_adj; 0: left */
	uint64_t tmpfs_bytes;        /* the size of /tmp and /dev/shm (view.c); 0: the kernel's */
	uint64_t tmpfs_inodes;
	struct ows__limit_file {     /* a cgroup's limit, read back by the proof */
		const char *what;        /* "processes", "memory" */
		const char *path;        /* pids.max, memory.max, memory.limit_in_bytes */
		uint64_t want;           /* the proof passes when the file holds at most this */
	} limit_files[2];
	int nlimit_files;

	int ctl;                     /* init's end of the control socket */
};

/* The write bits nothing made inside may carry: others', and the group's when shared. */
static inline mode_t ows__plan_closed_bits(const struct ows__plan *p)
{
	return S_IWOTH | (p->group_shared ? S_IWGRP : 0);
}

/* ------------------------------------------------------------- messages */

/*
 * After the proof the control socket carries requests only, host to init:
 * each SPAWN brings one end of a socket pair of its own (the command's status
 * channel), and init (or the call's reaper it forks) sends the command's
 * STARTED or SPAWN_FAIL, then its EXITED, there (init.c's handle_spawn).  The numbers are the contract with an installed launcher:
 * 3-6 were a spawn whose replies came back on the socket; an older init
 * ignores SPAWN = 11 and closes its descriptors, which the host reads as a
 * failed start, never as a command it cannot see.
 */
enum ows__msg_type {
	OWS_MSG_FAIL = 1,       /* init → host: setup failed: stage in text, err */
	OWS_MSG_PROOF = 2,      /* init → host: checks follow */
	OWS_MSG_KILL = 7,       /* host → init: code = signal; SIGKILL ends the call's whole
				   tree (its reaper's), another goes to the command's
				   process group.  An older init gives SIGKILL to the
				   group too. */
	OWS_MSG_LISTENER = 8,   /* init → host: the proxy's listening socket inside (SCM_RIGHTS) */
	OWS_MSG_SHARE = 9,      /* host → init: shared copies for the private home, in a memfd */
	OWS_MSG_SHARED = 10,    /* init → host: err 0, or why the copies could not be written */
	OWS_MSG_SPAWN = 11,     /* host → init: memfd, stdin, stdout, stderr, status channel;
				   code = the call's proxy port (47801-47899), 0: the session's */
	/* init → host, on the command's status channel: */
	OWS_MSG_STARTED = 12,    /* code = that port, with its listener (SCM_RIGHTS), or 0 */
	OWS_MSG_SPAWN_FAIL = 13, /* err, stage in text */
	OWS_MSG_EXITED = 14,     /* code; err = the signal that ended it, or 0; under `none`,
				    offline_calls = the internet sockets it asked for, refused
				    (channels.c) */
};

struct ows__msg {
	uint32_t type;
	uint32_t id;
	int32_t code;
	int32_t err;
	union {
		char text[96];
		uint32_t offline_calls; /* OWS_MSG_EXITED */
	};
};

struct ows__proof_msg {
	struct ows__msg hdr;
	uint32_t n;
	ows__check checks[OWS_INIT_MAX_CHECKS];
};

/* --------------------------------------------------------------- init side */

/* Appends to a NUL-terminated buffer, truncating; no allocation. */
OWS__HIDDEN void ows__buf_add(char *buf, size_t size, const char *s);
OWS__HIDDEN void ows__buf_add_num(char *buf, size_t size, long v);
OWS__HIDDEN void ows__init_send(int fd, const struct ows__msg *m, size_t len);
/* Sends a message with up to OWS_MSG_MAX_FDS descriptors; 0, or -1 with errno.  Either side. */
#define OWS_MSG_MAX_FDS 5
OWS__HIDDEN int ows__send_fds(int sock, const struct ows__msg *m, const int *fds, int nfds);
/* Reports a failed setup step (errno is the cause) to the host and exits. */
OWS__HIDDEN __attribute__((noreturn)) void ows__init_die(const struct ows__plan *p,
							 const char *stage, const char *path);
/* Empties the capability sets; under a root host, becomes p->uid first. */
/*
 * What a command's restriction needs, copied out of the plan: a call's
 * reaper reads nothing of the plan, which lies in the host's memory that
 * reapers do not get (spare_reapers_the_host).
 */
struct ows__fence {
	int abi;
	bool in_host_ns;
	pid_t init;
	pid_t reaper;     /* the call's reaper, the command's parent; 0 for the proof */
};
OWS__HIDDEN struct ows__fence ows__init_fence_of(const struct ows__plan *p);
/* A command's Landlock layer in the host's namespaces (init_restrict.c); 0, or an errno. */
OWS__HIDDEN int ows__init_restrict_command(const struct ows__fence *p);
/* A command's seccomp guard against signalling init and its reaper; 0, or an errno. */
OWS__HIDDEN int ows__init_guard_command(const struct ows__fence *p);
/* errno's name ("EACCES"), static text; for the proof's details. */
OWS__HIDDEN const char *ows__init_errname(int e);
/* Runs fn(arg) in a child on init's one child stack (CLONE_VM | CLONE_VFORK). */
OWS__HIDDEN pid_t ows__init_start_child(int (*fn)(void *), void *arg, int flags);
OWS__HIDDEN void ows__init_drop_identity(const struct ows__plan *p);
/* What the reapers need to judge connect() (channels.c); before init restricts itself. */
OWS__HIDDEN void ows__init_open_channels(const struct ows__plan *p);
/* Landlock, then seccomp: after this, init and its children are inside (init_restrict.c). */
OWS__HIDDEN void ows__init_restrict(const struct ows__plan *p);
/* Runs the proof in a child (a command's view, but for the exec) and sends it (init_prove.c). */
OWS__HIDDEN void ows__init_prove(const struct ows__plan *p);
/* Marks the host's bulk of memory MADV_DONTFORK: no call's reaper copies it (init.c). */
OWS__HIDDEN void ows__init_spare_reapers(void);
/* Serves spawn and kill requests until the control socket closes. */
OWS__HIDDEN __attribute__((noreturn)) void ows__init_serve(const struct ows__plan *p);
/*
 * Init's whole life, for both providers (init_start.c): keeps only the control
 * socket, builds the sandbox's root from the plan and pivots into it, writes
 * the shared copies, opens the proxy's listener (allowlist), then drops its
 * identity, restricts itself, proves the wall and serves.  Called in the
 * child of clone() with the plan's namespaces.
 */
OWS__HIDDEN __attribute__((noreturn)) void ows__init_main(struct ows__plan *p);
/* Init's start (init_start.c) builds the sandbox through root.c in two steps. */
OWS__HIDDEN void ows__root_ids_and_limits(struct ows__plan *p);
OWS__HIDDEN void ows__root_build(struct ows__plan *p);

/* --------------------------------------------------------------- host side */

/* The host's end of a session's init. */
typedef struct ows__ctl {
	int fd;      /* control socket, -1 once closed */
	int listener; /* allowlist: the proxy's listening socket in the sandbox's network, or -1 */
	pid_t pid;   /* init (or the launcher that became it), 0 once reaped */
	bool gone;   /* the sandbox has ended */
	ows__guard_watch *guard; /* names swept after each command and at close; NULL: none */
} ows__ctl;

/* Waits for init's proof; fills s->proof_json; OWS_EVERIFY when a check failed. */
OWS__HIDDEN int ows__ctl_receive_proof(ows_session *s, ows__ctl *c, const char *provider,
				       ows_error *err);
/* allowlist: the proxy's listener init handed over goes to the session's proxy. */
OWS__HIDDEN int ows__ctl_adopt_listener(ows_session *s, ows__ctl *c, ows_error *err);
OWS__HIDDEN int ows__ctl_spawn(ows_session *s, ows__ctl *c, ows_proc *proc,
			       const char *const argv[], char *const envp[], const char *cwd,
			       const int stdio[3], ows_error *err);
OWS__HIDDEN int ows__ctl_wait(ows_session *s, ows__ctl *c, ows_proc *proc, int timeout_ms,
			      ows_error *err);
OWS__HIDDEN int ows__ctl_kill(ows_session *s, ows__ctl *c, ows_proc *proc, int signo,
			      ows_error *err);
/* A provider's spawn, wait and kill, when its impl begins with its ows__ctl. */
OWS__HIDDEN int ows__ctl_op_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
				  char *const envp[], const char *cwd, const int stdio[3],
				  ows_error *err);
OWS__HIDDEN int ows__ctl_op_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err);
OWS__HIDDEN int ows__ctl_op_kill(ows_session *s, ows_proc *proc, int signo, ows_error *err);
OWS__HIDDEN void ows__ctl_op_stop(ows_session *s);
/* Tells init to end everything, freeing nothing: calls in flight then return. */
OWS__HIDDEN void ows__ctl_stop(ows__ctl *c);
/* The proof's probes outside the wall, made by the host before init starts. */
/* Removes the canaries and probe sockets of sessions whose host died while opening. */
OWS__HIDDEN void ows__probes_sweep(const char *home);
/* ows__canary_plant: posix.h. */
/* A listening unix socket at addr (len bytes; abstract when addr[0] is NUL), or -1. */
OWS__HIDDEN int ows__unix_listen(const char *addr, size_t len);
/* Listens on the abstract "owsandbox-probe-<id>"; fills name and *len (0 on failure). */
OWS__HIDDEN int ows__abstract_probe(const char *id, char *name, size_t size, socklen_t *len);
/*
 * Hands the shared copies to init, which writes them into p->priv_home as
 * the account inside, owner-only (the account provider: only init may write
 * in the account's private home).  Waits for init's answer.
 */
OWS__HIDDEN int ows__ctl_send_share(ows_session *s, ows__ctl *c, const ows__file *files,
				    size_t nfiles, ows_error *err);
/* Closes the socket (init then ends everything) and waits until init is gone. */
OWS__HIDDEN void ows__ctl_close(ows_session *s, ows__ctl *c);

/* root.c: a short write of DATA to a /proc file, and one id mapped (uid_map,
 * gid_map: "INSIDE OUTSIDE 1"); -1 with errno.  No allocation: init-side. */
OWS__HIDDEN int ows__write_small(const char *path, const char *data);
OWS__HIDDEN int ows__write_id_map(const char *file, long inside, long outside);

#endif /* OWS_LINUX_INIT_H */
