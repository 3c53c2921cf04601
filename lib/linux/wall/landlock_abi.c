/*
 * Landlock: probe the ABI once, and know which rights each ABI has.  Linked into the
 * setuid launcher and called by init: one system call, no allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

int ows__landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, OWS_LL_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

/* Reads up to len-1 bytes of `path` into buf, NUL-terminated; "" when unreadable. */
static void read_small(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

/*
 * The active security modules: /sys/kernel/security/lsm, or where securityfs is
 * not mounted, the lsm= the kernel was booted with (/proc/cmdline); "" if neither.
 */
static void active_lsms(char *buf, size_t len)
{
	read_small("/sys/kernel/security/lsm", buf, len);
	if (!buf[0]) {
		char cmdline[4096];
		read_small("/proc/cmdline", cmdline, sizeof(cmdline));
		char *save = NULL;
		/* after "--" the words are init's, not the kernel's */
		for (char *w = strtok_r(cmdline, " \n", &save); w && strcmp(w, "--") != 0;
		     w = strtok_r(NULL, " \n", &save))
			if (strncmp(w, "lsm=", 4) == 0)
				snprintf(buf, len, "%s", w + 4);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

void ows__landlock_missing(char *why, size_t why_len, char *fix, size_t fix_len)
{
	long r = syscall(SYS_landlock_create_ruleset, NULL, 0, OWS_LL_CREATE_RULESET_VERSION);
	int e = r < 0 ? errno : 0;
	if (e == EOPNOTSUPP) {
		/* Built in, left out of the boot's list of security modules. */
		char lsm[256];
		active_lsms(lsm, sizeof(lsm));
		snprintf(why, why_len, "Landlock is built into this kernel but was not enabled at boot "
			 "(active security modules: %s)", lsm[0] ? lsm : "see /sys/kernel/security/lsm");
		if (lsm[0])
			snprintf(fix, fix_len, "add landlock to the kernel's lsm= boot parameter "
				 "(lsm=%s,landlock) and reboot", lsm);
		else
			snprintf(fix, fix_len, "add landlock to the kernel's lsm= boot parameter (the list "
				 "in /sys/kernel/security/lsm, with landlock added) and reboot");
	} else if (e == ENOSYS) {
		snprintf(why, why_len, "this kernel has no Landlock (landlock_create_ruleset: ENOSYS)");
		snprintf(fix, fix_len, "boot a kernel built with CONFIG_SECURITY_LANDLOCK=y (Linux 5.13 "
			 "or later)");
	} else {
		/* EPERM and the like: a seccomp filter above us (a container's) refuses it. */
		snprintf(why, why_len, "Landlock is refused here (landlock_create_ruleset: %s)",
			 e ? strerror(e) : "no ABI version");
		snprintf(fix, fix_len, "allow landlock_create_ruleset, landlock_add_rule and "
			 "landlock_restrict_self in the seccomp profile this runs under");
	}
}

int ows__landlock_unavailable(ows_error *err)
{
	char why[384], fix[384];
	ows__landlock_missing(why, sizeof(why), fix, sizeof(fix));
	return ows__fail(err, OWS_EUNSUPPORTED, 0, "landlock", fix, "%s", why);
}

uint64_t ows__landlock_fs_all(int abi)
{
	uint64_t all = (OWS_LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0-12 */
	/* Each case adds what its ABI brought, falling through to older ones. */
	switch (abi < 5 ? abi : 5) {
	case 5:
		all |= OWS_LL_FS_IOCTL_DEV;
		/* fall through */
	case 4:
	case 3:
		all |= OWS_LL_FS_TRUNCATE;
		/* fall through */
	case 2:
		all |= OWS_LL_FS_REFER;
		/* fall through */
	default:
		break;
	}
	return all;
}

size_t ows__landlock_attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct ows_ll_ruleset_attr);
	if (abi >= 4)
		return 2 * sizeof(uint64_t);
	return sizeof(uint64_t);
}
