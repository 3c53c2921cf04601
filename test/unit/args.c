/* owsbx's command line: what each word turns into, and what a bad one gets back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "tap.h"

/*
 * The words after "owsbx", NULL-terminated, as main would get them.  The
 * array lives until the end of the enclosing block: a->argv borrows from it.
 */
#define PARSE(a, err, ...) parse_words((a), (err), (char *[]){"owsbx", __VA_ARGS__, NULL})

static int parse_words(owsbx_args *a, ows_error *err, char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	ows_error_clear(err);
	return owsbx_parse(argc, argv, a, err);
}

/* The policy as the library prints it, in a buffer of the test's own. */
static const char *policy_json(const owsbx_args *a)
{
	static char buf[8192];
	char *s = a->policy ? ows_policy_to_json(a->policy) : NULL;
	snprintf(buf, sizeof(buf), "%s", s ? s : "(no policy)");
	ows_free(s);
	return buf;
}

/* A usage error: exit status 2, OWS_EINVAL, these words and where. */
static void is_usage(int rc, const ows_error *err, const char *what, const char *where,
		     const char *desc)
{
	is_int(rc, OWSBX_EXIT_USAGE, "%s: exit status 2", desc);
	is_int(err->code, OWS_EINVAL, "%s: OWS_EINVAL", desc);
	ok(strstr(err->what, what) != NULL, "%s: says \"%s\" (got \"%s\")", desc, what, err->what);
	if (where)
		is_str(err->where, where, "%s: names %s", desc, where);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		bail_out("cannot write %s", path);
}

