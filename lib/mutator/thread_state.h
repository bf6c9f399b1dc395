/* SPDX-License-Identifier: MIT */
/*
 * thread_state.h - a thread's managed/native/blocked transitions, inline
 * for the fast paths; the slow side (blocking while a collection runs, the
 * asymmetric Dekker with the safepoint) is thread_state.c's. kgc.h's inline
 * kgc__to_managed is the same transition for the public fast paths.
 * Included by gc_internal.h once struct kgc_thread is known.
 */
#ifndef KGC_THREAD_STATE_H
#define KGC_THREAD_STATE_H

/* the thread's own view of its state (the collector reads it seq_cst) */
static inline int thread_state(const struct kgc_thread *t)
{
	return __atomic_load_n(&t->pub.state, __ATOMIC_RELAXED);
}

static inline void thread_set_native(struct kgc_thread *t, int state)
{
	__atomic_store_n(&t->pub.state, state, __ATOMIC_RELEASE);
}

void kgci_thread_to_managed_slow(struct kgc_thread *t, int prev);

/* managed again; blocks while a collection runs (asymmetric Dekker, see thread_state.c) */
static inline void thread_to_managed(struct kgc_thread *t)
{
	int prev = thread_state(t);

	if (unlikely(!kgc__to_managed(&t->pub)))
		kgci_thread_to_managed_slow(t, prev);
}
void thread_to_managed(struct kgc_thread *t);

#endif
