/* SPDX-License-Identifier: MIT */
/*
 * young.c - stop-the-world evacuation of eden and survivor regions, as
 * phases: set up, select the collection set, evacuate with the worker gang
 * (gang.c), gather the workers' counts, settle weak cells, keep or free
 * each cset region, record what the policy learns.
 *
 * Roots (frames, handles, open critical arrays) and the dirty cards of old
 * and humongous regions are processed; every reachable young object is
 * copied (work stack, per-destination allocation regions: promote.c) to a
 * survivor region, or to an old one once its age reaches the tenuring
 * threshold. Pinned regions and objects without to-space fail evacuation
 * in place (evacfail.c).
 */
#include <stdlib.h>
#include <string.h>
#include "gc/young.h"

static inline kgc_obj resolved(kgc_obj o, uint64_t hd)
{
	return hdr_is_fwd(hd) ? (kgc_obj)(uintptr_t)(hd & ~HDR_TAG_MASK) : o;
}

/* o stays where it is (self-forwarded, scanned like a copy), its region
 * kept in place for cause (FAIL_ALLOC, FAIL_BUDGET: evacfail.c). */
static kgc_obj keep_in_place(struct yworker *w, kgc_obj o, uint64_t hd, uint8_t cause)
{
	if (!hdr_cas(o, &hd, (hd & ~HDR_TAG_MASK) | HDR_TAG_FAILED))
		return resolved(o, hd);
	__atomic_store_n(&region_of(w->y->h, o)->evac_alloc_failed, cause, __ATOMIC_RELAXED);
	ygc_push(w, o);
	return o;
}

/*
 * Has the pause run over its evacuation budget (kgci_policy_evac_budget:
 * past y->deadline_ns, more than y->budget_bytes copied)? Then the young
 * objects not copied yet are promoted in place: scanning them where they
 * are costs a fraction of copying them into fresh to-space, so a pause in
 * which far more of eden survives than the policy predicted (a program
 * building a large structure at once) stays near its goal. Each worker
 * adds up its copying and reads the clock every 256 objects; the first to
 * see the budget spent tells the others.
 */
static inline bool over_budget(struct yworker *w)
{
	struct ygc *y = w->y;

	if (likely(!y->deadline_ns))
		return false;
	if (atomic_load_explicit(&y->over, memory_order_relaxed))
		return true;
	if (++w->budget_tick & 255)
		return false;
	atomic_fetch_add_explicit(&y->copied_all, w->copied - w->copied_told, memory_order_relaxed);
	w->copied_told = w->copied;
	if (atomic_load_explicit(&y->copied_all, memory_order_relaxed) <= y->budget_bytes ||
	    kgci_now_ns() < y->deadline_ns)
		return false;
	atomic_store_explicit(&y->over, true, memory_order_relaxed);
	return true;
}

/*
 * The referents of a fresh copy, prefetched as it is pushed: the copy is in
 * cache, its slots still point into from-space, and heap_slot reads those
 * objects' headers as soon as the copy is popped - a load miss per young
 * object, two thirds of heap_slot's samples under GCOld. Prefetched here,
 * the misses of an object's children overlap (GCOld 1 GiB live: 0.78-0.87
 * against 0.95-1.04 ns of worker CPU per byte copied, bench/RESULTS-ab.md).
 * A few slots only: a large array's are prefetched as its scan goes.
 */
#define PREFETCH_REFS 4

static inline void prefetch_refs(struct kgc_heap *h, const char *obj, uint64_t hd)
{
	const kgc_obj *s;
	size_t n;

	switch (hdr_kind(hd)) {
	case KIND_INSTANCE: {
		const struct type_info *ti = type_get(h, hdr_type(hd));

		n = ti->nrefs < PREFETCH_REFS ? ti->nrefs : PREFETCH_REFS;
		for (size_t i = 0; i < n; i++) {
			kgc_obj v = *(const kgc_obj *)(obj + ti->ref_offsets[i]);

			if (is_ref(h, v))
				__builtin_prefetch(v);
		}
		return;
	}
	case KIND_REF_ARRAY:
		s = kgc_array_data((kgc_obj)obj);
		n = kgc_array_length((kgc_obj)obj);
		if (n > PREFETCH_REFS)
			n = PREFETCH_REFS;
		for (size_t i = 0; i < n; i++)
			if (is_ref(h, s[i]))
				__builtin_prefetch(s[i]);
		return;
	default:
		return;
	}
}

