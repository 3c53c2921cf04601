/*
 * Linux back end: declarations shared by the files in lib/linux/ and its wall/ and
 * setup/.  Nothing from lib/darwin/ or lib/win/; what macOS shares is lib/posix/posix.h.
 */
#ifndef OWS_LINUX_H
#define OWS_LINUX_H

#include <linux/filter.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"
#include "posix/posix.h"

/*
 * Landlock.  Debian 12's headers stop at ABI 2, so the structures and
 * flags of later ABIs are defined here under names of our own.
 */
#define OWS_LL_CREATE_RULESET_VERSION (1U << 0)
#define OWS_LL_RULE_PATH_BENEATH 1
#define OWS_LL_RULE_NET_PORT 2

#define OWS_LL_FS_EXECUTE (1ULL << 0)
#define OWS_LL_FS_WRITE_FILE (1ULL << 1)
#define OWS_LL_FS_READ_FILE (1ULL << 2)
#define OWS_LL_FS_READ_DIR (1ULL << 3)
#define OWS_LL_FS_REMOVE_DIR (1ULL << 4)
#define OWS_LL_FS_REMOVE_FILE (1ULL << 5)
#define OWS_LL_FS_MAKE_CHAR (1ULL << 6)
#define OWS_LL_FS_MAKE_DIR (1ULL << 7)
#define OWS_LL_FS_MAKE_REG (1ULL << 8)
#define OWS_LL_FS_MAKE_SOCK (1ULL << 9)
#define OWS_LL_FS_MAKE_FIFO (1ULL << 10)
#define OWS_LL_FS_MAKE_BLOCK (1ULL << 11)
#define OWS_LL_FS_MAKE_SYM (1ULL << 12)
#define OWS_LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define OWS_LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define OWS_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define OWS_LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define OWS_LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define OWS_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define OWS_LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

#define OWS_LL_FS_READ (OWS_LL_FS_EXECUTE | OWS_LL_FS_READ_FILE | OWS_LL_FS_READ_DIR)

struct ows_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct ows_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* The Landlock ABI this kernel offers: 0 when Landlock is off or absent. */
OWS__HIDDEN int ows__landlock_abi(void);
/*
 * When the ABI is 0: why this kernel gives no Landlock, and the one thing to do
 * (EOPNOTSUPP: built in but left out of lsm= at boot; ENOSYS: not built in;
 * anything else: a seccomp filter above refuses it).  Reads no more than
 * /sys/kernel/security/lsm; no allocation.
 */
OWS__HIDDEN void ows__landlock_missing(char *why, size_t why_len, char *fix, size_t fix_len);
/* The refusal of a session for that reason: OWS_EUNSUPPORTED, with the fix. */
OWS__HIDDEN int ows__landlock_unavailable(ows_error *err);
/* Every filesystem right the ABI knows. */
OWS__HIDDEN uint64_t ows__landlock_fs_all(int abi);
/* Size of struct ows_ll_ruleset_attr the ABI accepts. */
OWS__HIDDEN size_t ows__landlock_attr_size(int abi);

/* seccomp: the filter every sandboxed process runs under. */
#define OWS_SECCOMP_MAX_INSNS 1024
typedef struct ows__seccomp {
	struct sock_filter insns[OWS_SECCOMP_MAX_INSNS];
	unsigned short len;
} ows__seccomp;

/* ows__seccomp_build's flags. */
#define OWS_SECCOMP_HOST_NS 1u     /* init shares the host's namespaces (seccomp.c says what more is refused) */
#define OWS_SECCOMP_NO_TRUNCATE 2u /* Landlock cannot refuse truncate(2) (ABI < 3): seccomp does */
#define OWS_SECCOMP_NO_GROUP_WRITE 4u /* the command's group has other members: chmod g+w refused too */

