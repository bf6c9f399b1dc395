/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - allocation: per-thread bump-pointer TLABs carved from eden
 * regions, a slow path that refills or collects, humongous objects in
 * contiguous regions, -ENOMEM after a full collection.
 */
#include "kgc_api.h"
/* kgc.h's inline kgc_alloc/_array become this file's exported definitions
 * (before the include), for callers that take their address or bind them
 * by name */
#define KGC_INLINE_ALLOC KGC_API

#include <errno.h>
#include <string.h>
#include <time.h>
#include "gc_internal.h"

void kgci_alloc_retire_tlab(struct kgc_thread *t)
{
	if (t->pub.tlab_top && t->pub.tlab_top < t->pub.tlab_end)
		kgci_obj_fill(t->pub.tlab_top, (size_t)(t->pub.tlab_end - t->pub.tlab_top));
	t->pub.tlab_top = t->pub.tlab_end = t->tlab_start = NULL;
}

/* h->lock held. Bump-allocates [min, want] bytes in the current eden region. */
static char *eden_alloc(struct kgc_heap *h, size_t min, size_t want, size_t *got)
{
	struct region *r = h->alloc.eden_cur >= 0 ? &h->regions[h->alloc.eden_cur] : NULL;
	size_t avail;
	long idx;

	if (!r || (size_t)(r->end - r->top) < min) {
		if (!kgci_policy_eden_available(h))
			return NULL;
		idx = kgci_region_alloc_free(h, RT_EDEN);
		if (idx < 0)
			return NULL;
		if (r && r->top < r->end)
			kgci_obj_fill(r->top, (size_t)(r->end - r->top)), r->top = r->end;
		h->alloc.eden_regions++;
		h->alloc.eden_cur = idx;
		r = &h->regions[idx];
		h->alloc.eden_cur_zeroed = r->flags & RF_ZEROED;
		r->flags &= ~RF_ZEROED;
		h->alloc.eden_new_region = true;
	}
	avail = (size_t)(r->end - r->top);
	if (want > avail)
		want = avail;
	*got = want;
	r->top += want;
	return r->top - want;
}

/* h->lock held: a humongous object's regions (the pinned space's too). */
char *kgci_alloc_humongous(struct kgc_heap *h, size_t size, bool *zeroed)
{
	uint32_t n = (uint32_t)((size + h->region_size - 1) >> h->region_shift);
	long idx;
	size_t left = size;

	/* humongous allocation counts against old space: leave the reserve */
	if (h->count[RT_FREE] < n + (h->alloc.eden_use_reserve ? 0 : 1))
		return NULL;
	idx = kgci_region_alloc_contig(h, n);
	if (idx < 0)
		return NULL;
	for (uint32_t k = 0; k < n; k++) {
		struct region *r = &h->regions[idx + k];
		size_t part = left < h->region_size ? left : h->region_size;

		r->top = r->bottom + part;
		left -= part;
	}
	*zeroed = true;
	for (uint32_t k = 0; k < n; k++) {
		*zeroed &= (h->regions[idx + k].flags & RF_ZEROED) != 0;
		h->regions[idx + k].flags &= ~RF_ZEROED;
	}
	/* tracked for eager reclaim: references into it are carded from now
	 * on; none exists yet (region_track was nonzero while it was free) */
	h->regions[idx].eager = EAGER_TRACKED;
	kgci_region_track_update(h, &h->regions[idx]);
	h->st.bytes_allocated += size;
	return h->regions[idx].bottom;
}

/*
 * With h->lock held (by a mutator, or by the collector for the thread that
 * requested the collection): humongous, outside-TLAB or TLAB refill.
 * *zero = bytes at the result the caller must clear.
 */
char *kgci_alloc_locked(struct kgc_thread *t, size_t size, size_t *zero)
{
	struct kgc_heap *h = t->heap;
	size_t got;
	char *p;

	if (size >= h->alloc.humongous_threshold) {
		bool zeroed = false;

		p = kgci_alloc_humongous(h, size, &zeroed);
		*zero = zeroed ? 0 : size;
		return p;
	}
	if (size > h->alloc.tlab_size / 4) {
		p = eden_alloc(h, size, size, &got);
		if (p)
			h->st.bytes_allocated += size;
		*zero = h->alloc.eden_cur_zeroed ? 0 : size;
		return p;
	}
	kgci_alloc_retire_tlab(t);
	p = eden_alloc(h, size, h->alloc.tlab_size, &got);
	if (p) {
		t->tlab_start = p;
		t->pub.tlab_top = p + size;
		t->pub.tlab_end = p + got;
		__atomic_store_n(&t->bytes_allocated, t->bytes_allocated + got, __ATOMIC_RELAXED);
	}
	*zero = h->alloc.eden_cur_zeroed ? 0 : got;	/* the whole TLAB, in bulk */
	return p;
}

