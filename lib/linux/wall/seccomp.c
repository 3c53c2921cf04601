/*
 * The seccomp filter: what a sandboxed process may ask of the kernel.
 *
 * Default deny, as Docker's default profile (moby/profiles,
 * seccomp/default.json) is built: a table of the calls that are allowed,
 * reviewed group by group against that profile, some of them only with
 * arguments the filter checks.  The calls Docker refuses too, and those this
 * filter refuses on top, are named and get EPERM; every number the table does
 * not name gets ENOSYS.  So a call the kernel adds next year is refused until
 * someone reviews it here, and a program that tries it falls back as it
 * does on an older kernel (runc does the same for numbers past its profile).
 *
 * Refused for every sandbox, beyond what Docker refuses: AF_VSOCK and other
 * exotic socket families (netfilter does not see them), io_uring (it bypasses
 * this filter for its own operations), new namespaces (more kernel surface,
 * and a way around the mount namespace), TIOCSTI/TIOCLINUX (typing into the
 * person's terminal), setting S_ISUID/S_ISGID (a set-ID file left in a session
 * folder would run outside the wall later, as its owner, for whoever runs
 * it), and opening a file or folder to other local users: no chmod with
 * S_IWOTH (init sets it in the umask it hands on, and it stays there: see
 * below), and no ACL set (no extended attribute is set at all: the call is
 * skipped and returns 0, see below).  Group write goes the same way where
 * the command's group has another account in it (OWS_SECCOMP_NO_GROUP_WRITE),
 * and stays where it is the person's own, as Debian gives each person.  In
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
 *   - a chown to a group other than the person's own: their supplementary
 *     groups stay (no user namespace leaves them unmapped), and a file
 *     given to one, with group write, is its other members' to change.
 * Also, OWS_SECCOMP_NO_TRUNCATE: Landlock before ABI 3 does not handle
 * truncate(2) (by path), which would empty the person's files outside.
 *
 * Only this architecture's native calls get through (other ABIs, i386 by
 * int 0x80 and x32, are killed), so each rule is written once.
 *
 * The program is generated: the table gives each call number a verdict
 * (allow, an errno, or an argument check); runs of numbers with the same
 * verdict become ranges, and a binary search over the ranges leads to each
 * verdict's code, which always ends in a return.  Jumps name labels that
 * the assembler below resolves; no offset is counted by hand.  Built in
 * the host, loaded by the sandbox's init.
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
#include <unistd.h>

#include "linux/linux.h"

#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2) /* <linux/fs.h>, which clashes with <sys/mount.h> users */
#endif

#if defined(__x86_64__)
#define OWS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define OWS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "seccomp filter: add this architecture's AUDIT_ARCH and its calls"
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "seccomp filter: argument offsets assume little-endian"
#endif

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Calls newer than the installed headers (6.1): from 424 on, one number on every architecture. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_map_shadow_stack
#define SYS_map_shadow_stack 453
#endif
#ifndef SYS_futex_wake
#define SYS_futex_wake 454
#define SYS_futex_wait 455
#define SYS_futex_requeue 456
#endif
#ifndef SYS_statmount
#define SYS_statmount 457
#define SYS_listmount 458
#endif
#ifndef SYS_lsm_get_self_attr
#define SYS_lsm_get_self_attr 459
#define SYS_lsm_set_self_attr 460
#define SYS_lsm_list_modules 461
#endif
#ifndef SYS_mseal
#define SYS_mseal 462
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#define SYS_getxattrat 464
#define SYS_listxattrat 465
#define SYS_removexattrat 466
#endif
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif
#if defined(__x86_64__) && !defined(SYS_uretprobe)
#define SYS_uretprobe 335
#endif

#define NS_FLAGS                                                                           \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |       \
	 CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME)

#define RET_ALLOW SECCOMP_RET_ALLOW
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))

/* ------------------------------------------------------------ the allowed set */

/*
 * What every sandboxed program may call, by group.  Each group is in
 * Docker's default profile too; where this filter checks arguments
 * (marked), the check is added below.
 */
