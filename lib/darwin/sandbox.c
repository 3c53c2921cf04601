/*
 * The `seatbelt` provider: macOS's sandbox, with nothing to install.
 *
 * Every command starts as /usr/bin/sandbox-exec -p PROFILE -D NAME=VALUE...
 * -- argv: the profile (lib/darwin/profile.c) is rendered once per session
 * from its folders, its private folder, the toolchains the person shares and
 * its network mode; every path reaches Seatbelt as a parameter.  The kernel
 * keeps the profile on the process and on everything it starts, across
 * fork and exec; nothing inside can take it off.
 *
 * Open: refused inside another sandbox (macOS does not nest them); the
 * private folder (home, tmp, cache) is made under /tmp, the shared logins
 * copied into its home; the proxy listens on the host's loopback
 * (allowlist); then a probe under the profile proves the wall from inside
 * before the session starts, and the session is refused if any check fails.
 *
 * Lifetime.  macOS has no PID namespace and no cgroup: a double-forked,
 * setsid daemon of the session is the child of launchd, in no process
 * group of ours.  What it still carries is the profile, and the profile
 * carries two paths of the session's own (markers, random, existing
 * nowhere): only this session's profile lets a process look up
 * marker_allow and refuses it marker_deny.  sandbox_check() asks the
 * kernel that question about any pid of the person, so at stop and close
 * every process of the person's is listed and each that answers as this
 * session's does is killed, pass after pass until one finds none
 * (lib/darwin/lifetime.c).
 * Each live session has a record (host pid, markers, private folder) in a
 * folder of the person's alone, locked by its host: the next open, or
 * `owsbx machine sandbox cleanup`, ends what a killed host left.
 *
 * Where that is partial (the report and every event say so):
 *   - a host killed with SIGKILL leaves its session's processes running
 *     until the next seatbelt open or cleanup; nothing on macOS kills them
 *     when the host dies;
 *   - a process that makes itself another uid (a setuid program the
 *     profile lets it run) is not listed among the person's and not ended;
 *   - between sandbox_check() and kill() a pid could in principle exit and
 *     be reused by another process of the person's: the window is one
 *     system call, and pids are not reused at once (XNU picks the next free
 *     one upward).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "darwin.h"
#include "platform.h"
#include "posix/posix.h"
#include "profile.h"

/* A check the probe never printed. */
#define PROBE_ENDED "the probe ended before this check"
/* How long the proof may take: it runs a handful of system tools. */
#define PROOF_TIMEOUT_MS 60000

struct sb_impl {
	ows__private pv;
	ows__sb_profile prof;
	char marker_allow[OWS__SB_MARKER_MAX];
	char marker_deny[OWS__SB_MARKER_MAX];
	ows__sb_record record; /* locked while the host lives */
	ows__guard_list guard;    /* what the person's own tools run later, in rw folders */
	ows__guard_watch *watch;  /* guarded names absent at open: swept after each command */
};

/* ------------------------------------------------------------ usable here */

bool ows__sb_usable(char *why, size_t why_len, char *fix, size_t fix_len)
{
	if (sandbox_check(getpid(), NULL, OWS__SANDBOX_FILTER_NONE) != 0) {
		snprintf(why, why_len, "this process runs inside another sandbox, and macOS does "
			 "not nest sandboxes: a seatbelt session cannot be started from here");
		snprintf(fix, fix_len, "run owsbx, or the program that hosts it, outside any "
			 "sandbox (not from a sandboxed app or another agent's sandbox)");
		return false;
	}
	if (access(OWS__SANDBOX_EXEC, X_OK) != 0) {
		snprintf(why, why_len, "%s is missing or cannot be run: this macOS has no Seatbelt "
			 "launcher", OWS__SANDBOX_EXEC);
		snprintf(fix, fix_len, "use a macOS that ships %s (every release through 15 does)",
			 OWS__SANDBOX_EXEC);
		return false;
	}
	snprintf(why, why_len, "not inside another sandbox; %s present", OWS__SANDBOX_EXEC);
	fix[0] = '\0';
	return true;
}

/* ------------------------------------------------------------------- spawn */