/*
 * Clearing a new TLAB or a large object: up to hundreds of KiB (a 1 MiB
 * array: ~1 ms and more where first touches are slow), in managed state, so
 * a safepoint would wait for all of it. Larger blocks are cleared in
 * ZERO_CHUNK pieces with a poll between them, the block made parsable
 * first (a filler over the object-to-be; a TLAB's rest is filled when a
 * collection retires it). If a collection is pending, the thread takes part
 * and returns false: the block is garbage now, allocate again. The filler
 * header is cleared last, after the final poll. After ZERO_POLL_TRIES blocks
 * lost that way the thread clears the next one without polling: under a
 * stream of collections (another thread calling kgc_collect in a loop) it
 * would otherwise never finish one.
 */
#define ZERO_CHUNK	(32 * 1024)
#define ZERO_POLL_TRIES	3

void (*kgci_alloc_test_zero_hook)(struct kgc_heap *h);	/* test hook: between chunks */

static bool alloc_zero(struct kgc_thread *t, char *p, size_t size, size_t zero, bool poll)
{
	struct kgc_heap *h = t->heap;
	size_t hdr = size < 16 ? size : 16, off = hdr;

	if (zero <= ZERO_CHUNK || !poll) {
		memset(p, 0, zero);
		return true;
	}
	kgci_obj_fill(p, size);
	while (off < zero) {
		size_t n = zero - off < ZERO_CHUNK ? zero - off : ZERO_CHUNK;

		memset(p + off, 0, n);
		off += n;
		if (unlikely(kgci_alloc_test_zero_hook != NULL))
			kgci_alloc_test_zero_hook(h);
		if (unlikely(atomic_load_explicit(&h->sp.poll_word, memory_order_acquire))) {
			kgci_sp_block(t);	/* the collection retired the TLAB too */
			__atomic_fetch_add(&h->alloc.alloc_zero_retries, 1, __ATOMIC_RELAXED);
			return false;
		}
	}
	memset(p, 0, hdr);
	return true;
}

/*
 * Allocation pacing (kgci_policy_pace): a thread that has run PACE_RUN_NS since
 * pacing started or since it last gave its share gives it now: it marks for
 * the cycle while there is marking to do (assist.c, in managed state: it
 * stops at a safepoint request), and sleeps for what is left, in native
 * state (a collection never waits for it). Wall time, pauses included (a
 * cycle that falls behind usually does so because pauses and mutators leave
 * the marker no CPU), counted up to 2 * PACE_RUN_NS: where pauses are longer
 * than the mutator's stretches between them, it still gives its share.
 */
#define PACE_RUN_NS	(2 * 1000000ull)

static void alloc_pace(struct kgc_thread *t, unsigned permille)
{
	struct kgc_heap *h = t->heap;
	uint64_t now = kgci_now_ns(), ran = now - t->pace_t, ns, spent;
	struct timespec ts;
	size_t marked;

	if (!t->pace_t) {	/* pacing just started: count from now */
		t->pace_t = now;
		return;
	}
	if (ran < PACE_RUN_NS)
		return;
	if (ran > 2 * PACE_RUN_NS)
		ran = 2 * PACE_RUN_NS;
	ns = ran * permille / (1000 - permille);
	marked = kgci_cm_assist(h, ns, &spent);
	if (marked) {
		atomic_fetch_add_explicit(&h->alloc.assists, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->alloc.assist_ns, spent, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->alloc.assist_bytes, marked, memory_order_relaxed);
	}
	if (spent < ns && !atomic_load_explicit(&h->sp.poll_word, memory_order_relaxed)) {
		uint64_t t0 = kgci_now_ns();

		ts.tv_sec = 0;
		ts.tv_nsec = (long)(ns - spent);
		thread_set_native(t, TS_NATIVE);
		nanosleep(&ts, NULL);
		thread_to_managed(t);
		atomic_fetch_add_explicit(&h->alloc.pace_stalls, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->alloc.pace_ns, kgci_now_ns() - t0, memory_order_relaxed);
	}
	t->pace_t = kgci_now_ns();
}

/* Slow path: refill the TLAB or allocate outside it; collect when needed.
 * A collection this thread runs allocates for it inside the safepoint, so
 * other threads cannot take the space first. */
