/*
 * owsandbox: run an AI agent's commands behind an operating-system wall.
 *
 * One header for the whole library.  Conventions, as in jansson and minijail:
 *
 *  - Calls that can fail return 0 (or a count) on success and a negative
 *    OWS_E* code on failure.  Each takes an optional, caller-owned
 *    `ows_error *`; pass NULL when you only want the code.  The first error
 *    recorded in a struct wins: clear it with ows_error_clear() before reuse.
 *  - Handles are opaque.  `_new`/`_open`/`_load` return a handle the caller
 *    owns and releases with the matching `_free`/`_close`.
 *  - A `char *` returned through an out-parameter is owned by the caller and
 *    released with ows_free().  A `const char *` return is borrowed from the
 *    handle and lives as long as it does.
 *  - Setters only record; side effects happen in ows_session_open(),
 *    ows_session_spawn() and the machine calls.
 *  - The library never prints, never exits and never changes process-wide
 *    state (rlimits, signal dispositions, the umask) behind the host's back.
 *  - A session is safe to use from several threads at once: spawns, runs and
 *    waits from different threads proceed in parallel (no lock is held across
 *    a wait), and ows_session_close() may come from any thread while others
 *    wait (their waits return).  A proc is used by one thread at a time, or
 *    locked around.  Policies and configs are plain values: build one per
 *    thread, or share one that no thread changes.
 *  - Misuse the type system lets through (NULL, a closed session, a freed
 *    proc, a proc whose session closed) gets OWS_EINVAL or OWS_ESTATE, never
 *    a crash: live handles are kept in a process-wide registry that every
 *    call checks first.  (A stale pointer to an address the library has
 *    since handed out again names that new handle: a host bug it cannot see.)
 *  - JSON in and out at the edges (policy, reports, status) so that a host
 *    in another language can use the library through its C ABI alone.
 */
#ifndef OWSANDBOX_H
#define OWSANDBOX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define OWS_API
#else
#define OWS_API __attribute__((visibility("default")))
#endif

/*
 * The version, in one place: the Makefile reads these three lines for the
 * shared library's file name and soname and the pkg-config file, and
 * OWS_VERSION is spelled from them.  ows_version() is the library's own.
 */
#define OWS_VERSION_MAJOR 0
#define OWS_VERSION_MINOR 2
#define OWS_VERSION_PATCH 0
#define OWS__STR(x) #x
#define OWS__XSTR(x) OWS__STR(x)
#define OWS_VERSION                                                                       \
	OWS__XSTR(OWS_VERSION_MAJOR) "." OWS__XSTR(OWS_VERSION_MINOR) "." OWS__XSTR(OWS_VERSION_PATCH)

/* ------------------------------------------------------------------ errors */

enum {
	OWS_OK = 0,
	OWS_EINVAL = -1,       /* bad argument, policy or usage */
	OWS_ENOMEM = -2,       /* out of memory */
	OWS_ESYS = -3,         /* a system call failed; sys_errno says which */
	OWS_EUNSUPPORTED = -4, /* this machine cannot enforce what was asked */
	OWS_EVERIFY = -5,      /* the wall failed its proof; the session is refused */
	OWS_ESETUP = -6,       /* machine setup is missing or broken */
	OWS_EPERM = -7,        /* the caller lacks the privilege this needs */
	OWS_ESPAWN = -8,       /* the command could not be started */
	OWS_ESTATE = -9,       /* the handle is in the wrong state for this call */
	OWS_ENOTFOUND = -10,   /* a named thing does not exist */
	OWS_ETIMEDOUT = -11,   /* a deadline passed */
	OWS_ECONFIG = -12,     /* the machine's config file is unreadable or wrong */
	OWS_ENOSYS = -13,      /* not available in this build or on this platform */
};

/*
 * What failed, where, and the one thing to do about it.  Caller-owned;
 * strings are always NUL-terminated (possibly empty).
 */
typedef struct ows_error {
	int code;          /* OWS_E*, 0 when nothing failed */
	int sys_errno;     /* errno of the failing system call, or 0 */
	char what[256];    /* "cannot grant read-write access" */
	char where[512];   /* a path, a syscall, a policy key */
	char hint[256];    /* "create the folder or drop --rw" */
} ows_error;

OWS_API void ows_error_clear(ows_error *err);
/* Static strings: "invalid argument"; "OWS_EINVAL".  Never NULL. */
OWS_API const char *ows_strerror(int code);
OWS_API const char *ows_err_name(int code);
/*
 * Copies `src` (NULL: "") into `dst`, at most `size` bytes with the NUL, with
 * every byte a terminal would act on written as \xHH: the C0 controls (newline
 * and ESC too), DEL, the C1 controls (U+0080..U+009F in UTF-8) and any byte
 * that is not part of valid UTF-8.  Cut at a whole character or escape.
 * Idempotent.  For text from outside (paths, names, hosts) on its way to a
 * terminal or a log; every string in an ows_error has been through it.
 * Returns `dst`.
 */
OWS_API char *ows_text_escape(char *dst, size_t size, const char *src);