/* o in cset region from (young, or old: retained or mixed) */
static kgc_obj evacuate(struct yworker *w, kgc_obj o, uint64_t hd, const struct region *from)
{
	struct kgc_heap *h = w->y->h;
	size_t size = obj_size_h(o, hd);
	unsigned age = hdr_age(hd) + 1;
	bool from_old = from->type == RT_OLD;
	bool old = from_old || age >= w->y->tenure;
	char *dst = NULL;

	if (age > HDR_AGE_MAX)
		age = HDR_AGE_MAX;
	if (!from_old && unlikely(over_budget(w)))
		return keep_in_place(w, o, hd, FAIL_BUDGET);
	if (!old && !(dst = kgci_promote_alloc(w, size, false)))
		old = true;
	if (old)
		dst = kgci_promote_alloc(w, size, true);
	if (unlikely(!dst))	/* to-space exhausted */
		return keep_in_place(w, o, hd, FAIL_ALLOC);
	/*
	 * Forwarded before it is copied: a locked CAS waits until the stores
	 * before it have left the store buffer, and a copy's stores to fresh
	 * to-space lines miss (64% of evacuate's samples under GCOld were the
	 * CAS after the copy). A worker that loses the race takes only the
	 * address; nothing reads a copy but its winner until the gang is done.
	 * The header word is not copied: hd holds it as it was.
	 */
	if (!hdr_cas(o, &hd, (uint64_t)(uintptr_t)dst | HDR_TAG_FWD)) {
		kgci_promote_unalloc(w, dst, size, old);
		return resolved(o, hd);
	}
	memcpy(dst + WORD, (char *)o + WORD, size - WORD);
	*obj_hdr(dst) = hdr_with_age(hd, age);
	if (old) {
		kgci_bot_record(h, region_of(h, dst), dst, size);
		if (unlikely(w->y->black)) {
			kgci_cm_young_promoted(h, dst);
			if (from_old) {	/* the marker traces it again */
				if (w->ngray == w->gray_cap)
					w->gray = kgci_array_grow(w->gray, &w->gray_cap, sizeof(*w->gray),
							     "young GC gray list");
				w->gray[w->ngray++] = (kgc_obj)dst;
			}
		}
		w->promoted += size;
	}
	w->age_bytes[age] += size;	/* promoted or not: the age table sees every survivor */
	w->copied += size;
	prefetch_refs(h, dst, hd);
	ygc_push(w, (kgc_obj)dst);
	return (kgc_obj)dst;
}

/* New location of young object o (copying or marking it in place). */
static inline kgc_obj process(struct yworker *w, kgc_obj o)
{
	struct region *r = region_of(w->y->h, o);
	uint64_t hd;

	if (!(r->flags & RF_CSET))
		return o;
	hd = hdr_load(o);
	if (hd & HDR_TAG_MASK)
		return resolved(o, hd);
	if (r->flags & RF_FAILED) {
		/* pinned region: mark in place, scan later */
		if (!hdr_cas(o, &hd, hd | HDR_TAG_FAILED))
			return resolved(o, hd);
		ygc_push(w, o);
		return o;
	}
	return evacuate(w, o, hd, r);
}

static inline bool young_after(const struct region *r)
{
	return r->type == RT_SURVIVOR && (r->flags & RF_GC_ALLOC);
}

enum { CARD_TGT_NONE, CARD_TGT_CSET, CARD_TGT_TRACKED, CARD_TGT_EAGER };

/* n is referenced from a root or a live young object: a humongous object
 * tracked for eager reclaim stays this pause. */
static inline void note_reached(struct yworker *w, kgc_obj n)
{
	struct kgc_heap *h = w->y->h;

	if (unlikely(w->y->target[region_index(h, n)] == CARD_TGT_EAGER))
		__atomic_store_n(&region_of(h, n)->eager_reached, 1, __ATOMIC_RELAXED);
}

static void root_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = *slot, n = process(ctx, o);

	if (n != o)
		*slot = n;
	note_reached(ctx, n);
}

/*
 * A reference from slot's card into tracked region tr (not in the
 * collection set, not slot's region): a mixed candidate's, or a tracked
 * humongous object's (kept this pause: old space refers to it), is logged
 * for its remembered set (merged at the pause's end: ygc_gather), the
 * others (retained, failed evacuation) keep the card dirty.
 */
static void track_ref(struct yworker *w, struct region *tr, kgc_obj *slot)
{
	struct kgc_heap *h = w->y->h;
	uint64_t e;

	if (__atomic_load_n(&tr->eager, __ATOMIC_RELAXED) == EAGER_TRACKED)
		__atomic_store_n(&tr->eager_reached, 1, __ATOMIC_RELAXED);
	else if (!tr->candidate) {
		kgci_card_dirty(h, slot);
		return;
	}
	if (tr->rs.overflow)
		return;		/* dropped at cleanup: no use recording */
	e = (uint64_t)(tr - h->regions) << 32 | card_index(h, slot);
	/* a card's slots come one after another: most repeats are the last
	 * few entries (a cache's entry links two neighbours in one region) */
	for (size_t k = w->nrs, stop = w->nrs > 4 ? w->nrs - 4 : 0; k > stop; k--)
		if (w->rs_log[k - 1] == e)
			return;
	if (unlikely(w->nrs == w->rs_cap))
		w->rs_log = kgci_array_grow(w->rs_log, &w->rs_cap, sizeof(*w->rs_log), "young GC remset log");
	w->rs_log[w->nrs++] = e;
}

