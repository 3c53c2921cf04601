/*
 * The Seatbelt profile of a `seatbelt` session (lib/darwin/profile.h).
 *
 * Deny by default, then grant in this order, since in Seatbelt the last
 * rule that matches an operation decides it:
 *   1. what every process needs: fork and exec, signals and process
 *      information inside this sandbox only, a few sysctls and Mach
 *      services, the devices a shell uses;
 *   2. the system, read only;
 *   3. the session's paths, shallowest first, so that a read-only folder
 *      inside a read-write one is read only and the other way round (as the
 *      Linux view's nested binds are);
 *   4. the private folder (HOME, TMPDIR, the tool caches), always rw;
 *   5. the folders above those paths: metadata only (below);
 *   6. the network of the mode;
 *   7. what must win over every grant above: the guard, set-ID modes, and
 *      last the lifetime markers.
 *
 * Every path of the spec is a parameter, (param "NAME"); the text holds only
 * the system's own paths, which are constants here.
 *
 * Learned from, not copied: Codex's seatbelt policies (openai/codex,
 * codex-rs/core/src/seatbelt*.sbpl) and Anthropic's sandbox-runtime
 * (src/sandbox/macos-sandbox-utils.ts).  Where this profile is stricter
 * than both (no cfprefsd, no keychain, no kern.proc sysctls, no unix
 * socket outside the session), the comment says why.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darwin/profile.h"

/* ------------------------------------------------------------ validation */

static int bad_path(ows_error *err, const char *what, const char *path, const char *why)
{
	return ows__fail(err, OWS_EINVAL, 0, path, "name the path by its absolute, canonical form",
			 "seatbelt profile: %s %s", what, why);
}

/* `inner` is `outer` itself or below it (component-wise: /x/ab is not below /x/a). */
static bool path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

/*
 * macOS's /tmp, /var and /etc are symbolic links into /private, and Seatbelt
 * matches the path the kernel resolved: a rule on /tmp/x would never match.
 */
static int check_not_a_link(const char *path, const char *what, ows_error *err)
{
	static const char *const links[] = { "/tmp", "/var", "/etc" };
	for (size_t i = 0; i < OWS__ARRAY_LEN(links); i++)
		if (path_within(path, links[i]))
			return ows__fail(err, OWS_EINVAL, 0, path,
					 "name it under /private, as realpath(3) gives it",
					 "seatbelt profile: %s is under the symbolic link %s", what,
					 links[i]);
	return 0;
}

/*
 * Absolute, not the root, no empty, "." or ".." component (so no "//" and no
 * trailing "/"): the form in which Seatbelt's literal and subpath filters
 * compare paths with what the kernel looks up.
 */
static int check_path(const char *path, const char *what, ows_error *err)
{
	if (!path || !*path)
		return bad_path(err, what, NULL, "is missing");
	if (path[0] != '/')
		return bad_path(err, what, path, "is not absolute");
	if (!path[1])
		return bad_path(err, what, path, "is the root, which would grant everything");
	for (const char *c = path + 1;; ) {
		const char *end = strchr(c, '/');
		size_t n = end ? (size_t)(end - c) : strlen(c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return bad_path(err, what, path, "has an empty, \".\" or \"..\" component");
		if (!end)
			return check_not_a_link(path, what, err);
		c = end + 1;
	}
}

static size_t path_depth(const char *path)
{
	size_t d = 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

static int check_spec(const ows__sb_spec *spec, ows_error *err)
{
	int rc;
	if (spec->net != OWS_NET_NONE && spec->net != OWS_NET_ALLOWLIST && spec->net != OWS_NET_OPEN)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "resolve the session's network mode first",
				 "seatbelt profile: network mode %d is not none, allowlist or open",
				 (int)spec->net);
	if (spec->net == OWS_NET_ALLOWLIST && (spec->proxy_port < 1 || spec->proxy_port > 65535))
		return ows__fail(err, OWS_EINVAL, 0, NULL, "start the session's proxy first",
				 "seatbelt profile: proxy port %d is not in 1-65535", spec->proxy_port);
	if ((rc = check_path(spec->private_dir, "the private folder", err)) < 0 ||
	    (rc = check_path(spec->marker_allow, "the allow marker", err)) < 0 ||
	    (rc = check_path(spec->marker_deny, "the deny marker", err)) < 0)
		return rc;
	if (spec->npaths && !spec->paths)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "seatbelt profile: paths is NULL");
	for (size_t i = 0; i < spec->npaths; i++)
		if ((rc = check_path(spec->paths[i].path, "the session path", err)) < 0)
			return rc;
	if (spec->nguarded && !spec->guarded)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "seatbelt profile: guarded is NULL");
	for (size_t g = 0; g < spec->nguarded; g++) {
		const char *p = spec->guarded[g].path;
		if ((rc = check_path(p, "the guarded name", err)) < 0)
			return rc;
		bool inside = false;
		for (size_t i = 0; i < spec->npaths && !inside; i++)
			inside = spec->paths[i].writable && !spec->paths[i].file &&
				 strcmp(p, spec->paths[i].path) != 0 && path_within(p, spec->paths[i].path);
		if (!inside)
			return bad_path(err, "the guarded name", p, "is not inside a writable folder");
	}
	return 0;
}