/* Releases any string or buffer the library returned as `char *`. NULL is fine. */
OWS_API void ows_free(void *p);

OWS_API const char *ows_version(void);

/* ------------------------------------------------------------------ config */

/*
 * The machine's settings: an INI file, /etc/owsandbox/config.ini unless a
 * path is given.  Per machine on purpose: a project cannot change it.  A
 * missing default file means built-in defaults; a missing explicit path, a
 * syntax error or an unknown key is OWS_ECONFIG naming the line.
 * Every call below that takes a config reads a NULL one as the machine's:
 * ows_config_load(NULL), loaded for the call (the CLI reads the same file).
 */
typedef struct ows_config ows_config;

#define OWS_CONFIG_DEFAULT_PATH "/etc/owsandbox/config.ini"

OWS_API int ows_config_load(const char *path, ows_config **out, ows_error *err);
OWS_API void ows_config_free(ows_config *config);
/* Borrowed: the file actually read, or "" when built-in defaults are used. */
OWS_API const char *ows_config_path(const ows_config *config);

/* ------------------------------------------------------------------ policy */

typedef enum ows_access {
	OWS_ACCESS_RO = 1, /* read and execute */
	OWS_ACCESS_RW = 2, /* read, write, create, delete, execute */
} ows_access;

typedef enum ows_net {
	OWS_NET_DEFAULT = 0,   /* whatever the machine's config says ("none" if silent) */
	OWS_NET_NONE = 1,      /* nothing leaves the sandbox */
	OWS_NET_OPEN = 2,      /* any host; files are still the wall */
	OWS_NET_ALLOWLIST = 3, /* only through the host's allow-list proxy */
} ows_net;

/* "none", "open" or "allowlist" to its mode: 0, or OWS_EINVAL for anything else. */
OWS_API int ows_net_from_name(const char *name, ows_net *out);

typedef enum ows_limit {
	OWS_LIMIT_MEMORY_BYTES = 1,
	OWS_LIMIT_PROCESSES = 2,
	OWS_LIMIT_CPU_PERCENT = 3, /* of one core; 200 = two cores */
	OWS_LIMIT_WALL_SECONDS = 4,
} ows_limit;

/*
 * A session policy: provider, folders, network, hosts, environment, limits.
 * Every setter validates what it is given (absolute, existing folders that
 * are neither "/" nor the home or a parent of it, known names) and copies
 * it; the policy owns its strings.
 */
typedef struct ows_policy ows_policy;

OWS_API int ows_policy_new(ows_policy **out, ows_error *err);
/*
 * Parses a policy document:
 *   {"provider": "landlock", "network": "none",
 *    "folders": [{"path": "/abs", "access": "rw"}],
 *    "hosts": ["github.com:443"], "env": {"NAME": "value"},
 *    "limits": {"memory_mb": 512, "processes": 256, "cpu_percent": 100,
 *               "wall_seconds": 600},
 *    "run_as": "nobody"}
 * Unknown keys and wrong types are OWS_EINVAL naming the key.  `len` may be
 * (size_t)-1 for a NUL-terminated string.
 */
OWS_API int ows_policy_from_json(const char *json, size_t len, ows_policy **out,
				 ows_error *err);
OWS_API int ows_policy_load_file(const char *path, ows_policy **out, ows_error *err);
/* Caller frees the result with ows_free(); NULL only when out of memory. */
OWS_API char *ows_policy_to_json(const ows_policy *policy);
OWS_API void ows_policy_free(ows_policy *policy);

/* "landlock", "account", "direct"; NULL resets to the machine's default. */
OWS_API int ows_policy_set_provider(ows_policy *policy, const char *name, ows_error *err);
OWS_API int ows_policy_add_folder(ows_policy *policy, const char *path, ows_access access,
				  ows_error *err);
OWS_API int ows_policy_set_network(ows_policy *policy, ows_net net, ows_error *err);
/*
 * A site for `allowlist`: "host:port", "host" (port 443), "*.example.com:443"
 * (subdomains, not the apex), "@package-registries" (a named group), or
 * "git.corp:443+private" (may resolve to a private address).
 *
 * A leading '!' makes it a deny entry, and a deny wins: "!gist.github.com"
 * refuses that host even where an allow entry, a group or a shared login's
 * hosts cover it too, whatever the order they were added.  Hosts as above
 * ("!*.example.com" its subdomains, not the apex; IP literals), but a deny
 * entry without a port, or with port "*", covers every port
 * ("!evil.example" is "!evil.example:*").  It matches the name asked for, not
 * the address it resolves to.  "+private" or "@group" after '!' is OWS_EINVAL.
 * The same '!' works wherever a site is taken (ows_session_allow_site,
 * ows_proxy_allow, allow-sites files, the machine's [sandbox] hosts, and its
 * deny = key, which adds the '!').  The openshell provider refuses a deny
 * entry (OWS_EINVAL): OpenShell's policy has no deny rules.
 */
