/*
 * Which session and proc handles are live, and which calls are using them.
 *
 * A handle the host closed or freed cannot be checked by looking at it: its
 * memory is gone.  So every live handle is in a process-wide set, and every
 * public call looks its handle up there first, under one lock held only for
 * the look-up: a closed session, a freed proc and NULL get OWS_ESTATE or
 * OWS_EINVAL instead of a crash.  (An address malloc hands out again for a
 * new handle is that new handle's: a stale pointer then names a live handle
 * of the same kind, which is a host bug this cannot see, but not a crash.)
 *
 * A call on a session counts itself in s->refs for as long as it runs, so
 * that ows_session_close(), from any thread, first ends the session's
 * processes (which makes waits in flight return), then waits for the calls
 * in flight to leave, and only then frees what they use.  No lock is held
 * across a blocking call.
 *
 * The same lock guards what a call on a proc reads after its session is
 * gone or going: p->session, p->exited and p->exit_code.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform.h"

/* ------------------------------------------------- a set of live pointers */

/* Open addressing, linear probing, deletion by backward shift: no tombstones. */
typedef struct ptrset {
	const void **slot;
	size_t cap; /* a power of two, or 0 */
	size_t len;
} ptrset;

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static bool set_has(const ptrset *set, const void *p)
{
	if (!p || set->cap == 0)
		return false;
	for (size_t i = ptr_hash(p, set->cap);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slot[i])
			return false;
		if (set->slot[i] == p)
			return true;
	}
}

static void set_put_slot(ptrset *set, const void *p)
{
	size_t i = ptr_hash(p, set->cap);
	while (set->slot[i])
		i = (i + 1) & (set->cap - 1);
	set->slot[i] = p;
	set->len++;
}

static bool set_add(ptrset *set, const void *p)
{
	if ((set->len + 1) * 2 > set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		const void **slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return false;
		ptrset old = *set;
		*set = (ptrset){.slot = slot, .cap = cap};
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i])
				set_put_slot(set, old.slot[i]);
		free(old.slot);
	}
	set_put_slot(set, p);
	return true;
}

static void set_remove(ptrset *set, const void *p)
{
	if (!set_has(set, p))
		return;
	size_t mask = set->cap - 1, i = ptr_hash(p, set->cap);
	while (set->slot[i] != p)
		i = (i + 1) & mask;
	set->slot[i] = NULL;
	set->len--;
	/* Pull later entries of the same run back over the hole. */
	for (size_t j = (i + 1) & mask; set->slot[j]; j = (j + 1) & mask) {
		size_t home = ptr_hash(set->slot[j], set->cap);
		bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
		if (movable) {
			set->slot[i] = set->slot[j];
			set->slot[j] = NULL;
			i = j;
		}
	}
}

/* Both sets and every field the comment at the top names: under ows__plat_global_lock(). */
static ptrset live_sessions, live_procs;

/* --------------------------------------------------------------- sessions */

int ows__session_register(ows_session *s, ows_error *err)
{
	ows__plat_global_lock();
	bool ok = set_add(&live_sessions, s);
	ows__plat_global_unlock();
	return ok ? 0 : ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
}

bool ows__session_is_live(const ows_session *s)
{
	ows__plat_global_lock();
	bool live = set_has(&live_sessions, s) && !s->closing;
	ows__plat_global_unlock();
	return live;
}

int ows__session_enter(ows_session *s, ows_error *err)
{
	if (!s)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "session is NULL");
	ows__plat_global_lock();
	bool live = set_has(&live_sessions, s) && !s->closing;
	if (live)
		s->refs++;
	ows__plat_global_unlock();
	if (!live)
		return ows__fail(err, OWS_ESTATE, 0, NULL, "open a new session",
				 "the session was closed");
	return 0;
}

void ows__session_leave(ows_session *s)
{
	ows__plat_global_lock();
	if (--s->refs == 0 && s->closing)
		ows__plat_global_wake();
	ows__plat_global_unlock();
}

int ows__session_begin_shutdown(ows_session *s, ows_error *err)
{
	ows__plat_global_lock();
	bool live = set_has(&live_sessions, s) && (!s->closing || s->shut);
	bool first = live && !s->closing;
	if (first)
		s->closing = s->shut = true;
	ows__plat_global_unlock();
	if (!live)
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "the session was closed already");
	return first;
}

