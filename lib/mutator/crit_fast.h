/* SPDX-License-Identifier: MIT */
/*
 * crit_fast.h - the critical fast paths of critical.c (the critical API):
 * the per-thread pin cache. (The pin of one array by a critical native,
 * cn_arg, is kgc_ext.h's, for libkgc-native.)
 *
 * Pin cache: the pins of a thread on one region not yet added to the region
 * count. Pin/unpin on the cached region are plain loads and stores of the
 * thread's own fields (see critical.c for why the collector may read them).
 */
#ifndef KGC_CRIT_FAST_H
#define KGC_CRIT_FAST_H

#include "gc_internal.h"

static inline void pin_inc(struct kgc_thread *t, uint32_t idx)
{
	uint32_t r = __atomic_load_n(&t->pub.pc_region, __ATOMIC_RELAXED);
	uint32_t c = __atomic_load_n(&t->pub.pc_count, __ATOMIC_RELAXED);

	if (likely(r == idx)) {
		__atomic_store_n(&t->pub.pc_count, c + 1, __ATOMIC_RELAXED);
		return;
	}
	if (c)
		atomic_fetch_add(region_pins(t->heap, r), c);
	__atomic_store_n(&t->pub.pc_region, idx, __ATOMIC_RELAXED);
	__atomic_store_n(&t->pub.pc_count, 1, __ATOMIC_RELAXED);
}

static inline void pin_dec(struct kgc_thread *t, uint32_t idx)
{
	uint32_t c = kgc__pin_cached(&t->pub, idx);

	if (likely(c)) {
		kgc__pin_dec_cached(&t->pub, c);
		return;
	}
	atomic_fetch_sub(region_pins(t->heap, idx), 1);
}

static inline uint32_t crit_region(struct kgc_thread *t, kgc_obj o)
{
	return kgc__crit_region(&t->pub, o);
}

/*
 * kgc.h's critical get fast path with any pin cache state (a miss switches
 * the cache): kgc__crit_enter_ok, the pin, kgc__crit_push. *idx = the pinned
 * region. NULL (nothing changed) if the fast path does not apply.
 */
static inline __attribute__((always_inline)) void *
crit_enter_fast(struct kgc_thread *t, kgc_obj *ref, size_t *length, uint32_t *idx)
{
	kgc_obj o;

	if (unlikely(!kgc__crit_enter_ok(&t->pub, ref, &o)))
		return NULL;
	*idx = crit_region(t, o);
	pin_inc(t, *idx);
	return kgc__crit_push(&t->pub, o, length);
}

/*
 * Critical natives with one array argument: the array is the thread's
 * cn_arg, a root that pins its region (kgci_pins_compute, kgci_roots_iterate_critical)
 * while set. kgc_ext.h's kgc_ext_cn_enter/kgc_ext_cn_exit set and clear it
 * (inline, for libkgc-native); this is their slow exit, when the native left
 * critical sections of its own open (exported as kgc__cn_exit_slow, ext.c).
 */
void kgci_crit_native_exit_slow(struct kgc_thread *t);	/* critical.c */

/* Test hook (critical.c): the kernel pin query of h's next ngcs collections
 * fails, as a failed KGC_IOC_PIN_QUERY would. */
void kgci_pins_test_fail_kernel_query(kgc_heap *h, int ngcs);

#endif
