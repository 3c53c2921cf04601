/*
 * Internal declarations shared between the library's files.  Names here
 * carry the ows__ prefix; nothing here is part of the public API.
 */
#ifndef OWS_INTERNAL_H
#define OWS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "owsandbox.h"

#if defined(_WIN32)
#define OWS__HIDDEN /* PE has no symbol visibility; a static library exports nothing */
#else
#define OWS__HIDDEN __attribute__((visibility("hidden")))
#endif
#define OWS__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define OWS__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Records an error if none is recorded yet (the first error wins) and
 * returns `code`, so that a failure path reads `return ows__fail(...)`.
 * `sys_errno` 0 means no system call was involved.  `where` may be NULL.
 */
OWS__HIDDEN int ows__fail(ows_error *err, int code, int sys_errno, const char *where,
			  const char *hint, const char *what_fmt, ...) OWS__PRINTF(6, 7);

/* Same, for a failed system call: code OWS_ESYS, errno taken from `errno`. */
OWS__HIDDEN int ows__fail_sys(ows_error *err, const char *where, const char *hint,
			      const char *what_fmt, ...) OWS__PRINTF(4, 5);

/* malloc-family wrappers that record OWS_ENOMEM; NULL on failure. */
OWS__HIDDEN void *ows__calloc(size_t n, size_t size, ows_error *err);
OWS__HIDDEN char *ows__strdup(const char *s, ows_error *err);
OWS__HIDDEN char *ows__asprintf(ows_error *err, const char *fmt, ...) OWS__PRINTF(2, 3);

/* Milliseconds since the Unix epoch. */
OWS__HIDDEN int64_t ows__now_ms(void);
/* Fills buf with 2*n lower-case hex digits of fresh random bytes. */
OWS__HIDDEN int ows__random_hex(char *buf, size_t n, ows_error *err);
/* The value of one hex digit, or -1. */
OWS__HIDDEN int ows__hexval(char c);

/* --------------------------------------------------------------- strings */

typedef struct ows__strv {
	char **v;      /* NULL-terminated */
	size_t len;
	size_t cap;
} ows__strv;

OWS__HIDDEN int ows__strv_push(ows__strv *sv, const char *s, ows_error *err);
OWS__HIDDEN int ows__strv_pushf(ows__strv *sv, ows_error *err, const char *fmt, ...)
	OWS__PRINTF(3, 4);
OWS__HIDDEN void ows__strv_free(ows__strv *sv);


/* ---------------------------------------------------------------- policy */

typedef struct ows__folder {
	char *path;       /* absolute and canonical: no symbolic link, no "..", no trailing "/" */
	ows_access access;
} ows__folder;

#define OWS__LIMIT_MAX 5 /* ows_limit values index has_limit[] and limit[] */

struct ows_policy {
	char *provider;   /* NULL: the machine's default */
	ows_net net;
	ows__folder *folders;
	size_t nfolders;
	ows__strv hosts;
	ows__strv env;    /* "NAME=VALUE", names already checked */
	bool has_limit[OWS__LIMIT_MAX];
	uint64_t limit[OWS__LIMIT_MAX];
	char *run_as;
	ows__strv credentials; /* a subset of what the machine enabled; empty: all of it */
	ows__strv toolchains;  /* a subset of the machine's toolchains; empty: all of them */
};

OWS__HIDDEN const char *ows__net_name(ows_net net);
OWS__HIDDEN const char *ows__limit_key(ows_limit which);
/*
 * Refuses a folder that would expose `home` (the folder is the home, "/", or
 * a parent of the home).  `home` may be NULL.
 */
OWS__HIDDEN int ows__check_folder_vs_home(const char *folder, const char *home, ows_error *err);

/* ---------------------------------------------------------------- config */