/* Builds the filter for a network mode.  Fails only if the table outgrew the buffer. */
OWS__HIDDEN int ows__seccomp_build(ows__seccomp *f, ows_net net, unsigned flags, ows_error *err);
/*
 * The filter each command adds (the guarded pids: init, and the call's
 * reaper, init.c): no signal, SIGIO owner or hard limit aimed at one of
 * them or (signals) its process group, and with `no_pidfd_signal` no
 * pidfd_send_signal at all (a /proc/PID folder is a pidfd too).  Written
 * into insns (room for `max`), allocation-free, for init's side; returns its
 * length, or -1 when it does not fit.
 */
#define OWS_SECCOMP_GUARD_MAX 4
OWS__HIDDEN int ows__seccomp_guard_init(struct sock_filter *insns, size_t max, const pid_t *pids,
					int npids, bool no_pidfd_signal);

/* Private folders, removal, a file locked from birth: posix.h. */

/*
 * Masks for the sandbox's view (mask.c): paths under `dir` to
 * cover inside, appended to `out`; at most `max` of them, else OWS_EINVAL.
 * Walked by descriptor, never following a link.
 */
/* FIFOs and unix sockets: a read-only mount stops neither a write nor a connect. */
OWS__HIDDEN int ows__mask_channels(const char *dir, size_t max, ows__strv *out, ows_error *err);
/* The FIFOs and sockets of every read-only folder and of `ro_dirs`, but for those
 * inside a read-write folder nested in a read-only one. */
OWS__HIDDEN int ows__mask_read_only(const ows__folder *folders, size_t nfolders,
				    const char *const *ro_dirs, size_t nro_dirs, size_t max,
				    ows__strv *out, ows_error *err);
/*
 * Entries this process reads or searches only through the group class of
 * their mode: owned by one of its supplementary groups (not the primary),
 * or with an access ACL.  A folder found is not entered.  Nothing when the
 * process has no supplementary group.
 */
OWS__HIDDEN int ows__mask_group_only(const char *dir, size_t max, ows__strv *out,
				     ows_error *err);

/* Checks shared by the report: can this process create user namespaces? */
OWS__HIDDEN bool ows__userns_works(char *why, size_t why_len, int *failed_step);

/* userns.c: the step of making the sandbox's namespaces that failed. */
enum {
	OWS__USERNS_OK = 0,
	OWS__USERNS_CLONE,     /* clone() with CLONE_NEWUSER and the rest */
	OWS__USERNS_UID_MAP,   /* writing /proc/self/uid_map */
	OWS__USERNS_SETGROUPS, /* writing "deny" to /proc/self/setgroups */
	OWS__USERNS_GID_MAP,
	OWS__USERNS_MOUNT,     /* a tmpfs in the new mount namespace */
	OWS__USERNS_PROC,      /* a new proc in the new PID namespace */
	OWS__USERNS_LOOPBACK,  /* lo up in the new network namespace */
	OWS__USERNS_SILENT,    /* the probe's child ended before it said */
};
/*
 * Does in a throwaway child what the sandbox's init does first: clone with
 * `flags`, then (CLONE_NEWUSER) map our ids, mount a tmpfs and a new proc
 * and bring loopback up.  Returns OWS__USERNS_OK or the step that failed, its errno
 * in *sys_errno.
 */
OWS__HIDDEN int ows__userns_probe(int flags, int *sys_errno);
/* An unprivileged landlock host must run in the host's namespaces: the kernel gives no
 * usable user namespace (the probe, once per process while it succeeds; landlock.c). */
OWS__HIDDEN bool ows__userns_unusable(void);

