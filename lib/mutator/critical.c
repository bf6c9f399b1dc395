/* SPDX-License-Identifier: MIT */
/*
 * critical.c - the critical-array API (JNI Get/ReleasePrimitiveArrayCritical
 * done the JEP 423 way), per-region pin counts, the per-thread pin cache and
 * the GCLocker mode used for comparison. Which regions are pinned at a
 * collection is heap/pins.c's.
 *
 * Pin counts: the region count (library array or the kmod region table's
 * user_pins) plus, per thread, a cache of (region, count) not yet added to
 * it. get/release on the cached region touch only the thread's own cache:
 * plain loads/stores, no atomic RMW, no lock, no syscall. The cache is
 * flushed (atomic add) when the thread pins another region and at every
 * safepoint it reaches while managed. The collector reads the caches of
 * threads in native state at the start of a collection: increments only
 * happen in managed state (never during a collection), decrements may race
 * but only for arrays already released, so what it sees is never an
 * under-count.
 */
#include <errno.h>
#include <string.h>

#include "kgc_api.h"
/* kgc.h's inline kgc_critical_get/_release become this file's exported
 * definitions (before any include: crit_fast.h -> gc_internal.h -> kgc.h) */
#define KGC_INLINE KGC_API

#include "mutator/crit_fast.h"

#define RELAXED __ATOMIC_RELAXED

/* Managed state only. */
void kgci_pin_flush_cache(struct kgc_thread *t)
{
	uint32_t c = __atomic_load_n(&t->pub.pc_count, RELAXED);

	if (c) {
		atomic_fetch_add(region_pins(t->heap, __atomic_load_n(&t->pub.pc_region, RELAXED)), c);
		__atomic_store_n(&t->pub.pc_count, 0, RELAXED);
	}
}

/* ------------------------------------------------------------- GCLocker */

static void gclocker_enter(struct kgc_thread *t)
{
	struct kgc_heap *h = t->heap;
	uint64_t t0;

	if (t->gclocker_held) {
		/* nested: this thread already keeps collections out; never block here */
		t->gclocker_held++;
		return;
	}

	for (;;) {
		if (!atomic_load(&h->sp.locker_needs_gc)) {
			atomic_fetch_add(&h->sp.locker_count, 1);
			if (!atomic_load(&h->sp.locker_needs_gc))
				break;
			if (atomic_fetch_sub(&h->sp.locker_count, 1) == 1) {
				pthread_mutex_lock(&h->sp.lock);
				pthread_cond_broadcast(&h->sp.locker_cond);
				pthread_mutex_unlock(&h->sp.lock);
			}
		}
		/* a collection is pending: let it run first (as JNI critical entry does) */
		t0 = kgci_now_ns();
		thread_set_native(t, TS_BLOCKED);
		pthread_mutex_lock(&h->sp.lock);
		while (atomic_load(&h->sp.locker_needs_gc))
			pthread_cond_wait(&h->sp.locker_cond, &h->sp.lock);
		pthread_mutex_unlock(&h->sp.lock);
		/* a stall of this thread too, not only of the one that wants the GC */
		pthread_mutex_lock(&h->lock);
		h->st.gclocker_stalls++;
		h->st.gclocker_stall_ns += kgci_now_ns() - t0;
		pthread_mutex_unlock(&h->lock);
		thread_to_managed(t);
	}
	t->gclocker_held++;
}

static void gclocker_exit(struct kgc_thread *t)
{
	struct kgc_heap *h = t->heap;

	if (--t->gclocker_held)
		return;
	if (atomic_fetch_sub(&h->sp.locker_count, 1) == 1 && atomic_load(&h->sp.locker_needs_gc)) {
		pthread_mutex_lock(&h->sp.lock);
		pthread_cond_broadcast(&h->sp.locker_cond);
		pthread_mutex_unlock(&h->sp.lock);
	}
}

/* ------------------------------------------------------------ the API */

static void *crit_fail(struct kgc_thread *t, bool was_native, int err, const char *msg, kgc_obj o)
{
	if (t->heap->opt.check)
		kgci_fatal("kgc_critical_get: thread '%s', array %p: %s", t->name, (void *)o, msg);
	kgci_err_set(err, "kgc_critical_get: thread '%s', array %p: %s", t->name, (void *)o, msg);
	if (was_native)
		thread_set_native(t, TS_NATIVE);
	return NULL;
}

