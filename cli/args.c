#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* ------------------------------------------------------------ the tables */

/*
 * The options that shape a policy, shared by run and verify.  The parser
 * accepts what a command's table lists and nothing else, and the help prints
 * the same tables: an option cannot be accepted and undocumented.
 */
#define POLICY_OPTIONS                                                                         \
	{"--rw", NULL, "DIR", "a session folder, read-write, at its own path (repeatable)"},     \
	{"--ro", NULL, "DIR", "a session folder, read-only (repeatable)"},                       \
	{"--net", NULL, "MODE",                                                                  \
	 "the network: none (nothing leaves), allowlist (only the allowed sites, through the "   \
	 "session's proxy) or open; default: the config's network, else none"},                  \
	{"--allow-site", NULL, "SITE",                                                           \
	 "allow a site in allowlist: HOST:PORT, HOST (port 443), *.DOMAIN:PORT (subdomains, "    \
	 "not the apex), @GROUP, or HOST:PORT+private to let it resolve to a private address; "  \
	 "!SITE denies it, as --deny-site (repeatable)"},                                        \
	{"--deny-site", NULL, "SITE",                                                            \
	 "refuse a site in allowlist even where an allow entry, a group or a shared login's "   \
	 "hosts cover it (a deny wins): HOST, HOST:PORT, *.DOMAIN (subdomains), an IP; without " \
	 "a port or with :* every port (repeatable)"},                                           \
	{"--allow-sites-file", NULL, "FILE",                                                     \
	 "allow every site FILE lists, one a line (!SITE denies), # comments (repeatable)"},     \
	{"--provider", NULL, "NAME",                                                             \
	 "the wall: landlock (needs no setup), account (after `owsbx machine sandbox setup`), "  \
	 "openshell (an NVIDIA OpenShell sandbox) or direct (no wall at all); default: the "     \
	 "config's provider"},                                                                   \
	{"--policy", NULL, "FILE",                                                               \
	 "a policy document (JSON); the options above and --env, --run-as apply after it"},      \
	{"--env", NULL, "NAME=VALUE",                                                            \
	 "set a variable for every command; a name that says it holds a secret is refused "      \
	 "(repeatable)"},                                                                        \
	{"--run-as", NULL, "USER",                                                               \
	 "under a root host, the account commands run as (a name or a uid; default: SUDO_UID, " \
	 "else the config's [landlock] root_runs_as, nobody); never root"},                      \
	{"--config", NULL, "FILE", "read the machine's config from FILE, not " OWS_CONFIG_DEFAULT_PATH}

#define VERBOSE_OPTION                                                                         \
	{"--verbose", "-v", NULL,                                                                \
	 "print on stderr what the wall is built from before it is: provider and why, network "  \
	 "plan and sites, folders, masks, guard, shared files, limits (also OWSBX_DEBUG=1)"}

#define CONFIG_OPTION {"--config", NULL, "FILE", "read the machine's config from FILE, not " OWS_CONFIG_DEFAULT_PATH}