struct ows_config {
	char *path;          /* "" for built-in defaults */
	char *provider;      /* default provider */
	ows_net net;         /* default network mode */
	bool open_unscoped;  /* open_without_scopes = partial: run `open` partial without Landlock scopes */
	ows__strv hosts;     /* machine's allow-list hosts */
	char *private_root;  /* per-session private folders on disk here; NULL: the sandbox's own /tmp */
	char *state_dir;     /* account provider: record, journal */
	char *root_runs_as;  /* landlock provider under a root host */
	/* [account]: what setup creates and the account provider uses */
	char *closed_user;   /* runs `none` and `allowlist` */
	char *open_user;     /* runs `open` */
	char *group;         /* people allowed to start sandboxes */
	char *launcher;      /* the setuid launcher's installed path */
	char *nft_table;     /* inet table of our own */
	/* [credentials], [credential NAME], [toolchains]: what the person shares */
	ows__strv cred_enabled;        /* catalog names switched on */
	ows__strv cred_inject;         /* of those, shared as placeholders the proxy replaces */
	char *inject_ca;               /* [credentials] upstream_ca: a PEM trusted besides the system's */
	struct ows__cred_custom *custom; /* [credential NAME] sections */
	size_t ncustom;
	ows__strv toolchains;          /* home-relative names switched on, or absolute folders */
	/* [guard] protect: names read-only in read-write folders; "default" is the built-in list */
	ows__strv protect;
	bool protect_set;              /* false: the built-in list */
	/* [limits]: what a session gets when its policy sets none (0: the built-in default) */
	uint64_t default_memory_mb;
	uint64_t default_processes;
	uint64_t default_tmpfs_mb;
	/* [openshell] profile: standard adds the search APIs to allowlist's strict (spec 002) */
	bool os_standard;
};

/* A file or folder under the home the person added to the catalog. */
struct ows__cred_custom {
	char *name;
	char *path;          /* relative to the home */
	bool credential;     /* else configuration */
	ows__strv hosts;
	char *lets;          /* what it lets the agent do, for the agent's text */
	char *env;           /* the variable its tool reads, set to the copy; NULL for none */
	char *header;        /* inject: the request header the secret goes in ("Authorization") */
	char *secret_key;    /* inject: the key whose value is the secret; NULL: the whole file */
};

/* Built-in defaults; never fails except for memory. */
OWS__HIDDEN int ows__config_defaults(ows_config *config, ows_error *err);
/* The machine's config (ows_config_load(NULL)), in place: what a NULL config means. */
OWS__HIDDEN int ows__config_machine(ows_config *config, ows_error *err);
/*
 * For the public calls that take a config: *use is `given`, or when it is
 * NULL the machine's, loaded into *machine.  Release *machine with
 * ows__config_release() in either case (it is zeroed when not used).
 */
OWS__HIDDEN int ows__config_or_machine(const ows_config *given, ows_config *machine,
				       const ows_config **use, ows_error *err);
/* Frees what a config holds, not the struct itself. */
OWS__HIDDEN void ows__config_release(ows_config *config);
/* An account, group or table name: [A-Za-z0-9_-], not starting with '-', at most 31. */
OWS__HIDDEN bool ows__name_is_safe(const char *s);
/* A path relative to the home that stays in it: no "..", no leading "/", not empty. */
OWS__HIDDEN bool ows__home_path_is_safe(const char *s);

/* ------------------------------------------------------------ catalog */

/* An entry of the credential catalog, built in or added in the config. */
typedef struct ows__cred {
	const char *name;       /* "ssh" */
	const char *label;      /* "SSH keys" */
	const char *path;       /* relative to the home: ".ssh" */
	bool credential;        /* a secret inside, else configuration */
	const char *env;        /* the variable its tool reads, or NULL */
	const char *env_leaf;   /* what the variable names, relative to the private home; NULL: path */
	const char *hosts;      /* comma-separated allow-list patterns, or NULL */
	const ows__strv *more_hosts; /* a custom entry's hosts */
	const char *lets;       /* "push and pull over SSH ... as the person" */
	/* inject: the header the secret goes in, and the key in the tool's files whose
	 * value is the secret (NULL: the whole file); or, when it cannot be, why */
	const char *inject_header;
	const char *inject_key;
	const char *no_inject;
} ows__cred;