/* sandbox-exec -p PROFILE -D NAME=VALUE ... -- argv...: borrowed strings; caller frees. */
static const char **exec_argv(const ows__sb_profile *prof, const char *const argv[],
			      ows_error *err)
{
	size_t argc = 0;
	while (argv[argc])
		argc++;
	const char **av = ows__calloc(3 + 2 * prof->params.len + 1 + argc + 1, sizeof(*av), err);
	if (!av)
		return NULL;
	size_t k = 0;
	av[k++] = OWS__SANDBOX_EXEC;
	av[k++] = "-p";
	av[k++] = prof->text;
	for (size_t i = 0; i < prof->params.len; i++) {
		av[k++] = "-D";
		av[k++] = prof->params.v[i];
	}
	av[k++] = "--"; /* a command whose name begins with '-' is not an option */
	for (size_t i = 0; i < argc; i++)
		av[k++] = argv[i];
	av[k] = NULL;
	return av;
}

/*
 * The command under the profile, in a session and process group of its
 * own, with the caller's stdio and nothing else of the host's descriptors:
 * posix_spawn does all of it (ows__direct_spawn); there is no code of ours
 * between fork and exec.  sandbox-exec applies the profile to itself and
 * exec's the command, which it looks up in the session's PATH.
 */
static int seatbelt_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
			  char *const envp[], const char *cwd, const int stdio[3], ows_error *err)
{
	struct sb_impl *si = s->impl;
	const char **av = exec_argv(&si->prof, argv, err);
	if (!av)
		return OWS_ENOMEM;
	int rc = ows__direct_spawn(s, proc, av, envp, cwd, stdio, err);
	free(av);
	return rc;
}

/* --------------------------------------------------------------- the proof */

/*
 * The probe: /bin/sh under the profile.  It prints one line per check, in
 * the order the host expects them ("ok", "fail" or "skip", a space, what it
 * saw), then "ready", and waits on its stdin while the host asks the kernel
 * about it (the markers).  No path is ever printed, and none is spliced
 * into the script: they come as arguments.
 *   $1 id  $2 home  $3 canary  $4 ~/.ssh  $5 a file in it  $6 network
 *   $7 a loopback port outside the allow list  $8 the proxy's port
 *   then pairs: read-write|read-only FOLDER
 */
static const char PROBE_SCRIPT[] =
	"id=$1 home=$2 canary=$3 ssh=$4 sshfile=$5 net=$6 outport=$7 proxyport=$8\n"
	"shift 8\n"
	"while [ \"$#\" -ge 2 ]; do\n"
	"  mode=$1 dir=$2; shift 2\n"
	"  f=\"$dir/.owsandbox-proof-$id\"\n"
	"  if ! ls \"$dir\" >/dev/null 2>&1; then echo 'fail cannot list it'\n"
	"  elif [ \"$mode\" = read-write ]; then\n"
	"    if (: >\"$f\") 2>/dev/null && rm -f \"$f\"; then echo 'ok listed; a file made and removed'\n"
	"    else echo 'fail cannot make a file in it'; fi\n"
	"  elif (: >\"$f\") 2>/dev/null; then rm -f \"$f\"; echo 'fail a file could be made in it'\n"
	"  else echo 'ok listed; making a file refused'; fi\n"
	"done\n"
	"if [ -z \"$home\" ]; then echo 'skip no home'\n"
	"elif ls \"$home\" >/dev/null 2>&1; then echo 'fail the home was listed'\n"
	"else echo 'ok listing refused'; fi\n"
	"if [ -z \"$canary\" ]; then echo 'skip no canary: the home is not writable'\n"
	"elif cat \"$canary\" >/dev/null 2>&1; then echo 'fail the file planted in the home was read'\n"
	"else echo 'ok reading refused'; fi\n"
	"if [ -z \"$ssh\" ]; then echo 'skip no ~/.ssh on this machine'\n"
	"elif ls \"$ssh\" >/dev/null 2>&1; then echo 'fail ~/.ssh was listed'\n"
	"elif [ -n \"$sshfile\" ] && cat \"$sshfile\" >/dev/null 2>&1; then\n"
	"  echo 'fail a file in ~/.ssh was read'\n"
	"else echo 'ok listing and reading refused'; fi\n"
	"if [ \"$net\" = open ]; then echo 'skip network open'\n"
	"else /usr/bin/nc -z 127.0.0.1 \"$outport\" </dev/null >/dev/null 2>&1; st=$?\n"
	"  if [ \"$st\" -eq 0 ]; then echo 'fail a loopback port outside the allow list was reached'\n"
	"  elif [ \"$st\" -eq 1 ]; then echo 'ok connection refused'\n"
	"  else echo \"fail nc could not run ($st)\"; fi\n"
	"fi\n"
	"if [ \"$net\" != allowlist ]; then echo 'skip no proxy'\n"
	"elif /usr/bin/nc -z 127.0.0.1 \"$proxyport\" </dev/null >/dev/null 2>&1; then\n"
	"  echo 'ok the proxy was reached'\n"
	"else echo 'fail the proxy could not be reached'; fi\n"
	"echo ready\n"
	"read -r _ || :\n";