/* What a refusal is explained from, read from /proc by ows__userns_facts_read. */
typedef struct ows__userns_facts {
	int step, err;                  /* OWS__USERNS_*, errno */
	long max_user_namespaces;       /* -1: unknown */
	long unprivileged_userns_clone; /* Debian's knob; -1: absent */
	long apparmor_restrict;         /* Ubuntu's kernel.apparmor_restrict_unprivileged_userns */
	int seccomp;                    /* Seccomp: of /proc/self/status; 2 is a filter */
	char label[96];                 /* this process's AppArmor label; "" without AppArmor */
	char exe[256];                  /* this program, the one a profile must name */
	bool root;                      /* euid 0: no user namespace is made */
	bool cap_sys_admin, cap_net_admin; /* in CapEff of /proc/self/status */
	int proc_masks;                 /* mounts over paths under /proc (a container's masks) */
	const char *container;          /* "podman", "docker", "a container" or NULL */
} ows__userns_facts;

/* Is capability `cap` (CAP_NET_ADMIN...) in this process's effective set? */
OWS__HIDDEN bool ows__cap_effective(int cap);
OWS__HIDDEN void ows__userns_facts_read(ows__userns_facts *f, int step, int sys_errno);
/* The cause into why, the one command that fixes it into fix; never "turn it off". */
OWS__HIDDEN void ows__userns_explain(const ows__userns_facts *f, char *why, size_t why_len,
				     char *fix, size_t fix_len);
/* Records OWS_EUNSUPPORTED with the cause and the fix, for a step that failed. */
OWS__HIDDEN int ows__userns_fail(ows_error *err, int step, int sys_errno);
/* The step of an init failure's stage text ("write /proc/self/uid_map"), or OWS__USERNS_OK. */
OWS__HIDDEN int ows__userns_step_of(const char *stage);
/* The AppArmor profile name for a program: "owsbx", or "owsbx-" and its file name. */
#define OWS__APPARMOR_NAME_MAX 64
OWS__HIDDEN int ows__apparmor_name(const char *exe, char *buf, size_t len);


/* ------------------------------------------------- machine setup (account) */

#define OWS__PROXY_PORT_FIRST 47800
#define OWS__PROXY_PORT_LAST 47899

/*
 * Runs a system tool: argv[0] absolute, no shell, PATH and LC_ALL fixed, no
 * inherited descriptor.  `input` (may be NULL) goes to its stdin; *out (may
 * be NULL) gets its stdout, caller frees.  A non-zero exit is OWS_ESYS with
 * the tool's stderr in err->what.
 */
OWS__HIDDEN int ows__cmd_run(const char *const argv[], const char *input, char **out,
			     ows_error *err);

/* The closed account's nftables table, in the form `nft list table` prints. */
OWS__HIDDEN int ows__nft_render(const char *table, uid_t closed_uid, char **out, ows_error *err);
/* Replaces table inet `table` with `ruleset` (a rendered or listed table), atomically. */
OWS__HIDDEN int ows__nft_load(const char *table, const char *ruleset, ows_error *err);
/* `nft list table inet TABLE` into *out; OWS_ENOTFOUND when there is no such table. */
OWS__HIDDEN int ows__nft_list(const char *table, char **out, ows_error *err);
/* Deletes table inet `table` if it exists; never touches another table. */
OWS__HIDDEN int ows__nft_delete(const char *table, ows_error *err);

/*
 * What the account provider needs from a machine that is set up, taken
 * from the setup record and checked against the system.
 */
struct ows__machine {
	uid_t closed_uid, open_uid;
	gid_t closed_gid, open_gid;
	gid_t group_gid;            /* people allowed to start sandboxes */
	char closed_user[32], open_user[32], group[32];
	char launcher[4096];        /* root:group 4750, as recorded */
	char state_dir[4096];
	char sandboxes_dir[4096];   /* per-session private folders: 0711 root:group */
	char journal_dir[4096];     /* grant journal: 1770 root:group */
	char nft_table[32];
	bool proved;                /* setup's proof passed */
};

