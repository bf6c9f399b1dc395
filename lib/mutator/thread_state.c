/* SPDX-License-Identifier: MIT */
/*
 * thread_state.c - a thread's argument checks and its managed <-> native
 * transitions (the inline side is thread_state.h): a leaf below the heap, it
 * calls nothing of the collector but errors, so any layer can check the
 * thread it is given and change its state.
 *
 * Transition protocol (asymmetric Dekker): a mutator stores its state with a
 * plain (release) store, then only a compiler barrier, then loads the poll
 * word. The collector stores the poll word, then runs membarrier(PRIVATE_
 * EXPEDITED) - a full barrier on every running thread of the process - and
 * only then reads the states. Without membarrier both sides use seq_cst
 * fences.
 */
#include <errno.h>
#include "gc_internal.h"

void kgci_thread_wait_gc_end(struct kgc_heap *h)
{
	pthread_mutex_lock(&h->sp.lock);
	while (atomic_load_explicit(&h->sp.poll_word, memory_order_acquire))
		pthread_cond_wait(&h->sp.cond, &h->sp.lock);
	pthread_mutex_unlock(&h->sp.lock);
}

void kgci_thread_to_managed_slow(struct kgc_thread *t, int prev)
{
	struct kgc_heap *h = t->heap;

	for (;;) {
		thread_set_native(t, prev == TS_MANAGED ? TS_BLOCKED : prev);
		kgci_thread_wait_gc_end(h);
		if (kgc__to_managed(&t->pub))	/* kgc.h: the transition itself */
			return;
	}
}

kgc_obj kgci_thread_first_critical(struct kgc_thread *t)
{
	uint32_t top = __atomic_load_n(&t->pub.crit_top, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < top; i++) {
		kgc_obj o = __atomic_load_n(&t->crit[i], __ATOMIC_RELAXED);

		if (o)
			return o;
	}
	return NULL;
}

void kgci_thread_check(struct kgc_thread *t, const char *what)
{
	if (unlikely(!t || t->magic != THREAD_MAGIC)) {
		if (t && t->magic == THREAD_DEAD)
			kgci_fatal("%s: thread '%s' used after kgc_thread_detach", what, t->name);
		kgci_fatal("%s: %p is not an attached kgc thread", what, (void *)t);
	}
	kgci_hook_forbidden(t->heap, what);	/* checked mode: abort naming the call */
}

/* Managed calls (allocation, frames, collections): not in native state,
 * in particular not inside a critical section. */
bool kgci_thread_check_managed(struct kgc_thread *t, const char *what)
{
	kgci_thread_check(t, what);
	if (unlikely(kgci_cb_refuse(t->heap, what)))
		return false;
	if (likely(thread_state(t) == TS_MANAGED))
		return true;
	if (kgci_hook_forbidden(t->heap, what))
		return false;	/* the collecting thread, in a pause hook */
	if (t->pub.crit_open) {
		if (t->heap->opt.check)
			kgci_fatal("%s inside a critical section: thread '%s', array %p (%u open); "
			      "release critical arrays before managed calls", what, t->name,
			      (void *)kgci_thread_first_critical(t), t->pub.crit_open);
		kgci_err_set(EPERM, "%s inside a critical section: thread '%s', array %p (%u open)",
			what, t->name, (void *)kgci_thread_first_critical(t), t->pub.crit_open);
		return false;
	}
	if (t->heap->opt.check)
		kgci_fatal("%s in native state: thread '%s' must kgc_leave_native first", what, t->name);
	kgci_err_set(EPERM, "%s in native state: thread '%s'", what, t->name);
	return false;
}

KGC_API void kgc_enter_native(kgc_thread *t)
{
	kgci_thread_check(t, "kgc_enter_native");
	if (t->heap->opt.check)
		kgci_thread_check_managed(t, "kgc_enter_native");
	thread_set_native(t, TS_NATIVE);
}

KGC_API void *kgc_do_blocking(kgc_thread *t, void *(*fn)(void *arg), void *arg)
{
	void *ret;

	kgc_enter_native(t);
	ret = fn(arg);
	kgc_leave_native(t);
	return ret;
}

KGC_API void kgc_leave_native(kgc_thread *t)
{
	kgci_thread_check(t, "kgc_leave_native");
	if (t->pub.crit_open) {
		if (t->heap->opt.check)
			kgci_fatal("kgc_leave_native inside a critical section: thread '%s', array %p",
			      t->name, (void *)kgci_thread_first_critical(t));
		return;
	}
	thread_to_managed(t);
}