static const long allowed[] = {
	/* files by descriptor and by name (Landlock decides which names) */
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_pwrite64, SYS_preadv,
	SYS_pwritev, SYS_preadv2, SYS_pwritev2, SYS_lseek, SYS_close, SYS_close_range, SYS_dup,
	SYS_dup3, SYS_fcntl, SYS_flock, SYS_fsync, SYS_fdatasync, SYS_sync, SYS_syncfs,
	SYS_sync_file_range, SYS_ftruncate, SYS_fallocate, SYS_fadvise64, SYS_readahead,
	SYS_sendfile, SYS_copy_file_range, SYS_splice, SYS_tee, SYS_vmsplice, SYS_cachestat,
	SYS_openat /* mode checked */, SYS_mkdirat /* mode checked */,
	SYS_mknodat /* type and mode checked */, SYS_fchmod /* mode checked */,
	SYS_fchmodat /* mode checked */, SYS_fchmodat2 /* mode checked */,
	SYS_renameat2 /* flags checked */,
	/* Not filtered here, though umask(0) would let the next creation open a file to
	 * everyone: pip, tar and coreutils read the umask by setting it to 0 and back,
	 * then chmod what they made by it, so any other answer than the real one breaks
	 * them (an error comes back as a umask of 0777; a skipped call's 0 leads pip to
	 * chmod 0666, refused).  Init hands S_IWOTH on in the umask, and each command's
	 * own filter sends a umask without it to the call's reaper, which answers with
	 * the mask as it is and leaves it (channels.c); in the host's namespaces, where
	 * no command is supervised, a command may still drop it. */
	SYS_umask,
	SYS_newfstatat, SYS_fstat, SYS_statx, SYS_statfs, SYS_fstatfs, SYS_faccessat,
	SYS_faccessat2, SYS_readlinkat, SYS_getdents64, SYS_getcwd, SYS_chdir, SYS_fchdir,
	SYS_linkat, SYS_symlinkat, SYS_unlinkat, SYS_renameat, SYS_utimensat, SYS_fchown,
	SYS_fchownat, SYS_truncate /* refused before Landlock ABI 3 in the host's namespaces */,
	SYS_name_to_handle_at /* a handle alone opens nothing: open_by_handle_at is refused */,
	SYS_ioctl /* TIOCSTI and TIOCLINUX refused */,
	/* extended attributes, read and removed; set: below */
	SYS_getxattr, SYS_lgetxattr, SYS_fgetxattr, SYS_listxattr, SYS_llistxattr,
	SYS_flistxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr, SYS_getxattrat,
	SYS_listxattrat, SYS_removexattrat,
	/* waiting on descriptors, events, timers */
	SYS_pipe2, SYS_ppoll, SYS_pselect6, SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_pwait,
	SYS_epoll_pwait2, SYS_eventfd2, SYS_signalfd4, SYS_timerfd_create, SYS_timerfd_settime,
	SYS_timerfd_gettime, SYS_inotify_init1 /* host namespaces: ENOSYS */,
	SYS_inotify_add_watch, SYS_inotify_rm_watch, SYS_fanotify_mark /* fanotify_init refused */,
	SYS_io_setup, SYS_io_destroy, SYS_io_submit, SYS_io_cancel, SYS_io_getevents,
	SYS_io_pgetevents,
	/* memory */
	SYS_brk, SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_madvise, SYS_mincore,
	SYS_msync, SYS_mlock, SYS_mlock2, SYS_munlock, SYS_mlockall, SYS_munlockall,
	SYS_remap_file_pages, SYS_membarrier, SYS_memfd_create, SYS_memfd_secret,
	SYS_pkey_alloc, SYS_pkey_free, SYS_pkey_mprotect, SYS_map_shadow_stack, SYS_mseal,
	/* processes and threads */
	SYS_clone /* namespace flags refused */, SYS_execve, SYS_execveat, SYS_exit,
	SYS_exit_group, SYS_wait4, SYS_waitid, SYS_set_tid_address, SYS_set_robust_list,
	SYS_get_robust_list, SYS_rseq, SYS_futex, SYS_futex_waitv, SYS_futex_wake,
	SYS_futex_wait, SYS_futex_requeue, SYS_gettid, SYS_getpid, SYS_getppid, SYS_getpgid,
	SYS_setpgid, SYS_getsid, SYS_setsid, SYS_prctl, SYS_seccomp, SYS_capget, SYS_capset,
	SYS_personality /* only the values Docker allows */,
	SYS_unshare /* namespace flags refused (Docker refuses it all) */,
	SYS_pidfd_open, SYS_pidfd_send_signal /* the guard filter aims it */, SYS_process_mrelease,
	SYS_landlock_create_ruleset, SYS_landlock_add_rule, SYS_landlock_restrict_self,
	/* debuggers and tracers (strace, gdb): Docker allows them from Linux 4.8, where
	 * ptrace's rules no longer let them past seccomp; Landlock and Yama confine them */
	SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev,
	/* signals (the guard filter keeps them off init and the call's reaper) */
	SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_rt_sigpending,
	SYS_rt_sigsuspend, SYS_rt_sigtimedwait, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo,
	SYS_sigaltstack, SYS_kill, SYS_tkill, SYS_tgkill, SYS_restart_syscall,
	/* identity: the kernel refuses every change a sandboxed process has no right to */
	SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_getresuid, SYS_getresgid,
	SYS_getgroups, SYS_setuid, SYS_setgid, SYS_setreuid, SYS_setregid, SYS_setresuid,
	SYS_setresgid, SYS_setfsuid, SYS_setfsgid, SYS_setgroups,
	/* time, limits, scheduling (another process's: refused in the host's namespaces) */
	SYS_clock_gettime, SYS_clock_getres, SYS_clock_nanosleep, SYS_clock_adjtime,
	SYS_adjtimex, SYS_gettimeofday, SYS_nanosleep, SYS_getitimer, SYS_setitimer,
	SYS_timer_create, SYS_timer_settime, SYS_timer_gettime, SYS_timer_getoverrun,
	SYS_timer_delete, SYS_times, SYS_getrusage, SYS_getrlimit, SYS_setrlimit,
	SYS_prlimit64, SYS_getpriority, SYS_setpriority, SYS_ioprio_get, SYS_ioprio_set,
	SYS_sched_yield, SYS_sched_getaffinity, SYS_sched_setaffinity, SYS_sched_getparam,
	SYS_sched_setparam, SYS_sched_getscheduler, SYS_sched_setscheduler,
	SYS_sched_getattr, SYS_sched_setattr, SYS_sched_get_priority_max,
	SYS_sched_get_priority_min, SYS_sched_rr_get_interval, SYS_getcpu, SYS_getrandom,
	SYS_uname, SYS_sysinfo,
	/* sockets: socket() and socketpair() by family, below */
	SYS_socket, SYS_socketpair, SYS_bind, SYS_connect, SYS_listen, SYS_accept, SYS_accept4,
	SYS_getsockname, SYS_getpeername, SYS_sendto, SYS_recvfrom, SYS_sendmsg, SYS_recvmsg,
	SYS_sendmmsg, SYS_recvmmsg, SYS_setsockopt, SYS_getsockopt, SYS_shutdown,
	/* IPC (refused in the host's namespaces, where it is the person's) */
	SYS_shmget, SYS_shmat, SYS_shmdt, SYS_shmctl, SYS_semget, SYS_semop, SYS_semtimedop,
	SYS_semctl, SYS_msgget, SYS_msgsnd, SYS_msgrcv, SYS_msgctl, SYS_mq_open, SYS_mq_unlink,
	SYS_mq_timedsend, SYS_mq_timedreceive, SYS_mq_notify, SYS_mq_getsetattr,
	/* mounts are read, never changed (Docker allows these two) */
	SYS_statmount, SYS_listmount,
};