static const owsbx_option run_options[] = {
	POLICY_OPTIONS,
	{"--events", NULL, "FILE", "append the session's events (open, proof, spawn, exit, close) "
				   "to FILE as JSON lines"},
	VERBOSE_OPTION,
	{"--dry-run", "-n", NULL,
	 "print the plan as --verbose does and run nothing: no session is opened and nothing "
	 "on the machine changes (CMD may be left out)"},
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option verify_options[] = {
	POLICY_OPTIONS,
	{"--json", NULL, NULL, "print the report on one line, not indented"},
	VERBOSE_OPTION,
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option json_config_options[] = {
	{"--json", NULL, NULL, "print JSON, not a table"},
	CONFIG_OPTION,
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option setup_options[] = {
	{"--provider", NULL, "NAME",
	 "set up one provider instead: openshell (as the person: linger, NVIDIA's installer for "
	 "the pinned release, the gateway's bind mounts, the base image)"},
	{"--for-user", NULL, "NAME",
	 "the person added to the sandbox group, who may then start sandboxes (default: "
	 "SUDO_USER, else the caller)"},
	{"--launcher-source", NULL, "FILE",
	 "the built owsbx-launch to install setuid (default: the one beside this owsbx, "
	 "else ../lib/owsandbox/owsbx-launch from it, where make install puts it)"},
	{"--yes", "-y", NULL, "apply the plan without asking"},
	CONFIG_OPTION,
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option status_options[] = {
	{"--json", NULL, NULL, "print JSON, not rows"},
	{"--provider", NULL, "NAME", "the rows of one provider: openshell (default: the machine's)"},
	CONFIG_OPTION,
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option remove_options[] = {
	{"--yes", "-y", NULL, "undo without asking"},
	CONFIG_OPTION,
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option config_only_options[] = {
	CONFIG_OPTION,
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option proxy_options[] = {
	{"--port", NULL, "N", "listen on 127.0.0.1 port N (default: the first free one of "
			      "47800-47899)"},
	{"--allow-site", NULL, "SITE", "allow a site, as run's --allow-site (repeatable)"},
	{"--deny-site", NULL, "SITE", "refuse a site, as run's --deny-site (repeatable)"},
	{"--allow-sites-file", NULL, "FILE", "allow every site FILE lists (repeatable)"},
	{"--max-conns", NULL, "N", "client connections at once (default 4096); more get a 503"},
	{"--connect-timeout-ms", NULL, "MS",
	 "resolving and connecting upstream, else a 504 (default 15000)"},
	{"--response-timeout-ms", NULL, "MS",
	 "plain http: the first byte of the response, else a 504 (default 120000)"},
	{"--hosts-file", NULL, "FILE",
	 "for tests: resolve the names FILE lists (/etc/hosts format) to its addresses only, "
	 "without DNS"},
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option connect_options[] = {
	{"--proxy", NULL, "HOST:PORT",
	 "the proxy to tunnel through (default: $OWSBX_PROXY, else $HTTPS_PROXY)"},
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option apparmor_options[] = {
	{"--name", NULL, "NAME",
	 "the profile's name, and its file's under /etc/apparmor.d (default: owsbx, or owsbx- "
	 "and the program's file name)"},
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option runner_options[] = {
	{"--probe", NULL, NULL,
	 "prove the wall from inside instead: one line per check (ok or fail, its name, why), "
	 "then \"end\"; the host that asked judges them"},
	{"--rw", NULL, "DIR", "probe: DIR can be listed, and a file made in it and removed"},
	{"--ro", NULL, "DIR", "probe: DIR can be listed and no file can be made in it"},
	{"--absent", NULL, "PATH", "probe: PATH cannot be opened (repeatable, as the others)"},
	{"--reach", NULL, "ADDR:PORT", "probe: a TCP connection to this IPv4 listener fails"},
	{"--refused", NULL, "HOST:PORT",
	 "probe: the proxy the sandbox's variables name (if any) refuses CONNECT HOST:PORT"},
	{NULL, NULL, NULL, NULL},
};

static const owsbx_option no_options[] = {
	{NULL, NULL, NULL, NULL},
};

const owsbx_option owsbx_global_options[] = {
	{"--help", "-h", NULL, "print the help (after a command: that command's) and exit 0"},
	{"--version", "-V", NULL, "print the version and exit 0"},
	{NULL, NULL, NULL, NULL},
};

#if defined(_WIN32)
const char owsbx_provider_names[] = "windows appcontainer direct";
#elif defined(__APPLE__)
const char owsbx_provider_names[] = "seatbelt openshell direct";
#else
const char owsbx_provider_names[] = "landlock account openshell direct";
#endif

const owsbx_command owsbx_commands[] = {
	{"run", OWSBX_CMD_RUN, "[OPTION]... [--] CMD [ARG]...",
	 "Opens a session with the policy the options describe, proves the wall from inside, "
	 "runs CMD in it where the person is (when that is inside a session folder), and "
	 "closes it: nothing of the session is left. Exits with CMD's status (128+N for signal "
	 "N); 70 when the wall could not be set up or failed its proof, 71 when CMD could not "
	 "start, 2 for bad usage or bad input. In allowlist, the sites refused while CMD ran "
	 "are named on stderr with how to allow them; in none, a CMD that failed after asking "
	 "for the network is told the network is off.",
	 run_options},
	{"verify", OWSBX_CMD_VERIFY, "[OPTION]...",
	 "Opens a throwaway session with the same options as run, proves the wall, closes it "
	 "and prints the report as JSON ({\"passed\", \"provider\", \"network\", \"checks\"}); "
	 "when the session is refused the report also holds \"error\". Exits 0 when the proof "
	 "passed, 70 when the session was refused, 2 for bad usage or bad input.",
	 verify_options},
	{"report", OWSBX_CMD_REPORT, "[OPTION]...",
	 "What this machine can enforce: one row per capability, enforced, partial or "
	 "unavailable, and why.",
	 json_config_options},
	{"credentials", OWSBX_CMD_CREDENTIALS, "[OPTION]...",
	 "The logins and toolchains this machine can share with sessions, found or not, and "
	 "whether the config shares them.",
	 json_config_options},
	{"machine sandbox setup", OWSBX_CMD_MACHINE, "[OPTION]...",
	 "Sets up the account provider (root): shows the plan, asks, applies it, proves the "
	 "wall as both accounts, then chooses the provider in the config. Someone who is not "
	 "root is given the command to hand to an administrator.",
	 setup_options},
	{"machine sandbox status", OWSBX_CMD_MACHINE, "[OPTION]...",
	 "One row per item of the setup, ok or not, with the command that fixes it. Exits 1 "
	 "when a row fails.",
	 status_options},
	{"machine sandbox remove", OWSBX_CMD_MACHINE, "[OPTION]...",
	 "Undoes exactly what the setup record says (root).", remove_options},
	{"machine sandbox cleanup", OWSBX_CMD_MACHINE, "[OPTION]...",
	 "Revokes the folder grants that crashed hosts left.", config_only_options},
	{"proxy", OWSBX_CMD_PROXY, "[OPTION]...",
	 "Runs the allow-list proxy in the foreground on 127.0.0.1: prints its port on "
	 "stdout and each refused site on stderr, until a signal ends it.",
	 proxy_options},
	{"connect", OWSBX_CMD_CONNECT, "HOST PORT [OPTION]...",
	 "Tunnels stdin and stdout to HOST:PORT through the proxy (CONNECT): ssh's "
	 "ProxyCommand inside an allowlist sandbox, as in "
	 "ssh -o ProxyCommand='owsbx connect %h %p' git@github.com.",
	 connect_options},
	{"apparmor-profile", OWSBX_CMD_APPARMOR, "[OPTION]... PROGRAM",
	 "Prints an AppArmor profile that lets PROGRAM (absolute; links resolved) create "
	 "user namespaces and confines nothing else, for Ubuntu 24.04's restriction: "
	 "owsbx apparmor-profile /usr/bin/python3.12 | sudo tee /etc/apparmor.d/owsbx-python3.12.",
	 apparmor_options},
	{"completion", OWSBX_CMD_COMPLETION, "SHELL",
	 "Prints a completion script for SHELL, bash or zsh: source <(owsbx completion bash) in "
	 "~/.bashrc (make install installs both where bash-completion and zsh look).",
	 no_options},
	{"runner", OWSBX_CMD_RUNNER, "[OPTION]...",
	 "The tool runner, as an OpenShell sandbox's main command: stays up, reaping what it "
	 "inherits, until SIGTERM, SIGINT or SIGHUP, then exits 0 (the sandbox ends when its "
	 "main command does). With --probe, proves the wall from inside and exits.",
	 runner_options},
	{"help", OWSBX_CMD_HELP, "[COMMAND]", "Prints this help, or one command's.", no_options},
	{"version", OWSBX_CMD_VERSION, "", "Prints the version.", no_options},
	{NULL, OWSBX_CMD_NONE, NULL, NULL, NULL},
};

/* -------------------------------------------------------------- the help */

enum { WIDTH = 79, OPT_COL = 32 };

/* Prints text from column col, wrapping at WIDTH with continuation lines at indent. */
static void wrap(FILE *out, const char *text, int col, int indent)
{
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t word = strcspn(p, " ");
		if (col > indent && col + 1 + (int)word > WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += (int)word;
		p += word;
	}
	fputc('\n', out);
}

static void print_option(FILE *out, const owsbx_option *o)
{
	char label[64];
	snprintf(label, sizeof(label), "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
		 o->name, o->value ? " " : "", o->value ? o->value : "");
	int col = fprintf(out, "    %s", label);
	if (col + 2 > OPT_COL) {
		fputc('\n', out);
		col = 0;
	}
	fprintf(out, "%*s", OPT_COL - col, "");
	wrap(out, o->help, OPT_COL, OPT_COL);
}

static void print_command(FILE *out, const owsbx_command *c)
{
	fprintf(out, "owsbx %s%s%s\n", c->name, c->usage[0] ? " " : "", c->usage);
	fputs("    ", out);
	wrap(out, c->summary, 4, 4);
	for (const owsbx_option *o = c->options; o->name; o++)
		print_option(out, o);
}

static bool in_topic(const owsbx_command *c, const char *topic)
{
	size_t n = strlen(topic);
	/* "machine" and "machine sandbox" name the group of its verbs. */
	return strcmp(c->name, topic) == 0 ||
	       (strncmp(c->name, topic, n) == 0 && c->name[n] == ' ');
}

void owsbx_usage(FILE *out)
{
	fputs("usage: owsbx COMMAND [OPTION]...\n"
	      "       owsbx help [COMMAND]   or   owsbx COMMAND --help\n"
	      "       owsbx --version\n"
	      "\n"
	      "Runs an AI agent's commands behind an operating-system wall: only the session's\n"
	      "folders, only the network allowed, no secrets inside, every process ended with\n"
	      "the session, the wall proved before anything runs.\n"
	      "\n"
	      "Commands:\n\n",
	      out);
	for (const owsbx_command *c = owsbx_commands; c->name; c++) {
		print_command(out, c);
		fputc('\n', out);
	}
	fputs("In place of a command (and --help after one):\n", out);
	for (const owsbx_option *o = owsbx_global_options; o->name; o++)
		print_option(out, o);
	fputs("\n"
	      "Exit status: run exits with its command's status; 70 when the wall could not be\n"
	      "set up or failed its proof, 71 when the command could not start; 2 for bad usage\n"
	      "or bad input everywhere; the other commands exit 0 when they did what was asked\n"
	      "and 1 when not.\n"
	      "\n"
	      "Environment: OWSBX_CONFIG names the config when --config does not; connect's\n"
	      "proxy comes from OWSBX_PROXY, else HTTPS_PROXY; under a root host SUDO_UID is\n"
	      "the account commands run as, unless --run-as names one; OWSBX_DEBUG=1 is run's\n"
	      "and verify's --verbose.\n"
	      "\n"
	      "Files: " OWS_CONFIG_DEFAULT_PATH ", the machine's config.\n"
	      "See owsbx(1).\n",
	      out);
}

/* One line a command, for the overview; a command missing here shows its name alone. */
static const char *const briefs[][2] = {
	{"run", "run a command in a sandbox, then close it"},
	{"verify", "prove the wall from inside and print the proof (JSON)"},
	{"report", "what this machine can enforce, and why"},
	{"credentials", "the logins and toolchains a session can share"},
	{"machine", "set up, check or remove the account provider (root)"},
	{"proxy", "run the allow-list proxy in the foreground"},
	{"connect", "tunnel stdin/stdout through the proxy (ssh's ProxyCommand)"},
	{"apparmor-profile", "a profile granting a program user namespaces (Ubuntu 24.04)"},
	{"completion", "a completion script for bash or zsh"},
	{"runner", "an OpenShell sandbox's main command (started by the provider)"},
	{"help", "this overview, one command's help, or `help all`"},
	{"version", "print the version"},
};

/* The overview `owsbx --help` prints: the commands a line each, and examples. */
static void print_overview(FILE *out)
{
	fputs("usage: owsbx COMMAND [OPTION]...\n"
	      "\n"
	      "Runs an AI agent's commands behind an operating-system wall: only the session's\n"
	      "folders, only the network allowed, no secrets inside, every process ended with\n"
	      "the session, the wall proved before anything runs.\n"
	      "\n"
	      "Commands:\n",
	      out);
	size_t last_n = 0;
	const char *last = "";
	for (const owsbx_command *c = owsbx_commands; c->name; c++) {
		size_t n = strcspn(c->name, " ");
		if (n == last_n && strncmp(c->name, last, n) == 0)
			continue;
		last = c->name;
		last_n = n;
		const char *brief = "";
		for (size_t i = 0; i < sizeof(briefs) / sizeof(briefs[0]); i++)
			if (strlen(briefs[i][0]) == n && strncmp(briefs[i][0], c->name, n) == 0)
				brief = briefs[i][1];
		fprintf(out, "  %-18.*s %s\n", (int)n, c->name, brief);
	}
	fputs("\n"
	      "Examples:\n"
	      "  owsbx run --rw ~/project -- make test\n"
	      "  owsbx run --rw . --net allowlist --allow-site pypi.org -- pip install -r requirements.txt\n"
	      "  owsbx verify --ro ~/data\n"
	      "  owsbx report\n"
	      "\n"
	      "`owsbx help COMMAND` (or `owsbx COMMAND --help`) prints a command's options,\n"
	      "`owsbx help all` every command's, `man owsbx` the same with the files and examples.\n",
	      out);
}

int owsbx_help(FILE *out, const char *topic)
{
	if (!topic || !*topic) {
		if (out)
			print_overview(out);
		return 0;
	}
	if (strcmp(topic, "all") == 0) {
		if (out)
			owsbx_usage(out);
		return 0;
	}
	int shown = 0;
	for (const owsbx_command *c = owsbx_commands; c->name; c++) {
		if (!in_topic(c, topic))
			continue;
		if (out) {
			fputs(shown ? "\n" : "usage: ", out);
			print_command(out, c);
		}
		shown++;
	}
	if (shown && out) {
		fputs("\nand after any command:\n", out);
		print_option(out, &owsbx_global_options[0]);
	}
	return shown ? 0 : -1;
}

/* ---------------------------------------------------------------- errors */

static int usage_error(ows_error *err, const char *where, const char *hint, const char *what)
{
	ows_error_clear(err);
	snprintf(err->what, sizeof(err->what), "%s", what);
	snprintf(err->where, sizeof(err->where), "%s", where ? where : "");
	snprintf(err->hint, sizeof(err->hint), "%s", hint ? hint : "run `owsbx help` for usage");
	err->code = OWS_EINVAL;
	return OWSBX_EXIT_USAGE;
}

/* An error about an option or word of one command: the hint names that command's help. */
static int command_error(ows_error *err, const owsbx_command *c, const char *where,
			 const char *what)
{
	char hint[128];
	snprintf(hint, sizeof(hint), "run `owsbx help %s` for its usage and options", c->name);
	return usage_error(err, where, hint, what);
}

/* "usage: owsbx connect HOST PORT [OPTION]...", from the table. */
static int missing_words(ows_error *err, const owsbx_command *c)
{
	char what[160];
	snprintf(what, sizeof(what), "usage: owsbx %s %s", c->name, c->usage);
	return command_error(err, c, NULL, what);
}

/* ---------------------------------------------------------------- values */

char *owsbx_deny_pattern(const char *site)
{
	size_t n = strlen(site) + 2;
	char *deny = malloc(n);
	if (deny)
		snprintf(deny, n, "%s%s", site[0] == '!' ? "" : "!", site);
	return deny;
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
			return usage_error(err, p->val, NULL,
					   "unknown network mode (use none, open or allowlist)");
		rc = ows_policy_set_network(a->policy, net, err);
		a->net_none = net == OWS_NET_NONE;
	} else if (strcmp(p->opt, "--provider") == 0) {
		rc = ows_policy_set_provider(a->policy, p->val, err);
	} else if (strcmp(p->opt, "--env") == 0) {
		const char *eq = strchr(p->val, '=');
		if (!eq || eq == p->val)
			return usage_error(err, p->val, NULL, "--env takes NAME=VALUE");
		/* The whole name, however long: the library judges it, not a buffer's size. */
		size_t len = (size_t)(eq - p->val);
		char *name = malloc(len + 1); /* not strndup: Windows' C library has none */
		if (!name)
			return usage_error(err, NULL, NULL, "out of memory");
		memcpy(name, p->val, len);
		name[len] = '\0';
		rc = ows_policy_set_env(a->policy, name, eq + 1, err);
		free(name);
	} else if (strcmp(p->opt, "--allow-site") == 0) {
		a->site_option = p->opt;
		rc = ows_policy_add_host(a->policy, p->val, err);
	} else if (strcmp(p->opt, "--deny-site") == 0) {
		a->site_option = p->opt;
		char *deny = owsbx_deny_pattern(p->val);
		if (!deny)
			return usage_error(err, NULL, NULL, "out of memory");
		rc = ows_policy_add_host(a->policy, deny, err);
		free(deny);
	} else if (strcmp(p->opt, "--allow-sites-file") == 0) {
		a->site_option = p->opt;
		rc = ows_policy_add_hosts_file(a->policy, p->val, err);
	} else if (strcmp(p->opt, "--run-as") == 0) {
		rc = ows_policy_set_run_as(a->policy, p->val, err);
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

/* What the scan collects besides the fields of owsbx_args. */
typedef struct scan {
	pending *pend;           /* policy options, in order */
	size_t npend;
	const char *policy_file;
	const char *words[2];    /* connect's HOST PORT, apparmor-profile's PROGRAM */
	int nwords;
} scan;

/* runner's options: what --probe checks, in the order given. */
static int set_probe(owsbx_args *a, const char *name, const char *val)
{
	if (strcmp(name, "--probe") == 0)
		a->probe.on = true;
	else if (strcmp(name, "--rw") == 0)
		a->probe.rw[a->probe.nrw++] = val;
	else if (strcmp(name, "--ro") == 0)
		a->probe.ro[a->probe.nro++] = val;
	else if (strcmp(name, "--absent") == 0)
		a->probe.absent[a->probe.nabsent++] = val;
	else if (strcmp(name, "--reach") == 0)
		a->probe.reach = val;
	else
		a->probe.refused = val;
	return 0;
}

/* Records one option of the command's table; its value already taken. */
static int set_option(owsbx_args *a, scan *sc, const char *name, const char *val,
		      ows_error *err)
{
	int *num = NULL, lo = 1, hi = 65535;
	if (a->cmd == OWSBX_CMD_RUNNER)
		return set_probe(a, name, val);
	if (strcmp(name, "--json") == 0)
		a->json = true;
	else if (strcmp(name, "--verbose") == 0)
		a->verbose = true;
	else if (strcmp(name, "--dry-run") == 0)
		a->dry_run = true;
	else if (strcmp(name, "--yes") == 0)
		a->yes = true;
	else if (strcmp(name, "--config") == 0)
		a->config_path = val;
	else if (strcmp(name, "--events") == 0)
		a->events_path = val;
	else if (strcmp(name, "--policy") == 0)
		sc->policy_file = val;
	else if (a->cmd == OWSBX_CMD_MACHINE && strcmp(name, "--provider") == 0) {
		if (strcmp(val, "openshell") != 0)
			return usage_error(err, val, NULL,
					   "only openshell has a setup and status of its own");
		a->machine_provider = val;
	}
	else if (strcmp(name, "--for-user") == 0)
		a->for_user = val;
	else if (strcmp(name, "--launcher-source") == 0)
		a->launcher_source = val;
	else if (strcmp(name, "--proxy") == 0)
		a->proxy_addr = val;
	else if (strcmp(name, "--name") == 0)
		a->profile_name = val;
	else if (a->cmd == OWSBX_CMD_PROXY && strcmp(name, "--allow-site") == 0)
		a->sites[a->nsites++] = val;
	else if (a->cmd == OWSBX_CMD_PROXY && strcmp(name, "--deny-site") == 0)
		a->deny_sites[a->ndeny_sites++] = val;
	else if (a->cmd == OWSBX_CMD_PROXY && strcmp(name, "--allow-sites-file") == 0)
		a->site_files[a->nsite_files++] = val;
	else if (strcmp(name, "--hosts-file") == 0)
		a->hosts_file = val;
	else if (strcmp(name, "--port") == 0)
		num = &a->port, lo = 0;
	else if (strcmp(name, "--connect-timeout-ms") == 0)
		num = &a->connect_timeout_ms, hi = 3600000;
	else if (strcmp(name, "--response-timeout-ms") == 0)
		num = &a->response_timeout_ms, hi = 3600000;
	else if (strcmp(name, "--max-conns") == 0)
		num = &a->max_conns, hi = 1000000;
	else
		sc->pend[sc->npend++] = (pending){name, val}; /* a policy option */
	if (num && parse_int(val, lo, hi, num) != 0)
		return usage_error(err, val, NULL, "not a number in range");
	return 0;
}

static const owsbx_option *find_option(const owsbx_option *opts, const char *arg)
{
	for (const owsbx_option *o = opts; o->name; o++)
		if (strcmp(arg, o->name) == 0 || (o->alias && strcmp(arg, o->alias) == 0))
			return o;
	return NULL;
}

static bool is_help(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static void ask_help(owsbx_args *a, const char *topic)
{
	a->cmd = OWSBX_CMD_HELP;
	a->command = NULL;
	snprintf(a->help_topic, sizeof(a->help_topic), "%s", topic);
}

/*
 * The words after the command's name: its options (before "--" for run;
 * anywhere for the others), and the words it takes.  run's command starts
 * at the first word that is not an option, or after "--".
 */
static int scan_words(int argc, char **argv, int i, owsbx_args *a, scan *sc, ows_error *err)
{
	const owsbx_command *c = a->command;
	bool run = a->cmd == OWSBX_CMD_RUN;
	int max_words = a->cmd == OWSBX_CMD_CONNECT ? 2
			: a->cmd == OWSBX_CMD_APPARMOR || a->cmd == OWSBX_CMD_COMPLETION ? 1 : 0;
	bool only_words = false;
	for (; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0 && !only_words) {
			only_words = true;
			if (run) {
				i++;
				break;
			}
			continue;
		}
		if (arg[0] != '-' || only_words) {
			if (run)
				break;
			if (sc->nwords == max_words)
				return command_error(err, c, arg, "unexpected argument");
			sc->words[sc->nwords++] = arg;
			continue;
		}
		if (is_help(arg)) {
			ask_help(a, c->name);
			return 0;
		}
		const owsbx_option *o = find_option(c->options, arg);
		if (!o)
			return command_error(err, c, arg, "unknown option");
		const char *val = NULL;
		if (o->value) {
			if (i + 1 >= argc)
				return command_error(err, c, arg, "option needs a value");
			val = argv[++i];
		}
		int rc = set_option(a, sc, o->name, val, err);
		if (rc != 0)
			return rc;
	}
	if (run) {
		if (i >= argc && a->dry_run)
			return 0; /* the plan alone: there is nothing to run */
		if (i >= argc)
			return command_error(err, c, NULL, "no command to run: put it after --");
		a->argv = argv + i;
	}
	return 0;
}

/* ------------------------------------------------------- what the words are */

/* help [COMMAND...]: the topic, joined with spaces, must name a command or a group. */
static int parse_help(int argc, char **argv, owsbx_args *a, ows_error *err)
{
	char topic[sizeof(a->help_topic)] = "";
	if (argc > 2 && is_help(argv[2])) { /* help --help: help's own */
		ask_help(a, "help");
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		size_t n = strlen(topic);
		snprintf(topic + n, sizeof(topic) - n, "%s%s", n ? " " : "", argv[i]);
	}
	if (owsbx_help(NULL, topic) != 0)
		return usage_error(err, topic, "run `owsbx help` for the commands", "no such command");
	ask_help(a, topic);
	return 0;
}

/* machine sandbox VERB: the table's entry, or a usage error; *next is the word after it. */
static int find_machine(int argc, char **argv, owsbx_args *a, int *next, ows_error *err)
{
	static const char machine_usage[] = "usage: owsbx machine sandbox setup|status|remove|cleanup";
	for (int i = 2; i < argc && i < 4; i++)
		if (is_help(argv[i])) {
			ask_help(a, "machine");
			return 0;
		}
	if (argc < 4 || strcmp(argv[2], "sandbox") != 0)
		return usage_error(err, NULL, "run `owsbx help machine` for its verbs", machine_usage);
	char name[64];
	snprintf(name, sizeof(name), "machine sandbox %s", argv[3]);
	for (const owsbx_command *c = owsbx_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			a->command = c;
	if (!a->command)
		return usage_error(err, argv[3], "run `owsbx help machine` for its verbs",
				   "unknown verb (use setup, status, remove or cleanup)");
	a->machine_verb = argv[3];
	*next = 4;
	return 0;
}

/* The command the first words name; *next is the first word after its name. */
static int find_command(int argc, char **argv, owsbx_args *a, int *next, ows_error *err)
{
	const char *cmd = argv[1];
	a->cmd = OWSBX_CMD_NONE;
	if (strcmp(cmd, "machine") == 0) {
		a->cmd = OWSBX_CMD_MACHINE;
		return find_machine(argc, argv, a, next, err);
	}
	for (const owsbx_command *c = owsbx_commands; c->name; c++)
		if (strcmp(c->name, cmd) == 0)
			a->command = c;
	if (!a->command)
		return usage_error(err, cmd, NULL, "unknown command");
	a->cmd = a->command->cmd;
	*next = 2;
	return 0;
}

/* The words a command takes after its options: connect's HOST PORT, the profile's PROGRAM. */
static int take_words(owsbx_args *a, const scan *sc, ows_error *err)
{
	if (a->cmd == OWSBX_CMD_CONNECT) {
		if (sc->nwords != 2)
			return missing_words(err, a->command);
		a->connect_host = sc->words[0];
		if (parse_int(sc->words[1], 1, 65535, &a->connect_port) != 0)
			return command_error(err, a->command, sc->words[1], "not a port");
		if (!a->proxy_addr)
			a->proxy_addr = getenv("OWSBX_PROXY");
		if (!a->proxy_addr || !*a->proxy_addr)
			a->proxy_addr = getenv("HTTPS_PROXY");
		if (!a->proxy_addr || !*a->proxy_addr)
			a->proxy_addr = getenv("https_proxy");
		if (!a->proxy_addr || !*a->proxy_addr)
			return usage_error(err, NULL, NULL,
					   "no proxy: give --proxy 127.0.0.1:PORT or set OWSBX_PROXY");
	} else if (a->cmd == OWSBX_CMD_APPARMOR) {
		if (sc->nwords != 1)
			return missing_words(err, a->command);
		a->program = sc->words[0];
	} else if (a->cmd == OWSBX_CMD_COMPLETION) {
		if (sc->nwords != 1)
			return missing_words(err, a->command);
		if (strcmp(sc->words[0], "bash") != 0 && strcmp(sc->words[0], "zsh") != 0)
			return command_error(err, a->command, sc->words[0], "not a shell: bash or zsh");
		a->shell = sc->words[0];
	}
	return 0;
}

/* run and verify: the policy file, then the options in their order. */
static int build_policy(owsbx_args *a, const scan *sc, ows_error *err)
{
	int rc;
	if (sc->policy_file)
		rc = ows_policy_load_file(sc->policy_file, &a->policy, err) < 0 ? OWSBX_EXIT_USAGE : 0;
	else
		rc = ows_policy_new(&a->policy, err) < 0 ? OWSBX_EXIT_USAGE : 0;
	for (size_t k = 0; rc == 0 && k < sc->npend; k++)
		rc = apply(a, &sc->pend[k], err);
	return rc;
}

int owsbx_parse(int argc, char **argv, owsbx_args *a, ows_error *err)
{
	memset(a, 0, sizeof(*a));
	a->config_path = getenv("OWSBX_CONFIG");
	if (a->config_path && !*a->config_path)
		a->config_path = NULL;
	if (argc < 2)
		return usage_error(err, NULL, NULL, "no command given");

	const char *first = argv[1];
	if (strcmp(first, "help") == 0 || is_help(first))
		return parse_help(argc, argv, a, err);
	if (strcmp(first, "version") == 0 || strcmp(first, "--version") == 0 ||
	    strcmp(first, "-V") == 0) {
		a->cmd = OWSBX_CMD_VERSION;
		if (argc > 2 && is_help(argv[2]))
			ask_help(a, "version");
		else if (argc > 2)
			return usage_error(err, argv[2], "run `owsbx help version`",
					   argv[2][0] == '-' ? "unknown option" : "unexpected argument");
		return 0;
	}

	int next = 0;
	int rc = find_command(argc, argv, a, &next, err);
	if (rc != 0 || a->cmd == OWSBX_CMD_HELP)
		return rc;
	scan sc = {0};
	sc.pend = calloc((size_t)argc, sizeof(*sc.pend));
	a->sites = calloc((size_t)argc, sizeof(*a->sites));
	a->site_files = calloc((size_t)argc, sizeof(*a->site_files));
	a->deny_sites = calloc((size_t)argc, sizeof(*a->deny_sites));
	a->probe.rw = calloc((size_t)argc, sizeof(*a->probe.rw));
	a->probe.ro = calloc((size_t)argc, sizeof(*a->probe.ro));
	a->probe.absent = calloc((size_t)argc, sizeof(*a->probe.absent));
	if (!sc.pend || !a->sites || !a->site_files || !a->deny_sites || !a->probe.rw ||
	    !a->probe.ro || !a->probe.absent)
		rc = usage_error(err, NULL, NULL, "out of memory");
	if (rc == 0)
		rc = scan_words(argc, argv, next, a, &sc, err);
	if (rc == 0 && a->cmd != OWSBX_CMD_HELP)
		rc = take_words(a, &sc, err);
	if (rc == 0 && (a->cmd == OWSBX_CMD_RUN || a->cmd == OWSBX_CMD_VERIFY)) {
		rc = build_policy(a, &sc, err);
		/* OWSBX_DEBUG=1 in an agent's environment: the plan, without changing its words. */
		const char *debug = getenv("OWSBX_DEBUG");
		a->verbose |= debug && *debug && strcmp(debug, "0") != 0;
	}
	free(sc.pend);
	return rc;
}

void owsbx_args_free(owsbx_args *a)
{
	ows_policy_free(a->policy);
	a->policy = NULL;
	free(a->sites);
	free(a->site_files);
	free(a->deny_sites);
	a->sites = a->site_files = a->deny_sites = NULL;
	free(a->probe.rw);
	free(a->probe.ro);
	free(a->probe.absent);
	a->probe.rw = a->probe.ro = a->probe.absent = NULL;
}
