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
 * Critical natives with one array argument (native_call.c's direct stubs).
 * The array is not a critical section: it is the thread's cn_arg, a root
 * that pins its region (pins_compute, roots_iterate_critical) while set.
 * It is set only between crit_native_enter and crit_native_exit, that is
 * while the thread runs the native in native state, or blocks in the exit
 * for a collection that started meanwhile. A thread is managed before and
 * after, so no collection sees it change: no pin count, no critical stack.
 *
 * crit_native_enter(t, o, &len): t managed, o a non-null object in no root.
 * If the fast path applies (pin mode, unchecked, o an unforwarded primitive
 * array): sets cn_arg, counts a critical get, puts t in native state, stores
 * the length and returns the elements - plain loads and stores only. Else
 * returns NULL and changes nothing (the caller uses kgc_critical_get).
 */
static inline __attribute__((always_inline)) void *
crit_native_enter(struct kgc_thread *t, kgc_obj o, size_t *len)
{
	struct kgc_thread_pub *p = &t->pub;

	if (unlikely(!p->crit_fast || __atomic_load_n(&p->state, __ATOMIC_RELAXED) != TS_MANAGED ||
		     (*(const uint64_t *)o & KGC__HDR_PRIM_MASK) != KGC__HDR_PRIM_ARRAY))
		return NULL;
	__atomic_store_n(&t->cn_arg, o, __ATOMIC_RELAXED);
	kgc__crit_count(p);
	*len = kgc_array_length(o);
	__atomic_store_n(&p->state, TS_NATIVE, __ATOMIC_RELEASE);	/* publishes cn_arg */
	return kgc_array_data(o);
}

void crit_native_exit_slow(struct kgc_thread *t);	/* critical.c */

/*
 * crit_native_exit(t): after a successful crit_native_enter, t in native
 * state. Back to managed (blocking while a collection runs: cn_arg still
 * pins the array), then clears cn_arg. Sections the native left open of its
 * own (it keeps t in native state then, as after any native) are the slow
 * path's.
 */
static inline __attribute__((always_inline)) void crit_native_exit(struct kgc_thread *t)
{
	if (unlikely(t->pub.crit_open)) {
		crit_native_exit_slow(t);
		return;
	}
	if (unlikely(!kgc__to_managed(&t->pub)))
		thread_to_managed_slow(t, TS_NATIVE);
	__atomic_store_n(&t->cn_arg, (kgc_obj)0, __ATOMIC_RELAXED);
}

/* Test hook (critical.c): the kernel pin query of h's next ngcs collections
 * fails, as a failed KGC_IOC_PIN_QUERY would. */
void pins_test_fail_kernel_query(kgc_heap *h, int ngcs);

#endif
