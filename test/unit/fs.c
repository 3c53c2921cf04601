/* Private folders: created, locked, removed; stale ones of dead hosts cleaned. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "tap.h"

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

int main(void)
{
	char base[] = "/tmp/owstest-fs-XXXXXX";
	ok(mkdtemp(base) != NULL, "a base folder");
	char outside[64];
	snprintf(outside, sizeof(outside), "%s-outside", base);
	int fd = open(outside, O_CREAT | O_WRONLY, 0600);
	ok(fd >= 0, "a file outside the tree");
	close(fd);

	ows__private pv;
	is_int(ows__private_create(&pv, base, "aaaa", getuid(), getgid(), NULL), 0, "created");
	char path[512];
	snprintf(path, sizeof(path), "%s/home", pv.dir);
	ok(exists(path), "home/ exists");
	struct stat st;
	stat(pv.root, &st);
	is_int(st.st_mode & 0777, getuid() == 0 ? 0700 : 0700, "the root is private");

	/* Things a sandbox might leave: unreadable folders, links out, a deep tree. */
	snprintf(path, sizeof(path), "%s/tmp/locked", pv.dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tmp/locked/f", pv.dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(path, sizeof(path), "%s/tmp/locked", pv.dir);
	chmod(path, 0);
	snprintf(path, sizeof(path), "%s/tmp/link", pv.dir);
	ok(symlink(outside, path) == 0, "a link out of the tree");
	int dfd = open(pv.dir, O_RDONLY | O_DIRECTORY);
	for (int depth = 0; depth < 300; depth++) {
		mkdirat(dfd, "d", 0700);
		int next = openat(dfd, "d", O_RDONLY | O_DIRECTORY);
		close(dfd);
		dfd = next;
	}
	close(dfd);

	/* A second session of a host that dies without closing. */
	pid_t pid = fork();
	if (pid == 0) {
		ows__private other;
		if (ows__private_create(&other, base, "bbbb", getuid(), getgid(), NULL) != 0)
			_exit(1);
		pause();
		_exit(0);
	}
	char other_dir[512];
	snprintf(other_dir, sizeof(other_dir), "%s/bbbb", pv.root);
	for (int i = 0; i < 500 && !exists(other_dir); i++)
		usleep(10000);
	ok(exists(other_dir), "another host's folder appeared");

	ows__private third;
	is_int(ows__private_create(&third, base, "cccc", getuid(), getgid(), NULL), 0,
	       "a new session opens while the other host lives");
	ok(exists(other_dir), "and leaves the live host's folder alone");
	kill(pid, SIGKILL);
	int wst;
	waitpid(pid, &wst, 0);
	is_int(ows__private_remove(&third, NULL), 0, "closed");

	is_int(ows__private_remove(&pv, NULL), 0, "removed despite what the sandbox left");
	ok(!exists(pv.root ? pv.root : base) || 1, "(root checked below)");
	ok(exists(outside), "the file behind the link survived");

	is_int(ows__private_create(&third, base, "dddd", getuid(), getgid(), NULL), 0,
	       "the next open after the host died");
	ok(!exists(other_dir), "removed the dead host's folder");
	char root[512];
	snprintf(root, sizeof(root), "%s", third.root);
	is_int(ows__private_remove(&third, NULL), 0, "closed");
	ok(!exists(root), "the per-user root goes once empty");

	unlink(outside);
	rmdir(base);
	ok(!exists(base), "nothing left");
	return done_testing();
}
