/*
 * The session policy: built by setters or parsed from JSON, always validated.  Says what
 * a session may have; whether this machine can give it is the provider's to say.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "proxy/proxy.h"
#include "platform.h"

static const char *const limit_keys[OWS__LIMIT_MAX] = {
	[OWS_LIMIT_MEMORY_BYTES] = "memory_mb",
	[OWS_LIMIT_PROCESSES] = "processes",
	[OWS_LIMIT_CPU_PERCENT] = "cpu_percent",
	[OWS_LIMIT_WALL_SECONDS] = "wall_seconds",
};

const char *ows__limit_key(ows_limit which)
{
	if ((int)which <= 0 || (int)which >= OWS__LIMIT_MAX)
		return "?";
	return limit_keys[which];
}

int ows_policy_new(ows_policy **out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "ows_policy_new: out is NULL");
	*out = ows__calloc(1, sizeof(**out), err);
	return *out ? 0 : OWS_ENOMEM;
}

void ows_policy_free(ows_policy *p)
{
	if (!p)
		return;
	free(p->provider);
	for (size_t i = 0; i < p->nfolders; i++)
		free(p->folders[i].path);
	free(p->folders);
	ows__strv_free(&p->hosts);
	ows__strv_free(&p->env);
	free(p->run_as);
	ows__strv_free(&p->credentials);
	ows__strv_free(&p->toolchains);
	free(p);
}

int ows_policy_set_provider(ows_policy *p, const char *name, ows_error *err)
{
	/* Every platform's providers: a name of another platform's is known, and session
	 * open refuses it as not available here (ows__provider_find). */
	static const char *const known[] = {"landlock", "account", "direct", "openshell",
					    "seatbelt", "windows", "appcontainer"};
	if (!p)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy is NULL");
	if (name) {
		size_t i;
		for (i = 0; i < OWS__ARRAY_LEN(known); i++)
			if (strcmp(name, known[i]) == 0)
				break;
		if (i == OWS__ARRAY_LEN(known)) {
			/* The hint names this platform's: another's would only be refused at open. */
			char hint[160] = "use one of:";
			const char *sep = " ";
			for (i = 0; i < OWS__ARRAY_LEN(known); i++)
				if (ows__provider_find(known[i])) {
					size_t n = strlen(hint);
					snprintf(hint + n, sizeof(hint) - n, "%s%s", sep, known[i]);
					sep = ", ";
				}
			return ows__fail(err, OWS_EINVAL, 0, name, hint, "unknown provider");
		}
	}
	char *copy = NULL;
	if (name && !(copy = ows__strdup(name, err)))
		return OWS_ENOMEM;
	free(p->provider);
	p->provider = copy;
	return 0;
}

int ows__check_folder_vs_home(const char *folder, const char *home, ows_error *err)
{
	if (ows__plat_is_root(folder))
		return ows__fail(err, OWS_EINVAL, 0, folder,
				 "name the project folder itself, not the whole file system",
				 "the root folder cannot be a session folder");
	if (!home || !*home || ows__plat_is_root(home))
		return 0;
	size_t n = strlen(folder);
	if (strcmp(folder, home) == 0)
		return ows__fail(err, OWS_EINVAL, 0, folder,
				 "name a folder inside your home, such as the project you work on",
				 "your home folder cannot be a session folder");
	if (strncmp(home, folder, n) == 0 && ows__plat_is_sep(home[n]))
		return ows__fail(err, OWS_EINVAL, 0, folder,
				 "name a folder inside your home, such as the project you work on",
				 "this folder contains your home folder");
	return 0;
}

/* The caller's home, canonical; NULL when it has none that exists. */
static char *caller_home(void)
{
	return ows__plat_home_dir();
}

