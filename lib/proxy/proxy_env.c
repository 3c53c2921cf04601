/*
 * Named groups of sites, as the product documents offer them under
 * "Choose sites…", and the allow-sites file reader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Every name ows__proxy_env sets, and the ones it clears by leaving them out. */
static const char *const proxy_vars[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", "RSYNC_PROXY",
	"OWSBX_PROXY", "npm_config_proxy", "npm_config_https_proxy", "npm_config_noproxy",
	"YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY", "CARGO_HTTP_PROXY",
	"NODE_USE_ENV_PROXY", "GLOBAL_AGENT_HTTP_PROXY", "GLOBAL_AGENT_HTTPS_PROXY",
	"GIT_PROXY_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "JAVA_TOOL_OPTIONS", "SOCKS_PROXY",
	"SOCKS5_PROXY", "SOCKS_SERVER", NULL,
};

bool ows__proxy_env_is_ours(const char *name, size_t len)
{
	for (const char *const *v = proxy_vars; *v; v++)
		if (strlen(*v) == len && strncasecmp(*v, name, len) == 0)
			return true;
	return false;
}

int ows__proxy_env(int port, const char *ssh_tunnel_cmd, ows__strv *out, ows_error *err)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	/* Lower-case forms too: curl reads only http_proxy in lower case, and
	 * Python, Go and git read either.  NO_PROXY is left empty on purpose: a
	 * tool that skips the proxy has no route at all, so there is nothing to
	 * exempt (not even localhost, which the wall closes). */
	static const char *const url_vars[] = {
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
		"OWSBX_PROXY", "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY",
		"YARN_HTTPS_PROXY", "PIP_PROXY", "CARGO_HTTP_PROXY", "GLOBAL_AGENT_HTTP_PROXY",
		"GLOBAL_AGENT_HTTPS_PROXY", NULL,
	};
	int rc = 0;
	for (const char *const *v = url_vars; *v && rc == 0; v++)
		rc = ows__strv_pushf(out, err, "%s=%s", *v, url);
	if (rc == 0)
		rc = ows__strv_push(out, "NO_PROXY=", err);
	if (rc == 0)
		rc = ows__strv_push(out, "no_proxy=", err);
	if (rc == 0)
		rc = ows__strv_push(out, "NODE_USE_ENV_PROXY=1", err); /* Node 24+: fetch, http */
	if (rc == 0)
		rc = ows__strv_pushf(out, err,
				     "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=%d "
				     "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=%d "
				     "-Dhttp.nonProxyHosts= -Djava.net.useSystemProxies=false",
				     port, port);
	if (rc == 0 && ssh_tunnel_cmd)
		rc = ows__strv_pushf(out, err, "GIT_SSH_COMMAND=ssh -o ProxyCommand='%s'",
				     ssh_tunnel_cmd);
	return rc;
}
