#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

void owsbx_usage(FILE *out)
{
	fputs("usage: owsbx run [--rw DIR]... [--ro DIR]... [--net none|open|allowlist]\n"
	      "                 [--allow-site HOST[:PORT]]... [--allow-sites-file FILE]\n"
	      "                 [--provider NAME] [--policy FILE] [--config FILE] [--events FILE]\n"
	      "                 [--env NAME=VALUE]... -- CMD [ARG]...\n"
	      "       owsbx verify [same options as run, without the command]\n"
	      "       owsbx report [--json]\n"
	      "       owsbx credentials [--json]      the logins and toolchains this machine can share\n"
	      "       owsbx machine sandbox setup [--for-user NAME] [--launcher-source FILE] [--yes]\n"
	      "       owsbx machine sandbox status [--json]\n"
	      "       owsbx machine sandbox remove [--yes]\n"
	      "       owsbx machine sandbox cleanup\n"
	      "       owsbx proxy [--port N] [--allow-site HOST[:PORT]]... [--allow-sites-file FILE]...\n"
	      "       owsbx connect HOST PORT [--proxy 127.0.0.1:PORT]   (ssh's ProxyCommand)\n"
	      "       owsbx apparmor-profile [--name NAME] PROGRAM   an AppArmor profile granting\n"
	      "                 PROGRAM user namespaces (Ubuntu 24.04 withholds them otherwise)\n"
	      "       owsbx version\n"
	      "\n"
	      "run exits with the command's status; 70 when the wall could not be set up,\n"
	      "71 when the command could not start, 2 for bad usage.\n",
	      out);
}

static int usage_error(ows_error *err, const char *where, const char *what)
{
	ows_error_clear(err);
	snprintf(err->what, sizeof(err->what), "%s", what);
	snprintf(err->where, sizeof(err->where), "%s", where ? where : "");
	snprintf(err->hint, sizeof(err->hint), "run `owsbx help` for usage");
	err->code = OWS_EINVAL;
	return OWSBX_EXIT_USAGE;
}

/* Options that shape a policy, in order, applied after --policy is loaded. */
typedef struct pending {
	const char *opt;
	const char *val;
} pending;

