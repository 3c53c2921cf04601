/*
 * The session -> NVIDIA OpenShell's sandbox policy (YAML) and the
 * `openshell sandbox create` arguments.
 *
 * What was read, in NVIDIA/OpenShell at 2f7fb65591ee5746217ace154afc0aa6bf1afc6d:
 *   docs/reference/policy-schema.mdx            the policy's fields
 *   crates/openshell-policy/src/lib.rs          PolicyFile & co. (deny_unknown_fields),
 *                                               validate_sandbox_policy, is_valid_sandbox_identity,
 *                                               host_wildcard_shape_invalid
 *   crates/openshell-cli/src/main.rs            SandboxCommands::Create: --name, --from,
 *                                               --policy FILE, --driver-config-json,
 *                                               --no-auto-providers, `-- COMMAND`
 *   crates/openshell-driver-docker/README.md,   the bind mounts: {"docker":{"mounts":[{"type":
 *   crates/openshell-driver-docker/src/lib.rs   "bind","source","target","read_only"}]}},
 *   crates/openshell-core/src/driver_mounts.rs  Docker's "-v SRC:DST:ro" form, reserved targets
 *
 * A mount is not part of the policy: the folders are bind-mounted by the
 * Docker driver (--driver-config-json) at the same absolute paths, and listed
 * again in filesystem_policy, which Landlock enforces inside the container,
 * with compatibility "hard_requirement" so that a path Landlock cannot cover
 * aborts the sandbox instead of running it with less of a wall.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openshell/openshell.h"
#include "proxy/proxy.h"

/* The image's own paths the agent needs, from restrictive_default_policy()
 * (crates/openshell-policy/src/lib.rs) without /app and /var/log: under
 * hard_requirement a path missing from the image aborts the sandbox. */
static const char *const base_read_only[] = { "/usr", "/lib", "/proc", "/dev/urandom", "/etc" };
static const char *const base_read_write[] = { "/tmp", "/dev/null" };

/* Mount targets OpenShell refuses (crates/openshell-driver-docker/README.md, "Driver Config
 * Mounts"): its control roots, and the image's default workspace root, which a mount must not
 * replace or contain (crates/openshell-core/src/driver_mounts.rs, DEFAULT_WORKSPACE_ROOT). */
static const char *const reserved_roots[] = {
	"/opt/openshell", "/etc/openshell", "/etc/openshell-tls",
	"/run/openshell", "/run/openshell-sidecar",
};
#define WORKSPACE_ROOT "/sandbox"

/* OpenShell's limits (crates/openshell-policy/src/lib.rs). */
#define MAX_FILESYSTEM_PATHS 256
#define MAX_PATH_LENGTH 4096

/* ------------------------------------------------------------ the text */

/*
 * A YAML double-quoted scalar: the one style in which every character is
 * either itself or an escape, so no quote, '#', ':', '-', '[' or newline in a
 * folder's name can end the scalar or start a comment.  Escaped: '"', '\\',
 * the C0 controls and DEL (outside YAML's printable set).  The caller has
 * checked that `s` is UTF-8.
 */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* `indent` spaces, then `key`, ": ", the quoted `value`, a newline. */
static void put_field(FILE *f, const char *indent, const char *key, const char *value)
{
	fprintf(f, "%s%s: ", indent, key);
	put_quoted(f, value);
	fputc('\n', f);
}

/* `indent` spaces, "- ", the quoted `value`, a newline: one item of a list of strings. */
static void put_item(FILE *f, const char *indent, const char *value)
{
	fprintf(f, "%s- ", indent);
	put_quoted(f, value);
	fputc('\n', f);
}

/* ------------------------------------------------------------ validation */

