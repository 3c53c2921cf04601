/*
 * The grant journal's format: writing and parsing its lines.  Portable;
 * where the files live and how a live host is told from a dead one is the
 * platform's business (lib/linux/setup/acl.c).  See internal.h for the format.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform.h"

static bool needs_escape(unsigned char ch)
{
	return ch <= 0x20 || ch == '%' || ch == 0x7f;
}

/* Percent-encodes `s` (NULL gives "-"); caller frees. */
static char *encode(const char *s)
{
	if (!s)
		return strdup("-");
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += needs_escape(*p) ? 3 : 1;
	char *out = malloc(n + 1), *q = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (needs_escape(*p)) {
			sprintf(q, "%%%02X", *p);
			q += 3;
		} else {
			*q++ = (char)*p;
		}
	}
	*q = '\0';
	return out;
}

/* Decodes in place; false on a malformed escape or an embedded NUL. */
static bool decode(char *s)
{
	char *q = s;
	for (char *p = s; *p; p++) {
		if (*p != '%') {
			*q++ = *p;
			continue;
		}
		int hi = ows__hexval(p[1]), lo = hi < 0 ? -1 : ows__hexval(p[2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return false;
		*q++ = (char)(hi * 16 + lo);
		p += 2;
	}
	*q = '\0';
	return true;
}

char *ows__jline_grant(const char *account, uint32_t acct_uid, uint32_t person_uid,
		       ows_access access, const char *path, const char *home)
{
	char *p = encode(path), *h = encode(home), *line = NULL;
	if (p && h)
		line = ows__asprintf(NULL, "G %s %" PRIu32 " %" PRIu32 " %s %s %s\n", account,
				     acct_uid, person_uid, access == OWS_ACCESS_RW ? "rw" : "ro",
				     p, h);
	free(p);
	free(h);
	return line;
}

char *ows__jline_revoke(uint32_t acct_uid, const char *path)
{
	char *p = encode(path), *line = NULL;
	if (p)
		line = ows__asprintf(NULL, "R %" PRIu32 " %s\n", acct_uid, p);
	free(p);
	return line;
}

char *ows__jline_pre(const ows__jpre *r)
{
	char mask[2] = "-";
	if (r->mask >= 0)
		mask[0] = (char)('0' + (r->mask & 7));
	return ows__asprintf(NULL, "P %c %" PRIu64 " %" PRIu64 " %s %d %" PRIu32 "\n", r->type,
			     r->dev, r->ino, mask, r->person_added ? 1 : 0, r->acct_uid);
}

static bool parse_u32(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX || s[0] == '-')
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return false;
	*out = v;
	return true;
}

static void grant_free(ows__jgrant *g)
{
	free(g->path);
	free(g->home);
}

static void drop_grant(ows__jstate *st, uint32_t acct_uid, const char *path)
{
	for (size_t i = 0; i < st->ngrants;) {
		if (st->grants[i].acct_uid == acct_uid && strcmp(st->grants[i].path, path) == 0) {
			grant_free(&st->grants[i]);
			st->grants[i] = st->grants[--st->ngrants];
		} else {
			i++;
		}
	}
}

static int cmp_pre(const void *a, const void *b)
{
	const ows__jpre *x = a, *y = b;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->acct_uid != y->acct_uid)
		return x->acct_uid < y->acct_uid ? -1 : 1;
	return 0;
}