struct probe {
	int listen_fd;       /* a loopback port no rule allows */
	int err_fd;          /* its stderr: an unlinked file, what sandbox-exec said if it failed */
	int outside_port;
	char *canary;
	char ssh[PATH_MAX];
	char ssh_file[PATH_MAX];
	ows__check *checks;  /* named by the host, filled from the probe's lines */
	size_t nchecks, cap;
};

static void probe_free(struct probe *pb)
{
	if (pb->listen_fd >= 0)
		close(pb->listen_fd);
	if (pb->err_fd >= 0)
		close(pb->err_fd);
	if (pb->canary) {
		unlink(pb->canary);
		free(pb->canary);
	}
	free(pb->checks);
	memset(pb, 0, sizeof(*pb));
	pb->listen_fd = pb->err_fd = -1;
}

static ows__check *probe_check(struct probe *pb, const char *name, const char *arg)
{
	ows__check *c = &pb->checks[pb->nchecks++];
	snprintf(c->name, sizeof(c->name), "%s%s%s", name, arg ? " " : "", arg ? arg : "");
	return c;
}

/* A loopback listener on a port of the kernel's choice, for the probe to fail to reach. */
static int listen_loopback(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) { /* spawn passes only stdio anyway */ }
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* A regular file in ~/.ssh, when there is one, for the probe to fail to read. */
static void find_ssh_file(struct probe *pb, const char *home)
{
	snprintf(pb->ssh, sizeof(pb->ssh), "%s/.ssh", home);
	DIR *d = opendir(pb->ssh);
	if (!d) {
		pb->ssh[0] = '\0';
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_type == DT_REG) {
			snprintf(pb->ssh_file, sizeof(pb->ssh_file), "%s/%s", pb->ssh, e->d_name);
			break;
		}
	closedir(d);
}

/* Reads the probe's lines until "ready" or its end; the whole text into *out. */
static int read_lines(int fd, char **out, ows_error *err)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	if (!buf)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	int64_t deadline = ows__now_ms() + PROOF_TIMEOUT_MS;
	for (;;) {
		buf[len] = '\0';
		if (strstr(buf, "ready\n"))
			break;
		int64_t left = deadline - ows__now_ms();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			return ows__fail(err, OWS_EVERIFY, r < 0 ? errno : ETIMEDOUT, "proof",
					 "run `owsbx verify` to see the checks",
					 "the proof under the profile did not finish");
		}
		if (len + 512 > cap) {
			char *more = realloc(buf, cap * 2);
			if (!more) {
				free(buf);
				return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
			}
			buf = more;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* it ended early: the missing checks count as failed */
		len += (size_t)n;
	}
	*out = buf;
	return 0;
}

/* Fills the checks named so far, in order, from the probe's lines; a missing line fails. */
static void parse_lines(struct probe *pb, const char *text, const char *const *names,
			const char *const *args, size_t n)
{
	const char *l = text;
	for (size_t i = 0; i < n; i++) {
		const char *nl = l ? strchr(l, '\n') : NULL;
		char line[160] = "";
		if (nl)
			snprintf(line, sizeof(line), "%.*s", (int)(nl - l), l);
		l = nl ? nl + 1 : NULL;
		if (strncmp(line, "skip ", 5) == 0)
			continue;
		ows__check *c = probe_check(pb, names[i], args[i]);
		bool ok = strncmp(line, "ok ", 3) == 0;
		c->passed = ok;
		snprintf(c->detail, sizeof(c->detail), "%s",
			 ok ? line + 3 : strncmp(line, "fail ", 5) == 0 ? line + 5 : PROBE_ENDED);
	}
}