int main(void)
{
	owsbx_args a;
	ows_error err;
	char want[2048];
	int rc;

	/* The environment must not decide what a test sees. */
	unsetenv("OWSBX_CONFIG");
	unsetenv("OWSBX_PROXY");
	unsetenv("HTTPS_PROXY");
	unsetenv("https_proxy");

	char tmpl[] = "/tmp/owstest-args-XXXXXX";
	if (!mkdtemp(tmpl))
		bail_out("cannot make a folder");
	/* The policy keeps folders by their real path; so do the expectations. */
	char top[128], *real = realpath(tmpl, NULL);
	if (!real || strlen(real) >= sizeof(top))
		bail_out("cannot resolve %s", tmpl);
	snprintf(top, sizeof(top), "%s", real);
	free(real);
	char d1[160], d2[160], sites[160], pol[160];
	snprintf(d1, sizeof(d1), "%s/one", top);
	snprintf(d2, sizeof(d2), "%s/two", top);
	snprintf(sites, sizeof(sites), "%s/sites", top);
	snprintf(pol, sizeof(pol), "%s/policy.json", top);
	if (mkdir(d1, 0700) != 0 || mkdir(d2, 0700) != 0)
		bail_out("cannot make folders under %s", top);
	write_file(sites, "# the registry\nregistry.npmjs.org:443\n");

	/* ------------------------------------------------------------ subcommands */
	{
		rc = PARSE(&a, &err, "run", "--", "true");
		is_int(rc, 0, "run -- true parses");
		is_int(a.cmd, OWSBX_CMD_RUN, "as run");
		ok(a.argv && strcmp(a.argv[0], "true") == 0 && !a.argv[1], "with the command");
		is_str(policy_json(&a), "{\"folders\":[]}", "and an empty policy of its own");
		ok(!a.config_path && !a.events_path && !a.json, "nothing else set");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "verify");
		is_int(rc, 0, "verify parses");
		is_int(a.cmd, OWSBX_CMD_VERIFY, "as verify");
		ok(a.policy != NULL && a.argv == NULL, "with a policy and no command");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "report", "--json");
		is_int(rc, 0, "report --json parses");
		ok(a.cmd == OWSBX_CMD_REPORT && a.json, "as report, json");
		ok(a.policy == NULL, "report builds no policy");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "credentials");
		ok(rc == 0 && a.cmd == OWSBX_CMD_CREDENTIALS && !a.json, "credentials parses");
		owsbx_args_free(&a);

		char *verbs[] = {"setup", "status", "remove", "cleanup"};
		for (size_t i = 0; i < sizeof(verbs) / sizeof(*verbs); i++) {
			rc = PARSE(&a, &err, "machine", "sandbox", verbs[i]);
			ok(rc == 0 && a.cmd == OWSBX_CMD_MACHINE, "machine sandbox %s parses", verbs[i]);
			is_str(a.machine_verb, verbs[i], "with its verb");
			owsbx_args_free(&a);
		}
		rc = PARSE(&a, &err, "machine", "sandbox", "setup", "--for-user", "alice",
			   "--launcher-source", "/opt/owsbx-launch", "--config", "/etc/x.ini", "-y");
		is_int(rc, 0, "machine sandbox setup with every option parses");
		is_str(a.for_user, "alice", "--for-user");
		is_str(a.launcher_source, "/opt/owsbx-launch", "--launcher-source");
		is_str(a.config_path, "/etc/x.ini", "--config");
		ok(a.yes, "-y");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "status", "--json");
		ok(rc == 0 && a.json, "machine sandbox status --json");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "status", "--provider", "openshell");
		ok(rc == 0 && a.machine_provider && strcmp(a.machine_provider, "openshell") == 0,
		   "machine sandbox status --provider openshell");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "status", "--provider", "landlock");
		is_usage(rc, &err, "only openshell has a setup and status of its own", "landlock",
			 "status --provider landlock");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "setup", "--provider", "openshell");
		ok(rc == 0 && a.machine_provider && strcmp(a.machine_provider, "openshell") == 0,
		   "machine sandbox setup --provider openshell");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "remove", "--provider", "openshell");
		is_usage(rc, &err, "unknown option", "--provider", "remove --provider (setup's and status's)");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "remove", "--yes");
		ok(rc == 0 && a.yes, "machine sandbox remove --yes");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox");
		is_usage(rc, &err, "machine sandbox setup|status|remove|cleanup", NULL,
			 "machine sandbox without a verb");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "box", "setup");
		is_usage(rc, &err, "machine sandbox setup", NULL, "machine without sandbox");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "setup", "--for-user");
		is_usage(rc, &err, "needs a value", "--for-user", "machine --for-user without a value");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "setup", "--rw", "/tmp");
		is_usage(rc, &err, "unknown option", "--rw", "machine with a run option");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "proxy", "--port", "47801", "--allow-site", "github.com",
			   "--allow-site", "*.example.com:443", "--allow-sites-file", sites,
			   "--deny-site", "gist.github.com", "--max-conns", "8", "--connect-timeout-ms", "500", "--response-timeout-ms",
			   "900", "--hosts-file", "/tmp/hosts");
		is_int(rc, 0, "proxy with every option parses");
		is_int(a.cmd, OWSBX_CMD_PROXY, "as proxy");
		is_int(a.port, 47801, "--port");
		ok(a.nsites == 2 && strcmp(a.sites[0], "github.com") == 0 &&
		   strcmp(a.sites[1], "*.example.com:443") == 0, "both --allow-site, in order");
		ok(a.nsite_files == 1 && strcmp(a.site_files[0], sites) == 0, "--allow-sites-file");
		ok(a.ndeny_sites == 1 && strcmp(a.deny_sites[0], "gist.github.com") == 0, "--deny-site");
		ok(a.max_conns == 8 && a.connect_timeout_ms == 500 && a.response_timeout_ms == 900,
		   "the hidden numbers");
		is_str(a.hosts_file, "/tmp/hosts", "--hosts-file");
		ok(a.policy == NULL, "proxy builds no policy");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "proxy");
		ok(rc == 0 && a.port == 0 && a.nsites == 0, "proxy alone: any port, no site");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "proxy", "--port", "65536");
		is_usage(rc, &err, "not a number in range", "65536", "proxy --port 65536");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "proxy", "--port", "80x");
		is_usage(rc, &err, "not a number in range", "80x", "proxy --port 80x");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "proxy", "github.com");
		is_usage(rc, &err, "unexpected argument", "github.com", "proxy with a bare word");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "proxy", "--proxy", "127.0.0.1:1");
		is_usage(rc, &err, "unknown option", "--proxy", "proxy --proxy (connect's option)");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "connect", "github.com", "22", "--proxy", "127.0.0.1:47800");
		is_int(rc, 0, "connect HOST PORT --proxy parses");
		is_int(a.cmd, OWSBX_CMD_CONNECT, "as connect");
		is_str(a.connect_host, "github.com", "the host");
		is_int(a.connect_port, 22, "the port");
		is_str(a.proxy_addr, "127.0.0.1:47800", "the proxy");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "connect", "github.com", "22");
		is_usage(rc, &err, "no proxy", NULL, "connect with no proxy anywhere");
		owsbx_args_free(&a);
		setenv("HTTPS_PROXY", "http://127.0.0.1:47802/", 1);
		rc = PARSE(&a, &err, "connect", "github.com", "22");
		ok(rc == 0 && a.proxy_addr && strcmp(a.proxy_addr, "http://127.0.0.1:47802/") == 0,
		   "connect falls back on $HTTPS_PROXY");
		owsbx_args_free(&a);
		setenv("OWSBX_PROXY", "127.0.0.1:47803", 1);
		rc = PARSE(&a, &err, "connect", "github.com", "22");
		ok(rc == 0 && a.proxy_addr && strcmp(a.proxy_addr, "127.0.0.1:47803") == 0,
		   "$OWSBX_PROXY comes first");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "connect", "github.com", "22", "--proxy", "127.0.0.1:47804");
		ok(rc == 0 && strcmp(a.proxy_addr, "127.0.0.1:47804") == 0, "and --proxy before it");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "connect", "github.com", "ssh");
		is_usage(rc, &err, "not a port", "ssh", "connect with a port that is no number");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "connect", "github.com");
		is_usage(rc, &err, "usage: owsbx connect HOST PORT", NULL, "connect without a port");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "connect", "a", "1", "b");
		is_usage(rc, &err, "unexpected argument", "b", "connect with a third word");
		owsbx_args_free(&a);
		unsetenv("OWSBX_PROXY");
		unsetenv("HTTPS_PROXY");

		rc = PARSE(&a, &err, "apparmor-profile", "/usr/bin/python3.12");
		ok(rc == 0 && a.cmd == OWSBX_CMD_APPARMOR && !a.profile_name && !a.policy,
		   "apparmor-profile PROGRAM parses");
		is_str(a.program, "/usr/bin/python3.12", "the program");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "apparmor-profile", "--name", "owsbx-ci", "/opt/ci/harness");
		ok(rc == 0 && a.program && strcmp(a.profile_name, "owsbx-ci") == 0, "with --name");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "apparmor-profile");
		is_usage(rc, &err, "usage: owsbx apparmor-profile", NULL, "apparmor-profile without a program");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "apparmor-profile", "/a", "/b");
		is_usage(rc, &err, "unexpected argument", "/b", "apparmor-profile with two programs");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "apparmor-profile", "--load", "/a");
		is_usage(rc, &err, "unknown option", "--load", "apparmor-profile with an unknown option");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "apparmor-profile", "/a", "--name");
		is_usage(rc, &err, "option needs a value", "--name", "apparmor-profile --name without one");
		owsbx_args_free(&a);

		char *versions[] = {"version", "--version", "-V"};
		for (size_t i = 0; i < 3; i++) {
			rc = PARSE(&a, &err, versions[i]);
			ok(rc == 0 && a.cmd == OWSBX_CMD_VERSION && !a.policy, "%s parses", versions[i]);
			owsbx_args_free(&a);
		}
		char *helps[] = {"help", "--help", "-h"};
		for (size_t i = 0; i < 3; i++) {
			rc = PARSE(&a, &err, helps[i]);
			ok(rc == 0 && a.cmd == OWSBX_CMD_HELP && !a.policy, "%s parses", helps[i]);
			is_str(a.help_topic, "", "%s: the whole help", helps[i]);
			owsbx_args_free(&a);
		}
		rc = PARSE(&a, &err, "version", "--rw", d1);
		is_usage(rc, &err, "unknown option", "--rw", "version --rw");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "version", "2");
		is_usage(rc, &err, "unexpected argument", "2", "version with a word after it");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "report", "--policy", pol);
		is_usage(rc, &err, "unknown option", "--policy", "report --policy");
		ok(strstr(err.hint, "owsbx help report") != NULL, "the hint names report's help (%s)",
		   err.hint);
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "status", "--yes");
		is_usage(rc, &err, "unknown option", "--yes", "status --yes (setup's and remove's)");
		ok(strstr(err.hint, "owsbx help machine sandbox status") != NULL,
		   "the hint names the verb's help (%s)", err.hint);
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "machine", "sandbox", "repair");
		is_usage(rc, &err, "unknown verb", "repair", "machine sandbox repair");
		owsbx_args_free(&a);
	}

	/* ------------------------------------------------------------------ help */
	{
		/* Every way to ask, and the topic each gives. */
		struct { char *w[5]; const char *topic; } asks[] = {
			{{"help", "run"}, "run"},
			{{"run", "--help"}, "run"},
			{{"run", "-h"}, "run"},
			{{"run", "--rw", "/nonexistent-owstest", "--help"}, "run"},
			{{"verify", "--help"}, "verify"},
			{{"proxy", "--port", "1", "-h"}, "proxy"},
			{{"connect", "--help"}, "connect"},
			{{"apparmor-profile", "--help"}, "apparmor-profile"},
			{{"help", "machine"}, "machine"},
			{{"machine", "--help"}, "machine"},
			{{"machine", "sandbox", "-h"}, "machine"},
			{{"machine", "sandbox", "setup", "--help"}, "machine sandbox setup"},
			{{"help", "machine", "sandbox", "status"}, "machine sandbox status"},
			{{"version", "--help"}, "version"},
			{{"help", "help"}, "help"},
		};
		for (size_t i = 0; i < sizeof(asks) / sizeof(*asks); i++) {
			char *words[8] = {"owsbx"};
			int n = 1;
			for (int k = 0; asks[i].w[k]; k++)
				words[n++] = asks[i].w[k];
			ows_error_clear(&err);
			rc = owsbx_parse(n, words, &a, &err);
			ok(rc == 0 && a.cmd == OWSBX_CMD_HELP, "%s %s ...: help (rc %d, %s)", asks[i].w[0],
			   asks[i].w[1], rc, err.what);
			is_str(a.help_topic, asks[i].topic, "for %s", asks[i].topic);
			is_int(owsbx_help(NULL, a.help_topic), 0, "a topic the help knows");
			owsbx_args_free(&a);
		}
		rc = PARSE(&a, &err, "run", "--", "--help");
		ok(rc == 0 && a.cmd == OWSBX_CMD_RUN && strcmp(a.argv[0], "--help") == 0,
		   "run -- --help runs a command named --help");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "help", "rnu");
		is_usage(rc, &err, "no such command", "rnu", "help on an unknown command");
		owsbx_args_free(&a);
		is_int(owsbx_help(NULL, "machine sandbox repair"), -1, "no help for a verb that is not");

		/* Each option of each command's table parses there: the table is the parser's. */
		for (const owsbx_command *c = owsbx_commands; c->name; c++) {
			for (const owsbx_option *o = c->options; o->name; o++) {
				char *words[16] = {"owsbx"};
				int n = 1;
				char name[64];
				snprintf(name, sizeof(name), "%s", c->name);
				for (char *w = strtok(name, " "); w; w = strtok(NULL, " "))
					words[n++] = w;
				words[n++] = (char *)o->name;
				ows_error_clear(&err);
				rc = owsbx_parse(n, words, &a, &err);
				if (o->value)
					is_str(err.what, "option needs a value", "%s %s without a value: "
					       "known, and needs one", c->name, o->name);
				else
					ok(strstr(err.what, "unknown option") == NULL && c->cmd != OWSBX_CMD_HELP,
					   "%s %s: known (%s)", c->name, o->name, err.what);
				owsbx_args_free(&a);
				if (o->alias) {
					words[n - 1] = (char *)o->alias;
					ows_error_clear(&err);
					rc = owsbx_parse(n, words, &a, &err);
					ok(strstr(err.what, "unknown option") == NULL, "%s %s: known too",
					   c->name, o->alias);
					owsbx_args_free(&a);
				}
			}
		}
		/* What the help prints: every command, every option with its meaning. */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		owsbx_usage(mem);
		fclose(mem);
		int missing = 0;
		for (const owsbx_command *c = owsbx_commands; c->name; c++) {
			char line[128];
			snprintf(line, sizeof(line), "\nowsbx %s%s%s\n", c->name, c->usage[0] ? " " : "",
				 c->usage);
			const char *at = strstr(text, line);
			missing += !at;
			/* each option of the command after it, its meaning beside it */
			for (const owsbx_option *o = c->options; at && o->name; o++) {
				snprintf(line, sizeof(line), "    %s%s%s%s%s", o->alias ? o->alias : "",
					 o->alias ? ", " : "", o->name, o->value ? " " : "",
					 o->value ? o->value : "");
				const char *opt = strstr(at, line);
				const char *help = opt ? opt + strlen(line) + strspn(opt + strlen(line), " \n") : "";
				if (!opt || strncmp(help, o->help, strcspn(o->help, " ")) != 0) {
					diag("not in the help as expected: %s %s", c->name, line);
					missing++;
				}
			}
		}
		is_int(missing, 0, "the help names every command and its options, each with its meaning");
		ok(strstr(text, "OWSBX_CONFIG") && strstr(text, "70") && strstr(text, "71"),
		   "and the environment and exit statuses");
		free(text);
	}

	/* ---------------------------------------------------------------- no command */
	{
		char *argv[] = {"owsbx", NULL};
		ows_error_clear(&err);
		rc = owsbx_parse(1, argv, &a, &err);
		is_usage(rc, &err, "no command given", NULL, "owsbx alone");
		ok(strstr(err.hint, "owsbx help") != NULL, "and the hint points at owsbx help");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "rnu", "--", "true");
		is_usage(rc, &err, "unknown command", "rnu", "an unknown subcommand");
		owsbx_args_free(&a);
	}

	/* ------------------------------------------------------------ run's options */
	{
		rc = PARSE(&a, &err, "run", "--rw", d1, "--ro", d2, "--", "make", "test");
		is_int(rc, 0, "--rw and --ro parse");
		snprintf(want, sizeof(want),
			 "{\"folders\":[{\"path\":\"%s\",\"access\":\"rw\"},"
			 "{\"path\":\"%s\",\"access\":\"ro\"}]}",
			 d1, d2);
		is_str(policy_json(&a), want, "one rw folder, one ro, in order");
		ok(strcmp(a.argv[0], "make") == 0 && strcmp(a.argv[1], "test") == 0 && !a.argv[2],
		   "the command and its argument");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "run", "--ro", d1, "--ro", d2, "--ro", top, "--", "true");
		is_int(rc, 0, "--ro repeated parses");
		snprintf(want, sizeof(want),
			 "{\"folders\":[{\"path\":\"%s\",\"access\":\"ro\"},"
			 "{\"path\":\"%s\",\"access\":\"ro\"},{\"path\":\"%s\",\"access\":\"ro\"}]}",
			 d1, d2, top);
		is_str(policy_json(&a), want, "three read-only folders");
		owsbx_args_free(&a);

		char *nets[] = {"none", "open", "allowlist"};
		for (size_t i = 0; i < 3; i++) {
			rc = PARSE(&a, &err, "run", "--net", nets[i], "--", "true");
			is_int(rc, 0, "--net %s parses", nets[i]);
			snprintf(want, sizeof(want), "{\"network\":\"%s\",\"folders\":[]}", nets[i]);
			is_str(policy_json(&a), want, "network %s in the policy", nets[i]);
			owsbx_args_free(&a);
		}
		rc = PARSE(&a, &err, "run", "--net", "sometimes", "--", "true");
		is_usage(rc, &err, "unknown network mode", "sometimes", "--net sometimes");
		ok(strstr(err.what, "none, open or allowlist") != NULL, "and it says the modes");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "run", "--net", "allowlist", "--allow-site", "github.com:443",
			   "--allow-site", "*.example.com:443", "--allow-sites-file", sites, "--", "true");
		is_int(rc, 0, "--allow-site and --allow-sites-file parse");
		ok(strstr(policy_json(&a), "\"hosts\":[\"github.com:443\",\"*.example.com:443\","
					   "\"registry.npmjs.org:443\"]") != NULL,
		   "every site in the policy, in order (%s)", policy_json(&a));
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--net", "allowlist", "--allow-site", "@code-hosting",
			   "--deny-site", "api.github.com", "--deny-site", "!*.example.com:22",
			   "--allow-site", "!evil.example:*", "--", "true");
		is_int(rc, 0, "--deny-site and an --allow-site with '!' parse");
		ok(strstr(policy_json(&a), "\"hosts\":[\"@code-hosting\",\"!api.github.com\","
					   "\"!*.example.com:22\",\"!evil.example:*\"]") != NULL,
		   "each a deny entry in the policy (%s)", policy_json(&a));
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--net", "allowlist", "--deny-site", "git.corp+private",
			   "--", "true");
		is_int(rc, OWSBX_EXIT_USAGE, "--deny-site with +private: exit status 2");
		ok(strstr(err.what, "+private") != NULL, "the error says why (%s)", err.what);
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--allow-sites-file", "/nonexistent/owstest-sites", "--",
			   "true");
		is_int(rc, OWSBX_EXIT_USAGE, "a missing sites file: exit status 2");
		ok(err.code < 0 && err.what[0], "with the library's error (%s)", err.what);
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "run", "--provider", "direct", "--", "true");
		is_int(rc, 0, "--provider direct parses");
		is_str(policy_json(&a), "{\"provider\":\"direct\",\"folders\":[]}",
		       "the provider in the policy");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--provider", "openshell", "--", "true");
		is_str(policy_json(&a), "{\"provider\":\"openshell\",\"folders\":[]}",
		       "--provider openshell: in the policy");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--provider", "magic", "--", "true");
		is_int(rc, OWSBX_EXIT_USAGE, "--provider magic: exit status 2");
		is_int(err.code, OWS_EINVAL, "the library's OWS_EINVAL");
		owsbx_args_free(&a);

		/* Flags come after the file, whatever their order on the line. */
		snprintf(want, sizeof(want),
			 "{\"network\":\"open\",\"folders\":[{\"path\":\"%s\",\"access\":\"ro\"}],"
			 "\"env\":{\"EDITOR\":\"vi\"}}",
			 d1);
		write_file(pol, want);
		rc = PARSE(&a, &err, "run", "--net", "none", "--rw", d1, "--policy", pol, "--", "true");
		is_int(rc, 0, "--policy parses");
		snprintf(want, sizeof(want),
			 "{\"network\":\"none\",\"folders\":[{\"path\":\"%s\",\"access\":\"rw\"}],"
			 "\"env\":{\"EDITOR\":\"vi\"}}",
			 d1);
		is_str(policy_json(&a), want, "the flags are applied over the file");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "verify", "--policy", "/nonexistent/owstest-policy.json");
		is_int(rc, OWSBX_EXIT_USAGE, "an unreadable --policy: exit status 2");
		ok(err.code < 0 && err.what[0], "with the library's error (%s)", err.what);
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "run", "--config", "/etc/owstest.ini", "--events", "/tmp/ev.jsonl",
			   "--", "true");
		is_int(rc, 0, "--config and --events parse");
		is_str(a.config_path, "/etc/owstest.ini", "--config");
		is_str(a.events_path, "/tmp/ev.jsonl", "--events");
		owsbx_args_free(&a);
		setenv("OWSBX_CONFIG", "/etc/owstest-env.ini", 1);
		rc = PARSE(&a, &err, "run", "--", "true");
		ok(rc == 0 && a.config_path && strcmp(a.config_path, "/etc/owstest-env.ini") == 0,
		   "$OWSBX_CONFIG without --config");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--config", "/etc/owstest.ini", "--", "true");
		ok(rc == 0 && strcmp(a.config_path, "/etc/owstest.ini") == 0, "--config wins over it");
		owsbx_args_free(&a);
		setenv("OWSBX_CONFIG", "", 1);
		rc = PARSE(&a, &err, "run", "--", "true");
		ok(rc == 0 && a.config_path == NULL, "an empty $OWSBX_CONFIG is none");
		owsbx_args_free(&a);
		unsetenv("OWSBX_CONFIG");

		rc = PARSE(&a, &err, "run", "--env", "EDITOR=vi", "--env", "EMPTY=", "--env",
			   "EQ=a=b", "--env", "EDITOR=nano", "--", "true");
		is_int(rc, 0, "--env NAME=VALUE parses");
		is_str(policy_json(&a),
		       "{\"folders\":[],\"env\":{\"EDITOR\":\"nano\",\"EMPTY\":\"\",\"EQ\":\"a=b\"}}",
		       "empty values, '=' in values, and the later value of a name");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--env", "EDITOR", "--", "true");
		is_usage(rc, &err, "--env takes NAME=VALUE", "EDITOR", "--env without '='");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--env", "=vi", "--", "true");
		is_usage(rc, &err, "--env takes NAME=VALUE", "=vi", "--env without a name");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--env", "GITHUB_TOKEN=x", "--", "true");
		is_usage(rc, &err, "secret", "GITHUB_TOKEN", "--env with a secret's name");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--env", "A-B=1", "--", "true");
		is_usage(rc, &err, "invalid environment variable name", "A-B", "--env A-B=1");
		owsbx_args_free(&a);
		/* The library refuses a name over 255 bytes; the CLI must not cut one down to fit. */
		char longenv[320];
		memset(longenv, 'A', 300);
		snprintf(longenv + 300, sizeof(longenv) - 300, "=1");
		rc = PARSE(&a, &err, "run", "--env", longenv, "--", "true");
		is_usage(rc, &err, "invalid environment variable name", NULL,
			 "--env with a 300-byte name");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "verify", "--rw", d1, "--net", "open", "--json");
		is_int(rc, 0, "verify takes run's options");
		snprintf(want, sizeof(want),
			 "{\"network\":\"open\",\"folders\":[{\"path\":\"%s\",\"access\":\"rw\"}]}", d1);
		is_str(policy_json(&a), want, "and builds the same policy");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--run-as", "daemon", "--", "true");
		is_int(rc, 0, "--run-as parses");
		is_str(policy_json(&a), "{\"folders\":[],\"run_as\":\"daemon\"}", "run_as in the policy");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--json", "--", "true");
		is_usage(rc, &err, "unknown option", "--json", "run --json (it has no JSON to print)");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "verify", "--events", "/tmp/ev");
		is_usage(rc, &err, "unknown option", "--events", "verify --events (its session has none)");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "verify", "--", "true");
		is_usage(rc, &err, "unexpected argument", "true", "verify with a command");
		owsbx_args_free(&a);
	}

	/* ---------------------------------------------------------- what -- divides */
	{
		rc = PARSE(&a, &err, "run", "--ro", d1, "--", "ls", "--rw", "/", "--net", "open",
			   "--", "-x");
		is_int(rc, 0, "options after -- parse");
		snprintf(want, sizeof(want), "{\"folders\":[{\"path\":\"%s\",\"access\":\"ro\"}]}",
			 d1);
		is_str(policy_json(&a), want, "and stay out of the policy");
		int n = 0;
		while (a.argv[n])
			n++;
		is_int(n, 7, "the command keeps all seven words");
		ok(strcmp(a.argv[1], "--rw") == 0 && strcmp(a.argv[5], "--") == 0 &&
		   strcmp(a.argv[6], "-x") == 0, "its options, its own -- included");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "run", "--", "--rw");
		ok(rc == 0 && strcmp(a.argv[0], "--rw") == 0, "a command named like an option");
		owsbx_args_free(&a);

		/* The first word that is no option starts the command, -- or not. */
		rc = PARSE(&a, &err, "run", "--ro", d1, "ls", "--rw", d2);
		is_int(rc, 0, "a command without --");
		ok(strcmp(a.argv[0], "ls") == 0 && strcmp(a.argv[1], "--rw") == 0,
		   "takes what follows it");
		snprintf(want, sizeof(want), "{\"folders\":[{\"path\":\"%s\",\"access\":\"ro\"}]}",
			 d1);
		is_str(policy_json(&a), want, "and its --rw is not owsbx's");
		owsbx_args_free(&a);

		rc = PARSE(&a, &err, "run", "--");
		is_usage(rc, &err, "no command to run", NULL, "run -- alone");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--rw", d1);
		is_usage(rc, &err, "no command to run", NULL, "run without a command");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run");
		is_usage(rc, &err, "no command to run", NULL, "run alone");
		owsbx_args_free(&a);
	}

	/* ----------------------------------------------------------- bad options */
	{
		rc = PARSE(&a, &err, "run", "--rwx", d1, "--", "true");
		is_usage(rc, &err, "unknown option", "--rwx", "an unknown option");
		ok(strstr(err.hint, "owsbx help") != NULL, "the hint points at owsbx help");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--rw=/tmp", "--", "true");
		is_usage(rc, &err, "unknown option", "--rw=/tmp", "--rw=DIR is not a spelling");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "-", "--", "true");
		is_usage(rc, &err, "unknown option", "-", "a lone dash");
		owsbx_args_free(&a);

		char *valued[] = {"--rw", "--ro", "--net", "--allow-site", "--deny-site", "--allow-sites-file",
				  "--provider", "--policy", "--config", "--events", "--env", "--run-as"};
		for (size_t i = 0; i < sizeof(valued) / sizeof(*valued); i++) {
			rc = PARSE(&a, &err, "run", valued[i]);
			is_usage(rc, &err, "option needs a value", valued[i], valued[i]);
			owsbx_args_free(&a);
		}
	}

	/* ----------------------------------------------------------- bad folders */
	{
		rc = PARSE(&a, &err, "run", "--rw", "relative/dir", "--", "true");
		is_usage(rc, &err, "not an absolute path", "relative/dir", "a relative folder");
		ok(strstr(err.hint, "absolute") != NULL, "the hint says to make it absolute");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--ro", ".", "--", "true");
		is_usage(rc, &err, "not an absolute path", ".", "--ro .");
		owsbx_args_free(&a);
		char missing[160];
		snprintf(missing, sizeof(missing), "%s/missing", top);
		rc = PARSE(&a, &err, "run", "--ro", missing, "--", "true");
		is_usage(rc, &err, "does not exist", missing, "a missing folder");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--rw", sites, "--", "true");
		is_usage(rc, &err, "not a folder", sites, "a file for a folder");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--rw", "/", "--", "true");
		is_int(rc, OWSBX_EXIT_USAGE, "/ as a folder: exit status 2");
		owsbx_args_free(&a);
		/* The error of the first bad flag is kept, not one of a later flag. */
		rc = PARSE(&a, &err, "run", "--ro", "rel", "--net", "bad", "--", "true");
		is_usage(rc, &err, "not an absolute path", "rel", "the first of two bad flags");
		owsbx_args_free(&a);
	}

	/* ------------------------------------------------------- duplicate folders */
	{
		char d1slash[200], d1dots[200];
		snprintf(d1slash, sizeof(d1slash), "%s/", d1);
		snprintf(d1dots, sizeof(d1dots), "%s/../one", d1);
		rc = PARSE(&a, &err, "run", "--rw", d1, "--rw", d1slash, "--rw", d1dots, "--", "true");
		is_int(rc, 0, "one folder named three ways parses");
		snprintf(want, sizeof(want), "{\"folders\":[{\"path\":\"%s\",\"access\":\"rw\"}]}",
			 d1);
		is_str(policy_json(&a), want, "and is one folder");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--rw", d1, "--ro", d1, "--", "true");
		snprintf(want, sizeof(want), "{\"folders\":[{\"path\":\"%s\",\"access\":\"ro\"}]}",
			 d1);
		ok(rc == 0, "--rw then --ro of one folder parses");
		is_str(policy_json(&a), want, "the later access wins");
		owsbx_args_free(&a);
		rc = PARSE(&a, &err, "run", "--ro", d1, "--rw", d1, "--", "true");
		snprintf(want, sizeof(want), "{\"folders\":[{\"path\":\"%s\",\"access\":\"rw\"}]}",
			 d1);
		is_str(policy_json(&a), want, "either way round");
		owsbx_args_free(&a);
	}

	/* ------------------------------------------------------ proxy addresses */
	{
		char host[64];
		int port = 0;
		ok(owsbx_split_proxy("127.0.0.1:47800", host, sizeof(host), &port) == 0 &&
		   strcmp(host, "127.0.0.1") == 0 && port == 47800, "127.0.0.1:47800");
		ok(owsbx_split_proxy("http://127.0.0.1:47801/", host, sizeof(host), &port) == 0 &&
		   strcmp(host, "127.0.0.1") == 0 && port == 47801, "http://127.0.0.1:47801/");
		ok(owsbx_split_proxy("http://[::1]:47802/", host, sizeof(host), &port) == 0 &&
		   strcmp(host, "::1") == 0 && port == 47802, "http://[::1]:47802/");
		ok(owsbx_split_proxy("127.0.0.1", host, sizeof(host), &port) < 0, "no port refused");
		ok(owsbx_split_proxy(":47800", host, sizeof(host), &port) < 0, "no host refused");
		ok(owsbx_split_proxy("127.0.0.1:0", host, sizeof(host), &port) < 0, "port 0 refused");
		ok(owsbx_split_proxy("127.0.0.1:99999", host, sizeof(host), &port) < 0,
		   "a port past 65535 refused");
		ok(owsbx_split_proxy("a-very-long-host-name:1", host, 8, &port) < 0,
		   "a host longer than the buffer refused");
	}

	remove(sites);
	remove(pol);
	rmdir(d1);
	rmdir(d2);
	if (rmdir(top) != 0)
		diag("could not remove %s", top);
	return done_testing();
}
