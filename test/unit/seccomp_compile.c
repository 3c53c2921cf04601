/*
 * The seccomp program against the table it is compiled from.
 *
 * lib/linux/wall/seccomp.c turns a verdict per call number (and argument checks)
 * into BPF: ranges, a binary search, labels resolved into jump offsets.  Here
 * each configuration's program is run by a small BPF interpreter on every
 * call number of the table and past it, each checked argument on its edge
 * values (every bit, each listed value and its neighbours, the high word
 * set), and every other ABI; each answer must be what the table says, read
 * directly.  So a wrong offset, a range cut at the wrong number or a check
 * that reads the wrong argument fails here, on every architecture built,
 * without loading anything into a kernel (test/unit/seccomp.c does that).
 *
 * The small filter each supervised command adds (channels.c) is written by
 * hand; it is run here the same way against what its comments say.
 *
 * The table is the file's own static data: the file is included, not linked.
 * (A libseccomp program built from the same table was the other way; its rule
 * language has no "refused unless the argument is one of these" with the
 * call's own refusal, so the table would have to be restated in another
 * shape, which is the copy this test exists to avoid.)
 */
#include "linux/wall/seccomp.c"

#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <stdio.h>

#include "linux/wall/channels.h"
#include "tap.h"

#define KILL SECCOMP_RET_KILL_PROCESS

/* The classic BPF a seccomp program may hold, as the kernel runs it; an instruction
 * outside what the compiler emits, or a jump out of the program, is a failure (~0u). */
static unsigned run_bpf(const ows__seccomp *f, const struct seccomp_data *d)
{
	uint32_t a = 0;
	for (unsigned pc = 0; pc < f->len; pc++) {
		const struct sock_filter *in = &f->insns[pc];
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (in->k > sizeof(*d) - 4 || in->k % 4)
				return ~0u;
			memcpy(&a, (const char *)d + in->k, 4);
			break;
		case BPF_ALU | BPF_AND | BPF_K: a &= in->k; break;
		case BPF_JMP | BPF_JA: pc += in->k; break;
		case BPF_JMP | BPF_JEQ | BPF_K: pc += a == in->k ? in->jt : in->jf; break;
		case BPF_JMP | BPF_JGE | BPF_K: pc += a >= in->k ? in->jt : in->jf; break;
		case BPF_JMP | BPF_JSET | BPF_K: pc += (a & in->k) ? in->jt : in->jf; break;
		case BPF_RET | BPF_K: return in->k;
		default: return ~0u;
		}
	}
	return ~0u; /* fell off the end */
}

static bool in_vals(const check *c, uint32_t v)
{
	for (unsigned i = 0; i < c->nvals; i++)
		if (c->vals[i] == v)
			return true;
	return false;
}

/* What the table says, read directly: the compiler's job done the slow, plain way. */
static unsigned expected(const policy *pol, const struct seccomp_data *d)
{
	if (d->arch != OWS_AUDIT_ARCH)
		return KILL;
#if defined(__x86_64__)
	if ((uint32_t)d->nr >= 0x40000000)
		return KILL;
#endif
	unsigned nr = (unsigned)d->nr;
	unsigned short v = pol->verdict[nr < NR_SPAN ? nr : NR_SPAN - 1];
	uint32_t lo[6];
	for (int i = 0; i < 6; i++)
		lo[i] = (uint32_t)d->args[i]; /* the program reads the low word only */
	switch (v) {
	case V_ALLOW: return RET_ALLOW;
	case V_EPERM: return RET_ERRNO(EPERM);
	case V_SKIP: return RET_ERRNO(0);
	case V_UNNAMED:
	case V_ENOSYS: return RET_ERRNO(ENOSYS);
	}
	const check *c = &pol->checks[v - V_CHECK];
	bool allow = false;
	switch (c->kind) {
	case REFUSE_BITS: allow = !(lo[c->arg] & c->mask); break;
	case ALLOW_VALUES: allow = in_vals(c, lo[c->arg]); break;
	case REFUSE_VALUES: allow = !in_vals(c, lo[c->arg]); break;
	case ONLY_SELF:
		allow = (c->which < 0 || lo[c->which] != c->mask) && lo[c->arg] == 0;
		break;
	case PAIR_TYPES: allow = lo[0] == AF_UNIX && in_vals(c, lo[1] & 0xf); break;
	}
	return allow ? RET_ALLOW : c->deny;
}

