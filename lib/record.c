/*
 * The setup record and its checksum, SHA-256 and file helpers, and the INI
 * edit that turns the machine's provider on and off.
 *
 * The checksum detects drift and hand edits of a file only root may write
 * (the state folder is root's); it is not a signature, and does not pretend
 * to stop root.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

#include "platform.h"
#include "record.h"

#define READ_MAX (1u << 20)

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

static char *record_path(const char *state_dir, ows_error *err)
{
	return ows__asprintf(err, "%s/%s", state_dir, OWS__RECORD_FILE);
}

int ows__record_checksum(json_t *record, char out[72], ows_error *err)
{
	json_t *copy = json_copy(record);
	if (!copy)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	json_object_del(copy, "checksum");
	char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(copy);
	if (!text)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	char hex[65];
	ows__sha256_hex(text, strlen(text), hex);
	free(text);
	snprintf(out, 72, "sha256:%s", hex);
	return 0;
}

int ows__record_load(const char *state_dir, json_t **out, ows_error *err)
{
	*out = NULL;
	char *path = record_path(state_dir, err);
	if (!path)
		return OWS_ENOMEM;
	char *text = NULL;
	int rc = ows__read_file(path, &text, NULL, NULL);
	if (rc == OWS_ENOTFOUND) {
		rc = ows__fail(err, OWS_ENOTFOUND, ENOENT, path, "sudo owsbx machine sandbox setup",
			       "the machine is not set up for the account provider");
		goto out;
	}
	if (rc < 0) {
		rc = ows__fail(err, OWS_ESETUP, errno, path, "sudo owsbx machine sandbox setup",
			       "cannot read the setup record");
		goto out;
	}
	json_error_t jerr;
	json_t *rec = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	const char *sum = json_string_value(json_object_get(rec, "checksum"));
	char want[72];
	if (!json_is_object(rec) || !sum) {
		rc = ows__fail(err, OWS_ESETUP, 0, path, "sudo owsbx machine sandbox setup",
			       "the setup record is damaged (%s)",
			       rec ? "no checksum" : jerr.text);
	} else if ((rc = ows__record_checksum(rec, want, err)) == 0 && strcmp(want, sum) != 0) {
		rc = ows__fail(err, OWS_ESETUP, 0, path,
			       "someone edited the record: check the machine, then "
			       "sudo owsbx machine sandbox setup",
			       "the setup record does not match its checksum");
	} else if (rc == 0 && json_integer_value(json_object_get(rec, "version")) !=
				      OWS__RECORD_VERSION) {
		rc = ows__fail(err, OWS_ESETUP, 0, path, "sudo owsbx machine sandbox setup",
			       "the setup record has a version this build does not know");
	}
	if (rc < 0) {
		json_decref(rec);
		goto out;
	}
	json_object_del(rec, "checksum");
	*out = rec;
out:
	free(text);
	free(path);
	return rc;
}

int ows__record_save(const char *state_dir, json_t *record, ows_error *err)
{
	char sum[72];
	int rc = ows__record_checksum(record, sum, err);
	if (rc < 0)
		return rc;
	json_t *copy = json_copy(record);
	if (!copy)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	json_object_set_new(copy, "checksum", json_string(sum));
	char *text = json_dumps(copy, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(copy);
	char *path = record_path(state_dir, err);
	char *withnl = text && path ? ows__asprintf(err, "%s\n", text) : NULL;
	if (!withnl)
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	else
		rc = ows__write_file(path, withnl, strlen(withnl), 0644, err);
	free(withnl);
	free(text);
	free(path);
	return rc;
}

/* ------------------------------------------------------------------- INI */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Section name of a "[name]" line into buf; false when the line is not one. */
static bool line_section(const char *p, const char *end, char *buf, size_t len)
{
	p = skip_ws(p, end);
	if (p >= end || *p != '[')
		return false;
	const char *close = memchr(p, ']', (size_t)(end - p));
	if (!close)
		return false;
	const char *s = skip_ws(p + 1, close);
	const char *e = close;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	snprintf(buf, len, "%.*s", (int)(e - s), s);
	return true;
}

/* Whether a line sets `key`; *value points after the '=' when it does. */
static bool line_key(const char *p, const char *end, const char *key, const char **value)
{
	p = skip_ws(p, end);
	size_t n = strlen(key);
	if ((size_t)(end - p) < n || strncmp(p, key, n) != 0)
		return false;
	p = skip_ws(p + n, end);
	if (p >= end || (*p != '=' && *p != ':'))
		return false;
	*value = skip_ws(p + 1, end);
	return true;
}

typedef struct buf {
	char *p;
	size_t len, cap;
	bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_key(buf *b, const char *key, const char *value)
{
	puts_(b, key);
	puts_(b, " = ");
	puts_(b, value);
	puts_(b, "\n");
}

int ows__ini_set(const char *in, const char *section, const char *key, const char *value,
		 char **out, ows_error *err)
{
	*out = NULL;
	buf b = {0};
	char cur[128] = "", old[512];
	/* A key already there is replaced where it stands; a new one goes under the header. */
	bool has = ows__ini_get(in, section, key, old, sizeof(old));
	bool done = false;
	const char *p = in ? in : "";
	while (*p) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		const char *next = nl ? nl + 1 : end;
		char name[128];
		const char *v;
		if (line_section(p, end, name, sizeof(name))) {
			snprintf(cur, sizeof(cur), "%s", name);
			put(&b, p, (size_t)(end - p));
			puts_(&b, "\n");
			if (!has && !done && value && strcmp(cur, section) == 0) {
				put_key(&b, key, value);
				done = true;
			}
			p = next;
			continue;
		}
		if (strcmp(cur, section) == 0 && line_key(p, end, key, &v)) {
			if (!done && value)
				put_key(&b, key, value);
			done = true;
			p = next;
			continue;
		}
		put(&b, p, (size_t)(end - p));
		if (nl)
			puts_(&b, "\n");
		p = next;
	}
	if (!done && value) {
		if (b.len && b.p[b.len - 1] != '\n')
			puts_(&b, "\n");
		if (b.len)
			puts_(&b, "\n");
		puts_(&b, "[");
		puts_(&b, section);
		puts_(&b, "]\n");
		put_key(&b, key, value);
	}
	if (!b.p && !b.oom)
		put(&b, "", 0);
	if (b.oom) {
		free(b.p);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	*out = b.p;
	return 0;
}

bool ows__ini_get(const char *in, const char *section, const char *key, char *out, size_t len)
{
	char cur[128] = "";
	const char *p = in ? in : "";
	bool found = false;
	while (*p) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		char name[128];
		const char *v;
		if (line_section(p, end, name, sizeof(name))) {
			snprintf(cur, sizeof(cur), "%s", name);
		} else if (strcmp(cur, section) == 0 && line_key(p, end, key, &v)) {
			const char *e = end;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			snprintf(out, len, "%.*s", (int)(e - v), v);
			found = true;
		}
		p = nl ? nl + 1 : end;
	}
	return found;
}