static char *alloc_slow(struct kgc_thread *t, size_t size)
{
	struct kgc_heap *h = t->heap;
	bool hum = size >= h->alloc.humongous_threshold;
	unsigned tries = 0;	/* blocks cleared so far (a collection may take one) */
	unsigned hook_tries = 0;	/* retries the allocation-failure hook asked for */

	/* pretouch.c: the next pause's to-space, backed by kgc-pretouch or here */
	if (t->pt_region || (t->pretouch_pending && !(h->alloc.pretouch_kick && h->alloc.pretouch_kick(h))))
		kgci_pretouch_slice(t);
	t->pretouch_pending = false;
	{
		unsigned pace = atomic_load_explicit(&h->alloc.pace_permille, memory_order_relaxed);

		if (unlikely(pace))
			alloc_pace(t, pace);
		else
			t->pace_t = 0;
	}
retry:
	for (int iter = 0; iter < 10000; iter++) {
		char *p = NULL;
		uint64_t epoch;
		size_t zero = 0;
		int did;

		if (unlikely(atomic_load_explicit(&h->sp.poll_word, memory_order_acquire)))
			kgci_sp_block(t);
		pthread_mutex_lock(&h->lock);
		h->alloc.eden_new_region = false;
		p = kgci_alloc_locked(t, size, &zero);
		if (h->alloc.eden_new_region && h->tospace_need && p)
			t->pretouch_pending = true;
		epoch = atomic_load(&h->sp.gc_count);
		pthread_mutex_unlock(&h->lock);
		if (!p) {
			/* 0: another thread collected, 1: collected (p NULL: no room even after a
			 * full collection), 2: collected and allocated, but lost the space to a
			 * later collection before getting back */
			did = kgci_sp_collect_alloc(t, KGC_GC_YOUNG, hum ? GCR_HUMONGOUS : GCR_ALLOC, epoch,
					       size, &p, &zero);
			if (!p && did == 1)
				break;
		}
		if (p) {
			if (hum) {
				memset(p, 0, zero);
				return p;
			}
			if (alloc_zero(t, p, size, zero, ++tries <= ZERO_POLL_TRIES))
				return p;
			/* a collection ran while clearing: the block is gone */
		}
	}
	/* the runtime's hook may free memory and ask again (bounded: hooks.c) */
	if (kgci_hook_alloc_fail(t, size, ++hook_tries))
		goto retry;
	kgci_err_set(ENOMEM, "out of memory: cannot allocate %zu bytes (heap %zuM, %u regions, %u free)",
		size, ((size_t)h->nregions << h->region_shift) >> 20, h->nregions, h->count[RT_FREE]);
	return NULL;
}

static inline char *alloc_raw(struct kgc_thread *t, size_t size)
{
	char *p = t->pub.tlab_top;

	if (likely((size_t)(t->pub.tlab_end - p) >= size && p)) {
		t->pub.tlab_top = p + size;
		return p;
	}
	return alloc_slow(t, size);
}

/*
 * The thread's view of the type table for kgc.h's inline allocation: every
 * type registered so far (entries never change once published; an older
 * header array stays valid until the heap is destroyed). Not in checked
 * mode or KGC_STALE_CHECK: their checks and ticks are the slow path's.
 */
static void alloc_fast_refresh(struct kgc_thread *t)
{
	struct kgc_heap *h = t->heap;
	uint32_t n = atomic_load_explicit(&h->types.count, memory_order_acquire);

	if (h->opt.check || h->opt.stale_check)
		return;
	t->pub.type_hdr = atomic_load_explicit(&h->types.hdrs, memory_order_acquire);
	t->type_init_refs = atomic_load_explicit(&h->types.init_refs, memory_order_acquire);
	t->pub.ninst = n - KGC_TYPE_FIRST_USER;
	t->pub.narr = KGC_TYPE_REF_ARRAY;
}

/* What both out-of-line allocations do once their arguments are checked:
 * refresh the inline path's view of the types, tick the stale check, take
 * the bytes (TLAB or slow path). */
static char *alloc_out_of_line(struct kgc_thread *t, size_t size)
{
	alloc_fast_refresh(t);
	if (unlikely(t->heap->opt.stale_check) && kgci_stale_alloc_due(t))
		kgc_collect(t, KGC_GC_YOUNG);
	return alloc_raw(t, size);
}

