/*
 * Windows back end: declarations shared by the files in lib/win/.  Nothing from
 * lib/linux/, lib/posix/ or lib/darwin/: the portable core is lib/internal.h.
 */
#ifndef OWS_WIN_H
#define OWS_WIN_H

#include <windows.h>
#include <aclapi.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* The accounts, the proxy's port range and the machine's folders (spec 000). */
#define OWS__WIN_OPEN_USER L"OWSandboxOpenNet"
#define OWS__WIN_CLOSED_USER L"OWSandboxClosedNet"
#define OWS__WIN_OPEN_USER_A "OWSandboxOpenNet"
#define OWS__WIN_CLOSED_USER_A "OWSandboxClosedNet"
#define OWS__PROXY_PORT_FIRST 47800
#define OWS__PROXY_PORT_LAST 47899
#define OWS__WIN_STATE_DIR "C:\\ProgramData\\OpenWorker\\sandbox"
#define OWS__WIN_FIREWALL_RULE L"OWSandbox: block outbound for OWSandboxClosedNet"
#define OWS__WIN_SETUP_HINT "in an administrator prompt, run: owsbx machine sandbox setup"

/* ------------------------------------------------------------ strings */

/* UTF-8 to UTF-16 and back; caller frees; NULL (errno ENOMEM/EILSEQ) on failure. */
OWS__HIDDEN wchar_t *ows__wide(const char *s);
OWS__HIDDEN char *ows__narrow(const wchar_t *w);
/* errno from a Win32 error, so that ows__fail_sys() reports it. */
OWS__HIDDEN int ows__win_errno(DWORD e);
/* Records a failed Win32 call: OWS_ESYS (or `code`), the error number and its text. */
OWS__HIDDEN int ows__fail_win(ows_error *err, int code, DWORD e, const char *where,
			      const char *hint, const char *what);
/* True when running under Wine (its ntdll exports wine_get_version). */
OWS__HIDDEN bool ows__win_is_wine(void);
/* True when the caller's token is in the Administrators group and elevated. */
OWS__HIDDEN bool ows__win_is_admin(void);

/* --------------------------------------------------------- processes */

/*
 * The job every process of a session lives in: killed when its last
 * handle closes, breakaway refused, with the policy's limits.  A NULL
 * policy sets no limits.
 */
OWS__HIDDEN int ows__job_create(const ows_policy *policy, HANDLE *out, ows_error *err);
/*
 * argv as one command line, quoted by the rules CommandLineToArgvW and the
 * C runtime parse it back with; caller frees.
 */
OWS__HIDDEN wchar_t *ows__win_cmdline(const char *const argv[], ows_error *err);
/* A UTF-16 environment block, sorted as CreateProcess wants it; caller frees. */
OWS__HIDDEN wchar_t *ows__win_envblock(char *const envp[], ows_error *err);
/* An inheritable duplicate of C descriptor fd (OWS_STDIO_NULL: NUL for stream `which`). */
OWS__HIDDEN HANDLE ows__win_std_handle(int fd, DWORD which);
/*
 * The runner's request (cli/win/runner.c) at `path`: the three streams
 * (std, each duplicated into the suspended `runner`, so that they cross the
 * logon; NULL: the runner's own), cwd, the command line, then the
 * environment entries.  The caller resumes the runner; on failure it ends it.
 */
OWS__HIDDEN int ows__win_runner_request(HANDLE runner, const HANDLE std[3], const wchar_t *path,
					const wchar_t *cwd, const wchar_t *line,
					const wchar_t *entries, ows_error *err);
/*
 * Starts argv suspended, assigns it to `job`, resumes it.  stdio are C
 * descriptors (OWS_STDIO_NULL for NUL).  On failure nothing runs.
 */
OWS__HIDDEN int ows__win_spawn_in_job(HANDLE job, const char *const argv[], char *const envp[],
				      const char *cwd, const int stdio[3], HANDLE *process,
				      DWORD *pid, ows_error *err);
/*
 * The same with `caps` (NULL: none) as PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES:
 * started in that AppContainer, and resumed only once its token says
 * TokenIsAppContainer (OWS_EVERIFY otherwise, and nothing runs).
 */
OWS__HIDDEN int ows__win_spawn_contained(HANDLE job, SECURITY_CAPABILITIES *caps,
					 const char *const argv[], char *const envp[],
					 const char *cwd, const int stdio[3], HANDLE *process,
					 DWORD *pid, ows_error *err);

