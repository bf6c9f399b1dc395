/* SPDX-License-Identifier: MIT */
/*
 * pins.c - which regions are pinned at a collection (the heap layer): the
 * region pin counts and the pinned-object space, the threads' private pins
 * (pin cache, a running critical native's array), the kernel's pins
 * (backend.c). The driver computes them once a pause (kgci_pins_compute);
 * the pauses ask kgci_region_pinned_now. The counts themselves are kept by
 * the critical-array API (mutator/critical.c).
 */
#include <errno.h>
#include <string.h>
#include "gc_internal.h"

/* Test hook state: kgci_pins_compute of heap kpin_fail_heap fails the kernel pin
 * query kpin_fail_n more times (h->lock). */
static struct kgc_heap *kpin_fail_heap;
static int kpin_fail_n;

static int kernel_pins(struct kgc_heap *h)
{
	if (unlikely(kpin_fail_n) && kpin_fail_heap == h) {
		kpin_fail_n--;
		return -EIO;
	}
	return kgci_backend_kernel_pins(h, h->kpin_bits);
}

/*
 * At a safepoint: which regions are pinned (by users or the kernel). If the
 * kernel's pins cannot be known, every region in use counts as kernel-pinned
 * for this collection: nothing moves rather than something the kernel pins.
 */
/*
 * Regions t pins without a count in the region table: the one in its pin
 * cache (if it holds pins there) and that of its running critical native's
 * array. Returns how many indexes it stored in idx (0..2, maybe equal).
 */
unsigned kgci_pins_private(struct kgc_heap *h, struct kgc_thread *t, uint32_t idx[2])
{
	uint32_t c = __atomic_load_n(&t->pub.pc_count, __ATOMIC_ACQUIRE);
	uint32_t r = __atomic_load_n(&t->pub.pc_region, __ATOMIC_ACQUIRE);
	kgc_obj a = __atomic_load_n(&t->cn_arg, __ATOMIC_ACQUIRE);
	unsigned n = 0;

	if (c && r < h->nregions)
		idx[n++] = r;
	if (a)
		idx[n++] = region_index(h, a);
	return n;
}

void kgci_pins_compute(struct kgc_heap *h)
{
	int kp = kernel_pins(h);
	uint32_t nused = 0;

	h->kpin_known = kp >= 0;

	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		r->flags &= ~(RF_PINNED | RF_KPINNED);
		if (atomic_load_explicit(region_pins(h, i), memory_order_acquire) || r->pinspace)
			r->flags |= RF_PINNED;	/* the pinned-object space: always */
		if (kp < 0 ? r->type != RT_FREE : kp && (h->kpin_bits[i / 64] >> (i % 64) & 1))
			r->flags |= RF_KPINNED;
		nused += r->type != RT_FREE;
	}
	if (kp < 0)
		kgci_log_line(h, LOG_PIN, "kernel pin query failed (%s): all %u regions in use treated as kernel-pinned",
			 strerror(-kp), nused);
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next) {
		uint32_t idx[2];
		unsigned n = kgci_pins_private(h, t, idx);

		for (unsigned k = 0; k < n; k++)
			h->regions[idx[k]].flags |= RF_PINNED;
	}
	/* pinned regions keep their objects in place in young and full collections */
	h->st.pinned_bytes = 0;
	for (uint32_t i = 0; i < h->nregions; i++)
		if (h->regions[i].type != RT_FREE && (h->regions[i].flags & (RF_PINNED | RF_KPINNED)))
			h->st.pinned_bytes += (size_t)(h->regions[i].top - h->regions[i].bottom);
	if (h->log_mask & LOG_PIN)
		for (uint32_t i = 0; i < h->nregions; i++)
			if (h->regions[i].flags & (RF_PINNED | RF_KPINNED))
				kgci_log_line(h, LOG_PIN, "region %u (%s) pinned: user %u%s", i,
					 kgci_region_type_name(h->regions[i].type),
					 atomic_load(region_pins(h, i)),
					 h->regions[i].flags & RF_KPINNED ? ", kernel" : "");
}

bool kgci_region_pinned_now(struct kgc_heap *h, uint32_t idx)
{
	return h->regions[idx].flags & (RF_PINNED | RF_KPINNED);
}

/* Test hook: the kernel pin query of the next ngcs collections of h fails. */
void kgci_pins_test_fail_kernel_query(kgc_heap *h, int ngcs)
{
	pthread_mutex_lock(&h->lock);
	kpin_fail_heap = h;
	kpin_fail_n = ngcs;
	pthread_mutex_unlock(&h->lock);
}
