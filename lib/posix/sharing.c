/*
 * Sharing on purpose: the catalog entries the machine switched on are read
 * from the person's home, never opened for writing, and handed to the
 * sandbox as copies for its private home; toolchain folders are offered
 * read-only at their own paths.
 *
 * Reading is careful: every path is opened beneath the home, never through
 * a link that leaves it; the home itself, sockets, devices and oversized
 * files are refused with the reason.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __APPLE__
#include <limits.h>
#include <mach-o/dyld.h>
#else
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include <jansson.h>
#include <mbedtls/platform_util.h>

#include "proxy/inject.h"
#include "platform.h"
#include "posix.h"
#include "proxy/proxy.h"

#define SHARE_MAX_FILE (1u << 20)   /* one file */
#define SHARE_MAX_TOTAL (16u << 20) /* everything shared with one session */
#define SHARE_MAX_FILES 1024
#define SHARE_MAX_DEPTH 8

#ifdef __APPLE__
/*
 * macOS has no openat2 and no O_PATH.  A plain open stands in for O_PATH
 * (what is opened so is only checked and closed).  O_NOFOLLOW_ANY (macOS
 * 11) refuses a link anywhere on the way; where there is one, the path is
 * resolved and followed only when it ends in the home, and opened again
 * with O_NOFOLLOW_ANY, so that a link swapped in meanwhile is refused, not
 * followed.  `rel` never holds "..": catalog paths are checked
 * (ows__home_path_is_safe) and the walk joins names readdir gave.
 */
#define O_PATH 0

static int open_beneath(int homefd, const char *rel, int flags)
{
	flags |= O_NOCTTY | O_NOFOLLOW_ANY | O_CLOEXEC;
	int fd = openat(homefd, rel, flags);
	if (fd >= 0 || errno != ELOOP)
		return fd;
	char home[PATH_MAX], joined[PATH_MAX * 2];
	if (fcntl(homefd, F_GETPATH, home) != 0)
		return -1;
	snprintf(joined, sizeof(joined), "%s/%s", home, rel);
	char *real = realpath(joined, NULL);
	if (!real)
		return -1;
	size_t n = strlen(home);
	if (strncmp(real, home, n) != 0 || real[n] != '/') {
		free(real);
		errno = EXDEV; /* it leads out of the home */
		return -1;
	}
	fd = open(real, flags);
	free(real);
	return fd;
}
#else
static int open_beneath(int homefd, const char *rel, int flags)
{
	/* openat2 refuses O_PATH with flags it would ignore. */
	if (!(flags & O_PATH))
		flags |= O_NOCTTY;
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	return (int)syscall(SYS_openat2, homefd, rel, &how, sizeof(how));
}
#endif

static int refuse(ows_error *err, const char *entry, const char *rel, const char *why,
		  const char *hint)
{
	return ows__fail(err, OWS_EINVAL, 0, rel, hint, "cannot share %s: %s", entry, why);
}

static int add_file(ows__share *sh, const char *rel, char *data, size_t len, bool dir,
		    ows_error *err)
{
	if (sh->nfiles >= SHARE_MAX_FILES) {
		free(data);
		return ows__fail(err, OWS_EINVAL, 0, rel, "share a smaller folder",
				 "more than %d files to share", SHARE_MAX_FILES);
	}
	ows__file *more = realloc(sh->files, (sh->nfiles + 1) * sizeof(*more));
	char *path = strdup(rel);
	if (!more || !path) {
		free(data);
		free(path);
		if (more)
			sh->files = more;
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	sh->files = more;
	sh->files[sh->nfiles++] = (ows__file){.path = path, .data = data, .len = len, .dir = dir};
	sh->bytes += len;
	return 0;
}

/* Reads an open regular file whole, within the limits. */
static int read_all(int fd, const struct stat *st, const char *entry, const char *rel,
		    ows__share *sh, ows_error *err)
{
	if ((size_t)st->st_size > SHARE_MAX_FILE)
		return refuse(err, entry, rel, "the file is larger than 1 MiB",
			      "share a smaller file, or leave this entry off");
	if (sh->bytes + (size_t)st->st_size > SHARE_MAX_TOTAL)
		return refuse(err, entry, rel, "everything shared would pass 16 MiB",
			      "switch some entries off");
	size_t cap = (size_t)st->st_size + 1, len = 0;
	char *data = malloc(cap);
	if (!data)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	for (;;) {
		ssize_t n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(data);
			return ows__fail_sys(err, rel, NULL, "cannot read %s", entry);
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap) { /* it grew while we read: refuse rather than guess */
			free(data);
			return refuse(err, entry, rel, "the file changes while it is read", "try again");
		}
	}
	return add_file(sh, rel, data, len, false, err);
}

