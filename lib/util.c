/*
 * Small helpers shared by the library: memory, strings, time, randomness.  Linked into
 * the setuid launcher: no jansson, no inih, nothing that reads the environment.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "platform.h"

void *ows__calloc(size_t n, size_t size, ows_error *err)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	return p;
}

char *ows__strdup(const char *s, ows_error *err)
{
	char *p = strdup(s ? s : "");
	if (!p)
		ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	return p;
}

char *ows__asprintf(ows_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "cannot format string");
		return NULL;
	}
	char *p = malloc((size_t)n + 1);
	if (!p) {
		ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

int64_t ows__now_ms(void)
{
	return ows__plat_now_ms();
}

int ows__random_hex(char *buf, size_t n, ows_error *err)
{
	unsigned char raw[64];
	static const char digits[] = "0123456789abcdef";

	if (n > sizeof(raw))
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "random request too large");
	if (ows__plat_random(raw, n) < 0)
		return ows__fail_sys(err, "random source", NULL, "cannot read random bytes");
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = digits[raw[i] >> 4];
		buf[2 * i + 1] = digits[raw[i] & 15];
	}
	buf[2 * n] = '\0';
	return 0;
}

int ows__strv_push(ows__strv *sv, const char *s, ows_error *err)
{
	if (sv->len + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 16;
		char **v = realloc(sv->v, cap * sizeof(*v));
		if (!v)
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		sv->v = v;
		sv->cap = cap;
	}
	char *copy = ows__strdup(s, err);
	if (!copy)
		return OWS_ENOMEM;
	sv->v[sv->len++] = copy;
	sv->v[sv->len] = NULL;
	return 0;
}

int ows__strv_pushf(ows__strv *sv, ows_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "cannot format string");
	char *p = malloc((size_t)n + 1);
	if (!p)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int rc = ows__strv_push(sv, p, err);
	free(p);
	return rc;
}

void ows__strv_free(ows__strv *sv)
{
	for (size_t i = 0; i < sv->len; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->len = sv->cap = 0;
}

int ows__hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The one table of network mode names: policies, the config, the CLI and the launcher. */
static const struct {
	const char *name;
	ows_net net;
} net_names[] = {{"none", OWS_NET_NONE}, {"open", OWS_NET_OPEN}, {"allowlist", OWS_NET_ALLOWLIST}};

const char *ows__net_name(ows_net net)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(net_names); i++)
		if (net_names[i].net == net)
			return net_names[i].name;
	return "default";
}

int ows_net_from_name(const char *name, ows_net *out)
{
	for (size_t i = 0; name && i < OWS__ARRAY_LEN(net_names); i++)
		if (strcmp(name, net_names[i].name) == 0) {
			*out = net_names[i].net;
			return 0;
		}
	return OWS_EINVAL;
}