/*
 * What every Windows provider's s->impl starts with: the session's job and
 * the process handles of its commands (struct ows_proc is the core's and
 * holds ints, so the handles live here, found by the proc's address).
 */
typedef struct ows__win_base {
	HANDLE job;
	ows_proc **procs;
	HANDLE *handles;
	size_t n, cap;
} ows__win_base;

/*
 * Keeps `h` for `p` (replacing a stale entry at the same address) in the
 * ows__win_base that begins s->impl.  The table is under the session's lock:
 * spawns and waits come from several threads at once.
 */
OWS__HIDDEN int ows__win_proc_put(ows_session *s, ows_proc *p, HANDLE h, ows_error *err);
/* The provider's wait, kill and stop, shared by every Windows provider. */
OWS__HIDDEN int ows__win_proc_wait(ows_session *s, ows_proc *p, int timeout_ms, ows_error *err);
OWS__HIDDEN int ows__win_proc_kill(ows_session *s, ows_proc *p, int signo, ows_error *err);
/* Ends every process of the job, keeping every handle: waits in flight return. */
OWS__HIDDEN void ows__win_proc_stop(ows_session *s);
/* At close, after stop: sets the exit of every proc the host still holds. */
OWS__HIDDEN void ows__win_proc_collect(ows_session *s);
/* Ends every process of the job, closes it and every handle kept. */
OWS__HIDDEN void ows__win_base_close(ows__win_base *b);

/* --------------------------------------------------------------- ACLs */

/* What one grant adds for the account's SID. */
typedef enum ows__ace_kind {
	OWS__ACE_RW = 1,       /* modify, inherited by folders and files */
	OWS__ACE_RO = 2,       /* read and execute, inherited */
	OWS__ACE_TRAVERSE = 3, /* traverse only, this folder only */
	OWS__ACE_WINSTA = 4,   /* a window station: what user32.dll needs to load */
} ows__ace_kind;

#define OWS__MASK_RW (FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE)
#define OWS__MASK_RO (FILE_GENERIC_READ | FILE_GENERIC_EXECUTE)
#define OWS__MASK_TRAVERSE (FILE_TRAVERSE | SYNCHRONIZE)
/*
 * What a program that loads user32.dll needs of WinSta0 (it draws on the
 * session's own desktop).  Not the clipboard, not the screen, not its
 * desktops' creation: those are the person's.
 */
#define OWS__MASK_WINSTA (WINSTA_ENUMDESKTOPS | WINSTA_READATTRIBUTES | WINSTA_ACCESSGLOBALATOMS | \
			  WINSTA_ENUMERATE | READ_CONTROL)
/* The window station the runner's desktop lives in, as a grant journal names it. */
#define OWS__WIN_WINSTA "\\\\.\\winsta\\WinSta0"
#define OWS__INHERIT_TREE (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE)

/* The explicit entry a grant of `kind` to `sid` makes (borrows sid). */
OWS__HIDDEN void ows__ace_entry(PSID sid, ows__ace_kind kind, EXPLICIT_ACCESS_W *out);
/* `old` (may be NULL) with the entry added; *out freed with LocalFree(). */
OWS__HIDDEN int ows__acl_add(PACL old, PSID sid, ows__ace_kind kind, PACL *out,
			     ows_error *err);
/* `old` without any explicit entry for `sid`; inherited entries kept.  LocalFree(). */
OWS__HIDDEN int ows__acl_remove_sid(PACL old, PSID sid, PACL *out, ows_error *err);
/* Sets the SID's explicit entries on one path to one of `kind` (0: none). */
OWS__HIDDEN int ows__acl_set_sid(const char *path, PSID sid, ows__ace_kind kind, ows_error *err);
/* The SID of a local account by name; caller frees with free(). */
OWS__HIDDEN int ows__sid_of(const char *account, PSID *out, ows_error *err);
/* The folders between `path` and `home_root` (exclusive both), outermost first. */
OWS__HIDDEN int ows__traverse_chain(const char *path, const char *home_root, ows__strv *out,
				    ows_error *err);
/*
 * The security calls the grants make, as a table: the real ones, or (tests
 * only, labelled so) a recorded model of them where the OS stubs them: Wine
 * stores no ACL and knows no local account.  Names are file paths or
 * OWS__WIN_WINSTA.  get fills *dacl (inside *sd, LocalFree) and whether it is
 * protected; both return a Win32 error.
 */
