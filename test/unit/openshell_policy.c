/*
 * The OpenShell policy renderer (lib/openshell/policy.c): each representative
 * session renders exactly its golden policy and `sandbox create` arguments
 * (test/golden/openshell_NAME.yaml, .args), a folder named with YAML's special
 * characters stays one quoted scalar, and the renderer refuses what OpenShell
 * cannot carry.  Whether the policies follow OpenShell's schema and keep the
 * session's promises is asked by test/openshell/validate_policy.py
 * (test/sh/openshell_policy.sh).
 *
 *   build/test/openshell_policy              the TAP test (from the repository's root)
 *   build/test/openshell_policy --emit DIR   write each session's NAME.yaml, NAME.args and
 *                                            NAME.expect.json (what the validator holds it to)
 *
 * An .args file holds one argument a line, escaped as in test/golden/seatbelt_*.params.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openshell/openshell.h"
#include "tap.h"

#define HOME "/home/owstest"
#define RUNNER "/usr/local/bin/owsbx-linux-x86_64"

static const ows__folder strict_folders[] = {
	{ HOME "/project", OWS_ACCESS_RW },
	{ HOME "/docs", OWS_ACCESS_RO },
	{ HOME "/project/vendor", OWS_ACCESS_RO }, /* read only inside the rw folder */
};

static const ows__folder standard_folders[] = {
	{ HOME "/work", OWS_ACCESS_RW },
};

/* Every character YAML gives a meaning to that OpenShell's mount can carry. */
#define ODD HOME "/it's \"q\" #1 {a}, [b] & *c | >d %e @f `g` !h -i ?j \\k"
static const ows__folder odd_folders[] = {
	{ ODD, OWS_ACCESS_RW },
	{ HOME "/- leading dash", OWS_ACCESS_RO },
};

static const char *const no_hosts[] = { NULL };
static const char *const standard_hosts[] = {
	"git.example.com",         /* the machine's */
	"*.pages.example.org:8443", /* the session's sites */
	"api.anthropic.com",       /* a shared credential's host */
	NULL,
};

typedef struct session {
	const char *name;
	ows__os_spec spec;
} session;

#define SPEC(nm, folders, prof, hosts)                                                  \
	{ "owsbx-" nm, "ghcr.io/nvidia/openshell-community/sandboxes/base:" OWS__OS_VERSION, \
	  folders, OWS__ARRAY_LEN(folders), 1000, 1000, prof, hosts, RUNNER,             \
	  "/run/owsandbox/s-" nm "/policy.yaml" }

static const session sessions[] = {
	{ "strict", SPEC("strict", strict_folders, OWS__OS_STRICT, no_hosts) },
	{ "standard", SPEC("standard", standard_folders, OWS__OS_STANDARD, standard_hosts) },
	{ "odd", SPEC("odd", odd_folders, OWS__OS_STRICT, no_hosts) },
	{ "none", SPEC("none", standard_folders, OWS__OS_NONE, no_hosts) },
};

static void put_escaped(FILE *f, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", f);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
	}
}

static char *args_text(const ows__strv *args)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	if (!f)
		bail_out("out of memory");
	for (size_t i = 0; i < args->len; i++) {
		put_escaped(f, args->v[i]);
		fputc('\n', f);
	}
	fclose(f);
	return out;
}

/* A JSON string, for the expectations file (the validator's own copy of the session). */
static void put_json(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static const char *const profile_names[] = { "strict", "standard", "open", "none" };

static void put_expect(FILE *f, const ows__os_spec *s)
{
	fprintf(f, "{\"profile\": \"%s\", \"uid\": %u, \"gid\": %u,\n \"folders\": [",
		profile_names[s->profile], (unsigned)s->uid, (unsigned)s->gid);
	for (size_t i = 0; i < s->nfolders; i++) {
		fputs(i ? ", [" : "[", f);
		put_json(f, s->folders[i].path);
		fprintf(f, ", \"%s\"]", s->folders[i].access == OWS_ACCESS_RW ? "rw" : "ro");
	}
	fputs("],\n \"hosts\": [", f);
	for (size_t i = 0; s->hosts[i]; i++) {
		if (i)
			fputs(", ", f);
		put_json(f, s->hosts[i]);
	}
	fputs("],\n \"runner\": ", f);
	put_json(f, s->runner);
	fputs(", \"runner_target\": ", f);
	put_json(f, OWS__OS_RUNNER_PATH);
	fputs(",\n \"name\": ", f);
	put_json(f, s->name);
	fputs(", \"image\": ", f);
	put_json(f, s->image);
	fputs(", \"policy_path\": ", f);
	put_json(f, s->policy_path);
	fputs("}\n", f);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *out = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&out, &n);
	for (int c; m && (c = fgetc(f)) != EOF;)
		fputc(c, m);
	if (m)
		fclose(m);
	fclose(f);
	return out;
}

