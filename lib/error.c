/* The error model: codes, names, and the caller-owned error struct. */
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
	vsnprintf(err->what, sizeof(err->what), fmt, ap);
	snprintf(err->where, sizeof(err->where), "%s", where ? where : "");
	snprintf(err->hint, sizeof(err->hint), "%s", hint ? hint : "");
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