/* The built-in entries, then the config's; false past the end. */
OWS__HIDDEN bool ows__cred_at(const ows_config *config, size_t i, ows__cred *out);
/* The entry called `name`, or false. */
OWS__HIDDEN bool ows__cred_find(const ows_config *config, const char *name, ows__cred *out);
/* Whether the machine's config switched `name` on. */
OWS__HIDDEN bool ows__cred_enabled(const ows_config *config, const char *name);
/* Whether it shares `name` as a placeholder the proxy replaces ([credentials] inject). */
OWS__HIDDEN bool ows__cred_injected(const ows_config *config, const char *name);
/* The toolchain folders the catalog offers, relative to the home; NULL past the end. */
OWS__HIDDEN const char *ows__toolchain_at(size_t i);

/* ---------------------------------------------------------- environment */

/* True when a variable's name says it holds a secret. */
OWS__HIDDEN bool ows__env_name_is_secret(const char *name, size_t len);
OWS__HIDDEN bool ows__env_name_is_valid(const char *name, size_t len);
/* Sets NAME=VALUE in `sv` from one "NAME=VALUE" entry, replacing an earlier one. */
OWS__HIDDEN int ows__env_set_entry(ows__strv *sv, const char *entry, ows_error *err);

typedef struct ows__env_spec {
	const char *home;        /* private home */
	const char *tmp;         /* private temporary folder */
	const char *cache;       /* private cache folder */
	const char *user;        /* account name inside */
	const char *provider;
	const char *const *host_env; /* the host's environ, filtered */
} ows__env_spec;

/* The session's base environment, NAME=VALUE, into *out (which it owns). */
OWS__HIDDEN int ows__env_build(const ows_policy *policy, const ows__env_spec *spec,
			       ows__strv *out, ows_error *err);
/* Merges NAME=VALUE extras over `base`, dropping secret names; fresh *out. */
OWS__HIDDEN int ows__env_merge(const ows__strv *base, const char *const *extra,
			       ows__strv *out, ows_error *err);

/* ----------------------------------------------------------------- audit */

typedef struct ows__audit {
	int fd;               /* -1: no file */
	ows_event_fn fn;
	void *ctx;
	char session[40];
} ows__audit;

OWS__HIDDEN int ows__audit_open(ows__audit *a, const ows_session_options *opts, ows_error *err);
/* Adds "ts_ms", "session" and "event" to `fields` (stolen, may be NULL) and writes one line. */
struct json_t;
OWS__HIDDEN void ows__audit_emit(ows__audit *a, const char *event, struct json_t *fields);
/* A name or path for an event, escaped (ows_text_escape): never NULL for a string that is
 * not UTF-8, which would drop it and the rest of its event.  New reference, or NULL. */
OWS__HIDDEN struct json_t *ows__json_text(const char *s);
OWS__HIDDEN void ows__audit_close(ows__audit *a);

/* --------------------------------------------------------------- session */

/* One check of the proof a session runs from inside before it starts. */
typedef struct ows__check {
	char name[160];
	char detail[160];
	int passed;          /* 1, 0, or OWS__CHECK_PARTIAL */
} ows__check;

/* Failed, for a promise the session runs partial on purpose: recorded, not demanded. */
#define OWS__CHECK_PARTIAL 2

/*
 * A promise this machine cannot keep, which a session runs without: because
 * the person chose to (open_without_scopes), or because the kernel gives no
 * user namespace and Landlock and seccomp keep the rest (view.c).  On the
 * session's events and in its proof.  Static strings: the init side carries
 * them too.
 */
typedef struct ows__partial {
	const char *promise; /* a row of `owsbx report`: "unix_sockets.outside" */
	const char *why;     /* what is not kept, and what would keep it */
} ows__partial;

#define OWS__MAX_PARTIAL 12
/* The prefix of the promises that are default limits ("limits.memory"): listed, and
 * the enforcement level (of the wall) stays as it is. */
#define OWS__PROMISE_LIMITS "limits."

/* {"passed": bool, "provider": ..., "checks": [...]} ; caller frees. */
OWS__HIDDEN char *ows__proof_json(const char *provider, const char *network,
				  const ows__check *checks, size_t n, bool *all_passed);

