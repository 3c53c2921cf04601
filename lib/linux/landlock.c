/* Landlock: probe the ABI once, and know which rights each ABI has. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

int ows__landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, OWS_LL_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
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
