/* SPDX-License-Identifier: MIT */
/*
 * thread.c - attach/detach and the managed <-> native transitions.
 *
 * Transition protocol (asymmetric Dekker): a mutator stores its state with a
 * plain (release) store, then only a compiler barrier, then loads the poll
 * word. The collector stores the poll word, then runs membarrier(PRIVATE_
 * EXPEDITED) - a full barrier on every running thread of the process - and
 * only then reads the states. Without membarrier both sides use seq_cst
 * fences.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"


static void wait_gc_end(struct kgc_heap *h)
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
		wait_gc_end(h);
		if (kgc__to_managed(&t->pub))	/* kgc.h: the transition itself */
			return;
	}
}

/* Safepoint: the thread is managed and a collection is pending. */
void kgci_sp_block(struct kgc_thread *t)
{
	kgci_pin_flush_cache(t);
	thread_set_native(t, TS_BLOCKED);
	wait_gc_end(t->heap);
	thread_to_managed(t);
}

KGC_API void kgc__safepoint_slow(kgc_thread *t)
{
	kgci_sp_block(t);
}

KGC_API void kgc_safepoint_poll(kgc_thread *t)
{
	kgci_thread_check(t, "kgc_safepoint_poll");
	if (unlikely(atomic_load_explicit(&t->heap->sp.poll_word, memory_order_acquire))) {
		if (thread_state(t) != TS_MANAGED) {
			kgci_thread_check_managed(t, "kgc_safepoint_poll");
			return;
		}
		kgci_sp_block(t);
	}
}

static kgc_obj first_critical(struct kgc_thread *t)
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
			      (void *)first_critical(t), t->pub.crit_open);
		kgci_err_set(EPERM, "%s inside a critical section: thread '%s', array %p (%u open)",
			what, t->name, (void *)first_critical(t), t->pub.crit_open);
		return false;
	}
	if (t->heap->opt.check)
		kgci_fatal("%s in native state: thread '%s' must kgc_leave_native first", what, t->name);
	kgci_err_set(EPERM, "%s in native state: thread '%s'", what, t->name);
	return false;
}

static int attach(struct kgc_heap *h, const char *name, struct kgc_thread **out, bool service)
{
	struct kgc_thread *t;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pub.card_biased = h->card_biased;
	t->pub.poll_word = (volatile uint32_t *)&h->sp.poll_word;
	t->pub.region_shift = h->region_shift;
	t->pub.checked = h->opt.check ? 1 : 0;
	t->pub.tag_mask = h->opt.tag_mask;
	t->pub.heap_base = h->base;
	t->pub.region_track = h->region_track;
	t->pub.crit_stack = t->crit;
	t->pub.state = TS_BLOCKED;
	t->pub.pc_region = UINT32_MAX;
	t->heap = h;
	t->gclocker = h->opt.pin_mode == KGC_PIN_MODE_GCLOCKER;
	t->pub.membarrier = h->be.membarrier;
	t->pub.crit_fast = !t->gclocker && !h->opt.check;
	t->magic = THREAD_MAGIC;
	t->service = service;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "?");
	pthread_mutex_lock(&h->lock);
	t->pub.satb_active = h->satb_active;
	t->next = h->thr.threads;
	if (h->thr.threads)
		h->thr.threads->prev = t;
	h->thr.threads = t;
	h->thr.nthreads++;
	pthread_mutex_unlock(&h->lock);
	thread_to_managed(t);
	*out = t;
	return 0;
}

KGC_API int kgc_thread_attach_abi(kgc_heap *h, const char *name, kgc_thread **out, unsigned abi)
{
	if (!h || !out) {
		kgci_err_set(EINVAL, "kgc_thread_attach: NULL argument");
		return -EINVAL;
	}
	if (abi != KGC_ABI_VERSION) {
		kgci_err_set(EPROTO, "kgc_thread_attach: the program's kgc.h has thread layout version %u, "
			"this libkgc %u: rebuild the program against this library's kgc.h", abi,
			KGC_ABI_VERSION);
		return -EPROTO;
	}
	return attach(h, name, out, false);
}

/* A thread of the library itself (kgc-kpinwatch): kgc_heap_destroy does not
 * count it as attached, and stops it. */
int kgci_thread_attach_service(struct kgc_heap *h, const char *name, struct kgc_thread **out)
{
	return attach(h, name, out, true);
}

KGC_API int kgc_thread_detach(kgc_thread *t)
{
	struct kgc_heap *h;

	kgci_thread_check(t, "kgc_thread_detach");
	h = t->heap;
	if (t->pub.crit_open) {
		if (h->opt.check)
			kgci_fatal("kgc_thread_detach: thread '%s' has %u critical section(s) open (array %p)",
			      t->name, t->pub.crit_open, (void *)first_critical(t));
		kgci_err_set(EBUSY, "kgc_thread_detach: thread '%s' has %u critical section(s) open (array %p)",
			t->name, t->pub.crit_open, (void *)first_critical(t));
		return -EBUSY;
	}
	if (t->frames) {
		if (h->opt.check)
			kgci_fatal("kgc_thread_detach: thread '%s' still has %u frame(s) pushed", t->name,
			      t->frame_depth);
		kgci_err_set(EBUSY, "kgc_thread_detach: thread '%s' still has %u frame(s) pushed", t->name,
			t->frame_depth);
		return -EBUSY;
	}
	if (thread_state(t) != TS_MANAGED)
		thread_to_managed(t);
	kgci_ext_thread_detach(t);	/* layered libraries' data dies with t (kgc_ext.h) */
	kgci_alloc_retire_tlab(t);
	kgci_pin_flush_cache(t);
	thread_set_native(t, TS_BLOCKED);
	pthread_mutex_lock(&h->lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		h->thr.threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	h->thr.nthreads--;
	kgci_pretouch_end(t);
	kgci_cm_thread_detach(t);
	h->st.bytes_allocated += t->bytes_allocated;
	atomic_fetch_add(&h->critical_gets, __atomic_load_n(&t->pub.crit_gets, __ATOMIC_RELAXED));
	t->magic = THREAD_DEAD;
	t->pub.crit_fast = 0;
	if (h->opt.check) {
		/* kept until heap destroy so later use is diagnosed, not a use-after-free */
		t->next = h->thr.zombies;
		h->thr.zombies = t;
		t = NULL;
	}
	pthread_mutex_unlock(&h->lock);
	free(t);
	return 0;
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
			      t->name, (void *)first_critical(t));
		return;
	}
	thread_to_managed(t);
}
