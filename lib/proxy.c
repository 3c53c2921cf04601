/*
 * The allow-list proxy is portable library code still to be written.
 * Until it lands, starting one says so plainly.
 */
#include <string.h>

#include "internal.h"

void ows_proxy_options_init(ows_proxy_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

int ows_proxy_start(const ows_proxy_options *opts, ows_proxy **out, ows_error *err)
{
	if (out)
		*out = NULL;
	return ows__fail(err, OWS_ENOSYS, 0, "proxy", "use --net none or --net open for now",
			 "the allow-list proxy is not available in this version");
}

int ows_proxy_port(const ows_proxy *proxy) { return -1; }

int ows_proxy_allow(ows_proxy *proxy, const char *pattern, ows_error *err)
{
	return ows_proxy_start(NULL, NULL, err);
}

int ows_proxy_disallow(ows_proxy *proxy, const char *pattern, ows_error *err)
{
	return ows_proxy_start(NULL, NULL, err);
}

int ows_proxy_blocked_json(ows_proxy *proxy, int64_t since_ms, char **out, ows_error *err)
{
	if (out)
		*out = NULL;
	return ows_proxy_start(NULL, NULL, err);
}

void ows_proxy_stop(ows_proxy *proxy) { }