static bool path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		int n = *s < 0x80 ? 0 : (*s & 0xe0) == 0xc0 ? 1 : (*s & 0xf0) == 0xe0 ? 2
			: (*s & 0xf8) == 0xf0 ? 3 : -1;
		if (n < 0 || (n == 1 && *s < 0xc2) || (n == 3 && *s > 0xf4))
			return false;
		s++;
		for (int i = 0; i < n; i++, s++)
			if ((*s & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static int bad_path(ows_error *err, const char *path, const char *hint, const char *why)
{
	return ows__fail(err, OWS_EINVAL, 0, path, hint, "openshell policy: the folder %s", why);
}

/*
 * A folder OpenShell can bind-mount at the same path and list in its policy:
 * absolute, canonical, short enough, no control byte (driver_mounts.rs refuses
 * them in a mount target), no ':' (the Docker driver hands the mount to
 * Docker as "SRC:DST:ro", where a colon would split the path), no trailing
 * blank, UTF-8 (a YAML document is), clear of OpenShell's own paths.
 */
static int check_folder(const char *path, ows_error *err)
{
	const char *canon = "name the folder by its absolute, canonical form";
	size_t n = strlen(path);
	if (path[0] != '/' || n < 2 || path[n - 1] == '/' || strstr(path, "//") ||
	    strstr(path, "/./") || strstr(path, "/../") ||
	    (n >= 2 && strcmp(path + n - 2, "/.") == 0) ||
	    (n >= 3 && strcmp(path + n - 3, "/..") == 0))
		return bad_path(err, path, canon, "is not an absolute, canonical path other than /");
	if (n > MAX_PATH_LENGTH)
		return bad_path(err, path, "choose a shorter folder", "is longer than OpenShell's 4096 bytes");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return bad_path(err, path, "rename the folder, or use the landlock provider",
					"has a control character, which an OpenShell mount cannot carry");
	if (strchr(path, ':'))
		return bad_path(err, path, "rename the folder, or use the landlock provider",
				"has a ':', which OpenShell's Docker bind mount (SRC:DST) cannot carry");
	if (path[n - 1] == ' ' || path[n - 1] == '\t')
		return bad_path(err, path, "rename the folder", "ends in a blank, which OpenShell refuses");
	if (!utf8_valid((const unsigned char *)path))
		return bad_path(err, path, "rename the folder", "is not UTF-8, as OpenShell's policy must be");
	for (size_t i = 0; i < OWS__ARRAY_LEN(reserved_roots); i++)
		if (path_within(path, reserved_roots[i]) || path_within(reserved_roots[i], path))
			return bad_path(err, path, "share a folder outside OpenShell's own paths",
					"overlaps a path OpenShell reserves");
	if (path_within(WORKSPACE_ROOT, path))
		return bad_path(err, path, "share a folder that does not contain /sandbox",
				"would replace OpenShell's workspace root /sandbox");
	return 0;
}

/*
 * OpenShell's numeric identities: 1 .. 4294967294 (is_valid_sandbox_identity);
 * 0 is root and refused by it.
 */
static int check_ids(const ows__os_spec *spec, ows_error *err)
{
	if (spec->uid == 0 || spec->gid == 0 || (uintmax_t)spec->uid >= UINT32_MAX ||
	    (uintmax_t)spec->gid >= UINT32_MAX)
		return ows__fail(err, OWS_EINVAL, 0, NULL,
				 "run the session as the folders' owner, not root",
				 "openshell policy: OpenShell runs the agent only as a uid and gid "
				 "from 1 to 4294967294 (got %ju:%ju)",
				 (uintmax_t)spec->uid, (uintmax_t)spec->gid);
	return 0;
}

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '*';
}

/*
 * Splits "host[:port]" (port 443 when absent) and checks the host the way
 * OpenShell's loader does (host_wildcard_shape_invalid, validate_sandbox_policy):
 * a wildcard only in the first label, never bare, never over a top-level domain.
 */
static int split_host(const char *pat, char *host, size_t hostsz, unsigned *port, ows_error *err)
{
	const char *hint = "give a host name, *.domain or host:port";
	const char *colon = strchr(pat, ':');
	size_t n = colon ? (size_t)(colon - pat) : strlen(pat);
	if (n == 0 || n >= hostsz)
		return ows__fail(err, OWS_EINVAL, 0, pat, hint, "openshell policy: bad host %s", pat);
	memcpy(host, pat, n);
	host[n] = '\0';
	for (const char *c = host; *c; c++)
		if (!host_char(*c))
			return ows__fail(err, OWS_EINVAL, 0, pat, hint,
					 "openshell policy: bad host %s", pat);
	*port = 443;
	if (colon) {
		char *end;
		unsigned long p = strtoul(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end || p == 0 || p > 65535)
			return ows__fail(err, OWS_EINVAL, 0, pat, hint,
					 "openshell policy: bad port in %s", pat);
		*port = (unsigned)p;
	}
	const char *dot = strchr(host, '.');
	bool wild = strchr(host, '*') != NULL;
	if (wild && (!dot || strchr(dot, '*') || !strchr(dot + 1, '.') ||
		     (strstr(host, "**") && (size_t)(dot - host) != 2)))
		return ows__fail(err, OWS_EINVAL, 0, pat,
				 "name the domain, as *.example.com",
				 "openshell policy: OpenShell allows a wildcard only in the first label "
				 "of a domain below a top-level one, not %s", pat);
	if (host[0] == '.' || host[n - 1] == '.' || strstr(host, ".."))
		return ows__fail(err, OWS_EINVAL, 0, pat, hint, "openshell policy: bad host %s", pat);
	return 0;
}

/* ------------------------------------------------------------ the policy */

static void emit_list(FILE *f, const char *key, const char *const *base, size_t nbase,
		      const ows__os_spec *spec, ows_access access, bool runner)
{
	fprintf(f, "  %s:\n", key);
	for (size_t i = 0; i < nbase; i++)
		put_item(f, "    ", base[i]);
	for (size_t i = 0; i < spec->nfolders; i++)
		if (spec->folders[i].access == access)
			put_item(f, "    ", spec->folders[i].path);
	if (runner)
		put_item(f, "    ", OWS__OS_RUNNER_DIR);
}

/*
 * OpenShell's network policy lists only what may be reached, and the strict
 * profile always lists the code hosts and registries: a deny entry cannot be
 * expressed there, so it is refused by name rather than dropped.
 */
int ows__os_refuse_deny(const char *pattern, ows_error *err)
{
	if (!pattern || pattern[0] != '!')
		return 0;
	return ows__fail(err, OWS_EINVAL, 0, pattern,
			 "remove the deny entry, or use the landlock or account provider, whose "
			 "proxy honours it",
			 "openshell policy: OpenShell's network policy has no deny rules, so %s "
			 "cannot be honoured",
			 pattern);
}

/* One network_policies entry: `hosts` reachable by any executable of the sandbox. */
static int emit_network_entry(FILE *f, const char *key, const char *name,
			      const char *const *hosts, ows_error *err)
{
	if (!hosts || !hosts[0])
		return 0;
	fprintf(f, "  %s:\n", key);
	put_field(f, "    ", "name", name);
	fputs("    endpoints:\n", f);
	for (size_t i = 0; hosts[i]; i++) {
		char host[256];
		unsigned port = 0;
		int rc = ows__os_refuse_deny(hosts[i], err);
		if (rc == 0)
			rc = split_host(hosts[i], host, sizeof(host), &port, err);
		if (rc)
			return rc;
		put_field(f, "      ", "- host", host);
		fprintf(f, "        port: %u\n", port);
	}
	/* The wall is the host list, not the program: any executable may use it. */
	fputs("    binaries:\n", f);
	put_field(f, "      ", "- path", "/**");
	return 0;
}

static int emit_network(FILE *f, const ows__os_spec *spec, ows_error *err)
{
	/* none: no entry at all, and no key: OpenShell's proxy allows nothing a policy does
	 * not list. */
	if (spec->profile == OWS__OS_NONE)
		return 0;
	/* The hosts of each profile are lib/proxy/sites.c's groups, as the proxy uses them. */
	fputs("network_policies:\n", f);
	int rc = emit_network_entry(f, "code_hosting", "code-hosting",
				    ows__sites_group("code-hosting"), err);
	if (!rc)
		rc = emit_network_entry(f, "package_registries", "package-registries",
					ows__sites_group("package-registries"), err);
	if (!rc && spec->profile == OWS__OS_STANDARD)
		rc = emit_network_entry(f, "search_apis", "search-apis",
					ows__sites_group("search-apis"), err);
	if (!rc)
		rc = emit_network_entry(f, "session_hosts", "session-hosts", spec->hosts, err);
	return rc;
}

static void emit_policy(FILE *f, const ows__os_spec *spec)
{
	fputs("# The OpenShell sandbox policy of one owsandbox session (lib/openshell/policy.c).\n"
	      "# Its folders are bind-mounted at the same paths by `sandbox create`.\n"
	      "version: 1\n"
	      "filesystem_policy:\n"
	      "  include_workdir: false\n",
	      f);
	emit_list(f, "read_only", base_read_only, OWS__ARRAY_LEN(base_read_only), spec,
		  OWS_ACCESS_RO, true);
	emit_list(f, "read_write", base_read_write, OWS__ARRAY_LEN(base_read_write), spec,
		  OWS_ACCESS_RW, false);
	fputs("landlock:\n", f);
	put_field(f, "  ", "compatibility", "hard_requirement");
	/* Quoted: OpenShell reads run_as_user and run_as_group as strings (ProcessDef). */
	fprintf(f, "process:\n  run_as_user: \"%ju\"\n  run_as_group: \"%ju\"\n",
		(uintmax_t)spec->uid, (uintmax_t)spec->gid);
}

static int render_policy(const ows__os_spec *spec, char **out, ows_error *err)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	if (!f)
		return ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
	emit_policy(f, spec);
	int rc = emit_network(f, spec, err);
	bool failed = ferror(f) != 0;
	if (fclose(f) != 0 || failed || rc) {
		free(*out);
		*out = NULL;
		return rc ? rc : ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
	}
	return 0;
}

