/* SPDX-License-Identifier: MIT */
/*
 * cm.h - what the files of the concurrent cycle share: cmark.c (the cycle:
 * marker thread, initial mark, remark, its steps in young pauses), satb.c
 * (the mutators' SATB buffers), sweep.c (sweep, cleanup, the gaps handed to
 * promotion), mixed.c (mixed candidates and their remembered sets) and
 * cmverify.c (KGC_VERIFY's checks of the bitmap and of marking). No other
 * file includes it; the young pause reaches the cycle through cm_young.h.
 *
 * Cycle (the pause steps run at the end of a young collection):
 *   initial mark  TAMS := top for every old / humongous region (objects
 *                 above TAMS were allocated after the snapshot: live);
 *                 roots and every survivor object's references are marked;
 *                 mutators start logging overwritten references (SATB).
 *   marking       the marker thread traces old objects below TAMS and
 *                 drains the mutators' SATB buffers. It never follows a
 *                 reference into young space: young objects that existed
 *                 at the snapshot were the survivors scanned above.
 *   remark        SATB buffers and the mark stack are drained in a pause;
 *                 logging stops. Unmarked objects below TAMS are dead.
 *   sweeping      the marker thread turns runs of dead objects into
 *                 fillers (block offset table updated) and records runs of
 *                 at least CM_CHUNK_MIN bytes as free chunks.
 *   cleanup       (pause) wholly dead regions and dead humongous objects
 *                 are freed, the chunks are handed to young collections as
 *                 promotion space.
 *   rebuild       if remark chose mixed-collection candidates (sparse old
 *                 regions, see below), the card of each reference into a
 *                 candidate goes to the candidate's remembered set
 *                 (heap/remset.c): the sweep adds the live objects' below
 *                 TAMS, then the marker walks what lies above TAMS; done
 *                 before cleanup.
 *   mixed         young collections after the rebuild also evacuate a few
 *                 candidates each, best ranked first (G1's mixed
 *                 collections): every reference into a candidate from
 *                 another old region is on a dirty card or in its
 *                 remembered set (rebuild; from remark on the write barrier
 *                 cards stores into candidates and young pauses add the
 *                 cards they find to the sets); the pause that takes a
 *                 candidate dirties its remembered cards first. This is
 *                 what frees old regions the sweep leaves fragmented.
 * Until cleanup nothing is freed, so a dead object's references stay valid
 * and card scanning may treat it like a live one.
 *
 * The marker holds cm->lock while it works and gives it up within a few
 * microseconds when a collection asks (yield_req): every pause holds it,
 * so marker and pauses never overlap. Lock order: h->lock, cm->lock,
 * cm->satb_lock; cm->lock, cm->pool.lock. Allocating threads help mark
 * while the cycle falls behind (assist.c). A full collection aborts the
 * cycle.
 */
#ifndef KGC_CM_H
#define KGC_CM_H
#include "heap/markbits.h"
#include "cycle/cm_young.h"

#define SATB_CAP 1024		/* entries per buffer */
#define STEP_WORK 512		/* objects between checks for a yield request */

enum cm_state { CM_IDLE, CM_MARKING, CM_REMARK_READY, CM_SWEEPING, CM_SWEPT };
enum { SW_NOT = 0, SW_DONE = 1, SW_EMPTY = 2 };	/* sweep progress per region */

struct satb_buf {
	struct satb_buf *next;
	uint32_t n;
	kgc_obj e[SATB_CAP];
};

/* Gray objects shared between the marker and assisting threads (assist.c). */
struct cm_pool {
	pthread_mutex_t lock;
	kgc_obj *v;
	size_t len, cap;
	_Atomic int want;		/* an assist found it empty: the marker hands work over */
	_Atomic int open;		/* marking: assists may work (initial mark to remark) */
	bool inited;
};

#define NO_PERIOD UINT64_MAX