#if defined(__x86_64__)
/* x86_64's own calls and the older forms aarch64 left out, as Docker allows them on amd64. */
static const long allowed_arch[] = {
	SYS_open /* mode checked */, SYS_creat /* mode checked */, SYS_mkdir /* mode checked */,
	SYS_mknod /* type and mode checked */, SYS_chmod /* mode checked */,
	SYS_stat, SYS_lstat, SYS_access, SYS_readlink, SYS_getdents, SYS_link, SYS_symlink,
	SYS_unlink, SYS_rename, SYS_rmdir, SYS_chown, SYS_lchown, SYS_utime, SYS_utimes,
	SYS_futimesat, SYS_pipe, SYS_dup2, SYS_poll, SYS_select, SYS_epoll_create,
	SYS_epoll_wait, SYS_eventfd, SYS_signalfd, SYS_inotify_init /* host namespaces: ENOSYS */,
	SYS_fork, SYS_vfork, SYS_pause, SYS_alarm, SYS_time, SYS_getpgrp, SYS_arch_prctl,
	SYS_modify_ldt, SYS_set_thread_area, SYS_get_thread_area, SYS_uretprobe,
};
#endif

/*
 * Named refusals (EPERM, Docker's answer): what Docker's default profile
 * refuses and a program may try, and what this filter refuses on top.
 * Anything unnamed gets ENOSYS.
 */
static const long refused[] = {
	/* io_uring runs its operations past this filter; the kernel keyring holds the
	 * person's keys; a new namespace is more kernel surface and a way around the
	 * mount namespace */
	SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register, SYS_keyctl, SYS_add_key,
	SYS_request_key, SYS_setns,
	/* the kernel's code, mounts and devices */
	SYS_bpf, SYS_perf_event_open, SYS_userfaultfd, SYS_kexec_load, SYS_kexec_file_load,
	SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_mount, SYS_umount2,
	SYS_pivot_root, SYS_chroot, SYS_open_tree, SYS_open_tree_attr, SYS_move_mount,
	SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_mount_setattr, SYS_swapon,
	SYS_swapoff, SYS_reboot, SYS_acct, SYS_quotactl, SYS_quotactl_fd, SYS_syslog,
	SYS_vhangup, SYS_sethostname, SYS_setdomainname, SYS_fanotify_init,
	SYS_open_by_handle_at /* a handle names any file, past the folders Landlock grants */,
	SYS_lsm_get_self_attr, SYS_lsm_set_self_attr, SYS_lsm_list_modules,
	/* the machine's clock */
	SYS_settimeofday, SYS_clock_settime,
	/* NUMA memory placement (Docker wants CAP_SYS_NICE): the machine's memory, not a command's */
	SYS_mbind, SYS_set_mempolicy, SYS_get_mempolicy, SYS_migrate_pages, SYS_move_pages,
	SYS_set_mempolicy_home_node,
	/* another process's files and memory (Docker wants CAP_SYS_PTRACE) */
	SYS_kcmp, SYS_pidfd_getfd, SYS_process_madvise,
#if defined(__x86_64__)
	SYS_iopl, SYS_ioperm, SYS_ustat, SYS_sysfs, SYS_uselib, SYS__sysctl,
#endif
};

