/* SPDX-License-Identifier: MIT */
/*
 * young.h - what the files of the young pause share (young.c the phases,
 * gang.c the worker gang and its work sharing, promote.c the promotion
 * allocator, evacfail.c evacuation failure). No other file includes it.
 *
 * Parallel evacuation: the requesting thread is worker 0, KGC_GC_THREADS-1
 * pool threads join it. Each worker has a work stack, survivor and old
 * PLABs and its own counters; objects are claimed by a CAS on the header
 * (copy first, then install the forwarding pointer; the loser retracts its
 * copy). Old-region card scanning is split by claiming regions. Idle
 * workers take work that busy ones donate to a shared queue.
 */
#ifndef KGC_YOUNG_H
#define KGC_YOUNG_H
#include "gc_internal.h"
#include "gc/humreloc.h"
#include "cycle/cm_young.h"

struct ygc;

#define CHUNK_BATCH 32

struct yworker {
	struct ygc *y;
	struct gap chunks[CHUNK_BATCH];	/* swept gaps taken for promotion */
	unsigned nchunks;
	kgc_obj *stack;
	size_t len, cap;
	kgc_obj **slots;		/* old->young slots found on dirty cards */
	size_t nslots, slots_cap;
	_Atomic size_t slot_next;	/* phase B: next of them to claim (any worker) */
	size_t slots_taken;		/* slots it processed from other workers' lists */
	char *plab_top[2], *plab_end[2];	/* [0] survivor, [1] old */
	size_t copied, promoted;
	size_t dirty_cards;		/* for the policy's cost model: cards scanned, */
	size_t refined_slots;		/* logged slots read (refine.c), */
	uint64_t cpu_cards, cpu_evac;	/* CPU ns in phase A and B (thread clock) */
	uint64_t cpu_refined;		/* of phase A's, reading logged slots */
	uint64_t faults;		/* page faults in both phases */
	size_t age_bytes[HDR_AGE_MAX + 1];
	uint32_t tospace_regions;
	kgc_obj *gray;			/* copies out of old regions during marking */
	size_t ngray, gray_cap;
	uint64_t *rs_log;		/* region << 32 | card: for candidates' remembered sets */
	size_t nrs, rs_cap;
	unsigned budget_tick;		/* objects since it last read the clock (over_budget) */
	size_t copied_told;		/* of its copied, added to y->copied_all */
};

struct ygc {
	struct kgc_heap *h;
	unsigned tenure, nworkers;
	uint32_t surv_limit;
	bool surv_full, old_full, inject;
	uint64_t deadline_ns;		/* evacuation budget's end (0: none); past it and */
	size_t budget_bytes;		/* more than this copied, young objects */
	_Atomic bool over;		/* are promoted in place (young.c: over_budget) */
	_Atomic size_t copied_all;	/* the workers' copying, told every 256 objects */
	pthread_mutex_t lock;		/* region allocation and the shared queue */
	pthread_cond_t cond;
	kgc_obj *q;
	size_t qlen, qcap;
	unsigned idle;
	_Atomic unsigned idle_hint;
	bool done;
	unsigned active;		/* workers that joined (y->lock; worker 0 from setup) */
	uint64_t t_go, join_late_ns;	/* the gang's start; the latest join after it */
	_Atomic uint32_t card_next;
	int sum_mode;			/* the card scan's use of the summary (card_next_unclean_sum) */
	kgc_obj **rlog;			/* slots refined since the last pause (refine.c) */
	size_t nrlog;
	_Atomic size_t rlog_next;	/* the next chunk of them to claim */
	unsigned cards_done;		/* workers past the card scan (y->lock) */
	bool cards_over;		/* every worker that joined is past it */
	bool use_gaps;			/* swept gaps may take promoted objects */
	bool black;			/* concurrent marking: promoted objects are marked */
	bool old_cset;			/* old (retained) regions in the cset during marking */
	bool eager_ok;			/* no cycle runs: dead humongous objects may be freed */
	size_t eager_dirtied;		/* their remembered cards dirtied for the card scan */
	struct hreloc *reloc;		/* humongous objects this pause moves (humreloc.c) */
	uint32_t nreloc;
	uint32_t *old_list, nold;
	uint8_t *target;		/* per region, for the card scan: CARD_TGT_* */
	struct yworker *w;
	struct young_facts *facts;	/* what the policy learns (collect.c hands it on) */
	/* what the gang runs (young.c): each worker's task, the visitor of
	 * every reference slot of a copied object */
	void (*task)(struct yworker *w, bool first);
	slot_fn heap_slot;
};