/* The host's own check on the probe: the kernel tells it from every other process. */
static void check_markers(struct probe *pb, bool told)
{
	ows__check *c = probe_check(pb, "processes end with the session", NULL);
	c->passed = told;
	snprintf(c->detail, sizeof(c->detail), "%s",
		 c->passed ? "sandbox_check() tells a process of this session from any other"
			   : "sandbox_check() cannot tell this session's processes: they would "
			     "outlive it");
}

/* The probe's argv after the script: see PROBE_SCRIPT. */
static int probe_argv(ows__strv *av, ows_session *s, const ows_policy *policy,
		      const struct probe *pb, const char *home, int proxy_port, ows_error *err)
{
	int rc = 0;
	const char *fixed[] = {"/bin/sh", "-c", PROBE_SCRIPT, "owsandbox-proof", s->id,
			       home ? home : "", pb->canary ? pb->canary : "", pb->ssh,
			       pb->ssh_file, ows__net_name(s->net)};
	for (size_t i = 0; i < OWS__ARRAY_LEN(fixed) && rc == 0; i++)
		rc = ows__strv_push(av, fixed[i], err);
	if (rc == 0)
		rc = ows__strv_pushf(av, err, "%d", pb->outside_port);
	if (rc == 0)
		rc = ows__strv_pushf(av, err, "%d", proxy_port);
	for (size_t i = 0; i < policy->nfolders && rc == 0; i++) {
		bool rw = policy->folders[i].access == OWS_ACCESS_RW;
		rc = ows__strv_push(av, rw ? "read-write" : "read-only", err);
		if (rc == 0)
			rc = ows__strv_push(av, policy->folders[i].path, err);
	}
	return rc;
}

/*
 * Runs the probe under the session's profile, waits for its lines into
 * *text, and while it waits asks the kernel about it: *told is whether
 * the markers tell it from every other process.
 */
static int run_probe(ows_session *s, const ows_policy *policy, const struct sb_impl *si,
		     const struct probe *pb, const char *home, int proxy_port, char **text,
		     bool *told, ows_error *err)
{
	ows_proc probe = {.pid = -1, .exit_fd = -1};
	ows__strv av = {0};
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	int rc = probe_argv(&av, s, policy, pb, home, proxy_port, err);
	if (rc == 0 && (pipe(in) != 0 || pipe(out) != 0))
		rc = ows__fail_sys(err, "pipe", NULL, "cannot start the proof");
	for (int i = 0; i < 2 && rc == 0; i++) {
		fcntl(in[i], F_SETFD, FD_CLOEXEC);
		fcntl(out[i], F_SETFD, FD_CLOEXEC);
	}
	if (rc == 0) {
		const int stdio[3] = {in[0], out[1], pb->err_fd >= 0 ? pb->err_fd : OWS_STDIO_NULL};
		rc = seatbelt_spawn(s, &probe, (const char *const *)av.v, s->env.v, s->default_cwd,
				    stdio, err);
	}
	if (in[0] >= 0)
		close(in[0]);
	if (out[1] >= 0)
		close(out[1]);
	if (rc == 0)
		rc = read_lines(out[0], text, err);
	*told = rc == 0 && ows__sb_is_ours(probe.pid, si->marker_allow, si->marker_deny);
	/* Its stdin closes and it exits; killed with its group either way, then reaped. */
	if (in[1] >= 0)
		close(in[1]);
	if (out[0] >= 0)
		close(out[0]);
	if (probe.pid > 0) {
		ows__direct_kill(s, &probe, SIGKILL, NULL);
		ows__direct_wait(s, &probe, -1, NULL);
	}
	if (probe.exit_fd >= 0)
		close(probe.exit_fd);
	ows__strv_free(&av);
	return rc;
}

