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
	uint32_t r = atomic_load_explicit(&t->pc_region, memory_order_relaxed);
	uint32_t c = atomic_load_explicit(&t->pc_count, memory_order_relaxed);

	if (likely(r == idx)) {
		atomic_store_explicit(&t->pc_count, c + 1, memory_order_relaxed);
		return;
	}
	if (c)
		atomic_fetch_add(region_pins(t->heap, r), c);
	atomic_store_explicit(&t->pc_region, idx, memory_order_relaxed);
	atomic_store_explicit(&t->pc_count, 1, memory_order_relaxed);
}

static inline void pin_dec(struct kgc_thread *t, uint32_t idx)
{
	uint32_t c = atomic_load_explicit(&t->pc_count, memory_order_relaxed);

	if (likely(atomic_load_explicit(&t->pc_region, memory_order_relaxed) == idx && c)) {
		/* release: the cleared critical entry is visible before the unpin */
		atomic_store_explicit(&t->pc_count, c - 1, memory_order_release);
		return;
	}
	atomic_fetch_sub(region_pins(t->heap, idx), 1);
}

static inline uint32_t crit_region(struct kgc_thread *t, kgc_obj o)
{
	return (uint32_t)(((char *)o - t->heap_base) >> t->pub.region_shift);
}

/* Header bits that make o an unforwarded primitive array. */
static inline bool crit_is_prim_array(kgc_obj o)
{
	return (*obj_hdr(o) & (HDR_TAG_MASK | (3ull << HDR_KIND_SHIFT))) ==
	       ((uint64_t)KIND_PRIM_ARRAY << HDR_KIND_SHIFT);
}

/*
 * What crit_native_enter hands to crit_native_exit: the pinned region and
 * the critical-stack entry, kept in registers across the call (both
 * functions are always inlined into the invoker).
 */
struct crit_native_pin {
	uint32_t idx;		/* region index of the array */
};

/*
 * Critical natives (native_call.c). crit_native_enter(t, o, &len, &pin): t
 * managed, o a non-null object in no root. If the fast path applies (pin
 * mode, unchecked, o a primitive array, room on the critical stack): pins
 * o's region through the pin cache, records o on the critical stack (a root
 * the collector sees as pinned), puts t in native state, stores the length
 * and returns the elements - plain loads and stores only. Else returns NULL
 * and changes nothing (the caller uses kgc_critical_get).
 */
static inline __attribute__((always_inline)) void *
crit_native_enter(struct kgc_thread *t, kgc_obj o, size_t *len, struct crit_native_pin *pin)
{
	uint32_t top;

	if (unlikely(!t->crit_fast ||
		     atomic_load_explicit(&t->state, memory_order_relaxed) != TS_MANAGED ||
		     !crit_is_prim_array(o) ||
		     (top = atomic_load_explicit(&t->crit_top, memory_order_relaxed)) == CRIT_MAX))
		return NULL;
	pin->idx = crit_region(t, o);
	pin_inc(t, pin->idx);
	t->crit_open = 1;	/* managed: no section was open */
	t->native_before_crit = false;
	atomic_store_explicit(&t->crit[top].obj, o, memory_order_relaxed);
	atomic_store_explicit(&t->crit_top, top + 1, memory_order_release);
	atomic_store_explicit(&t->crit_gets,
			      atomic_load_explicit(&t->crit_gets, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	*len = kgc_array_length(o);
	thread_set_native(t, TS_NATIVE);
	return kgc_array_data(o);
}

void crit_native_exit_slow(struct kgc_thread *t, kgc_obj o);	/* critical.c */

/*
 * crit_native_exit(t, o, pin): after a successful crit_native_enter of o, t
 * in native state. Back to managed (blocking while a collection runs: the
 * array is still pinned and rooted), then drops the root and the pin.
 * Everything but the common case (a collection pending, no membarrier,
 * sections the native left open or closed) is in crit_native_exit_slow.
 */
static inline __attribute__((always_inline)) void
crit_native_exit(struct kgc_thread *t, kgc_obj o, struct crit_native_pin pin)
{
	uint32_t top = atomic_load_explicit(&t->crit_top, memory_order_relaxed);

	/* ours is the one live entry and the innermost */
	if (unlikely(t->crit_open != 1 || !top || !t->membarrier ||
		     atomic_load_explicit(&t->crit[top - 1].obj, memory_order_relaxed) != o)) {
		crit_native_exit_slow(t, o);
		return;
	}
	/* thread_to_managed, the membarrier way (see thread.c) */
	atomic_store_explicit(&t->state, TS_MANAGED, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (unlikely(atomic_load_explicit((_Atomic uint32_t *)t->pub.poll_word,
					  memory_order_seq_cst))) {
		crit_native_exit_slow(t, o);
		return;
	}
	/* every entry below ours is released (crit_open was 0 at enter) */
	atomic_store_explicit(&t->crit[top - 1].obj, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->crit_top, 0, memory_order_relaxed);
	t->crit_open = 0;
	pin_dec(t, pin.idx);
}

/* Test hook (critical.c): the kernel pin query of h's next ngcs collections
 * fails, as a failed KGC_IOC_PIN_QUERY would. */
void pins_test_fail_kernel_query(kgc_heap *h, int ngcs);

#endif