/* ------------------------------------------------------------ the render */

typedef struct render {
	ows__strv lines;  /* the text, one line each */
	ows__strv params; /* "NAME=VALUE" */
	ows__strv above;  /* the folders above the paths, once each */
	ows_error *err;
	int rc;           /* the first failure; every later call does nothing */
} render;

static void line(render *r, const char *text)
{
	if (r->rc == 0)
		r->rc = ows__strv_push(&r->lines, text, r->err);
}

static void linef(render *r, const char *fmt, ...) OWS__PRINTF(2, 3);
static void linef(render *r, const char *fmt, ...)
{
	if (r->rc)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof buf) /* every format here is short and fixed */
		r->rc = ows__fail(r->err, OWS_EINVAL, 0, NULL, NULL, "seatbelt profile: line too long");
	else
		line(r, buf);
}

static void lines(render *r, const char *const *text, size_t n)
{
	for (size_t i = 0; i < n; i++)
		line(r, text[i]);
}

static void param(render *r, const char *name, const char *value)
{
	if (r->rc == 0)
		r->rc = ows__strv_pushf(&r->params, r->err, "%s=%s", name, value);
}

/*
 * What every process needs, whatever the session.
 *
 * Process information and signals stay inside this sandbox, so `ps` and
 * `pgrep` do not run (they read every process through kern.proc sysctls and
 * proc_info, neither granted): a known limit of the spec.  kern.proc.pid.*,
 * which Codex grants, is left out for the same reason: it describes any pid.
 *
 * No user-preference-read and no cfprefsd: cfprefsd reads the person's
 * ~/Library/Preferences on the caller's behalf, a way around the wall.
 */
static const char *const base_rules[] = {
	"(version 1)",
	"(deny default)",
	"",
	"; Processes: a command may start others; it sees and signals only its own sandbox.",
	"(allow process-fork)",
	"(allow signal (target same-sandbox))",
	"(allow process-info* (target same-sandbox))",
	"; host_processor_info() (libuv's os.cpus(), npm's job count).",
	"(allow mach-host*)",
	"; Python's multiprocessing locks; openpty() for shells and pexpect.",
	"(allow ipc-posix-sem)",
	"(allow pseudo-tty)",
	"",
	"; What tools read about the machine; nothing about other processes.",
	"(allow sysctl-read",
	"\t(sysctl-name-prefix \"hw.\")",
	"\t(sysctl-name-prefix \"machdep.cpu.\")",
	"\t(sysctl-name \"machdep.ptrauth_enabled\")",
	"\t(sysctl-name \"kern.argmax\")",
	"\t(sysctl-name \"kern.hostname\")",
	"\t(sysctl-name \"kern.maxfiles\")",
	"\t(sysctl-name \"kern.maxfilesperproc\")",
	"\t(sysctl-name \"kern.maxproc\")",
	"\t(sysctl-name \"kern.ngroups\")",
	"\t(sysctl-name \"kern.osproductversion\")",
	"\t(sysctl-name \"kern.osrelease\")",
	"\t(sysctl-name \"kern.ostype\")",
	"\t(sysctl-name \"kern.osvariant_status\")",
	"\t(sysctl-name \"kern.osversion\")",
	"\t(sysctl-name \"kern.secure_kernel\")",
	"\t(sysctl-name \"kern.usrstack64\")",
	"\t(sysctl-name \"kern.version\")",
	"\t(sysctl-name \"sysctl.proc_cputype\")",
	"\t(sysctl-name \"sysctl.proc_translated\")",
	"\t(sysctl-name \"vm.loadavg\")",
	"\t(sysctl-name \"security.mac.lockdown_mode_state\"))",
	"",
	"; Mach services: user and group names (getpwuid, id, ssh, git), membership,",
	"; notify(3) (time zone changes), the per-user temp folder lookup, and the",
	"; system log.  Not com.apple.SecurityServer nor com.apple.securityd.xpc",
	"; (securityd: the person's keychain), not cfprefsd (the person's preferences).",
	"(allow mach-lookup",
	"\t(global-name \"com.apple.system.opendirectoryd.libinfo\")",
	"\t(global-name \"com.apple.system.opendirectoryd.membership\")",
	"\t(global-name \"com.apple.system.DirectoryService.libinfo_v1\")",
	"\t(global-name \"com.apple.system.notification_center\")",
	"\t(global-name \"com.apple.bsd.dirhelper\")",
	"\t(global-name \"com.apple.logd\")",
	"\t(global-name \"com.apple.system.logger\"))",
	"",
};