struct cmark {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stop;
	_Atomic int yield_req;
	int state;
	struct markbits bits;		/* 1 bit per heap word */
	char **tams;			/* per region; == bottom: nothing to mark */
	size_t *live;			/* marked bytes per region (by the marker, and pauses) */
	uint32_t *inrefs;		/* per region: references into it from other regions the
					 * marking traced (marker and assists: relaxed, an estimate
					 * of a candidate's remembered set: mixed.c) */
	_Atomic size_t *live_par;	/* ... by assists, until remark (assist.c) */
	kgc_obj *stack;
	size_t len, cap;
	struct cm_pool pool;
	uint64_t expect;		/* marked bytes the cycle expects: the last one's */
	size_t old0;			/* old and humongous bytes at the cycle's start */
	uint64_t promoted0;		/* h->st.bytes_promoted at the cycle's start
					 * (NO_PERIOD: none since the heap's creation or a full GC) */
	uint64_t promoted_period;	/* promoted from the last cycle's start to this one's
					 * (0: not known): what the next one refills (mixed.c) */
	pthread_mutex_t satb_lock;
	struct satb_buf *full;		/* buffers handed over by mutators */
	/* sweeping */
	uint32_t *sweep;		/* regions to sweep */
	uint32_t nsweep, sweep_i;
	char *sweep_p, *dead;		/* cursor in sweep[sweep_i], start of the dead run */
	size_t sweep_live;
	uint8_t *swept;			/* per region: SW_* */
	uint32_t *empty, nempty;	/* swept, nothing live: freed at cleanup */
	uint32_t *humdead, nhumdead;	/* dead humongous starts */
	struct gap *swept_chunks;	/* built by the sweep */
	size_t nswept, swept_cap, swept_bytes;
	/* chunks young collections promote into (their bytes: h->chunk_bytes) */
	struct gap *chunks;
	size_t nchunks, chunks_cap;
	/* mixed collections: candidates, most garbage first (region->candidate) */
	struct cand { size_t live; uint32_t idx; double eff; } *cand;	/* live: estimated; eff: rank */
	uint32_t ncand, ncand_cycle;	/* left; chosen at the last remark */
	bool held;			/* test hook: the marker thread does no work */
	bool cand_ready;		/* remembered sets built: candidates may be evacuated */
	uint32_t remset_max;		/* cards per remembered set, this cycle's (policy) */
	/* root regions: young regions at the cycle's start, [bottom, rr_top),
	 * scanned after that pause (rr_scan) */
	uint32_t *rr, nrr, rr_i;	/* their indices; how many; the next one */
	char **rr_top, *rr_pos;		/* per entry of rr: its top; cursor in rr[rr_i] */
	uint32_t rb_i;			/* rebuild cursor: region, object */
	char *rb_p;
	char **rb_top;			/* per region: what the rebuild walks, [TAMS, rb_top)
					 * after the sweep, taken at remark */
	/* cycle stats */
	uint64_t t_start, marked_bytes;
	uint64_t pace_ns0;		/* h->alloc.pace_ns at the cycle's start */
	uint64_t assist_ns0, assist_bytes0;	/* h->alloc.assist_* then */
	uint64_t mark_cpu, sweep_cpu, rebuild_cpu;	/* marker thread CPU time this cycle */
	uint64_t cycles;
};

/* A header as the cycle reads it between pauses: a mutator may change the
 * runtime's bits of a live object meanwhile (kgc_obj_vm_bits_*, a CAS on
 * the word); kind, type and size never change. */
static inline uint64_t cm_hdr(const void *o)
{
	return __atomic_load_n(obj_hdr(o), __ATOMIC_RELAXED);
}

static inline kgc_obj load_ref(kgc_obj *s)
{
	return __atomic_load_n(s, __ATOMIC_RELAXED);
}

/*
 * The references of object o (header hd) as concurrent marking reads them
 * (mutators store meanwhile: relaxed loads), each handed to mark(h, ctx,
 * ref): every slot's value, NULL and tagged immediates too (mark asks
 * is_ref). Always inlined: the marker's and the assists' mark calls stay
 * direct.
 */
static inline __attribute__((always_inline)) void
cm_obj_refs(struct kgc_heap *h, kgc_obj o, uint64_t hd, void (*mark)(struct kgc_heap *, void *, kgc_obj), void *ctx)
{
	switch (hdr_kind(hd)) {
	case KIND_INSTANCE: {
		const struct type_info *ti = type_get(h, hdr_type(hd));

		for (uint32_t i = 0; i < ti->nrefs; i++)
			mark(h, ctx, load_ref((kgc_obj *)((char *)o + ti->ref_offsets[i])));
		if (unlikely(ti->scan != NULL))
			kgci_scan_values(h, ti, o, mark, ctx);
		break;
	}
	case KIND_REF_ARRAY: {
		kgc_obj *s = kgc_array_data(o);
		size_t n = kgc_array_length(o);

		for (size_t i = 0; i < n; i++)
			mark(h, ctx, load_ref(&s[i]));
		break;
	}
	default:
		break;
	}
}