/* ------------------------------------------------------------ the arguments */

static int add_mount(json_t *mounts, const char *path, bool ro)
{
	json_t *m = json_pack("{s:s, s:s, s:s, s:b}", "type", "bind", "source", path, "target",
			      path, "read_only", ro);
	return m ? json_array_append_new(mounts, m) : -1;
}

/* {"docker":{"mounts":[...]}}: the folders at their own paths, the runner alone at its own. */
static int driver_config(const ows__os_spec *spec, char **out, ows_error *err)
{
	json_t *mounts = json_array();
	json_t *root = mounts ? json_pack("{s:{s:o}}", "docker", "mounts", mounts) : NULL;
	int rc = root ? 0 : -1;
	for (size_t i = 0; !rc && i < spec->nfolders; i++)
		rc = add_mount(mounts, spec->folders[i].path, spec->folders[i].access != OWS_ACCESS_RW);
	json_t *runner = rc ? NULL : json_pack("{s:s, s:s, s:s, s:b}", "type", "bind", "source",
					       spec->runner, "target", OWS__OS_RUNNER_PATH,
					       "read_only", 1);
	if (!rc)
		rc = runner ? json_array_append_new(mounts, runner) : -1;
	*out = rc ? NULL : json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (root)
		json_decref(root);
	else
		json_decref(mounts);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
}