int ows__session_begin_close(ows_session *s, ows_error *err)
{
	ows__plat_global_lock();
	/* A session shut down is closing already, and still to be freed. */
	bool live = set_has(&live_sessions, s) && (!s->closing || s->shut);
	if (live) {
		s->closing = true;
		s->shut = false;
		set_remove(&live_sessions, s);
	}
	ows__plat_global_unlock();
	if (!live)
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL,
				 "the session was closed already");
	return 0;
}

void ows__session_drain(ows_session *s)
{
	ows__plat_global_lock();
	while (s->refs > 0)
		ows__plat_global_wait();
	ows__plat_global_unlock();
}

void ows__session_detach_procs(ows_session *s)
{
	ows_proc *freed = NULL;
	ows__plat_global_lock();
	while (s->procs) {
		ows_proc *p = s->procs;
		s->procs = p->next;
		p->session = NULL; /* handles the caller still holds live on, without it */
		p->next = NULL;
		if (p->freed) { /* ows_proc_free() came while the session closed: ours now */
			p->next = freed;
			freed = p;
		}
	}
	ows__plat_global_unlock();
	while (freed) {
		ows_proc *p = freed;
		freed = p->next;
		ows__proc_release(p);
	}
}

/* ------------------------------------------------------------------ procs */

int ows__proc_register(ows_session *s, ows_proc *p, ows_error *err)
{
	ows__plat_global_lock();
	bool ok = set_add(&live_procs, p);
	if (ok) {
		p->id = ++s->next_proc_id;
		p->next = s->procs;
		s->procs = p;
	}
	ows__plat_global_unlock();
	return ok ? 0 : ows__fail(err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
}

int ows__proc_enter(const ows_proc *p, ows_session **s, ows_error *err)
{
	*s = NULL;
	if (!p)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "proc is NULL");
	ows__plat_global_lock();
	bool live = set_has(&live_procs, p);
	/* A session on its way out serves no new call: the proc is as good as detached.
	 * Shut down (ows_session_shutdown) but not yet closing, it still tells its
	 * procs' exits, so that a binding's wait returns what the shutdown killed. */
	if (live && p->session && (!p->session->closing || p->session->shut)) {
		*s = p->session;
		(*s)->refs++;
	}
	ows__plat_global_unlock();
	if (!live)
		return ows__fail(err, OWS_ESTATE, 0, NULL, NULL, "the proc was freed");
	return 0;
}

static void set_exit(ows_proc *p, int code, int signo)
{
	ows__plat_global_lock();
	if (!p->exited) {
		p->exited = true;
		p->exit_code = code;
		p->exit_signal = signo;
	}
	ows__plat_global_unlock();
}

void ows__proc_set_exit(ows_proc *p, int code)
{
	set_exit(p, code, 0);
}

void ows__proc_set_killed(ows_proc *p, int signo)
{
	set_exit(p, 128 + signo, signo);
}

int ows_proc_signal(const ows_proc *p)
{
	ows__plat_global_lock();
	int signo = p && p->exited ? p->exit_signal : 0;
	ows__plat_global_unlock();
	return signo;
}

bool ows__proc_get_exit(const ows_proc *p, int *code)
{
	ows__plat_global_lock();
	bool exited = p->exited;
	if (exited && code)
		*code = p->exit_code;
	ows__plat_global_unlock();
	return exited;
}

/*
 * Takes `p` out of the live set and its session's list.  False when it is
 * not ours to free now: freed already (a double free, ignored), or its
 * session is closing, and the close frees it once nothing uses it.
 */
bool ows__proc_unregister(ows_proc *p)
{
	ows__plat_global_lock();
	bool live = set_has(&live_procs, p);
	set_remove(&live_procs, p);
	ows_session *s = live ? p->session : NULL;
	bool ours = live;
	if (s && s->closing) {
		p->freed = true;
		ours = false;
	} else if (s) {
		for (ows_proc **pp = &s->procs; *pp; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				break;
			}
		p->next = NULL;
		p->session = NULL;
	}
	ows__plat_global_unlock();
	return ours;
}