static int collect(int homefd, const char *entry, const char *rel, int depth, bool top,
		   ows__share *sh, ows_error *err);

static int collect_dir(int homefd, int dfd, const char *entry, const char *rel, int depth,
		       ows__share *sh, ows_error *err)
{
	int rc = add_file(sh, rel, NULL, 0, true, err);
	if (rc < 0)
		return rc;
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return ows__fail_sys(err, rel, NULL, "cannot list %s", entry);
	}
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char child[4096];
		if (snprintf(child, sizeof(child), "%s/%s", rel, e->d_name) >= (int)sizeof(child))
			continue;
		rc = collect(homefd, entry, child, depth + 1, false, sh, err);
	}
	closedir(d);
	return rc;
}

static int collect(int homefd, const char *entry, const char *rel, int depth, bool top,
		   ows__share *sh, ows_error *err)
{
	if (depth > SHARE_MAX_DEPTH)
		return refuse(err, entry, rel, "the folder is nested too deep", "share a smaller folder");
	int fd = open_beneath(homefd, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == EXDEV)
			return refuse(err, entry, rel, "a link leads out of the home",
				      "copy the file into the home, or leave this entry off");
		if (errno == ENOENT && !top)
			return 0; /* vanished while listed */
		if (errno == ENXIO || errno == EOPNOTSUPP) {
			if (top)
				return refuse(err, entry, rel, "it is a socket",
					      "share the files a tool reads, not its socket");
			return 0; /* a socket in a folder (an ssh control socket): left out */
		}
		return ows__fail_sys(err, rel, NULL, "cannot read %s", entry);
	}
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = ows__fail_sys(err, rel, NULL, "cannot read %s", entry);
	else if (S_ISREG(st.st_mode))
		rc = read_all(fd, &st, entry, rel, sh, err);
	else if (S_ISDIR(st.st_mode))
		rc = collect_dir(homefd, fd, entry, rel, depth, sh, err);
	else if (top)
		rc = refuse(err, entry, rel, S_ISSOCK(st.st_mode) ? "it is a socket" : "it is not a file or folder",
			    "share the files a tool reads");
	/* else: a fifo or device inside a folder is left out */
	close(fd);
	return rc;
}

/* kubectl: the servers a kubeconfig names, as host:port patterns. */
static int kube_hosts(const ows__share *sh, size_t from, ows__strv *hosts, ows_error *err)
{
	for (size_t i = from; i < sh->nfiles; i++) {
		const char *s = sh->files[i].data, *end = s + sh->files[i].len;
		while (s && s < end) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
			char line[1024];
			snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), s);
			char *k = strstr(line, "server:");
			if (k) {
				char *u = k + 7;
				u += strspn(u, " \t\"'");
				bool tls = strncmp(u, "https://", 8) == 0;
				if (tls || strncmp(u, "http://", 7) == 0) {
					u += tls ? 8 : 7;
					size_t hl = strcspn(u, "/\"' \t\r");
					u[hl] = '\0';
					int rc = strchr(u, ':') && u[0] != '['
						? ows__strv_push(hosts, u, err)
						: ows__strv_pushf(hosts, err, "%s:%d", u, tls ? 443 : 80);
					if (rc < 0)
						return rc;
				}
			}
			s = nl ? nl + 1 : NULL;
		}
	}
	return 0;
}

