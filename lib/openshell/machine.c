/*
 * The openshell provider's status rows, plan and setup (spec 002 and its
 * fresh-user notes): each row carries a `command` to run in a terminal apart
 * from a `hint` (a note) and `docs` (a link).  Setup does the steps itself, in
 * order: linger (as the person, else through the admin prefix), NVIDIA's
 * installer for the pinned release (its output as progress; Ctrl-C cancels
 * it), bind mounts in the gateway's config, the image.  Linger comes first:
 * the installer starts the gateway through the user's systemd manager, which
 * on WSL or a headless box runs only once linger is on.  Only where nothing
 * can ask for an administrator's password are linger and the installer
 * folded into one command to hand over.  A failed step undoes what setup
 * did before it (linger, when setup turned it on).  On a Mac there is no
 * linger and no administrator: Homebrew installs OpenShell as the person and
 * runs the gateway with brew services (NVIDIA's install.sh).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "openshell.h"
#include "oscli.h"

extern char **environ;

#ifdef __APPLE__
#define GATEWAY_RESTART "brew services restart nvidia/openshell/openshell"
#define HAS_LINGER 0
#else
#define GATEWAY_RESTART "systemctl --user restart openshell-gateway"
#define HAS_LINGER 1
#endif

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void read_out(int fd, char *out, size_t outlen)
{
	size_t n = 0;
	char sink[512];
	for (;;) {
		char *at = out && n + 1 < outlen ? out + n : sink;
		size_t room = out && n + 1 < outlen ? outlen - 1 - n : sizeof(sink);
		ssize_t r = read(fd, at, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (at != sink)
			n += (size_t)r;
	}
	if (out && outlen)
		out[n] = '\0';
}

static int cloexec_pipe(int p[2])
{
#ifdef __APPLE__
	/* No pipe2 on macOS: a child another thread forks in between may hold the write end,
	 * and a read then waits for that child too. */
	if (pipe(p) != 0)
		return -1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
#else
	return pipe2(p, O_CLOEXEC);
#endif
}

