/*
 * What a call's reaper is spared (init.c's ows__init_spare_reapers): the
 * host's large anonymous mappings are marked MADV_DONTFORK, so a fork of
 * init copies none of them, while what a reaper uses (its stack, the TCB
 * and errno, libc's statics) stays; a fork after the marking still runs
 * libc's syscall wrappers and errno, and the process itself keeps all of it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/wall/init.h"
#include "tap.h"

/* The VmFlags of the mapping holding addr, from /proc/self/smaps ("" when not found). */
static void flags_of(const void *addr, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false;
	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (unsigned long)addr >= lo && (unsigned long)addr < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(out, size, "%.200s", line + 8);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

int main(void)
{
	const size_t big = 64UL << 20;
	char *bulk = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char statics[4096]; /* this program's .bss */
	if (bulk == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	memset(bulk, 7, big);
	statics[0] = 1;
	char flags[256];
	flags_of(bulk + big / 2, flags, sizeof(flags));
	ok(!strstr(flags, " dc"), "control: a fresh mapping is copied on fork (%s)", flags);

	ows__init_spare_reapers();

	flags_of(bulk + big / 2, flags, sizeof(flags));
	ok(strstr(flags, " dc") != NULL, "the host's large anonymous mapping is not copied on fork");
	flags_of(&flags, flags, sizeof(flags));
	ok(!strstr(flags, " dc"), "the stack is");
	flags_of(statics, flags, sizeof(flags));
	ok(!strstr(flags, " dc"), "the program's statics are");
	flags_of(&errno, flags, sizeof(flags));
	ok(!strstr(flags, " dc"), "errno's (the thread's TLS) is");
	ok(bulk[big - 1] == 7 && bulk[0] == 7, "the process itself keeps all of its memory");

	pid_t pid = fork();
	if (pid == 0) {
		/* What a reaper does: system calls through libc, errno, a queued signal. */
		errno = 0;
		if (close(-1) == 0 || errno != EBADF)
			_exit(2);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN);
		if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
		    sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 9}) != 0)
			_exit(3);
		_exit(statics[0] == 1 ? 0 : 4);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "a fork after the marking runs (libc, errno, signals, statics): status %d", st);
	return done_testing();
}
