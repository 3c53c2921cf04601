/*
 * The seccomp filter: closes what Landlock and the namespaces leave open.
 *
 * Refused for every sandbox: AF_VSOCK and other exotic socket families
 * (netfilter does not see them), io_uring (it bypasses this filter for its
 * own operations), new namespaces (more kernel surface, and a way around the
 * mount namespace), the kernel keyring (the person's keys live there),
 * TIOCSTI/TIOCLINUX (typing into the person's terminal), the calls that
 * load code into the kernel or reshape mounts, and setting S_ISUID/S_ISGID: a
 * set-ID file left in a session folder would run outside the wall later, as
 * its owner (the person, or the sandbox account), for whoever runs it.  In
 * `none` only AF_UNIX sockets may be created.
 *
 * When init shares the host's namespaces (no user namespace to be had,
 * OWS_SECCOMP_HOST_NS) nothing but Landlock stands between a command and
 * the person's other processes and sockets, so more is refused:
 *   - socket() of AF_UNIX: Landlock (before ABI 9) cannot refuse connect()
 *     to a pathname socket (ssh-agent, the session bus, docker.sock) and,
 *     before ABI 6, not to an abstract one either; seccomp cannot read the
 *     address.  socketpair() stays, for STREAM and SEQPACKET only (a DGRAM
 *     pair may still sendto() any named socket).  What breaks: a command
 *     cannot serve or reach a unix socket (tmux, a test's local server,
 *     gpg-agent); pipes, pairs, FIFOs in session folders and TCP in `open`
 *     work.  That costs little for an agent's builds and tests; a docker
 *     socket within reach would cost the whole wall.
 *   - SysV IPC and POSIX message queues: without an IPC namespace they are
 *     the person's (same uid: every segment of theirs opens).
 *   - inotify: Landlock does not govern a watch, which would tell which
 *     names in the home are opened and changed.
 *   - kill(-1), and prlimit, priority, I/O priority and CPU affinity of
 *     another process (prlimit's RLIMIT_CPU ends it): a command's own
 *     (pid 0) only.
 * Also, OWS_SECCOMP_NO_TRUNCATE: Landlock before ABI 3 does not handle
 * truncate(2) (by path), which would empty the person's files outside.
 *
 * Only this architecture's native calls get through (other ABIs, i386 by
 * int 0x80 and x32, are killed), so each rule is written once.
 *
 * The program is a flat list of blocks, each "if nr is X (or Y...): decide",
 * so every jump is short and local.  Built in the host, loaded by the sandbox's init.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/syscall.h>

#include "linux.h"

#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2) /* <linux/fs.h>, which clashes with <sys/mount.h> users */
#endif

#if defined(__x86_64__)
#define OWS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define OWS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "seccomp filter: add this architecture's AUDIT_ARCH"
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "seccomp filter: argument offsets assume little-endian"
#endif

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452 /* Linux 6.6; the same number on every architecture */
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define NS_FLAGS                                                                           \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |       \
	 CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME)

#define RET_ALLOW SECCOMP_RET_ALLOW
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))

typedef struct builder {
	ows__seccomp *f;
	bool overflow;
} builder;

static void emit(builder *b, struct sock_filter insn)
{
	if (b->f->len >= OWS_SECCOMP_MAX_INSNS) {
		b->overflow = true;
		return;
	}
	b->f->insns[b->f->len++] = insn;
}

static void stmt(builder *b, unsigned short code, unsigned int k)
{
	emit(b, (struct sock_filter)BPF_STMT(code, k));
}

static void jump(builder *b, unsigned short code, unsigned int k, unsigned char jt,
		 unsigned char jf)
{
	emit(b, (struct sock_filter)BPF_JUMP(code, k, jt, jf));
}

/* if nr == `nr`: return `ret`.  The accumulator holds nr on entry and exit. */
static void refuse(builder *b, long nr, unsigned int ret)
{
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1);
	stmt(b, BPF_RET | BPF_K, ret);
}

