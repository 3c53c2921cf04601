/*
 * The environment that points a sandbox's tools at the host's proxy (every proxy
 * variable each tool reads, set or cleared), and which names it owns.  Builds strings
 * only; the proxy itself is proxy.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy.h"

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