static int render_args(const ows__os_spec *spec, ows__strv *args, ows_error *err)
{
	char *dc = NULL;
	int rc = driver_config(spec, &dc, err);
	const char *const argv[] = {
		"sandbox", "create", "--name", spec->name, "--from", spec->image,
		"--policy", spec->policy_path, "--driver-config-json", dc,
		/* no OpenShell credential provider: the session's credentials are its own */
		"--no-auto-providers",
		"--", OWS__OS_RUNNER_PATH, "runner",
	};
	for (size_t i = 0; !rc && i < OWS__ARRAY_LEN(argv); i++)
		rc = ows__strv_push(args, argv[i], err);
	free(dc);
	return rc;
}

/* ------------------------------------------------------------ the entry point */

static int check_spec(const ows__os_spec *spec, ows_error *err)
{
	const char *hint = "fill in the sandbox's name, image, policy file and tool runner";
	if (!spec->name || !spec->name[0] || spec->name[0] == '-' || !spec->image ||
	    !spec->image[0] || spec->image[0] == '-' || !spec->policy_path ||
	    spec->policy_path[0] != '/' || !spec->runner || spec->runner[0] != '/' ||
	    (spec->nfolders && !spec->folders))
		return ows__fail(err, OWS_EINVAL, 0, NULL, hint, "openshell policy: incomplete spec");
	if (spec->profile == OWS__OS_OPEN)
		return ows__fail(err, OWS_EINVAL, 0, NULL,
				 "use the standard profile and add the sites, or another provider",
				 "openshell policy: OpenShell cannot allow any host (a bare '*' host "
				 "is refused: docs/reference/policy-schema.mdx)");
	if (spec->profile != OWS__OS_STRICT && spec->profile != OWS__OS_STANDARD &&
	    spec->profile != OWS__OS_NONE)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "openshell policy: bad profile");
	if (spec->profile == OWS__OS_NONE && spec->hosts && spec->hosts[0])
		return ows__fail(err, OWS_EINVAL, 0, spec->hosts[0],
				 "use allowlist to reach a site",
				 "openshell policy: network none allows no host");
	size_t npaths = OWS__ARRAY_LEN(base_read_only) + OWS__ARRAY_LEN(base_read_write) + 1 +
			spec->nfolders;
	if (npaths > MAX_FILESYSTEM_PATHS)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "share fewer folders",
				 "openshell policy: OpenShell takes at most 256 paths");
	int rc = check_ids(spec, err);
	/* The runner's source is a host path Docker reads: its bind syntax must carry it. */
	if (!rc && strchr(spec->runner, ':'))
		rc = ows__fail(err, OWS_EINVAL, 0, spec->runner,
			       "install owsbx in a folder without ':'",
			       "openshell policy: the tool runner's path cannot be bind-mounted");
	for (size_t i = 0; !rc && i < spec->nfolders; i++)
		if (path_within(OWS__OS_RUNNER_DIR, spec->folders[i].path) ||
		    path_within(spec->folders[i].path, OWS__OS_RUNNER_DIR))
			rc = bad_path(err, spec->folders[i].path, "share another folder",
				      "overlaps " OWS__OS_RUNNER_DIR ", where the tool runner is");
	for (size_t i = 0; !rc && i < spec->nfolders; i++) {
		rc = check_folder(spec->folders[i].path, err);
		if (!rc && spec->folders[i].access != OWS_ACCESS_RO &&
		    spec->folders[i].access != OWS_ACCESS_RW)
			rc = ows__fail(err, OWS_EINVAL, 0, spec->folders[i].path, NULL,
				       "openshell policy: bad access");
	}
	return rc;
}

int ows__os_render_spec(const ows__os_spec *spec, ows__os_render *out, ows_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!spec)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "openshell policy: no spec");
	int rc = check_spec(spec, err);
	if (!rc)
		rc = render_policy(spec, &out->policy, err);
	if (!rc)
		rc = render_args(spec, &out->create_args, err);
	return rc;
}

void ows__os_render_free(ows__os_render *r)
{
	if (!r)
		return;
	free(r->policy);
	r->policy = NULL;
	ows__strv_free(&r->create_args);
}