/* What one young collection did, gathered from its phases. */
struct yres {
	size_t freed, copied, promoted, cset_bytes, rlive, mixed_live;
	size_t copied_max, slots, slots_taken;	/* most one worker copied; card slots, taken by another */
	size_t dirty_cards, remset_adds, refined_slots;
	uint64_t refined_cpu_ns;
	uint32_t hum_eager;		/* humongous objects freed eagerly */
	uint64_t cards_cpu_ns, evac_cpu_ns;	/* all workers' CPU in phase A and B */
	uint64_t cards_cpu_max, evac_cpu_max;	/* the busiest worker's in each */
	uint64_t faults;			/* all workers' page faults */
	size_t age_bytes[HDR_AGE_MAX + 1];
	uint32_t nretained, nmixed, rleft, tospace;
	uint32_t fails[FAIL_N];
	size_t kept;			/* live bytes of regions promoted in place (FAIL_BUDGET) */
};

static inline void ygc_push(struct yworker *w, kgc_obj o)
{
	if (unlikely(w->len == w->cap))
		w->stack = kgci_array_grow(w->stack, &w->cap, sizeof(*w->stack), "young GC work stack");
	w->stack[w->len++] = o;
}

static inline uint64_t hdr_load(kgc_obj o)
{
	return __atomic_load_n(obj_hdr(o), __ATOMIC_ACQUIRE);
}

/* Install new header value over hd; on failure hd gets the current one. */
static inline bool hdr_cas(kgc_obj o, uint64_t *hd, uint64_t nv)
{
	return __atomic_compare_exchange_n(obj_hdr(o), hd, nv, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/*
 * Regions that failed evacuation because they were pinned stay old and
 * "retained": every reference into them from another old region keeps its
 * card dirty, so a later young collection can evacuate them once unpinned
 * (JEP 423: retained as candidates, collected once unpinned) without
 * remembered sets between old regions. Mixed-collection candidates
 * (mixed.c) are tracked the same way.
 */
static inline bool tracked_target(const struct region *r)
{
	return r->retained || r->candidate ||
	       __atomic_load_n(&r->eager, __ATOMIC_RELAXED) == EAGER_TRACKED ||	/* workers store it */
	       ((r->flags & RF_FAILED) && r->fail_cause != FAIL_ALLOC && r->fail_cause != FAIL_BUDGET);
}

/* gang.c: the worker gang */
void kgci_gang_run(struct ygc *y);		/* y->task on every worker */
void kgci_gang_start(struct kgc_heap *h, unsigned n);	/* n - 1 threads; fewer if some fail */
void kgci_gang_destroy(struct kgc_heap *h);	/* stops its threads */
enum { GANG_CARDS, GANG_EVAC, GANG_LATE };
int kgci_gang_join(struct yworker *w, bool first);	/* GANG_*: what this worker does */
void kgci_gang_barrier(struct yworker *w, bool *set_at_last);
void kgci_gang_drain_local(struct yworker *w);
void kgci_gang_drain_all(struct yworker *w);	/* until every worker is out of work */
void kgci_gang_share_slots(struct yworker *w);	/* phase B: every worker's card slots */

/* promote.c: to-space allocation */
void kgci_promote_begin(struct kgc_heap *h, bool keep_ok);	/* to-space regions of a new pause */
void kgci_promote_end(struct kgc_heap *h);
char *kgci_promote_alloc(struct yworker *w, size_t size, bool old);
void kgci_promote_unalloc(struct yworker *w, char *p, size_t size, bool old);
void kgci_promote_retire(struct yworker *w);	/* PLABs and unused gaps, end of the worker's run */

/* evacfail.c: evacuation failure */
void kgci_evacfail_pinned_young(struct region *r, uint32_t *npinned);
bool kgci_evacfail_retained_join(struct region *r, bool allowed, struct yres *res, uint32_t rmax,
				 size_t rbudget);
void kgci_evacfail_note_alloc(struct region *r);
void kgci_evacfail_keep(struct kgc_heap *h, struct region *r, uint32_t i, struct yres *res,
			unsigned *fail_mask);

#endif
