/*
 * The parts of the POSIX back ends that are plain POSIX: implemented in
 * lib/posix/ (fs.c, sharing.c, direct.c, guard.c, run_io.c) and built for
 * Linux and for macOS alike.  Private folders and their removal, a file locked from birth,
 * sharing on purpose, and the direct provider's calls, which the seatbelt
 * provider (lib/darwin/sandbox.c) spawns and waits through.  No Linux
 * header: lib/darwin/ includes it too.
 */
#ifndef OWS_POSIX_H
#define OWS_POSIX_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/types.h>

#include "internal.h"

/* Private folders: /tmp/owsandbox-<uid>/<session>/{home,tmp,cache}. */
typedef struct ows__private {
	char *root;    /* /tmp/owsandbox-<uid> */
	char *dir;     /* root/<session id> */
	int lock_fd;   /* flock held while the session lives; -1 when none */
} ows__private;

/*
 * Removes private folders whose host died, then creates this session's,
 * owned by `uid`/`gid`.  `base` is the folder that holds the per-user root.
 */
OWS__HIDDEN int ows__private_create(ows__private *pv, const char *base, const char *id,
				    uid_t uid, gid_t gid, ows_error *err);
/* Removes the session's private folder and releases the lock. */
OWS__HIDDEN int ows__private_remove(ows__private *pv, ows_error *err);

/* A stream of its own over the folder open at `dirfd`: a dup() would share, and
 * exhaust, the descriptor's read position.  Caller closedir()s it. */
OWS__HIDDEN DIR *ows__opendir_at(int dirfd);
/* Removes `name` under `dirfd` and everything beneath, never following a link. */
OWS__HIDDEN int ows__rmtree_at(int dirfd, const char *name);

/*
 * Creates `name` in the folder open at `dirfd`, mode 0600, holding `head`, with
 * an exclusive flock taken before the name exists, so no one who opens it by
 * that name ever finds it unlocked.  Returns the descriptor (O_RDWR), or -1
 * with errno: EEXIST when `name` is taken.  An unnamed O_TMPFILE file is linked
 * into place; where the file system or kernel has no O_TMPFILE (overlayfs
 * before Linux 6.6, FUSE, NFS: EOPNOTSUPP, EISDIR, EINVAL), a named temporary
 * file beside it, .NAME.XXXXXX, is linked instead and removed at once.  No
 * allocation (the launcher uses it too).
 */
OWS__HIDDEN int ows__create_locked_at(int dirfd, const char *name, const char *head);
/* Is `name` such a temporary name?  One left by a process killed half-way may be removed. */
OWS__HIDDEN bool ows__is_create_temp(const char *name);
/* For the tests: when set, the named temporary file is used as if O_TMPFILE were missing. */
OWS__HIDDEN extern bool ows__tmpfile_off;

/* ------------------------------------------------ sharing (sharing.c) */

/* A copy for the private home: a file's content, or a folder to make. */
typedef struct ows__file {
	char *path;   /* relative to the home, as in the person's home */
	char *data;
	size_t len;
	bool dir;
} ows__file;

/* What a session gets of the person's on purpose. */
typedef struct ows__share {
	ows__file *files;   /* in walk order: a folder before what it holds */
	size_t nfiles;
	size_t bytes;
	ows__strv env;      /* NAME=VALUE: where each tool finds its copy */
	ows__strv hosts;    /* allow-list patterns the shared tools need */
	ows__strv ro_dirs;  /* toolchain folders, absolute, to be visible read-only */
	ows__strv path_dirs;/* their bin folders, for PATH */
	char *agent_text;   /* what the agent can do with them; NULL when nothing is shared */
	/* the secrets of injected entries, for the session's proxy (lib/proxy/inject.h);
	 * NULL when none.  Freed with the share unless handed on. */
	struct ows__inject *inject;
} ows__share;

/*
 * Reads what the machine's config shares (narrowed by the policy) from
 * `home`; `priv_home` is the private home the copies will live in (for the
 * variables).  Nothing shared is not an error.
 */