int ows_policy_add_folder(ows_policy *p, const char *path, ows_access access, ows_error *err)
{
	if (!p || !path)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy or path is NULL");
	if (access != OWS_ACCESS_RO && access != OWS_ACCESS_RW)
		return ows__fail(err, OWS_EINVAL, 0, path, "use read-only or read-write",
				 "unknown access for folder");
	if (!ows__plat_path_is_absolute(path))
		return ows__fail(err, OWS_EINVAL, 0, path, "give the folder as an absolute path",
				 "session folder is not an absolute path");
	char link[4096];
	if (ows__plat_untrusted_link(path, link, sizeof(link))) {
		char *target = ows__plat_realpath(path);
		int rc = ows__fail(err, OWS_EINVAL, 0, path,
				   "name the folder by its own path, after checking it is the one "
				   "you mean",
				   "the folder is reached through a symbolic link (%s -> %s), which "
				   "an agent may have left", link, target ? target : "?");
		free(target);
		return rc;
	}
	char *real = ows__plat_realpath(path);
	if (!real) {
		int e = errno;
		if (e == ENOMEM)
			return ows__fail(err, OWS_ENOMEM, e, path, NULL, "out of memory");
		return ows__fail(err, OWS_EINVAL, e, path, "create the folder first, or fix the path",
				 "session folder does not exist or cannot be reached: %s",
				 strerror(e));
	}
	if (!ows__plat_is_dir(real)) {
		free(real);
		return ows__fail(err, OWS_EINVAL, 0, path, "name a folder, not a file",
				 "session folder is not a folder");
	}
	char *home = caller_home();
	int rc = ows__check_folder_vs_home(real, home, err);
	free(home);
	if (rc < 0) {
		free(real);
		return rc;
	}
	for (size_t i = 0; i < p->nfolders; i++)
		if (strcmp(p->folders[i].path, real) == 0) {
			/* The same folder twice: the later access wins, as with flags. */
			p->folders[i].access = access;
			free(real);
			return 0;
		}
	ows__folder *f = realloc(p->folders, (p->nfolders + 1) * sizeof(*f));
	if (!f) {
		free(real);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	p->folders = f;
	p->folders[p->nfolders].path = real;
	p->folders[p->nfolders].access = access;
	p->nfolders++;
	return 0;
}

int ows_policy_set_network(ows_policy *p, ows_net net, ows_error *err)
{
	if (!p)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy is NULL");
	if (net < OWS_NET_DEFAULT || net > OWS_NET_ALLOWLIST)
		return ows__fail(err, OWS_EINVAL, 0, "network", "use none, open or allowlist",
				 "unknown network mode");
	p->net = net;
	return 0;
}

int ows_policy_add_host(ows_policy *p, const char *pattern, ows_error *err)
{
	if (!p || !pattern || !*pattern)
		return ows__fail(err, OWS_EINVAL, 0, "hosts", "give a host such as github.com:443",
				 "empty host pattern");
	int rc = ows__site_check(pattern, err);
	return rc < 0 ? rc : ows__strv_push(&p->hosts, pattern, err);
}

int ows_policy_add_hosts_file(ows_policy *p, const char *path, ows_error *err)
{
	if (!p || !path)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy or path is NULL");
	ows__strv sites = {0};
	int rc = ows__sites_file_read(path, &sites, err);
	for (size_t i = 0; rc == 0 && i < sites.len; i++)
		rc = ows_policy_add_host(p, sites.v[i], err);
	ows__strv_free(&sites);
	return rc;
}

int ows_policy_set_env(ows_policy *p, const char *name, const char *value, ows_error *err)
{
	if (!p || !name || !value)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy, name or value is NULL");
	size_t len = strlen(name);
	if (!ows__env_name_is_valid(name, len))
		return ows__fail(err, OWS_EINVAL, 0, name,
				 "use letters, digits and '_', not starting with a digit",
				 "invalid environment variable name");
	if (ows__env_name_is_secret(name, len))
		return ows__fail(err, OWS_EINVAL, 0, name,
				 "share credentials on purpose through the credential catalog",
				 "a variable whose name says it holds a secret is never passed in");
	for (size_t i = 0; i < p->env.len; i++)
		if (strncmp(p->env.v[i], name, len) == 0 && p->env.v[i][len] == '=') {
			char *nv = ows__asprintf(err, "%s=%s", name, value);
			if (!nv)
				return OWS_ENOMEM;
			free(p->env.v[i]);
			p->env.v[i] = nv;
			return 0;
		}
	return ows__strv_pushf(&p->env, err, "%s=%s", name, value);
}

int ows_policy_set_limit(ows_policy *p, ows_limit which, uint64_t value, ows_error *err)
{
	if (!p)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy is NULL");
	if ((int)which <= 0 || (int)which >= OWS__LIMIT_MAX)
		return ows__fail(err, OWS_EINVAL, 0, "limits", NULL, "unknown limit");
	if (value == 0)
		return ows__fail(err, OWS_EINVAL, 0, ows__limit_key(which),
				 "give a positive number, or leave the limit out", "limit of zero");
	p->has_limit[which] = true;
	p->limit[which] = value;
	return 0;
}

int ows_policy_set_run_as(ows_policy *p, const char *user, ows_error *err)
{
	if (!p)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "policy is NULL");
	char *copy = NULL;
	if (user && !(copy = ows__strdup(user, err)))
		return OWS_ENOMEM;
	free(p->run_as);
	p->run_as = copy;
	return 0;
}

int ows_policy_add_credential(ows_policy *p, const char *name, ows_error *err)
{
	if (!p || !name || !ows__name_is_safe(name))
		return ows__fail(err, OWS_EINVAL, 0, name ? name : "", "run `owsbx credentials` for the names",
				 "not a credential name");
	return ows__strv_push(&p->credentials, name, err);
}