/*
 * The system, read only: programs and their libraries (file-map-executable is
 * what dyld needs to map them; file-test-existence is access(2)).  /private/etc
 * is where /etc points; /private/var/db/timezone holds localtime's target;
 * /private/var/select/sh is what /bin/sh reads to choose its shell;
 * /private/var/db/xcode_select_link is where xcrun (behind /usr/bin/git,
 * cc, make) finds the developer tools.  The rest of /private/var/db (sudo's
 * time stamps, the directory's records) stays out.  The
 * symbolic links /etc, /tmp, /var and the folders above the targets are
 * looked up, not listed.  The root is listed (getcwd, and nothing of the
 * person's is there).
 */
static const char *const system_rules[] = {
	"; The system, read only.",
	"(allow file-read* file-test-existence file-map-executable process-exec",
	"\t(subpath \"/usr\")",
	"\t(subpath \"/bin\")",
	"\t(subpath \"/sbin\")",
	"\t(subpath \"/System\")",
	"\t(subpath \"/Library\")",
	"\t(subpath \"/opt\")",
	"\t(subpath \"/Applications\")",
	"\t(subpath \"/private/etc\")",
	"\t(subpath \"/private/var/db/timezone\")",
	"\t(subpath \"/private/var/select\")",
	"\t(literal \"/private/var/db/xcode_select_link\"))",
	"(allow file-read* file-test-existence (literal \"/\"))",
	"(allow file-read-metadata file-test-existence",
	"\t(literal \"/etc\")",
	"\t(literal \"/tmp\")",
	"\t(literal \"/var\")",
	"\t(literal \"/private\")",
	"\t(literal \"/private/var\")",
	"\t(literal \"/private/var/db\")",
	"\t(literal \"/dev\"))",
	"",
	"; Devices: the null and random ones, the terminal, the descriptors (/dev/fd:",
	"; bash's <(...)), dtrace's helper that dyld opens, and new pseudo-terminals.",
	"(allow file-read* file-write-data file-ioctl file-test-existence",
	"\t(literal \"/dev/null\")",
	"\t(literal \"/dev/zero\")",
	"\t(literal \"/dev/tty\")",
	"\t(literal \"/dev/dtracehelper\")",
	"\t(literal \"/dev/ptmx\"))",
	"; A pseudo-terminal is opened by name only when made inside (openpty() marks",
	"; it with the extension): never another Terminal tab, whose input would be",
	"; readable.  The terminal the command was given (a descriptor, already open)",
	"; takes ioctls, so that isatty() and stty work; ioctl needs a descriptor, and",
	"; another terminal's cannot be opened.",
	"(allow file-read* file-write-data file-ioctl file-test-existence",
	"\t(require-all",
	"\t\t(regex #\"^/dev/ttys[0-9]+$\")",
	"\t\t(extension \"com.apple.sandbox.pty\")))",
	"(allow file-ioctl (regex #\"^/dev/ttys[0-9]+$\"))",
	"(allow file-read* file-test-existence",
	"\t(literal \"/dev/random\")",
	"\t(literal \"/dev/urandom\"))",
	"(allow file-read* file-write-data file-test-existence",
	"\t(subpath \"/dev/fd\"))",
	"",
};

