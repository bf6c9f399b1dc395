/* SPDX-License-Identifier: MIT */
/*
 * thread.c - attach and detach (detach hands the thread's TLAB, pin cache,
 * extension data, pretouch region and SATB buffer back to their owners). The
 * checks and the managed <-> native transitions are thread_state.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"


static int attach(struct kgc_heap *h, const char *name, struct kgc_thread **out, bool service)
{
	struct kgc_thread *t;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pub.card_biased = h->card_biased;
	t->card_sum_biased = h->card_sum_biased;
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
	if (abi < KGCI_ABI_OLDEST || abi > KGC_ABI_VERSION) {
		kgci_err_set(EPROTO, "kgc_thread_attach: the program's kgc.h has thread layout version %u, "
			"this libkgc %u (it runs programs built for %u to %u): rebuild the program against "
			"this library's kgc.h", abi, KGC_ABI_VERSION, KGCI_ABI_OLDEST, KGC_ABI_VERSION);
		return -EPROTO;
	}
	/* its barrier does not write the card table's summary: from now on
	 * every pause sweeps the whole table (kgc.h, ABI 6) */
	if (abi < 6 && !atomic_exchange(&h->card_sum_off, true))
		kgci_log_line(h, LOG_GC, "thread '%s' was built for ABI %u: card scans read the whole card table",
			      name ? name : "?", abi);
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
			      t->name, t->pub.crit_open, (void *)kgci_thread_first_critical(t));
		kgci_err_set(EBUSY, "kgc_thread_detach: thread '%s' has %u critical section(s) open (array %p)",
			t->name, t->pub.crit_open, (void *)kgci_thread_first_critical(t));
		return -EBUSY;
	}
	if (t->frames) {
		unsigned depth = 0;

		for (const struct kgc_frame *f = t->frames; f; f = f->prev)
			depth++;
		if (h->opt.check)
			kgci_fatal("kgc_thread_detach: thread '%s' still has %u frame(s) pushed", t->name, depth);
		kgci_err_set(EBUSY, "kgc_thread_detach: thread '%s' still has %u frame(s) pushed", t->name, depth);
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
