/*
 * The Seatbelt profile renderer (lib/darwin/profile.c), built and run on Linux:
 * each representative session renders exactly its golden profile and
 * parameters (test/golden/seatbelt_NAME.sb, .params), a folder name holding a
 * quote, a newline and a parenthesis changes the parameters only, and the
 * renderer refuses what it must.  What the profiles mean is asked of them by
 * the model in test/darwin/sbpl_model.py (test/sh/seatbelt_profile.sh).
 *
 *   build/test/seatbelt_profile              the TAP test (from the repository's root)
 *   build/test/seatbelt_profile --emit DIR   write each session's NAME.sb and NAME.params
 *
 * A .params file holds one NAME=VALUE a line, the value escaped: "\\" for a
 * backslash, "\n" for a newline, "\xHH" for any other control byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darwin/profile.h"
#include "tap.h"

#define HOME "/Users/owstest"
#define PRIV "/private/tmp/owsandbox-501/s-0123abcd"

static const char *const marker_allow = PRIV "/.owsbx-alive-5e1f";
/* Inside the private folder on purpose: its explicit deny must win over the grant. */
static const char *const marker_deny = PRIV "/.owsbx-other-77aa";

static const ows__sb_path none_paths[] = {
	{ HOME "/project", true, false },
};

static const ows__sb_path quote_paths[] = {
	{ HOME "/pro\"j\n(e)ct", true, false },
};

static const ows__sb_path allowlist_paths[] = {
	{ HOME "/project", true, false },
	{ HOME "/docs", false, false },
	{ HOME "/project/vendor", false, false }, /* read only inside the rw folder */
	{ HOME "/.nvm", false, false },
	{ HOME "/.cargo", false, false },
	{ HOME "/.local/bin", false, false },
	{ HOME "/.gitconfig", false, true },
	{ HOME "/.config/git", false, false },
	{ "/Applications/OpenWorker.app/Contents/Resources/runner", false, false },
};

static const ows__sb_path allowlist_guard[] = {
	{ HOME "/project/.git/config", false, true },
	{ HOME "/project/.git/hooks", false, false },
	{ HOME "/project/.bashrc", false, true },
};

static const ows__sb_path open_paths[] = {
	{ HOME "/project", true, false },
	{ HOME "/docs", false, false },
	{ HOME "/notes.txt", true, true },
};

typedef struct session {
	const char *name;
	ows__sb_spec spec;
} session;

static const session sessions[] = {
	{ "none", { OWS_NET_NONE, 0, PRIV, none_paths, 1, marker_allow, marker_deny, NULL, 0 } },
	{ "quote", { OWS_NET_NONE, 0, PRIV, quote_paths, 1, marker_allow, marker_deny, NULL, 0 } },
	{ "allowlist", { OWS_NET_ALLOWLIST, 47801, PRIV, allowlist_paths,
			 OWS__ARRAY_LEN(allowlist_paths), marker_allow, marker_deny,
			 allowlist_guard, OWS__ARRAY_LEN(allowlist_guard) } },
	{ "open", { OWS_NET_OPEN, 0, PRIV, open_paths, OWS__ARRAY_LEN(open_paths), marker_allow,
		    marker_deny, NULL, 0 } },
};