int ows__os_cmd(const char *const argv[], char *out, size_t outlen)
{
	int p[2];
	if (cloexec_pipe(p) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc == 0)
		read_out(p[0], out, outlen);
	else if (out && outlen)
		out[0] = '\0';
	close(p[0]);
	return rc == 0 ? wait_status(pid) : -1;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* The gateway's config file, as the gateway finds it (docs/reference/gateway-config.mdx). */
static void gateway_toml(char *buf, size_t len)
{
	const char *env = getenv("OPENSHELL_GATEWAY_CONFIG");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (env && env[0])
		snprintf(buf, len, "%s", env);
	else if (xdg && xdg[0])
		snprintf(buf, len, "%s/openshell/gateway.toml", xdg);
	else
		snprintf(buf, len, "%s/.config/openshell/gateway.toml", home ? home : "");
}

/* `enable_bind_mounts = true` under [openshell.drivers.docker] or [openshell.drivers.podman]
 * (docs/reference/sandbox-compute-drivers.mdx); the rest of TOML is not needed here. */
static bool bind_mounts_on(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[512];
	bool in_driver = false, on = false;
	while (!on && fgets(line, sizeof(line), f)) {
		char *l = line;
		while (isspace((unsigned char)*l))
			l++;
		char *hash = strchr(l, '#');
		if (hash)
			*hash = '\0';
		trim(l);
		if (l[0] == '[') {
			in_driver = strcmp(l, "[openshell.drivers.docker]") == 0 ||
				    strcmp(l, "[openshell.drivers.podman]") == 0;
			continue;
		}
		char key[64], val[64];
		if (in_driver && sscanf(l, " %63[a-z_] = %63s", key, val) == 2 &&
		    strcmp(key, "enable_bind_mounts") == 0)
			on = strcmp(val, "true") == 0;
	}
	fclose(f);
	return on;
}

/* systemd keeps the user's manager running after logout: logind's file, or logind's word
 * (`loginctl show-user`).  A Mac has no linger to need. */
static bool linger_on(const char *user)
{
	if (!HAS_LINGER)
		return true;
	char path[128], out[16] = "";
	snprintf(path, sizeof(path), "/var/lib/systemd/linger/%s", user);
	if (access(path, F_OK) == 0)
		return true;
	const char *argv[] = {"loginctl", "show-user", user, "--property=Linger", "--value", NULL};
	return ows__os_cmd(argv, out, sizeof(out)) == 0 && strncmp(out, "yes", 3) == 0;
}

void ows__os_facts_read(ows__os_facts *f)
{
	memset(f, 0, sizeof(*f));
	struct passwd *pw = getpwuid(getuid());
	snprintf(f->user, sizeof(f->user), "%s", pw ? pw->pw_name : "root");
	f->linger = linger_on(f->user);
	gateway_toml(f->gateway_toml, sizeof(f->gateway_toml));
	f->bind_mounts = bind_mounts_on(f->gateway_toml);
	const char *ver[] = {"openshell", "--version", NULL};
	f->installed = ows__os_cmd(ver, f->version, sizeof(f->version)) == 0;
	trim(f->version);
	if (f->installed) {
		const char *st[] = {"openshell", "status", NULL};
		f->gateway = ows__os_cmd(st, NULL, 0) == 0;
	}
	const char *img[] = {"docker", "image", "inspect", OWS__OS_IMAGE, NULL};
	f->image = ows__os_cmd(img, NULL, 0) == 0;
}

static bool is_wsl(void)
{
	char buf[512] = "";
	FILE *f = fopen("/proc/version", "re");
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	return strcasestr(buf, "microsoft") != NULL;
}

/*
 * How an administrator's step runs: `sudo -n` when this user may sudo without
 * a password, `pkexec` on a desktop that is not WSL (the system's own
 * password prompt), else "" (nothing can ask: the step is handed over).
 */
const char *ows__os_admin_prefix(void)
{
	if (getuid() == 0 || !HAS_LINGER) /* root, or a Mac: nothing needs an administrator */
		return "";
	const char *t[] = {"sudo", "-n", "true", NULL};
	if (ows__os_cmd(t, NULL, 0) == 0)
		return "sudo -n";
	const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
	if (((d && d[0]) || (w && w[0])) && !is_wsl())
		return "pkexec";
	return "";
}

/* The admin step as a command: under the prefix, or for the person to run with sudo. */
static void admin(char *buf, size_t len, const char *prefix, const char *cmd)
{
	if (getuid() == 0)
		snprintf(buf, len, "%s", cmd);
	else
		snprintf(buf, len, "%s %s", prefix[0] ? prefix : "sudo", cmd);
}

static void add_row(json_t *rows, const char *item, bool ok, const char *detail,
		    const char *command, const char *hint, const char *docs)
{
	json_t *r = json_pack("{s:s, s:s, s:s}", "item", item, "state", ok ? "ok" : "fail",
			      "detail", detail);
	if (!ok && command)
		json_object_set_new(r, "command", json_string(command));
	if (hint)
		json_object_set_new(r, "hint", json_string(hint));
	if (docs)
		json_object_set_new(r, "docs", json_string(docs));
	json_array_append_new(rows, r);
}

/* Linger and the installer in ONE command, linger first. */
static void install_command(char *buf, size_t len, const ows__os_facts *f, const char *prefix)
{
	char linger[256] = "";
	if (!f->linger) {
		char l[128];
		snprintf(l, sizeof(l), "loginctl enable-linger %s", f->user);
		admin(linger, sizeof(linger), prefix, l);
		strcat(linger, " && ");
	}
	snprintf(buf, len, "%scurl -LsSf %s | OPENSHELL_VERSION=v%s sh", linger, OWS__OS_INSTALLER,
		 OWS__OS_VERSION);
}

static json_t *status_rows(const ows__os_facts *f, const char *prefix)
{
	json_t *rows = json_array();
	char cmd[PATH_MAX + 1024], detail[PATH_MAX + 128], l[128];
	snprintf(l, sizeof(l), "loginctl enable-linger %s", f->user);
	admin(cmd, sizeof(cmd), prefix, l);
	add_row(rows, "linger", f->linger,
		!HAS_LINGER ? "not needed: brew services keeps the gateway running"
		: f->linger ? "the gateway keeps running after logout"
			    : "the gateway would stop at logout (no linger)",
		cmd, "comes first: NVIDIA's installer starts the gateway through your systemd manager",
		OWS__OS_DOCS "about/installation");
	install_command(cmd, sizeof(cmd), f, prefix);
	snprintf(detail, sizeof(detail), "%s%s", f->installed ? f->version : "not installed",
		 f->installed && !strstr(f->version, OWS__OS_VERSION)
			 ? " (tested with " OWS__OS_VERSION ")" : "");
	add_row(rows, "openshell", f->installed && strstr(f->version, OWS__OS_VERSION), detail, cmd,
		"OpenShell " OWS__OS_VERSION ", the release this provider is tested against",
		OWS__OS_DOCS "about/installation");
	add_row(rows, "gateway", f->gateway, f->gateway ? "running" : "not running",
		GATEWAY_RESTART, NULL, OWS__OS_DOCS "about/installation");
	snprintf(detail, sizeof(detail), "%s in %s", f->bind_mounts ? "allowed" : "not allowed",
		 f->gateway_toml);
	snprintf(cmd, sizeof(cmd),
		 "printf '[openshell.drivers.docker]\\nenable_bind_mounts = true\\n' >> %s && "
		 GATEWAY_RESTART, f->gateway_toml);
	add_row(rows, "bind-mounts", f->bind_mounts, detail, cmd,
		"that is how the session's folders reach a sandbox",
		OWS__OS_DOCS "reference/sandbox-compute-drivers");
	add_row(rows, "image", f->image, f->image ? OWS__OS_IMAGE : "not downloaded: " OWS__OS_IMAGE,
		"docker pull " OWS__OS_IMAGE, "about 5 GB, downloaded once",
		OWS__OS_DOCS "sandboxes/manage-sandboxes");
	return rows;
}

int ows__os_status_json(char **out, ows_error *err)
{
	ows__os_facts f;
	ows__os_facts_read(&f);
	json_t *rows = status_rows(&f, ows__os_admin_prefix());
	int fails = 0;
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r)
		fails += strcmp(json_string_value(json_object_get(r, "state")), "ok") != 0;
	json_t *j = json_pack("{s:s, s:o}", "provider", "openshell", "rows", rows);
	*out = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!*out)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	return fails;
}