/* if nr == `nr`: allow only when args[arg] is one of `vals`, else return `deny`. */
static void allow_values(builder *b, long nr, int arg, const unsigned int *vals, size_t n,
			 unsigned int deny)
{
	/* body: load, n × (test, allow), deny */
	unsigned int body = 1 + 2 * (unsigned int)n + 1;
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, (unsigned char)body);
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg));
	for (size_t i = 0; i < n; i++) {
		jump(b, BPF_JMP | BPF_JEQ | BPF_K, vals[i], 0, 1);
		stmt(b, BPF_RET | BPF_K, RET_ALLOW);
	}
	stmt(b, BPF_RET | BPF_K, deny);
}

/*
 * if nr is one of `nrs`: refuse when args[arg] has any bit of `mask`, else allow.
 * Only the argument's low 32 bits are tested: every argument tested here is an
 * int or a mode_t, which the kernel truncates to that (or less) before use.
 */
static void refuse_bits(builder *b, const long *nrs, size_t n, int arg, unsigned int mask,
			unsigned int deny)
{
	/* n tests, each jumping to the load on a match; the last one skips the body. */
	for (size_t i = 0; i < n; i++) {
		bool last = i + 1 == n;
		jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nrs[i],
		     (unsigned char)(n - 1 - i), last ? 4 : 0);
	}
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg));
	jump(b, BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1);
	stmt(b, BPF_RET | BPF_K, deny);
	stmt(b, BPF_RET | BPF_K, RET_ALLOW);
}

/*
 * if nr == `nr`: allow only when args[who] is 0 (the caller itself) and, when
 * `which` >= 0, args[which] is not `user` (every process of the uid).
 */
static void only_self(builder *b, long nr, int who, int which, unsigned int user,
		      unsigned int deny)
{
	unsigned int body = (which >= 0 ? 2 : 0) + 4;
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, (unsigned char)body);
	if (which >= 0) {
		stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(which));
		jump(b, BPF_JMP | BPF_JEQ | BPF_K, user, 3, 0); /* to the deny */
	}
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(who));
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
	stmt(b, BPF_RET | BPF_K, RET_ALLOW);
	stmt(b, BPF_RET | BPF_K, deny);
}

/* socketpair(): AF_UNIX, of a type in `types` only (flags such as SOCK_CLOEXEC aside). */
static void pair_types(builder *b, const unsigned int *types, size_t n, unsigned int deny)
{
	unsigned int body = 4 + 2 * (unsigned int)n + 1;
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 0, (unsigned char)body);
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(0));
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, (unsigned char)(2 * n + 2));
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(1));
	stmt(b, BPF_ALU | BPF_AND | BPF_K, 0xf); /* SOCK_TYPE_MASK */
	for (size_t i = 0; i < n; i++) {
		jump(b, BPF_JMP | BPF_JEQ | BPF_K, types[i], 0, 1);
		stmt(b, BPF_RET | BPF_K, RET_ALLOW);
	}
	stmt(b, BPF_RET | BPF_K, deny);
}

/* if nr == `nr`: refuse when args[arg] is one of `vals`, else allow. */
static void refuse_values(builder *b, long nr, int arg, const unsigned int *vals, size_t n,
			  unsigned int deny)
{
	unsigned int body = 1 + 2 * (unsigned int)n + 1;
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, (unsigned char)body);
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg));
	for (size_t i = 0; i < n; i++) {
		jump(b, BPF_JMP | BPF_JEQ | BPF_K, vals[i], 0, 1);
		stmt(b, BPF_RET | BPF_K, deny);
	}
	stmt(b, BPF_RET | BPF_K, RET_ALLOW);
}