static int spit(const char *dir, const char *name, const char *ext, const char *text,
		const ows__os_spec *expect)
{
	char path[512];
	snprintf(path, sizeof path, "%s/openshell_%s.%s", dir, name, ext);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	if (expect)
		put_expect(f, expect);
	else
		fputs(text, f);
	if (fclose(f) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

static int emit(const char *dir)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(sessions); i++) {
		ows__os_render r;
		ows_error err = {0};
		if (ows__os_render_spec(&sessions[i].spec, &r, &err) != 0) {
			fprintf(stderr, "%s: %s\n", sessions[i].name, err.what);
			ows__os_render_free(&r);
			return 1;
		}
		char *args = args_text(&r.create_args);
		int rc = spit(dir, sessions[i].name, "yaml", r.policy, NULL) |
			 spit(dir, sessions[i].name, "args", args, NULL) |
			 spit(dir, sessions[i].name, "expect.json", NULL, &sessions[i].spec);
		free(args);
		ows__os_render_free(&r);
		if (rc)
			return 1;
	}
	return 0;
}

static void golden(const session *s)
{
	ows__os_render r;
	ows_error err = {0};
	char path[256];
	int rc = ows__os_render_spec(&s->spec, &r, &err);
	if (!is_int(rc, 0, "%s: renders (%s)", s->name, rc ? err.what : "ok")) {
		ows__os_render_free(&r);
		return;
	}
	snprintf(path, sizeof path, "test/golden/openshell_%s.yaml", s->name);
	char *want = slurp(path);
	is_str(r.policy, want, "%s: the policy is %s", s->name, path);
	free(want);
	snprintf(path, sizeof path, "test/golden/openshell_%s.args", s->name);
	want = slurp(path);
	char *got = args_text(&r.create_args);
	is_str(got, want, "%s: the arguments are %s", s->name, path);
	free(got);
	free(want);
	ows__os_render_free(&r);
}

/* The odd folder is one double-quoted scalar, its quote and backslash escaped. */
static void odd_is_quoted(void)
{
	ows__os_render r;
	int rc = ows__os_render_spec(&sessions[2].spec, &r, NULL);
	ok(rc == 0 && strstr(r.policy,
			     "    - \"" HOME "/it's \\\"q\\\" #1 {a}, [b] & *c | >d %e @f `g` !h -i ?j "
			     "\\\\k\"\n"),
	   "a folder named with YAML's special characters is one escaped double-quoted scalar");
	ok(rc == 0 && strstr(r.policy, "    - \"" HOME "/- leading dash\"\n"),
	   "... and one starting \"- \" too");
	ows__os_render_free(&r);
}

static void refuses(const char *desc, ows__os_spec spec, const char *in_message)
{
	ows__os_render r;
	ows_error err = {0};
	int rc = ows__os_render_spec(&spec, &r, &err);
	ok(rc == OWS_EINVAL && r.policy == NULL && r.create_args.len == 0 &&
		   strstr(err.what, in_message) != NULL,
	   "refused: %s", desc);
	if (rc != OWS_EINVAL || !strstr(err.what, in_message))
		diag("rc %d, message \"%s\", wanted \"%s\"", rc, err.what, in_message);
	ows__os_render_free(&r);
}

static void refuses_folder(const char *desc, const char *path, const char *in_message)
{
	ows__folder f[1] = { { (char *)path, OWS_ACCESS_RW } };
	ows__os_spec s = sessions[0].spec;
	s.folders = f, s.nfolders = 1;
	refuses(desc, s, in_message);
}

static void refuses_host(const char *desc, const char *host, const char *in_message)
{
	const char *hosts[] = { host, NULL };
	ows__os_spec s = sessions[0].spec;
	s.hosts = hosts;
	refuses(desc, s, in_message);
}

