/*
 * The machine's settings, an INI file read with inih.  Per machine on
 * purpose: the path is fixed unless the host names another (tests do).
 *
 *   [sandbox]
 *   provider = landlock          ; landlock | account | direct
 *   network = none               ; none | open | allowlist
 *   hosts = github.com:443, pypi.org
 *   deny = gist.github.com       ; refused even where hosts, a group or a login allow it (a
 *                                ; deny wins); no port: every port; as hosts = !gist.github.com
 *   private_root = /var/tmp      ; private folders on disk here (default: the sandbox's own /tmp)
 *   state_dir = /var/lib/owsandbox
 *   open_without_scopes = refuse ; refuse | partial: `open` where Landlock has no scopes
 *
 *   [landlock]
 *   root_runs_as = nobody        ; the account commands run as under a root host
 *
 *   [credentials]
 *   enable = ssh, gh             ; catalog entries shared with every session
 *   inject = gh, npm             ; shared as placeholders: the proxy puts the secret in
 *   upstream_ca = /etc/ssl/corp.pem ; trusted besides the system's for injected hosts
 *
 *   [credential mytool]          ; a file or folder under the home, added by the person
 *   path = .config/mytool/token  ; relative to the home
 *   kind = credential            ; credential | configuration
 *   hosts = api.mytool.dev:443
 *   env = MYTOOL_TOKEN_FILE      ; the variable its tool reads (optional)
 *   lets = deploy with mytool as the person
 *   header = X-Api-Key           ; inject: the request header (default Authorization)
 *   secret_key = token           ; inject: the key whose value is the secret (default: the file)
 *
 *   [toolchains]
 *   enable = .cargo, .rustup, go ; read-only, from the catalog's list
 *   add = .local/opt/sdk         ; any other folder under the home
 *
 *   [guard]
 *   protect = default, .tool-versions ; read-only in read-write folders (default: the built-in list)
 *
 *   [limits]                     ; what a session whose policy sets none gets (lib/linux/limits_plan.c)
 *   memory_mb = 8192             ; default: half the machine's memory
 *   processes = 4096             ; tasks (threads too); default 4096
 *   tmpfs_mb = 4096              ; each of the sandbox's /tmp and /dev/shm; default a quarter
 *                                ; of the machine's memory
 *   [openshell]
 *   profile = strict             ; strict | standard: allowlist's hosts under the openshell
 *                                ; provider (standard adds the search APIs)
 *
 *   [account]
 *   closed_user = owsandbox-closed
 *   open_user = owsandbox-open
 *   group = owsandbox
 *   launcher = /usr/local/libexec/owsandbox/owsbx-launch
 *   nft_table = owsandbox
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "internal.h"
#include "platform.h"
#include "proxy/proxy.h"

struct load_ctx {
	ows_config *config;
	ows_error *err;
	int failed; /* first failing code */
};

static int set_string(char **slot, const char *value, struct load_ctx *ctx)
{
	char *copy = ows__strdup(value, ctx->err);
	if (!copy) {
		ctx->failed = OWS_ENOMEM;
		return 0;
	}
	free(*slot);
	*slot = copy;
	return 1;
}

static int bad_value(struct load_ctx *ctx, const char *key, const char *value, const char *want)
{
	ctx->failed = ows__fail(ctx->err, OWS_ECONFIG, 0, ctx->config->path, want,
				"bad value for %s: \"%s\"", key, value);
	return 0;
}


/* Splits a comma- or space-separated list into `sv`. */
static int add_list(struct load_ctx *ctx, ows__strv *sv, const char *value)
{
	const char *p = value;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *end = p;
		while (*end && *end != ',' && *end != ' ' && *end != '\t')
			end++;
		if (end > p) {
			char item[512];
			snprintf(item, sizeof(item), "%.*s", (int)(end - p), p);
			int rc = ows__strv_push(sv, item, ctx->err);
			if (rc < 0) {
				ctx->failed = rc;
				return 0;
			}
		}
		p = end;
	}
	return 1;
}

/*
 * `deny = a, b`: each item joins the hosts as the deny entry "!a", checked
 * here so that a typo is named with the file, not at the first session.
 */