int ows__os_refuse(const ows__os_facts *f, ows_error *err)
{
	if (!f->installed)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "openshell",
				 "run the command of the openshell row of "
				 "`owsbx machine sandbox status --provider openshell`",
				 "OpenShell is not installed");
	if (!f->gateway)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "openshell",
				 "run `" GATEWAY_RESTART "`",
				 "the OpenShell gateway is not running");
	if (!f->bind_mounts)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, f->gateway_toml,
				 "set enable_bind_mounts = true under [openshell.drivers.docker] "
				 "and restart the gateway",
				 "the OpenShell gateway does not allow bind mounts");
	if (!f->image)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, OWS__OS_IMAGE,
				 "run `docker pull " OWS__OS_IMAGE "`",
				 "the sandbox base image is not downloaded yet");
	return 0;
}

/* ows_machine_status_of(c, "openshell"): the rows above, whatever the machine's config. */
static int os_status(const ows_config *c, char **status, ows_error *err)
{
	if (!status)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "status_json is NULL");
	return ows__os_status_json(status, err);
}

/* ------------------------------------------------------------------ setup */

static void say(const ows_setup_options *o, const char *step)
{
	if (o->progress)
		o->progress(o->progress_ctx, step);
}

/* enable_bind_mounts = true under [openshell.drivers.docker]: the table's line added (after its
 * header, or the table at the end); a file that already sets the key is handed over. */