static int apply(owsbx_args *a, const pending *p, ows_error *err)
{
	int rc = 0;
	if (strcmp(p->opt, "--rw") == 0 || strcmp(p->opt, "--ro") == 0) {
		rc = ows_policy_add_folder(a->policy, p->val,
					   p->opt[3] == 'w' ? OWS_ACCESS_RW : OWS_ACCESS_RO, err);
	} else if (strcmp(p->opt, "--net") == 0) {
		ows_net net;
		if (ows_net_from_name(p->val, &net) != 0)
			return usage_error(err, p->val, "unknown network mode (use none, open or allowlist)");
		rc = ows_policy_set_network(a->policy, net, err);
	} else if (strcmp(p->opt, "--provider") == 0) {
		rc = ows_policy_set_provider(a->policy, p->val, err);
	} else if (strcmp(p->opt, "--env") == 0) {
		const char *eq = strchr(p->val, '=');
		if (!eq || eq == p->val)
			return usage_error(err, p->val, "--env takes NAME=VALUE");
		/* The whole name, however long: the library judges it, not a buffer's size. */
		char *name = strndup(p->val, (size_t)(eq - p->val));
		if (!name)
			return usage_error(err, NULL, "out of memory");
		rc = ows_policy_set_env(a->policy, name, eq + 1, err);
		free(name);
	} else if (strcmp(p->opt, "--allow-site") == 0) {
		rc = ows_policy_add_host(a->policy, p->val, err);
	} else if (strcmp(p->opt, "--allow-sites-file") == 0) {
		rc = ows_policy_add_hosts_file(a->policy, p->val, err);
	}
	return rc < 0 ? OWSBX_EXIT_USAGE : 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* "127.0.0.1:47800", "http://127.0.0.1:47800/", "[::1]:47800" */
int owsbx_split_proxy(const char *s, char *host, size_t cap, int *port)
{
	if (strncmp(s, "http://", 7) == 0)
		s += 7;
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return -1;
	size_t hl = (size_t)(colon - s);
	if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	if (hl == 0 || hl >= cap)
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	char portbuf[8];
	size_t pl = strcspn(colon + 1, "/");
	if (pl == 0 || pl >= sizeof(portbuf))
		return -1;
	memcpy(portbuf, colon + 1, pl);
	portbuf[pl] = '\0';
	return parse_int(portbuf, 1, 65535, port);
}

static int parse_proxy(int argc, char **argv, owsbx_args *a, ows_error *err)
{
	a->sites = calloc((size_t)argc, sizeof(*a->sites));
	a->site_files = calloc((size_t)argc, sizeof(*a->site_files));
	if (!a->sites || !a->site_files)
		return usage_error(err, NULL, "out of memory");
	const char *positional[2] = {NULL, NULL};
	int npos = 0;
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		bool proxy = a->cmd == OWSBX_CMD_PROXY;
		if (arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (proxy || npos == 2)
				return usage_error(err, arg, "unexpected argument");
			positional[npos++] = arg;
			continue;
		}
		if (i + 1 >= argc)
			return usage_error(err, arg, "option needs a value");
		const char *val = argv[++i];
		int *num = NULL, lo = 1, hi = 65535;
		if (proxy && strcmp(arg, "--allow-site") == 0)
			a->sites[a->nsites++] = val;
		else if (proxy && strcmp(arg, "--allow-sites-file") == 0)
			a->site_files[a->nsite_files++] = val;
		else if (proxy && strcmp(arg, "--hosts-file") == 0)
			a->hosts_file = val;
		else if (proxy && strcmp(arg, "--port") == 0)
			num = &a->port, lo = 0;
		else if (proxy && strcmp(arg, "--connect-timeout-ms") == 0)
			num = &a->connect_timeout_ms, hi = 3600000;
		else if (proxy && strcmp(arg, "--response-timeout-ms") == 0)
			num = &a->response_timeout_ms, hi = 3600000;
		else if (proxy && strcmp(arg, "--max-conns") == 0)
			num = &a->max_conns, hi = 1000000;
		else if (!proxy && strcmp(arg, "--proxy") == 0)
			a->proxy_addr = val;
		else
			return usage_error(err, arg, "unknown option");
		if (num && parse_int(val, lo, hi, num) != 0)
			return usage_error(err, val, "not a number in range");
	}
	if (a->cmd == OWSBX_CMD_CONNECT) {
		if (npos != 2)
			return usage_error(err, NULL, "usage: owsbx connect HOST PORT [--proxy 127.0.0.1:PORT]");
		a->connect_host = positional[0];
		if (parse_int(positional[1], 1, 65535, &a->connect_port) != 0)
			return usage_error(err, positional[1], "not a port");
		if (!a->proxy_addr)
			a->proxy_addr = getenv("OWSBX_PROXY");
		if (!a->proxy_addr || !*a->proxy_addr)
			a->proxy_addr = getenv("HTTPS_PROXY");
		if (!a->proxy_addr || !*a->proxy_addr)
			a->proxy_addr = getenv("https_proxy");
		if (!a->proxy_addr || !*a->proxy_addr)
			return usage_error(err, NULL, "no proxy: give --proxy 127.0.0.1:PORT or set OWSBX_PROXY");
	}
	return 0;
}

/* apparmor-profile [--name NAME] PROGRAM */
static int parse_apparmor(int argc, char **argv, owsbx_args *a, ows_error *err)
{
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--name") == 0) {
			if (i + 1 >= argc)
				return usage_error(err, argv[i], "option needs a value");
			a->profile_name = argv[++i];
		} else if (argv[i][0] == '-') {
			return usage_error(err, argv[i], "unknown option");
		} else if (a->program) {
			return usage_error(err, argv[i], "unexpected argument");
		} else {
			a->program = argv[i];
		}
	}
	if (!a->program)
		return usage_error(err, NULL, "usage: owsbx apparmor-profile [--name NAME] PROGRAM");
	return 0;
}