/* Inside a session path or the private folder: granted there already. */
static bool covered(const ows__sb_spec *spec, const char *path)
{
	if (path_within(path, spec->private_dir))
		return true;
	for (size_t i = 0; i < spec->npaths; i++)
		if (!spec->paths[i].file && path_within(path, spec->paths[i].path))
			return true;
	return false;
}

static void add_above(render *r, const ows__sb_spec *spec, const char *path)
{
	char *copy = ows__strdup(path, r->err);
	if (!copy) {
		r->rc = r->rc ? r->rc : OWS_ENOMEM;
		return;
	}
	for (char *slash = strrchr(copy, '/'); r->rc == 0 && slash && slash != copy;
	     slash = strrchr(copy, '/')) {
		*slash = '\0';
		bool seen = covered(spec, copy);
		for (size_t i = 0; i < r->above.len && !seen; i++)
			seen = strcmp(r->above.v[i], copy) == 0;
		if (!seen)
			r->rc = ows__strv_push(&r->above, copy, r->err);
	}
	free(copy);
}

/*
 * One session path.  A read-only one also refuses writes and unix sockets
 * explicitly, so that it stays read only inside a read-write folder named
 * before it; a read-write folder may hold unix sockets (a test server, the
 * runner's own).  Linux keeps the same: no listening socket in a read-only
 * folder is reached.
 */
static void path_rules(render *r, const ows__sb_path *p, size_t i)
{
	char name[32];
	snprintf(name, sizeof name, "PATH_%zu", i);
	param(r, name, p->path);
	const char *filter = p->file ? "literal" : "subpath";
	if (p->writable)
		linef(r, "(allow file-read* file-write* file-test-existence file-map-executable "
			 "process-exec (%s (param \"%s\")))", filter, name);
	else
		linef(r, "(allow file-read* file-test-existence file-map-executable process-exec "
			 "(%s (param \"%s\")))", filter, name);
	if (!p->writable)
		linef(r, "(deny file-write* (%s (param \"%s\")))", filter, name);
	if (p->file)
		return;
	linef(r, "(%s network-bind (local unix-socket (subpath (param \"%s\"))))",
	      p->writable ? "allow" : "deny", name);
	linef(r, "(%s network-outbound (remote unix-socket (subpath (param \"%s\"))))",
	      p->writable ? "allow" : "deny", name);
}

/* Shallowest first; equal depths keep the spec's order (insertion sort: n is small). */
static size_t *order_by_depth(const ows__sb_spec *spec, ows_error *err)
{
	size_t *ix = ows__calloc(spec->npaths, sizeof *ix, err);
	if (!ix)
		return NULL;
	for (size_t i = 0; i < spec->npaths; i++) {
		size_t j = i, d = path_depth(spec->paths[i].path);
		for (; j > 0 && path_depth(spec->paths[ix[j - 1]].path) > d; j--)
			ix[j] = ix[j - 1];
		ix[j] = i;
	}
	return ix;
}

static void session_rules(render *r, const ows__sb_spec *spec)
{
	size_t *ix = order_by_depth(spec, r->err);
	if (!ix) {
		r->rc = OWS_ENOMEM;
		return;
	}
	line(r, "; The session's paths, shallowest first: the deeper one decides.");
	for (size_t k = 0; k < spec->npaths; k++) {
		path_rules(r, &spec->paths[ix[k]], k);
		add_above(r, spec, spec->paths[ix[k]].path);
	}
	free(ix);
	line(r, "");
	line(r, "; The private folder: HOME, TMPDIR, the tool caches, the runner's socket.");
	param(r, "PRIVATE", spec->private_dir);
	add_above(r, spec, spec->private_dir);
	line(r, "(allow file-read* file-write* file-test-existence file-map-executable process-exec "
		"(subpath (param \"PRIVATE\")))");
	line(r, "(allow network-bind (local unix-socket (subpath (param \"PRIVATE\"))))");
	line(r, "(allow network-outbound (remote unix-socket (subpath (param \"PRIVATE\"))))");
	line(r, "");
}

