/*
 * Whole small files: read into memory (at most 1 MiB), and replaced atomically (a
 * temporary file beside, written, synced, renamed over).  Through lib/platform.h alone:
 * every platform builds it as it is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"

#define READ_MAX (1u << 20)

int ows__read_file(const char *path, char **out, size_t *len, ows_error *err)
{
	*out = NULL;
	int fd = ows__plat_open_read(path);
	if (fd < 0)
		return ows__fail(err, errno == ENOENT ? OWS_ENOTFOUND : OWS_ESYS, errno, path, NULL,
				 "cannot read the file: %s", strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int rc = buf ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	while (rc == 0) {
		if (n + 1 >= cap) {
			if (cap >= READ_MAX) {
				rc = ows__fail(err, OWS_EINVAL, 0, path, NULL, "the file is too large");
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = ows__fail_sys(err, path, NULL, "cannot read the file");
		else if (r == 0)
			break;
		else
			n += (size_t)r;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int ows__write_file(const char *path, const char *data, size_t len, unsigned mode,
		    ows_error *err)
{
	char *tmp = ows__asprintf(err, "%s.tmp-%d", path, (int)getpid());
	if (!tmp)
		return OWS_ENOMEM;
	int rc = 0;
	int fd = ows__plat_open_new(tmp);
	if (fd < 0) {
		rc = ows__fail_sys(err, tmp, NULL, "cannot write the file");
		free(tmp);
		return rc;
	}
	if (ows__plat_write_all(fd, data, len) < 0)
		rc = ows__fail_sys(err, tmp, NULL, "cannot write the file");
	if (rc == 0 && ows__plat_commit(fd, mode) < 0)
		rc = ows__fail_sys(err, tmp, NULL, "cannot set the file's mode or write it to disk");
	close(fd);
	if (rc == 0 && ows__plat_replace(tmp, path) < 0)
		rc = ows__fail_sys(err, path, NULL, "cannot put the file in place");
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}