/* A file with no name in `dir` (made, then unlinked at once), or -1. */
static int unnamed_file(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.proof-stderr", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* The checks, named by the host in the order the probe prints them, then the markers. */
static int name_checks(struct probe *pb, const ows_policy *policy, const char *home,
		       const char *text, bool told, ows_error *err)
{
	static const char *const more[] = {"home not listable", "home file not readable",
					   "ssh keys not readable", "network socket",
					   "network proxy"};
	size_t nf = policy->nfolders, n = nf + OWS__ARRAY_LEN(more);
	const char **names = ows__calloc(n, sizeof(*names), err);
	const char **args = ows__calloc(n, sizeof(*args), err);
	if (!names || !args) {
		free(names);
		free(args);
		return OWS_ENOMEM;
	}
	for (size_t i = 0; i < nf; i++) {
		names[i] = policy->folders[i].access == OWS_ACCESS_RW ? "read-write" : "read-only";
		args[i] = policy->folders[i].path;
	}
	for (size_t i = 0; i < OWS__ARRAY_LEN(more); i++)
		names[nf + i] = more[i];
	args[nf] = home;
	args[nf + 1] = pb->canary;
	args[nf + 2] = pb->ssh[0] ? pb->ssh : NULL;
	parse_lines(pb, text, names, args, n);
	check_markers(pb, told);
	free(names);
	free(args);
	return 0;
}

/*
 * Proves the wall from inside, as the Linux providers do: each session
 * folder reachable as its access says, the home not listable, a file
 * planted in it not readable, ~/.ssh neither, no loopback port outside
 * the allow list reachable (allowlist, none), the proxy reachable
 * (allowlist), and the kernel able to tell the session's processes.
 * Fills s->proof_json; OWS_EVERIFY when a check failed.
 */
static int prove(ows_session *s, const ows_policy *policy, struct sb_impl *si, const char *home,
		 int proxy_port, ows_error *err)
{
	struct probe pb = {.listen_fd = -1, .err_fd = -1};
	pb.cap = policy->nfolders + 8;
	if (!(pb.checks = ows__calloc(pb.cap, sizeof(*pb.checks), err)))
		return OWS_ENOMEM;
	if ((pb.listen_fd = listen_loopback(&pb.outside_port)) < 0) {
		probe_free(&pb);
		return ows__fail_sys(err, "127.0.0.1", NULL, "cannot listen for the proof");
	}
	if (home) {
		pb.canary = ows__canary_plant(home, s->id, NULL);
		find_ssh_file(&pb, home);
	}
	pb.err_fd = unnamed_file(si->pv.dir);
	char *text = NULL;
	bool told = false;
	int rc = run_probe(s, policy, si, &pb, home, proxy_port, &text, &told, err);
	if (rc == 0)
		rc = name_checks(&pb, policy, home, text, told, err);
	free(text);
	bool passed = false;
	if (rc == 0 && !(s->proof_json = ows__proof_json("seatbelt", ows__net_name(s->net),
							 pb.checks, pb.nchecks, &passed)))
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (rc == 0 && !passed) {
		const ows__check *bad = NULL;
		for (size_t i = 0; i < pb.nchecks && !bad; i++)
			if (pb.checks[i].passed != 1)
				bad = &pb.checks[i];
		/* It never got to say: what sandbox-exec or sh said on stderr is why. */
		static const char hint[] = "run `owsbx verify` to see every check; the session is "
					   "refused";
		char said[200] = "";
		bool ended = bad && strcmp(bad->detail, PROBE_ENDED) == 0;
		ssize_t n = ended && pb.err_fd >= 0 ? pread(pb.err_fd, said, sizeof(said) - 1, 0)
						    : -1;
		said[n > 0 ? n : 0] = '\0';
		said[strcspn(said, "\n")] = '\0';
		if (said[0])
			rc = ows__fail(err, OWS_EVERIFY, 0, "proof", hint,
				       "the proof could not run under the profile: %s", said);
		else
			rc = ows__fail(err, OWS_EVERIFY, 0, bad ? bad->name : "proof", hint,
				       "the wall did not hold from inside: %s", bad ? bad->detail : "");
	}
	probe_free(&pb);
	return rc;
}

/* ------------------------------------------------------------------ open */

/* The person's home, canonical, and account name; *home NULL when the account has none. */
static void whoami(char **home, char *user, size_t user_len)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	*home = NULL;
	user[0] = '\0';
	if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) != 0 || !res)
		return;
	snprintf(user, user_len, "%s", res->pw_name);
	char *real = realpath(res->pw_dir, NULL);
	if (real && strcmp(real, "/") != 0)
		*home = real;
	else
		free(real);
}

