/*
 * The tool runner of an OpenShell sandbox: which file is mounted as the
 * sandbox's main command, and the proof it runs from inside.
 *
 * The runner runs in a Linux container from an image that has none of this
 * machine's libraries, on a Mac too (in Docker's Linux VM): it is a static
 * Linux owsbx for the machine's arch, `owsbx-linux-ARCH`, shipped beside
 * owsbx (`make runner`).  The host's own owsbx (dynamic on Linux, Mach-O on
 * a Mac) would not start there, and the sandbox would end with it.
 *
 * The proof is the same as the other providers': each session folder
 * reachable as granted, the home's files absent, the network as the mode
 * says; run through `openshell sandbox exec` as any command is, judged here,
 * and the session refused on a failed or missing check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "openshell.h"
#include "oscli.h"
#include "posix/posix.h"

/* ELF64's few fields read here, by offset: macOS has no <elf.h>. */
enum {
	EM_X86_64_ = 62, EM_AARCH64_ = 183, PT_INTERP_ = 3,
	EH_SIZE = 64, EH_MACHINE = 18, EH_PHOFF = 32, EH_PHENTSIZE = 54, EH_PHNUM = 56,
	PH_SIZE = 56,
};

static unsigned le16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The Linux arch a container on this machine runs: uname's, in Linux's spelling. */
static const char *linux_arch(unsigned *machine)
{
	struct utsname u;
	if (uname(&u) != 0)
		return NULL;
	if (strcmp(u.machine, "x86_64") == 0 || strcmp(u.machine, "amd64") == 0) {
		*machine = EM_X86_64_;
		return "x86_64";
	}
	if (strcmp(u.machine, "aarch64") == 0 || strcmp(u.machine, "arm64") == 0) {
		*machine = EM_AARCH64_;
		return "aarch64";
	}
	return NULL;
}

/* A 64-bit little-endian ELF executable for `machine` with no interpreter: it needs
 * nothing of the image it runs in. */
static bool static_elf(const char *path, unsigned machine)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	unsigned char eh[EH_SIZE], ph[PH_SIZE];
	/* 0x7f "ELF", 64-bit, little-endian */
	bool ok = pread(fd, eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
		  memcmp(eh, "\x7f" "ELF\x02\x01", 6) == 0 && le16(eh + EH_MACHINE) == machine &&
		  le16(eh + EH_PHENTSIZE) == PH_SIZE && le16(eh + EH_PHNUM) > 0;
	uint64_t off = ok ? le64(eh + EH_PHOFF) : 0;
	for (unsigned i = 0; ok && i < le16(eh + EH_PHNUM); i++)
		ok = pread(fd, ph, sizeof(ph), (off_t)(off + (uint64_t)i * PH_SIZE)) ==
			     (ssize_t)sizeof(ph) &&
		     (ph[0] | ph[1] << 8 | ph[2] << 16 | (unsigned)ph[3] << 24) != PT_INTERP_;
	close(fd);
	return ok;
}

int ows__os_find_runner(char **out, ows_error *err)
{
	*out = NULL;
	unsigned machine = 0;
	const char *arch = linux_arch(&machine);
	if (!arch)
		return ows__fail(err, OWS_EUNSUPPORTED, 0, NULL, "use another provider",
				 "OpenShell's tool runner is built for x86_64 and aarch64 only");
	char *exe = ows__find_owsbx();
	if (!exe)
		return ows__fail(err, OWS_ECONFIG, 0, "owsbx", "install owsbx on the PATH",
				 "the tool runner (owsbx) is not found");
	char *slash = strrchr(exe, '/');
	*slash = '\0';
	char *path = ows__asprintf(err, "%s/owsbx-linux-%s", exe, arch);
	free(exe);
	if (!path)
		return OWS_ENOMEM;
	if (!static_elf(path, machine)) {
		int rc = ows__fail(err, OWS_EUNSUPPORTED, 0, path,
				   "build it with `make runner` and install it beside owsbx",
				   "the sandbox's tool runner, a static Linux owsbx for %s, is not "
				   "there",
				   arch);
		free(path);
		return rc;
	}
	*out = path;
	return 0;
}

/* ------------------------------------------------------------ the proof */

/* A TCP listener on this machine's first address that is not loopback (a container
 * reaches those, not the host's loopback), else on 127.0.0.1; "ADDR:PORT" in buf. */
static int outside_listener(char *buf, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr !=
				    htonl(INADDR_LOOPBACK)) {
				sa.sin_addr = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
				break;
			}
		freeifaddrs(ifs);
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0); /* no SOCK_CLOEXEC on macOS */
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	socklen_t sl = sizeof(sa);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(sa.sin_port));
	return fd;
}

