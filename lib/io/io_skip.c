/* SPDX-License-Identifier: MIT */
/*
 * io_skip.c - KGC_IO_SKIP_SUCCESS: an operation with no completion of its
 * own when it succeeds (io_uring's IOSQE_CQE_SKIP_SUCCESS), for the send of
 * a request/response loop that links the next recv after it. Its arrays
 * stay pinned and rooted until the library knows the kernel is done with
 * them, and with no completion the only sign is the next operation of its
 * chain: that one starts (or is cancelled) only after this one completed,
 * so when the follower's final completion is returned, the skip operation
 * is released with it. If the skip operation fails its completion is
 * posted (the kernel clears the skip on failure) and returned like any
 * other; after a KGC_IO_HARDLINK the follower then runs and completes on
 * its own, releasing nothing more, and after a KGC_IO_LINK the kernel
 * cancels the rest of the chain *without* completions (REQ_F_SKIP_LINK_CQES:
 * measured, the follower's -ECANCELED never comes), so those operations -
 * never started, their arrays never touched - are released with the
 * failed one. A skip operation never counts among the completions a reap
 * waits for (r->kernel): at most one will come. One that no operation
 * follows before the submission goes to the kernel would never be
 * released: the submit takes its flag back (it completes like any other).
 * A multishot recv (a pool) has no single end to follow: refused. All
 * with r->lock held, in managed state.
 */
#include "io/io_internal.h"

/* The skip operation queued last and not submitted yet, or NULL: one with
 * no follower (a follower is queued after it, so it is no longer last). */
static struct io_slot *last_skip(struct kgc_io_ring *r)
{
	struct io_slot *s = r->last_sqe ? &r->slots[r->last_sqe->user_data] : NULL;

	return s && s->skip ? s : NULL;
}

int kgci_io_skip_set(struct kgc_io_ring *r, struct io_uring_sqe *sqe, unsigned flags)
{
	struct io_slot *s;

	if (!(flags & KGC_IO_SKIP_SUCCESS))
		return 0;
	s = &r->slots[sqe->user_data];
	if (!((flags & (KGC_IO_LINK | KGC_IO_HARDLINK)) ||
	      (sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK))))
		return IO_FAIL(EINVAL, "kgc_io_set_flags: %s: KGC_IO_SKIP_SUCCESS without KGC_IO_LINK or "
			       "_HARDLINK: its arrays are released by the completion of the operation "
			       "linked after it", r->name);
	if (s->pool)
		return IO_FAIL(EINVAL, "kgc_io_set_flags: %s: KGC_IO_SKIP_SUCCESS on a multishot recv",
			       r->name);
	if (s->skip)
		return 0;
	s->skip = true;
	s->hard = (flags & KGC_IO_HARDLINK) || (sqe->flags & IOSQE_IO_HARDLINK);
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	r->kernel--;
	return 0;
}

/* s is queued after the operation r->last_sqe names: the kernel links them
 * if that one is flagged so, and s releases it if it is a skip operation. */
void kgci_io_chain(struct kgc_io_ring *r, struct io_slot *s)
{
	struct io_slot *prev;

	if (!r->last_sqe || !(r->last_sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)))
		return;
	prev = &r->slots[r->last_sqe->user_data];
	prev->chain_next = (uint32_t)(s - r->slots);
	if (prev->skip)
		s->releases = (uint32_t)(prev - r->slots);
}

void kgci_io_skip_orphan(struct kgc_io_ring *r)
{
	struct io_slot *s = last_skip(r);

	if (!s)
		return;
	r->last_sqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
	s->skip = false;
	r->kernel++;
}

/* The chain after s, cancelled with no completions: released with s. */
static void release_chain_with(struct kgc_io_ring *r, struct io_slot *s)
{
	uint32_t tail = (uint32_t)(s - r->slots);

	while (r->slots[tail].releases != IO_NONE)	/* s may release skip ops before it */
		tail = r->slots[tail].releases;
	for (uint32_t i = s->chain_next; i != IO_NONE; i = r->slots[i].chain_next) {
		struct io_slot *f = &r->slots[i];

		if (!f->skip)
			r->kernel--;	/* counted, and no completion will come */
		f->skip = false;
		f->releases = IO_NONE;
		r->slots[tail].releases = i;	/* release_held walks releases */
		tail = i;
	}
}

void kgci_io_skip_own_cqe(struct kgc_io_ring *r, struct io_slot *s)
{
	if (s->chain_next != IO_NONE)	/* its follower releases nothing now */
		r->slots[s->chain_next].releases = IO_NONE;
	if (!s->hard)
		release_chain_with(r, s);
	s->chain_next = IO_NONE;
}