/* What Seatbelt cannot keep is refused, as Linux refuses what it cannot enforce. */
static int refuse_unkept(const ows_policy *policy, ows_error *err)
{
	static const ows_limit kernel_limits[] = {OWS_LIMIT_MEMORY_BYTES, OWS_LIMIT_PROCESSES,
						  OWS_LIMIT_CPU_PERCENT};
	for (size_t i = 0; i < OWS__ARRAY_LEN(kernel_limits); i++)
		if (policy->has_limit[kernel_limits[i]])
			return ows__fail(err, OWS_EUNSUPPORTED, 0, ows__limit_key(kernel_limits[i]),
					 "leave memory, process and CPU limits off on macOS; "
					 "wall_seconds works",
					 "the seatbelt provider cannot enforce this limit: "
					 "Seatbelt has no resource limits");
	if (policy->run_as)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "run_as", "leave run_as off on macOS",
				 "seatbelt sessions run as the person who starts them");
	if (geteuid() == 0)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "root",
				 "run owsbx as yourself, without sudo",
				 "a seatbelt session would run its commands as root");
	return 0;
}

/* Writes the shared copies into the fresh private home (no sandbox runs yet). */
/*
 * What the session sees beyond the system: its folders at their own paths,
 * the shared toolchains read only, and in allowlist owsbx itself (for
 * `owsbx connect`, ssh's way out) when the system's folders do not hold it.
 */
static int plan_paths(const ows_policy *policy, const ows__share *sh, const char *exe,
		      ows__sb_path **out, size_t *n, ows_error *err)
{
	size_t cap = policy->nfolders + sh->ro_dirs.len + 1, k = 0;
	ows__sb_path *p = ows__calloc(cap ? cap : 1, sizeof(*p), err);
	if (!p)
		return OWS_ENOMEM;
	for (size_t i = 0; i < policy->nfolders; i++)
		p[k++] = (ows__sb_path){.path = policy->folders[i].path,
					.writable = policy->folders[i].access == OWS_ACCESS_RW};
	for (size_t i = 0; i < sh->ro_dirs.len; i++)
		p[k++] = (ows__sb_path){.path = sh->ro_dirs.v[i]};
	if (exe)
		p[k++] = (ows__sb_path){.path = exe, .file = true};
	*out = p;
	*n = k;
	return 0;
}

/* allowlist: the owsbx ssh's ProxyCommand runs, canonical; *exe when the profile must add it. */
static int plan_tunnel(ows__share *sh, char **exe, char **cmd, bool *add, ows_error *err)
{
	static const char *const system[] = {"/usr/", "/bin/", "/opt/", "/System/", "/Library/",
					     "/Applications/"};
	*exe = *cmd = NULL;
	*add = false;
	char *found = ows__find_owsbx();
	char *real = found ? realpath(found, NULL) : NULL;
	free(found);
	if (!real)
		return 0; /* git over https still works; ssh then has no way out */
	bool seen = false;
	for (size_t i = 0; i < OWS__ARRAY_LEN(system); i++)
		seen |= strncmp(real, system[i], strlen(system[i])) == 0;
	*add = !seen;
	*exe = real;
	if (!(*cmd = ows__asprintf(err, "%s connect %%h %%p", real)))
		return OWS_ENOMEM;
	return ows__share_ssh_proxy(sh, *cmd, err);
}

/*
 * Frees the session's side.  `ended`: every process under the profile is
 * gone, so the private folder and the record go too; otherwise both stay,
 * the record unlocked, for cleanup to end what is left and remove them.
 */
static int impl_free(ows_session *s, struct sb_impl *si, bool ended, ows_error *err)
{
	int rc = 0;
	ows__sb_profile_free(&si->prof);
	if (ended) {
		rc = ows__private_remove(&si->pv, err);
	} else {
		if (si->pv.lock_fd >= 0)
			close(si->pv.lock_fd);
		free(si->pv.dir);
		free(si->pv.root);
	}
	ows__sb_record_drop(&si->record, s->id, ended);
	ows__guard_free(&si->guard);
	ows__guard_watch_free(si->watch);
	free(si);
	return rc;
}

/* The partial promise every seatbelt session carries (see the top of this file). */
static void mark_partial(ows_session *s)
{
	s->partial[s->npartial++] = (ows__partial){
		"processes.end_with_session",
		"the session's processes are found by their profile and killed at close, double-"
		"forked daemons too; a host killed with SIGKILL leaves them running until the next "
		"seatbelt session opens or `owsbx machine sandbox cleanup` runs (macOS has no PID "
		"namespace)"};
}