static const long set_xattr[] = {SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_setxattrat};

/* ------------------------------------------------------------ the assembler */

#define NEXT 0          /* a branch to the next instruction */
#define UNPLACED 0xffff /* a label not placed yet */

/*
 * A program under construction: instructions whose branches name labels
 * (numbers from 1), resolved into offsets by resolve().  The caller owns the
 * storage, so that init's side stays allocation-free and small.
 */
typedef struct prog {
	struct sock_filter *insns;
	unsigned short *jt, *jf; /* each instruction's branch labels (JA: jt), or NEXT */
	unsigned short *at;      /* each label's instruction */
	unsigned cap, len, labels;
	bool overflow;
} prog;

static unsigned new_label(prog *p)
{
	if (p->labels + 1 >= p->cap) {
		p->overflow = true;
		return NEXT;
	}
	p->at[++p->labels] = UNPLACED;
	return p->labels;
}

static void place(prog *p, unsigned label)
{
	if (label != NEXT)
		p->at[label] = (unsigned short)p->len;
}

static void emit(prog *p, unsigned short code, unsigned k, unsigned jt, unsigned jf)
{
	if (p->len >= p->cap) {
		p->overflow = true;
		return;
	}
	p->insns[p->len] = (struct sock_filter)BPF_JUMP(code, k, 0, 0);
	p->jt[p->len] = (unsigned short)jt;
	p->jf[p->len] = (unsigned short)jf;
	p->len++;
}

static void ret(prog *p, unsigned verdict) { emit(p, BPF_RET | BPF_K, verdict, NEXT, NEXT); }
static void load(prog *p, unsigned offset) { emit(p, BPF_LD | BPF_W | BPF_ABS, offset, NEXT, NEXT); }
static void load_arg(prog *p, int i) { load(p, (unsigned)ARG_LO(i)); }
static void go(prog *p, unsigned label) { emit(p, BPF_JMP | BPF_JA, 0, label, NEXT); }

/* if (A op k) goto t else goto f; op is BPF_JEQ, BPF_JGE or BPF_JSET. */
static void branch(prog *p, unsigned short op, unsigned k, unsigned t, unsigned f)
{
	emit(p, BPF_JMP | op | BPF_K, k, t, f);
}

/* The offset from instruction i to `label`; -1 when unplaced, backward or out of `max`. */
static long offset_to(const prog *p, unsigned i, unsigned label, unsigned long max)
{
	if (label == NEXT)
		return 0;
	unsigned short at = p->at[label];
	if (at == UNPLACED || at <= i || at - i - 1 > max)
		return -1;
	return at - i - 1;
}

/* Labels into offsets: 0, or -1 when a label is missing or a branch reaches too far. */
static int resolve(prog *p)
{
	if (p->overflow)
		return -1;
	for (unsigned i = 0; i < p->len; i++) {
		struct sock_filter *in = &p->insns[i];
		if (BPF_CLASS(in->code) != BPF_JMP)
			continue;
		if (BPF_OP(in->code) == BPF_JA) {
			long k = offset_to(p, i, p->jt[i], 0xffffffffu);
			if (k < 0)
				return -1;
			in->k = (unsigned)k;
			continue;
		}
		long t = offset_to(p, i, p->jt[i], 255), f = offset_to(p, i, p->jf[i], 255);
		if (t < 0 || f < 0)
			return -1;
		in->jt = (unsigned char)t;
		in->jf = (unsigned char)f;
	}
	return 0;
}

/* ------------------------------------------------------------ argument checks */

typedef enum check_kind {
	REFUSE_BITS,   /* refuse when the argument has any bit of `mask` */
	ALLOW_VALUES,  /* allow only the values in `vals` */
	REFUSE_VALUES, /* refuse the values in `vals` */
	ONLY_SELF,     /* allow only pid 0 (the caller) in `arg`, and not `mask` in `which` */
	PAIR_TYPES,    /* AF_UNIX in argument 0, and a type of `vals` in argument 1 */
} check_kind;

typedef struct check {
	check_kind kind;
	int arg, which;
	unsigned mask;
	const unsigned *vals;
	unsigned nvals;
	unsigned deny; /* the verdict when refused */
} check;

/*
 * Only an argument's low 32 bits are tested: every argument tested here is
 * an int, a mode_t or a flags word the kernel truncates to that before use.
 * Each check's code ends in a return on every path.
 */