OWS_API int ows_policy_add_host(ows_policy *policy, const char *pattern, ows_error *err);
/* Every site of a file: one per line, '#' comments.  Nothing added on a bad line. */
OWS_API int ows_policy_add_hosts_file(ows_policy *policy, const char *path, ows_error *err);
/*
 * An extra variable for every command.  Names that say they hold a secret
 * are refused with OWS_EINVAL: secrets are absent, not passed.
 */
OWS_API int ows_policy_set_env(ows_policy *policy, const char *name, const char *value,
			       ows_error *err);
OWS_API int ows_policy_set_limit(ows_policy *policy, ows_limit which, uint64_t value,
				 ows_error *err);
/*
 * When the host runs as root, the account commands run as (a name or a
 * numeric uid).  Ignored otherwise.  Default: the account behind sudo
 * (SUDO_UID) if any, else the config's [landlock] root_runs_as ("nobody"
 * unless set).  Session folders must be usable by that account: a refusal
 * for one it cannot reach names the account and where it was chosen.
 */
OWS_API int ows_policy_set_run_as(ows_policy *policy, const char *user, ows_error *err);
/*
 * Narrows what the session gets of what the machine shares: a catalog name
 * ("ssh", "gh", ...) or a toolchain (".cargo").  Only entries the machine's
 * config switched on can be named (a project cannot add one); with none
 * named, a session gets everything the machine shares.
 */
OWS_API int ows_policy_add_credential(ows_policy *policy, const char *name, ows_error *err);
OWS_API int ows_policy_add_toolchain(ows_policy *policy, const char *path, ows_error *err);

/*
 * The credential catalog on this machine, as JSON: each entry with its
 * label, path under the home, kind, hosts, whether it is found here,
 * whether the config shares it and whether as a placeholder the proxy
 * replaces ("injected"; "inject_header" the header it can go in, or
 * "cannot_inject" why not); and the toolchain folders on offer.
 * Caller frees *out.
 */
OWS_API int ows_catalog_json(const ows_config *config, char **out, ows_error *err);

/* ----------------------------------------------------------------- session */

/*
 * Every session event (open, proof, spawn with its enforcement level, exit,
 * close) is one JSON object.  The callback gets it without a newline; the
 * line is borrowed for the duration of the call.  It is called on the thread
 * whose call made the event, so on several threads at once when several use
 * the session; it may call the library, but not close its own session.
 */
typedef void (*ows_event_fn)(void *ctx, const char *json);

typedef struct ows_session_options {
	size_t size;             /* sizeof(ows_session_options) */
	const char *events_path; /* JSON lines appended here; NULL for none */
	ows_event_fn on_event;   /* also delivered here; NULL for none */
	void *event_ctx;
} ows_session_options;

OWS_API void ows_session_options_init(ows_session_options *opts);

typedef struct ows_session ows_session;

/*
 * Builds the wall the policy describes and proves it from inside before
 * returning.  On any failure nothing is left behind: no private folder, no
 * grant, no process.  OWS_EUNSUPPORTED when the kernel cannot enforce the
 * policy, OWS_EVERIFY when the proof failed (the report says which check).
 * `config` may be NULL for the machine's config (ows_config_load(NULL)), as the
 * CLI reads it; `opts` may be NULL.
 * Neither the policy nor the config needs to outlive the call.
 */
OWS_API int ows_session_open(const ows_policy *policy, const ows_config *config,
			     const ows_session_options *opts, ows_session **out,
			     ows_error *err);
/*
 * What a session of `policy` would be built from, changing nothing on the
 * machine: no folder, grant, account, cgroup, firewall table or process is
 * left (a throwaway child may probe the kernel's namespaces).  *plan_json
 * (caller frees with ows_free) is {"provider", "provider_from" (why that
 * one), "network": {"mode", "namespace", "proxy", "allow", "deny"},
 * "folders": [{"path", "access"}]}, and where the provider plans a view of
 * its own (landlock, account): "runs_as" ({"account", "from"}: who the
 * commands run as and what chose it), "masks" (paths covered empty: FIFOs and
 * sockets of read-only folders, group-only files), "guard" ([{"path",
 * "how": "read-only" or "pinned"}]), "shared" (the logins' files) and
 * "toolchains", "limits" ({"processes", "memory_mb", "tmpfs_mb", each with
 * "<name>_from": "policy" or "default"}) and "partial" ([{"promise", "why"}]).
 * An error (OWS_EUNSUPPORTED, OWS_EINVAL...) is the one open would give.
 * What `owsbx run --dry-run` and `--verbose` print.
 */
OWS_API int ows_session_plan(const ows_policy *policy, const ows_config *config,
			     char **plan_json, ows_error *err);
/*
 * Ends every process of the session (daemons included), removes the
 * private folder and revokes what the session granted, then frees the
 * handle, also when an error is reported.  NULL is fine (0); a session
 * closed already gets OWS_ESTATE.  From any thread: calls already running on
 * other threads end first (a wait returns with the command killed, 128+9),
 * later ones get OWS_ESTATE.  Procs outlive it: ows_proc_wait() then tells
 * each one's exit, and each still needs ows_proc_free().
 */