typedef struct ows__win_secops {
	int (*sid_of)(const char *account, PSID *out, ows_error *err); /* free() */
	DWORD (*get_dacl)(const char *name, PACL *dacl, bool *protect, PSECURITY_DESCRIPTOR *sd);
	DWORD (*set_dacl)(const char *name, PACL dacl, bool protect);
} ows__win_secops;
/* NULL: the real calls again.  Not thread-safe: set it before any session. */
OWS__HIDDEN void ows__win_secops_use(const ows__win_secops *ops);
/*
 * Opens (creating) the session's grant journal and holds it until release:
 * what tells cleanup that the session is alive.  Release closes it and
 * deletes the journal when no grant in it is active.
 */
OWS__HIDDEN int ows__win_journal_hold(const ows_config *c, const char *session_id, HANDLE *out,
				      ows_error *err);
OWS__HIDDEN void ows__win_journal_release(const ows_config *c, const char *session_id,
					  HANDLE held);

/*
 * A named pipe only `sddl` admits (e.g. "D:P(A;;GA;;;SY)(A;;GA;;;<sid>)"),
 * one instance, overlapped.  Returns the server end.
 */
OWS__HIDDEN int ows__pipe_create(const wchar_t *name, const wchar_t *sddl, HANDLE *out,
				 ows_error *err);

/* ------------------------------------------------------- appcontainer */

/*
 * Creates the AppContainer profile `name` (or takes the SID of one already
 * there: the names are the session's own); *made once it is there to
 * delete.  OWS_EUNSUPPORTED when userenv.dll lacks the profile functions
 * (Wine 8), OWS_ESETUP when creating it fails.  FreeSid(*sid).
 */
OWS__HIDDEN int ows__ac_profile_make(const wchar_t *name, PSID *sid, bool *made, ows_error *err);
OWS__HIDDEN void ows__ac_profile_drop(const wchar_t *name);
/*
 * An integrity label as a security descriptor and its SACL (inside *sd,
 * LocalFree(*sd)); the appcontainer provider labels read-write folders
 * OWS__AC_LOW_LABEL for the session: Low, no write up, inherited.
 */
#define OWS__AC_LOW_LABEL L"S:(ML;OICI;NW;;;LW)"
OWS__HIDDEN int ows__ac_label_sd(const wchar_t *sddl, PSECURITY_DESCRIPTOR *sd, PACL *sacl,
				 ows_error *err);
/* The internetClient capability's SID (S-1-15-3-1); FreeSid. */
OWS__HIDDEN int ows__ac_internet_sid(PSID *out, ows_error *err);

/* What `owsbx report` measured of the appcontainer provider, by a probe child. */
typedef enum ows__ac_result {
	OWS__AC_MISSING = -1, /* not provable here: the call is not there (why says which) */
	OWS__AC_FAILED = 0,
	OWS__AC_OK = 1,
} ows__ac_result;
typedef struct ows__ac_measure {
	ows__ac_result profile; /* CreateAppContainerProfile made a throwaway profile */
	ows__ac_result started; /* a child started with SECURITY_CAPABILITIES, in a job */
	ows__ac_result token;   /* its token has TokenIsAppContainer */
	ows__ac_result network; /* internetClient in its token when asked for, and only then */
	char why[200];
} ows__ac_measure;
OWS__HIDDEN void ows__ac_probe(ows__ac_measure *m);

/* ------------------------------------------------------------ machine */

/* A random password for an account: 32 characters of four classes. */
OWS__HIDDEN int ows__win_password(wchar_t out[33], ows_error *err);
/* DPAPI (machine scope + the person's entropy) around the password store. */
OWS__HIDDEN int ows__dpapi_protect(const void *data, size_t len, void **out, size_t *out_len,
				   ows_error *err);
OWS__HIDDEN int ows__dpapi_unprotect(const void *data, size_t len, void **out,
				     size_t *out_len, ows_error *err);
/*
 * The undo plan of a setup record: one step per change the record lists,
 * in reverse order of making, as a JSON array (new reference).  The record
 * is the one ows_machine_setup() writes; remove runs exactly these steps.
 */
struct json_t;
OWS__HIDDEN struct json_t *ows__win_undo_plan(struct json_t *record);
/* The password of an account from the store; what setup saved. */
OWS__HIDDEN int ows__win_password_of(const char *state_dir, const char *account,
				     wchar_t out[33], ows_error *err);

/* ------------------------------------------------------------ folders */

/* Creates path and missing parents; 0 when it exists. */
OWS__HIDDEN int ows__win_mkdir_p(const char *path, ows_error *err);
/* Removes a folder and everything beneath, never following a junction. */
OWS__HIDDEN int ows__win_rmtree(const char *path, ows_error *err);

#endif /* OWS_WIN_H */