/* The argument values worth trying for a check: its edges. */
static unsigned edge_values(const check *c, uint64_t *out, unsigned cap)
{
	unsigned n = 0;
#define PUT(x)                                                                                     \
	do {                                                                                       \
		if (n < cap)                                                                       \
			out[n++] = (x);                                                            \
	} while (0)
	PUT(0);
	PUT(0xffffffffu);
	PUT(UINT64_MAX);
	for (int b = 0; b < 32; b++)
		PUT(1u << b);
	for (unsigned i = 0; i < c->nvals; i++) {
		PUT(c->vals[i]);
		PUT((uint32_t)(c->vals[i] + 1));
		PUT((uint32_t)(c->vals[i] - 1));
		PUT(((uint64_t)1 << 32) | c->vals[i]); /* the high word does not count */
	}
	PUT(c->mask);
	PUT(c->mask | 0x10000u);
	PUT(((uint64_t)0xdead << 32) | c->mask);
	PUT(((uint64_t)0xdead << 32));
#undef PUT
	return n;
}

typedef struct tally {
	unsigned tried, wrong;
	char first[160];
} tally;

static void try_one(const ows__seccomp *f, const policy *pol, const struct seccomp_data *d, tally *t)
{
	unsigned got = run_bpf(f, d), want = expected(pol, d);
	t->tried++;
	if (got == want)
		return;
	if (t->wrong++ == 0)
		snprintf(t->first, sizeof(t->first),
			 "nr %d arch %#x args %#llx %#llx %#llx: program %#x, table %#x", d->nr,
			 d->arch, (unsigned long long)d->args[0], (unsigned long long)d->args[1],
			 (unsigned long long)d->args[2], got, want);
}

/* Every number of the table and past it; each check's arguments on their edges. */
static tally compare(const ows__seccomp *f, const policy *pol)
{
	tally t = {0};
	static const int beyond[] = {NR_SPAN, NR_SPAN + 1, 1000, 0x3fffffff, 0x40000000,
				     0x40000001, -1};
	struct seccomp_data d = {.arch = OWS_AUDIT_ARCH};
	for (int nr = 0; nr < NR_SPAN; nr++) {
		d.nr = nr;
		memset(d.args, 0, sizeof(d.args));
		try_one(f, pol, &d, &t);
		unsigned short v = pol->verdict[nr];
		if (v < V_CHECK)
			continue;
		const check *c = &pol->checks[v - V_CHECK];
		uint64_t vals[128];
		unsigned n = edge_values(c, vals, 128);
		for (int arg = 0; arg < 6; arg++)
			for (unsigned i = 0; i < n; i++) {
				memset(d.args, 0, sizeof(d.args));
				d.args[arg] = vals[i];
				try_one(f, pol, &d, &t);
				/* and with the other arguments of a two-argument check set */
				d.args[arg == 0 ? 1 : 0] = AF_UNIX;
				try_one(f, pol, &d, &t);
				d.args[0] = AF_UNIX;
				d.args[1] = vals[i];
				try_one(f, pol, &d, &t);
			}
	}
	for (size_t i = 0; i < OWS__ARRAY_LEN(beyond); i++) {
		d.nr = beyond[i];
		memset(d.args, 0, sizeof(d.args));
		try_one(f, pol, &d, &t);
	}
	static const uint32_t other_abis[] = {AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64,
					      AUDIT_ARCH_ARM, 0};
	for (size_t i = 0; i < OWS__ARRAY_LEN(other_abis); i++) {
		d.arch = other_abis[i];
		for (int nr = 0; nr < NR_SPAN; nr += 7) {
			d.nr = nr;
			try_one(f, pol, &d, &t);
		}
	}
	return t;
}