struct open_state {
	char *home, *exe, *tunnel;
	char user[256];
	ows__share share;
	ows__sb_path *paths;
	size_t npaths;
	ows__sb_path *guarded;
	size_t nguarded;
	int proxy_port;
};

static void open_state_free(struct open_state *o)
{
	free(o->home);
	free(o->exe);
	free(o->tunnel);
	free(o->paths);
	free(o->guarded);
	ows__share_free(&o->share);
}

/* The private folder, the markers and the record: from here on cleanup can end the session. */
static int open_private(ows_session *s, const ows_config *config, struct sb_impl *si,
			const char *home, ows_error *err)
{
	char *base = realpath(config->private_root ? config->private_root : "/private/tmp", NULL);
	if (!base)
		return ows__fail_sys(err, config->private_root, "set private_root to a folder "
				     "that exists", "cannot find the private folder root");
	int rc = ows__private_create(&si->pv, base, s->id, geteuid(), getegid(), err);
	free(base);
	if (rc == 0)
		rc = ows__sb_make_markers(si->marker_allow, si->marker_deny, err);
	if (rc == 0)
		rc = ows__sb_record_write(&si->record, s->id, si->marker_allow, si->marker_deny,
					  si->pv.root, home, err);
	return rc;
}

/*
 * The guard, planned as on Linux (lib/posix/guard.c): in each read-write
 * folder, what the person's git, shell or editor runs later and exists now
 * becomes a guarded path of the profile (no write to it; the folders on the
 * way to it, .git, cannot be renamed or removed); what does not exist yet is
 * watched, and moved aside after each command.  Pinned git folders stay
 * writable: their guarded config and hooks keep them in place.
 */
static int plan_guard(const ows_policy *policy, const ows_config *config, struct sb_impl *si,
		      struct open_state *o, ows_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < policy->nfolders && rc == 0; i++)
		if (policy->folders[i].access == OWS_ACCESS_RW)
			rc = ows__guard_add(&si->guard, policy->folders[i].path, config, &si->watch,
					    err);
	if (rc < 0)
		return rc;
	o->guarded = ows__calloc(si->guard.len ? si->guard.len : 1, sizeof(*o->guarded), err);
	if (!o->guarded)
		return OWS_ENOMEM;
	for (size_t i = 0; i < si->guard.len; i++)
		if (!si->guard.v[i].pin)
			o->guarded[o->nguarded++] = (ows__sb_path){.path = si->guard.v[i].path,
								   .file = si->guard.v[i].is_file};
	return 0;
}

/* The environment, the shared copies and, in allowlist, the proxy. */
static int open_env(ows_session *s, const ows_policy *policy, const ows_config *config,
		    struct sb_impl *si, struct open_state *o, ows_error *err)
{
	ows__strv layout = {0};
	int rc = ows__session_layout(s, policy, si->pv.dir, '/', o->user[0] ? o->user : NULL,
				     "seatbelt", &layout, err);
	const char *priv_home = rc == 0 ? layout.v[0] : NULL;
	bool add_exe = false;
	if (rc == 0)
		rc = ows__share_collect(config, policy, o->home, priv_home, &o->share, err);
	if (rc == 0 && s->net == OWS_NET_ALLOWLIST)
		rc = plan_tunnel(&o->share, &o->exe, &o->tunnel, &add_exe, err);
	if (rc == 0)
		rc = ows__share_write(priv_home, &o->share, err);
	if (rc == 0)
		rc = ows__share_apply(s, &o->share, err);
	ows__strv_free(&layout);
	if (rc == 0 && s->net == OWS_NET_ALLOWLIST)
		rc = ows__session_start_proxy(s, policy, config, &o->share.hosts, o->tunnel, false,
					      &o->proxy_port, err);
	if (rc == 0)
		ows__share_inject(s, &o->share);
	if (rc == 0)
		rc = plan_paths(policy, &o->share, add_exe ? o->exe : NULL, &o->paths, &o->npaths,
				err);
	if (rc == 0)
		rc = plan_guard(policy, config, si, o, err);
	return rc;
}

