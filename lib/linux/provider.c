/*
 * The Linux providers, by name (lib/session.c opens them, lib/machine.c finds their
 * setup).  Each one's machine entry is NULL: all three share the machine's own setup
 * (lib/linux/setup/machine.c); openshell brings its own.
 */
#include <string.h>

#include "internal.h"

extern const ows__provider ows__landlock_provider;
extern const ows__provider ows__direct_provider;
extern const ows__provider ows__account_provider;
extern const ows__provider ows__openshell_provider;

const ows__provider *ows__provider_find(const char *name)
{
	static const ows__provider *const providers[] = {
		&ows__landlock_provider,
		&ows__account_provider,
		&ows__direct_provider,
		&ows__openshell_provider,
	};
	for (size_t i = 0; name && i < OWS__ARRAY_LEN(providers); i++)
		if (strcmp(providers[i]->name, name) == 0)
			return providers[i];
	return NULL;
}