static void emit_check(prog *p, const check *c)
{
	unsigned allow = new_label(p), deny = new_label(p);
	switch (c->kind) {
	case REFUSE_BITS:
		load_arg(p, c->arg);
		branch(p, BPF_JSET, c->mask, deny, allow);
		break;
	case ALLOW_VALUES:
		load_arg(p, c->arg);
		for (unsigned i = 0; i < c->nvals; i++)
			branch(p, BPF_JEQ, c->vals[i], allow, NEXT);
		go(p, deny);
		break;
	case REFUSE_VALUES:
		load_arg(p, c->arg);
		for (unsigned i = 0; i < c->nvals; i++)
			branch(p, BPF_JEQ, c->vals[i], deny, NEXT);
		go(p, allow);
		break;
	case ONLY_SELF:
		if (c->which >= 0) {
			load_arg(p, c->which);
			branch(p, BPF_JEQ, c->mask, deny, NEXT);
		}
		load_arg(p, c->arg);
		branch(p, BPF_JEQ, 0, allow, deny);
		break;
	case PAIR_TYPES:
		load_arg(p, 0);
		branch(p, BPF_JEQ, AF_UNIX, NEXT, deny);
		load_arg(p, 1);
		emit(p, BPF_ALU | BPF_AND | BPF_K, 0xf /* SOCK_TYPE_MASK */, NEXT, NEXT);
		for (unsigned i = 0; i < c->nvals; i++)
			branch(p, BPF_JEQ, c->vals[i], allow, NEXT);
		go(p, deny);
		break;
	}
	place(p, allow);
	ret(p, RET_ALLOW);
	place(p, deny);
	ret(p, c->deny);
}

/* ------------------------------------------------------------ the policy */

/* Room for every call number of the supported architectures (x86_64 and aarch64 stop below 470). */
#define NR_SPAN 512
#define MAX_CHECKS 48

enum { V_UNNAMED, V_ALLOW, V_EPERM, V_ENOSYS, V_SKIP, V_CHECK /* + the check's index */ };

typedef struct policy {
	unsigned short verdict[NR_SPAN];
	check checks[MAX_CHECKS];
	unsigned nchecks;
	unsigned own_group[2]; /* host namespaces: the groups a chown may name (host_ns) */
	bool overflow;
} policy;

static void set(policy *pol, long nr, unsigned short verdict)
{
	if (nr < 0 || nr >= NR_SPAN)
		pol->overflow = true;
	else
		pol->verdict[nr] = verdict;
}

static void set_all(policy *pol, const long *nrs, size_t n, unsigned short verdict)
{
	for (size_t i = 0; i < n; i++)
		set(pol, nrs[i], verdict);
}

/* `nr` is allowed when `c` passes; a later check of the same call replaces an earlier one. */
static void add_check(policy *pol, long nr, check c)
{
	if (pol->nchecks >= MAX_CHECKS) {
		pol->overflow = true;
		return;
	}
	pol->checks[pol->nchecks] = c;
	set(pol, nr, (unsigned short)(V_CHECK + pol->nchecks++));
}

static void refuse_bits(policy *pol, long nr, int arg, unsigned mask)
{
	add_check(pol, nr, (check){.kind = REFUSE_BITS, .arg = arg, .mask = mask, .deny = RET_ERRNO(EPERM)});
}

static void values(policy *pol, long nr, check_kind kind, int arg, const unsigned *vals, size_t n)
{
	add_check(pol, nr, (check){.kind = kind, .arg = arg, .vals = vals, .nvals = (unsigned)n,
				   .deny = RET_ERRNO(EPERM)});
}

static void only_self(policy *pol, long nr, int who, int which, unsigned user)
{
	add_check(pol, nr, (check){.kind = ONLY_SELF, .arg = who, .which = which, .mask = user,
				   .deny = RET_ERRNO(EPERM)});
}