KGC_API kgc_obj kgc__alloc_slow(kgc_thread *t, kgc_type_id type)
{
	struct kgc_heap *h = t->heap;
	const struct type_info *ti;
	char *p;
	size_t size;

	if (unlikely(thread_state(t) != TS_MANAGED ||
		     t->magic != THREAD_MAGIC) && !kgci_thread_check_managed(t, "kgc_alloc"))
		return NULL;
	if (unlikely(kgci_cb_running != NULL) && kgci_cb_refuse(h, "kgc_alloc"))
		return NULL;
	if (unlikely(type >= atomic_load_explicit(&h->types.count, memory_order_acquire) ||
		     (ti = type_get(h, type))->kind != KIND_INSTANCE || !type)) {
		if (h->opt.check)
			kgci_fatal("kgc_alloc: thread '%s': type %u is not an instance type", t->name, type);
		kgci_err_set(EINVAL, "kgc_alloc: type %u is not an instance type", type);
		return NULL;
	}
	size = (size_t)ti->size_words * WORD;
	p = alloc_out_of_line(t, size);
	if (unlikely(!p))
		return NULL;
	*(uint64_t *)p = hdr_make(KIND_INSTANCE, ti->size_words, type);
	return (kgc_obj)p;
}

/*
 * kgc_alloc_init's library path: the values rooted in a frame of our own
 * across the allocation (it may collect), then stored through kgc_set_ref
 * (the object may be outside eden: a humongous instance; checked stores in
 * checked mode).
 */
KGC_API kgc_obj kgc__alloc_init_slow(kgc_thread *t, kgc_type_id type, const kgc_obj *refs, uint32_t n)
{
	struct kgc_heap *h = t->heap;
	kgc_obj v[KGC_ALLOC_INIT_MAX] = { 0 }, o;
	const struct type_info *ti;
	struct kgc_frame f;

	if (unlikely(thread_state(t) != TS_MANAGED ||
		     t->magic != THREAD_MAGIC) && !kgci_thread_check_managed(t, "kgc_alloc_init"))
		return NULL;
	if (unlikely(type >= atomic_load_explicit(&h->types.count, memory_order_acquire) ||
		     (ti = type_get(h, type))->kind != KIND_INSTANCE || !type || n > ti->nrefs ||
		     n > KGC_ALLOC_INIT_MAX || (n && !refs))) {
		if (h->opt.check)
			kgci_fatal("kgc_alloc_init: thread '%s': type %u with %u reference(s)%s: not an instance "
				   "type with that many reference fields (at most %d)", t->name, type, n,
				   n && !refs ? " from NULL" : "", KGC_ALLOC_INIT_MAX);
		kgci_err_set(EINVAL, "kgc_alloc_init: type %u with %u reference(s)%s: not an instance type with "
			     "that many reference fields (at most %d)", type, n, n && !refs ? " from NULL" : "",
			     KGC_ALLOC_INIT_MAX);
		return NULL;
	}
	if (n)
		memcpy(v, refs, n * sizeof(*v));
	kgc_frame_push(t, &f, v, n, NULL);
	o = kgc__alloc_slow(t, type);
	for (uint32_t i = 0; o && i < n; i++)
		kgc_set_ref(t, o, ti->ref_offsets[i], v[i]);
	kgc_frame_pop(t, &f);
	return o;
}

KGC_API kgc_obj kgc__alloc_array_slow(kgc_thread *t, kgc_type_id type, size_t length)
{
	struct kgc_heap *h = t->heap;
	const struct type_info *ti;
	bool ovf;
	size_t size;
	char *p;

	if (unlikely(thread_state(t) != TS_MANAGED ||
		     t->magic != THREAD_MAGIC) && !kgci_thread_check_managed(t, "kgc_alloc_array"))
		return NULL;
	if (unlikely(kgci_cb_running != NULL) && kgci_cb_refuse(h, "kgc_alloc_array"))
		return NULL;
	if (unlikely(type < 1 || type > KGC_TYPE_REF_ARRAY)) {
		if (h->opt.check)
			kgci_fatal("kgc_alloc_array: thread '%s': type %u is not an array type", t->name, type);
		kgci_err_set(EINVAL, "kgc_alloc_array: type %u is not an array type", type);
		return NULL;
	}
	ti = type_get(h, type);
	size = kgci_array_bytes(ti->elem_shift, length, &ovf);
	if (ovf || size > ((size_t)h->nregions << h->region_shift)) {
		kgci_err_set(ENOMEM, "kgc_alloc_array: %zu elements do not fit in the heap", length);
		return NULL;
	}
	p = alloc_out_of_line(t, size);
	if (unlikely(!p))
		return NULL;
	*(uint64_t *)p = hdr_make(ti->kind, ti->kind == KIND_PRIM_ARRAY ? ti->elem_shift : 0, type);
	((uint64_t *)p)[1] = length;
	return (kgc_obj)p;
}

/* At a safepoint: every thread's TLAB ends (its rest becomes a filler). */
void kgci_alloc_retire_tlabs(struct kgc_heap *h)
{
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		kgci_alloc_retire_tlab(t);
}