/*
 * The folders above the session's paths (/Users, /Users/NAME, /private/tmp):
 * their metadata only.  Tools stat every parent (realpath, getcwd, git and
 * node walking up for .git and node_modules, Python's site setup) and fail
 * when one is refused; listing one (file-read-data on a folder) is refused,
 * so the home's names stay unknown, and so do the other sessions' private
 * folders beside ours in /private/tmp.  What a stat tells is that the folder
 * exists, its owner, mode and times: the path is already known to the
 * session.
 */
static void above_rules(render *r)
{
	if (r->above.len == 0)
		return;
	line(r, "; The folders above those paths: looked up, never listed.");
	line(r, "(allow file-read-metadata file-test-existence");
	for (size_t i = 0; i < r->above.len; i++) {
		char name[32];
		snprintf(name, sizeof name, "ABOVE_%zu", i);
		param(r, name, r->above.v[i]);
		linef(r, "\t(literal (param \"%s\"))%s", name, i + 1 == r->above.len ? ")" : "");
	}
	line(r, "");
}

/*
 * The network.  In every mode a unix socket can be made (socketpair, and the
 * session's own sockets above) but reaches nothing outside the session: not
 * the person's ssh-agent, docker or session sockets.
 *
 * none: nothing else.  No DNS either: mDNSResponder's socket and
 * configd are not granted, since a name lookup is itself a way out.
 *
 * allowlist: one TCP connection target, the session proxy on the loopback;
 * the proxy resolves names, so no DNS.  TLS trust (trustd) is granted because
 * tools that verify certificates through Security.framework (Go, Swift, Rust's
 * native-tls) fail without it; trustd may fetch a missing intermediate or OCSP
 * answer on the caller's behalf, outside the proxy, which a Mac test must
 * measure (scripts/macos-check.sh).  Not ocspd, not networkd.
 *
 * open: any IP address, in and out, with DNS (mDNSResponder's socket, the
 * resolver configuration) and what Network.framework and trust need.
 */
static const char *const net_common[] = {
	"; The network.",
	"(allow system-socket (socket-domain AF_UNIX))",
};

static const char *const net_trust[] = {
	"(allow mach-lookup",
	"\t(global-name \"com.apple.trustd\")",
	"\t(global-name \"com.apple.trustd.agent\"))",
};

static const char *const net_open[] = {
	"(allow network-outbound (remote ip \"*:*\"))",
	"(allow network-bind network-inbound (local ip \"*:*\"))",
	"(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))",
	"(allow file-read* file-test-existence (literal \"/private/var/run/resolv.conf\"))",
	"(allow mach-lookup",
	"\t(global-name \"com.apple.SystemConfiguration.DNSConfiguration\")",
	"\t(global-name \"com.apple.SystemConfiguration.configd\")",
	"\t(global-name \"com.apple.networkd\")",
	"\t(global-name \"com.apple.ocspd\"))",
	"(allow sysctl-read (sysctl-name-prefix \"net.routetable.\"))",
};

static void net_rules(render *r, const ows__sb_spec *spec)
{
	lines(r, net_common, OWS__ARRAY_LEN(net_common));
	if (spec->net == OWS_NET_ALLOWLIST) {
		linef(r, "(allow network-outbound (remote tcp \"localhost:%d\"))", spec->proxy_port);
		lines(r, net_trust, OWS__ARRAY_LEN(net_trust));
	} else if (spec->net == OWS_NET_OPEN) {
		lines(r, net_open, OWS__ARRAY_LEN(net_open));
		lines(r, net_trust, OWS__ARRAY_LEN(net_trust));
	}
	line(r, "");
}

/*
 * The guard, as lib/posix/guard.c plans it: what the person's git and shell
 * run later cannot be written, and the folders on the way to it (.git) cannot
 * be removed or renamed (a rename away and a fresh .git would escape the
 * name).  Seatbelt's checks are on names, so unlike Linux's binds this also
 * refuses creating a guarded name that does not exist yet.
 */