static void refusals(void)
{
	ows__os_spec s;
	refuses_folder("a folder name with a colon (Docker's SRC:DST)", HOME "/a:b", "':'");
	refuses_folder("a folder name with a newline", HOME "/a\nb", "control character");
	refuses_folder("a folder name with a tab", HOME "/a\tb", "control character");
	refuses_folder("a relative folder", "home/owstest", "canonical");
	refuses_folder("the root", "/", "canonical");
	refuses_folder("a \"..\" component", HOME "/x/../.ssh", "canonical");
	refuses_folder("a trailing slash", HOME "/x/", "canonical");
	refuses_folder("a trailing blank", HOME "/x ", "blank");
	refuses_folder("a name that is not UTF-8", HOME "/\xff", "UTF-8");
	refuses_folder("OpenShell's reserved /etc/openshell", "/etc/openshell/x", "reserves");
	refuses_folder("a parent of /run/openshell", "/run", "reserves");
	refuses_folder("a parent of the workspace root", "/sandbox", "workspace root");
	ows__folder inside[1] = { { "/sandbox/project", OWS_ACCESS_RO } };
	s = sessions[0].spec, s.folders = inside, s.nfolders = 1;
	ows__os_render r;
	ok(ows__os_render_spec(&s, &r, NULL) == 0, "a folder below /sandbox is accepted");
	ows__os_render_free(&r);

	s = sessions[0].spec, s.profile = OWS__OS_OPEN;
	refuses("the open profile (OpenShell has no any-host endpoint)", s, "cannot allow any host");
	s = sessions[0].spec, s.uid = 0;
	refuses("root as the user", s, "from 1 to 4294967294");
	s = sessions[0].spec, s.gid = (gid_t)-1;
	refuses("gid 4294967295", s, "from 1 to 4294967294");
	s = sessions[0].spec, s.runner = "/opt/x:y/owsbx-linux-x86_64";
	refuses("a runner path with a colon", s, "cannot be bind-mounted");
	s = sessions[0].spec, s.runner = "owsbx-linux-x86_64";
	refuses("a relative runner path", s, "incomplete spec");
	refuses_folder("a folder over the runner's", "/opt", "where the tool runner is");
	refuses_folder("a folder in the runner's", OWS__OS_RUNNER_DIR "/x", "where the tool runner is");
	s = sessions[3].spec, s.hosts = standard_hosts;
	refuses("a host under network none", s, "network none allows no host");
	s = sessions[0].spec, s.policy_path = "policy.yaml";
	refuses("a relative policy file", s, "incomplete spec");
	s = sessions[0].spec, s.name = "--help";
	refuses("a name that reads as an option", s, "incomplete spec");

	refuses_host("a bare * host", "*", "wildcard");
	refuses_host("a ** host", "**", "wildcard");
	refuses_host("a top-level-domain wildcard", "*.com", "wildcard");
	refuses_host("a wildcard outside the first label", "api.*.example.com", "wildcard");
	refuses_host("port 0", "example.com:0", "bad port");
	refuses_host("port 65536", "example.com:65536", "bad port");
	refuses_host("a host with a quote", "exa\"mple.com", "bad host");
	refuses_host("a host with a newline", "example.com\n- host: evil.com", "bad host");
	refuses_host("an IPv6 literal", "[::1]:443", "bad host");
	refuses_host("a deny entry (OpenShell has no deny rule)", "!gist.github.com", "no deny rules");
	refuses_host("a deny entry with a port", "!evil.example:22", "no deny rules");

	ok(ows__os_render_spec(NULL, &r, NULL) == OWS_EINVAL, "refused: no spec");
}

/* none: no network_policies at all (OpenShell's proxy then allows nothing), and the runner
 * alone at its own path as the main command, its folder read-only. */
static void none_and_runner(void)
{
	ows__os_render r;
	int rc = ows__os_render_spec(&sessions[3].spec, &r, NULL);
	ok(rc == 0 && !strstr(r.policy, "network_policies") && !strstr(r.policy, "host:"),
	   "none: the policy lists no endpoint at all");
	ok(rc == 0 && r.create_args.len >= 2 &&
		   strcmp(r.create_args.v[r.create_args.len - 2], OWS__OS_RUNNER_PATH) == 0 &&
		   strcmp(r.create_args.v[r.create_args.len - 1], "runner") == 0,
	   "the main command is `" OWS__OS_RUNNER_PATH " runner`");
	ok(rc == 0 && strstr(r.create_args.v[r.create_args.len - 5],
			     "{\"type\":\"bind\",\"source\":\"" RUNNER "\",\"target\":\""
			     OWS__OS_RUNNER_PATH "\",\"read_only\":true}"),
	   "the runner alone is mounted, read-only, at its own path");
	ows__os_render_free(&r);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--emit") == 0)
		return emit(argv[2]);
	for (size_t i = 0; i < OWS__ARRAY_LEN(sessions); i++)
		golden(&sessions[i]);
	odd_is_quoted();
	refusals();
	none_and_runner();
	return done_testing();
}
