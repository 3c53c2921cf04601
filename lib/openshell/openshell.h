/*
 * The `openshell` provider (spec 002; the OpenShell parts of 001): one
 * NVIDIA OpenShell sandbox per session, driven through the `openshell` CLI as
 * it is, from a pinned base image, with a policy rendered from the session.
 *
 *   policy.c    the renderer: the session -> OpenShell's policy document and
 *               the `openshell sandbox create` arguments (portable C, golden-tested)
 *   sandbox.c   the provider: create, exec with the stream, policy update, delete
 *   runner.c    the tool runner mounted as the main command (a static Linux owsbx), and
 *               the proof it runs from inside through `sandbox exec`
 *   machine.c   status rows (command / hint / docs), the plan and setup's steps: the
 *               admin prefix, linger, NVIDIA's installer, the gateway's bind-mount
 *               setting, the image pull
 *
 * Plain POSIX: built on Linux, and for macOS (OpenShell runs there with Docker).
 */
#ifndef OWS_OPENSHELL_H
#define OWS_OPENSHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

/* The OpenShell release and the base image this provider is tested against. */
#define OWS__OS_VERSION "0.0.116"

/* The network profiles of spec 002: strict (code hosts and registries),
 * standard (strict plus the search APIs), open (any host, which OpenShell cannot
 * express), and none: no endpoint at all, which OpenShell's proxy reads as nothing allowed. */
typedef enum ows__os_profile {
	OWS__OS_STRICT,
	OWS__OS_STANDARD,
	OWS__OS_OPEN,
	OWS__OS_NONE,
} ows__os_profile;

/*
 * Where the tool runner is mounted in the sandbox, alone (a file mount): at a
 * path of its own, so that no folder of the image is hidden by the host's.
 * Its folder is read-only in the policy; the main command is "RUNNER runner".
 */
#define OWS__OS_RUNNER_DIR "/opt/owsbx"
#define OWS__OS_RUNNER_PATH OWS__OS_RUNNER_DIR "/owsbx"

typedef struct ows__os_spec {
	const char *name;          /* the sandbox's name: owsbx-<session id> */
	const char *image;         /* the pinned base image */
	const ows__folder *folders; /* bind mounts at the same absolute paths, ro where ro */
	size_t nfolders;
	uid_t uid;                 /* the user that owns them, who runs inside */
	gid_t gid;
	ows__os_profile profile;
	const char *const *hosts;  /* more allowed host[:port] patterns: the machine's and the
				      session's sites, the shared credentials' hosts; NULL-ended;
				      none with OWS__OS_NONE */
	const char *runner;        /* the tool runner on the host: a static Linux owsbx, mounted
				      read-only at OWS__OS_RUNNER_PATH and started as the main
				      command */
	const char *policy_path;   /* where the caller writes `policy`: `sandbox create` takes the
				      policy as a file (--policy, crates/openshell-cli/src/main.rs) */
} ows__os_spec;

typedef struct ows__os_render {
	char *policy;              /* the policy document, in OpenShell's own format */
	ows__strv create_args;     /* argv after `openshell`, for `sandbox create`: --name, --from,
				      --policy, the bind mounts as --driver-config-json (a mount is
				      not part of OpenShell's policy; the gateway needs
				      enable_bind_mounts = true), --no-auto-providers, then
				      "--" and the main command, last */
} ows__os_render;

/* OWS_EINVAL naming a deny entry ("!host"), which OpenShell's policy cannot express; else 0. */
OWS__HIDDEN int ows__os_refuse_deny(const char *pattern, ows_error *err);
/* Renders `spec` into *out (freed with ows__os_render_free, also after a failure). */
OWS__HIDDEN int ows__os_render_spec(const ows__os_spec *spec, ows__os_render *out,
				    ows_error *err);
OWS__HIDDEN void ows__os_render_free(ows__os_render *r);

#endif /* OWS_OPENSHELL_H */
