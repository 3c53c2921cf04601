/*
 * What sandbox.c and machine.c share of the `openshell` CLI: running it (and
 * docker) as a child, and the facts a session needs before it may open.
 * The CLI as read in NVIDIA/OpenShell: .agents/skills/openshell-cli/cli-reference.md,
 * crates/openshell-cli/src/main.rs; the gateway's config in
 * docs/reference/gateway-config.mdx and docs/reference/sandbox-compute-drivers.mdx.
 */
#ifndef OWS_OPENSHELL_OSCLI_H
#define OWS_OPENSHELL_OSCLI_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

/*
 * The base image sandboxes are created from (~5 GB), pulled once with docker.
 * Pinned by digest, never `:latest`: every machine runs the same bytes, and a
 * new image is a change here that the tests see.  This is the digest public
 * projects pinned the community base image at when this was written; not
 * checked here against the 0.0.116 release (no registry is reachable).
 */
#define OWS__OS_IMAGE                                                                     \
	"ghcr.io/nvidia/openshell-community/sandboxes/base@sha256:"                       \
	"aeef1c63f00e2913ea002ccb3aaf925f338b5c5d70e63576f0d95c16a138044e"
/* NVIDIA's installer (docs/about/installation.mdx); OPENSHELL_VERSION pins the release. */
#define OWS__OS_INSTALLER "https://raw.githubusercontent.com/NVIDIA/OpenShell/main/install.sh"
#define OWS__OS_DOCS "https://docs.nvidia.com/openshell/"

/*
 * Runs argv (argv[0] looked up in PATH) with stdin from /dev/null and stderr
 * discarded; its stdout, when `out` is given, into out (NUL-ended, cut at
 * outlen).  Returns its exit status (0-255), 128+N for a signal, or -1 when
 * it could not start.  No shell.
 */
OWS__HIDDEN int ows__os_cmd(const char *const argv[], char *out, size_t outlen);

/* What this machine has of OpenShell, as a session needs it (spec 002). */
typedef struct ows__os_facts {
	bool installed;        /* `openshell --version` answers */
	char version[64];      /* what it said, trimmed */
	bool gateway;          /* `openshell status` exits 0 */
	bool bind_mounts;      /* enable_bind_mounts = true in a driver table of gateway.toml */
	bool image;            /* `docker image inspect OWS__OS_IMAGE` exits 0 */
	bool linger;           /* systemd keeps this user's manager running after logout */
	char gateway_toml[PATH_MAX];
	char user[64];
} ows__os_facts;

OWS__HIDDEN void ows__os_facts_read(ows__os_facts *f);
/* The first thing missing for a session as a refusal (OWS_EUNSUPPORTED) naming the one
 * thing to do; 0 when nothing is. */
OWS__HIDDEN int ows__os_refuse(const ows__os_facts *f, ows_error *err);

/* `sudo -n`, `pkexec` or "" (hand the step over): see machine.c. */
OWS__HIDDEN const char *ows__os_admin_prefix(void);
/* The status rows of `--provider openshell` as JSON {"provider", "rows"}; returns how many
 * fail, or a negative code. */
OWS__HIDDEN int ows__os_status_json(char **out, ows_error *err);

/* The static Linux owsbx beside owsbx for this machine's arch (runner.c): its path into
 * *out (caller frees), or OWS_ECONFIG naming what is missing. */
OWS__HIDDEN int ows__os_find_runner(char **out, ows_error *err);

/* What the proof from inside checks (runner.c). */
typedef struct ows__os_proof {
	const char *name;           /* the sandbox */
	const char *id;             /* the session's id, for the file planted in the home */
	const char *home;           /* the person's home, whose files must be absent */
	const char *network;        /* the mode's name, for the report */
	bool none;                  /* network none: a listed registry must be refused too */
	const ows__folder *folders; /* each reachable as its access says */
	size_t nfolders;
} ows__os_proof;

/* Runs the runner's probe through `openshell sandbox exec` and judges it: the report into
 * *proof_json (caller frees; set on a failed proof too), OWS_EVERIFY naming the first failed
 * check. */
OWS__HIDDEN int ows__os_prove(const ows__os_proof *p, char **proof_json, ows_error *err);

#endif /* OWS_OPENSHELL_OSCLI_H */