/* The general path: nesting from native state, checks, GCLocker, a full stack. */
static __attribute__((noinline)) void *critical_get_slow(struct kgc_thread *t, kgc_obj *ref, size_t *length)
{
	struct kgc_heap *h = t->heap;
	bool was_native = false;
	uint32_t top;
	kgc_obj o;
	uint64_t hd;

	kgci_thread_check(t, "kgc_critical_get");
	if (thread_state(t) != TS_MANAGED) {
		/* nested (or from native state): become managed so nothing moves under us */
		was_native = true;
		thread_to_managed(t);
	}
	if (unlikely(!ref || !*ref))
		return crit_fail(t, was_native, EINVAL, "NULL array", NULL);
	o = *ref;
	if ((uintptr_t)o & 7)	/* the fast path never reads through it either */
		return crit_fail(t, was_native, EINVAL, (uintptr_t)o & h->opt.tag_mask ?
				 "a tagged immediate, not an array" : "misaligned: not a heap object", o);
	if (t->pub.checked && (!in_heap(h, o) || region_of(h, o)->type == RT_FREE))
		return crit_fail(t, was_native, EINVAL, "not a heap object", o);
	hd = *obj_hdr(o);
	if (hdr_kind(hd) != KIND_PRIM_ARRAY || (hd & HDR_TAG_MASK) ||
	    (t->pub.checked && !kgci_type_valid(h, hdr_type(hd))))
		return crit_fail(t, was_native, EINVAL, "not a primitive array", o);
	top = __atomic_load_n(&t->pub.crit_top, RELAXED);
	if (top == CRIT_MAX) {
		uint32_t j = 0;

		/* managed: no collection is reading the stack; squeeze released slots */
		for (uint32_t i = 0; i < top; i++) {
			kgc_obj e = __atomic_load_n(&t->crit[i], RELAXED);

			if (e)
				__atomic_store_n(&t->crit[j++], e, RELAXED);
		}
		top = j;
		__atomic_store_n(&t->pub.crit_top, top, __ATOMIC_RELEASE);
		if (top == CRIT_MAX)
			return crit_fail(t, was_native, ENOSPC, "too many nested critical sections", o);
	}
	if (t->gclocker) {
		/*
		 * May wait for a pending collection, which may move the array.
		 * *ref may be any variable (kgc.h), not a root the collector
		 * updates: a frame of our own roots the array across the wait,
		 * and the caller's variable gets the new address.
		 */
		struct kgc_frame f = { .prev = t->frames, .slots = &o, .nslots = 1,
				       .magic = FRAME_MAGIC };

		__atomic_store_n(&t->frames, &f, __ATOMIC_RELAXED);
		gclocker_enter(t);
		__atomic_store_n(&t->frames, f.prev, __ATOMIC_RELAXED);
		*ref = o;
	} else {
		pin_inc(t, crit_region(t, o));
	}
	if (t->pub.crit_open == 0)
		t->pub.native_before_crit = was_native;
	__atomic_store_n(&t->crit[top], o, RELAXED);
	__atomic_store_n(&t->pub.crit_top, top + 1, __ATOMIC_RELEASE);
	t->pub.crit_open++;
	kgc__crit_count(&t->pub);
	if (length)
		*length = kgc_array_length(o);
	thread_set_native(t, TS_NATIVE);
	return kgc_array_data(o);
}

/*
 * Everything kgc.h's inline kgc_critical_get does not do: a pin cache miss
 * on its fast path (switched here), else the general path (nesting, from
 * native state, GCLocker, checked mode, misuse).
 */
KGC_API void *kgc__critical_get_slow(kgc_thread *t, kgc_obj *ref, size_t *length)
{
	uint32_t idx;
	void *p = crit_enter_fast(t, ref, length, &idx);

	return likely(p) ? p : critical_get_slow(t, ref, length);
}

static int rel_fail(struct kgc_thread *t, const char *msg, kgc_obj o, void *elems)
{
	if (t->heap->opt.check)
		kgci_fatal("kgc_critical_release: thread '%s', array %p, elems %p: %s", t->name,
		      (void *)o, elems, msg);
	kgci_err_set(EINVAL, "kgc_critical_release: thread '%s', array %p, elems %p: %s", t->name,
		(void *)o, elems, msg);
	return -EINVAL;
}

static void release_entry(struct kgc_thread *t, uint32_t i, uint32_t top)
{
	kgc_obj e = __atomic_load_n(&t->crit[i], RELAXED);

	/* clear the root first, then unpin: a collection never sees a held,
	 * unpinned array */
	__atomic_store_n(&t->crit[i], NULL, __ATOMIC_RELEASE);
	if (t->gclocker)
		gclocker_exit(t);
	else
		pin_dec(t, crit_region(t, e));
	while (top > 0 && !__atomic_load_n(&t->crit[top - 1], RELAXED))
		top--;
	__atomic_store_n(&t->pub.crit_top, top, __ATOMIC_RELEASE);
	if (--t->pub.crit_open == 0 && !t->pub.native_before_crit)
		thread_to_managed(t);
}

/*
 * Everything kgc.h's inline kgc_critical_release does not do: GCLocker and
 * checked mode, nested or overlapping sections, a pin not in the pin cache,
 * misuse; and the release that found a collection pending when it made t
 * managed again (thread_to_managed then blocks).
 */
KGC_API __attribute__((noinline)) int kgc__critical_release_slow(kgc_thread *t, kgc_obj *ref, void *elems)
{
	uint32_t top, i;
	kgc_obj o;
	bool same_array = false;

	kgci_thread_check(t, "kgc_critical_release");
	o = ref ? *ref : NULL;
	top = __atomic_load_n(&t->pub.crit_top, RELAXED);
	for (i = top; i-- > 0;) {
		kgc_obj e = __atomic_load_n(&t->crit[i], RELAXED);

		if (e && kgc_array_data(e) == elems && (e == o || !o)) {
			release_entry(t, i, top);
			return 0;
		}
	}
	if (!t->pub.crit_open)
		return rel_fail(t, "release without a matching critical_get", o, elems);
	for (uint32_t k = 0; k < top; k++)
		if (o && __atomic_load_n(&t->crit[k], RELAXED) == o)
			same_array = true;
	if (same_array)
		return rel_fail(t, "released pointer is not the one critical_get returned for this array",
				o, elems);
	return rel_fail(t, "release without a matching critical_get (array not held)", o, elems);
}

/*
 * crit_native_exit when the native left critical sections of its own open:
 * t stays in native state (as after any native, kgc_leave_native); the
 * argument is no longer needed, its sections pin what the native still
 * holds. Release: the native's accesses to the array happen before.
 */
void kgci_crit_native_exit_slow(struct kgc_thread *t)
{
	kgc_leave_native(t);
	__atomic_store_n(&t->cn_arg, NULL, __ATOMIC_RELEASE);
}

/* Test hook: the next ngcs young collections find no to-space. */
void kgci_evac_test_inject_failure(kgc_heap *h, int ngcs)
{
	pthread_mutex_lock(&h->lock);
	h->evac_fail_inject = ngcs;
	pthread_mutex_unlock(&h->lock);
}
