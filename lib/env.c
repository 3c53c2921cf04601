/*
 * The environment a sandboxed command sees: minimal, built from scratch,
 * with every name that says it holds a secret left out.  Linked into the
 * setuid launcher: no jansson, no inih.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Words that mark a variable as holding a secret, matched anywhere in the name. */
static const char *const secret_words[] = {
	"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION",
};

bool ows__env_name_is_valid(const char *name, size_t len)
{
	if (len == 0 || len > 255 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

bool ows__env_name_is_secret(const char *name, size_t len)
{
	char up[256];
	if (len >= sizeof(up))
		return true; /* nobody needs a 256-character name; refuse rather than guess */
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		up[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
	}
	up[len] = '\0';
	if (strcmp(up, "SSH_AUTH_SOCK") == 0)
		return true;
	/* git's GIT_CONFIG_KEY_<n> names a setting, and the session needs it. */
	if (strncmp(up, "GIT_CONFIG_KEY_", 15) == 0 && len > 15 &&
	    strspn(up + 15, "0123456789") == len - 15)
		return false;
	/* "AUTHOR" (GIT_AUTHOR_NAME) names a person, not a secret. */
	for (char *a = strstr(up, "AUTHOR"); a; a = strstr(a, "AUTHOR"))
		memset(a, '_', 6);
	for (size_t i = 0; i < OWS__ARRAY_LEN(secret_words); i++)
		if (strstr(up, secret_words[i]))
			return true;
	return false;
}

/* Host variables a command may keep: the locale, the terminal, the time zone. */
static bool host_var_kept(const char *entry, size_t name_len)
{
	static const char *const kept[] = {
		"PATH", "LANG", "LANGUAGE", "TERM", "COLORTERM", "TZ", "NO_COLOR", "SHELL",
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(kept); i++)
		if (strlen(kept[i]) == name_len && strncmp(entry, kept[i], name_len) == 0)
			return true;
	return name_len > 3 && strncmp(entry, "LC_", 3) == 0;
}

static const char *getenv_in(const ows__strv *sv, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < sv->len; i++)
		if (strncmp(sv->v[i], name, n) == 0 && sv->v[i][n] == '=')
			return sv->v[i] + n + 1;
	return NULL;
}

/* Replaces NAME=... in `sv` or appends it. */
static int env_set(ows__strv *sv, const char *name, const char *value, ows_error *err)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < sv->len; i++)
		if (strncmp(sv->v[i], name, n) == 0 && sv->v[i][n] == '=') {
			char *nv = ows__asprintf(err, "%s=%s", name, value);
			if (!nv)
				return OWS_ENOMEM;
			free(sv->v[i]);
			sv->v[i] = nv;
			return 0;
		}
	return ows__strv_pushf(sv, err, "%s=%s", name, value);
}

int ows__env_set_entry(ows__strv *sv, const char *entry, ows_error *err)
{
	const char *eq = strchr(entry, '=');
	if (!eq)
		return 0;
	char name[256];
	size_t n = (size_t)(eq - entry);
	if (n >= sizeof(name))
		return 0;
	memcpy(name, entry, n);
	name[n] = '\0';
	return env_set(sv, name, eq + 1, err);
}

int ows__env_build(const ows_policy *policy, const ows__env_spec *spec, ows__strv *out,
		   ows_error *err)
{
	ows__strv sv = {0};
	int rc = 0;

	for (const char *const *e = spec->host_env; e && *e && rc == 0; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		size_t n = (size_t)(eq - *e);
		if (host_var_kept(*e, n) && !ows__env_name_is_secret(*e, n))
			rc = ows__strv_push(&sv, *e, err);
	}
	struct { const char *name; const char *base; const char *leaf; } vars[] = {
		{"HOME", spec->home, NULL},
		{"TMPDIR", spec->tmp, NULL},
		{"XDG_CACHE_HOME", spec->cache, NULL},
		{"XDG_CONFIG_HOME", spec->home, ".config"},
		{"XDG_DATA_HOME", spec->home, ".local/share"},
		{"XDG_STATE_HOME", spec->home, ".local/state"},
		{"npm_config_cache", spec->cache, "npm"},
		{"PIP_CACHE_DIR", spec->cache, "pip"},
		{"UV_CACHE_DIR", spec->cache, "uv"},
		{"GOCACHE", spec->cache, "go-build"},
		{"GOMODCACHE", spec->cache, "go-mod"},
		{"GOPATH", spec->home, "go"},
		{"YARN_CACHE_FOLDER", spec->cache, "yarn"},
		{"CARGO_HOME", spec->home, ".cargo"},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(vars) && rc == 0; i++) {
		if (!vars[i].base)
			continue;
		if (vars[i].leaf) {
			char *v = ows__asprintf(err, "%s/%s", vars[i].base, vars[i].leaf);
			if (!v) {
				rc = OWS_ENOMEM;
				break;
			}
			rc = env_set(&sv, vars[i].name, v, err);
			free(v);
		} else {
			rc = env_set(&sv, vars[i].name, vars[i].base, err);
		}
	}
	if (rc == 0 && !getenv_in(&sv, "PATH"))
		rc = env_set(&sv, "PATH", "/usr/local/bin:/usr/bin:/bin", err);
	if (rc == 0 && spec->user) {
		rc = env_set(&sv, "USER", spec->user, err);
		if (rc == 0)
			rc = env_set(&sv, "LOGNAME", spec->user, err);
	}
	if (rc == 0 && spec->provider)
		rc = env_set(&sv, "OWSANDBOX_PROVIDER", spec->provider, err);

	/* git refuses a repository owned by another account unless told it is safe. */
	if (rc == 0 && policy->nfolders) {
		char count[32];
		snprintf(count, sizeof(count), "%zu", policy->nfolders);
		rc = env_set(&sv, "GIT_CONFIG_COUNT", count, err);
		for (size_t i = 0; i < policy->nfolders && rc == 0; i++) {
			char name[64];
			snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%zu", i);
			rc = env_set(&sv, name, "safe.directory", err);
			snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%zu", i);
			if (rc == 0)
				rc = env_set(&sv, name, policy->folders[i].path, err);
		}
	}
	for (size_t i = 0; i < policy->env.len && rc == 0; i++)
		rc = ows__env_set_entry(&sv, policy->env.v[i], err);
	if (rc < 0) {
		ows__strv_free(&sv);
		return rc;
	}
	*out = sv;
	return 0;
}

int ows__env_merge(const ows__strv *base, const char *const *extra, ows__strv *out,
		   ows_error *err)
{
	ows__strv sv = {0};
	int rc = 0;
	for (size_t i = 0; i < base->len && rc == 0; i++)
		rc = ows__strv_push(&sv, base->v[i], err);
	for (const char *const *e = extra; e && *e && rc == 0; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		size_t n = (size_t)(eq - *e);
		if (!ows__env_name_is_valid(*e, n) || ows__env_name_is_secret(*e, n))
			continue;
		rc = ows__env_set_entry(&sv, *e, err);
	}
	if (rc < 0) {
		ows__strv_free(&sv);
		return rc;
	}
	*out = sv;
	return 0;
}