static int allow_bind_mounts(const ows__os_facts *f, ows_error *err)
{
	const char *hint = "set enable_bind_mounts = true under [openshell.drivers.docker], then "
			   "run `" GATEWAY_RESTART "`";
	FILE *in = fopen(f->gateway_toml, "re");
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		if (in)
			fclose(in);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	bool added = false, has_key = false;
	char line[1024];
	while (in && fgets(line, sizeof(line), in)) {
		has_key |= strstr(line, "enable_bind_mounts") != NULL;
		fputs(line, mem);
		if (!added && strncmp(line, "[openshell.drivers.docker]", 26) == 0)
			fputs("enable_bind_mounts = true\n", mem), added = true;
	}
	if (!added)
		fputs("\n[openshell.drivers.docker]\nenable_bind_mounts = true\n", mem);
	fclose(mem);
	if (in)
		fclose(in);
	int rc = 0;
	if (has_key)
		rc = ows__fail(err, OWS_ECONFIG, 0, f->gateway_toml, hint,
			       "the gateway's config sets enable_bind_mounts already");
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.owsbx", f->gateway_toml);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", f->gateway_toml);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	FILE *out = NULL;
	if (rc == 0 && (mkdir(dir, 0700) == 0 || errno == EEXIST) && (out = fopen(tmp, "we")) &&
	    fputs(text, out) >= 0 && fclose(out) == 0 && rename(tmp, f->gateway_toml) == 0)
		out = NULL;
	else if (rc == 0) {
		rc = ows__fail_sys(err, f->gateway_toml, hint, "cannot write the gateway's config");
		if (out)
			fclose(out);
		unlink(tmp);
	}
	free(text);
	return rc;
}

/*
 * Runs argv with stdout and stderr into `progress`, line by line; the last
 * line, said or not, into last (what a failed command says it failed of).
 * It runs in this process group: Ctrl-C in the terminal cancels it.  Its
 * exit status, 128+N for a signal, or -1 when it could not start.
 */
static int stream(const ows_setup_options *o, const char *const argv[], char *last, size_t len)
{
	last[0] = '\0';
	int p[2];
	if (cloexec_pipe(p) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		snprintf(last, len, "cannot start %s: %s", argv[0], strerror(rc));
		return -1;
	}
	FILE *f = fdopen(p[0], "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		trim(line);
		if (!line[0])
			continue;
		say(o, line);
		size_t n = strlen(line) < len - 1 ? strlen(line) : len - 1; /* the line's head */
		memcpy(last, line, n);
		last[n] = '\0';
	}
	if (f)
		fclose(f);
	else
		close(p[0]);
	return wait_status(pid);
}

static int pull_image(const ows_setup_options *o, ows_error *err)
{
	const char *argv[] = {"docker", "pull", OWS__OS_IMAGE, NULL};
	char last[256];
	int st = stream(o, argv, last, sizeof(last));
	if (st != 0)
		return ows__fail(err, st < 0 ? OWS_ESPAWN : OWS_ESYS, 0, OWS__OS_IMAGE,
				 st < 0 ? "install Docker or Podman"
					: "run `docker pull " OWS__OS_IMAGE "`",
				 "docker pull did not finish (status %d): %s", st, last);
	return 0;
}