OWS__HIDDEN int ows__share_collect(const ows_config *config, const ows_policy *policy,
				   const char *home, const char *priv_home, ows__share *out,
				   ows_error *err);
OWS__HIDDEN void ows__share_free(ows__share *sh);
/* Writes sh's copies into the existing private home `priv_home`, owner-only. */
OWS__HIDDEN int ows__share_write(const char *priv_home, const ows__share *sh, ows_error *err);
/* The owsbx this host runs, or the first on its PATH (caller frees); NULL when none. */
OWS__HIDDEN char *ows__find_owsbx(void);
/* allowlist: ssh's copied config sends every host through `tunnel_cmd` (if ~/.ssh is shared). */
OWS__HIDDEN int ows__share_ssh_proxy(ows__share *sh, const char *tunnel_cmd, ows_error *err);
/* Adds the shared tools' variables to `env` and their bin folders to its PATH. */
OWS__HIDDEN int ows__env_add_share(ows__strv *env, const ows__share *sh, ows_error *err);
/* The same for the session's environment, and hands the agent text to the session. */
OWS__HIDDEN int ows__share_apply(ows_session *s, ows__share *sh, ows_error *err);
/* allowlist: hands the injected secrets to the session's proxy (after ows__session_start_proxy). */
OWS__HIDDEN void ows__share_inject(ows_session *s, ows__share *sh);

/* Plants ~/.owsandbox-canary-<id> (0644) for a proof to fail to read: its path (caller
 * unlinks, frees), or NULL (a home the host cannot write: the other checks still stand). */
OWS__HIDDEN char *ows__canary_plant(const char *home, const char *id, ows_error *err);

/*
 * The direct provider's spawn, wait and kill (direct.c): posix_spawn in a
 * session and process group of its own, with the caller's stdio; argv[0]
 * is looked up in envp's PATH unless it holds a '/'.  The seatbelt
 * provider starts /usr/bin/sandbox-exec through the same calls.
 */
OWS__HIDDEN int ows__direct_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
				  char *const envp[], const char *cwd, const int stdio[3],
				  ows_error *err);
OWS__HIDDEN int ows__direct_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err);
OWS__HIDDEN int ows__direct_kill(ows_session *s, ows_proc *proc, int signo, ows_error *err);
/* SIGKILL to the process group of each live proc of the session (no wait). */
OWS__HIDDEN void ows__direct_stop(ows_session *s);
/* A descriptor readable once `pid` has exited (the proc's exit_fd), or -1: Linux a pidfd,
 * macOS a kqueue (lib/darwin/). */
OWS__HIDDEN int ows__exit_fd_open(pid_t pid);

/*
 * The guard (lib/posix/guard.c, built for macOS too): what other tools run later, in a read-write folder.
 * Plans for one folder: `ro`, existing paths to bind read-only over
 * themselves; `pin`, git folders to bind read-write over themselves (a mount
 * point cannot be renamed away); names that cannot be bound (absent, or a
 * symbolic link) go to *watch, made on first use, for the sweep.  May create
 * an empty `.git/hooks`, as `git init` does.  Host side; allocates.
 */
typedef struct ows__guard_watch ows__guard_watch;

/*
 * What git or Mercurial would take for a repository under a folder
 * (guard_walk.c): a `.git` of any type, a folder that is itself a git
 * directory (HEAD, with objects and refs or a commondir), an `.hg`.
 */
/* OWS_REPO_FIFO: not a repository, a FIFO met on the way (ows__guard_fifos). */
enum ows__repo_kind { OWS_REPO_DOTGIT, OWS_REPO_GITDIR, OWS_REPO_HG, OWS_REPO_FIFO };
typedef struct ows__repo {
	char *path;
	enum ows__repo_kind kind;
	dev_t dev;
	ino_t ino;
} ows__repo;
typedef struct ows__repos {
	ows__repo *v;
	size_t len, cap;
	size_t unread;   /* folders that could not be opened, so not searched */
} ows__repos;
/*
 * Appends what it finds under `folder` to `r`, following no link; ENOMEM
 * only.  With `repair`, a folder of the caller's own that it may not read
 * or enter is made so to its owner (u+rx) first.
 */
