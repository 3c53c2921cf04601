/*
 * Named groups of sites, as the product documents offer them under
 * "Choose sites…", and the allow-sites file reader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

static const char *const code_hosting[] = {
	"github.com:443",
	"api.github.com:443",
	"codeload.github.com:443",
	"uploads.github.com:443",
	"objects.githubusercontent.com:443",
	"raw.githubusercontent.com:443",
	"gitlab.com:443",
	"registry.gitlab.com:443",
	NULL,
};

static const char *const package_registries[] = {
	"pypi.org:443",               /* PyPI: index */
	"files.pythonhosted.org:443", /* PyPI: the files */
	"registry.npmjs.org:443",     /* npm */
	"crates.io:443",              /* crates.io: API */
	"index.crates.io:443",        /* crates.io: sparse index */
	"static.crates.io:443",       /* crates.io: the crates */
	"proxy.golang.org:443",       /* Go module proxy */
	"sum.golang.org:443",         /* Go checksum database */
	NULL,
};

static const char *const search_apis[] = {
	"api.search.brave.com:443",
	"api.tavily.com:443",
	"duckduckgo.com:443",
	"html.duckduckgo.com:443",
	"lite.duckduckgo.com:443",
	"api.duckduckgo.com:443",
	NULL,
};

static const struct {
	const char *name;
	const char *const *hosts;
} groups[] = {
	{"code-hosting", code_hosting},
	{"package-registries", package_registries},
	{"search-apis", search_apis},
};

static const char *const group_names[] = {"code-hosting", "package-registries", "search-apis",
					  NULL};

const char *const *ows__sites_group(const char *name)
{
	if (!name)
		return NULL;
	if (name[0] == '@')
		name++;
	for (size_t i = 0; i < OWS__ARRAY_LEN(groups); i++)
		if (strcmp(groups[i].name, name) == 0)
			return groups[i].hosts;
	return NULL;
}

const char *const *ows__sites_group_names(void)
{
	return group_names;
}

int ows__sites_file_read(const char *path, ows__strv *out, ows_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return ows__fail_sys(err, path, "give a readable file, one site per line",
				     "cannot read the allow-sites file");
	char line[1024];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t n = strlen(line);
		if (n == sizeof(line) - 1 && line[n - 1] != '\n' && !feof(f)) {
			char where[600];
			snprintf(where, sizeof(where), "%s:%d", path, lineno);
			rc = ows__fail(err, OWS_EINVAL, 0, where, "one site per line", "line too long");
			break;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		char *e = s + strlen(s);
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
			*--e = '\0';
		if (!*s)
			continue;
		ows_error local;
		ows_error_clear(&local);
		if (ows__site_check(s, &local) < 0) {
			char where[600];
			snprintf(where, sizeof(where), "%s:%d", path, lineno);
			rc = ows__fail(err, OWS_EINVAL, 0, where, local.hint, "%s: %s", local.what, s);
			break;
		}
		if ((rc = ows__strv_push(out, s, err)) < 0)
			break;
	}
	if (rc == 0 && ferror(f))
		rc = ows__fail_sys(err, path, NULL, "cannot read the allow-sites file");
	fclose(f);
	return rc;
}
