/*
 * The seccomp filter, loaded for real in child processes: what each network
 * mode lets a process create, and what no sandbox may ever call.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "tap.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* Runs `probe` in a child under the filter; returns the errno it reports (0: allowed). */
static int under_filter(ows_net net, int (*probe)(void))
{
	ows__seccomp f;
	if (ows__seccomp_build(&f, net, NULL) != 0)
		return -1;
	int pfd[2];
	if (pipe(pfd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_fprog prog = {.len = f.len, .filter = f.insns};
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
			_exit(100);
		int e = probe();
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
			_exit(101);
		_exit(0);
	}
	close(pfd[1]);
	int e = -1;
	if (read(pfd[0], &e, sizeof(e)) != sizeof(e))
		e = -2;
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	return e;
}

static int sock(int domain, int type, int proto)
{
	int fd = socket(domain, type, proto);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int tcp(void) { return sock(AF_INET, SOCK_STREAM, 0); }
static int udp(void) { return sock(AF_INET, SOCK_DGRAM, 0); }
static int tcp6(void) { return sock(AF_INET6, SOCK_STREAM, 0); }
static int mptcp(void) { return sock(AF_INET, SOCK_STREAM, 262); }
static int vsock(void) { return sock(AF_VSOCK, SOCK_STREAM, 0); }
static int packet(void) { return sock(AF_PACKET, SOCK_DGRAM, 0); }
static int unix_sock(void) { return sock(AF_UNIX, SOCK_STREAM, 0); }
static int pair_inet(void)
{
	int sv[2];
	if (socketpair(AF_INET, SOCK_STREAM, 0, sv) == 0) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	return errno;
}
static int uring(void) { return syscall(SYS_io_uring_setup, 1, NULL) < 0 ? errno : 0; }
static int userns(void) { return unshare(CLONE_NEWUSER) < 0 ? errno : 0; }
static int clone3_call(void) { return syscall(SYS_clone3, NULL, 0) < 0 ? errno : 0; }
static int keyring(void) { return syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -4, 0) < 0 ? errno : 0; }
static int tiocsti(void)
{
	char c = 'x';
	return ioctl(0, TIOCSTI, &c) < 0 ? errno : 0;
}
static int plain_fork(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0)
		return errno;
	int st;
	waitpid(p, &st, 0);
	return 0;
}

int main(void)
{
	ows__seccomp f;
	is_int(ows__seccomp_build(&f, OWS_NET_NONE, NULL), 0, "the filter builds");
	ok(f.len > 10 && f.len < OWS_SECCOMP_MAX_INSNS, "with %u instructions", f.len);

	is_int(under_filter(OWS_NET_NONE, tcp), EPERM, "none: TCP socket refused");
	is_int(under_filter(OWS_NET_NONE, udp), EPERM, "none: UDP socket refused");
	is_int(under_filter(OWS_NET_NONE, tcp6), EPERM, "none: IPv6 socket refused");
	is_int(under_filter(OWS_NET_NONE, mptcp), EPERM, "none: MPTCP socket refused");
	is_int(under_filter(OWS_NET_NONE, unix_sock), 0, "none: unix sockets allowed");
	is_int(under_filter(OWS_NET_OPEN, tcp), 0, "open: TCP allowed");
	is_int(under_filter(OWS_NET_OPEN, udp), 0, "open: UDP allowed");
	for (int net = OWS_NET_NONE; net <= OWS_NET_OPEN; net++) {
		const char *m = net == OWS_NET_NONE ? "none" : "open";
		is_int(under_filter(net, vsock), EPERM, "%s: vsock refused", m);
		is_int(under_filter(net, packet), EPERM, "%s: packet sockets refused", m);
		is_int(under_filter(net, pair_inet), EPERM, "%s: socketpair outside AF_UNIX refused", m);
		is_int(under_filter(net, uring), EPERM, "%s: io_uring refused", m);
		is_int(under_filter(net, userns), EPERM, "%s: new user namespaces refused", m);
		is_int(under_filter(net, clone3_call), ENOSYS, "%s: clone3 says ENOSYS (glibc falls back)", m);
		is_int(under_filter(net, keyring), EPERM, "%s: the kernel keyring refused", m);
		is_int(under_filter(net, tiocsti), EPERM, "%s: TIOCSTI refused", m);
		is_int(under_filter(net, plain_fork), 0, "%s: fork still works", m);
	}
	return done_testing();
}