/* The same, then by position in the journal, so that the first record sorts first. */
static int cmp_pre_seq(const void *a, const void *b)
{
	int c = cmp_pre(a, b);
	if (c)
		return c;
	const ows__jpre *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One line, NUL-terminated, without its '\n'.  Unknown or malformed lines are skipped. */
static int parse_line(ows__jstate *st, char *line, size_t *capg, size_t *capp, ows_error *err)
{
	char *f[8];
	int n = 0;
	/* Split on spaces in place; not strtok, whose state is shared by every thread. */
	for (char *s = line; *s && n < 8;) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		f[n++] = s;
		s += strcspn(s, " ");
		if (*s)
			*s++ = '\0';
	}
	if (n == 2 && strcmp(f[0], "owsj1") == 0) {
		st->has_header = parse_u32(f[1], &st->owner);
		return 0;
	}
	if (n == 7 && strcmp(f[0], "G") == 0) {
		ows__jgrant g = {0};
		if (strlen(f[1]) >= sizeof(g.account) || !ows__name_is_safe(f[1]) ||
		    !parse_u32(f[2], &g.acct_uid) || !parse_u32(f[3], &g.person_uid) ||
		    (strcmp(f[4], "rw") && strcmp(f[4], "ro")) || !decode(f[5]) || !ows__plat_path_is_absolute(f[5]) ||
		    (strcmp(f[6], "-") && (!decode(f[6]) || !ows__plat_path_is_absolute(f[6]))))
			return 0;
		snprintf(g.account, sizeof(g.account), "%s", f[1]);
		g.access = f[4][1] == 'w' ? OWS_ACCESS_RW : OWS_ACCESS_RO;
		drop_grant(st, g.acct_uid, f[5]);
		if (st->ngrants == *capg) {
			size_t cap = *capg ? *capg * 2 : 8;
			ows__jgrant *v = realloc(st->grants, cap * sizeof(*v));
			if (!v)
				return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
			st->grants = v;
			*capg = cap;
		}
		g.path = strdup(f[5]);
		g.home = strcmp(f[6], "-") ? strdup(f[6]) : NULL;
		if (!g.path || (strcmp(f[6], "-") && !g.home)) {
			grant_free(&g);
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		}
		st->grants[st->ngrants++] = g;
		return 0;
	}
	if (n == 3 && strcmp(f[0], "R") == 0) {
		uint32_t uid;
		if (parse_u32(f[1], &uid) && decode(f[2]))
			drop_grant(st, uid, f[2]);
		return 0;
	}
	if (n == 7 && strcmp(f[0], "P") == 0) {
		ows__jpre p = {0};
		uint32_t mask = 0;
		if ((strcmp(f[1], "a") && strcmp(f[1], "d")) || !parse_u64(f[2], &p.dev) ||
		    !parse_u64(f[3], &p.ino) ||
		    (strcmp(f[4], "-") && (!parse_u32(f[4], &mask) || mask > 7)) ||
		    (strcmp(f[5], "0") && strcmp(f[5], "1")) || !parse_u32(f[6], &p.acct_uid))
			return 0;
		p.type = f[1][0];
		p.mask = strcmp(f[4], "-") ? (int)mask : -1;
		p.person_added = f[5][0] == '1';
		p.seq = st->npres;
		if (st->npres == *capp) {
			size_t cap = *capp ? *capp * 2 : 16;
			ows__jpre *v = realloc(st->pres, cap * sizeof(*v));
			if (!v)
				return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
			st->pres = v;
			*capp = cap;
		}
		st->pres[st->npres++] = p;
	}
	return 0;
}

int ows__jstate_parse(const char *text, size_t len, ows__jstate *st, ows_error *err)
{
	memset(st, 0, sizeof(*st));
	size_t capg = 0, capp = 0;
	size_t start = 0;
	while (start < len) {
		const char *nl = memchr(text + start, '\n', len - start);
		if (!nl)
			break; /* torn last line */
		size_t n = (size_t)(nl - (text + start));
		char *line = malloc(n + 1);
		if (!line) {
			ows__jstate_free(st);
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		}
		memcpy(line, text + start, n);
		line[n] = '\0';
		int rc = memchr(line, '\0', n) ? 0 : parse_line(st, line, &capg, &capp, err);
		free(line);
		if (rc < 0) {
			ows__jstate_free(st);
			return rc;
		}
		start += n + 1;
	}
	if (st->npres > 1) {
		qsort(st->pres, st->npres, sizeof(*st->pres), cmp_pre_seq);
		/* The first record of a node wins: it is the state before any grant. */
		size_t w = 1;
		for (size_t i = 1; i < st->npres; i++)
			if (cmp_pre(&st->pres[i], &st->pres[w - 1]) != 0)
				st->pres[w++] = st->pres[i];
		st->npres = w;
	}
	return 0;
}

const ows__jpre *ows__jstate_find_pre(const ows__jstate *st, char type, uint64_t dev,
				      uint64_t ino, uint32_t acct_uid)
{
	if (!st || !st->npres)
		return NULL;
	ows__jpre key = {.type = type, .dev = dev, .ino = ino, .acct_uid = acct_uid};
	return bsearch(&key, st->pres, st->npres, sizeof(key), cmp_pre);
}

void ows__jstate_free(ows__jstate *st)
{
	for (size_t i = 0; i < st->ngrants; i++)
		grant_free(&st->grants[i]);
	free(st->grants);
	free(st->pres);
	memset(st, 0, sizeof(*st));
}
