/*
 * The error model: codes, names, and the caller-owned error struct.  Linked into the
 * setuid launcher: no jansson, no allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct {
	int code;
	const char *name;
	const char *text;
} error_table[] = {
	{OWS_OK, "OWS_OK", "success"},
	{OWS_EINVAL, "OWS_EINVAL", "invalid argument"},
	{OWS_ENOMEM, "OWS_ENOMEM", "out of memory"},
	{OWS_ESYS, "OWS_ESYS", "system call failed"},
	{OWS_EUNSUPPORTED, "OWS_EUNSUPPORTED", "cannot be enforced on this machine"},
	{OWS_EVERIFY, "OWS_EVERIFY", "the wall failed its proof"},
	{OWS_ESETUP, "OWS_ESETUP", "machine setup missing or broken"},
	{OWS_EPERM, "OWS_EPERM", "not permitted"},
	{OWS_ESPAWN, "OWS_ESPAWN", "the command could not start"},
	{OWS_ESTATE, "OWS_ESTATE", "wrong state for this call"},
	{OWS_ENOTFOUND, "OWS_ENOTFOUND", "not found"},
	{OWS_ETIMEDOUT, "OWS_ETIMEDOUT", "timed out"},
	{OWS_ECONFIG, "OWS_ECONFIG", "bad machine configuration"},
	{OWS_ENOSYS, "OWS_ENOSYS", "not available in this build"},
};

void ows_error_clear(ows_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

const char *ows_strerror(int code)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(error_table); i++)
		if (error_table[i].code == code)
			return error_table[i].text;
	return "unknown error";
}

const char *ows_err_name(int code)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(error_table); i++)
		if (error_table[i].code == code)
			return error_table[i].name;
	return "OWS_E?";
}

void ows_free(void *p)
{
	free(p);
}

const char *ows_version(void)
{
	return OWS_VERSION;
}

/*
 * Length of the valid UTF-8 character at `s` (2-4 bytes, none of them an
 * overlong form or a surrogate), or 0.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

char *ows_text_escape(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	if (!dst || size == 0)
		return dst;
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t o = 0;
	while (*s) {
		size_t n = *s >= 0x20 && *s < 0x7f ? 1 : utf8_len(s);
		/* U+0080..U+009F, the C1 controls, are C2 80..C2 9F in UTF-8. */
		if (n == 2 && s[0] == 0xc2 && s[1] <= 0x9f)
			n = 0;
		if (n == 0) {
			if (o + 4 >= size)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[*s >> 4];
			dst[o++] = hex[*s & 15];
			s++;
			continue;
		}
		if (o + n >= size)
			break;
		memcpy(dst + o, s, n);
		o += n;
		s += n;
	}
	dst[o] = '\0';
	return dst;
}

/* The format attribute lets clang (the macOS build) check vsnprintf's format as the callers'. */
static void record(ows_error *err, int code, int sys_errno, const char *where, const char *hint,
		   const char *fmt, va_list ap) OWS__PRINTF(6, 0);
static void record(ows_error *err, int code, int sys_errno, const char *where, const char *hint,
		   const char *fmt, va_list ap)
{
	if (!err || err->code != 0)
		return;
	err->code = code;
	err->sys_errno = sys_errno;
	/* Error text carries paths and names the agent chose: it leaves here safe to print. */
	char what[sizeof(err->what)];
	vsnprintf(what, sizeof(what), fmt, ap);
	ows_text_escape(err->what, sizeof(err->what), what);
	ows_text_escape(err->where, sizeof(err->where), where);
	ows_text_escape(err->hint, sizeof(err->hint), hint);
}

int ows__fail(ows_error *err, int code, int sys_errno, const char *where, const char *hint,
	      const char *what_fmt, ...)
{
	va_list ap;
	va_start(ap, what_fmt);
	record(err, code, sys_errno, where, hint, what_fmt, ap);
	va_end(ap);
	return code;
}

int ows__fail_sys(ows_error *err, const char *where, const char *hint, const char *what_fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, what_fmt);
	record(err, OWS_ESYS, saved, where, hint, what_fmt, ap);
	va_end(ap);
	errno = saved;
	return OWS_ESYS;
}