int ows_policy_add_toolchain(ows_policy *p, const char *path, ows_error *err)
{
	if (!p || !path || (path[0] != '/' && !ows__home_path_is_safe(path)))
		return ows__fail(err, OWS_EINVAL, 0, path ? path : "",
				 "name a folder under the home, such as .cargo",
				 "not a toolchain folder");
	return ows__strv_push(&p->toolchains, path, err);
}

/* ------------------------------------------------------------------ JSON */

static int type_error(ows_error *err, const char *key, const char *want)
{
	return ows__fail(err, OWS_EINVAL, 0, key, "fix the policy document",
			 "policy key has the wrong type: want %s", want);
}

static int parse_folders(ows_policy *p, json_t *arr, ows_error *err)
{
	if (!json_is_array(arr))
		return type_error(err, "folders", "an array of {\"path\", \"access\"}");
	size_t i;
	json_t *item;
	json_array_foreach(arr, i, item) {
		if (!json_is_object(item))
			return type_error(err, "folders[]", "an object {\"path\", \"access\"}");
		const char *path = NULL, *access = "rw";
		const char *key;
		json_t *val;
		json_object_foreach(item, key, val) {
			if (strcmp(key, "path") == 0 && json_is_string(val))
				path = json_string_value(val);
			else if (strcmp(key, "access") == 0 && json_is_string(val))
				access = json_string_value(val);
			else
				return ows__fail(err, OWS_EINVAL, 0, key,
						 "a folder has only \"path\" and \"access\"",
						 "unknown or mistyped key in folders[]");
		}
		if (!path)
			return ows__fail(err, OWS_EINVAL, 0, "folders[].path",
					 "give each folder a \"path\"", "folder without a path");
		ows_access a;
		if (strcmp(access, "rw") == 0)
			a = OWS_ACCESS_RW;
		else if (strcmp(access, "ro") == 0)
			a = OWS_ACCESS_RO;
		else
			return ows__fail(err, OWS_EINVAL, 0, access, "use \"rw\" or \"ro\"",
					 "unknown folder access");
		int rc = ows_policy_add_folder(p, path, a, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_strings(json_t *arr, const char *key, ows_policy *p,
			 int (*add)(ows_policy *, const char *, ows_error *), ows_error *err)
{
	if (!json_is_array(arr))
		return type_error(err, key, "an array of strings");
	size_t i;
	json_t *item;
	json_array_foreach(arr, i, item) {
		if (!json_is_string(item))
			return type_error(err, key, "an array of strings");
		int rc = add(p, json_string_value(item), err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_limits(ows_policy *p, json_t *obj, ows_error *err)
{
	if (!json_is_object(obj))
		return type_error(err, "limits", "an object");
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		ows_limit which = 0;
		for (int i = 1; i < OWS__LIMIT_MAX; i++)
			if (strcmp(key, limit_keys[i]) == 0)
				which = (ows_limit)i;
		if (!which)
			return ows__fail(err, OWS_EINVAL, 0, key,
					 "limits are memory_mb, processes, cpu_percent, wall_seconds",
					 "unknown limit");
		if (!json_is_integer(val) || json_integer_value(val) <= 0)
			return type_error(err, key, "a positive integer");
		uint64_t v = (uint64_t)json_integer_value(val);
		if (which == OWS_LIMIT_MEMORY_BYTES) {
			if (v > (UINT64_MAX >> 20))
				return type_error(err, key, "a smaller number");
			v <<= 20;
		}
		int rc = ows_policy_set_limit(p, which, v, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_env(ows_policy *p, json_t *obj, ows_error *err)
{
	if (!json_is_object(obj))
		return type_error(err, "env", "an object of strings");
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		if (!json_is_string(val))
			return type_error(err, key, "a string");
		int rc = ows_policy_set_env(p, key, json_string_value(val), err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_document(ows_policy *p, json_t *root, ows_error *err)
{
	if (!json_is_object(root))
		return type_error(err, "(document)", "a JSON object");
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val) {
		int rc;
		if (strcmp(key, "provider") == 0) {
			if (!json_is_string(val))
				return type_error(err, key, "a string");
			rc = ows_policy_set_provider(p, json_string_value(val), err);
		} else if (strcmp(key, "network") == 0) {
			ows_net net;
			if (!json_is_string(val))
				return type_error(err, key, "a string");
			if (ows_net_from_name(json_string_value(val), &net) != 0)
				return ows__fail(err, OWS_EINVAL, 0, json_string_value(val),
						 "use none, open or allowlist", "unknown network mode");
			rc = ows_policy_set_network(p, net, err);
		} else if (strcmp(key, "folders") == 0) {
			rc = parse_folders(p, val, err);
		} else if (strcmp(key, "hosts") == 0) {
			rc = parse_strings(val, key, p, ows_policy_add_host, err);
		} else if (strcmp(key, "env") == 0) {
			rc = parse_env(p, val, err);
		} else if (strcmp(key, "limits") == 0) {
			rc = parse_limits(p, val, err);
		} else if (strcmp(key, "run_as") == 0) {
			if (!json_is_string(val))
				return type_error(err, key, "a string");
			rc = ows_policy_set_run_as(p, json_string_value(val), err);
		} else if (strcmp(key, "credentials") == 0) {
			rc = parse_strings(val, key, p, ows_policy_add_credential, err);
		} else if (strcmp(key, "toolchains") == 0) {
			rc = parse_strings(val, key, p, ows_policy_add_toolchain, err);
		} else {
			return ows__fail(err, OWS_EINVAL, 0, key,
					 "known keys: provider, network, folders, hosts, env, limits, "
					 "run_as, credentials, toolchains",
					 "unknown key in policy");
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ows_policy_from_json(const char *json, size_t len, ows_policy **out, ows_error *err)
{
	if (!json || !out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "json or out is NULL");
	*out = NULL;
	if (len == (size_t)-1)
		len = strlen(json);
	json_error_t jerr;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		char where[64];
		snprintf(where, sizeof(where), "line %d, column %d", jerr.line, jerr.column);
		return ows__fail(err, OWS_EINVAL, 0, where, "fix the policy document",
				 "policy is not valid JSON: %s", jerr.text);
	}
	ows_policy *p;
	int rc = ows_policy_new(&p, err);
	if (rc == 0)
		rc = parse_document(p, root, err);
	json_decref(root);
	if (rc < 0) {
		ows_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int ows_policy_load_file(const char *path, ows_policy **out, ows_error *err)
{
	if (!path || !out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "path or out is NULL");
	*out = NULL;
	FILE *f = fopen(path, ows__plat_fopen_read);
	if (!f)
		return ows__fail(err, OWS_EINVAL, errno, path, "check the path and its permissions",
				 "cannot read the policy file: %s", strerror(errno));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > (16u << 20)) {
				free(buf);
				fclose(f);
				return ows__fail(err, OWS_EINVAL, 0, path, "keep policies under 16 MiB",
						 "policy file too large");
			}
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return ows__fail(err, OWS_EINVAL, EIO, path, "check the file", "cannot read the policy file");
	}
	int rc = ows_policy_from_json(buf, len, out, err);
	free(buf);
	if (rc < 0 && err && err->where[0] && strncmp(err->where, "line ", 5) == 0) {
		char where[sizeof(err->where)];
		snprintf(where, sizeof(where), "%.200s, %.200s", path, err->where);
		memcpy(err->where, where, sizeof(where));
	}
	return rc;
}

static json_t *strv_json(const ows__strv *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < sv->len; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

char *ows_policy_to_json(const ows_policy *p)
{
	if (!p)
		return NULL;
	json_t *root = json_object();
	if (!root)
		return NULL;
	if (p->provider)
		json_object_set_new(root, "provider", json_string(p->provider));
	if (p->net != OWS_NET_DEFAULT)
		json_object_set_new(root, "network", json_string(ows__net_name(p->net)));
	json_t *folders = json_array();
	for (size_t i = 0; folders && i < p->nfolders; i++)
		json_array_append_new(folders,
				      json_pack("{s:s, s:s}", "path", p->folders[i].path, "access",
						p->folders[i].access == OWS_ACCESS_RW ? "rw" : "ro"));
	json_object_set_new(root, "folders", folders);
	if (p->hosts.len)
		json_object_set_new(root, "hosts", strv_json(&p->hosts));
	if (p->env.len) {
		json_t *env = json_object();
		for (size_t i = 0; env && i < p->env.len; i++) {
			const char *eq = strchr(p->env.v[i], '=');
			char name[256];
			snprintf(name, sizeof(name), "%.*s", (int)(eq - p->env.v[i]), p->env.v[i]);
			json_object_set_new(env, name, json_string(eq + 1));
		}
		json_object_set_new(root, "env", env);
	}
	json_t *limits = NULL;
	for (int i = 1; i < OWS__LIMIT_MAX; i++) {
		if (!p->has_limit[i])
			continue;
		if (!limits)
			limits = json_object();
		uint64_t v = p->limit[i];
		if (i == OWS_LIMIT_MEMORY_BYTES)
			v >>= 20;
		json_object_set_new(limits, limit_keys[i], json_integer((json_int_t)v));
	}
	if (limits)
		json_object_set_new(root, "limits", limits);
	if (p->run_as)
		json_object_set_new(root, "run_as", json_string(p->run_as));
	char *s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}
