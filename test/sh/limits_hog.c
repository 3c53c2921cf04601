/*
 * What the default-limit tests run inside a sandbox to press on a cap (limits.sh,
 * account_limits.sh).  Small and in C: a fork bomb of thousands of Pythons would
 * cost the machine gigabytes and minutes, not the kernel's pids.
 *
 *   bomb N HOLD   forks up to N children that wait; once it stops, prints
 *                 "forked K <errno name>" and "holding", holds them HOLD seconds (the
 *                 test checks the host meanwhile), then kills them
 *   fill FILE MB  writes FILE 1 MiB at a time, up to MB MiB; prints "filled K <errno
 *                 name>" (OK when it wrote all of it), and removes FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case ENOSPC: return "ENOSPC";
	case EDQUOT: return "EDQUOT";
	case EFBIG: return "EFBIG";
	default: return strerror(e);
	}
}

static int bomb(long n, unsigned hold)
{
	pid_t *kids = calloc((size_t)n, sizeof(*kids));
	long k = 0;
	int e = 0;
	if (!kids)
		return 1;
	for (; k < n; k++) {
		pid_t pid = fork();
		if (pid == 0)
			for (;;)
				pause();
		if (pid < 0) {
			e = errno;
			break;
		}
		kids[k] = pid;
	}
	printf("forked %ld %s\nholding\n", k, errname(e));
	fflush(stdout);
	sleep(hold);
	for (long i = 0; i < k; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}

static int fill(const char *path, long mb)
{
	static char chunk[1 << 20];
	memset(chunk, 0x5a, sizeof(chunk));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	long done = 0;
	int e = fd < 0 ? errno : 0;
	while (fd >= 0 && !e && done < mb) {
		size_t off = 0;
		while (off < sizeof(chunk)) {
			ssize_t w = write(fd, chunk + off, sizeof(chunk) - off);
			if (w < 0) {
				e = errno;
				break;
			}
			off += (size_t)w;
		}
		if (!e)
			done++;
	}
	printf("filled %ld %s\n", done, errname(e));
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "bomb") == 0)
		return bomb(atol(argv[2]), (unsigned)atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "fill") == 0)
		return fill(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: limits_hog bomb N HOLD | fill FILE MB\n");
	return 2;
}