static int seatbelt_open(ows_session *s, const ows_policy *policy, const ows_config *config,
			 ows_error *err)
{
	char why[512], fix[256];
	if (!ows__sb_usable(why, sizeof(why), fix, sizeof(fix)))
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "seatbelt", fix, "%s", why);
	int rc = refuse_unkept(policy, err);
	if (rc < 0)
		return rc;
	/* What killed hosts left ends first; its failure does not stop this session. */
	ows__sb_cleanup(NULL);

	struct open_state o = {0};
	struct sb_impl *si = ows__calloc(1, sizeof(*si), err);
	if (!si)
		return OWS_ENOMEM;
	si->record.fd = -1;
	si->pv.lock_fd = -1;
	whoami(&o.home, o.user, sizeof(o.user));
	for (size_t i = 0; o.home && i < policy->nfolders && rc == 0; i++)
		rc = ows__check_folder_vs_home(policy->folders[i].path, o.home, err);
	if (rc == 0)
		rc = open_private(s, config, si, o.home, err);
	if (rc == 0)
		rc = open_env(s, policy, config, si, &o, err);
	ows__sb_spec spec = {
		.net = s->net, .proxy_port = o.proxy_port, .private_dir = si->pv.dir,
		.paths = o.paths, .npaths = o.npaths,
		.marker_allow = si->marker_allow, .marker_deny = si->marker_deny,
		.guarded = o.guarded, .nguarded = o.nguarded,
	};
	if (rc == 0)
		rc = ows__sb_render(&spec, &si->prof, err);
	s->impl = si;
	if (rc == 0)
		rc = prove(s, policy, si, o.home, o.proxy_port, err);
	open_state_free(&o);
	if (rc == 0 && !(s->private_dir = ows__strdup(si->pv.dir, err)))
		rc = OWS_ENOMEM;
	if (rc < 0) {
		/* Whatever the proof's probe left behind goes with it. */
		bool ended = !si->marker_allow[0] ||
			     ows__sb_sweep(si->marker_allow, si->marker_deny) == 0;
		impl_free(s, si, ended, NULL);
		s->impl = NULL;
		return rc;
	}
	s->enforcement = "full";
	mark_partial(s);
	return 0;
}

/* ------------------------------------------------------------ wait, stop, close */

/* What the command left at a guarded name is moved aside before the person's tools see it. */
static int seatbelt_wait(ows_session *s, ows_proc *proc, int timeout_ms, ows_error *err)
{
	int rc = ows__direct_wait(s, proc, timeout_ms, err);
	struct sb_impl *si = s->impl;
	if (rc == 1 && si) {
		ows__session_lock(s);
		ows__guard_sweep(si->watch, s->id, &s->moved_aside, &s->modes_restored, NULL);
		ows__session_unlock(s);
	}
	return rc;
}

static void seatbelt_stop(ows_session *s)
{
	struct sb_impl *si = s->impl;
	ows__direct_stop(s);
	if (si)
		ows__sb_sweep(si->marker_allow, si->marker_deny);
}

static int seatbelt_close(ows_session *s, ows_error *err)
{
	struct sb_impl *si = s->impl;
	if (!si)
		return 0;
	/* Everything under the profile first, then our own children reaped. */
	int swept = ows__sb_sweep(si->marker_allow, si->marker_deny);
	for (ows_proc *p = s->procs; p; p = p->next)
		if (!ows__proc_get_exit(p, NULL) && p->pid > 0) {
			kill(-p->pid, SIGKILL);
			ows__direct_wait(s, p, -1, NULL);
		}
	if (swept == 0)
		swept = ows__sb_sweep(si->marker_allow, si->marker_deny);
	/* Nothing under the profile runs any more: this sweep is the last word. */
	ows__guard_sweep(si->watch, s->id, &s->moved_aside, &s->modes_restored, NULL);
	int rc = 0;
	if (swept != 0)
		rc = ows__fail(err, OWS_ESYS, 0, si->pv.dir,
			       "run `owsbx machine sandbox cleanup` to end them",
			       "some of the session's processes could not be ended");
	int rc2 = impl_free(s, si, swept == 0, err);
	s->impl = NULL;
	return rc < 0 ? rc : rc2;
}

const ows__provider ows__seatbelt_provider = {
	.name = "seatbelt",
	.open = seatbelt_open,
	.spawn = seatbelt_spawn,
	.wait = seatbelt_wait,
	.kill = ows__direct_kill,
	.stop = seatbelt_stop,
	.close = seatbelt_close,
};