static char *escape_params(const ows__strv *params)
{
	size_t n = 1;
	for (size_t i = 0; i < params->len; i++)
		n += 4 * strlen(params->v[i]) + 1;
	char *out = calloc(1, n), *at = out;
	if (!out)
		bail_out("out of memory");
	for (size_t i = 0; i < params->len; i++) {
		for (const unsigned char *c = (const unsigned char *)params->v[i]; *c; c++) {
			if (*c == '\\')
				at += sprintf(at, "\\\\");
			else if (*c == '\n')
				at += sprintf(at, "\\n");
			else if (*c < 0x20 || *c == 0x7f)
				at += sprintf(at, "\\x%02x", *c);
			else
				*at++ = (char)*c;
		}
		*at++ = '\n';
	}
	*at = '\0';
	return out;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (size_t k; buf && (k = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
		len += k;
		if (cap - len < 2) {
			char *more = realloc(buf, cap *= 2);
			if (!more)
				free(buf);
			buf = more;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

static int spit(const char *dir, const char *name, const char *ext, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/seatbelt_%s.%s", dir, name, ext);
	FILE *f = fopen(path, "wb");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

static int emit(const char *dir)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(sessions); i++) {
		ows__sb_profile p;
		ows_error err = {0};
		if (ows__sb_render(&sessions[i].spec, &p, &err) < 0) {
			fprintf(stderr, "%s: %s\n", sessions[i].name, err.what);
			return 1;
		}
		char *params = escape_params(&p.params);
		int rc = spit(dir, sessions[i].name, "sb", p.text) |
			 spit(dir, sessions[i].name, "params", params);
		free(params);
		ows__sb_profile_free(&p);
		if (rc)
			return 1;
	}
	return 0;
}

static void golden(const session *s)
{
	ows__sb_profile p;
	ows_error err = {0};
	char path[256];
	int rc = ows__sb_render(&s->spec, &p, &err);
	if (!is_int(rc, 0, "%s: renders (%s)", s->name, rc ? err.what : "ok")) {
		ows__sb_profile_free(&p);
		return;
	}
	snprintf(path, sizeof path, "test/golden/seatbelt_%s.sb", s->name);
	char *want = slurp(path);
	is_str(p.text, want, "%s: the text is %s", s->name, path);
	free(want);
	snprintf(path, sizeof path, "test/golden/seatbelt_%s.params", s->name);
	want = slurp(path);
	char *got = escape_params(&p.params);
	is_str(got, want, "%s: the parameters are %s", s->name, path);
	diag("%s: %zu bytes of profile, %zu parameters", s->name, strlen(p.text), p.params.len);
	free(got);
	free(want);
	ows__sb_profile_free(&p);
}

/* A folder's bytes reach the profile as a parameter only: the text is the plain one's. */
static void quote_changes_params_only(void)
{
	ows__sb_profile plain, odd;
	int rc = ows__sb_render(&sessions[0].spec, &plain, NULL);
	rc |= ows__sb_render(&sessions[1].spec, &odd, NULL);
	ok(rc == 0 && strcmp(plain.text, odd.text) == 0,
	   "a folder named with a quote, a newline and a parenthesis renders the same text");
	ok(rc == 0 && plain.params.len > 0 && strcmp(odd.params.v[0], "PATH_0=" HOME "/pro\"j\n(e)ct") == 0,
	   "... and its name whole, unescaped, in its parameter");
	ok(rc == 0 && !strstr(odd.text, HOME) && !strstr(odd.text, PRIV),
	   "no path of the spec is in the text");
	ows__sb_profile_free(&plain);
	ows__sb_profile_free(&odd);
}

static void refuses(const char *desc, ows__sb_spec spec, const char *in_message)
{
	ows__sb_profile p;
	ows_error err = {0};
	int rc = ows__sb_render(&spec, &p, &err);
	ok(rc == OWS_EINVAL && p.text == NULL && p.params.len == 0 &&
	   strstr(err.what, in_message) != NULL, "refused: %s", desc);
	if (rc != OWS_EINVAL || !strstr(err.what, in_message))
		diag("rc %d, message \"%s\", wanted \"%s\"", rc, err.what, in_message);
	ows__sb_profile_free(&p);
}

static void refusals(void)
{
	const ows__sb_spec base = sessions[0].spec;
	ows__sb_spec s;
	ows__sb_path bad[1];

	bad[0] = (ows__sb_path){ "Users/owstest/project", true, false };
	s = base, s.paths = bad;
	refuses("a relative path", s, "not absolute");
	bad[0].path = "/";
	refuses("the root", s, "is the root");
	bad[0].path = HOME "/project/../.ssh";
	refuses("a \"..\" component", s, "component");
	bad[0].path = HOME "/./project";
	refuses("a \".\" component", s, "component");
	bad[0].path = HOME "//project";
	refuses("an empty component", s, "component");
	bad[0].path = HOME "/project/";
	refuses("a trailing slash", s, "component");
	bad[0].path = "";
	refuses("an empty path", s, "missing");
	bad[0].path = "/tmp/work";
	refuses("a path under the /tmp link", s, "symbolic link /tmp");
	bad[0].path = "/var/folders/xy";
	refuses("a path under the /var link", s, "symbolic link /var");
	bad[0].path = "/tmpfoo/work"; /* a sibling of the link is a path like any other */
	ok(ows__sb_render(&s, &(ows__sb_profile){0}, NULL) == 0, "a sibling of /tmp is accepted");

	s = base, s.private_dir = "";
	refuses("an empty private folder", s, "private folder is missing");
	s = base, s.private_dir = NULL;
	refuses("no private folder", s, "private folder is missing");
	s = base, s.private_dir = "/tmp/owsandbox-501/s-0123abcd";
	refuses("a private folder named through /tmp", s, "symbolic link /tmp");
	s = base, s.marker_deny = NULL;
	refuses("no deny marker", s, "deny marker is missing");
	s = base, s.marker_allow = "relative";
	refuses("a relative allow marker", s, "not absolute");

	s = sessions[2].spec, s.proxy_port = 0;
	refuses("port 0 in allowlist", s, "proxy port 0");
	s.proxy_port = 65536;
	refuses("port 65536 in allowlist", s, "proxy port 65536");
	s = base, s.net = OWS_NET_DEFAULT;
	refuses("the unresolved default network mode", s, "network mode");

	static const ows__sb_path outside[] = { { HOME "/.bashrc", false, true } };
	s = base, s.guarded = outside, s.nguarded = 1;
	refuses("a guarded name outside every writable folder", s, "not inside a writable");
	static const ows__sb_path sibling[] = { { HOME "/project2/.git/config", false, true } };
	s.guarded = sibling;
	refuses("a guarded name in a sibling that shares a prefix", s, "not inside a writable");
	static const ows__sb_path itself[] = { { HOME "/project", false, false } };
	s.guarded = itself;
	refuses("the writable folder itself guarded", s, "not inside a writable");

	ok(ows__sb_render(NULL, &(ows__sb_profile){0}, NULL) == OWS_EINVAL, "refused: no spec");
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--emit") == 0)
		return emit(argv[2]);
	for (size_t i = 0; i < OWS__ARRAY_LEN(sessions); i++)
		golden(&sessions[i]);
	quote_changes_params_only();
	refusals();
	return done_testing();
}
