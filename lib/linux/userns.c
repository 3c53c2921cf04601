/*
 * What stands between this process and the sandbox's user namespace, in
 * words that name the cause and the one command that fixes it; and the
 * AppArmor profile that grants one program user namespaces on Ubuntu.
 *
 * Ubuntu 24.04 (kernel.apparmor_restrict_unprivileged_userns = 1) lets an
 * unconfined program create a user namespace and then denies it every
 * capability there: clone() succeeds, and writing uid_map, mounting and
 * bringing loopback up fail (bwrap's "loopback: Failed RTM_NEWADDR").  So
 * the probe does in a throwaway child what init does first, not only the
 * clone.  Ubuntu's own remedy is a profile with a `userns,` rule for the
 * program (its chrome, code and bwrap profiles); this file writes one.
 * Turning the restriction off is never what we advise.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/wall/init.h"
#include "linux.h"

/* ------------------------------------------------------------- the probe */

/* A file system made and mounted detached, as init makes its own (root.c):
 * CAP_SYS_ADMIN in the new namespaces, and nothing attached anywhere that
 * could propagate back to the host. */
static int make_fs(const char *type, unsigned attrs)
{
	int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	int m = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0
			? fsmount(fs, FSMOUNT_CLOEXEC, attrs) : -1;
	int saved = errno;
	close(fs);
	if (m >= 0)
		close(m);
	errno = saved;
	return m >= 0 ? 0 : -1;
}

static int loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {0};
	memcpy(ifr.ifr_name, "lo", 3);
	int r = s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0 ? -1 : 0;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0)
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	int saved = errno;
	if (s >= 0)
		close(s);
	errno = saved;
	return r;
}