/* What only a host-namespace sandbox refuses (see the top of this file). */
static void build_host_ns(builder *b, unsigned flags)
{
	static const long ipc[] = {
		SYS_shmget, SYS_shmat, SYS_shmdt, SYS_shmctl, SYS_semget, SYS_semop,
		SYS_semtimedop, SYS_semctl, SYS_msgget, SYS_msgsnd, SYS_msgrcv, SYS_msgctl,
		SYS_mq_open, SYS_mq_unlink, SYS_mq_timedsend, SYS_mq_timedreceive, SYS_mq_notify,
		SYS_mq_getsetattr,
	};
	static const long watches[] = {
#ifdef SYS_inotify_init
		SYS_inotify_init,
#endif
		SYS_inotify_init1,
	};
	static const long by_pid[] = {SYS_prlimit64, SYS_sched_setaffinity, SYS_sched_setscheduler,
				      SYS_sched_setparam, SYS_sched_setattr};
	static const unsigned int every[] = {0xffffffffu}; /* kill(-1, ...) */
	static const unsigned int pair_ok[] = {SOCK_STREAM, SOCK_SEQPACKET};

	for (size_t i = 0; i < OWS__ARRAY_LEN(ipc); i++)
		refuse(b, ipc[i], RET_ERRNO(EPERM));
	/* ENOSYS: what watches files takes it for a kernel without inotify and polls. */
	for (size_t i = 0; i < OWS__ARRAY_LEN(watches); i++)
		refuse(b, watches[i], RET_ERRNO(ENOSYS));
	if (flags & OWS_SECCOMP_NO_TRUNCATE)
		refuse(b, SYS_truncate, RET_ERRNO(EPERM));
	refuse_values(b, SYS_kill, 0, every, OWS__ARRAY_LEN(every), RET_ERRNO(EPERM));
	for (size_t i = 0; i < OWS__ARRAY_LEN(by_pid); i++)
		only_self(b, by_pid[i], 0, -1, 0, RET_ERRNO(EPERM));
	only_self(b, SYS_setpriority, 1, 0, 2 /* PRIO_USER */, RET_ERRNO(EPERM));
	only_self(b, SYS_ioprio_set, 1, 0, 3 /* IOPRIO_WHO_USER */, RET_ERRNO(EPERM));
	pair_types(b, pair_ok, OWS__ARRAY_LEN(pair_ok), RET_ERRNO(EPERM));
}

/* if nr == `nr`: refuse when args[arg] is one of the guarded pids (or, `groups`, their
 * negatives: kill's process groups), else allow. */
static void guard_target(builder *b, long nr, int arg, const pid_t *pids, int npids, bool groups)
{
	const int tests = npids * (groups ? 2 : 1);
	jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, (unsigned char)(tests + 3));
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg));
	for (int i = 0, t = 0; i < npids; i++) {
		/* true: past the tests left and the ALLOW, onto the refusal */
		jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)pids[i], (unsigned char)(tests - t++), 0);
		if (groups)
			jump(b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)-pids[i],
			     (unsigned char)(tests - t++), 0);
	}
	stmt(b, BPF_RET | BPF_K, RET_ALLOW);
	stmt(b, BPF_RET | BPF_K, RET_ERRNO(EPERM));
}