/* The checks every sandbox has: modes, device nodes, namespaces, terminals, personality. */
static void checks_for_all(policy *pol, unsigned flags)
{
	/* Set-ID bits for the calls that create (a new file keeps S_ISUID/S_ISGID of its
	 * mode; mkdir drops S_ISGID today, refused all the same); the chmods refuse
	 * S_IWOTH too: what is opened to every local user stays open after the session;
	 * and S_IWGRP where the command's group is not the person's alone. */
	const unsigned setid = S_ISUID | S_ISGID;
	const unsigned chmods = setid | S_IWOTH | (flags & OWS_SECCOMP_NO_GROUP_WRITE ? S_IWGRP : 0);
	static const unsigned tty_ioctls[] = {TIOCSTI, TIOCLINUX};
	/* Docker's: the default, Linux 2.4's UNAME26, 32-bit addresses, both, and the query. */
	static const unsigned personas[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffffu};

	refuse_bits(pol, SYS_openat, 3, setid);
	refuse_bits(pol, SYS_mkdirat, 2, setid);
	refuse_bits(pol, SYS_fchmod, 1, chmods);
	refuse_bits(pol, SYS_fchmodat, 2, chmods);
	refuse_bits(pol, SYS_fchmodat2, 2, chmods);
	/*
	 * mknod also makes no device: the kernel lets anyone make a whiteout (a
	 * character device 0:0) since Linux 5.8, which would stay in a session folder
	 * as a device node for the tools that walk it later (an overlay hides files
	 * under it).  S_IFCHR's bit is in S_IFBLK too; FIFOs, sockets and regular
	 * files go on.  RENAME_WHITEOUT makes the same node.
	 */
	refuse_bits(pol, SYS_mknodat, 2, setid | S_IFCHR);
	refuse_bits(pol, SYS_renameat2, 4, RENAME_WHITEOUT);
#ifdef SYS_open /* the path-only forms: legacy calls newer architectures do not have */
	refuse_bits(pol, SYS_open, 2, setid);
	refuse_bits(pol, SYS_creat, 1, setid);
	refuse_bits(pol, SYS_mkdir, 1, setid);
	refuse_bits(pol, SYS_chmod, 1, chmods);
	refuse_bits(pol, SYS_mknod, 1, setid | S_IFCHR);
#endif
	refuse_bits(pol, SYS_clone, 0, NS_FLAGS);
	refuse_bits(pol, SYS_unshare, 0, NS_FLAGS);
	values(pol, SYS_ioctl, REFUSE_VALUES, 1, tty_ioctls, OWS__ARRAY_LEN(tty_ioctls));
	values(pol, SYS_personality, ALLOW_VALUES, 0, personas, OWS__ARRAY_LEN(personas));
}

/* What only a host-namespace sandbox refuses (see the top of this file). */
static void host_ns(policy *pol, unsigned flags)
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
	static const unsigned every[] = {0xffffffffu}; /* kill(-1, ...) */
	static const unsigned pair_ok[] = {SOCK_STREAM, SOCK_SEQPACKET};

	set_all(pol, ipc, OWS__ARRAY_LEN(ipc), V_EPERM);
	/* ENOSYS: what watches files takes it for a kernel without inotify and polls. */
	set_all(pol, watches, OWS__ARRAY_LEN(watches), V_ENOSYS);
	if (flags & OWS_SECCOMP_NO_TRUNCATE)
		set(pol, SYS_truncate, V_EPERM);
	values(pol, SYS_kill, REFUSE_VALUES, 0, every, OWS__ARRAY_LEN(every));
	for (size_t i = 0; i < OWS__ARRAY_LEN(by_pid); i++)
		only_self(pol, by_pid[i], 0, -1, 0);
	only_self(pol, SYS_setpriority, 1, 0, 2 /* PRIO_USER */);
	only_self(pol, SYS_ioprio_set, 1, 0, 3 /* IOPRIO_WHO_USER */);
	add_check(pol, SYS_socketpair, (check){.kind = PAIR_TYPES, .vals = pair_ok,
					       .nvals = OWS__ARRAY_LEN(pair_ok),
					       .deny = RET_ERRNO(EPERM)});
	/*
	 * A chown's group: -1 (kept) or the person's own.  Here a command keeps the
	 * person's supplementary groups, which other local users share, and no user
	 * namespace leaves them unmapped (EINVAL): a file given to one, with group
	 * write (which stays), is theirs to change after the session.  This filter is
	 * built by the person's own owsbx (only the landlock provider runs here).
	 */
	pol->own_group[0] = 0xffffffffu;
	pol->own_group[1] = (unsigned)getegid();
	values(pol, SYS_fchown, ALLOW_VALUES, 2, pol->own_group, 2);
	values(pol, SYS_fchownat, ALLOW_VALUES, 3, pol->own_group, 2);
#ifdef SYS_chown
	values(pol, SYS_chown, ALLOW_VALUES, 2, pol->own_group, 2);
	values(pol, SYS_lchown, ALLOW_VALUES, 2, pol->own_group, 2);
#endif
}

