/* The policy: parsing, validation, and what it refuses. */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

static int parse(const char *json, ows_policy **p, ows_error *err)
{
	ows_error_clear(err);
	return ows_policy_from_json(json, (size_t)-1, p, err);
}

int main(void)
{
	ows_error err;
	ows_policy *p = NULL;
	char dir[] = "/tmp/owstest-policy-XXXXXX";
	ok(mkdtemp(dir) != NULL, "made a folder to name");
	char doc[1024];

	snprintf(doc, sizeof(doc),
		 "{\"provider\":\"landlock\",\"network\":\"open\",\"folders\":[{\"path\":\"%s\","
		 "\"access\":\"ro\"}],\"env\":{\"EDITOR\":\"vi\"},\"limits\":{\"wall_seconds\":5,"
		 "\"memory_mb\":64},\"hosts\":[\"github.com:443\"]}",
		 dir);
	is_int(parse(doc, &p, &err), 0, "a full policy parses");
	is_int((int)p->nfolders, 1, "one folder");
	is_int(p->folders[0].access, OWS_ACCESS_RO, "read-only as asked");
	is_int(p->net, OWS_NET_OPEN, "network open");
	is_int((long long)p->limit[OWS_LIMIT_MEMORY_BYTES], 64ll << 20, "memory_mb is kept in bytes");
	char *out = ows_policy_to_json(p);
	ows_policy *again = NULL;
	is_int(parse(out, &again, &err), 0, "what it prints parses again");
	char *out2 = ows_policy_to_json(again);
	is_str(out2, out, "and prints the same");
	free(out);
	free(out2);
	ows_policy_free(again);
	ows_policy_free(p);

	is_int(parse("{\"hosts\":[\"@code-hosting\",\"!gist.github.com\",\"!*.example.com:22\"]}", &p,
		     &err), 0, "deny entries in a policy's hosts parse");
	out = ows_policy_to_json(p);
	ok(out && strstr(out, "\"!gist.github.com\",\"!*.example.com:22\""), "and are kept with their '!'");
	free(out);
	ows_policy_free(p);
	is_int(parse("{\"hosts\":[\"!git.corp:443+private\"]}", &p, &err), OWS_EINVAL,
	       "a deny entry with +private is refused");
	ok(strstr(err.what, "+private") != NULL, "by name (%s)", err.what);

	is_int(parse("{\"folders\":[], \"colour\":1}", &p, &err), OWS_EINVAL, "unknown key refused");
	is_str(err.where, "colour", "the error names the key");
	ok(p == NULL, "nothing returned on error");
	is_int(parse("{\"network\":\"sometimes\"}", &p, &err), OWS_EINVAL, "unknown network refused");
	is_int(parse("{\"folders\":[{\"path\":\"relative/dir\"}]}", &p, &err), OWS_EINVAL,
	       "relative folder refused");
	ok(strstr(err.hint, "absolute") != NULL, "the hint says to make it absolute");
	is_int(parse("{\"folders\":[{\"path\":\"/nonexistent/owstest\"}]}", &p, &err), OWS_EINVAL,
	       "missing folder refused");
	is_int(parse("{\"folders\":[{\"path\":\"/\"}]}", &p, &err), OWS_EINVAL, "/ refused");
	is_int(parse("{\"folders\":[{\"path\":\"/tmp\",\"access\":\"rwx\"}]}", &p, &err), OWS_EINVAL,
	       "unknown access refused");
	is_int(parse("{\"env\":{\"GITHUB_TOKEN\":\"x\"}}", &p, &err), OWS_EINVAL,
	       "a secret variable is refused");
	is_int(parse("{\"limits\":{\"memory_mb\":0}}", &p, &err), OWS_EINVAL, "a zero limit refused");
	is_int(parse("{\"limits\":{\"cpu\":1}}", &p, &err), OWS_EINVAL, "unknown limit refused");
	is_int(parse("[1,2]", &p, &err), OWS_EINVAL, "a document that is not an object refused");
	is_int(parse("{\"provider\":\"magic\"}", &p, &err), OWS_EINVAL, "unknown provider refused");
	/* Every platform's names are known; another platform's is refused where it is used. */
	is_int(parse("{\"provider\":\"seatbelt\"}", &p, &err), 0, "macOS's provider name is known");
	ows_policy_free(p);
	is_int(parse("{\"provider\":\"windows\"}", &p, &err), 0, "Windows's provider name is known");
	ows_policy_free(p);
	p = NULL;
	ows_setup_options so;
	ows_setup_options_init(&so);
	so.provider = "seatbelt";
	ows_error_clear(&err);
	is_int(ows_machine_setup(NULL, &so, &err), OWS_EUNSUPPORTED,
	       "setup refuses a provider this platform lacks, changing nothing");
	is_int(parse("{\"a\":1,\"a\":2}", &p, &err), OWS_EINVAL, "duplicate keys refused");
	is_int(parse("{\"folders\":", &p, &err), OWS_EINVAL, "truncated JSON refused");
	ok(strncmp(err.where, "line ", 5) == 0, "and the error says where");

	/* The home itself, and a folder that contains it. */
	struct passwd *pw = getpwuid(getuid());
	char *home = pw ? realpath(pw->pw_dir, NULL) : NULL;
	if (home && strcmp(home, "/") != 0) {
		ows_policy_new(&p, NULL);
		ows_error_clear(&err);
		is_int(ows_policy_add_folder(p, home, OWS_ACCESS_RW, &err), OWS_EINVAL, "home refused");
		char parent[4096];
		snprintf(parent, sizeof(parent), "%s", home);
		*strrchr(parent, '/') = '\0';
		if (parent[0]) {
			ows_error_clear(&err);
			is_int(ows_policy_add_folder(p, parent, OWS_ACCESS_RO, &err), OWS_EINVAL,
			       "a parent of home refused");
		} else {
			skip(1, "home is directly under /");
		}
		ows_policy_free(p);
	} else {
		skip(2, "this account has no home");
	}
	free(home);

	/* The same folder twice: the later access wins; a symlink resolves. */
	ows_policy_new(&p, NULL);
	char link[64];
	snprintf(link, sizeof(link), "%s-link", dir);
	ok(symlink(dir, link) == 0, "made a link to the folder");
	is_int(ows_policy_add_folder(p, dir, OWS_ACCESS_RW, NULL), 0, "rw");
	is_int(ows_policy_add_folder(p, link, OWS_ACCESS_RO, NULL), 0, "then ro through a link");
	is_int((int)p->nfolders, 1, "one folder, by its real path");
	is_int(p->folders[0].access, OWS_ACCESS_RO, "the later access wins");
	ows_policy_free(p);
	unlink(link);

	/* First error wins. */
	ows_policy_new(&p, NULL);
	ows_error_clear(&err);
	ows_policy_set_env(p, "1BAD", "x", &err);
	ows_policy_set_env(p, "MY_SECRET", "x", &err);
	is_str(err.where, "1BAD", "the first error is kept");
	is_int(ows_policy_set_env(p, "EDITOR", "vi", NULL), 0, "a NULL error struct is fine");
	ows_policy_free(p);

	rmdir(dir);
	return done_testing();
}