int ows__seccomp_guard_init(struct sock_filter *insns, size_t max, const pid_t *pids, int npids,
			    bool no_pidfd_signal)
{
	/* Not pidfd_open: a handle alone reaches nothing (pidfd_getfd needs ptrace's right). */
	static const long by_target[] = {SYS_kill, SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo,
					 SYS_rt_tgsigqueueinfo};
	ows__seccomp f = {.len = 0};
	builder b = {.f = &f};
	if (npids < 1 || npids > OWS_SECCOMP_GUARD_MAX)
		return -1;
	if (max > OWS_SECCOMP_MAX_INSNS)
		max = OWS_SECCOMP_MAX_INSNS;
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	/* Each call's first argument names its target: a guarded process, or (kill) its group. */
	for (size_t i = 0; i < OWS__ARRAY_LEN(by_target); i++)
		guard_target(&b, by_target[i], 0, pids, npids, true);
	/* A hard RLIMIT_CPU of 0 set on it from outside ends it as surely as SIGKILL. */
	guard_target(&b, SYS_prlimit64, 0, pids, npids, false);
	/* fcntl(F_SETOWN, pid or -pid) would aim SIGIO (any signal, by F_SETSIG) at it;
	 * F_SETOWN_EX's owner sits in a struct the filter cannot read. */
	const int tests = 2 * npids;
	jump(&b, BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, (unsigned char)(tests + 6));
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(1));
	jump(&b, BPF_JMP | BPF_JEQ | BPF_K, 15 /* F_SETOWN_EX */, (unsigned char)(tests + 3), 0);
	jump(&b, BPF_JMP | BPF_JEQ | BPF_K, 8 /* F_SETOWN */, 0, (unsigned char)(tests + 1));
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, ARG_LO(2));
	for (int i = 0, t = 0; i < npids; i++) {
		jump(&b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)pids[i], (unsigned char)(tests - t++), 0);
		jump(&b, BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)-pids[i], (unsigned char)(tests - t++), 0);
	}
	stmt(&b, BPF_RET | BPF_K, RET_ALLOW);
	stmt(&b, BPF_RET | BPF_K, RET_ERRNO(EPERM));
	if (no_pidfd_signal)
		refuse(&b, SYS_pidfd_send_signal, RET_ERRNO(EPERM));
	stmt(&b, BPF_RET | BPF_K, RET_ALLOW);
	if (b.overflow || f.len > max)
		return -1;
	memcpy(insns, f.insns, f.len * sizeof(f.insns[0]));
	return f.len;
}

