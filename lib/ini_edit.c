/*
 * A line-preserving edit of INI text: one key set or removed in one section, every other
 * line kept as it was (setup turns the machine's provider on and off in its config).
 * Works on strings only: the caller reads and writes the file.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
