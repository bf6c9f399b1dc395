/* SPDX-License-Identifier: MIT */
/*
 * io_core.c - what every kgc_io ring call shares: the checks of the ring
 * and the calling thread, the ring's lock (waited for in native state),
 * submission in native state, and the slots (getting one; rooting and
 * pinning an operation's arrays in it). io_ring.c, io_prep.c and io_reap.c
 * build on it; it calls none of them.
 */
#include <errno.h>
#include "io/io_internal.h"

#define RELAXED __ATOMIC_RELAXED

/* t may use r (NULL: only t checked): attached to r's heap, managed state. */
int kgci_io_check(struct kgc_io_ring *r, struct kgc_thread *t, const char *what)
{
	/* a detached thread is still readable when the heap keeps it (KGC_CHECK) */
	if (!t || t->magic != THREAD_MAGIC)
		return IO_FAIL(EINVAL, "%s: thread %p is not attached (detached?)", what, (void *)t);
	if (r && r->h != t->heap)
		return IO_FAIL(EINVAL, "%s: thread '%s' is not attached to the heap of %s", what,
			       t->name, r->name);
	if (thread_state(t) != TS_MANAGED)
		return IO_FAIL(EPERM, "%s: thread '%s' is in native state%s", what, t->name,
			       t->pub.crit_open ? " (inside a critical section)" : "");
	return 0;
}

/* r non-NULL and usable by t (kgci_io_check), then r->lock taken; with sync
 * its registered buffers follow the pinned space (destroy drops them all). */
int kgci_io_begin(struct kgc_io_ring *r, struct kgc_thread *t, const char *what, bool sync)
{
	int err;

	if (!r)
		return IO_FAIL(EINVAL, "%s: NULL ring", what);
	if ((err = kgci_io_check(r, t, what)))
		return err;
	kgci_io_lock(r, t);
	if (sync)	/* the pinned space changed: the kernel lets go of what left */
		kgci_io_fixed_sync(r, t);
	return 0;
}

/* Take r->lock; contended, wait for it in native state (its holder may be
 * waiting for a collection). Returns managed. */
void kgci_io_lock(struct kgc_io_ring *r, struct kgc_thread *t)
{
	if (pthread_mutex_trylock(&r->lock) == 0)
		return;
	kgc_enter_native(t);
	pthread_mutex_lock(&r->lock);
	kgc_leave_native(t);
}

/* io_uring_submit in native state (it may do the I/O inline), r->lock held. */
int kgci_io_submit_locked(struct kgc_io_ring *r, struct kgc_thread *t)
{
	int n;

	if (!io_uring_sq_ready(&r->ur))
		return 0;
	kgci_io_skip_orphan(r);
	kgc_enter_native(t);
	n = io_uring_submit(&r->ur);
	kgc_leave_native(t);
	r->last_sqe = NULL;	/* the kernel has it: too late for kgc_io_set_flags */
	return n;
}

/* An sqe; the SQ full (cancels after queued operations), submit first. */
struct io_uring_sqe *kgci_io_get_sqe(struct kgc_io_ring *r, struct kgc_thread *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ur);

	if (!sqe && kgci_io_submit_locked(r, t) >= 0)
		sqe = io_uring_get_sqe(&r->ur);
	return sqe;
}

struct io_slot *kgci_io_slot_get(struct kgc_io_ring *r)
{
	struct io_slot *s;

	if (r->free_head == IO_NONE)
		return NULL;
	s = &r->slots[r->free_head];
	r->free_head = s->next_free;
	return s;
}

/* Root and pin objs[0..n) in s (managed: no collection runs meanwhile). */
void kgci_io_slot_hold(struct kgc_io_ring *r, struct io_slot *s, const kgc_obj *objs, unsigned n,
		       uint64_t user_data)
{
	for (unsigned i = 0; i < n; i++) {
		atomic_fetch_add(region_pins(r->h, region_index(r->h, objs[i])), 1);
		__atomic_store_n(&s->arr[i], objs[i], RELAXED);
	}
	s->user_data = user_data;
	s->state = SLOT_INFLIGHT;
	s->skip = s->hard = false;
	s->releases = s->chain_next = IO_NONE;
	__atomic_store_n(&s->narr, n, __ATOMIC_RELEASE);
	atomic_fetch_add_explicit(&r->inflight, 1, memory_order_relaxed);
	r->kernel++;
	atomic_fetch_add_explicit(&r->h->io_stat[IOS_SUBMITTED], 1, memory_order_relaxed);
}