/* `openshell sandbox exec ... -- RUNNER runner --probe ...`: the checks the proof expects. */
static int probe_argv(const ows__os_proof *p, const char *reach, const char *canary,
		      ows__strv *av, size_t *nexpect, ows_error *err)
{
	static const char *const head[] = {"openshell", "sandbox", "exec", "--name"};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < OWS__ARRAY_LEN(head); i++)
		rc = ows__strv_push(av, head[i], err);
	const char *const tail[] = {p->name, "--no-tty", "--", OWS__OS_RUNNER_PATH, "runner",
				    "--probe"};
	for (size_t i = 0; rc == 0 && i < OWS__ARRAY_LEN(tail); i++)
		rc = ows__strv_push(av, tail[i], err);
	*nexpect = 0;
	for (size_t i = 0; rc == 0 && i < p->nfolders; i++, ++*nexpect) {
		rc = ows__strv_push(av, p->folders[i].access == OWS_ACCESS_RW ? "--rw" : "--ro", err);
		if (rc == 0)
			rc = ows__strv_push(av, p->folders[i].path, err);
	}
	/* The home's own files: a file planted for the proof, and the keys where there are. */
	char ssh[PATH_MAX];
	snprintf(ssh, sizeof(ssh), "%s/.ssh", p->home);
	const char *absent[] = {canary, access(ssh, F_OK) == 0 ? ssh : NULL};
	for (size_t i = 0; rc == 0 && i < OWS__ARRAY_LEN(absent); i++)
		if (absent[i] && (rc = ows__strv_push(av, "--absent", err)) == 0 &&
		    (rc = ows__strv_push(av, absent[i], err)) == 0)
			++*nexpect;
	if (rc == 0 && reach && (rc = ows__strv_push(av, "--reach", err)) == 0 &&
	    (rc = ows__strv_push(av, reach, err)) == 0)
		++*nexpect;
	/* none: a registry strict would list is refused; allowlist: a host off the list. */
	if (rc == 0 && (rc = ows__strv_push(av, "--refused", err)) == 0 &&
	    (rc = ows__strv_push(av, p->none ? "pypi.org:443" : "owsbx-proof.invalid:443",
				 err)) == 0)
		++*nexpect;
	return rc;
}

/* "ok|fail<TAB>name<TAB>detail" lines, then "end": into checks (cap of them); how many. */
static size_t parse_probe(char *text, ows__check *checks, size_t cap, bool *ended)
{
	size_t n = 0;
	*ended = false;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strcmp(line, "end") == 0) {
			*ended = true;
			break;
		}
		char *name = strchr(line, '\t'), *detail = name ? strchr(name + 1, '\t') : NULL;
		if (!detail || n == cap)
			continue;
		*name++ = '\0';
		*detail++ = '\0';
		snprintf(checks[n].name, sizeof(checks[n].name), "%s", name);
		snprintf(checks[n].detail, sizeof(checks[n].detail), "%s", detail);
		checks[n].passed = strcmp(line, "ok") == 0;
		n++;
	}
	return n;
}

/* The probe's output, or "" when it could not run: its exit status in *st. */
static char *run_probe(const ows__strv *av, int *st, ows_error *err)
{
	enum { PROBE_OUT = 64 * 1024 };
	char *out = ows__calloc(1, PROBE_OUT, err);
	if (out)
		*st = ows__os_cmd((const char *const *)av->v, out, PROBE_OUT);
	return out;
}

int ows__os_prove(const ows__os_proof *p, char **proof_json, ows_error *err)
{
	char reach[64] = "";
	int lfd = outside_listener(reach, sizeof(reach));
	char *canary = ows__canary_plant(p->home, p->id, NULL);
	ows__strv av = {0};
	size_t want = 0;
	int rc = probe_argv(p, lfd >= 0 ? reach : NULL, canary, &av, &want, err);
	ows__check *checks = rc == 0 ? ows__calloc(want + 1, sizeof(*checks), err) : NULL;
	int st = -1;
	char *out = checks ? run_probe(&av, &st, err) : NULL;
	if (rc == 0 && !out)
		rc = OWS_ENOMEM;
	bool ended = false;
	size_t n = rc == 0 ? parse_probe(out, checks, want, &ended) : 0;
	if (rc == 0 && (n < want || !ended || st != 0)) {
		/* A check that never reported fails: the runner did not get to say. */
		snprintf(checks[n].name, sizeof(checks[n].name), "probe");
		snprintf(checks[n].detail, sizeof(checks[n].detail),
			 "`openshell sandbox exec` of the runner's probe exited %d after %zu of %zu "
			 "checks",
			 st, n, want);
		checks[n++].passed = 0;
	}
	bool passed = false;
	if (rc == 0 && !(*proof_json = ows__proof_json("openshell", p->network, checks, n, &passed)))
		rc = OWS_ENOMEM;
	const ows__check *bad = NULL;
	for (size_t i = 0; rc == 0 && !passed && i < n && !bad; i++)
		if (checks[i].passed != 1)
			bad = &checks[i];
	if (bad)
		rc = ows__fail(err, OWS_EVERIFY, 0, bad->name,
			       "run `owsbx verify --provider openshell` to see every check; the "
			       "session is refused",
			       "the OpenShell sandbox failed its proof from inside: %s (%s)",
			       bad->name, bad->detail);
	if (canary) {
		unlink(canary);
		free(canary);
	}
	if (lfd >= 0)
		close(lfd);
	free(out);
	free(checks);
	ows__strv_free(&av);
	return rc;
}