static int add_hosts(ows__strv *hosts, const char *list, ows_error *err)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		char h[256];
		snprintf(h, sizeof(h), "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
		int rc = ows__strv_push(hosts, h, err);
		if (rc < 0)
			return rc;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static bool wanted(const ows__strv *subset, const char *name)
{
	if (!subset->len)
		return true;
	for (size_t i = 0; i < subset->len; i++)
		if (strcmp(subset->v[i], name) == 0)
			return true;
	return false;
}

/* Toolchain bin folders a PATH needs when the host's PATH does not name them. */
static const char *const toolchain_bins[][2] = {
	{".cargo", ".cargo/bin"}, {".local/bin", ".local/bin"}, {"go", "go/bin"},
	{".deno", ".deno/bin"}, {".bun", ".bun/bin"}, {".volta", ".volta/bin"},
	{".pyenv", ".pyenv/shims"}, {".rbenv", ".rbenv/shims"}, {".local/pipx", ".local/bin"},
	{".asdf", ".asdf/shims"},
};

/*
 * Toolchains whose shims and proxies find their versions through their own
 * home, by default under HOME: under the private HOME they would look in an
 * empty folder.  When one is shared, its variable names the person's real
 * (read-only) folder.  CARGO_HOME so, too: rustup's proxies live in it, and
 * cargo's registry there is read-only (spec 003's known limit).
 */
static const char *const toolchain_homes[][2] = {
	{".rustup", "RUSTUP_HOME"}, {".cargo", "CARGO_HOME"},  {".pyenv", "PYENV_ROOT"},
	{".volta", "VOLTA_HOME"},   {".rbenv", "RBENV_ROOT"}, {".asdf", "ASDF_DATA_DIR"},
};

static int toolchain_home_env(const char *name, const char *real, ows__share *sh,
			      ows_error *err)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(toolchain_homes); i++)
		if (strcmp(toolchain_homes[i][0], name) == 0)
			return ows__strv_pushf(&sh->env, err, "%s=%s", toolchain_homes[i][1], real);
	return 0;
}

