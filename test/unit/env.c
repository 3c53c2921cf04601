/* The environment inside: minimal, and never a secret. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

static bool secret(const char *n)
{
	return ows__env_name_is_secret(n, strlen(n));
}

static const char *get(const ows__strv *sv, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < sv->len; i++)
		if (strncmp(sv->v[i], name, n) == 0 && sv->v[i][n] == '=')
			return sv->v[i] + n + 1;
	return NULL;
}

int main(void)
{
	static const char *const secrets[] = {
		"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "MY_PASSWORD", "DB_PASSWD",
		"GOOGLE_APPLICATION_CREDENTIALS", "HTTP_AUTH", "SESSION_COOKIE", "XDG_SESSION_ID",
		"SSH_AUTH_SOCK", "apikey", "npm_config__authToken", "KEYCHAIN",
	};
	static const char *const plain[] = {
		"PATH", "HOME", "LANG", "TERM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_CONFIG_KEY_0",
		"GIT_CONFIG_KEY_12", "EDITOR",
	};
	for (size_t i = 0; i < sizeof(secrets) / sizeof(*secrets); i++)
		ok(secret(secrets[i]), "%s says it holds a secret", secrets[i]);
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++)
		ok(!secret(plain[i]), "%s does not", plain[i]);
	ok(secret("GIT_CONFIG_KEY_X"), "GIT_CONFIG_KEY_ with no number is still a KEY");
	ok(!ows__env_name_is_valid("1A", 2), "a name may not start with a digit");
	ok(!ows__env_name_is_valid("A-B", 3), "nor hold a dash");

	const char *host[] = {"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x", "LC_ALL=C", "LANG=C.UTF-8",
			      "SSH_AUTH_SOCK=/tmp/agent", "DISPLAY=:0", "HOME=/home/person",
			      "AWS_PROFILE=prod", NULL};
	ows_policy *p;
	ows_policy_new(&p, NULL);
	char dir[] = "/tmp/owstest-env-XXXXXX";
	ok(mkdtemp(dir) != NULL, "made a session folder");
	ows_policy_add_folder(p, dir, OWS_ACCESS_RW, NULL);
	ows_policy_set_env(p, "EDITOR", "vi", NULL);
	ows__env_spec spec = {.home = "/p/home", .tmp = "/p/tmp", .cache = "/p/cache",
			      .user = "person", .provider = "landlock", .host_env = host};
	ows__strv env = {0};
	is_int(ows__env_build(p, &spec, &env, NULL), 0, "built");
	is_str(get(&env, "PATH"), "/usr/bin:/bin", "PATH kept");
	is_str(get(&env, "LC_ALL"), "C", "locale kept");
	ok(!get(&env, "GITHUB_TOKEN"), "the token is absent");
	ok(!get(&env, "SSH_AUTH_SOCK"), "the agent socket is absent");
	ok(!get(&env, "DISPLAY"), "the display is absent (not in the short list)");
	ok(!get(&env, "AWS_PROFILE"), "other host variables are absent");
	is_str(get(&env, "HOME"), "/p/home", "HOME is the private home");
	is_str(get(&env, "TMPDIR"), "/p/tmp", "TMPDIR is private");
	is_str(get(&env, "PIP_CACHE_DIR"), "/p/cache/pip", "pip's cache is private");
	is_str(get(&env, "npm_config_cache"), "/p/cache/npm", "npm's cache is private");
	is_str(get(&env, "GOMODCACHE"), "/p/cache/go-mod", "Go's module cache is private");
	is_str(get(&env, "CARGO_HOME"), "/p/home/.cargo", "cargo's home is private");
	is_str(get(&env, "GIT_CONFIG_COUNT"), "1", "one git setting");
	is_str(get(&env, "GIT_CONFIG_KEY_0"), "safe.directory", "safe.directory");
	is_str(get(&env, "GIT_CONFIG_VALUE_0"), dir, "for the session folder");
	is_str(get(&env, "EDITOR"), "vi", "the policy's variable is set");

	const char *extra[] = {"NPM_TOKEN=x", "DEBUG=1", "bad name=x", "PATH=/opt/bin", NULL};
	ows__strv merged = {0};
	is_int(ows__env_merge(&env, extra, &merged, NULL), 0, "merged");
	ok(!get(&merged, "NPM_TOKEN"), "a secret extra is dropped");
	is_str(get(&merged, "DEBUG"), "1", "a plain extra is added");
	is_str(get(&merged, "PATH"), "/opt/bin", "an extra overrides");
	ows__strv_free(&merged);
	ows__strv_free(&env);
	ows_policy_free(p);
	rmdir(dir);
	return done_testing();
}