static void guard_rules(render *r, const ows__sb_spec *spec)
{
	if (spec->nguarded == 0)
		return;
	ows__strv pins = {0};
	line(r, "; The guard: what the person's own tools run later stays theirs.");
	for (size_t g = 0; g < spec->nguarded; g++) {
		const ows__sb_path *p = &spec->guarded[g];
		char name[32];
		snprintf(name, sizeof name, "GUARD_%zu", g);
		param(r, name, p->path);
		linef(r, "(deny file-write* (%s (param \"%s\")))", p->file ? "literal" : "subpath",
		      name);
		for (size_t i = 0; i < spec->npaths; i++) {
			const ows__sb_path *f = &spec->paths[i];
			if (!f->writable || f->file || !path_within(p->path, f->path) ||
			    strcmp(p->path, f->path) == 0)
				continue;
			/* the folders strictly between the writable folder and the name */
			size_t base = strlen(f->path);
			for (const char *s = strchr(p->path + base + 1, '/'); s && r->rc == 0;
			     s = strchr(s + 1, '/')) {
				char *pin = ows__calloc(1, (size_t)(s - p->path) + 1, r->err);
				if (!pin) {
					r->rc = OWS_ENOMEM;
					break;
				}
				memcpy(pin, p->path, (size_t)(s - p->path));
				bool seen = false;
				for (size_t k = 0; k < pins.len && !seen; k++)
					seen = strcmp(pins.v[k], pin) == 0;
				if (!seen && (r->rc = ows__strv_push(&pins, pin, r->err)) == 0) {
					snprintf(name, sizeof name, "PIN_%zu", pins.len - 1);
					param(r, name, pin);
					linef(r, "(deny file-write-unlink (literal (param \"%s\")))", name);
				}
				free(pin);
			}
		}
	}
	ows__strv_free(&pins);
	line(r, "");
}

/*
 * Last, so that no grant above can undo them.  Set-user-ID and set-group-ID
 * modes: a file made so in a session folder would run outside the wall later,
 * as its owner (Linux refuses them with seccomp).  The markers: this profile
 * alone lets a process look up marker_allow and refuses marker_deny, even
 * where a grant above (the private folder) covers it.
 */
static const char *const final_rules[] = {
	"; Last: no grant above undoes these.",
	"(deny file-write-setugid)",
	"(allow file-read-metadata (literal (param \"MARKER_ALLOW\")))",
	"(deny file-read* file-test-existence (literal (param \"MARKER_DENY\")))",
};

static int join_lines(const ows__strv *lv, char **out, ows_error *err)
{
	size_t n = 1;
	for (size_t i = 0; i < lv->len; i++)
		n += strlen(lv->v[i]) + 1;
	char *text = ows__calloc(1, n, err);
	if (!text)
		return OWS_ENOMEM;
	char *at = text;
	for (size_t i = 0; i < lv->len; i++) {
		size_t k = strlen(lv->v[i]);
		memcpy(at, lv->v[i], k);
		at[k] = '\n';
		at += k + 1;
	}
	*at = '\0';
	*out = text;
	return 0;
}

int ows__sb_render(const ows__sb_spec *spec, ows__sb_profile *out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "seatbelt profile: out is NULL");
	memset(out, 0, sizeof *out);
	if (!spec)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "seatbelt profile: spec is NULL");
	int rc = check_spec(spec, err);
	if (rc < 0)
		return rc;

	render r = { .err = err };
	lines(&r, base_rules, OWS__ARRAY_LEN(base_rules));
	lines(&r, system_rules, OWS__ARRAY_LEN(system_rules));
	session_rules(&r, spec);
	above_rules(&r);
	net_rules(&r, spec);
	guard_rules(&r, spec);
	lines(&r, final_rules, OWS__ARRAY_LEN(final_rules));
	param(&r, "MARKER_ALLOW", spec->marker_allow);
	param(&r, "MARKER_DENY", spec->marker_deny);
	if (r.rc == 0)
		r.rc = join_lines(&r.lines, &out->text, err);
	ows__strv_free(&r.lines);
	ows__strv_free(&r.above);
	out->params = r.params;
	return r.rc;
}

void ows__sb_profile_free(ows__sb_profile *p)
{
	if (!p)
		return;
	free(p->text);
	p->text = NULL;
	ows__strv_free(&p->params);
}
