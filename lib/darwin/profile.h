/*
 * The Seatbelt profile of a `seatbelt` session (lib/darwin/profile.c).
 *
 * Portable C with no macOS header: the golden and model tests build it on
 * Linux (test/darwin/), and the macOS library builds the same file.
 *
 * The profile's text depends only on the session's shape (its network mode,
 * the proxy's port, the kinds of its paths in order of depth, how many
 * distinct folders lie above them, how many guarded names); every path
 * reaches Seatbelt as a
 * parameter (`sandbox-exec -D NAME=VALUE`, the same as the `parameters` of
 * sandbox_init_with_parameters) and is named in the text as (param "NAME").
 * No folder name, whatever bytes it holds (a quote, a newline, a
 * parenthesis), is ever spliced into the text, so none can change what the
 * profile says.
 */
#ifndef OWS_DARWIN_PROFILE_H
#define OWS_DARWIN_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

typedef struct ows__sb_path {
	const char *path;  /* absolute and canonical as the kernel sees it: /private/tmp, not /tmp */
	bool writable;     /* read and write, else read only */
	bool file;         /* one file (a literal), else the folder and all below it (a subpath) */
} ows__sb_path;

typedef struct ows__sb_spec {
	ows_net net;
	int proxy_port;            /* allowlist: the session proxy's port on the loopback */
	const char *private_dir;   /* read and write: the sandbox's home, tmp and tool caches */
	const ows__sb_path *paths; /* the session's folders, then what is shared read only
				      (toolchains, git's settings, the runner) */
	size_t npaths;
	/*
	 * Lifetime (lib/darwin/sandbox.c): two paths that exist nowhere, fresh
	 * random per session.  This profile alone lets a process look up
	 * marker_allow and refuses marker_deny, so sandbox_check() on a pid
	 * tells this session's processes from every other process of the
	 * person, sandboxed or not.
	 */
	const char *marker_allow;
	const char *marker_deny;
	/*
	 * The guard (lib/posix/guard.c's list, planned by the provider): names
	 * inside a writable folder that the person's own tools run later
	 * (.git/config, .git/hooks, .bashrc...).  Writes to them are refused
	 * after the folder's grant, and the folders between the writable folder
	 * and each name (.git) cannot be removed or renamed away.  A name here
	 * that does not exist cannot be created either: name what exists, as
	 * Linux binds only what exists.  `writable` is ignored.
	 */
	const ows__sb_path *guarded;
	size_t nguarded;
} ows__sb_spec;

typedef struct ows__sb_profile {
	char *text;       /* the SBPL profile */
	ows__strv params; /* "NAME=VALUE", in order: one `-D` each */
} ows__sb_profile;

/*
 * Renders the profile of `spec` into *out (freed with ows__sb_profile_free,
 * also after a failure).  Refuses (OWS_EINVAL) a path that is not absolute,
 * has an empty, "." or ".." component, is the root, or lies under /tmp,
 * /var or /etc (links into /private, which Seatbelt never sees); a private folder or
 * a marker missing; a proxy port out of range in allowlist; a network mode
 * other than none, allowlist or open; a guarded name outside every
 * writable folder.
 */
OWS__HIDDEN int ows__sb_render(const ows__sb_spec *spec, ows__sb_profile *out, ows_error *err);
OWS__HIDDEN void ows__sb_profile_free(ows__sb_profile *p);

#endif /* OWS_DARWIN_PROFILE_H */