struct ows_proc {
	ows_session *session;  /* NULL once the session closed (lib/handles.c's lock) */
	struct ows_proc *next; /* the session's list of live handles (the same lock) */
	uint32_t id;           /* request id, unique within the session */
	int pid;               /* as the host sees it, or -1 (direct: set under that lock) */
	int exit_fd;           /* readable once the command has exited (ows_proc_fd), or -1:
				  the status channel from init, or the direct provider's pidfd */
	bool exited;           /* with exit_code: set by ows__proc_set_exit() */
	int exit_code;
	int exit_signal;       /* the signal that ended it, or 0 (with exit_code) */
	bool freed;            /* ows_proc_free() came while the session closed */
	int64_t started_ms;    /* for the sites blocked while it ran */
	int proxy_port;        /* allowlist: its own listener's port inside (47801-47899), or 0:
				  it shares the session's, and its blocked sites are by time */
	int proxy_port_err;    /* spawn: why init could not listen on proxy_port (EADDRINUSE:
				  something inside listens there), 0 */
	unsigned offline_calls; /* `none`: its internet sockets refused, told with its exit */
};

/*
 * A machine's setup, as the public ows_machine_* calls and ows_report_json (lib/machine.c)
 * reach it: what setup would change (plan), makes (setup) and undoes (remove), how it
 * stands (status: the number of failing rows), what crashed hosts left (cleanup: how many
 * grants it revoked) and what the machine can enforce (report).  `c` is never NULL:
 * lib/machine.c hands a NULL config over as the machine's.  A provider's `machine` names
 * the setup it needs; NULL is the platform's own, ows__machine_own (its machine.c), which
 * has every entry.  openshell's (lib/openshell/machine.c) has plan, setup and status.
 */
typedef struct ows__machine_ops {
	int (*plan)(const ows_config *c, const ows_setup_options *o, char **plan, ows_error *err);
	int (*setup)(const ows_config *c, const ows_setup_options *o, ows_error *err);
	int (*status)(const ows_config *c, char **status, ows_error *err);
	int (*remove)(const ows_config *c, const ows_setup_options *o, ows_error *err);
	int (*cleanup)(const ows_config *c, ows_error *err);
	int (*report)(const ows_config *c, char **out, ows_error *err);
} ows__machine_ops;

OWS__HIDDEN extern const ows__machine_ops ows__machine_own;
OWS__HIDDEN extern const ows__machine_ops ows__openshell_machine;
/* The own setup's entries that live outside the platform's machine.c: the report of what
 * the machine can enforce, and the cleanup of what crashed hosts left (its grants). */
OWS__HIDDEN int ows__report_json(const ows_config *c, char **out, ows_error *err);
OWS__HIDDEN int ows__machine_cleanup(const ows_config *c, ows_error *err);

typedef struct ows__provider {
	const char *name;
	/* Builds the wall and proves it; fills s->enforcement, s->private_dir,
	 * s->env, s->proof_json.  On failure leaves nothing behind but may set
	 * s->proof_json for the caller to report. */
	int (*open)(ows_session *s, const ows_policy *policy, const ows_config *config,
		    ows_error *err);
	int (*spawn)(ows_session *s, ows_proc *proc, const char *const argv[],
		     char *const envp[], const char *cwd, const int stdio[3], ows_error *err);
	/*
	 * Returns 1 once it has set the exit (ows__proc_set_exit), 0 on timeout.
	 * Calls on one session come from several threads at once: no lock is
	 * held around these, and wait must not block another thread's spawn.
	 */
	int (*wait)(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err);
	int (*kill)(ows_session *s, ows_proc *proc, int signo, ows_error *err);
	/*
	 * Ends every process of the session, freeing nothing, so that calls in
	 * flight on other threads (a wait, a spawn) return; close comes once
	 * they have.  NULL: close alone ends them.
	 */
	void (*stop)(ows_session *s);
	/* Ends every process, sets the exit of every proc, removes what open made;
	 * frees s->impl.  No other call on the session is in flight. */
	int (*close)(ows_session *s, ows_error *err);
	/* A site for the running session where the provider, not the host's proxy, enforces
	 * the list (openshell: OpenShell's policy update).  NULL: the proxy's list. */
	int (*allow_site)(ows_session *s, const char *pattern, ows_error *err);
	/* ows_session_plan: adds what the provider's wall is built from to `doc` (a JSON
	 * object), changing nothing.  NULL: the session's common fields alone. */
	int (*describe)(const ows_policy *policy, const ows_config *config, ows_net net,
			struct json_t *doc, ows_error *err);
	/* Its machine's setup (above); NULL: the platform's own. */
	const ows__machine_ops *machine;
} ows__provider;