/* A slot inside the heap: keep the card dirty if it still points to young;
 * a reference into a tracked region from an old one is tracked (track_ref).
 * A survivor's references need neither: the next pause copies it. */
static void heap_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	/* atomic: a slot both logged by refinement and on a dirty card again
	 * is visited by two workers; both store the same new location. Release
	 * and acquire: the second one then reads the to-space region of that
	 * location, which a third worker took (its flags) and copied into */
	kgc_obj o = __atomic_load_n(slot, __ATOMIC_ACQUIRE), n = process(ctx, o);
	struct region *nr, *sr;

	if (n != o)
		__atomic_store_n(slot, n, __ATOMIC_RELEASE);
	nr = region_of(h, n);
	if (!young_after(nr) && !tracked_target(nr))
		return;
	note_reached(ctx, n);
	sr = region_of(h, slot);
	if (young_after(nr)) {
		if (!young_after(sr))
			kgci_card_dirty(h, slot);
	} else if (nr != sr && !young_after(sr)) {
		track_ref(ctx, nr, slot);
	}
}

/* Card scan (phase A): remember the slot if it points into the collection
 * set. Most slots on a dirty card point to plain old objects: one byte of
 * y->target (1 KiB for 1024 regions, in L1) says so, not the region's struct. */

static void card_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	struct yworker *w = ctx;
	struct region *tr;

	if (likely(w->y->target[region_index(h, *slot)] == CARD_TGT_NONE))
		return;
	tr = region_of(h, *slot);
	if (!(tr->flags & RF_CSET)) {
		/* a retained region or candidate not collected now */
		if (tracked_target(tr) && tr != region_of(h, slot))
			track_ref(w, tr, slot);
		return;
	}
	if (unlikely(w->nslots == w->slots_cap))
		w->slots = kgci_array_grow(w->slots, &w->slots_cap, sizeof(*w->slots), "young GC card slots");
	w->slots[w->nslots++] = slot;
}

/* kgci_card_refs_inline with card_slot inlined: a dirty card of a
 * reference array (a hash table's buckets) is 64 slots, each one call
 * through a pointer otherwise. */
static void scan_card(struct yworker *w, struct region *r, char *cs)
{
	kgci_card_refs_inline(w->y->h, r, cs, card_slot, w);
}

/*
 * Dirty cards are scanned in batches of CARD_BATCH: their block-offset
 * entries and first lines are prefetched when the batch is gathered, each
 * card's first object a few cards ahead of its scan. Dirty cards scattered
 * over a large old space (an LRU cache relinking old entries) are each a
 * few cache misses; one at a time they cost ~400-500 ns apiece.
 */
#define CARD_BATCH	16
#define CARD_AHEAD	4

static void scan_card_batch(struct yworker *w, struct region *r, const char *const *cs, unsigned n)
{
	struct kgc_heap *h = w->y->h;

	for (unsigned j = 0; j < n; j++) {
		if (j + CARD_AHEAD < n) {
			const char *c = cs[j + CARD_AHEAD];

			__builtin_prefetch(kgci_bot_block_start(h, r, c));
			/* the rest of the card: its slots are read next */
			for (unsigned l = 64; l < (1u << KGC_CARD_SHIFT); l += 64)
				__builtin_prefetch(c + l);
		}
		scan_card(w, r, (char *)cs[j]);
	}
	w->dirty_cards += n;
}