/* The throwaway child: init's first steps, in its order (root.c), system calls only. */
static __attribute__((noreturn)) void probe_child(int fd, bool userns, long uid, long gid)
{
	int r[2] = {OWS__USERNS_OK, 0};
	if (userns && ows__write_id_map("uid_map", uid, uid) != 0)
		r[0] = OWS__USERNS_UID_MAP;
	else if (userns && ows__write_small("/proc/self/setgroups", "deny") != 0)
		r[0] = OWS__USERNS_SETGROUPS;
	else if (userns && ows__write_id_map("gid_map", gid, gid) != 0)
		r[0] = OWS__USERNS_GID_MAP;
	else if (make_fs("tmpfs", 0) != 0)
		r[0] = OWS__USERNS_MOUNT;
	/* The kernel mounts a new proc only where the one in view is fully visible:
	 * a container that masks /proc/kcore and the like refuses it (EPERM). */
	else if (make_fs("proc", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) != 0)
		r[0] = OWS__USERNS_PROC;
	else if (loopback_up() != 0)
		r[0] = OWS__USERNS_LOOPBACK;
	r[1] = r[0] ? errno : 0;
	_exit(write(fd, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

int ows__userns_probe(int flags, int *sys_errno)
{
	int pfd[2];
	*sys_errno = 0;
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		*sys_errno = errno;
		return OWS__USERNS_CLONE;
	}
	long uid = (long)geteuid(), gid = (long)getegid();
	long pid = syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0)
		probe_child(pfd[1], flags & CLONE_NEWUSER, uid, gid);
	int saved = errno;
	close(pfd[1]);
	int r[2] = {OWS__USERNS_CLONE, saved};
	if (pid > 0) {
		ssize_t n;
		while ((n = read(pfd[0], r, sizeof(r))) < 0 && errno == EINTR)
			;
		if (n != (ssize_t)sizeof(r)) /* it died before it could say: count it as refused */
			r[0] = OWS__USERNS_SILENT, r[1] = n < 0 ? errno : EPERM;
		int st;
		while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	close(pfd[0]);
	*sys_errno = r[1];
	return r[0];
}

/* ------------------------------------------------------------- the cause */

static long read_long(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long v = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : -1;
	fclose(f);
	return v;
}

/* The value of one "Key:\tvalue" line of /proc/self/status, or "". */
static void status_field(const char *key, char *buf, size_t len)
{
	char line[128];
	size_t n = strlen(key);
	buf[0] = '\0';
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			snprintf(buf, len, "%s", line + n + 1 + strspn(line + n + 1, " \t"));
	fclose(f);
}

/* "Seccomp:\t2" of /proc/self/status: 2 means a filter. */
static int seccomp_mode(void)
{
	char v[32];
	status_field("Seccomp", v, sizeof(v));
	return v[0] ? (int)strtol(v, NULL, 10) : -1;
}

static bool has_cap(int cap)
{
	char v[32];
	status_field("CapEff", v, sizeof(v));
	return (strtoull(v, NULL, 16) >> cap) & 1;
}

bool ows__cap_effective(int cap)
{
	return has_cap(cap);
}

/* Mounts over paths under /proc: podman and Docker mount over /proc/kcore,
 * /proc/sys and others, and the kernel then refuses a new proc (it would
 * show what they hide).  systemd's binfmt_misc automount, on a folder that is
 * always empty, hides nothing and is not counted. */
static int proc_masks(void)
{
	char line[1024], point[512];
	int n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %511s", point) == 1 &&
		    strncmp(point, "/proc/", 6) == 0 &&
		    strcmp(point, "/proc/sys/fs/binfmt_misc") != 0) /* on an empty folder: no mask */
			n++;
	fclose(f);
	return n;
}

/* The container engine this runs under, from the marks each leaves, or NULL. */
static const char *container_of(int masks)
{
	const char *env = getenv("container");
	if (access("/run/.containerenv", F_OK) == 0 || (env && strcmp(env, "podman") == 0))
		return "podman";
	if (access("/.dockerenv", F_OK) == 0 || (env && strcmp(env, "docker") == 0))
		return "docker";
	return env || masks ? "a container" : NULL;
}

/* This process's AppArmor label ("unconfined", "owsbx (unconfined)"), or "". */
static void apparmor_label(char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/self/attr/apparmor/current", "re");
	if (!f) /* before 5.8 the label is only at the LSM-wide name, shared with others */
		f = access("/sys/kernel/security/apparmor", F_OK) == 0
			    ? fopen("/proc/self/attr/current", "re") : NULL;
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

void ows__userns_facts_read(ows__userns_facts *f, int step, int sys_errno)
{
	memset(f, 0, sizeof(*f));
	f->step = step;
	f->err = sys_errno;
	f->max_user_namespaces = read_long("/proc/sys/user/max_user_namespaces");
	f->unprivileged_userns_clone = read_long("/proc/sys/kernel/unprivileged_userns_clone");
	f->apparmor_restrict = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	f->seccomp = seccomp_mode();
	apparmor_label(f->label, sizeof(f->label));
	ssize_t n = readlink("/proc/self/exe", f->exe, sizeof(f->exe) - 1);
	f->exe[n > 0 ? n : 0] = '\0';
	f->root = geteuid() == 0;
	f->cap_sys_admin = has_cap(21); /* CAP_SYS_ADMIN */
	f->cap_net_admin = has_cap(12); /* CAP_NET_ADMIN */
	f->proc_masks = proc_masks();
	f->container = container_of(f->proc_masks);
}

static const char *step_text(int step)
{
	switch (step) {
	case OWS__USERNS_UID_MAP: return "writing its uid_map";
	case OWS__USERNS_SETGROUPS: return "denying setgroups";
	case OWS__USERNS_GID_MAP: return "writing its gid_map";
	case OWS__USERNS_MOUNT: return "mounting a tmpfs";
	case OWS__USERNS_PROC: return "mounting a new /proc";
	case OWS__USERNS_LOOPBACK: return "bringing loopback up";
	case OWS__USERNS_SILENT: return "setting it up (the probe ended without a word)";
	default: return "creating it";
	}
}

/* The program to name in a fix: the host itself (a Python server, a CI harness). */
static const char *fix_exe(const ows__userns_facts *f)
{
	return f->exe[0] ? f->exe : "/usr/local/bin/owsbx";
}

static void fix_apparmor(const ows__userns_facts *f, char *fix, size_t len)
{
	char name[OWS__APPARMOR_NAME_MAX + 1];
	if (ows__apparmor_name(fix_exe(f), name, sizeof(name)) != 0)
		snprintf(name, sizeof(name), "owsbx-host");
	snprintf(fix, len,
		 "grant this program user namespaces: owsbx apparmor-profile %s | sudo tee "
		 "/etc/apparmor.d/%s && sudo apparmor_parser -r /etc/apparmor.d/%s",
		 fix_exe(f), name, name);
}

static const char ACCOUNT[] =
	"the account provider, which needs no user namespace: sudo owsbx machine sandbox setup";

/* What a container must be started with for the sandbox's own /proc. */
static const char UNMASK_FIX[] =
	"start the container with an unmasked /proc: podman run --security-opt unmask=ALL, "
	"docker run --security-opt systempaths=unconfined, or Kubernetes' securityContext "
	"procMount: Unmasked";

static const char ROOT_FIX[] =
	"run owsbx as an ordinary user (it makes its own user namespace), or start the container "
	"with --cap-add SYS_ADMIN and an unmasked /proc (podman: --security-opt unmask=ALL; "
	"docker: systempaths=unconfined)";

/* The name of the AppArmor profile this process runs under: "" when unconfined. */
static void profile_of(const ows__userns_facts *f, char *buf, size_t len)
{
	buf[0] = '\0';
	if (f->label[0] && strcmp(f->label, "unconfined") != 0)
		snprintf(buf, len, "%.*s", (int)strcspn(f->label, " "), f->label);
}

/* clone() itself was refused. */
static void explain_clone(const ows__userns_facts *f, char *why, size_t wl, char *fix, size_t fl)
{
	const char *e = strerror(f->err);
	char profile[sizeof(f->label)];
	profile_of(f, profile, sizeof(profile));
	snprintf(fix, fl, "use %s", ACCOUNT);
	if (f->err == ENOSPC && f->max_user_namespaces == 0)
		snprintf(why, wl, "user namespaces are switched off here (user.max_user_namespaces "
				  "is 0): clone: %s", e);
	else if (f->err == ENOSPC)
		snprintf(why, wl, "the limit of user namespaces is reached (user.max_user_namespaces "
				  "%ld, or an outer namespace's): clone: %s", f->max_user_namespaces, e);
	else if (f->err == EPERM && f->unprivileged_userns_clone == 0)
		snprintf(why, wl, "only root may create user namespaces here (Debian's "
				  "kernel.unprivileged_userns_clone is 0): clone: %s", e);
	else if (f->err == EPERM && f->root && !f->cap_sys_admin) {
		snprintf(why, wl, "this process is root without CAP_SYS_ADMIN (%s drops it by "
				  "default), and new namespaces need it: clone: %s",
			 f->container ? "a container" : "something above it", e);
		snprintf(fix, fl, "%s", ROOT_FIX);
	} else if (f->err == EPERM && f->seccomp == 2) {
		snprintf(why, wl, "a seccomp filter on this process refuses new namespaces (as "
				  "Docker's default profile does): clone: %s", e);
		if (f->container)
			snprintf(fix, fl, "give the container a seccomp profile that allows user "
					  "namespaces (podman's: --security-opt seccomp=/usr/share/"
					  "containers/seccomp.json), or use the account provider");
	} else if (f->err == EPERM && profile[0]) {
		snprintf(why, wl, "this program's AppArmor profile %s does not allow user "
				  "namespaces: clone: %s", profile, e);
		snprintf(fix, fl, "add `userns,` to the profile %s (its file in /etc/apparmor.d) and "
				  "load it again with sudo apparmor_parser -r, or use %s", profile, ACCOUNT);
	} else if (f->err == EUSERS)
		snprintf(why, wl, "user namespaces are nested too deep here: clone: %s", e);
	else if (f->err == EINVAL)
		snprintf(why, wl, "this kernel lacks a namespace the sandbox needs: clone: %s", e);
	else
		snprintf(why, wl, "this machine refuses %s new namespaces: clone: %s",
			 f->root ? "root" : "an unprivileged process", e);
}

/* A new proc refused: a container's masked /proc, most often. */
static void explain_proc(const ows__userns_facts *f, char *why, size_t wl, char *fix, size_t fl)
{
	const char *e = strerror(f->err);
	if (f->proc_masks > 0) {
		snprintf(why, wl, "%s masks %d paths under /proc (/proc/kcore and others), and the "
				  "kernel gives the sandbox a new /proc only where /proc is fully "
				  "visible: %s: %s",
			 f->container && strcmp(f->container, "a container") != 0 ? f->container
										  : "this container",
			 f->proc_masks, step_text(f->step), e);
		snprintf(fix, fl, "%s", UNMASK_FIX);
	} else {
		snprintf(why, wl, "the kernel refuses the sandbox a new /proc (a security module, or "
				  "a /proc mounted over): %s: %s", step_text(f->step), e);
		if (f->container)
			snprintf(fix, fl, "%s", UNMASK_FIX);
		else
			snprintf(fix, fl, "use %s", ACCOUNT);
	}
}

/* Loopback refused to root: its namespace is its own, so its capabilities are the host's. */
static bool explain_root_loopback(const ows__userns_facts *f, char *why, size_t wl, char *fix,
				  size_t fl)
{
	if (f->step != OWS__USERNS_LOOPBACK || !f->root || f->cap_net_admin)
		return false;
	snprintf(why, wl, "root without CAP_NET_ADMIN (%s drops it by default) cannot bring "
			  "loopback up in the sandbox's network namespace, which --net allowlist "
			  "needs (none and open do not): %s: %s",
		 f->container ? "a container" : "something above it", step_text(f->step),
		 strerror(f->err));
	snprintf(fix, fl, "start the container with --cap-add NET_ADMIN (Kubernetes: "
			  "securityContext.capabilities.add: [NET_ADMIN]), or run owsbx as an "
			  "ordinary user (it makes its own user namespace)");
	return true;
}

void ows__userns_explain(const ows__userns_facts *f, char *why, size_t wl, char *fix, size_t fl)
{
	if (f->step == OWS__USERNS_CLONE) {
		explain_clone(f, why, wl, fix, fl);
		return;
	}
	if (f->step == OWS__USERNS_PROC) {
		explain_proc(f, why, wl, fix, fl);
		return;
	}
	if (explain_root_loopback(f, why, wl, fix, fl))
		return;
	const char *e = strerror(f->err), *step = step_text(f->step);
	char profile[sizeof(f->label)];
	profile_of(f, profile, sizeof(profile));
	if (profile[0]) {
		snprintf(why, wl, "this program's AppArmor profile %s gives it user namespaces "
				  "without capabilities: %s: %s", profile, step, e);
		snprintf(fix, fl, "add `userns,` to the profile %s (its file in /etc/apparmor.d) and "
				  "load it again with sudo apparmor_parser -r, or use %s", profile, ACCOUNT);
	} else if (f->apparmor_restrict == 1) {
		snprintf(why, wl, "Ubuntu's AppArmor restriction of unprivileged user namespaces "
				  "(kernel.apparmor_restrict_unprivileged_userns) gives this program "
				  "namespaces without capabilities: %s: %s", step, e);
		fix_apparmor(f, fix, fl);
	} else {
		snprintf(why, wl, "user namespaces are created without the capabilities the sandbox "
				  "needs (a security module or filter withholds them): %s: %s", step, e);
		snprintf(fix, fl, "use %s", ACCOUNT);
	}
}

int ows__userns_fail(ows_error *err, int step, int sys_errno)
{
	ows__userns_facts f;
	char why[sizeof(err->what)], fix[sizeof(err->hint)];
	ows__userns_facts_read(&f, step, sys_errno);
	ows__userns_explain(&f, why, sizeof(why), fix, sizeof(fix));
	return ows__fail(err, OWS_EUNSUPPORTED, sys_errno,
			 step == OWS__USERNS_CLONE ? "clone" : step_text(step), fix, "%s", why);
}

int ows__userns_step_of(const char *stage)
{
	static const struct {
		const char *stage;
		int step;
	} stages[] = {
		{"write /proc/self/uid_map", OWS__USERNS_UID_MAP},
		{"write setgroups", OWS__USERNS_SETGROUPS},
		{"write /proc/self/gid_map", OWS__USERNS_GID_MAP},
		{"mount proc /proc", OWS__USERNS_PROC},
		{"bring loopback up", OWS__USERNS_LOOPBACK},
	};
	for (size_t i = 0; stage && i < OWS__ARRAY_LEN(stages); i++)
		if (strcmp(stage, stages[i].stage) == 0)
			return stages[i].step;
	return OWS__USERNS_OK;
}

/* --------------------------------------------------------- the profile */

/* An absolute path AppArmor takes as it is: no glob, space or quote, and no
 * ".", ".." or empty part, which it would not match against the file exec'd. */
static bool apparmor_path_is_plain(const char *p)
{
	if (p[0] != '/')
		return false;
	while (*p == '/') {
		size_t n = strcspn(++p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!(p[i] >= 'a' && p[i] <= 'z') && !(p[i] >= 'A' && p[i] <= 'Z') &&
			    !(p[i] >= '0' && p[i] <= '9') && !strchr("._+-@~", p[i]))
				return false;
		p += n;
	}
	return true;
}

static bool apparmor_name_is_plain(const char *n)
{
	if (!n[0] || strlen(n) > OWS__APPARMOR_NAME_MAX || n[0] == '.' || n[0] == '-')
		return false;
	for (; *n; n++)
		if (!(*n >= 'a' && *n <= 'z') && !(*n >= 'A' && *n <= 'Z') &&
		    !(*n >= '0' && *n <= '9') && !strchr("._-", *n))
			return false;
	return true;
}

int ows__apparmor_name(const char *exe, char *buf, size_t len)
{
	const char *base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	int n = strcmp(base, "owsbx") == 0 ? snprintf(buf, len, "owsbx")
					   : snprintf(buf, len, "owsbx-%s", base);
	return n > 0 && (size_t)n < len && apparmor_name_is_plain(buf) ? 0 : -1;
}

static const char PROFILE[] =
	"# AppArmor profile written by `owsbx apparmor-profile %s%s%s%s`.\n"
	"#\n"
	"# Ubuntu (kernel.apparmor_restrict_unprivileged_userns = 1) gives programs it does\n"
	"# not know user namespaces without capabilities, and the sandbox builds its root,\n"
	"# network and PID namespaces in one.  This profile lets the one program below\n"
	"# create user namespaces and confines nothing else, as Ubuntu's own profiles for\n"
	"# programs that sandbox themselves do.  Commands it runs in a sandbox inherit the\n"
	"# profile; the sandbox's seccomp filter refuses them namespaces of their own.\n"
	"#\n"
	"# Install: save as /etc/apparmor.d/%s; load: sudo apparmor_parser -r /etc/apparmor.d/%s\n"
	"%s"
	"abi <abi/4.0>,\n"
	"include <tunables/global>\n"
	"\n"
	"profile %s %s flags=(unconfined) {\n"
	"  userns,\n"
	"\n"
	"  # Site-specific additions and overrides. See local/README for details.\n"
	"  include if exists <local/%s>\n"
	"}\n";

int ows_apparmor_profile(const char *exe, const char *name, char **out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	*out = NULL;
	if (!exe || exe[0] != '/')
		return ows__fail(err, OWS_EINVAL, 0, exe, "name the program by its absolute path",
				 "not an absolute path");
	/* AppArmor attaches a profile to the file exec'd, links resolved: /usr/bin/python3
	 * runs as /usr/bin/python3.12.  A path not there yet (a DESTDIR install) is kept. */
	char real[PATH_MAX];
	const char *path = realpath(exe, real) ? real : exe;
	const char *odd = !apparmor_path_is_plain(exe) ? exe : !apparmor_path_is_plain(path) ? path : NULL;
	if (odd)
		return ows__fail(err, OWS_EINVAL, 0, odd,
				 "write the profile by hand, quoting and escaping the path",
				 "not a plain path (letters, digits and /._+-@~; no '.', '..' or "
				 "empty part)");
	char derived[OWS__APPARMOR_NAME_MAX + 1];
	const char *given = name;
	if (!name) {
		if (ows__apparmor_name(path, derived, sizeof(derived)) != 0)
			return ows__fail(err, OWS_EINVAL, 0, path, "give a profile name",
					 "cannot make a profile name of this file's name");
		name = derived;
	} else if (!apparmor_name_is_plain(name)) {
		return ows__fail(err, OWS_EINVAL, 0, name,
				 "use letters, digits, '.', '_' and '-', at most 64",
				 "not a profile name");
	}
	char *resolved = NULL;
	if (strcmp(path, exe) != 0 &&
	    !(resolved = ows__asprintf(err, "# %s is a link: the profile names the file it leads to.\n", exe)))
		return OWS_ENOMEM;
	*out = ows__asprintf(err, PROFILE, given ? "--name " : "", given ? given : "", given ? " " : "", exe, name, name, resolved ? resolved : "",
			     name, path, name);
	free(resolved);
	return *out ? 0 : OWS_ENOMEM;
}