/* socket() and socketpair() by family, for the network mode. */
static void sockets(policy *pol, ows_net net, unsigned flags)
{
	static const unsigned families_none[] = {AF_UNIX};
	/* AF_UNIX first: a host-namespace sandbox takes the rest (families_open + 1). */
	static const unsigned families_open[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
	const bool host = flags & OWS_SECCOMP_HOST_NS;

	if (host && net == OWS_NET_NONE)
		set(pol, SYS_socket, V_EPERM);
	else if (host)
		values(pol, SYS_socket, ALLOW_VALUES, 0, families_open + 1,
		       OWS__ARRAY_LEN(families_open) - 1);
	else if (net == OWS_NET_NONE)
		/* Any other family goes to the command's reaper, which refuses it (EPERM) and
		 * counts the internet ones, for the host to say the network is off
		 * (channels.c).  With no listener (init, a reaper) the call fails, ENOSYS. */
		add_check(pol, SYS_socket,
			  (check){.kind = ALLOW_VALUES, .arg = 0, .vals = families_none,
				  .nvals = OWS__ARRAY_LEN(families_none),
				  .deny = SECCOMP_RET_USER_NOTIF});
	else
		values(pol, SYS_socket, ALLOW_VALUES, 0, families_open, OWS__ARRAY_LEN(families_open));
	if (!host)
		values(pol, SYS_socketpair, ALLOW_VALUES, 0, families_none,
		       OWS__ARRAY_LEN(families_none));
}

static void make_policy(policy *pol, ows_net net, unsigned flags)
{
	memset(pol, 0, sizeof(*pol));
	set_all(pol, allowed, OWS__ARRAY_LEN(allowed), V_ALLOW);
#if defined(__x86_64__)
	set_all(pol, allowed_arch, OWS__ARRAY_LEN(allowed_arch), V_ALLOW);
#endif
	set_all(pol, refused, OWS__ARRAY_LEN(refused), V_EPERM);
	/*
	 * Setting an extended attribute: an access ACL with an entry for "other" or
	 * for another user opens a file to them as chmod o+w would, and the filter
	 * cannot read the attribute's name.  The call is skipped and says it worked:
	 * any error fails cp -a and cp -p of a file that has an ACL (every file
	 * under `account` has one), with EOPNOTSUPP as with EPERM.  The copy keeps
	 * its mode and what the folder's default ACL gives; setfacl and setfattr
	 * change nothing.  (Docker allows them.)
	 */
	set_all(pol, set_xattr, OWS__ARRAY_LEN(set_xattr), V_SKIP);
	/* glibc falls back to clone() when clone3() is missing; clone's flags can be read. */
	set(pol, SYS_clone3, V_ENOSYS);
	/*
	 * openat2's mode sits in a struct the filter cannot read; libc and programs
	 * fall back to openat() on ENOSYS.  A reaper resolves its commands' names
	 * with it (RESOLVE_NO_MAGICLINKS, channels.c); every command it starts adds
	 * a filter that refuses it.  In the host's namespaces no command is
	 * supervised, and the call stays refused.
	 */
	if (flags & OWS_SECCOMP_HOST_NS)
		set(pol, SYS_openat2, V_ENOSYS);
	else
		set(pol, SYS_openat2, V_ALLOW);
	/*
	 * The reaper's tool: it connects on a copy of its command's socket
	 * (channels.c), under this filter.  Every command it starts adds a filter
	 * that refuses pidfd_getfd, so none reaches it.  In the host's namespaces
	 * no command is supervised, and the call stays refused.
	 */
	if (!(flags & OWS_SECCOMP_HOST_NS))
		set(pol, SYS_pidfd_getfd, V_ALLOW);
	checks_for_all(pol, flags);
	if (flags & OWS_SECCOMP_HOST_NS)
		host_ns(pol, flags);
	sockets(pol, net, flags);
}

/* ------------------------------------------------------------ the program */

typedef struct range {
	unsigned first;          /* the range's first call number; it ends where the next begins */
	unsigned short verdict;
} range;

static void leaf(prog *p, const policy *pol, unsigned short verdict)
{
	switch (verdict) {
	case V_ALLOW: ret(p, RET_ALLOW); break;
	case V_EPERM: ret(p, RET_ERRNO(EPERM)); break;
	case V_SKIP: ret(p, RET_ERRNO(0)); break; /* not run; returns 0 */
	case V_UNNAMED:
	case V_ENOSYS: ret(p, RET_ERRNO(ENOSYS)); break;
	default: emit_check(p, &pol->checks[verdict - V_CHECK]); break;
	}
}

/* A binary search over ranges [lo, hi) on the call number in A; every leaf returns. */
static void search(prog *p, const policy *pol, const range *r, unsigned lo, unsigned hi)
{
	if (hi - lo == 1) {
		leaf(p, pol, r[lo].verdict);
		return;
	}
	unsigned mid = lo + (hi - lo) / 2, left = new_label(p), right = new_label(p);
	/* The left half may be longer than a conditional branch reaches: a JA goes right. */
	branch(p, BPF_JGE, r[mid].first, NEXT, left);
	go(p, right);
	place(p, left);
	search(p, pol, r, lo, mid);
	place(p, right);
	search(p, pol, r, mid, hi);
}

/* Runs of equal verdicts; the last run goes on to the largest number. */
static unsigned ranges_of(const policy *pol, range *r)
{
	unsigned n = 0;
	for (unsigned nr = 0; nr < NR_SPAN; nr++)
		if (n == 0 || r[n - 1].verdict != pol->verdict[nr])
			r[n++] = (range){.first = nr, .verdict = pol->verdict[nr]};
	return n;
}

static int compile(prog *p, const policy *pol)
{
	range r[NR_SPAN];
	unsigned n = ranges_of(pol, r), native = new_label(p), kill = new_label(p);

	load(p, offsetof(struct seccomp_data, arch));
	branch(p, BPF_JEQ, OWS_AUDIT_ARCH, native, kill);
	place(p, kill);
	ret(p, SECCOMP_RET_KILL_PROCESS); /* another ABI: no way around the table */
	place(p, native);
	load(p, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	unsigned plain = new_label(p);
	branch(p, BPF_JGE, 0x40000000u, NEXT, plain); /* x32 system calls */
	ret(p, SECCOMP_RET_KILL_PROCESS);
	place(p, plain);
#endif
	search(p, pol, r, 0, n);
	return resolve(p);
}

int ows__seccomp_build(ows__seccomp *f, ows_net net, unsigned flags, ows_error *err)
{
	policy pol;
	unsigned short jt[OWS_SECCOMP_MAX_INSNS], jf[OWS_SECCOMP_MAX_INSNS], at[OWS_SECCOMP_MAX_INSNS];
	prog p = {.insns = f->insns, .jt = jt, .jf = jf, .at = at, .cap = OWS_SECCOMP_MAX_INSNS};

	make_policy(&pol, net, flags);
	f->len = 0;
	if (pol.overflow || compile(&p, &pol) != 0)
		return ows__fail(err, OWS_EINVAL, 0, "seccomp", NULL,
				 "seccomp filter could not be built: its table outgrew %d instructions "
				 "or %d call numbers", OWS_SECCOMP_MAX_INSNS, NR_SPAN);
	f->len = (unsigned short)p.len;
	return 0;
}

/* ------------------------------------------------------------ the guard */

/* if nr == `nr`: refuse when args[arg] is one of the guarded pids (or, `groups`, their
 * negatives: kill's process groups), else allow.  A holds nr on entry and when passed on. */
static void guard_target(prog *p, long nr, int arg, const pid_t *pids, int npids, bool groups)
{
	unsigned other = new_label(p), deny = new_label(p);
	branch(p, BPF_JEQ, (unsigned)nr, NEXT, other);
	load_arg(p, arg);
	for (int i = 0; i < npids; i++) {
		branch(p, BPF_JEQ, (unsigned)pids[i], deny, NEXT);
		if (groups)
			branch(p, BPF_JEQ, (unsigned)-pids[i], deny, NEXT);
	}
	ret(p, RET_ALLOW);
	place(p, deny);
	ret(p, RET_ERRNO(EPERM));
	place(p, other);
}

int ows__seccomp_guard_init(struct sock_filter *insns, size_t max, const pid_t *pids, int npids,
			    bool no_pidfd_signal)
{
	/* Not pidfd_open: a handle alone reaches nothing (pidfd_getfd is refused). */
	static const long by_target[] = {SYS_kill, SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo,
					 SYS_rt_tgsigqueueinfo};
	enum { ROOM = 128 };
	unsigned short jt[ROOM], jf[ROOM], at[ROOM];
	if (npids < 1 || npids > OWS_SECCOMP_GUARD_MAX)
		return -1;
	prog p = {.insns = insns, .jt = jt, .jf = jf, .at = at, .cap = max < ROOM ? (unsigned)max : ROOM};

	load(&p, offsetof(struct seccomp_data, nr));
	/* Each call's first argument names its target: a guarded process, or (kill) its group. */
	for (size_t i = 0; i < OWS__ARRAY_LEN(by_target); i++)
		guard_target(&p, by_target[i], 0, pids, npids, true);
	/* A hard RLIMIT_CPU of 0 set on it from outside ends it as surely as SIGKILL. */
	guard_target(&p, SYS_prlimit64, 0, pids, npids, false);
	/* fcntl(F_SETOWN, pid or -pid) would aim SIGIO (any signal, by F_SETSIG) at it;
	 * F_SETOWN_EX's owner sits in a struct the filter cannot read. */
	unsigned not_fcntl = new_label(&p), deny = new_label(&p), allow = new_label(&p);
	branch(&p, BPF_JEQ, SYS_fcntl, NEXT, not_fcntl);
	load_arg(&p, 1);
	branch(&p, BPF_JEQ, 15 /* F_SETOWN_EX */, deny, NEXT);
	branch(&p, BPF_JEQ, 8 /* F_SETOWN */, NEXT, allow);
	load_arg(&p, 2);
	for (int i = 0; i < npids; i++) {
		branch(&p, BPF_JEQ, (unsigned)pids[i], deny, NEXT);
		branch(&p, BPF_JEQ, (unsigned)-pids[i], deny, NEXT);
	}
	place(&p, allow);
	ret(&p, RET_ALLOW);
	place(&p, deny);
	ret(&p, RET_ERRNO(EPERM));
	place(&p, not_fcntl);
	if (no_pidfd_signal) {
		unsigned other = new_label(&p);
		branch(&p, BPF_JEQ, SYS_pidfd_send_signal, NEXT, other);
		ret(&p, RET_ERRNO(EPERM));
		place(&p, other);
	}
	ret(&p, RET_ALLOW);
	return resolve(&p) != 0 ? -1 : (int)p.len;
}