/* Claim old/humongous regions one at a time and scan their dirty cards. */
static void scan_cards(struct yworker *w)
{
	struct ygc *y = w->y;
	struct kgc_heap *h = y->h;
	const char *batch[CARD_BATCH];
	uint32_t k;

	while ((k = atomic_fetch_add(&y->card_next, 1)) < y->nold) {
		struct region *r = &h->regions[y->old_list[k]];
		uint8_t *c = card_for(h, r->bottom), *s = card_sum_for(h, r->bottom);
		size_t nc = region_ncards(r);
		unsigned nb = 0;

		/* atomic: other workers dirty cards of retained targets
		 * (track_ref) while this one scans; the summary's parts are
		 * taken: every dirty card read is cleaned here, or dirtied
		 * again (kgci_card_dirty) with its summary byte */
		for (size_t i = card_next_unclean_sum(c, s, 0, nc, y->sum_mode); i < nc;
		     i = card_next_unclean_sum(c, s, i + 1, nc, y->sum_mode)) {
			uint8_t v = __atomic_load_n(&c[i], __ATOMIC_RELAXED);

			if (v == CARD_REFINED)	/* its slots are in the log: clean, unless dirtied since */
				__atomic_compare_exchange_n(&c[i], &v, CARD_CLEAN, false, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
			if (v != CARD_DIRTY)
				continue;
			__atomic_store_n(&c[i], CARD_CLEAN, __ATOMIC_RELAXED);
			batch[nb] = r->bottom + (i << KGC_CARD_SHIFT);
			__builtin_prefetch(&h->bot[(batch[nb] - h->base) >> KGC_CARD_SHIFT]);
			__builtin_prefetch(batch[nb]);
			if (++nb == CARD_BATCH) {
				scan_card_batch(w, r, batch, nb);
				nb = 0;
			}
		}
		scan_card_batch(w, r, batch, nb);
	}
}

/*
 * The slots concurrent refinement logged since the last pause (refine.c),
 * in chunks any worker of phase A claims: each is what the card scan would
 * have found on its card, read now (a mutator may have stored since). Not
 * those in collection set regions: their objects are copied whole.
 */
#define RLOG_CHUNK	1024
#define RLOG_AHEAD	8

static void scan_refined(struct yworker *w)
{
	struct ygc *y = w->y;
	struct kgc_heap *h = y->h;
	size_t k;

	while ((k = atomic_fetch_add(&y->rlog_next, RLOG_CHUNK)) < y->nrlog) {
		size_t e = k + RLOG_CHUNK < y->nrlog ? k + RLOG_CHUNK : y->nrlog;

		for (size_t i = k; i < e; i++) {
			kgc_obj *slot = y->rlog[i];

			if (i + RLOG_AHEAD < e)
				__builtin_prefetch(y->rlog[i + RLOG_AHEAD]);
			if (is_ref(h, *slot) && !(region_of(h, slot)->flags & RF_CSET))
				card_slot(h, slot, w);
		}
		w->refined_slots += e - k;
	}
}

/* Weak cells: a referent in the collection set was copied, kept in place
 * (evacuation failure: tagged until fixup_failed) or is dead. */
static kgc_obj weak_alive_young(struct kgc_heap *h, kgc_obj o, void *ctx)
{
	uint64_t hd;

	(void)ctx;
	if (!(region_of(h, o)->flags & RF_CSET))
		return o;
	hd = hdr_load(o);
	if (hdr_is_fwd(hd))
		return (kgc_obj)(uintptr_t)(hd & ~HDR_TAG_MASK);
	return (hd & HDR_TAG_MASK) == HDR_TAG_FAILED ? o : NULL;
}

/* Once the gang's work ran out: worker 0 alone copies what ephemeron
 * values reach (nothing is donated: nobody would take it). */
static void drain_alone(struct kgc_heap *h, void *ctx)
{
	struct yworker *w = ctx;

	while (w->len)
		kgci_obj_iterate_refs(h, w->stack[--w->len], heap_slot, w);
}

/*
 * Two phases: (A) every worker scans dirty cards and only collects the
 * slots that point into the collection set; (B) after all are done, roots
 * and those slots are evacuated. Nothing parses old regions in (B), so
 * promotion may fill swept gaps inside them.
 */
static void worker_run(struct yworker *w, bool first)
{
	struct ygc *y = w->y;
	uint64_t c0 = kgci_thread_cpu_ns(), f0 = kgci_thread_faults();
	int j = kgci_gang_join(w, first);

	if (j == GANG_LATE)
		return;
	if (j == GANG_CARDS) {
		uint64_t c1;

		scan_cards(w);
		c1 = kgci_thread_cpu_ns();
		scan_refined(w);
		w->cpu_refined = kgci_thread_cpu_ns() - c1;
		w->cpu_cards = kgci_thread_cpu_ns() - c0;
		kgci_gang_barrier(w, &y->use_gaps);
	}
	c0 = kgci_thread_cpu_ns();
	if (first) {
		kgci_roots_iterate(y->h, root_slot, w);
		kgci_roots_iterate_critical(y->h, root_slot, w);
		if (y->old_cset)	/* marking: its stack and SATB entries into them */
			kgci_cm_young_roots(y->h, root_slot, w);
		kgci_gang_drain_local(w);
	}
	kgci_gang_share_slots(w);
	kgci_gang_drain_all(w);
	if (first)	/* ephemerons whose keys survived: their values as roots */
		kgci_weak_ephemerons(y->h, weak_alive_young, root_slot, drain_alone, w);
	kgci_promote_retire(w);
	w->cpu_evac = kgci_thread_cpu_ns() - c0;
	w->faults = kgci_thread_faults() - f0;
}

/* The evacuation budget of the pause that started at t0 (a test's
 * override first): y->deadline_ns (0: none) and y->budget_bytes. */
static void ygc_budget(struct ygc *y, struct kgc_heap *h, uint64_t t0)
{
	struct young_state *ys = &h->young;
	struct evac_budget b;

	kgci_policy_evac_budget(h, &b);
	if (ys->test_budget_gcs > 0) {
		ys->test_budget_gcs--;
		b.ns = ys->test_budget_ns < 0 ? 0 : (uint64_t)ys->test_budget_ns;
		b.bytes = 0;
		if (ys->test_budget_ns < 0)
			return;
		if (!b.ns)	/* nothing is copied */
			atomic_store_explicit(&y->over, true, memory_order_relaxed);
	}
	y->deadline_ns = b.ns || atomic_load_explicit(&y->over, memory_order_relaxed) ? t0 + b.ns : 0;
	y->budget_bytes = b.bytes;
}

/* Test hook: the next ngcs young pauses have an evacuation budget of
 * budget_ns (0: every young object is promoted in place; < 0: none). */
void kgci_young_test_budget(kgc_heap *h, int64_t budget_ns, int ngcs)
{
	pthread_mutex_lock(&h->lock);
	h->young.test_budget_ns = budget_ns;
	h->young.test_budget_gcs = ngcs;
	pthread_mutex_unlock(&h->lock);
}

static void ygc_setup(struct ygc *y, struct kgc_heap *h)
{
	y->h = h;
	y->sum_mode = card_sum_mode(h, true);
	y->old_list = malloc(h->nregions * sizeof(uint32_t));
	y->target = malloc(h->nregions);
	y->nworkers = kgci_policy_gc_threads(h);
	y->w = calloc(y->nworkers, sizeof(*y->w));
	if (!y->old_list || !y->target || !y->w)
		kgci_fatal("young GC: out of memory");
	pthread_mutex_init(&y->lock, NULL);
	pthread_cond_init(&y->cond, NULL);
	for (unsigned i = 0; i < y->nworkers; i++)
		y->w[i].y = y;
	y->task = worker_run;
	y->active = 1;	/* worker 0, the pausing thread */
	y->heap_slot = heap_slot;
	y->tenure = kgci_policy_tenure(h);
	y->surv_limit = kgci_policy_survivor_limit(h);
	if (h->evac_fail_inject > 0) {
		y->inject = true;
		h->evac_fail_inject--;
	}
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->fail_cause = FAIL_NONE;
		r->evac_alloc_failed = 0;
	}
}