OWS_API int ows_session_close(ows_session *session, ows_error *err);
/*
 * The first half of a close, for bindings that must know no thread of theirs
 * still holds the handle before it is freed: ends every process of the
 * session and refuses every new call with OWS_ESTATE, without freeing
 * anything; calls in flight on other threads return (their commands killed).
 * ows_session_close() then frees it.  Again on a session shut down: 0.
 */
OWS_API int ows_session_shutdown(ows_session *session, ows_error *err);

/* Borrowed, valid until close; "" for NULL or a closed session. */
OWS_API const char *ows_session_id(const ows_session *session);
OWS_API const char *ows_session_provider(const ows_session *session);
/*
 * "full" behind a wall; "partial" when the wall keeps some promise only in
 * part (the machine gives no user namespace, say, or the config chose
 * open_without_scopes): the open and spawn events then list each such
 * promise and why under "partial"; "none" for `direct`.
 */
OWS_API const char *ows_session_enforcement(const ows_session *session);
/* The proof the session passed, as JSON. */
OWS_API const char *ows_session_proof_json(const ows_session *session);
/* The session's private folder (HOME, TMPDIR and caches live under it). */
OWS_API const char *ows_session_private_dir(const ows_session *session);
/*
 * Where a command starts when its options name no cwd: `here` (the host's
 * own working folder, may be NULL) when it lies inside one of the session's
 * folders, else the first read-write folder, else the private home.  Borrowed
 * from the session, or `here` itself.
 */
OWS_API const char *ows_session_cwd_for(const ows_session *session, const char *here);
/*
 * A short text for the agent: what the logins and tools the person shared
 * let it do ("you can push and pull over SSH ... as the person"), never
 * where they are kept.  "" when nothing is shared.  Borrowed.
 */
OWS_API const char *ows_session_agent_text(const ows_session *session);

/*
 * Allow or take back a site while the session runs (`allowlist` only).  A
 * deny entry ("!host", see ows_policy_add_host) is added the same way and
 * wins at once; ows_session_remove_site("!host") takes it back, and
 * removing "host" leaves a "!host" alone.
 *
 * Every allowlist session of a host process is served by one proxy in that
 * process (a loop thread and four resolver threads, started with the first
 * such session, ended with the last), each session with its own list and its
 * own blocked log.  In the host a session holds two descriptors, and a
 * running call one more; the proxy's connections up to six each.  The
 * library never raises RLIMIT_NOFILE: a connection that comes when the host
 * has no descriptor left gets a 503.  A host that wants more raises its own
 * soft limit before opening sessions (setrlimit(RLIMIT_NOFILE) up to the
 * hard limit; `ulimit -n` in a shell, LimitNOFILE= in a systemd unit).
 */
OWS_API int ows_session_allow_site(ows_session *session, const char *pattern, ows_error *err);
OWS_API int ows_session_remove_site(ows_session *session, const char *pattern, ows_error *err);
/*
 * Sites the proxy refused since `since_ms` (Unix epoch, milliseconds), as a
 * JSON array as ows_proxy_blocked_json gives: the session's, to all of its
 * calls, one entry a site.  Caller frees *out.
 */
OWS_API int ows_session_blocked_json(ows_session *session, int64_t since_ms, char **out,
				     ows_error *err);
/*
 * Whether the session's list lets `host`:`port` through, without connecting:
 * what the host's own web tools (search, fetch) ask before they reach out, so
 * that they obey the same list.  1 allowed, 0 refused, negative on error.
 * *why_json (may be NULL; caller frees) is {"allowed", "host" (normalised),
 * "port", "pattern" (the entry that covers it, or null; for "denied" the deny
 * entry, "!evil.example:*"), "reason" (refused: "not listed", "denied" (a deny
 * entry covers it, whatever allows it too), "private address" (then also
 * "address"), "does not resolve"; or "network none", "network open" outside
 * allowlist), "allow" (the entry that would let it through, or null; always
 * null for "denied": a deny entry is the person's to take back)}.  Names are resolved as the proxy
 * would (blocking: call it from a thread that may wait for DNS), so a listed
 * name that resolves to a private address is refused here too, and one that
 * does not resolve is refused as the proxy would fail it.  OWS_EINVAL for a
 * host that is not one or a port outside 1-65535.
 */
OWS_API int ows_session_check_site(ows_session *session, const char *host, int port,
				   char **why_json, ows_error *err);
/*
 * The session's sites and where each came from, for an Access view: a JSON
 * array of {"pattern", "source"}, source one of "machine" (the machine's
 * config), "policy", "credential" (a shared login's host), "session"
 * (ows_session_allow_site).  Patterns in canonical form, a deny entry with
 * its '!' ("!evil.example:*"), a group as listed
 * ("@package-registries"); an entry listed by two sources comes twice, and
 * ows_session_remove_site takes it from all.  "[]" outside allowlist.
 * Caller frees *out.
 */
OWS_API int ows_session_sites_json(ows_session *session, char **out, ows_error *err);