/*
 * What every provider's session has in common, once its private folder
 * `priv` exists (laid out as priv/home, priv/tmp, priv/cache, joined with
 * `sep`): the environment (s->env, for `user` and `provider`) and the
 * default working folder (the first read-write session folder, else the
 * private home).  The paths are in `paths` on return (caller frees with
 * ows__strv_free): home, tmp, cache, for the provider's own variables.
 */
OWS__HIDDEN int ows__session_layout(ows_session *s, const ows_policy *policy, const char *priv,
				    char sep, const char *user, const char *provider,
				    ows__strv *paths, ows_error *err);

/*
 * allowlist: joins the host's one proxy (s->proxy, a client of it, closed at
 * close) with the policy's sites, the machine's and `more_hosts` (the shared
 * logins' hosts; may be NULL), and points the proxy variables of s->env at
 * *port.  Call after s->env is built.
 * `listener_handed_in`: the provider's sandbox has a network of its own and
 * hands in the proxy's listener (ows__pxc_adopt), made there on *port, and
 * one more per running call (ows_proc.proxy_port); the proxy listens nowhere
 * on the host.  Otherwise the session listens on the host's loopback, on *port.
 */
OWS__HIDDEN int ows__session_start_proxy(ows_session *s, const ows_policy *policy,
					 const ows_config *config, const ows__strv *more_hosts,
					 const char *tunnel_cmd, bool listener_handed_in,
					 int *port, ows_error *err);

/*
 * Undoes what a provider's failed open left on the session through the calls
 * above (its environment, its proxy) and its proof, so that the provider may
 * open it again from the start (landlock, after a guess refused).
 */
OWS__HIDDEN void ows__session_forget_open(ows_session *s);

/* The platform's providers; NULL for an unknown or unavailable name. */
OWS__HIDDEN const ows__provider *ows__provider_find(const char *name);

struct ows_session {
	char id[40];
	const ows__provider *ops;
	void *impl;
	ows_net net;
	const char *enforcement; /* static string: "full", "partial" (see partial) or "none" */
	ows__partial partial[OWS__MAX_PARTIAL]; /* what is not kept, set by the provider's open */
	int npartial;
	char *proof_json;
	char *private_dir;
	char *default_cwd;       /* first read-write folder, else the private home */
	ows__strv folders;       /* the session folders' paths, for ows_session_cwd_for() */
	ows__strv env;           /* the base environment of every command */
	char *agent_text;        /* what shared logins let the agent do; NULL: nothing */
	struct ows__pxc *proxy;  /* allowlist: the session's part of the host's proxy */
	bool call_ports;         /* each call gets a proxy listener of its own inside */
	ows__audit audit;
	ows_proc *procs;         /* lib/handles.c's lock */
	uint32_t next_proc_id;   /* the same lock */
	int refs;                /* calls in flight (lib/handles.c) */
	bool closing;            /* ows_session_close() has begun */
	bool shut;               /* ows_session_shutdown(): closing, not yet freed */
	struct ows__mutex *lock; /* what calls in flight share: the guard's sweep, moved_aside */
	bool has_wall_limit;
	int64_t deadline_ms;     /* wall_seconds limit, enforced by the host */
	ows__strv moved_aside;   /* what the guard moved aside since the last event */
	ows__strv modes_restored; /* the modes it put back since the last event */
};