/*
 * Checks that the machine is set up as its record says: the record is
 * there and intact, both accounts exist with the recorded uids, the group
 * with its gid, the launcher root-owned, group-owned and 4750, its record
 * (<launcher>.conf) root's and as setup wrote it, the state folders in
 * place; and that the caller is root or in the group.  It does not require
 * the proof to have passed: setup's proof opens sessions through it.  Works
 * without root (the firewall is left to the provider's proof, since nft
 * cannot be listed by a person).  OWS_ESETUP, with the command that sets
 * the machine up again in err->hint, when anything is missing or wrong;
 * OWS_EPERM when the caller is not in the group.  `out` may be NULL.
 */
OWS__HIDDEN int ows__machine_check(const ows_config *config, struct ows__machine *out,
				   ows_error *err);

/* The command that sets the machine up again: "sudo owsbx machine sandbox setup [--config F]". */
OWS__HIDDEN void ows__machine_fix(const ows_config *config, char *buf, size_t len);

/* The account provider: is this machine set up for it, for this caller?  Says why. */
OWS__HIDDEN bool ows__account_ready(const ows_config *config, char *why, size_t why_len);

/* ------------------------------------------------- ACL grants (acl.c) */
/*
 * The grant journal of one session: <state_dir>/journal/<uid>-<name>/<id>.journal,
 * created locked (flock) and held until ows__journal_close().  Its lock is
 * how cleanup tells a live host from a dead one, so the descriptor is
 * O_CLOEXEC and must not reach a sandboxed process (the launcher closes
 * every descriptor it did not choose).
 *
 * How the account provider uses it, within one host process:
 *
 *   ows_machine_cleanup(config, NULL);        revoke what dead hosts left
 *   ows__journal_open(config, id, &j, err);   the session's journal, locked
 *   ows_acl_grant(config, id, acct, folder, access, home, err);  per folder
 *   ...session runs...
 *   ows__journal_close(j, err);               revokes every grant it lists,
 *                                             removes it, drops the lock
 *
 * ows_acl_grant()/ows_acl_revoke() find the journal by session id in a
 * process-wide registry.  Called without ows__journal_open(), a grant opens
 * the session's journal itself and closes it with its last revoke; the
 * grants then live as long as the process (a killed process leaves them to
 * cleanup).  If ows__journal_close() cannot revoke everything it reports the
 * error and leaves the journal, unlocked, for the next cleanup to retry.
 *
 * The journal folder <state_dir>/journal is made by machine setup (1733, or
 * 1770 root:<group>); each person's subfolder is made on first use, 0700,
 * named by uid and user name so that a recycled uid inherits none of a
 * deleted person's journals.  Cleanup by the person also takes the dead
 * journals of the layout before (<uid>/) whose grants all lie in their
 * home; root's cleanup takes every folder of either layout.
 * Missing: OWS_ESETUP naming `owsbx machine sandbox setup`.
 *
 * Revoke also takes the entries inherited from a read-write grant off what
 * was made during the session.  On the account's own nodes (what the agent
 * made) that needs the account's rights or root's: the person's host skips
 * them (see acl.c).
 */
typedef struct ows__journal ows__journal;

OWS__HIDDEN int ows__journal_open(const ows_config *config, const char *session_id,
				  ows__journal **out, ows_error *err);
/* Revokes, removes, unlocks and frees.  NULL is fine. */
OWS__HIDDEN int ows__journal_close(ows__journal *j, ows_error *err);
/* The same, by session id; 0 when this process holds no journal for it. */
OWS__HIDDEN int ows__journal_close_session(const ows_config *config, const char *session_id,
					   ows_error *err);

/*
 * ows_session_plan's part for landlock and account (describe.c): the network
 * plan, limits, shared files, guard and masks added to `doc`, changing nothing.
 */
OWS__HIDDEN int ows__linux_describe(const ows_policy *policy, const ows_config *config,
				    ows_net net, bool account, struct json_t *doc, ows_error *err);

/* Sharing on purpose (lib/posix/sharing.c) and the direct provider: posix.h. */

/* The guard (guard.c): posix.h. */

#endif /* OWS_LINUX_H */