/*
 * The ask hook (allowlist): instead of refusing a site that is not listed,
 * the proxy holds the connection and asks the host, which may ask the
 * person.  The callback gets the site's host (normalised) and port and an
 * id; it answers at once by returning OWS_ASK_ALLOW or OWS_ASK_REFUSE, or
 * returns OWS_ASK_LATER and answers afterwards, from any thread, with
 * ows_ask_answer(id, ...).  When no answer comes within `timeout_ms` (0: 60 s)
 * the connection is refused with the usual 403, and a later answer gets
 * OWS_ENOTFOUND.  A refusal, a timeout included, shows in the blocked list
 * as any refusal does.  An "allow" lets that one request (or tunnel) through;
 * to stop asking for a site, allow it (ows_session_allow_site).
 *
 * Never asked: a site a deny entry covers (a deny wins), and an address on
 * this machine or a private network (refused as always, also after a yes).
 * The callback runs on a thread of the proxy (one, started at the first
 * ask), one ask at a time per host process, never on the loop that moves
 * other connections: it should return quickly (OWS_ASK_LATER while the
 * person thinks).  It may call the library but must not close its own
 * session.  fn = NULL refuses the pending asks and asks no more; once
 * ows_session_close returns, the callback is not called again.
 */
typedef int (*ows_ask_fn)(void *ctx, uint64_t ask_id, const char *host, int port);
#define OWS_ASK_REFUSE 0
#define OWS_ASK_ALLOW 1
#define OWS_ASK_LATER 2
OWS_API int ows_session_set_ask(ows_session *session, ows_ask_fn fn, void *ctx, int timeout_ms,
				ows_error *err);
/* Answers a pending ask: allow nonzero lets it through.  OWS_ENOTFOUND when
 * the ask is answered already, timed out, or its connection or session ended. */
OWS_API int ows_ask_answer(uint64_t ask_id, int allow, ows_error *err);

/* ------------------------------------------------------------------- spawn */

#define OWS_STDIO_NULL (-1) /* connect this stream to /dev/null */

typedef struct ows_spawn_options {
	size_t size;            /* sizeof(ows_spawn_options) */
	const char *cwd;        /* NULL: the first read-write folder, else the private home */
	const char *const *env; /* extra "NAME=VALUE" entries, NULL-terminated; secret names dropped */
	int stdio[3];           /* descriptors for stdin, stdout, stderr (borrowed, duplicated) */
} ows_spawn_options;

/* Sets stdio to the host's own 0, 1, 2 and everything else to defaults. */
OWS_API void ows_spawn_options_init(ows_spawn_options *opts);

typedef struct ows_proc ows_proc;

/*
 * Starts argv[0] (looked up in the session's PATH) inside the wall.
 * OWS_ESPAWN when the command could not start (not found, not executable);
 * the error says which.  `opts` may be NULL.  The caller owns *out and
 * releases it with ows_proc_free(); the process keeps running until it
 * exits or the session closes.
 */
OWS_API int ows_session_spawn(ows_session *session, const char *const argv[],
			      const ows_spawn_options *opts, ows_proc **out, ows_error *err);
/*
 * Waits for the command to exit.  timeout_ms < 0 waits for ever; 0 polls.
 * Returns 1 and sets *exit_code (a signal N gives 128+N) when it has exited,
 * 0 when the timeout passed first, or a negative code.  After the session
 * closed: 1 with the exit it had (128+9 when the close killed it); shut
 * down (ows_session_shutdown) and not yet closed, it still waits as before.
 */
OWS_API int ows_proc_wait(ows_proc *proc, int timeout_ms, int *exit_code, ows_error *err);
/*
 * The signal that ended the command, once ows_proc_wait() told its exit: N
 * where the exit code 128+N came from signal N (SIGKILL when the session's
 * close or a timeout killed it), 0 where it exited (an exit(137) too), has
 * not yet, or on Windows.
 */
OWS_API int ows_proc_signal(const ows_proc *proc);
/*
 * Signals the command.  SIGKILL ends the call: under `landlock` and
 * `account`, the command and every process it started, daemons included
 * (a double fork, nohup, one that called setsid()), and nothing another
 * call started, also in the same session; each call's processes are known
 * to a reaper of its own inside the sandbox, not to a process group.  Any
 * other signal goes to the command's process group (a shell's job: what it
 * started and did not move out with setsid).  Under `direct` every signal,
 * SIGKILL too, goes to the process group only; on Windows any signal ends
 * the command alone (what it started ends with the session).  Once the
 * command has exited this does nothing and returns 0: what it left running
 * ends with the session.
 */
OWS_API int ows_proc_kill(ows_proc *proc, int signo, ows_error *err);
/*
 * A descriptor that becomes readable when the command has exited, for an
 * event loop (asyncio's add_reader, epoll, poll): then ows_proc_wait(proc,
 * 0, ...) returns 1 at once.  Borrowed: valid until ows_proc_free(), also
 * after the session closed (it is readable then); do not close it or read
 * from it.  The command need not be the host's child: under `landlock` and
 * `account` it is one end of a channel from the sandbox's init, under
 * `direct` a pidfd.  -1 for NULL or a freed proc, and on Windows, which
 * has no such descriptor (wait in a thread there).
 */