/* An open() with `flags`: to the reaper when it may open what is there. */
static unsigned chan_open_expected(uint32_t flags)
{
	if (flags & (O_PATH | O_DIRECTORY) || (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return RET_ALLOW;
	return SECCOMP_RET_USER_NOTIF;
}

/* The command's own filter (channels.c), as its comments describe it. */
static unsigned chan_expected(const struct seccomp_data *d, bool offline, mode_t closed)
{
	const unsigned other = offline ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
	uint32_t a0 = (uint32_t)d->args[0], a1 = (uint32_t)d->args[1], a2 = (uint32_t)d->args[2];
	if (d->arch != OWS_AUDIT_ARCH)
		return KILL;
	if (d->nr == SYS_connect)
		return SECCOMP_RET_USER_NOTIF;
	if (d->nr == SYS_openat2)
		return RET_ERRNO(ENOSYS);
	if (d->nr == SYS_pidfd_getfd)
		return RET_ERRNO(EPERM);
	if (d->nr == SYS_openat)
		return chan_open_expected(a2);
#ifdef SYS_open
	if (d->nr == SYS_open)
		return chan_open_expected(a1);
	if (d->nr == SYS_creat)
		return SECCOMP_RET_USER_NOTIF;
#endif
	if (d->nr == SYS_landlock_create_ruleset || d->nr == SYS_landlock_add_rule ||
	    d->nr == SYS_landlock_restrict_self)
		return RET_ERRNO(EOPNOTSUPP);
	if (d->nr == SYS_prctl)
		return a0 == PR_SET_DUMPABLE && a1 == 0 ? RET_ERRNO(0) : RET_ALLOW;
	if (d->nr == SYS_umask)
		return (a0 & closed) == closed ? RET_ALLOW : SECCOMP_RET_USER_NOTIF;
	if (d->nr == SYS_seccomp)
		return a0 == SECCOMP_SET_MODE_FILTER && (a1 & SECCOMP_FILTER_FLAG_NEW_LISTENER)
			       ? RET_ERRNO(EPERM)
			       : RET_ALLOW;
	if (d->nr != SYS_socket && d->nr != SYS_socketpair)
		return RET_ALLOW;
	if (a0 != AF_UNIX)
		return other;
	return (a1 & 0xf) == SOCK_STREAM || (a1 & 0xf) == SOCK_SEQPACKET ? RET_ALLOW
									  : RET_ERRNO(EPERM);
}

static tally chan_compare(bool offline, mode_t closed)
{
	static const uint64_t a0s[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, 0, 3, 0xffffffffu,
				       ((uint64_t)1 << 32) | AF_UNIX, SECCOMP_SET_MODE_STRICT,
				       PR_SET_DUMPABLE, PR_GET_DUMPABLE, ((uint64_t)1 << 32) | PR_SET_DUMPABLE,
				       SECCOMP_SET_MODE_FILTER, SECCOMP_GET_ACTION_AVAIL, 022, 020,
				       077, 0777, ((uint64_t)1 << 32) | 022};
	static const uint64_t a1s[] = {0, SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW,
				       SOCK_STREAM | SOCK_CLOEXEC, SOCK_DGRAM | SOCK_NONBLOCK, 0xf0,
				       SECCOMP_FILTER_FLAG_NEW_LISTENER,
				       SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC,
				       SECCOMP_FILTER_FLAG_TSYNC, 0xffffffffu, O_WRONLY, O_RDWR,
				       O_WRONLY | O_PATH, O_RDWR | O_DIRECTORY, O_WRONLY | O_CREAT,
				       O_WRONLY | O_CREAT | O_EXCL, O_CREAT | O_EXCL,
				       O_WRONLY | O_TRUNC | O_CLOEXEC, O_ACCMODE, 1, 2,
				       ((uint64_t)1 << 32) | 0};
	/* openat's flags */
	static const uint64_t a2s[] = {0, O_RDONLY | O_CLOEXEC, O_WRONLY, O_RDWR | O_CLOEXEC,
				       O_WRONLY | O_CREAT | O_TRUNC, O_WRONLY | O_CREAT | O_EXCL,
				       O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, O_PATH | O_WRONLY,
				       O_DIRECTORY | O_RDWR, O_TMPFILE | O_RDWR, O_RDONLY | O_CREAT,
				       O_RDONLY | O_TRUNC, O_WRONLY | O_NONBLOCK, O_ACCMODE,
				       ((uint64_t)1 << 32) | O_RDONLY, ((uint64_t)1 << 32) | O_WRONLY};
	struct sock_filter insns[96];
	ows__seccomp f = {0};
	tally t = {0};
	int n = ows__chan_filter(insns, OWS__ARRAY_LEN(insns), offline, closed);
	if (n <= 0 || (size_t)n > OWS__ARRAY_LEN(f.insns)) {
		t.wrong = 1;
		snprintf(t.first, sizeof(t.first), "the filter does not build (%d)", n);
		return t;
	}
	memcpy(f.insns, insns, (size_t)n * sizeof(insns[0]));
	f.len = (unsigned)n;
	struct seccomp_data d = {.arch = OWS_AUDIT_ARCH};
	for (int nr = 0; nr < NR_SPAN; nr++)
		for (size_t i = 0; i < OWS__ARRAY_LEN(a0s); i++)
			for (size_t j = 0; j < OWS__ARRAY_LEN(a1s); j++)
				for (size_t k = 0; k < (nr == SYS_openat ? OWS__ARRAY_LEN(a2s) : 1); k++) {
					d.nr = nr;
					d.args[0] = a0s[i];
					d.args[1] = a1s[j];
					d.args[2] = a2s[k];
					unsigned got = run_bpf(&f, &d);
					unsigned want = chan_expected(&d, offline, closed);
					t.tried++;
					if (got != want && t.wrong++ == 0)
						snprintf(t.first, sizeof(t.first),
							 "nr %d args %#llx %#llx %#llx: filter %#x, expected %#x",
							 nr, (unsigned long long)d.args[0],
							 (unsigned long long)d.args[1],
							 (unsigned long long)d.args[2], got, want);
				}
	d.arch = AUDIT_ARCH_I386;
	d.nr = SYS_connect;
	t.tried++;
	if (run_bpf(&f, &d) != KILL && t.wrong++ == 0)
		snprintf(t.first, sizeof(t.first), "another ABI is not killed");
	return t;
}

int main(void)
{
	static const struct {
		ows_net net;
		unsigned flags;
		const char *name;
	} configs[] = {
		{OWS_NET_NONE, 0, "none"},
		{OWS_NET_ALLOWLIST, 0, "allowlist"},
		{OWS_NET_OPEN, 0, "open"},
		{OWS_NET_NONE, OWS_SECCOMP_HOST_NS, "none, host namespaces"},
		{OWS_NET_OPEN, OWS_SECCOMP_HOST_NS, "open, host namespaces"},
		{OWS_NET_OPEN, OWS_SECCOMP_HOST_NS | OWS_SECCOMP_NO_TRUNCATE,
		 "open, host namespaces, no truncate"},
		{OWS_NET_ALLOWLIST, OWS_SECCOMP_NO_GROUP_WRITE, "allowlist, a shared group"},
	};
	static ows__seccomp f;
	static policy pol;
	for (size_t i = 0; i < OWS__ARRAY_LEN(configs); i++) {
		ows_error err;
		ows_error_clear(&err);
		if (!ok(ows__seccomp_build(&f, configs[i].net, configs[i].flags, &err) == 0,
			"%s: the program builds", configs[i].name)) {
			diag("%s", err.what);
			continue;
		}
		make_policy(&pol, configs[i].net, configs[i].flags);
		ok(!pol.overflow, "%s: the table fits", configs[i].name);
		ok(pol.verdict[NR_SPAN - 1] == V_UNNAMED,
		   "%s: the table's last number is unnamed, so every number past it is ENOSYS",
		   configs[i].name);
		tally t = compare(&f, &pol);
		if (!ok(t.wrong == 0, "%s: %u inputs, %u instructions: the program answers as the table",
			configs[i].name, t.tried, f.len))
			diag("%u wrong; first: %s", t.wrong, t.first);
	}

	for (int offline = 0; offline <= 1; offline++)
		for (int shared = 0; shared <= 1; shared++) {
			tally t = chan_compare(offline, S_IWOTH | (shared ? S_IWGRP : 0));
			if (!ok(t.wrong == 0,
				"a command's own filter (%s%s): %u inputs answered as documented",
				offline ? "none" : "allowlist, open", shared ? ", a shared group" : "",
				t.tried))
				diag("%u wrong; first: %s", t.wrong, t.first);
		}

	/* The control: the comparison sees one jump moved by one. */
	ows_error err;
	ows_error_clear(&err);
	ows__seccomp_build(&f, OWS_NET_OPEN, 0, &err);
	make_policy(&pol, OWS_NET_OPEN, 0);
	unsigned moved = 0;
	for (unsigned i = f.len / 2; i < f.len && !moved; i++)
		if (f.insns[i].code == (BPF_JMP | BPF_JGE | BPF_K) && f.insns[i].jf > 0)
			f.insns[i].jf--, moved = i;
	tally t = compare(&f, &pol);
	ok(moved && t.wrong > 0, "control: a jump one short (instruction %u) is seen (%u wrong)",
	   moved, t.wrong);
	return done_testing();
}