static int collect_toolchains(const ows_config *config, const ows_policy *policy,
			      const char *home, int homefd, ows__share *sh, ows_error *err)
{
	for (size_t i = 0; i < config->toolchains.len; i++) {
		const char *t = config->toolchains.v[i];
		if (!wanted(&policy->toolchains, t))
			continue;
		char path[4096];
		if (t[0] == '/')
			snprintf(path, sizeof(path), "%s", t);
		else
			snprintf(path, sizeof(path), "%s/%s", home, t);
		/* Offered only when present; a link out of the home is not followed. */
		int fd = t[0] == '/' ? open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				     : open_beneath(homefd, t, O_PATH | O_DIRECTORY);
		if (fd < 0)
			continue;
		close(fd);
		char *real = realpath(path, NULL);
		if (!real)
			continue;
		int rc = ows__check_folder_vs_home(real, home, err);
		if (rc == 0)
			rc = ows__strv_push(&sh->ro_dirs, real, err);
		if (rc == 0)
			rc = toolchain_home_env(t, real, sh, err);
		free(real);
		if (rc < 0)
			return rc;
		for (size_t b = 0; b < OWS__ARRAY_LEN(toolchain_bins); b++) {
			if (strcmp(toolchain_bins[b][0], t) != 0)
				continue;
			struct stat st;
			snprintf(path, sizeof(path), "%s/%s", home, toolchain_bins[b][1]);
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
			    (rc = ows__strv_push(&sh->path_dirs, path, err)) < 0)
				return rc;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- injecting */

static bool value_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-._~+/=", c));
}

static bool key_byte(char c)
{
	return value_byte(c) && c != '.' && c != '/' && c != '=' && c != '+';
}

/*
 * The next value of `key` in d[0..n) from *at: `key: v`, `key = v`,
 * `"key": "v"` (YAML, INI and .npmrc, JSON).  A value that names a variable
 * (`${NPM_TOKEN}`) is not a secret kept here, and is passed over.
 */
static bool next_value(const char *d, size_t n, size_t *at, const char *key, size_t *vs,
		       size_t *vl)
{
	size_t kl = strlen(key);
	for (size_t i = *at; i + kl <= n; i++) {
		if (memcmp(d + i, key, kl) != 0 || (i > 0 && key_byte(d[i - 1])))
			continue;
		size_t j = i + kl;
		if (j < n && (d[j] == '"' || d[j] == '\''))
			j++;
		while (j < n && (d[j] == ' ' || d[j] == '\t'))
			j++;
		if (j >= n || (d[j] != ':' && d[j] != '='))
			continue;
		j++;
		while (j < n && (d[j] == ' ' || d[j] == '\t'))
			j++;
		if (j < n && (d[j] == '"' || d[j] == '\''))
			j++;
		size_t e = j;
		while (e < n && value_byte(d[e]))
			e++;
		*at = e;
		if (e == j)
			continue; /* empty, or `${VAR}` */
		*vs = j;
		*vl = e - j;
		return true;
	}
	return false;
}

/* Secrets of npm's that are not tokens: shared as copies they would go in whole. */
static const char *const npm_other_secrets[] = {"_auth", "_password", "certfile", "keyfile"};

/* Each copy of `secret` in the entry's files [from, to) becomes the placeholder. */
static void swap_everywhere(ows__share *sh, size_t from, size_t to, const char *secret,
			    const char *placeholder, size_t len)
{
	for (size_t f = from; f < to; f++)
		if (!sh->files[f].dir)
			ows__inject_swap(sh->files[f].data, sh->files[f].len, secret, placeholder, len);
}

static int inject_hosts(ows__inject *inj, const ows__cred *c, const char *secret,
			const char *placeholder, size_t len, ows_error *err)
{
	int rc = 0;
	char text[300];
	for (const char *p = c->hosts; rc == 0 && p && *p;) {
		size_t n = strcspn(p, ",");
		snprintf(text, sizeof(text), "%.*s", (int)n, p);
		ows__pattern pat;
		if ((rc = ows__pattern_parse(text, &pat, err)) == 0)
			rc = ows__inject_add(inj, pat.host, pat.port, c->inject_header, secret,
					     placeholder, len, err);
		p = p[n] ? p + n + 1 : NULL;
	}
	for (size_t i = 0; rc == 0 && c->more_hosts && i < c->more_hosts->len; i++) {
		ows__pattern pat;
		if ((rc = ows__pattern_parse(c->more_hosts->v[i], &pat, err)) == 0)
			rc = ows__inject_add(inj, pat.host, pat.port, c->inject_header, secret,
					     placeholder, len, err);
	}
	return rc;
}

/*
 * One secret found, at `at` in a copy: its placeholder goes into the copies, the secret to
 * the injector.  It is taken out first, since the copies it stands in are rewritten.
 */
static int take_secret(ows__share *sh, size_t from, const ows__cred *c, const char *at,
		       size_t len, ows_error *err)
{
	char *secret = malloc(len), *placeholder = malloc(len);
	int rc = secret && placeholder ? 0
				       : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	if (rc == 0) {
		memcpy(secret, at, len);
		rc = ows__inject_placeholder(secret, len, placeholder, err);
	}
	if (rc == 0)
		rc = inject_hosts(sh->inject, c, secret, placeholder, len, err);
	if (rc == 0)
		swap_everywhere(sh, from, sh->nfiles, secret, placeholder, len);
	if (secret)
		mbedtls_platform_zeroize(secret, len);
	free(secret);
	free(placeholder);
	return rc;
}

/*
 * The entry's copies [from, nfiles) keep placeholders; its secrets go to
 * the session's injector, made with the first.  A secret it cannot find,
 * or one of a kind that cannot be injected, refuses the session: the
 * person asked for the secret to stay out, and a copy would take it in.
 */
static int inject_entry(const ows_config *config, const ows__cred *c, size_t from,
			ows__share *sh, ows_error *err)
{
	int rc = 0;
	if (!sh->inject && (rc = ows__inject_new(NULL, config->inject_ca, &sh->inject, err)) < 0)
		return rc;
	size_t found = 0, to = sh->nfiles;
	for (size_t f = from; rc == 0 && f < to; f++) {
		ows__file *file = &sh->files[f];
		if (file->dir)
			continue;
		for (size_t k = 0; strcmp(c->name, "npm") == 0 && k < OWS__ARRAY_LEN(npm_other_secrets);
		     k++) {
			size_t at = 0, vs, vl;
			if (next_value(file->data, file->len, &at, npm_other_secrets[k], &vs, &vl))
				return ows__fail(err, OWS_EINVAL, 0, c->name,
						 "log in with a token (npm login --auth-type=web), or "
						 "share npm as a copy",
						 "npm's file has %s, which cannot be injected: only "
						 "_authToken can", npm_other_secrets[k]);
		}
		if (!c->inject_key) {
			/* the whole file is the token, spaces around it aside */
			size_t s = 0, e = file->len;
			while (s < e && strchr(" \t\r\n", file->data[s]))
				s++;
			while (e > s && strchr(" \t\r\n", file->data[e - 1]))
				e--;
			for (size_t i = s; i < e; i++)
				if (!value_byte(file->data[i]))
					return ows__fail(err, OWS_EINVAL, 0, c->name,
							 "name the key that holds it: secret_key = ...",
							 "the file %s is not one token", file->path);
			if (e > s) {
				rc = take_secret(sh, from, c, file->data + s, e - s, err);
				found++;
			}
			continue;
		}
		size_t at = 0, vs, vl;
		while (rc == 0 && next_value(file->data, file->len, &at, c->inject_key, &vs, &vl)) {
			/* a second copy of a secret is its placeholder by now */
			if (ows__inject_is_placeholder(sh->inject, file->data + vs, vl))
				continue;
			rc = take_secret(sh, from, c, file->data + vs, vl, err);
			found++;
		}
	}
	if (rc == 0 && found == 0)
		rc = ows__fail(err, OWS_EINVAL, 0, c->name,
			       "check that the tool keeps its secret in the file (gh: gh auth login "
			       "--insecure-storage), or leave it out of [credentials] inject",
			       "no secret to inject was found in %s (%s)", c->path,
			       c->inject_key ? c->inject_key : "the whole file");
	return rc;
}

/* The session's CA, for the tools inside to trust the proxy's certificates for the
 * injected hosts, and the system's trust store with it for everything else. */
static int add_trust(ows__share *sh, const char *priv_home, ows_error *err)
{
	size_t blen = 0;
	char *bundle = ows__inject_bundle_pem(sh->inject, &blen, err);
	char *ca = bundle ? strdup(ows__inject_ca_pem(sh->inject)) : NULL;
	if (!bundle || !ca) {
		free(bundle);
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	int rc = add_file(sh, ".owsandbox", NULL, 0, true, err);
	if (rc == 0)
		rc = add_file(sh, ".owsandbox/ca.pem", ca, strlen(ca), false, err);
	else
		free(ca);
	if (rc == 0)
		rc = add_file(sh, ".owsandbox/ca-bundle.pem", bundle, blen, false, err);
	else
		free(bundle);
	static const char *const bundle_vars[] = {"SSL_CERT_FILE", "CURL_CA_BUNDLE",
						  "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO"};
	for (size_t i = 0; rc == 0 && i < OWS__ARRAY_LEN(bundle_vars); i++)
		rc = ows__strv_pushf(&sh->env, err, "%s=%s/.owsandbox/ca-bundle.pem",
				     bundle_vars[i], priv_home);
	/* Node keeps its own roots and adds these */
	if (rc == 0)
		rc = ows__strv_pushf(&sh->env, err, "NODE_EXTRA_CA_CERTS=%s/.owsandbox/ca.pem",
				     priv_home);
	return rc;
}

int ows__share_collect(const ows_config *config, const ows_policy *policy, const char *home,
		       const char *priv_home, ows__share *sh, ows_error *err)
{
	memset(sh, 0, sizeof(*sh));
	for (size_t i = 0; i < policy->credentials.len; i++)
		if (!ows__cred_enabled(config, policy->credentials.v[i]))
			return ows__fail(err, OWS_EINVAL, 0, policy->credentials.v[i],
					 "the person switches entries on in the machine's config "
					 "([credentials] enable)",
					 "this credential is not shared on this machine");
	if (!config->cred_enabled.len && !config->toolchains.len)
		return 0;
	if (!home)
		return ows__fail(err, OWS_EINVAL, 0, "credentials", "run as an account with a home",
				 "there is no home to share from");
	int homefd = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (homefd < 0)
		return ows__fail_sys(err, home, NULL, "cannot open the home");

	int rc = 0;
	ows__strv lets = {0};
	for (size_t i = 0; rc == 0 && i < config->cred_enabled.len; i++) {
		ows__cred c;
		if (!ows__cred_find(config, config->cred_enabled.v[i], &c) ||
		    !wanted(&policy->credentials, c.name))
			continue;
		struct stat st;
		if (fstatat(homefd, c.path, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
			continue; /* not on this machine: nothing to share */
		size_t from = sh->nfiles;
		if ((rc = collect(homefd, c.name, c.path, 0, true, sh, err)) < 0)
			break;
		if (ows__cred_injected(config, c.name) &&
		    (rc = inject_entry(config, &c, from, sh, err)) < 0)
			break;
		if (c.env)
			rc = ows__strv_pushf(&sh->env, err, "%s=%s/%s", c.env, priv_home,
					     c.env_leaf ? c.env_leaf : c.path);
		if (rc == 0 && c.hosts)
			rc = add_hosts(&sh->hosts, c.hosts, err);
		for (size_t h = 0; rc == 0 && c.more_hosts && h < c.more_hosts->len; h++)
			rc = ows__strv_push(&sh->hosts, c.more_hosts->v[h], err);
		if (rc == 0 && strcmp(c.name, "kubectl") == 0)
			rc = kube_hosts(sh, from, &sh->hosts, err);
		if (rc == 0)
			rc = ows__strv_push(&lets, c.lets, err);
	}
	/* an injected secret goes in nowhere: not in another entry's copy either */
	for (size_t i = 0; rc == 0 && sh->inject && i < sh->nfiles; i++)
		if (!sh->files[i].dir)
			ows__inject_hide(sh->inject, sh->files[i].data, sh->files[i].len);
	if (rc == 0 && sh->inject)
		rc = add_trust(sh, priv_home, err);
	if (rc == 0)
		rc = collect_toolchains(config, policy, home, homefd, sh, err);
	close(homefd);

	/* The agent learns what it can do, never where a credential is kept. */
	if (rc == 0 && (lets.len || sh->ro_dirs.len)) {
		size_t cap = 64;
		for (size_t i = 0; i < lets.len; i++)
			cap += strlen(lets.v[i]) + 8;
		cap += sh->ro_dirs.len * 24;
		char *text = malloc(cap);
		if (!text) {
			rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		} else {
			text[0] = '\0';
			for (size_t i = 0; i < lets.len; i++) {
				strcat(text, i ? "; " : "The person shared logins with this sandbox: you can ");
				strcat(text, lets.v[i]);
			}
			if (lets.len)
				strcat(text, ".");
			if (sh->ro_dirs.len)
				strcat(text, lets.len ? " The person's own toolchains are available read-only."
						      : "The person's own toolchains are available read-only.");
			sh->agent_text = text;
		}
	}
	ows__strv_free(&lets);
	if (rc < 0)
		ows__share_free(sh);
	return rc;
}

void ows__share_free(ows__share *sh)
{
	for (size_t i = 0; i < sh->nfiles; i++) {
		free(sh->files[i].path);
		free(sh->files[i].data);
	}
	free(sh->files);
	ows__strv_free(&sh->env);
	ows__strv_free(&sh->hosts);
	ows__strv_free(&sh->ro_dirs);
	ows__strv_free(&sh->path_dirs);
	free(sh->agent_text);
	ows__inject_free(sh->inject);
	memset(sh, 0, sizeof(*sh));
}

void ows__share_inject(ows_session *s, ows__share *sh)
{
	if (sh->inject && s->proxy) {
		ows__pxc_inject(s->proxy, sh->inject);
		sh->inject = NULL;
	}
}

int ows__env_add_share(ows__strv *env, const ows__share *sh, ows_error *err)
{
	/* each replaces the variable the host had: the copy, not the person's file */
	for (size_t i = 0; i < sh->env.len; i++) {
		int rc = ows__env_set_entry(env, sh->env.v[i], err);
		if (rc < 0)
			return rc;
	}
	if (!sh->path_dirs.len)
		return 0;
	/* The toolchains' bin folders go first in PATH, unless it names them already. */
	for (size_t i = 0; i < env->len; i++) {
		if (strncmp(env->v[i], "PATH=", 5) != 0)
			continue;
		size_t cap = strlen(env->v[i]) + 2;
		for (size_t d = 0; d < sh->path_dirs.len; d++)
			cap += strlen(sh->path_dirs.v[d]) + 1;
		char *path = malloc(cap);
		if (!path)
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		strcpy(path, "PATH=");
		for (size_t d = 0; d < sh->path_dirs.len; d++) {
			const char *dir = sh->path_dirs.v[d];
			size_t n = strlen(dir);
			const char *old = env->v[i] + 5;
			bool named = false;
			for (const char *q = old; q && *q;) {
				const char *c = strchr(q, ':');
				size_t l = c ? (size_t)(c - q) : strlen(q);
				named |= l == n && strncmp(q, dir, n) == 0;
				q = c ? c + 1 : NULL;
			}
			if (!named) {
				strcat(path, dir);
				strcat(path, ":");
			}
		}
		strcat(path, env->v[i] + 5);
		free(env->v[i]);
		env->v[i] = path;
		break;
	}
	return 0;
}

int ows_catalog_json(const ows_config *config, char **out, ows_error *err)
{
	ows_config defaults;
	int rc;
	if (!out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "out is NULL");
	*out = NULL;
	if (!config) {
		if ((rc = ows__config_machine(&defaults, err)) < 0)
			return rc;
	}
	const ows_config *c = config ? config : &defaults;
	struct passwd *pw = getpwuid(getuid());
	const char *home = pw ? pw->pw_dir : NULL;
	int homefd = home ? open(home, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	json_t *entries = json_array();
	ows__cred e;
	for (size_t i = 0; ows__cred_at(c, i, &e); i++) {
		struct stat st;
		bool found = homefd >= 0 && fstatat(homefd, e.path, &st, AT_SYMLINK_NOFOLLOW) == 0;
		json_t *hosts = json_array();
		for (const char *h = e.hosts; h && *h;) {
			const char *end = strchr(h, ',');
			json_array_append_new(hosts, json_stringn(h, end ? (size_t)(end - h) : strlen(h)));
			h = end ? end + 1 : NULL;
		}
		for (size_t k = 0; e.more_hosts && k < e.more_hosts->len; k++)
			json_array_append_new(hosts, json_string(e.more_hosts->v[k]));
		if (strcmp(e.name, "kubectl") == 0)
			json_array_append_new(hosts, json_string("(the servers named in the kubeconfig)"));
		json_array_append_new(
			entries,
			json_pack("{s:s, s:s, s:s, s:s, s:o, s:b, s:b, s:s?, s:b, s:s?, s:s?}", "name",
				  e.name, "label", e.label, "path", e.path, "kind",
				  e.credential ? "credential" : "configuration", "hosts", hosts, "found",
				  found, "shared", ows__cred_enabled(c, e.name), "variable", e.env,
				  "injected", ows__cred_injected(c, e.name), "inject_header",
				  e.inject_header, "cannot_inject", e.no_inject));
	}
	json_t *tools = json_array();
	for (size_t i = 0; ows__toolchain_at(i); i++) {
		const char *t = ows__toolchain_at(i);
		struct stat st;
		bool found = homefd >= 0 && fstatat(homefd, t, &st, 0) == 0 && S_ISDIR(st.st_mode);
		bool on = false;
		for (size_t k = 0; k < c->toolchains.len; k++)
			on |= strcmp(c->toolchains.v[k], t) == 0;
		json_array_append_new(tools, json_pack("{s:s, s:b, s:b}", "path", t, "found", found,
						       "shared", on));
	}
	if (homefd >= 0)
		close(homefd);
	json_t *root = json_pack("{s:o, s:o}", "credentials", entries, "toolchains", tools);
	*out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	if (!config)
		ows__config_release(&defaults);
	return *out ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
}

int ows__share_ssh_proxy(ows__share *sh, const char *tunnel_cmd, ows_error *err)
{
	bool has_ssh = false;
	ows__file *config = NULL;
	for (size_t i = 0; i < sh->nfiles; i++) {
		has_ssh |= strcmp(sh->files[i].path, ".ssh") == 0;
		if (strcmp(sh->files[i].path, ".ssh/config") == 0 && !sh->files[i].dir)
			config = &sh->files[i];
	}
	if (!has_ssh)
		return 0;
	/* First obtained value wins in ssh_config: this block comes before the person's. */
	char head[4400];
	int n = snprintf(head, sizeof(head),
			 "# owsandbox: the only way out is the session's proxy\n"
			 "Host *\n  ProxyCommand %s\n  IdentityAgent none\n\n", tunnel_cmd);
	size_t old = config ? config->len : 0;
	char *data = malloc((size_t)n + old + 1);
	if (!data)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	memcpy(data, head, (size_t)n);
	if (config)
		memcpy(data + n, config->data, old);
	data[(size_t)n + old] = '\0';
	if (config) {
		free(config->data);
		config->data = data;
		config->len = (size_t)n + old;
		return 0;
	}
	return add_file(sh, ".ssh/config", data, (size_t)n, false, err);
}

/* The owsbx this host runs, or the first on its PATH; NULL when there is none. */
char *ows__find_owsbx(void)
{
	char self[4096];
#ifdef __APPLE__
	uint32_t size = sizeof(self);
	ssize_t n = _NSGetExecutablePath(self, &size) == 0 ? (ssize_t)strlen(self) : -1;
#else
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
#endif
	if (n > 0) {
		self[n] = '\0';
		const char *base = strrchr(self, '/');
		if (base && strcmp(base + 1, "owsbx") == 0)
			return strdup(self);
	}
	const char *path = getenv("PATH");
	for (const char *d = path; d && *d;) {
		const char *end = strchr(d, ':');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		char cand[4096];
		if (len && len < sizeof(cand) - 8 && d[0] == '/') {
			snprintf(cand, sizeof(cand), "%.*s/owsbx", (int)len, d);
			if (access(cand, X_OK) == 0)
				return realpath(cand, NULL);
		}
		d = end ? end + 1 : NULL;
	}
	return NULL;
}

int ows__share_apply(ows_session *s, ows__share *sh, ows_error *err)
{
	int rc = ows__env_add_share(&s->env, sh, err);
	/* nor in a variable, whatever its name */
	for (size_t i = 0; sh->inject && i < s->env.len; i++)
		ows__inject_hide(sh->inject, s->env.v[i], strlen(s->env.v[i]));
	if (rc == 0 && sh->agent_text) {
		free(s->agent_text);
		s->agent_text = sh->agent_text;
		sh->agent_text = NULL;
	}
	return rc;
}

/* The folders above `path` (relative to hfd), 0700; those that exist are kept. */
static void mkdir_parents_at(int hfd, const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdirat(hfd, buf, 0700);
		*p = '/';
	}
}

/* Writes the copies into the private home `priv_home` (which exists), owner-only; the
 * folders above a copy (~/.config of ~/.config/gh) are made as needed. */
int ows__share_write(const char *priv_home, const ows__share *sh, ows_error *err)
{
	int hfd = open(priv_home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (hfd < 0)
		return ows__fail_sys(err, priv_home, NULL, "cannot open the private home");
	int rc = 0;
	for (size_t i = 0; i < sh->nfiles && rc == 0; i++) {
		const ows__file *f = &sh->files[i];
		mkdir_parents_at(hfd, f->path);
		if (f->dir) {
			if (mkdirat(hfd, f->path, 0700) != 0 && errno != EEXIST)
				rc = ows__fail_sys(err, f->path, NULL, "cannot copy a shared folder");
			continue;
		}
		int fd = openat(hfd, f->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd < 0 || ows__plat_write_all(fd, f->data, f->len) != 0)
			rc = ows__fail_sys(err, f->path, NULL, "cannot copy a shared file");
		if (fd >= 0)
			close(fd);
	}
	close(hfd);
	return rc;
}