OWS__HIDDEN int ows__repos_find(const char *folder, bool repair, ows__repos *r,
				ows_error *err);
OWS__HIDDEN void ows__repos_free(ows__repos *r);

/* Paths the guard may bind over themselves in one session: every provider's mounts
 * and the account launcher's request have room for this many beside the rest. */
#define OWS__GUARD_MAX 192

OWS__HIDDEN int ows__guard_plan(const char *folder, const ows_config *cfg, ows__strv *ro,
				ows__strv *pin, ows__guard_watch **watch, ows_error *err);
/*
 * Moves aside (to NAME.owsbx-moved-TAG) whatever appeared at a watched name
 * since the plan, and makes inert every repository that was not there at
 * the plan (its HEAD moved aside, then its `.git` or `.hg`), never following
 * a link; appends each new path to `moved`.  Unless `modes` is NULL, puts
 * back the modes the plan recorded of the folders and what the guard binds,
 * appending each to `modes`.  After each command and at close: what the agent left there
 * never runs, and no other local user may swap it.
 */
OWS__HIDDEN int ows__guard_sweep(ows__guard_watch *g, const char *tag, ows__strv *moved,
				 ows__strv *modes, ows_error *err);
/*
 * Before each command: OWS_ESPAWN, naming it, when a read-write folder (or
 * one added by ows__guard_watch_fifos) holds a FIFO that was not there at
 * the plan.  One there at open is covered in the view; one made later would
 * be a pipe to whoever holds it outside.
 */
OWS__HIDDEN int ows__guard_fifos(const ows__guard_watch *g, ows_error *err);
/*
 * Adds a read-only folder that a write right reaches from above (Landlock's
 * rights hold for all beneath a rule: the sandbox's own /tmp) to what
 * ows__guard_fifos walks: its FIFOs now are known, one made later stops the
 * next command.  Makes *watchp when NULL.
 */
OWS__HIDDEN int ows__guard_watch_fifos(ows__guard_watch **watchp, const char *folder,
				       ows_error *err);
/*
 * The FIFOs the plan found in the read-write folders, appended to `out` (at
 * most `max`, else OWS_EINVAL; none twice), for the view to cover: an open
 * FIFO is a pipe to whoever opens it outside, the person's reader or writer,
 * and neither seccomp nor Landlock can tell its open() from a file's.  The
 * guard's walk finds them, at any depth a path can name.
 */
OWS__HIDDEN int ows__guard_fifos_known(const ows__guard_watch *g, size_t max, ows__strv *out,
				       ows_error *err);
OWS__HIDDEN void ows__guard_watch_free(ows__guard_watch *g);
/* The built-in list of protected names, relative to a folder; NULL past the end. */
OWS__HIDDEN const char *ows__guard_default_at(size_t i);
/* Entry i of the guard's git config keys that name a command (section, key or NULL), or false. */
OWS__HIDDEN bool ows__guard_git_command_at(size_t i, const char **section, const char **key);

/* A path bound over itself: read-only, or (pin) read-write so that it cannot be
 * renamed or removed from inside (a mount point is busy). */
typedef struct ows__guard_entry {
	char *path;
	bool is_file;
	bool pin;
} ows__guard_entry;

typedef struct ows__guard_list {
	ows__guard_entry *v;
	size_t len;
} ows__guard_list;

/*
 * What other tools run later in the read-write folder `folder` (guard.c),
 * added to `g`; what cannot be bound goes to *watch, for the host's sweep.
 */
OWS__HIDDEN int ows__guard_add(ows__guard_list *g, const char *folder, const ows_config *cfg,
			       ows__guard_watch **watch, ows_error *err);
OWS__HIDDEN int ows__guard_push(ows__guard_list *g, const char *path, bool is_file, bool pin,
				ows_error *err);
OWS__HIDDEN void ows__guard_free(ows__guard_list *g);

#endif /* OWS_POSIX_H */
