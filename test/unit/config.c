/* The machine's config: INI, unknown keys and bad values refused with the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

static char path[] = "/tmp/owstest-config-XXXXXX";

static int load(const char *text, ows_config **c, ows_error *err)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	ows_error_clear(err);
	return ows_config_load(path, c, err);
}

int main(void)
{
	ows_error err;
	ows_config *c = NULL;
	int fd = mkstemp(path);
	ok(fd >= 0, "temp file");
	close(fd);

	is_int(load("[sandbox]\nprovider = direct\nnetwork = open\nhosts = a.example:443, b.example\n"
		    "private_root = /var/tmp\n[landlock]\nroot_runs_as = daemon\n"
		    "[account]\nclosed_user = owstest_c\n", &c, &err), 0, "a full config loads");
	is_str(c->provider, "direct", "provider");
	is_int(c->net, OWS_NET_OPEN, "network");
	is_int((int)c->hosts.len, 2, "two hosts");
	is_str(c->hosts.v[1], "b.example", "hosts split on commas");
	is_str(c->private_root, "/var/tmp", "private_root");
	is_str(c->root_runs_as, "daemon", "root_runs_as");
	is_str(c->closed_user, "owstest_c", "closed_user");
	is_str(c->open_user, "owsandbox-open", "unset keys keep their defaults");
	is_str(ows_config_path(c), path, "it says which file it read");
	ows_config_free(c);

	is_int(load("[sandbox]\nhosts = a.example, *.b.example\ndeny = x.a.example, !y.b.example:22\n",
		    &c, &err), 0, "deny beside hosts loads");
	ok(c->hosts.len == 4 && strcmp(c->hosts.v[2], "!x.a.example") == 0 &&
		   strcmp(c->hosts.v[3], "!y.b.example:22") == 0,
	   "its entries join the hosts as deny entries, a '!' given or not");
	ows_config_free(c);
	is_int(load("[sandbox]\ndeny = git.example+private\n", &c, &err), OWS_ECONFIG,
	       "a deny entry with +private is refused when the file is read");
	ok(strstr(err.what, "deny") && strstr(err.hint, "+private"), "naming the key and why (%s; %s)",
	   err.what, err.hint);

	is_int(load("[limits]\nmemory_mb = 2048\nprocesses = 512\ntmpfs_mb = 256\n", &c, &err), 0,
	       "[limits] loads");
	ok(c->default_memory_mb == 2048 && c->default_processes == 512 && c->default_tmpfs_mb == 256,
	   "memory_mb, processes and tmpfs_mb are read");
	ows_config_free(c);
	is_int(load("[limits]\nprocesses = 0\n", &c, &err), OWS_ECONFIG, "[limits] refuses zero");
	is_int(load("[limits]\nmemory_mb = -5\n", &c, &err), OWS_ECONFIG, "... a negative number");
	is_int(load("[limits]\ntmpfs_mb = 1g\n", &c, &err), OWS_ECONFIG, "... a unit");
	is_int(load("[limits]\ncpu = 5\n", &c, &err), OWS_ECONFIG, "... and an unknown key");
	ok(strstr(err.hint, "tmpfs_mb") != NULL, "naming the keys it has (%s)", err.hint);
	is_int(load("[sandbox]\n", &c, &err), 0, "an empty [sandbox] loads");
	ok(c->default_memory_mb == 0 && c->default_processes == 0 && c->default_tmpfs_mb == 0,
	   "no [limits]: the built-in defaults (0 here)");
	ok(!c->open_unscoped, "open_without_scopes: refuse by default");
	ows_config_free(c);
	is_int(load("[sandbox]\nopen_without_scopes = partial\n", &c, &err), 0,
	       "open_without_scopes = partial loads");
	ok(c->open_unscoped, "and chooses partial");
	ows_config_free(c);
	is_int(load("[sandbox]\nopen_without_scopes = refuse\n", &c, &err), 0,
	       "open_without_scopes = refuse loads");
	ok(!c->open_unscoped, "and refuses");
	ows_config_free(c);
	is_int(load("[sandbox]\nopen_without_scopes = yes\n", &c, &err), OWS_ECONFIG,
	       "open_without_scopes takes only refuse or partial");

	is_int(load("[openshell]\n", &c, &err), 0, "an empty [openshell] loads");
	ok(!c->os_standard, "the OpenShell profile is strict by default");
	ows_config_free(c);
	is_int(load("[openshell]\nprofile = standard\n", &c, &err), 0, "[openshell] profile = standard loads");
	ok(c->os_standard, "and chooses standard");
	ows_config_free(c);
	is_int(load("[openshell]\nprofile = strict\n", &c, &err), 0, "[openshell] profile = strict loads");
	ok(!c->os_standard, "and chooses strict");
	ows_config_free(c);
	is_int(load("[openshell]\nprofile = open\n", &c, &err), OWS_ECONFIG,
	       "[openshell] profile takes only strict or standard");

	is_int(load("[guard]\nprotect = default, .tool-versions\n", &c, &err), 0, "[guard] protect loads");
	ok(c->protect_set && c->protect.len == 2, "its names, `default` among them");
	ows_config_free(c);
	is_int(load("[guard]\nprotect = ../up\n", &c, &err), OWS_ECONFIG,
	       "a protected name outside the folder is refused");
	is_int(load("[sandbox]\ncolour = blue\n", &c, &err), OWS_ECONFIG, "unknown key refused");
	ok(strstr(err.what, "colour") != NULL, "the error names it");
	is_int(load("[sandbox]\nnetwork = maybe\n", &c, &err), OWS_ECONFIG, "bad value refused");
	is_int(load("[sandbox]\nprivate_root = relative\n", &c, &err), OWS_ECONFIG,
	       "relative private_root refused");
	is_int(load("[account]\nclosed_user = ../x\n", &c, &err), OWS_ECONFIG, "unsafe account name refused");
	is_int(load("[sandbox]\nthis is not ini\n", &c, &err), OWS_ECONFIG, "syntax error refused");
	ok(strstr(err.where, "line 2") != NULL, "at line 2");
	ok(c == NULL, "nothing returned on error");

	ows_error_clear(&err);
	is_int(ows_config_load("/nonexistent/owstest.ini", &c, &err), OWS_ECONFIG,
	       "a missing named file is an error");
	unlink(path);
	return done_testing();
}