/* Humongous objects tracked for eager reclaim: only unpinned primitive
 * arrays outside the pinned-object space stay tracked (a reference array
 * holds references others' cards and remembered sets may name). */
static void eager_select(struct ygc *y)
{
	struct kgc_heap *h = y->h;

	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type != RT_HUM_START || r->eager != EAGER_TRACKED)
			continue;
		r->eager_reached = 0;
		if (r->pinspace || hdr_kind(*obj_hdr(r->bottom)) != KIND_PRIM_ARRAY) {
			r->eager = EAGER_NO;
			kgci_remset_clear(&r->rs);
			kgci_region_track_update(h, r);
		} else if (y->eager_ok) {
			/* the card scan finds the old references again, and logs them anew */
			y->eager_dirtied += kgci_remset_dirty_cards(h, &r->rs);
			kgci_remset_clear(&r->rs);
		}
	}
}

/*
 * A humongous allocation found no run of h->young.reloc_need free regions:
 * the objects in the way move (humreloc.c) - after eager_select dirtied
 * their remembered cards, so the card scan, the roots and the young
 * objects find every reference to them.
 */
static void reloc_select(struct ygc *y)
{
	struct kgc_heap *h = y->h;
	uint32_t need = h->young.reloc_need;

	y->reloc = malloc(need * sizeof(*y->reloc));
	if (!y->reloc)
		kgci_fatal("young GC: out of memory");
	y->nreloc = kgci_humreloc_plan(h, need, y->reloc);
	kgci_humreloc_begin(h, y->reloc, y->nreloc);
	if (y->nreloc) {	/* no card scan of the sources: their headers forward now */
		uint32_t w = 0;

		for (uint32_t k = 0; k < y->nold; k++)
			if (!(h->regions[y->old_list[k]].flags & RF_CSET))
				y->old_list[w++] = y->old_list[k];
		y->nold = w;
	}
}

/*
 * The collection set: every young region (pinned ones fail evacuation at
 * once), mixed candidates the cycle chose, and retained regions unpinned
 * since they failed, within the policy's limits. The other old and
 * humongous regions are listed for the card scan.
 */
