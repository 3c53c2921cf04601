/*
 * test/unit/locked_create.c: ows__create_locked_at() (lib/posix/fs.c), the grant
 * journal's way of making a file that is locked before anyone can open it by name,
 * with an unnamed O_TMPFILE file and with the named temporary file used where the
 * file system has no O_TMPFILE (overlayfs before Linux 6.6).
 *
 * The named path runs three ways: forced by ows__tmpfile_off (only the choice is
 * forced: every file operation is real), and on its own in a folder under build/ when
 * that file system refuses O_TMPFILE (a checkout on overlayfs, as in the kernel VM of
 * scripts/kernel-vm.sh on 6.1), skipped with the reason where it does not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/linux.h"
#include "tap.h"

/* The names in `dir`, sorted, space-separated ("" when empty). */
static void names(const char *dir, char *out, size_t len)
{
	char *v[32];
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) && n < 32)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			v[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(v[j], v[i]) < 0) {
				char *t = v[i];
				v[i] = v[j];
				v[j] = t;
			}
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", v[i]);
		free(v[i]);
	}
}

/* Is the file `name` in `dir` locked by someone else (a second open cannot flock it)? */
static bool locked(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

static void read_file(const char *dir, const char *name, char *out, size_t len)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	out[0] = '\0';
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* One folder, one way: create, check what is there, collide, clean up. */
static void exercise(const char *dir, const char *how)
{
	char got[1024], p[4096];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = ows__create_locked_at(dfd, "s1.journal", "owsj1 0\n");
	if (!ok(fd >= 0, "%s: the file is created", how))
		diag("errno %d (%s)", errno, strerror(errno));
	names(dir, got, sizeof(got));
	is_str(got, "s1.journal", "%s: under its name only, no temporary file left", how);
	read_file(dir, "s1.journal", got, sizeof(got));
	is_str(got, "owsj1 0\n", "%s: it holds the head", how);
	ok(locked(dir, "s1.journal"), "%s: it is locked by its creator", how);
	struct stat st;
	snprintf(p, sizeof(p), "%s/s1.journal", dir);
	ok(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600, "%s: mode 0600", how);
	ok(fd >= 0 && write(fd, "G x\n", 4) == 4, "%s: the descriptor writes the same file", how);
	read_file(dir, "s1.journal", got, sizeof(got));
	is_str(got, "owsj1 0\nG x\n", "%s: what it wrote is there", how);

	errno = 0;
	int fd2 = ows__create_locked_at(dfd, "s1.journal", "other\n");
	ok(fd2 < 0 && errno == EEXIST, "%s: a taken name gives EEXIST (errno %d)", how, errno);
	names(dir, got, sizeof(got));
	is_str(got, "s1.journal", "%s: and the failure leaves no temporary file", how);
	read_file(dir, "s1.journal", got, sizeof(got));
	is_str(got, "owsj1 0\nG x\n", "%s: nor changes the file that was there", how);

	if (fd >= 0)
		close(fd);
	ok(!locked(dir, "s1.journal"), "%s: closed, the lock is free", how);
	unlinkat(dfd, "s1.journal", 0);
	if (fd2 >= 0)
		close(fd2);
	close(dfd);
}

int main(void)
{
	ok(ows__is_create_temp(".s1.journal.0a1b2c"), "a temporary name is known as one");
	ok(!ows__is_create_temp("s1.journal") && !ows__is_create_temp(".lock") &&
	   !ows__is_create_temp(".s1.journal.0a1b2z"), "a journal, the lock and near misses are not");

	char dir[] = "/tmp/owstest-locked-XXXXXX";
	if (!mkdtemp(dir))
		bail_out("mkdtemp: %s", strerror(errno));
	exercise(dir, "as the file system allows");
	ows__tmpfile_off = true;
	exercise(dir, "named temporary file (forced)");
	ows__tmpfile_off = false;

	/* A folder whose name is too long for the temporary name: refused, nothing made. */
	char longname[256];
	memset(longname, 'n', 250);
	strcpy(longname + 250, ".j");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ows__tmpfile_off = true;
	errno = 0;
	int fd = ows__create_locked_at(dfd, longname, "x\n");
	ok(fd < 0 && errno == ENAMETOOLONG, "named: a name with no room for the temporary one is refused");
	ows__tmpfile_off = false;
	close(dfd);
	rmdir(dir);

	/* The build folder's file system, which in the kernel VM is overlayfs. */
	char bdir[] = "build/owstest-locked-XXXXXX";
	if (!mkdtemp(bdir)) {
		skip(1, "no folder under build/ (%s): run from the repository", strerror(errno));
		return done_testing();
	}
	int bfd = open(bdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int probe = openat(bfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	int perr = errno;
	close(bfd);
	if (probe >= 0) {
		close(probe);
		skip(11, "the file system of build/ has O_TMPFILE (the VM's overlayfs before 6.6 has not)");
	} else {
		diag("build/: O_TMPFILE refused with %s: the named path runs on its own", strerror(perr));
		exercise(bdir, "no O_TMPFILE on this file system");
	}
	rmdir(bdir);
	return done_testing();
}