static int add_denied(struct load_ctx *ctx, ows__strv *hosts, const char *value)
{
	ows__strv items = {0};
	int ok = add_list(ctx, &items, value), rc;
	for (size_t i = 0; ok && i < items.len; i++) {
		const char *item = items.v[i];
		char deny[520];
		snprintf(deny, sizeof(deny), "%s%s", item[0] == '!' ? "" : "!", item);
		ows_error why;
		ows_error_clear(&why);
		if (ows__site_check(deny, &why) < 0)
			ok = bad_value(ctx, "deny", item, why.hint);
		else if ((rc = ows__strv_push(hosts, deny, ctx->err)) < 0)
			ctx->failed = rc, ok = 0;
	}
	ows__strv_free(&items);
	return ok;
}

/* The [credential NAME] section being read, made on its first key. */
static struct ows__cred_custom *custom_entry(struct load_ctx *ctx, const char *name)
{
	ows_config *c = ctx->config;
	for (size_t i = 0; i < c->ncustom; i++)
		if (strcmp(c->custom[i].name, name) == 0)
			return &c->custom[i];
	ows__cred builtin;
	if (!ows__name_is_safe(name) || ows__cred_find(NULL, name, &builtin)) {
		ctx->failed = ows__fail(ctx->err, OWS_ECONFIG, 0, c->path,
					"name it with letters, digits, '-' and '_', unlike a built-in entry",
					"bad credential name [credential %s]", name);
		return NULL;
	}
	struct ows__cred_custom *more = realloc(c->custom, (c->ncustom + 1) * sizeof(*more));
	if (!more) {
		ctx->failed = ows__fail(ctx->err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
		return NULL;
	}
	c->custom = more;
	struct ows__cred_custom *e = &c->custom[c->ncustom];
	memset(e, 0, sizeof(*e));
	e->credential = true;
	if (!(e->name = ows__strdup(name, ctx->err))) {
		ctx->failed = OWS_ENOMEM;
		return NULL;
	}
	c->ncustom++;
	return e;
}

static int on_custom(struct load_ctx *ctx, const char *section, const char *name, const char *value)
{
	struct ows__cred_custom *e = custom_entry(ctx, section + strlen("credential "));
	if (!e)
		return 0;
	if (strcmp(name, "path") == 0) {
		if (!ows__home_path_is_safe(value))
			return bad_value(ctx, name, value, "give a path under the home, such as .config/tool");
		return set_string(&e->path, value, ctx);
	}
	if (strcmp(name, "kind") == 0) {
		if (strcmp(value, "credential") && strcmp(value, "configuration"))
			return bad_value(ctx, name, value, "use credential or configuration");
		e->credential = value[0] == 'c' && value[1] == 'r';
		return 1;
	}
	if (strcmp(name, "hosts") == 0)
		return add_list(ctx, &e->hosts, value);
	if (strcmp(name, "lets") == 0)
		return set_string(&e->lets, value, ctx);
	if (strcmp(name, "env") == 0) {
		if (!ows__env_name_is_valid(value, strlen(value)))
			return bad_value(ctx, name, value, "give a variable name");
		return set_string(&e->env, value, ctx);
	}
	if (strcmp(name, "header") == 0 || strcmp(name, "secret_key") == 0) {
		bool token = *value && strlen(value) < 64;
		for (const char *p = value; *p && token; p++)
			token = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.';
		if (!token)
			return bad_value(ctx, name, value, "give a name of letters, digits, - _ .");
		return set_string(name[0] == 'h' ? &e->header : &e->secret_key, value, ctx);
	}
	ctx->failed = ows__fail(ctx->err, OWS_ECONFIG, 0, ctx->config->path,
				"a [credential NAME] has path, kind, hosts, env, lets, header and "
				"secret_key",
				"unknown setting [%s] %s", section, name);
	return 0;
}

/* [limits]: a positive whole number of each. */
static int on_limit(struct load_ctx *ctx, const char *name, const char *value)
{
	static const struct { const char *key; size_t off; unsigned long long max; } keys[] = {
		{"memory_mb", offsetof(ows_config, default_memory_mb), 1ull << 30},
		{"processes", offsetof(ows_config, default_processes), 1ull << 22},
		{"tmpfs_mb", offsetof(ows_config, default_tmpfs_mb), 1ull << 30},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(keys); i++) {
		if (strcmp(name, keys[i].key) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' || v == 0 || v > keys[i].max)
			return bad_value(ctx, name, value, "give a positive whole number");
		*(uint64_t *)((char *)ctx->config + keys[i].off) = v;
		return 1;
	}
	ctx->failed = ows__fail(ctx->err, OWS_ECONFIG, 0, ctx->config->path,
				"[limits] has memory_mb, processes and tmpfs_mb",
				"unknown setting [limits] %s", name);
	return 0;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *ctx = user;
	ows_config *c = ctx->config;

	if (strcmp(section, "sandbox") == 0) {
		if (strcmp(name, "provider") == 0) {
			if (!ows__provider_find(value))
				return bad_value(ctx, name, value, ows__plat_provider_hint());
			return set_string(&c->provider, value, ctx);
		}
		if (strcmp(name, "network") == 0) {
			if (ows_net_from_name(value, &c->net) < 0)
				return bad_value(ctx, name, value, "use none, open or allowlist");
			return 1;
		}
		if (strcmp(name, "hosts") == 0)
			return add_list(ctx, &c->hosts, value);
		if (strcmp(name, "deny") == 0)
			return add_denied(ctx, &c->hosts, value);
		if (strcmp(name, "open_without_scopes") == 0) {
			if (strcmp(value, "refuse") != 0 && strcmp(value, "partial") != 0)
				return bad_value(ctx, name, value, "use refuse or partial");
			c->open_unscoped = value[0] == 'p';
			return 1;
		}
		if (strcmp(name, "private_root") == 0 || strcmp(name, "state_dir") == 0) {
			if (!ows__plat_path_is_absolute(value))
				return bad_value(ctx, name, value, "give an absolute path");
			return set_string(name[0] == 'p' ? &c->private_root : &c->state_dir, value, ctx);
		}
	} else if (strcmp(section, "openshell") == 0) {
		if (strcmp(name, "profile") == 0) {
			if (strcmp(value, "strict") != 0 && strcmp(value, "standard") != 0)
				return bad_value(ctx, name, value, "use strict or standard");
			c->os_standard = value[1] == 't' && value[2] == 'a';
			return 1;
		}
	} else if (strcmp(section, "landlock") == 0) {
		if (strcmp(name, "root_runs_as") == 0)
			return set_string(&c->root_runs_as, value, ctx);
	} else if (strcmp(section, "credentials") == 0) {
		if (strcmp(name, "enable") == 0)
			return add_list(ctx, &c->cred_enabled, value);
		if (strcmp(name, "inject") == 0)
			return add_list(ctx, &c->cred_inject, value);
		if (strcmp(name, "upstream_ca") == 0) {
			if (!ows__plat_path_is_absolute(value))
				return bad_value(ctx, name, value, "give an absolute path");
			return set_string(&c->inject_ca, value, ctx);
		}
	} else if (strncmp(section, "credential ", 11) == 0) {
		return on_custom(ctx, section, name, value);
	} else if (strcmp(section, "toolchains") == 0) {
		if (strcmp(name, "enable") == 0 || strcmp(name, "add") == 0)
			return add_list(ctx, &c->toolchains, value);
	} else if (strcmp(section, "limits") == 0) {
		return on_limit(ctx, name, value);
	} else if (strcmp(section, "guard") == 0) {
		if (strcmp(name, "protect") == 0) {
			/* The key replaces the built-in list; `default` in it brings the list back. */
			c->protect_set = true;
			return add_list(ctx, &c->protect, value);
		}
	} else if (strcmp(section, "account") == 0) {
		static const struct { const char *key; size_t off; bool path; } keys[] = {
			{"closed_user", offsetof(ows_config, closed_user), false},
			{"open_user", offsetof(ows_config, open_user), false},
			{"group", offsetof(ows_config, group), false},
			{"launcher", offsetof(ows_config, launcher), true},
			{"nft_table", offsetof(ows_config, nft_table), false},
		};
		for (size_t i = 0; i < OWS__ARRAY_LEN(keys); i++) {
			if (strcmp(name, keys[i].key) != 0)
				continue;
			if (keys[i].path ? !ows__plat_path_is_absolute(value) : !ows__name_is_safe(value))
				return bad_value(ctx, name, value,
						 keys[i].path ? "give an absolute path"
							      : "use letters, digits, '-' and '_' only");
			return set_string((char **)((char *)c + keys[i].off), value, ctx);
		}
	}
	ctx->failed = ows__fail(ctx->err, OWS_ECONFIG, 0, c->path,
				"remove it, or check the spelling against the README",
				"unknown setting [%s] %s", section, name);
	return 0;
}

int ows__config_defaults(ows_config *c, ows_error *err)
{
	memset(c, 0, sizeof(*c));
	c->net = OWS_NET_NONE;
	if (!(c->path = ows__strdup("", err)) || !(c->provider = ows__strdup(ows__plat_default_provider(), err)) ||
	    !(c->state_dir = ows__strdup(ows__plat_state_dir(), err)) ||
	    !(c->root_runs_as = ows__strdup("nobody", err)) ||
	    !(c->closed_user = ows__strdup("owsandbox-closed", err)) ||
	    !(c->open_user = ows__strdup("owsandbox-open", err)) ||
	    !(c->group = ows__strdup("owsandbox", err)) ||
	    !(c->launcher = ows__strdup("/usr/local/libexec/owsandbox/owsbx-launch", err)) ||
	    !(c->nft_table = ows__strdup("owsandbox", err)))
		return OWS_ENOMEM;
	return 0;
}

/*
 * What a NULL config means to every call that takes one: the machine's, as
 * ows_config_load(NULL) reads it (the file when present, else the built-in
 * defaults), so a host and the CLI see the same settings.  Fills *c in place
 * for callers that keep it on the stack; release it with ows__config_release().
 */
int ows__config_machine(ows_config *c, ows_error *err)
{
	memset(c, 0, sizeof(*c));
	ows_config *loaded = NULL;
	int rc = ows_config_load(NULL, &loaded, err);
	if (rc < 0)
		return rc;
	*c = *loaded;
	free(loaded); /* the struct only: *c owns what it held */
	return 0;
}

int ows__config_or_machine(const ows_config *given, ows_config *machine, const ows_config **use,
			   ows_error *err)
{
	memset(machine, 0, sizeof(*machine));
	*use = given;
	if (given)
		return 0;
	int rc = ows__config_machine(machine, err);
	*use = rc == 0 ? machine : NULL;
	return rc;
}

bool ows__name_is_safe(const char *s)
{
	if (!*s || strlen(s) > 31 || *s == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

void ows_config_free(ows_config *c)
{
	if (!c)
		return;
	ows__config_release(c);
	free(c);
}

void ows__config_release(ows_config *c)
{
	free(c->path);
	free(c->provider);
	ows__strv_free(&c->hosts);
	free(c->private_root);
	free(c->state_dir);
	free(c->root_runs_as);
	free(c->closed_user);
	free(c->open_user);
	free(c->group);
	free(c->launcher);
	free(c->nft_table);
	ows__strv_free(&c->cred_enabled);
	ows__strv_free(&c->cred_inject);
	free(c->inject_ca);
	for (size_t i = 0; i < c->ncustom; i++) {
		free(c->custom[i].header);
		free(c->custom[i].secret_key);
		free(c->custom[i].name);
		free(c->custom[i].path);
		ows__strv_free(&c->custom[i].hosts);
		free(c->custom[i].lets);
		free(c->custom[i].env);
	}
	free(c->custom);
	ows__strv_free(&c->toolchains);
	ows__strv_free(&c->protect);
	memset(c, 0, sizeof(*c));
}

const char *ows_config_path(const ows_config *c)
{
	return c ? c->path : "";
}

/*
 * The hosts an injected entry's secret may go to are named exactly: a
 * wildcard would hand it to any subdomain (a bucket, a page anyone can
 * make), an address to whatever answers there.
 */
static int check_inject_host(const ows_config *c, const ows__cred *e, const char *text,
			     size_t len, ows_error *err)
{
	char h[300];
	snprintf(h, sizeof(h), "%.*s", (int)len, text);
	ows__pattern p;
	ows_error scratch = {0};
	if (h[0] != '!' && ows__pattern_parse(h, &p, &scratch) == 0 && !p.wildcard &&
	    p.kind == OWS__HOST_NAME)
		return 0;
	return ows__fail(err, OWS_ECONFIG, 0, c->path,
			 "list each host by name with its port, such as api.tool.dev:443",
			 "%s is injected, and its host %s is not one name: a secret is injected "
			 "only for hosts named exactly", e->name, h);
}

static int check_inject_hosts(const ows_config *c, const ows__cred *e, ows_error *err)
{
	size_t n = 0;
	int rc = 0;
	for (const char *p = e->hosts; rc == 0 && p && *p; n++) {
		size_t len = strcspn(p, ",");
		rc = check_inject_host(c, e, p, len, err);
		p = p[len] ? p + len + 1 : NULL;
	}
	for (size_t i = 0; rc == 0 && e->more_hosts && i < e->more_hosts->len; i++, n++)
		rc = check_inject_host(c, e, e->more_hosts->v[i], strlen(e->more_hosts->v[i]), err);
	if (rc == 0 && n == 0)
		rc = ows__fail(err, OWS_ECONFIG, 0, c->path, "add hosts = api.tool.dev:443",
			       "%s is injected, and names no host to inject it for", e->name);
	return rc;
}

/* Every switched-on name is in the catalog, every added entry has a path. */
static int check_catalog(const ows_config *c, ows_error *err)
{
	for (size_t i = 0; i < c->ncustom; i++)
		if (!c->custom[i].path)
			return ows__fail(err, OWS_ECONFIG, 0, c->path, "add path = ... under the home",
					 "[credential %s] has no path", c->custom[i].name);
	ows__cred e;
	for (size_t i = 0; i < c->cred_enabled.len; i++)
		if (!ows__cred_find(c, c->cred_enabled.v[i], &e))
			return ows__fail(err, OWS_ECONFIG, 0, c->path,
					 "run `owsbx credentials` for the catalog's names",
					 "[credentials] enable names an unknown entry: %s",
					 c->cred_enabled.v[i]);
	for (size_t i = 0; i < c->cred_inject.len; i++) {
		const char *n = c->cred_inject.v[i];
		if (!ows__cred_find(c, n, &e))
			return ows__fail(err, OWS_ECONFIG, 0, c->path,
					 "run `owsbx credentials` for the catalog's names",
					 "[credentials] inject names an unknown entry: %s", n);
		if (!e.inject_header)
			return ows__fail(err, OWS_ECONFIG, 0, c->path,
					 "share it as a copy ([credentials] enable), or not at all",
					 "[credentials] inject: %s cannot be injected: %s", n,
					 e.no_inject);
		if (!ows__cred_enabled(c, n))
			return ows__fail(err, OWS_ECONFIG, 0, c->path,
					 "add it to [credentials] enable as well",
					 "[credentials] inject names %s, which enable does not", n);
		int rc = check_inject_hosts(c, &e, err);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < c->toolchains.len; i++) {
		const char *t = c->toolchains.v[i];
		if (t[0] != '/' && !ows__home_path_is_safe(t))
			return ows__fail(err, OWS_ECONFIG, 0, c->path,
					 "name a folder under the home, such as .cargo",
					 "[toolchains] names a path outside the home: %s", t);
	}
	for (size_t i = 0; i < c->protect.len; i++)
		if (!ows__home_path_is_safe(c->protect.v[i]))
			return ows__fail(err, OWS_ECONFIG, 0, c->path,
					 "name a path relative to each folder, such as .envrc",
					 "[guard] protect names a path outside the folder: %s",
					 c->protect.v[i]);
	return 0;
}

int ows_config_load(const char *path, ows_config **out, ows_error *err)
{
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	*out = NULL;
	ows_config *c = ows__calloc(1, sizeof(*c), err);
	if (!c)
		return OWS_ENOMEM;
	int rc = ows__config_defaults(c, err);
	if (rc < 0)
		goto fail;

	const char *file = path ? path : ows__plat_config_path();
	FILE *f = fopen(file, ows__plat_fopen_read);
	if (!f) {
		if (!path && errno == ENOENT) { /* no machine config: built-in defaults */
			*out = c;
			return 0;
		}
		rc = ows__fail(err, OWS_ECONFIG, errno, file, "check the path and its permissions",
			       "cannot read the machine's config: %s", strerror(errno));
		goto fail;
	}
	free(c->path);
	if (!(c->path = ows__strdup(file, err))) {
		fclose(f);
		rc = OWS_ENOMEM;
		goto fail;
	}
	struct load_ctx ctx = {.config = c, .err = err};
	int line = ini_parse_file(f, on_entry, &ctx);
	fclose(f);
	if (ctx.failed) {
		rc = ctx.failed;
		goto fail;
	}
	if (line == 0)
		rc = check_catalog(c, err);
	if (rc < 0)
		goto fail;
	if (line != 0) {
		char where[600];
		snprintf(where, sizeof(where), "%.500s, line %d", file, line);
		rc = ows__fail(err, OWS_ECONFIG, 0, where, "fix the line: [section] and key = value",
			       "the machine's config has a syntax error");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	ows_config_free(c);
	return rc;
}
