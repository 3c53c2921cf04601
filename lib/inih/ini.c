/*
 * A small INI reader with inih's callback API and its default rules (see
 * lib/inih/ini.h).  Used by the Windows build only: the Linux build links
 * Debian's libinih.  test/win/config.c runs it on the same config files the
 * Linux tests use.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

#define INI_MAX_LINE 200 /* inih's default: longer lines are an error */
#define MAX_SECTION 50
#define MAX_NAME 50

static char *rstrip(char *s)
{
	char *p = s + strlen(s);
	while (p > s && isspace((unsigned char)*--p))
		*p = '\0';
	return s;
}

static char *lskip(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return (char *)s;
}

/* The first of `chars` in s, or an inline comment (';' after white space), or the end. */
static char *find_chars_or_comment(const char *s, const char *chars)
{
	int was_space = 0;
	while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return (char *)s;
}

static void copy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

typedef char *(*reader)(char *buf, int size, void *stream);

static int parse_stream(reader rd, void *stream, ini_handler handler, void *user)
{
	char line[INI_MAX_LINE];
	char section[MAX_SECTION] = "";
	char prev_name[MAX_NAME] = "";
	int lineno = 0, error = 0;

	while (rd(line, (int)sizeof(line), stream)) {
		lineno++;
		size_t len = strlen(line);
		int too_long = len == sizeof(line) - 1 && line[len - 1] != '\n';
		if (too_long) { /* skip the rest of the line; inih reports it */
			char rest[INI_MAX_LINE];
			while (rd(rest, (int)sizeof(rest), stream)) {
				size_t m = strlen(rest);
				if (m && rest[m - 1] == '\n')
					break;
			}
			if (!error)
				error = lineno;
			continue;
		}
		char *start = line;
		if (lineno == 1 && (unsigned char)start[0] == 0xEF &&
		    (unsigned char)start[1] == 0xBB && (unsigned char)start[2] == 0xBF)
			start += 3;
		start = lskip(rstrip(start));
		if (*start == ';' || *start == '#' || *start == '\0')
			continue;
		if (*start == '[') {
			char *end = find_chars_or_comment(start + 1, "]");
			if (*end == ']') {
				*end = '\0';
				copy(section, start + 1, sizeof(section));
				prev_name[0] = '\0';
			} else if (!error) {
				error = lineno;
			}
			continue;
		}
		char *end = find_chars_or_comment(start, "=:");
		if (*end == '=' || *end == ':') {
			*end = '\0';
			char *name = rstrip(start);
			char *value = end + 1;
			end = find_chars_or_comment(value, NULL);
			if (*end)
				*end = '\0';
			value = lskip(value);
			rstrip(value);
			copy(prev_name, name, sizeof(prev_name));
			if (!handler(user, section, name, value) && !error)
				error = lineno;
		} else if (!error) {
			error = lineno;
		}
	}
	return error;
}

static char *file_reader(char *buf, int size, void *stream)
{
	return fgets(buf, size, (FILE *)stream);
}

int ini_parse_file(FILE *file, ini_handler handler, void *user)
{
	return parse_stream(file_reader, file, handler, user);
}

int ini_parse(const char *filename, ini_handler handler, void *user)
{
	FILE *f = fopen(filename, "r");
	if (!f)
		return -1;
	int rc = ini_parse_file(f, handler, user);
	fclose(f);
	return rc;
}

struct string_stream {
	const char *p;
};

static char *string_reader(char *buf, int size, void *stream)
{
	struct string_stream *ss = stream;
	if (!*ss->p || size < 2)
		return NULL;
	int n = 0;
	while (n < size - 1 && ss->p[n]) {
		buf[n] = ss->p[n];
		if (ss->p[n++] == '\n')
			break;
	}
	buf[n] = '\0';
	ss->p += n;
	return buf;
}

int ini_parse_string(const char *string, ini_handler handler, void *user)
{
	struct string_stream ss = {string};
	return parse_stream(string_reader, &ss, handler, user);
}
