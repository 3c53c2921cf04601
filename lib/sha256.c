/*
 * SHA-256 as hex, of a buffer or of a file's content (mbedTLS): the setup record's checksum
 * and setup's comparison of installed files.  Reads only; holds no state.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

#include "platform.h"

static void to_hex(const unsigned char *raw, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[raw[i] >> 4];
		out[2 * i + 1] = digits[raw[i] & 15];
	}
	out[2 * n] = '\0';
}

void ows__sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char raw[32];
#if MBEDTLS_VERSION_MAJOR >= 3
	mbedtls_sha256(data, len, raw, 0);
#else
	mbedtls_sha256_ret(data, len, raw, 0);
#endif
	to_hex(raw, sizeof(raw), out);
}

int ows__sha256_file(const char *path, char out[65], ows_error *err)
{
	int fd = ows__plat_open_read(path);
	if (fd < 0)
		return ows__fail(err, errno == ENOENT ? OWS_ENOTFOUND : OWS_ESYS, errno, path, NULL,
				 "cannot read the file: %s", strerror(errno));
	mbedtls_sha256_context ctx;
	mbedtls_sha256_init(&ctx);
#if MBEDTLS_VERSION_MAJOR >= 3
	mbedtls_sha256_starts(&ctx, 0);
#else
	mbedtls_sha256_starts_ret(&ctx, 0);
#endif
	unsigned char buf[65536];
	int rc = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ows__fail_sys(err, path, NULL, "cannot read the file");
			break;
		}
		if (n == 0)
			break;
#if MBEDTLS_VERSION_MAJOR >= 3
		mbedtls_sha256_update(&ctx, buf, (size_t)n);
#else
		mbedtls_sha256_update_ret(&ctx, buf, (size_t)n);
#endif
	}
	close(fd);
	if (rc == 0) {
		unsigned char raw[32];
#if MBEDTLS_VERSION_MAJOR >= 3
		mbedtls_sha256_finish(&ctx, raw);
#else
		mbedtls_sha256_finish_ret(&ctx, raw);
#endif
		to_hex(raw, sizeof(raw), out);
	}
	mbedtls_sha256_free(&ctx);
	return rc;
}
