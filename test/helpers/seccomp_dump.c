/* seccomp_dump none|open: the seccomp filter ows__seccomp_build makes for this network mode,
 * one instruction a line, "code jt jf k" in decimal, for test/helpers/bpf.py to run on
 * seccomp_data of the test's choosing.  test/sh/runner_cross.sh builds it for aarch64 and
 * runs it under qemu-aarch64, which cannot load a filter (QEMU refuses PR_SET_SECCOMP). */
#include <stdio.h>
#include <string.h>

#include "linux/linux.h"

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "none") != 0 && strcmp(argv[1], "open") != 0)) {
		fprintf(stderr, "usage: seccomp_dump none|open\n");
		return 2;
	}
	static ows__seccomp f;
	ows_error err;
	ows_error_clear(&err);
	ows_net net = strcmp(argv[1], "none") == 0 ? OWS_NET_NONE : OWS_NET_OPEN;
	if (ows__seccomp_build(&f, net, 0, &err) != 0) {
		fprintf(stderr, "seccomp_dump: %s\n", err.what);
		return 1;
	}
	for (unsigned i = 0; i < f.len; i++)
		printf("%u %u %u %u\n", f.insns[i].code, f.insns[i].jt, f.insns[i].jf, f.insns[i].k);
	return 0;
}