OWS_API int ows_proc_fd(const ows_proc *proc);
/*
 * Under `none`: how many internet sockets (IPv4, IPv6: a connection, a name
 * lookup) the command and what it started asked for, each refused by the
 * wall; for a host to say the network is off when a command failed on it.
 * Known once ows_proc_wait() returned 1; 0 before, in the other modes, and
 * where the provider does not supervise the command's sockets (direct,
 * openshell, seatbelt, a sandbox in the host's namespaces, a launcher
 * installed before this call existed).  A command that opens no such socket
 * pays nothing for it.
 */
OWS_API unsigned ows_proc_offline_calls(const ows_proc *proc);
/*
 * The sites the proxy refused to this command (and what it started) so far,
 * as a JSON array as ows_proxy_blocked_json gives; "[]" outside `allowlist`.
 * The `exit` event's "blocked" is the same list.  Caller frees *out.
 *
 * How a refusal is told to its call: under the Linux providers each running
 * call gets a proxy listener of its own in the sandbox's network, on a port
 * of 47801-47899, and its proxy variables (HTTP_PROXY and the rest) point
 * there, so any client honouring them, and anything the command starts, is
 * that call's.  The listener closes at ows_proc_free(): a process the command
 * left running then no longer reaches the proxy through it.  Beyond 99 calls
 * at once in one session, or a command that ignores its variables and uses
 * the session's port (47800), attribution falls back to time: the session's
 * listener's refusals while the command ran.  A command that connects to
 * another call's port on purpose is told as that call: attribution, not the
 * wall, which is the same for every call.
 */
OWS_API int ows_proc_blocked_json(ows_proc *proc, char **out, ows_error *err);
/*
 * Frees the handle; the command runs on until it exits or the session
 * closes.  NULL and a proc freed already are ignored.  Not while another
 * thread is in a call on the same proc.
 */
OWS_API void ows_proc_free(ows_proc *proc);

/* --------------------------------------------------------------------- run */

/* Called from the thread inside ows_session_run() with output as it comes. */
typedef void (*ows_output_fn)(void *ctx, int stream /* 1 stdout, 2 stderr */, const char *data,
			      size_t len);

typedef struct ows_run_options {
	size_t size;            /* sizeof(ows_run_options) */
	const char *cwd;        /* as ows_spawn_options */
	const char *const *env; /* as ows_spawn_options */
	const void *input;      /* bytes written to the command's stdin, then closed; */
	size_t input_len;       /*   NULL: stdin is /dev/null */
	int timeout_ms;         /* <= 0: none; when it (or the session's wall_seconds)
				   passes, the call is killed as ows_proc_kill(SIGKILL)
				   does (under the Linux sandboxes the command and all
				   it started, setsid daemons too) and timed_out is set */
	size_t output_limit;    /* bytes kept of each stream (0: 1 MiB); the rest is
				   read and dropped, and *_truncated set */
	ows_output_fn on_output; /* also streamed here, every byte, past the limit
				    too; NULL for none */
	void *output_ctx;
} ows_run_options;

OWS_API void ows_run_options_init(ows_run_options *opts);

typedef struct ows_run_result {
	int exit_code;          /* as ows_proc_wait: 128+N for signal N */
	int timed_out;          /* 1 when the timeout killed it */
	char *out;              /* stdout, NUL-terminated (it may hold NULs: see out_len) */
	size_t out_len;
	int out_truncated;
	char *err;              /* stderr, likewise */
	size_t err_len;
	int err_truncated;
	int64_t wall_ms;        /* from spawn to exit */
	char *blocked_json;     /* sites refused to this call: JSON array, never NULL */
	const char *enforcement; /* the session's: "full", "partial", "none" (static) */
} ows_run_result;

/*
 * Runs argv in the session and waits for it: output captured (and streamed
 * when asked), the per-call timeout applied.  Thread-safe on one session.
 * The call ends at the command's exit and a short drain of its pipes (100
 * ms, 2 s after a kill), not when every holder of the pipes has closed them:
 * a background process it left runs on until the session closes (or the
 * timeout kills the call while the command still runs), and what it writes
 * later is not captured.  The host's signal dispositions
 * and mask are left as they were (stdin is written with SIGPIPE blocked in
 * the calling thread only).
 * A command that ran returns 0 whatever its exit code, and *out holds the
 * result (caller frees it with ows_run_result_free()); OWS_ESPAWN when it
 * could not start.  `opts` may be NULL.
 */
OWS_API int ows_session_run(ows_session *session, const char *const argv[],
			    const ows_run_options *opts, ows_run_result **out, ows_error *err);
OWS_API void ows_run_result_free(ows_run_result *result);
/*
 * The same for FFI hosts, JSON in and out.  Request:
 *   {"argv": [...], "cwd": "...", "env": {"NAME": "VALUE"}, "input": "text",
 *    "input_b64": "...", "timeout_ms": N, "output_limit": N}
 * Response (caller frees *response_json):
 *   {"exit_code": N, "timed_out": b, "stdout": "...", "stderr": "...",
 *    "stdout_truncated": b, "stderr_truncated": b, "wall_ms": N,
 *    "blocked": [...], "enforcement": "..."}
 * Output that is not UTF-8 comes as "stdout_b64"/"stderr_b64" instead.
 * "input" may hold NULs (\u0000); a NUL in argv, cwd or env, an unknown key
 * or a wrong type is OWS_EINVAL naming the key.
 * On failure *response_json is {"error": {"code", "name", "what", "where", "hint"}}
 * and the return is the negative code.
 */