/* The admin prefix's words ("sudo", "-n"; "pkexec"), then cmd's, into argv (cap of them). */
static void under_prefix(const char *prefix, const char *const cmd[], const char **argv,
			 size_t cap, char *words, size_t wlen)
{
	size_t n = 0;
	snprintf(words, wlen, "%s", prefix);
	for (char *w = strtok(words, " "); w && n + 1 < cap; w = strtok(NULL, " "))
		argv[n++] = w;
	for (size_t i = 0; cmd[i] && n + 1 < cap; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
}

/* loginctl VERB USER: as the person (logind lets a person in a session set their own), else
 * under the admin prefix; true once linger is as wanted. */
static bool set_linger(const ows__os_facts *f, const char *prefix, bool on)
{
	const char *cmd[] = {"loginctl", on ? "enable-linger" : "disable-linger", f->user, NULL};
	if (ows__os_cmd(cmd, NULL, 0) == 0 && linger_on(f->user) == on)
		return true;
	if (!prefix[0])
		return false;
	const char *argv[8];
	char words[32];
	under_prefix(prefix, cmd, argv, OWS__ARRAY_LEN(argv), words, sizeof(words));
	return ows__os_cmd(argv, NULL, 0) == 0 && linger_on(f->user) == on;
}

static bool installed_pinned(const ows__os_facts *f)
{
	return f->installed && strstr(f->version, OWS__OS_VERSION);
}

/* Where nothing can ask for an administrator's password, linger and the installer are one
 * command handed over (WSL): nothing is done, and setup says what to run. */
static bool handed_over(const ows__os_facts *f, const char *prefix)
{
	return HAS_LINGER && getuid() != 0 && !prefix[0] && (!f->linger || !installed_pinned(f));
}

/*
 * NVIDIA's installer, downloaded with curl into a folder of our own, then run
 * with OPENSHELL_VERSION pinned: on Linux under the admin prefix (it installs
 * a package; SUDO_USER names the person it sets the gateway up for), on a
 * Mac as the person (Homebrew).  Its output is the progress.
 */
static int run_installer(const ows_setup_options *o, const ows__os_facts *f, const char *prefix,
			 ows_error *err)
{
	char cmd[PATH_MAX + 1024];
	install_command(cmd, sizeof(cmd), f, prefix);
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], script[PATH_MAX + 16], last[256];
	snprintf(dir, sizeof(dir), "%s/owsbx-openshell.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return ows__fail_sys(err, dir, NULL, "cannot make a folder for NVIDIA's installer");
	snprintf(script, sizeof(script), "%s/install.sh", dir);
	say(o, "downloading NVIDIA's installer: " OWS__OS_INSTALLER);
	const char *get[] = {"curl", "-LsSf", "--proto", "=https", "-o", script, OWS__OS_INSTALLER,
			     NULL};
	int st = stream(o, get, last, sizeof(last));
	int rc = 0;
	if (st != 0)
		rc = ows__fail(err, OWS_ESYS, 0, OWS__OS_INSTALLER,
			       "check the network and run setup again, or run the install command "
			       "yourself",
			       "setup stopped at the installer: it could not be downloaded (%s)",
			       last[0] ? last : "curl did not start");
	if (rc == 0) {
		say(o, "running NVIDIA's installer for OpenShell " OWS__OS_VERSION);
		char user_env[96];
		snprintf(user_env, sizeof(user_env), "SUDO_USER=%s", f->user);
		/* pkexec keeps no SUDO_USER: without it the installer would set the gateway up
		 * for root; sudo sets it itself. */
		bool pk = strcmp(prefix, "pkexec") == 0;
		const char *run[] = {"env", pk ? user_env : "OPENSHELL_VERSION=v" OWS__OS_VERSION,
				     pk ? "OPENSHELL_VERSION=v" OWS__OS_VERSION : "sh",
				     pk ? "sh" : script, pk ? script : NULL, NULL};
		const char *argv[12];
		char words[32];
		under_prefix(HAS_LINGER && getuid() != 0 ? prefix : "", run, argv,
			     OWS__ARRAY_LEN(argv), words, sizeof(words));
		st = stream(o, argv, last, sizeof(last));
		if (st != 0)
			rc = ows__fail(err, OWS_ESYS, 0, "openshell", cmd,
				       "setup stopped at the installer: it %s (status %d): %s",
				       st > 128 ? "was cancelled" : "failed", st, last);
	}
	unlink(script);
	rmdir(dir);
	return rc;
}

/* Linger, then the installer; linger undone when setup turned it on and the installer
 * failed: nothing is left half-done. */
static int install(const ows_setup_options *o, const ows__os_facts *f, const char *prefix,
		   ows_error *err)
{
	bool made_linger = false;
	if (!f->linger) {
		say(o, "turning linger on: loginctl enable-linger (your systemd manager, and the "
		       "gateway, keep running after logout)");
		if (!set_linger(f, prefix, true)) {
			char cmd[256], l[128];
			snprintf(l, sizeof(l), "loginctl enable-linger %s", f->user);
			admin(cmd, sizeof(cmd), prefix, l);
			return ows__fail(err, OWS_EPERM, 0, f->user, cmd,
					 "setup stopped at linger: it could not be turned on; run "
					 "the command below, then setup again");
		}
		made_linger = true;
	}
	if (installed_pinned(f))
		return 0;
	int rc = run_installer(o, f, prefix, err);
	if (rc < 0 && made_linger) {
		say(o, "undoing linger, which setup turned on");
		set_linger(f, prefix, false);
	}
	return rc;
}

/* The steps setup would take, in order, as {"item", "change"}. */
static json_t *plan_changes(const ows__os_facts *f, const char *prefix)
{
	json_t *c = json_array();
	char text[PATH_MAX + 256];
	if (!f->linger) {
		snprintf(text, sizeof(text), "loginctl enable-linger %s, as you or through %s: your "
			 "systemd manager keeps running after logout; first, because NVIDIA's "
			 "installer starts the gateway through it",
			 f->user, prefix[0] ? prefix : "sudo");
		json_array_append_new(c, json_pack("{s:s, s:s}", "item", "linger", "change", text));
	}
	if (!installed_pinned(f)) {
		snprintf(text, sizeof(text), "NVIDIA's installer for OpenShell " OWS__OS_VERSION
			 " (" OWS__OS_INSTALLER ", OPENSHELL_VERSION=v" OWS__OS_VERSION "), %s",
			 !HAS_LINGER ? "as you: Homebrew installs it"
			 : getuid() == 0 ? "as root" : prefix[0] ? prefix : "sudo");
		json_array_append_new(c, json_pack("{s:s, s:s}", "item", "openshell", "change", text));
	}
	if (!f->bind_mounts) {
		snprintf(text, sizeof(text), "enable_bind_mounts = true under "
			 "[openshell.drivers.docker] in %s: how the session's folders reach a sandbox",
			 f->gateway_toml);
		json_array_append_new(c, json_pack("{s:s, s:s}", "item", "bind-mounts", "change", text));
	}
	if (!f->image)
		json_array_append_new(c, json_pack("{s:s, s:s}", "item", "image", "change",
						   "docker pull " OWS__OS_IMAGE " (about 5 GB, once)"));
	return c;
}

static int os_plan(const ows_config *c, const ows_setup_options *o, char **plan, ows_error *err)
{
	if (!plan)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "plan_json is NULL");
	ows__os_facts f;
	ows__os_facts_read(&f);
	const char *prefix = ows__os_admin_prefix();
	char cmd[PATH_MAX + 1024] = "";
	bool hand = handed_over(&f, prefix);
	if (hand)
		install_command(cmd, sizeof(cmd), &f, prefix);
	json_t *notes = json_array();
	if (hand)
		json_array_append_new(notes, json_string("nothing here can ask for an administrator's "
							 "password: run this command in a terminal, "
							 "then setup again"));
	json_t *j = json_pack("{s:s, s:o, s:o, s:s, s:b, s:s}", "provider", "openshell", "changes",
			      plan_changes(&f, prefix), "notes", notes, "command", cmd, "blocked",
			      hand, "then", "run `owsbx machine sandbox status --provider openshell`");
	*plan = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return *plan ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

static int os_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	ows__os_facts f;
	ows__os_facts_read(&f);
	const char *prefix = ows__os_admin_prefix();
	char cmd[PATH_MAX + 1024];
	if (handed_over(&f, prefix)) {
		install_command(cmd, sizeof(cmd), &f, prefix);
		return ows__fail(err, OWS_EUNSUPPORTED, 0, "openshell", cmd,
				 "OpenShell " OWS__OS_VERSION " is not set up and nothing here can "
				 "ask for an administrator's password: run the command below, then "
				 "setup again");
	}
	int rc = install(o, &f, prefix, err);
	if (rc == 0 && !installed_pinned(&f))
		ows__os_facts_read(&f); /* what the installer made: the gateway, its config */
	if (rc == 0 && !installed_pinned(&f))
		rc = ows__fail(err, OWS_ESYS, 0, "openshell", OWS__OS_DOCS "about/installation",
			       "the installer finished, but `openshell --version` does not say "
			       OWS__OS_VERSION " (it says: %s)", f.installed ? f.version : "nothing");
	if (rc == 0 && !f.bind_mounts) {
		say(o, "allowing bind mounts in the gateway's config");
		rc = allow_bind_mounts(&f, err);
		if (rc == 0)
			say(o, "bind mounts allowed: restart the gateway (" GATEWAY_RESTART ")");
	}
	if (rc == 0 && !f.image) {
		say(o, "downloading the base image (about 5 GB, once): docker pull " OWS__OS_IMAGE);
		rc = pull_image(o, err);
	}
	if (rc == 0 && !f.gateway)
		rc = ows__fail(err, OWS_EUNSUPPORTED, 0, "openshell", "run `" GATEWAY_RESTART "`",
			       "the OpenShell gateway is not running");
	return rc;
}

/* The openshell provider's setup (lib/machine.c): it installs and removes nothing the
 * machine's own setup records, so remove, cleanup and the report are the machine's. */
const ows__machine_ops ows__openshell_machine = {
	.plan = os_plan,
	.setup = os_setup,
	.status = os_status,
};