static void ygc_select_cset(struct ygc *y, struct yres *res, uint32_t *npinned)
{
	struct kgc_heap *h = y->h;
	struct cm_young cy = { 0 };
	uint32_t rmax;
	size_t rbudget;

	y->rlog = kgci_refine_log(h, &y->nrlog);	/* read in phase A, before anything moves */
	kgci_cm_young_begin(h, &cy);	/* mixed candidates of the last cycle join the cset */
	kgci_promote_begin(h, cy.idle);
	y->black = cy.marking;
	res->nmixed = cy.nmixed;
	res->mixed_live = cy.mixed_live;
	kgci_policy_retained_limits(h, &rmax, &rbudget);
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (region_is_young(r)) {
			r->flags |= RF_CSET;
			res->cset_bytes += (size_t)(r->top - r->bottom);
			kgci_cards_clear_region(h, r);
			kgci_evacfail_pinned_young(r, npinned);
		} else if (r->flags & RF_CSET) {
			res->cset_bytes += (size_t)(r->top - r->bottom);	/* mixed candidate */
			kgci_cards_clear_region(h, r);
		} else if (kgci_evacfail_retained_join(r, cy.retained_ok, res, rmax, rbudget)) {
			/* unpinned since it failed evacuation: collected now */
		} else if (r->type == RT_OLD || r->type == RT_HUM_START || r->type == RT_HUM_CONT) {
			y->old_list[y->nold++] = i;
			if (r->flags & (RF_PINNED | RF_KPINNED))
				(*npinned)++;
			else if (r->retained)
				res->rleft++;
		}
	}
	if (res->nretained)
		kgci_cm_young_cset(h);	/* their gaps are no promotion space now */
	y->old_cset = res->nretained && y->black;
	y->eager_ok = cy.idle;
	eager_select(y);	/* before the targets below */
	if (h->young.reloc_need && y->eager_ok)
		reloc_select(y);
	/* the card scan's view; the cset and the tracked regions outside it do
	 * not change before it ends */
	for (uint32_t i = 0; i < h->nregions; i++) {
		const struct region *r = &h->regions[i];

		y->target[i] = (r->flags & RF_CSET) ? CARD_TGT_CSET :
			       r->eager == EAGER_TRACKED ? CARD_TGT_EAGER :
			       tracked_target(r) ? CARD_TGT_TRACKED : CARD_TGT_NONE;
	}
	for (uint32_t j = 0; j < y->nreloc; j++)	/* a destination: not reclaimed this pause */
		y->target[y->reloc[j].dst] = CARD_TGT_TRACKED;
}

/*
 * After evacuation, before weak cells are settled: a tracked humongous
 * primitive array that no root, live young object or old object refers to
 * is dead. Freed with the collection set (RF_CSET, not failed: its weak
 * cells are cleared) unless pinned (by a thread, the kernel, or a kgc_io
 * ring's fixed-buffer table) or a cycle runs (its marking may hold it).
 * The others that old space now refers to stop being tracked.
 */
static void eager_reclaim(struct ygc *y, struct yres *res)
{
	struct kgc_heap *h = y->h;

	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];
		bool pinned = false;

		if (r->type != RT_HUM_START || y->target[i] != CARD_TGT_EAGER)
			continue;
		if (r->eager == EAGER_TRACKED && r->rs.overflow) {
			/* referenced from more cards than the policy tracks: left to the cycle */
			r->eager = EAGER_NO;
			kgci_remset_clear(&r->rs);
			kgci_region_track_update(h, r);
		}
		if (r->eager != EAGER_TRACKED)
			continue;
		if (!y->eager_ok || __atomic_load_n(&r->eager_reached, __ATOMIC_RELAXED) || r->fixed_rings)
			continue;
		for (uint32_t j = i; j < i + r->hum_count; j++)
			pinned |= (h->regions[j].flags & (RF_PINNED | RF_KPINNED)) || kgci_region_pinned_now(h, j);
		if (pinned)
			continue;
		for (uint32_t j = i; j < i + r->hum_count; j++)
			h->regions[j].flags |= RF_CSET;
		res->hum_eager++;
	}
}

/* The workers' counts; their copies still to trace go to the marker. */
static void ygc_gather(struct ygc *y, struct yres *res)
{
	struct kgc_heap *h = y->h;
	uint32_t rs_max = kgci_policy_remset_max(h);

	for (unsigned i = 0; i < y->nworkers; i++) {
		struct yworker *w = &y->w[i];

		res->copied += w->copied;
		res->promoted += w->promoted;
		res->slots += w->nslots;
		res->slots_taken += w->slots_taken;
		res->dirty_cards += w->dirty_cards;
		res->refined_slots += w->refined_slots;
		res->refined_cpu_ns += w->cpu_refined;
		res->cards_cpu_ns += w->cpu_cards;
		res->evac_cpu_ns += w->cpu_evac;
		res->faults += w->faults;
		if (w->cpu_cards > res->cards_cpu_max)
			res->cards_cpu_max = w->cpu_cards;
		if (w->cpu_evac > res->evac_cpu_max)
			res->evac_cpu_max = w->cpu_evac;
		if (w->copied > res->copied_max)
			res->copied_max = w->copied;
		res->tospace += w->tospace_regions;
		for (int a = 0; a <= HDR_AGE_MAX; a++)
			res->age_bytes[a] += w->age_bytes[a];
		free(w->stack);
		free(w->slots);
		for (size_t k = 0; k < w->nrs; k++)
			kgci_remset_add(&h->regions[w->rs_log[k] >> 32].rs, (uint32_t)w->rs_log[k], rs_max);
		res->remset_adds += w->nrs;
		free(w->rs_log);
		if (w->ngray)
			kgci_cm_young_gray(h, w->gray, w->ngray);
		free(w->gray);
	}
}