OWS_API int ows_session_run_json(ows_session *session, const char *request_json,
				 char **response_json, ows_error *err);

/* ------------------------------------------------------- verify and report */

/*
 * Opens a throwaway session with the policy, runs the proof, closes it.
 * *report_json (caller frees) is set even when the proof fails, in which
 * case the return is OWS_EVERIFY.
 */
OWS_API int ows_verify(const ows_policy *policy, const ows_config *config,
		       char **report_json, ows_error *err);

/*
 * What this machine can enforce: one entry per capability with
 * "enforced", "partial" or "unavailable" and why.  Caller frees *out.
 */
OWS_API int ows_report_json(const ows_config *config, char **out, ows_error *err);

/*
 * Linux: an AppArmor profile that lets the program `exe` create user
 * namespaces and confines nothing else, for machines where AppArmor gives
 * programs namespaces without capabilities (Ubuntu 24.04's
 * kernel.apparmor_restrict_unprivileged_userns).  `exe` is absolute; when
 * it exists, links are resolved (AppArmor names the file exec'd).  A host
 * that links the library names itself (/proc/self/exe).  `name` NULL:
 * "owsbx", or "owsbx-" and the file's name; it is also the file to save
 * it as under /etc/apparmor.d.  Caller frees *out.  OWS_ENOSYS elsewhere.
 */
OWS_API int ows_apparmor_profile(const char *exe, const char *name, char **out, ows_error *err);

/* ----------------------------------------------------------------- machine */

/* Progress while setup or remove runs: one human-readable step at a time. */
typedef void (*ows_progress_fn)(void *ctx, const char *step);

typedef struct ows_setup_options {
	size_t size;          /* sizeof(ows_setup_options) */
	const char *for_user; /* the person added to the sandbox group; NULL: the caller */
	ows_progress_fn progress;
	void *progress_ctx;
	/*
	 * The built setuid launcher (owsbx-launch) that setup installs at the
	 * config's [account] launcher path, root:group, mode 4750.  NULL keeps
	 * the installed one; setup fails when there is none yet.  Borrowed.
	 */
	const char *launcher_source;
	/* "openshell": that provider's plan and setup (linger, NVIDIA's installer for the pinned
	 * release, the gateway's bind mounts, the base image; each command's output lines
	 * through `progress`); NULL: the machine's own. */
	const char *provider;
} ows_setup_options;

OWS_API void ows_setup_options_init(ows_setup_options *opts);

/* What setup would change, as JSON, changing nothing.  Caller frees *plan_json. */
OWS_API int ows_machine_plan(const ows_config *config, const ows_setup_options *opts,
			     char **plan_json, ows_error *err);
/* Applies the plan (root only), records it, proves the wall. */
OWS_API int ows_machine_setup(const ows_config *config, const ows_setup_options *opts,
			      ows_error *err);
/*
 * One row per item with "ok", what is wrong and the command that fixes it.
 * Returns the number of failing rows (0: all pass) or a negative code.
 */
OWS_API int ows_machine_status(const ows_config *config, char **status_json, ows_error *err);
/*
 * The same for one provider: NULL or the machine's own is ows_machine_status;
 * "openshell" gives its rows, each with "command" (run in a terminal), "hint"
 * (a note) and "docs" (a link); OWS_EUNSUPPORTED where it cannot run.
 */
OWS_API int ows_machine_status_of(const ows_config *config, const char *provider,
				  char **status_json, ows_error *err);
/* Undoes exactly what the setup record says. */
OWS_API int ows_machine_remove(const ows_config *config, const ows_setup_options *opts,
			       ows_error *err);
/* Revokes what crashed hosts left granted; returns how many grants it revoked. */
OWS_API int ows_machine_cleanup(const ows_config *config, ows_error *err);

/* --------------------------------------------------------------------- acl */

/*
 * Grants `account` access to `path` (never following a symbolic link), with
 * traverse-only entries on the folders between it and `home_root`.
 * Journaled before it is made, under the session id, so that a crashed
 * host's grants are revoked by ows_machine_cleanup().
 */
OWS_API int ows_acl_grant(const ows_config *config, const char *session_id,
			  const char *account, const char *path, ows_access access,
			  const char *home_root, ows_error *err);
/* Removes exactly the entries ows_acl_grant() added for this session. */
OWS_API int ows_acl_revoke(const ows_config *config, const char *session_id,
			   const char *account, const char *path, ows_error *err);

/* ------------------------------------------------------------------- proxy */

