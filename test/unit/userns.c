/*
 * Why the sandbox's user namespace was refused, from the facts /proc gives:
 * each cause named, each with the one command that fixes it, and never the
 * advice to turn a restriction off.  The facts are values here (the shell
 * tests make the kernel refuse for real: test/sh/userns_causes.sh); this is
 * the wording of the cases this machine cannot produce, Ubuntu's first.
 */
#include <errno.h>
#include <string.h>

#include "linux/linux.h"
#include "tap.h"

static ows__userns_facts facts(int step, int err)
{
	ows__userns_facts f;
	memset(&f, 0, sizeof(f));
	f.step = step;
	f.err = err;
	f.max_user_namespaces = 63000;
	f.unprivileged_userns_clone = -1;
	f.apparmor_restrict = -1;
	f.seccomp = 0;
	strcpy(f.exe, "/usr/bin/python3.12");
	return f;
}

static char why[512], fix[256];

static void explain(const ows__userns_facts *f)
{
	ows__userns_explain(f, why, sizeof(why), fix, sizeof(fix));
}

/* No case advises switching a restriction off. */
static void never_off(const char *what)
{
	ok(!strstr(fix, "sysctl") && !strstr(fix, "=0") && !strstr(why, "sysctl -w"),
	   "%s: the fix does not turn anything off (%s)", what, fix);
}