/* A dead humongous object's n regions from s, freed: their pages go back
 * to the OS when the policy says so, and they read zero (no clearing for
 * the next humongous object there). */
static void release_humongous(struct kgc_heap *h, uint32_t s, uint32_t n)
{
	if (kgci_backend_uncommit(h, s, n))
		return;		/* a kernel pin (EBUSY): stays backed, cleared when reused */
	for (uint32_t k = s; k < s + n; k++)
		h->regions[k].flags = (h->regions[k].flags & ~RF_COMMITTED) | RF_ZEROED;
}

/* Every cset region: kept in place (failed) or freed (evacuated). */
static void ygc_finish_regions(struct ygc *y, struct yres *res, unsigned *fail_mask)
{
	struct kgc_heap *h = y->h;
	uint32_t rel_start = 0, rel_end = 0;	/* a dead humongous object to release */

	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type == RT_HUM_START && (r->flags & RF_CSET) && !(r->flags & RF_FAILED) &&
		    kgci_policy_release_humongous(h, r->hum_count)) {
			rel_start = i;
			rel_end = i + r->hum_count;
		}

		kgci_evacfail_note_alloc(r);
		if (r->flags & RF_CSET) {
			if (r->flags & RF_FAILED) {
				kgci_evacfail_keep(h, r, i, res, fail_mask);
			} else {
				res->freed += (size_t)(r->top - r->bottom);
				if (h->opt.poison)
					memset(r->bottom, 0xde, (size_t)(r->top - r->bottom));
				if (r->type == RT_OLD)
					kgci_cm_young_freed(h, i);
				kgci_region_free(h, r);
				kgci_stale_quarantine(h, r);	/* KGC_STALE_CHECK */
			}
		}
		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->fail_cause = FAIL_NONE;
		if (i + 1 == rel_end)
			release_humongous(h, rel_start, rel_end - rel_start);
	}
	kgci_promote_end(h);
}

/* What the policy and the stats learn from this collection: the facts the
 * policy's cost model gets (y->facts, handed on by collect.c), tospace_need,
 * retained_pending and age_bytes are written here only. */