/*
 * The allow-list proxy, run inside the host process: one event-loop thread
 * (no thread per connection) and a few resolver threads, listening on
 * 127.0.0.1.  It filters `CONNECT host:port` and plain `http://` requests
 * (every request of a keep-alive connection) against a list of patterns:
 *
 *   github.com:443        exactly that host and port
 *   github.com            port 443
 *   *.example.com:443     any subdomain of example.com, not example.com itself
 *   10.0.0.5:8080         IP literals and `localhost` match only when listed exactly
 *   git.corp:443+private  the name may resolve to a loopback, private, CGNAT or
 *                         link-local address (an internal registry); without
 *                         +private such a name is refused (DNS rebinding)
 *   @code-hosting         a named group: @code-hosting, @package-registries,
 *                         @search-apis
 *
 * Host names are lower-cased and a trailing dot dropped.  The proxy resolves
 * names itself and connects to the address it checked.  A refusal is a 403
 * whose body names the host and how to allow it; a bad request gets 400, an
 * unreachable upstream 502, one that does not answer in time 504.
 * Established tunnels outlive a later ows_proxy_disallow(); new requests
 * are checked against the list as it is then.
 */
typedef struct ows_proxy ows_proxy;

typedef struct ows_proxy_options {
	size_t size;             /* sizeof(ows_proxy_options) */
	const char *const *hosts; /* initial allow list, NULL-terminated patterns (copied) */
	int port;                /* 0: the first free port in 47800-47899 */
	/* Fields below were added later; 0 or NULL means the default. */
	int max_conns;           /* client connections at once (4096); more get a 503,
				    as do those that come when the process has no
				    descriptor left (the proxy never raises the limit) */
	int idle_ms;             /* a tunnel with no traffic is closed (3600000); plain
	                            http connections wait at most 120000 between requests,
	                            30000 for a request head */
	int connect_timeout_ms;  /* resolving and connecting upstream, else 504 (15000) */
	int response_timeout_ms; /* plain http: first response byte, else 504 (120000) */
	/*
	 * For tests: a file in /etc/hosts format; a name it lists resolves to its
	 * addresses only, without DNS.  The checks apply to them as to any answer.
	 */
	const char *hosts_file;
} ows_proxy_options;

OWS_API void ows_proxy_options_init(ows_proxy_options *opts);
/*
 * Starts the proxy on 127.0.0.1 (`opts` may be NULL: an empty list, a port
 * in 47800-47899).  The caller owns *out and ends it with ows_proxy_stop().
 * OWS_EINVAL naming a bad pattern, OWS_ESYS when no port could be bound.
 */
OWS_API int ows_proxy_start(const ows_proxy_options *opts, ows_proxy **out, ows_error *err);
/* The port it listens on, or -1 for NULL. */
OWS_API int ows_proxy_port(const ows_proxy *proxy);
/*
 * Adds or removes a pattern or @group while the proxy runs; both are
 * thread-safe and take effect for the next request.  OWS_EINVAL naming a bad
 * pattern.  Removing what is not listed is not an error.  A "!pattern" is a
 * deny entry, and a deny wins (ows_policy_add_host says how it matches).
 */
OWS_API int ows_proxy_allow(ows_proxy *proxy, const char *pattern, ows_error *err);
OWS_API int ows_proxy_disallow(ows_proxy *proxy, const char *pattern, ows_error *err);
/*
 * The sites refused and last refused at or after `since_ms` (Unix epoch,
 * milliseconds; 0 for all), as a JSON array of {"host", "port", "count",
 * "first_ms", "last_ms", "reason", "allow"}: "reason" is "not listed" or
 * "private address" (listed, but the name resolved to one), "allow" the
 * pattern that lets the site through ("git.corp:443+private" for the second);
 * or "reason" "denied" with "denied_by", the deny entry that refused it
 * ("!evil.example:*"), and no "allow": nothing is suggested past a deny
 * entry.  The reason is the last refusal's; the count is over the proxy's life.  Thread-safe.  Caller frees *out with
 * ows_free().
 */
OWS_API int ows_proxy_blocked_json(ows_proxy *proxy, int64_t since_ms, char **out,
				   ows_error *err);
/*
 * Allows every entry of an allow-sites file: one pattern or @group per line,
 * '#' starts a comment.  Nothing is added when a line is bad (OWS_EINVAL
 * naming FILE:LINE); OWS_ESYS when the file cannot be read.
 */
OWS_API int ows_proxy_allow_file(ows_proxy *proxy, const char *path, ows_error *err);
/* Closes every connection, stops the threads, frees the proxy.  NULL is fine. */
OWS_API void ows_proxy_stop(ows_proxy *proxy);

/*
 * The client side of a tunnel, for ssh's ProxyCommand (`owsbx connect`):
 * connects to the proxy at `proxy_host`:`proxy_port`, asks CONNECT
 * host:port, checks for a 200, then relays in_fd to the tunnel and the
 * tunnel to out_fd until the far end closes.  Blocks.  OWS_EPERM with the
 * proxy's explanation when it refused, OWS_ESYS when it is unreachable.
 */
OWS_API int ows_proxy_tunnel(const char *proxy_host, int proxy_port, const char *host, int port,
			     int in_fd, int out_fd, ows_error *err);

#ifdef __cplusplus
}
#endif

#endif /* OWSANDBOX_H */
