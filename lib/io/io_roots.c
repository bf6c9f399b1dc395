/* SPDX-License-Identifier: MIT */
/*
 * io_roots.c - what the collector sees of kgc_io rings: the arrays of
 * operations in flight as pinned roots, and the io_* stats. At a safepoint
 * (h->lock held: the ring list is stable; slots change only in managed
 * state), and the arrays of provided-buffer pools (io_pool.c). No liburing call here: programs that never use a ring link no
 * io_uring code.
 */
#include "io/io_internal.h"

/* A pool's arrays: pinned-space arrays the kernel may pick or a completion
 * named, until the program takes them. */
static void pool_roots(struct kgc_heap *h, struct kgc_io_ring *r, slot_fn fn, void *ctx)
{
	for (struct kgc_io_pool *p = __atomic_load_n(&r->pools, __ATOMIC_ACQUIRE); p; p = p->next)
		for (uint32_t i = 0; i < p->nbufs; i++)
			kgci_pinned_root(h, "kgc_io pool of", r->name,
					 __atomic_load_n(&p->arr[i], __ATOMIC_ACQUIRE),
					 "provided buffer", fn, ctx);
}

void kgci_io_roots_iterate(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	for (struct kgc_io_ring *r = h->io_rings; r; r = r->next) {
		pool_roots(h, r, fn, ctx);
		for (uint32_t i = 0; i < r->nslots; i++) {
			struct io_slot *s = &r->slots[i];
			uint32_t n = __atomic_load_n(&s->narr, __ATOMIC_ACQUIRE);

			for (uint32_t k = 0; k < n && k < KGC_IO_IOV_MAX; k++)
				kgci_pinned_root(h, "kgc_io", r->name,
						 __atomic_load_n(&s->arr[k], __ATOMIC_RELAXED),
						 "array of I/O in flight", fn, ctx);
		}
	}
}

/* h->lock held (kgci_stats_refresh). */
void kgci_io_stats_refresh(struct kgc_heap *h)
{
	h->st.io_submitted = atomic_load_explicit(&h->io_stat[IOS_SUBMITTED], memory_order_relaxed);
	h->st.io_completed = atomic_load_explicit(&h->io_stat[IOS_COMPLETED], memory_order_relaxed);
	h->st.io_errors = atomic_load_explicit(&h->io_stat[IOS_ERRORS], memory_order_relaxed);
	h->st.io_bytes = atomic_load_explicit(&h->io_stat[IOS_BYTES], memory_order_relaxed);
	h->st.io_cancels = atomic_load_explicit(&h->io_stat[IOS_CANCELS], memory_order_relaxed);
	h->st.io_fixed = atomic_load_explicit(&h->io_stat[IOS_FIXED], memory_order_relaxed);
	h->st.io_plain = atomic_load_explicit(&h->io_stat[IOS_PLAIN], memory_order_relaxed);
	h->st.io_inline = atomic_load_explicit(&h->io_stat[IOS_INLINE], memory_order_relaxed);
	h->st.io_inline_calls = atomic_load_explicit(&h->io_stat[IOS_INLINE_CALLS], memory_order_relaxed);
}
