/* SPDX-License-Identifier: MIT */
/*
 * crit_fast.h - the critical fast paths shared by critical.c (the critical
 * API) and native_call.c (critical natives): the per-thread pin cache and
 * the pin/unpin of one array by a critical native.
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
 * What crit_native_enter hands to crit_native_exit: the pinned region, kept
 * in a register across the call (both functions are always inlined into the
 * invoker).
 */
struct crit_native_pin {
	uint32_t idx;		/* region index of the array */
};

/*
 * Critical natives (native_call.c). crit_native_enter(t, o, &len, &pin): t
 * managed, o a non-null object in no root. If the fast path applies (pin
 * mode, unchecked, o a primitive array, no section open): pins
 * o's region through the pin cache, records o on the critical stack (a root
 * the collector sees as pinned), puts t in native state, stores the length
 * and returns the elements - plain loads and stores only. Else returns NULL
 * and changes nothing (the caller uses kgc_critical_get).
 */
static inline __attribute__((always_inline)) void *
crit_native_enter(struct kgc_thread *t, kgc_obj o, size_t *len, struct crit_native_pin *pin)
{
	return crit_enter_fast(t, &o, len, &pin->idx);
}

void crit_native_exit_slow(struct kgc_thread *t, kgc_obj o);	/* critical.c */

/*
 * crit_native_exit(t, o, pin): after a successful crit_native_enter of o, t
 * in native state. Back to managed (blocking while a collection runs: the
 * array is still pinned and rooted), then drops the root and the pin.
 * Everything but the common case (a collection pending, sections the native
 * left open or closed, the pin no longer in the pin cache) is in
 * crit_native_exit_slow.
 */
static inline __attribute__((always_inline)) void
crit_native_exit(struct kgc_thread *t, kgc_obj o, struct crit_native_pin pin)
{
	/* ours is the one open section (crit_open was 0 at enter) */
	if (unlikely(!kgc__crit_exit_ok(&t->pub, o, pin.idx) || !kgc__to_managed(&t->pub))) {
		crit_native_exit_slow(t, o);
		return;
	}
	kgc__crit_pop(&t->pub);
}

/* Test hook (critical.c): the kernel pin query of h's next ngcs collections
 * fails, as a failed KGC_IOC_PIN_QUERY would. */
void pins_test_fail_kernel_query(kgc_heap *h, int ngcs);

#endif