/*
 * Live handles (lib/handles.c).  Every public call on a session is
 * ows__session_enter() ... ows__session_leave(): OWS_EINVAL for NULL,
 * OWS_ESTATE for a session closed or closing; while entered, the session
 * and its impl stay.  A call on a proc is ows__proc_enter(): OWS_ESTATE for a
 * freed proc; *s is its session, entered (leave it), or NULL when the
 * session is closed or closing (then only the proc's own fields are there).
 */
OWS__HIDDEN int ows__session_register(ows_session *s, ows_error *err);
OWS__HIDDEN bool ows__session_is_live(const ows_session *s);
OWS__HIDDEN int ows__session_enter(ows_session *s, ows_error *err);
OWS__HIDDEN void ows__session_leave(ows_session *s);
/* Close, in order: no new call (OWS_ESTATE when closed already), calls in
 * flight gone (after the provider's stop), procs detached (and those the
 * host freed meanwhile released). */
OWS__HIDDEN int ows__session_begin_close(ows_session *s, ows_error *err);
/* Marks the session closing for ows_session_shutdown(); 1 the first time, 0 after. */
OWS__HIDDEN int ows__session_begin_shutdown(ows_session *s, ows_error *err);
OWS__HIDDEN void ows__session_drain(ows_session *s);
OWS__HIDDEN void ows__session_detach_procs(ows_session *s);
/* The session's lock, for what calls in flight share (NULL-safe before open ends). */
OWS__HIDDEN void ows__session_lock(ows_session *s);
OWS__HIDDEN void ows__session_unlock(ows_session *s);
/* Adds a new proc to the live set and to its session's list, with its id. */
OWS__HIDDEN int ows__proc_register(ows_session *s, ows_proc *p, ows_error *err);
OWS__HIDDEN int ows__proc_enter(const ows_proc *p, ows_session **s, ows_error *err);
/* The first exit set wins; readable from any thread. */
OWS__HIDDEN void ows__proc_set_exit(ows_proc *p, int code);
/* The same, for a command a signal ended: exit code 128+signo. */
OWS__HIDDEN void ows__proc_set_killed(ows_proc *p, int signo);
OWS__HIDDEN bool ows__proc_get_exit(const ows_proc *p, int *code);
/* Out of the live set; false when the caller must not free it (see handles.c). */
OWS__HIDDEN bool ows__proc_unregister(ows_proc *p);
/* Closes what the proc holds and frees it. */
OWS__HIDDEN void ows__proc_release(ows_proc *p);

/* ------------------------------------------------------------------- run */

/*
 * One captured stream of ows_session_run(): the first `limit` bytes kept in
 * buf (always NUL-terminated once anything was put), every byte streamed to
 * fn.  Out of memory sets `failed`: the run then ends the command.
 */
typedef struct ows__sink {
	int stream;        /* 1 stdout, 2 stderr */
	char *buf;
	size_t len, cap, limit;
	bool truncated;
	bool failed;
	ows_output_fn fn;
	void *ctx;
} ows__sink;

OWS__HIDDEN void ows__sink_put(ows__sink *k, const char *data, size_t n);

/* What the platform's half of ows_session_run() is given and fills. */
typedef struct ows__run_io {
	const ows_run_options *opts;
	ows__sink sink[2];    /* stdout, stderr */
	int exit_code;
	bool timed_out;
	int64_t wall_ms;
	ows_proc *proc;       /* set once spawned; exited on success; the caller frees it */
} ows__run_io;

/*
 * Spawns argv in the session with its stdio on pipes, writes the input,
 * captures both streams into io->sink, applies the timeout (killing the
 * command's process group) and returns once the command has exited and its
 * pipes are drained: 0, or a negative code with the command ended.
 * lib/posix/run_io.c; OWS_ENOSYS where the platform has none.
 */
OWS__HIDDEN int ows__run_exchange(ows_session *s, const char *const argv[], ows__run_io *io,
				  ows_error *err);