int ows__seccomp_build(ows__seccomp *f, ows_net net, unsigned flags, ows_error *err)
{
	static const long refused[] = {
		SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
		SYS_setns, SYS_keyctl, SYS_add_key, SYS_request_key,
		SYS_bpf, SYS_perf_event_open, SYS_userfaultfd, SYS_kexec_load,
		SYS_kexec_file_load, SYS_init_module, SYS_finit_module, SYS_delete_module,
		SYS_mount, SYS_umount2, SYS_pivot_root, SYS_open_tree, SYS_move_mount,
		SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_mount_setattr,
		SYS_swapon, SYS_swapoff, SYS_reboot, SYS_fanotify_init, SYS_open_by_handle_at,
	};
	static const long ns_calls[] = {SYS_clone, SYS_unshare};
	/*
	 * The calls that take a mode, by the argument it sits in: the chmods and the
	 * calls that create (a new file keeps S_ISUID/S_ISGID of its mode; mkdir drops
	 * S_ISGID today, refused all the same).  The path-only forms are legacy calls
	 * that newer architectures (aarch64) do not have.
	 */
	static const long mode_in_arg1[] = {
#ifdef SYS_chmod
		SYS_chmod, SYS_creat, SYS_mkdir,
#endif
		SYS_fchmod,
	};
	static const long mode_in_arg2[] = {
#ifdef SYS_open
		SYS_open,
#endif
		SYS_fchmodat, __NR_fchmodat2, SYS_mkdirat,
	};
	static const long mode_in_arg3[] = {SYS_openat};
	/*
	 * mknod also makes no device: the kernel lets anyone make a whiteout (a
	 * character device 0:0) since Linux 5.8, which would stay in a session folder
	 * as a device node for the tools that walk it later (an overlay hides files
	 * under it).  S_IFCHR's bit is in S_IFBLK too; FIFOs, sockets and regular
	 * files go on.  RENAME_WHITEOUT makes the same node.
	 */
#ifdef SYS_mknod
	static const long mknod_in_arg1[] = {SYS_mknod};
#endif
	static const long mknod_in_arg2[] = {SYS_mknodat};
	static const long rename_flags_in_arg4[] = {SYS_renameat2};
	static const unsigned int families_none[] = {AF_UNIX};
	/* AF_UNIX first: a host-namespace sandbox takes the rest (families_open + 1). */
	static const unsigned int families_open[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
	static const unsigned int tty_ioctls[] = {TIOCSTI, TIOCLINUX};
	builder b = {.f = f};

	f->len = 0;
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	jump(&b, BPF_JMP | BPF_JEQ | BPF_K, OWS_AUDIT_ARCH, 1, 0);
	stmt(&b, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS); /* another ABI: no way around the list */
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	jump(&b, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1); /* x32 system calls */
	stmt(&b, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
	for (size_t i = 0; i < OWS__ARRAY_LEN(refused); i++)
		refuse(&b, refused[i], RET_ERRNO(EPERM));
	/* glibc falls back to clone() when clone3() is missing; clone's flags can be read. */
	refuse(&b, SYS_clone3, RET_ERRNO(ENOSYS));
	refuse_bits(&b, ns_calls, OWS__ARRAY_LEN(ns_calls), 0, NS_FLAGS, RET_ERRNO(EPERM));
	refuse_bits(&b, mode_in_arg3, OWS__ARRAY_LEN(mode_in_arg3), 3, S_ISUID | S_ISGID,
		    RET_ERRNO(EPERM));
	refuse_bits(&b, mode_in_arg2, OWS__ARRAY_LEN(mode_in_arg2), 2, S_ISUID | S_ISGID,
		    RET_ERRNO(EPERM));
	refuse_bits(&b, mode_in_arg1, OWS__ARRAY_LEN(mode_in_arg1), 1, S_ISUID | S_ISGID,
		    RET_ERRNO(EPERM));
#ifdef SYS_mknod
	refuse_bits(&b, mknod_in_arg1, OWS__ARRAY_LEN(mknod_in_arg1), 1, S_ISUID | S_ISGID | S_IFCHR,
		    RET_ERRNO(EPERM));
#endif
	refuse_bits(&b, mknod_in_arg2, OWS__ARRAY_LEN(mknod_in_arg2), 2, S_ISUID | S_ISGID | S_IFCHR,
		    RET_ERRNO(EPERM));
	refuse_bits(&b, rename_flags_in_arg4, OWS__ARRAY_LEN(rename_flags_in_arg4), 4,
		    RENAME_WHITEOUT, RET_ERRNO(EPERM));
	/* openat2's mode sits in a struct the filter cannot read; libc and programs fall
	 * back to openat() on ENOSYS. */
	refuse(&b, SYS_openat2, RET_ERRNO(ENOSYS));
	refuse_values(&b, SYS_ioctl, 1, tty_ioctls, OWS__ARRAY_LEN(tty_ioctls), RET_ERRNO(EPERM));
	if (flags & OWS_SECCOMP_HOST_NS) {
		build_host_ns(&b, flags);
		if (net == OWS_NET_NONE)
			refuse(&b, SYS_socket, RET_ERRNO(EPERM));
		else
			allow_values(&b, SYS_socket, 0, families_open + 1,
				     OWS__ARRAY_LEN(families_open) - 1, RET_ERRNO(EPERM));
	} else if (net == OWS_NET_NONE) {
		allow_values(&b, SYS_socket, 0, families_none, OWS__ARRAY_LEN(families_none),
			     RET_ERRNO(EPERM));
	} else {
		allow_values(&b, SYS_socket, 0, families_open, OWS__ARRAY_LEN(families_open),
			     RET_ERRNO(EPERM));
	}
	if (!(flags & OWS_SECCOMP_HOST_NS))
		allow_values(&b, SYS_socketpair, 0, families_none, OWS__ARRAY_LEN(families_none),
			     RET_ERRNO(EPERM));
	stmt(&b, BPF_RET | BPF_K, RET_ALLOW);
	if (b.overflow)
		return ows__fail(err, OWS_EINVAL, 0, "seccomp", NULL,
				 "seccomp filter grew past %d instructions", OWS_SECCOMP_MAX_INSNS);
	return 0;
}
