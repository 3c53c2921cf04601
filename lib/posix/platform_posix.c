/*
 * The operating-system calls of the portable core that are plain POSIX (see
 * lib/platform.h): paths, files, the clock and locks.  Built for Linux and
 * for macOS (the Makefile's MAC_SHARED_SRCS); what differs per OS is in
 * lib/linux/platform.c and lib/darwin/platform.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

extern char **environ;

const char ows__plat_fopen_read[] = "re";

bool ows__plat_path_is_absolute(const char *path) { return path && path[0] == '/'; }
bool ows__plat_is_sep(char c) { return c == '/'; }
bool ows__plat_is_root(const char *path) { return strcmp(path, "/") == 0; }

char *ows__plat_realpath(const char *path)
{
	return realpath(path, NULL);
}

const char *ows__plat_untrusted_link(const char *path, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s", path) >= (int)len)
		return NULL;
	for (char *s = buf + 1;; s++) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != 0)
			return buf;
		if (!slash)
			return NULL;
		*slash = '/';
		s = slash;
	}
}

bool ows__plat_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *ows__plat_home_dir(void)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res || !res->pw_dir)
		return NULL;
	return realpath(res->pw_dir, NULL);
}

const char *const *ows__plat_environ(void)
{
	return (const char *const *)environ;
}

int64_t ows__plat_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ows__plat_open_append(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
}

int ows__plat_open_read(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

int ows__plat_open_new(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

int ows__plat_write_all(int fd, const void *buf, size_t n)
{
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, (const char *)buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

int ows__plat_commit(int fd, unsigned mode)
{
	if (fchmod(fd, (mode_t)mode) < 0)
		return -1;
	return fsync(fd);
}

int ows__plat_replace(const char *from, const char *to)
{
	return rename(from, to);
}

/* ------------------------------------------------------------------ locks */

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t global_cond = PTHREAD_COND_INITIALIZER;

void ows__plat_global_lock(void) { pthread_mutex_lock(&global_lock); }
void ows__plat_global_unlock(void) { pthread_mutex_unlock(&global_lock); }
void ows__plat_global_wait(void) { pthread_cond_wait(&global_cond, &global_lock); }
void ows__plat_global_wake(void) { pthread_cond_broadcast(&global_cond); }

struct ows__mutex {
	pthread_mutex_t m;
};

ows__mutex *ows__plat_mutex_new(void)
{
	ows__mutex *m = malloc(sizeof(*m));
	if (m && pthread_mutex_init(&m->m, NULL) != 0) {
		free(m);
		m = NULL;
	}
	return m;
}

void ows__plat_mutex_lock(ows__mutex *m) { pthread_mutex_lock(&m->m); }
void ows__plat_mutex_unlock(ows__mutex *m) { pthread_mutex_unlock(&m->m); }

void ows__plat_mutex_free(ows__mutex *m)
{
	if (m) {
		pthread_mutex_destroy(&m->m);
		free(m);
	}
}