/* ------------------------------------------------------- grant journal */
/*
 * The grant journal's line format (lib/journal.c, portable); the files,
 * their locks and the ACL walk are the platform's (lib/linux/setup/acl.c).
 * One journal per session, append-only text lines, fields separated by one
 * space, paths percent-encoded (bytes <= 0x20, '%' and 0x7f):
 *
 *   owsj1 OWNER_UID                         first line
 *   G ACCOUNT ACCT_UID PERSON_UID ro|rw PATH HOME|-   written before the grant
 *   R ACCT_UID PATH                         written once the revoke is done
 *   P a|d DEV INO MASK|- PERSON_ADDED ACCT_UID
 *        the node had an ACL of its own before the first grant touched it:
 *        its old mask (or none) and whether the person's default entry was
 *        added by us (1) or was there already (0); revoke restores from it.
 *
 * A journal's active grants are its G lines without a later R for the
 * same account uid and path; the last G for a path gives the access.
 */
typedef struct ows__jgrant {
	char account[32];
	uint32_t acct_uid;
	uint32_t person_uid;
	ows_access access;
	char *path;
	char *home; /* NULL: no traverse entries */
} ows__jgrant;

typedef struct ows__jpre {
	char type;      /* 'a' access, 'd' default */
	uint64_t dev;
	uint64_t ino;
	int mask;       /* -1: the node had no mask */
	int person_added;
	uint32_t acct_uid;
	size_t seq;     /* position in the journal (parsing only) */
} ows__jpre;

typedef struct ows__jstate {
	bool has_header;
	uint32_t owner;
	ows__jgrant *grants; /* active grants only */
	size_t ngrants;
	ows__jpre *pres;     /* sorted by (type, dev, ino) */
	size_t npres;
} ows__jstate;

/* Parses a journal's text; a torn last line (a host killed mid-write) is ignored. */
OWS__HIDDEN int ows__jstate_parse(const char *text, size_t len, ows__jstate *st,
				  ows_error *err);
OWS__HIDDEN void ows__jstate_free(ows__jstate *st);
/* The P record for a node, or NULL. */
OWS__HIDDEN const ows__jpre *ows__jstate_find_pre(const ows__jstate *st, char type,
						  uint64_t dev, uint64_t ino, uint32_t acct_uid);
/* One line each, '\n' included; caller frees.  NULL only when out of memory. */
OWS__HIDDEN char *ows__jline_grant(const char *account, uint32_t acct_uid, uint32_t person_uid,
				   ows_access access, const char *path, const char *home);
OWS__HIDDEN char *ows__jline_revoke(uint32_t acct_uid, const char *path);
OWS__HIDDEN char *ows__jline_pre(const ows__jpre *p);

/* ------------------------------------- files, SHA-256, INI edits (lib/file.c, sha256.c,
 * ini_edit.c): what machine setup and the setup record use on every platform */

/* SHA-256 of a buffer (lib/sha256.c), as 64 lower-case hex digits and a NUL. */
OWS__HIDDEN void ows__sha256_hex(const void *data, size_t len, char out[65]);
/* SHA-256 of a file's content, read without following a final symlink. */
OWS__HIDDEN int ows__sha256_file(const char *path, char out[65], ows_error *err);

/*
 * Reads a whole file (at most 1 MiB) into *out (caller frees), NUL-terminated;
 * *len gets its length when len is not NULL.  OWS_ENOTFOUND when absent.
 */
OWS__HIDDEN int ows__read_file(const char *path, char **out, size_t *len, ows_error *err);
/*
 * Replaces `path` atomically (temporary file, fsync, rename) with `data`,
 * mode `mode`, owned by whoever runs this.
 */
OWS__HIDDEN int ows__write_file(const char *path, const char *data, size_t len,
				unsigned mode, ows_error *err);

/*
 * Sets `key = value` in `[section]` of INI text `in`, keeping every other
 * line as it was; value NULL removes the key.  Appends the section when it
 * is missing.  *out is fresh (caller frees).
 */
OWS__HIDDEN int ows__ini_set(const char *in, const char *section, const char *key,
			     const char *value, char **out, ows_error *err);
/* The value of `key` in `[section]` of INI text, into buf; false when absent. */
OWS__HIDDEN bool ows__ini_get(const char *in, const char *section, const char *key,
			      char *buf, size_t len);

#endif /* OWS_INTERNAL_H */