int main(void)
{
	ows__userns_facts f = facts(OWS__USERNS_UID_MAP, EPERM);
	f.apparmor_restrict = 1;
	f.label[0] = '\0';
	strcpy(f.label, "unconfined");
	explain(&f);
	ok(strstr(why, "Ubuntu's AppArmor restriction") != NULL, "AppArmor: named (%s)", why);
	ok(strstr(why, "kernel.apparmor_restrict_unprivileged_userns") != NULL, "with its setting");
	ok(strstr(why, "writing its uid_map: Operation not permitted") != NULL, "and the step");
	is_str(fix, "grant this program user namespaces: owsbx apparmor-profile /usr/bin/python3.12 "
		    "| sudo tee /etc/apparmor.d/owsbx-python3.12 && sudo apparmor_parser -r "
		    "/etc/apparmor.d/owsbx-python3.12",
	       "AppArmor: the fix grants the host program itself");
	never_off("AppArmor");

	strcpy(f.exe, "/usr/local/bin/owsbx");
	f.step = OWS__USERNS_LOOPBACK;
	explain(&f);
	ok(strstr(fix, "owsbx apparmor-profile /usr/local/bin/owsbx | sudo tee /etc/apparmor.d/owsbx "
		       "&& sudo apparmor_parser -r /etc/apparmor.d/owsbx") != NULL,
	   "AppArmor, owsbx itself: its profile is named owsbx (%s)", fix);
	ok(strstr(why, "bringing loopback up") != NULL, "the loopback step, bwrap's RTM_NEWADDR");

	f = facts(OWS__USERNS_GID_MAP, EPERM);
	strcpy(f.label, "steam (complain)");
	explain(&f);
	ok(strstr(why, "AppArmor profile steam gives it user namespaces without capabilities") != NULL,
	   "a profile of its own: named (%s)", why);
	ok(strstr(fix, "add `userns,` to the profile steam") != NULL, "and the rule to add");
	never_off("own profile");

	f = facts(OWS__USERNS_MOUNT, EPERM);
	explain(&f);
	ok(strstr(why, "created without the capabilities") != NULL &&
		   strstr(why, "mounting a tmpfs") != NULL,
	   "without AppArmor: created without capabilities, the step named (%s)", why);
	ok(strstr(fix, "account provider") != NULL, "the fix: the account provider");

	f = facts(OWS__USERNS_CLONE, ENOSPC);
	f.max_user_namespaces = 0;
	explain(&f);
	ok(strstr(why, "switched off here (user.max_user_namespaces is 0)") != NULL,
	   "ENOSPC, limit 0: switched off (%s)", why);
	ok(strstr(fix, "sudo owsbx machine sandbox setup") != NULL, "the fix: set up the account provider");
	never_off("ENOSPC");
	f.max_user_namespaces = 5;
	explain(&f);
	ok(strstr(why, "limit of user namespaces is reached") != NULL, "ENOSPC, limit 5: reached (%s)", why);

	f = facts(OWS__USERNS_CLONE, EPERM);
	f.unprivileged_userns_clone = 0;
	explain(&f);
	ok(strstr(why, "Debian's kernel.unprivileged_userns_clone is 0") != NULL,
	   "EPERM, Debian's knob at 0: named (%s)", why);
	never_off("Debian's knob");

	f = facts(OWS__USERNS_CLONE, EPERM);
	f.unprivileged_userns_clone = 1;
	f.seccomp = 2;
	explain(&f);
	ok(strstr(why, "seccomp filter") != NULL && strstr(why, "Docker") != NULL,
	   "EPERM under a filter: seccomp, as in Docker (%s)", why);

	f = facts(OWS__USERNS_CLONE, EPERM);
	strcpy(f.label, "snap.foo.bar (enforce)");
	explain(&f);
	ok(strstr(why, "AppArmor profile snap.foo.bar does not allow user namespaces") != NULL,
	   "EPERM under a confining profile: named (%s)", why);

	f = facts(OWS__USERNS_CLONE, EPERM);
	explain(&f);
	ok(strstr(why, "refuses an unprivileged process new namespaces: clone: Operation not "
		       "permitted") != NULL,
	   "EPERM, no cause found: says what it knows (%s)", why);

	/* The profile itself. */
	char *p = NULL;
	ows_error err;
	ows_error_clear(&err);
	is_int(ows_apparmor_profile("/opt/owstest/bin/owsbx", NULL, &p, &err), 0, "profile rendered");
	ok(p && strstr(p, "\nprofile owsbx /opt/owstest/bin/owsbx flags=(unconfined) {\n  userns,\n"),
	   "named owsbx, attached to the path, unconfined but for the userns grant");
	ok(p && strstr(p, "abi <abi/4.0>,\n"), "AppArmor 4's abi, the first with userns");
	ok(p && strstr(p, "include if exists <local/owsbx>"), "local additions included");
	ows_free(p);
	is_int(ows_apparmor_profile("/opt/owstest/bin/host", "owstest-host", &p, &err), 0, "named");
	ok(p && strstr(p, "\nprofile owstest-host /opt/owstest/bin/host "), "the name given");
	ows_free(p);
	is_int(ows_apparmor_profile("/opt/owstest/bin/host", NULL, &p, &err), 0, "derived name");
	ok(p && strstr(p, "\nprofile owsbx-host /opt/owstest/bin/host "), "owsbx- and the file name");
	ows_free(p);
	static const char *const bad_paths[] = {"relative/owsbx", "/opt/a b/owsbx", "/opt/*/owsbx",
						"/opt/x\nprofile y /z {", "/opt/../bin/owsbx", "/opt/\"q\"",
						"/opt/bin/..", "/opt//owsbx", "/opt/owsbx/"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(bad_paths); i++) {
		ows_error_clear(&err);
		p = NULL;
		is_int(ows_apparmor_profile(bad_paths[i], NULL, &p, &err), OWS_EINVAL,
		       "refused: a path AppArmor would read otherwise (%s)", err.what);
		ok(p == NULL, "and nothing rendered");
	}
	static const char *const bad_names[] = {"", "a b", "-x", "x{", "a/b"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(bad_names); i++) {
		ows_error_clear(&err);
		is_int(ows_apparmor_profile("/opt/owstest/bin/owsbx", bad_names[i], &p, &err),
		       OWS_EINVAL, "refused: profile name '%s'", bad_names[i]);
	}
	is_int(ows_apparmor_profile("/opt/owstest/bin/owsbx", NULL, NULL, &err), OWS_EINVAL,
	       "no out pointer: refused");

	is_int(ows__userns_step_of("write /proc/self/uid_map"), OWS__USERNS_UID_MAP,
	       "init's uid_map stage is a user-namespace step");
	is_int(ows__userns_step_of("write setgroups"), OWS__USERNS_SETGROUPS, "so is setgroups");
	is_int(ows__userns_step_of("landlock_restrict_self"), OWS__USERNS_OK, "Landlock is not");
	is_int(ows__userns_step_of("mount proc /proc"), OWS__USERNS_PROC, "init's proc is one");
	is_int(ows__userns_step_of("bring loopback up"), OWS__USERNS_LOOPBACK, "so is loopback");

	/* Containers: each refusal names the option that allows it, and fits an ows_error. */
	f = facts(OWS__USERNS_PROC, EPERM);
	f.proc_masks = 6;
	f.container = "docker";
	explain(&f);
	ok(strstr(why, "docker masks 6 paths under /proc") != NULL, "masked /proc: named (%s)", why);
	ok(strstr(fix, "unmask=ALL") && strstr(fix, "systempaths=unconfined") &&
		   strstr(fix, "procMount: Unmasked"),
	   "masked /proc: podman's, Docker's and Kubernetes' options (%s)", fix);
	ok(strlen(why) < 256 && strlen(fix) < 256, "masked /proc: fits an ows_error");
	f.proc_masks = 0;
	f.container = NULL;
	explain(&f);
	ok(strstr(why, "refuses the sandbox a new /proc") && strstr(fix, "account provider"),
	   "refused /proc outside a container: the account provider (%s)", fix);

	f = facts(OWS__USERNS_CLONE, EPERM);
	f.root = true;
	f.seccomp = 2;
	f.container = "podman";
	explain(&f);
	ok(strstr(why, "root without CAP_SYS_ADMIN") && !strstr(why, "unprivileged"),
	   "root without CAP_SYS_ADMIN: named as such (%s)", why);
	ok(strstr(fix, "--cap-add SYS_ADMIN") && strstr(fix, "ordinary user"),
	   "root without CAP_SYS_ADMIN: the option, or an ordinary user (%s)", fix);
	ok(strlen(why) < 256 && strlen(fix) < 256, "root without CAP_SYS_ADMIN: fits an ows_error");
	f.cap_sys_admin = true;
	f.seccomp = 0;
	explain(&f);
	ok(strstr(why, "refuses root new namespaces") != NULL, "root with it: not an unprivileged "
							       "process (%s)", why);

	f = facts(OWS__USERNS_CLONE, EPERM);
	f.seccomp = 2;
	f.container = "docker";
	explain(&f);
	ok(strstr(fix, "seccomp profile that allows user namespaces") != NULL,
	   "a container's seccomp filter: the profile to give it (%s)", fix);
	ok(strlen(fix) < 256, "and it fits an ows_error");

	f = facts(OWS__USERNS_LOOPBACK, EPERM);
	f.root = true;
	f.container = "podman";
	explain(&f);
	ok(strstr(why, "root without CAP_NET_ADMIN") && strstr(why, "--net allowlist"),
	   "root without CAP_NET_ADMIN: allowlist's loopback explained (%s)", why);
	ok(strstr(fix, "--cap-add NET_ADMIN") != NULL, "with the option (%s)", fix);
	ok(strlen(why) < 256 && strlen(fix) < 256, "root without CAP_NET_ADMIN: fits an ows_error");
	return done_testing();
}