int owsbx_parse(int argc, char **argv, owsbx_args *a, ows_error *err)
{
	static const char *const policy_opts[] = {"--rw", "--ro", "--net", "--provider", "--env",
						  "--allow-site", "--allow-sites-file"};
	memset(a, 0, sizeof(*a));
	a->config_path = getenv("OWSBX_CONFIG");
	if (a->config_path && !*a->config_path)
		a->config_path = NULL;
	if (argc < 2)
		return usage_error(err, NULL, "no command given");

	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		a->cmd = OWSBX_CMD_RUN;
	else if (strcmp(cmd, "verify") == 0)
		a->cmd = OWSBX_CMD_VERIFY;
	else if (strcmp(cmd, "report") == 0)
		a->cmd = OWSBX_CMD_REPORT;
	else if (strcmp(cmd, "credentials") == 0)
		a->cmd = OWSBX_CMD_CREDENTIALS;
	else if (strcmp(cmd, "machine") == 0)
		a->cmd = OWSBX_CMD_MACHINE;
	else if (strcmp(cmd, "proxy") == 0)
		a->cmd = OWSBX_CMD_PROXY;
	else if (strcmp(cmd, "connect") == 0)
		a->cmd = OWSBX_CMD_CONNECT;
	else if (strcmp(cmd, "apparmor-profile") == 0)
		a->cmd = OWSBX_CMD_APPARMOR;
	else if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		a->cmd = OWSBX_CMD_HELP;
	else if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
		a->cmd = OWSBX_CMD_VERSION;
	else
		return usage_error(err, cmd, "unknown command");

	if (a->cmd == OWSBX_CMD_MACHINE) {
		if (argc < 4 || strcmp(argv[2], "sandbox") != 0)
			return usage_error(err, NULL, "usage: owsbx machine sandbox setup|status|remove|cleanup");
		a->machine_verb = argv[3];
		for (int i = 4; i < argc; i++) {
			const char *arg = argv[i];
			const char **slot = NULL;
			if (strcmp(arg, "--json") == 0)
				a->json = true;
			else if (strcmp(arg, "--yes") == 0 || strcmp(arg, "-y") == 0)
				a->yes = true;
			else if (strcmp(arg, "--for-user") == 0)
				slot = &a->for_user;
			else if (strcmp(arg, "--config") == 0)
				slot = &a->config_path;
			else if (strcmp(arg, "--launcher-source") == 0)
				slot = &a->launcher_source;
			else
				return usage_error(err, arg, "unknown option");
			if (slot) {
				if (i + 1 >= argc)
					return usage_error(err, arg, "option needs a value");
				*slot = argv[++i];
			}
		}
		return 0;
	}

	if (a->cmd == OWSBX_CMD_PROXY || a->cmd == OWSBX_CMD_CONNECT)
		return parse_proxy(argc, argv, a, err);
	if (a->cmd == OWSBX_CMD_APPARMOR)
		return parse_apparmor(argc, argv, a, err);

	pending *pend = calloc((size_t)argc, sizeof(*pend));
	if (!pend)
		return usage_error(err, NULL, "out of memory");
	size_t npend = 0;
	const char *policy_file = NULL;
	int i;
	int rc = 0;
	for (i = 2; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-')
			break;
		if (strcmp(arg, "--json") == 0) {
			a->json = true;
			continue;
		}
		bool is_policy = false;
		for (size_t k = 0; k < sizeof(policy_opts) / sizeof(policy_opts[0]); k++)
			is_policy |= strcmp(arg, policy_opts[k]) == 0;
		bool takes_value = is_policy || strcmp(arg, "--policy") == 0 ||
				   strcmp(arg, "--config") == 0 || strcmp(arg, "--events") == 0;
		if (!takes_value) {
			rc = usage_error(err, arg, "unknown option");
			goto out;
		}
		if (i + 1 >= argc) {
			rc = usage_error(err, arg, "option needs a value");
			goto out;
		}
		const char *val = argv[++i];
		if (is_policy)
			pend[npend++] = (pending){arg, val};
		else if (strcmp(arg, "--policy") == 0)
			policy_file = val;
		else if (strcmp(arg, "--config") == 0)
			a->config_path = val;
		else
			a->events_path = val;
	}
	if (a->cmd == OWSBX_CMD_RUN) {
		if (i >= argc) {
			rc = usage_error(err, NULL, "no command to run: put it after --");
			goto out;
		}
		a->argv = argv + i;
	} else if (i < argc && a->cmd != OWSBX_CMD_CONNECT) {
		rc = usage_error(err, argv[i], "unexpected argument");
		goto out;
	}
	if (a->cmd == OWSBX_CMD_RUN || a->cmd == OWSBX_CMD_VERIFY) {
		if (policy_file)
			rc = ows_policy_load_file(policy_file, &a->policy, err) < 0 ? OWSBX_EXIT_USAGE : 0;
		else
			rc = ows_policy_new(&a->policy, err) < 0 ? OWSBX_EXIT_USAGE : 0;
		for (size_t k = 0; rc == 0 && k < npend; k++)
			rc = apply(a, &pend[k], err);
	} else if (npend || policy_file) {
		rc = usage_error(err, npend ? pend[0].opt : "--policy", "option not valid here");
	}
out:
	free(pend);
	return rc;
}

void owsbx_args_free(owsbx_args *a)
{
	ows_policy_free(a->policy);
	a->policy = NULL;
	free(a->sites);
	free(a->site_files);
	a->sites = a->site_files = NULL;
}