/* A reference traced from region src into region tr (below TAMS): counted
 * for tr's incoming estimate. Relaxed load and store, not an atomic add:
 * the marker and assists may lose each other's count now and then, which
 * an estimate tolerates, and it costs a plain increment. */
static inline void cm_count_inref(struct cmark *cm, uint32_t src, uint32_t tr)
{
	if (src != tr)
		__atomic_store_n(&cm->inrefs[tr], __atomic_load_n(&cm->inrefs[tr], __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
}

static inline bool cm_marked(struct cmark *cm, const void *p)
{
	return mb_test(&cm->bits, p);
}

/*
 * The marker gets off the heap when a pause wants it (yield_req) and off
 * the CPU as soon as a safepoint is requested (poll_word): on a small
 * machine it would otherwise delay the threads the safepoint waits for.
 */
static inline bool must_yield(struct kgc_heap *h, struct cmark *cm)
{
	return atomic_load_explicit(&cm->yield_req, memory_order_relaxed) ||
	       atomic_load_explicit(&h->sp.poll_word, memory_order_relaxed);
}

/* No cycle: nothing anywhere is below TAMS. */
static inline void tams_reset(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++)
		cm->tams[i] = h->regions[i].bottom;
}

static inline const char *cm_state_name(const struct cmark *cm)
{
	static const char *const names[] = { "idle", "marking", "remark-ready", "sweeping", "swept" };

	return names[cm->state];
}

/* satb.c */
void kgci_satb_set_active(struct kgc_heap *h, uint32_t on);
struct satb_buf *kgci_satb_take(struct cmark *cm);	/* the buffers mutators handed over */
void kgci_satb_free_list(struct satb_buf *b);
void kgci_satb_drop(struct kgc_heap *h, struct cmark *cm);	/* every entry, logged or handed over */
void kgci_satb_each(struct kgc_heap *h, slot_fn fn, void *ctx);	/* every pending entry (a pause) */

/* assist.c: mark bits set with mb_set_par while marking (cm->lock held by
 * the marker or a pause for the pool calls) */
int kgci_cm_pool_init(struct kgc_heap *h, struct cmark *cm);
void kgci_cm_pool_destroy(struct cmark *cm);
void kgci_cm_pool_donate(struct cmark *cm);
bool kgci_cm_pool_refill(struct cmark *cm);
void kgci_cm_pool_each(struct kgc_heap *h, struct cmark *cm, slot_fn fn, void *ctx);
void kgci_cm_pool_reset(struct kgc_heap *h, struct cmark *cm, bool open);
void kgci_cm_assist_fold(struct kgc_heap *h, struct cmark *cm);
uint64_t kgci_cm_assist_marked(struct kgc_heap *h, struct cmark *cm);

/* sweep.c */
void kgci_sweep_prepare(struct kgc_heap *h, struct cmark *cm);	/* at remark */
bool kgci_sweep_work(struct kgc_heap *h, struct cmark *cm, bool bounded);
void kgci_sweep_cleanup(struct kgc_heap *h, struct cmark *cm);
void kgci_sweep_hand_over(struct kgc_heap *h, struct cmark *cm);	/* a young pause while sweeping */

/* mixed.c */
void kgci_mixed_clear(struct kgc_heap *h, struct cmark *cm);
void kgci_mixed_choose(struct kgc_heap *h, struct cmark *cm);	/* at remark */
void kgci_mixed_rebuild_obj(struct kgc_heap *h, kgc_obj o);	/* the sweep: a live object */
bool kgci_mixed_rebuild_work(struct kgc_heap *h, struct cmark *cm, bool bounded);	/* after it */
void kgci_mixed_rebuild_done(struct kgc_heap *h, struct cmark *cm);	/* at cleanup */
uint32_t kgci_mixed_select(struct kgc_heap *h, size_t *live_bytes);	/* young GC: adds to the cset */

/* sweep.c: gaps in regions to be evacuated and freed (RF_CSET or candidate) */
void kgci_cm_chunks_drop_evacuated(struct kgc_heap *h);

/* cmverify.c */
void kgci_verify_marking(struct kgc_heap *h);

#endif
