/*
 * The credential catalog: the logins a person may share with the sandbox on
 * purpose, all off until the machine's config switches them on.  Each entry
 * knows where its tool keeps the login, the variable the tool reads to find
 * a copy, the hosts the tool talks to, and what it lets the agent do, in
 * words for the agent (never where the credential is kept).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Injecting ([credentials] inject) needs a bearer secret the tool sends as
 * it is in one header; the entries that have none say why.
 */
#define NO_SECRET "it holds settings, not a secret"
static const ows__cred builtin[] = {
	{"ssh", "SSH keys", ".ssh", true, NULL, NULL, "github.com:22,gitlab.com:22", NULL,
	 "push and pull over SSH, and log in to servers, as the person", NULL, NULL,
	 "an SSH key signs inside ssh's own encrypted handshake, which the proxy cannot open, "
	 "and the key itself never travels"},
	{"gh", "GitHub CLI", ".config/gh", true, "GH_CONFIG_DIR", NULL,
	 "api.github.com:443,github.com:443", NULL,
	 "open pull requests, issues and releases with gh as the person", "Authorization",
	 "oauth_token", NULL},
	{"aws-config", "AWS profiles", ".aws/config", false, "AWS_CONFIG_FILE", NULL,
	 "*.amazonaws.com:443", NULL, "use the person's AWS regions and profile names (no keys)",
	 NULL, NULL, NO_SECRET},
	{"aws-credentials", "AWS credentials", ".aws/credentials", true,
	 "AWS_SHARED_CREDENTIALS_FILE", NULL, "*.amazonaws.com:443", NULL,
	 "use AWS with the person's access keys", NULL, NULL,
	 "AWS signs every request with the secret key (SigV4) where the tool runs; the key is "
	 "never sent, so there is no header to put it in"},
	{"kubectl", "kubectl", ".kube/config", true, "KUBECONFIG", NULL, NULL, NULL,
	 "reach the person's Kubernetes clusters with kubectl", NULL, NULL,
	 "kubeconfig logins are client certificates or exec plugins, and its servers are known "
	 "only from the file"},
	{"npm", "npm", ".npmrc", true, "NPM_CONFIG_USERCONFIG", NULL, "registry.npmjs.org:443", NULL,
	 "install and publish private npm packages as the person", "Authorization", "_authToken",
	 NULL},
	{"docker", "Docker registries", ".docker/config.json", true, "DOCKER_CONFIG", ".docker",
	 "registry-1.docker.io:443,auth.docker.io:443,ghcr.io:443", NULL,
	 "push and pull images with the registry logins saved in the person's Docker config", NULL,
	 NULL,
	 "Docker sends the login base64-encoded inside a Basic header and trades it for a token, "
	 "or asks a credential helper"},
	{"gcloud", "gcloud", ".config/gcloud", true, "CLOUDSDK_CONFIG", NULL,
	 "*.googleapis.com:443,accounts.google.com:443", NULL,
	 "use the person's Google Cloud accounts and projects", NULL, NULL,
	 "gcloud trades a refresh token for short-lived ones and signs with service-account keys "
	 "where it runs"},
	{"terraform", "Terraform Cloud", ".terraform.d/credentials.tfrc.json", true, NULL, NULL,
	 "app.terraform.io:443,registry.terraform.io:443,releases.hashicorp.com:443", NULL,
	 "run plans and read state in Terraform Cloud as the person", "Authorization", "token",
	 NULL},
	/* git's own settings travel the same way, as configuration. */
	{"gitconfig", "git settings", ".gitconfig", false, NULL, NULL, NULL, NULL,
	 "commit with the person's name and git settings", NULL, NULL, NO_SECRET},
	{"git-config-dir", "git settings folder", ".config/git", false, NULL, NULL, NULL, NULL,
	 "use the person's git settings", NULL, NULL, NO_SECRET},
};

static const char *const toolchains[] = {
	".nvm", ".volta", ".bun", ".deno", ".pyenv", ".rbenv", ".asdf", ".sdkman", ".cargo",
	".rustup", ".local/bin", ".local/share/uv", ".local/share/mise", ".local/pipx", "go",
};

bool ows__cred_at(const ows_config *config, size_t i, ows__cred *out)
{
	if (i < OWS__ARRAY_LEN(builtin)) {
		*out = builtin[i];
		return true;
	}
	i -= OWS__ARRAY_LEN(builtin);
	if (!config || i >= config->ncustom)
		return false;
	const struct ows__cred_custom *c = &config->custom[i];
	*out = (ows__cred){
		.name = c->name, .label = c->name, .path = c->path, .credential = c->credential,
		.env = c->env, .more_hosts = &c->hosts,
		.lets = c->lets ? c->lets : c->credential ? "use a login the person shared"
							  : "use settings the person shared",
		.inject_header = c->credential ? (c->header ? c->header : "Authorization") : NULL,
		.inject_key = c->secret_key,
		.no_inject = c->credential ? NULL : NO_SECRET,
	};
	return true;
}

bool ows__cred_find(const ows_config *config, const char *name, ows__cred *out)
{
	ows__cred c;
	for (size_t i = 0; ows__cred_at(config, i, &c); i++)
		if (strcmp(c.name, name) == 0) {
			*out = c;
			return true;
		}
	return false;
}

bool ows__cred_enabled(const ows_config *config, const char *name)
{
	for (size_t i = 0; config && i < config->cred_enabled.len; i++)
		if (strcmp(config->cred_enabled.v[i], name) == 0)
			return true;
	return false;
}

bool ows__cred_injected(const ows_config *config, const char *name)
{
	for (size_t i = 0; config && i < config->cred_inject.len; i++)
		if (strcmp(config->cred_inject.v[i], name) == 0)
			return true;
	return false;
}

const char *ows__toolchain_at(size_t i)
{
	return i < OWS__ARRAY_LEN(toolchains) ? toolchains[i] : NULL;
}

bool ows__home_path_is_safe(const char *s)
{
	if (!s || !*s || s[0] == '/' || strcmp(s, ".") == 0)
		return false;
	for (const char *p = s; *p;) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.') || (n == 1 && p[0] == '.'))
			return false;
		p += n + (end ? 1 : 0);
		if (end && !*p)
			return false; /* a trailing slash */
	}
	return true;
}