static void ygc_record(struct ygc *y, struct yres *res)
{
	struct kgc_heap *h = y->h;
	struct young_facts *f = y->facts;

	h->tospace_need = res->tospace + 2;
	h->retained_pending = res->rleft;
	memcpy(h->age_bytes, res->age_bytes, sizeof(h->age_bytes));
	f->nworkers = y->nworkers;
	f->w0_cpu_ns = y->w[0].cpu_cards + y->w[0].cpu_evac;
	f->crit_cpu_ns = res->cards_cpu_max + res->evac_cpu_max;
	f->slots = res->slots;
	f->slots_taken = res->slots_taken;
	f->dirty_cards = res->dirty_cards;
	f->refined_slots = res->refined_slots;
	f->refined_cards = kgci_refine_cards(h);
	f->refined_cpu_ns = res->refined_cpu_ns;
	f->cards_cpu_ns = res->cards_cpu_ns - res->refined_cpu_ns;
	f->evac_cpu_ns = res->evac_cpu_ns;
	f->faults = res->faults;
	f->copied_max = res->copied_max;
	f->mixed = res->nmixed;
	f->cset_bytes = res->cset_bytes;
	f->copied = res->copied;
	f->promoted = res->promoted;
	f->kept = res->kept;
	h->st.evac_fail_budget += res->fails[FAIL_BUDGET];
	h->st.bytes_kept_in_place += res->kept;
	if (res->fails[FAIL_BUDGET])
		kgci_log_line(h, LOG_HEAP, "over budget: %u young regions promoted in place (%zuK live)",
			      res->fails[FAIL_BUDGET], res->kept >> 10);
	h->st.humongous_eager += res->hum_eager;
	h->st.refined_cards += f->refined_cards;
	h->st.refined_slots += f->refined_slots;
	if (res->hum_eager)
		kgci_log_line(h, LOG_HEAP, "humongous: %u dead primitive arrays freed eagerly", res->hum_eager);
	if (h->young.reloc_need) {
		size_t moved = 0;

		for (uint32_t j = 0; j < y->nreloc; j++)
			moved += y->reloc[j].bytes;
		h->st.humongous_reloc_pauses += y->nreloc > 0;
		kgci_log_line(h, LOG_GC, "humongous: %u objects relocated (%zuK) for a run of %u free regions%s",
			      y->nreloc, moved >> 10, h->young.reloc_need,
			      y->eager_ok ? (y->nreloc ? "" : ": no plan found") : ": not while a cycle runs");
	}
	if (res->nmixed) {
		h->st.mixed_gcs++;
		h->st.mixed_regions += res->nmixed;
		kgci_log_line(h, LOG_HEAP, "mixed: %u old regions evacuated (%zuK live estimated)",
			      res->nmixed, res->mixed_live >> 10);
	}
	if (y->join_late_ns > 1000000 || y->active < y->nworkers)
		kgci_log_line(h, LOG_HEAP, "gang: %u of %u workers took part (the latest joined %.2fms after the start)",
			      y->active, y->nworkers, y->join_late_ns / 1e6);
	if (res->nretained)
		kgci_log_line(h, LOG_PIN | LOG_HEAP, "retained: %u formerly pinned regions evacuated "
			      "(%zuK live at most)%s, %u left", res->nretained, res->rlive >> 10,
			      y->old_cset ? " while marking" : "", res->rleft);
	kgci_policy_adapt_tenure(h);
	h->st.bytes_copied += res->copied;
	h->st.bytes_promoted += res->promoted;
	h->st.bytes_freed += res->freed > res->copied ? res->freed - res->copied : 0;
	h->st.evac_fail_pinned += res->fails[FAIL_PINNED];
	h->st.evac_fail_kernel_pinned += res->fails[FAIL_KPINNED];
	h->st.evac_fail_alloc += res->fails[FAIL_ALLOC];
	kgci_log_line(h, LOG_HEAP, "copied %zuK promoted %zuK by %u worker(s) (at most %zuK by one; "
		      "dirty cards %zu, refined %zu with %zu slots logged, card slots %zu, %zu taken from "
		      "another worker, %zu remembered); regions: eden %u survivor %u old %u humongous %u free %u",
		      res->copied >> 10, res->promoted >> 10, y->nworkers, f->copied_max >> 10,
		      f->dirty_cards, f->refined_cards, f->refined_slots, f->slots, f->slots_taken, res->remset_adds, h->count[RT_EDEN], h->count[RT_SURVIVOR],
		      h->count[RT_OLD], h->count[RT_HUM_START] + h->count[RT_HUM_CONT],
		      h->count[RT_FREE]);
}

/*
 * A young collection at a safepoint: choose the collection set, evacuate it
 * with the worker gang, settle weak cells, keep or free each cset region,
 * record. *npinned: pinned regions seen; *fail_mask: FAIL_* causes seen;
 * *facts: what it did (zeroed by the caller), for the policy.
 */
void kgci_young_collect(struct kgc_heap *h, uint32_t *npinned, unsigned *fail_mask,
			struct young_facts *facts)
{
	struct ygc y = { .facts = facts };
	struct yres res = { 0 };
	uint64_t t = kgci_now_ns();

	*npinned = 0;
	*fail_mask = 0;
	ygc_setup(&y, h);
	ygc_budget(&y, h, t);
	ygc_select_cset(&y, &res, npinned);
	kgci_phase_lap(facts, YP_CSET, &t);
	kgci_gang_run(&y);
	ygc_gather(&y, &res);
	kgci_phase_lap(facts, YP_EVACUATE, &t);
	eager_reclaim(&y, &res);
	kgci_weak_process(h, weak_alive_young, NULL);
	kgci_humreloc_finish(h, y.reloc, y.nreloc);	/* every reference updated: the pages follow */
	kgci_phase_lap(facts, YP_WEAK, &t);
	ygc_finish_regions(&y, &res, fail_mask);
	kgci_phase_lap(facts, YP_REGIONS, &t);
	ygc_record(&y, &res);
	kgci_phase_lap(facts, YP_RECORD, &t);
	pthread_mutex_destroy(&y.lock);
	pthread_cond_destroy(&y.cond);
	free(y.q);
	free(y.w);
	free(y.old_list);
	free(y.target);
	free(y.reloc);
}

void kgci_young_init(struct kgc_heap *h)
{
	h->young.surv_cur = h->young.old_cur = h->young.old_keep = -1;
}

/* The worker gang's threads, started with the heap: created by the first
 * pause instead, they joined it 3 ms late under a CPU hog (GC(1) of churn
 * took 12 ms for 2 MB). */
void kgci_young_start(struct kgc_heap *h)
{
	kgci_gang_start(h, kgci_policy_gc_threads(h));
}

void kgci_young_destroy(struct kgc_heap *h)
{
	kgci_gang_destroy(h);
}
