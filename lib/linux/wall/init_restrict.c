/*
 * Init's restriction: its identity dropped, its Landlock domain and seccomp filter, and
 * the fence each command (and the proof) goes behind.  Runs between clone and exec in
 * init or a reaper: no allocation, no locks (init.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channels.h"
#include "init.h"
#include "proxy/proxy.h"
#include "view.h"

/* ------------------------------------------------------------ init: restrict */

void ows__init_drop_identity(const struct ows__plan *p)
{
	/* The bounding set first: dropping it needs CAP_SETPCAP, which goes next. */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		ows__init_die(p, "clear ambient capabilities", NULL);
	if (!p->userns && !p->in_host_ns) {
		/* Raw system calls: glibc's wrappers would signal every thread the host
		 * had and wait for them, in a process where none of them exists. */
		if (syscall(SYS_setgroups, (size_t)p->ngroups, p->groups) != 0)
			ows__init_die(p, "setgroups", NULL);
		if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) != 0)
			ows__init_die(p, "setresgid", NULL);
		if (syscall(SYS_setresuid, p->uid, p->uid, p->uid) != 0)
			ows__init_die(p, "setresuid", NULL);
	}
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	if (syscall(SYS_capset, &hdr, data) != 0)
		ows__init_die(p, "capset", NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		ows__init_die(p, "no_new_privs", NULL);
}

void ows__init_restrict(const struct ows__plan *p)
{
	struct ows_ll_ruleset_attr attr = {
		.handled_access_fs = p->handled_fs,
		.handled_access_net = p->handled_net,
		.scoped = p->scoped,
	};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr,
			      ows__landlock_attr_size(p->abi), 0);
	if (rs < 0)
		ows__init_die(p, "landlock_create_ruleset", NULL);
	for (int i = 0; i < p->nrules; i++) {
		int fd = open(p->rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			ows__init_die(p, "landlock rule", p->rules[i].path);
		struct ows_ll_path_beneath_attr pb = {
			.allowed_access = p->rules[i].access & p->handled_fs,
			.parent_fd = fd,
		};
		if (syscall(SYS_landlock_add_rule, rs, OWS_LL_RULE_PATH_BENEATH, &pb, 0) != 0)
			ows__init_die(p, "landlock_add_rule", p->rules[i].path);
		close(fd);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		ows__init_die(p, "landlock_restrict_self", NULL);
	close(rs);
	/* New files start closed to other users, whatever the person's umask; the
	 * filter refuses chmod with S_IWOTH (seccomp.c says why umask stays). */
	umask(umask(0) | ows__plan_closed_bits(p));
	struct sock_fprog prog = {
		.len = p->seccomp.len,
		.filter = (struct sock_filter *)p->seccomp.insns,
	};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
		ows__init_die(p, "seccomp", NULL);
}

/*
 * In the host's namespaces each command (and the proof) goes one Landlock
 * layer deeper than init.  Init's domain is then outside the command's:
 * with ABI 6's signal scope the command cannot signal init (nor the
 * person's other processes), and on any ABI it cannot trace it.  The layer
 * handles only REFER, granted everywhere (every layer denies reparenting
 * unless it grants it; init's layer decides that).  The seccomp guard
 * (ows__init_guard_command) refuses signals aimed at init and the call's reaper by
 * pid on every ABI, and pidfd signals where no scope is (ABI < 6).
 * Sibling commands land in sibling layers: one cannot signal or trace
 * another started by a different request.  0, or an errno.
 */

struct ows__fence ows__init_fence_of(const struct ows__plan *p)
{
	return (struct ows__fence){.abi = p->abi, .in_host_ns = p->in_host_ns, .init = p->init_pid};
}

int ows__init_restrict_command(const struct ows__fence *p)
{
	struct ows_ll_ruleset_attr attr = {
		.handled_access_fs = p->abi >= 2 ? OWS_LL_FS_REFER : OWS_LL_FS_MAKE_BLOCK,
		.scoped = p->abi >= 6 ? OWS_LL_SCOPE_SIGNAL | OWS_LL_SCOPE_ABSTRACT_UNIX_SOCKET : 0,
	};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, ows__landlock_attr_size(p->abi), 0);
	if (rs < 0)
		return errno;
	int e = 0;
	if (p->abi >= 2) {
		struct ows_ll_path_beneath_attr pb = {.allowed_access = OWS_LL_FS_REFER,
						      .parent_fd = open("/", O_PATH | O_CLOEXEC)};
		if (pb.parent_fd < 0 ||
		    syscall(SYS_landlock_add_rule, rs, OWS_LL_RULE_PATH_BENEATH, &pb, 0) != 0)
			e = errno;
		if (pb.parent_fd >= 0)
			close(pb.parent_fd);
	}
	if (!e && syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		e = errno;
	close(rs);
	return e ? e : ows__init_guard_command(p);
}

/*
 * The seccomp guard every command takes, in both modes: no signal, SIGIO
 * owner or hard limit aimed at init or at the call's reaper (`reaper`; 0
 * for the proof).  A command that killed its reaper would hand its daemons
 * to init, out of reach of the call's kill.  Init in its own PID namespace
 * is safe from its children anyway (the kernel drops a SIGKILL sent to pid 1
 * from inside); the reaper is not.  pidfd_send_signal goes too unless the
 * command sits in a Landlock layer with the signal scope (host namespaces,
 * ABI 6), outside the domain of both.  Inside a PID namespace init is pid
 * 1, so its "group" -1 is refused too: kill(-1), which would reach every
 * call's reaper (and every other call's processes).  0, or an errno.
 */
int ows__init_guard_command(const struct ows__fence *p)
{
	const bool scoped = p->in_host_ns && p->abi >= 6;
	const pid_t pids[2] = {p->init, p->reaper};
	struct sock_filter insns[128];
	int n = ows__seccomp_guard_init(insns, OWS__ARRAY_LEN(insns), pids, p->reaper ? 2 : 1, !scoped);
	if (n < 0)
		return E2BIG;
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = insns};
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0 ? errno : 0;
}
