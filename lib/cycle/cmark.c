/* SPDX-License-Identifier: MIT */
/*
 * cmark.c - the concurrent cycle (cm.h tells it whole): snapshot-at-the-
 * beginning marking of old space like G1's, then a sweep like CMS's
 * (sweep.c), so old space needs no remembered sets; then G1's mixed
 * collections of sparse old regions with per-region remembered sets
 * (mixed.c, heap/remset.c). This file has the marker thread (kgc-marker),
 * the pause steps (initial mark, remark, the degenerated cycle; cleanup is
 * sweep.c's), the bracket every pause puts around the marker, the abort
 * of a full collection, and what a young pause asks of the cycle
 * (cm_young.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cycle/cm.h"

/* ------------------------------------------------------------ marking */

static inline void cm_stack_push(struct cmark *cm, kgc_obj o)
{
	if (unlikely(cm->len == cm->cap))
		cm->stack = kgci_array_grow(cm->stack, &cm->cap, sizeof(*cm->stack), "concurrent mark stack");
	cm->stack[cm->len++] = o;
}

#define NO_SRC UINT32_MAX	/* a root's reference: no region to count it from */

/* Mark o if it is an old object below TAMS (assists mark too: atomically);
 * a reference from an object in region src counts for o's region
 * (cm_count_inref). */
static inline void mark_ref_from(struct kgc_heap *h, struct cmark *cm, kgc_obj o, uint32_t src)
{
	uint32_t tr;

	if (!is_ref(h, o) || !in_heap(h, o))
		return;
	tr = region_index(h, o);
	if ((char *)o >= cm->tams[tr])
		return;
	if (src != NO_SRC)
		cm_count_inref(cm, src, tr);
	if (mb_set_par(&cm->bits, o))
		cm_stack_push(cm, o);
}

static inline void mark_ref(struct kgc_heap *h, struct cmark *cm, kgc_obj o)
{
	mark_ref_from(h, cm, o, NO_SRC);
}

struct scan_ctx { struct cmark *cm; uint32_t src; };

static inline void scan_ref_cb(struct kgc_heap *h, void *ctx, kgc_obj o)
{
	struct scan_ctx *s = ctx;

	mark_ref_from(h, s->cm, o, s->src);
}

/* Trace one marked object: its size counts as live, its references get marked. */
static void scan_obj(struct kgc_heap *h, struct cmark *cm, kgc_obj o)
{
	uint64_t hd = cm_hdr(o);
	struct scan_ctx s = { cm, region_index(h, o) };

	cm->live[s.src] += obj_size_h(o, hd);
	cm_obj_refs(h, o, hd, scan_ref_cb, &s);
}

static void root_mark(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	mark_ref(h, ctx, *slot);
}

static void satb_process(struct kgc_heap *h, struct cmark *cm, struct satb_buf *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		mark_ref(h, cm, b->e[i]);
}

/*
 * Objects popped from the stack wait in a small FIFO, prefetched, until
 * they are scanned: the cache miss on each object's header overlaps the
 * scans of the MARK_PREFETCH - 1 before it (Boehm's and Cher et al.'s
 * prefetch-on-grey). Marking a large old space of small objects is mostly
 * those misses. The FIFO goes back on the stack before the marker yields:
 * a pause sees every gray object on the stack or in the pool.
 */
#define MARK_PREFETCH 8

struct mark_fifo { kgc_obj o[MARK_PREFETCH]; unsigned head, n; };

static inline void fifo_fill(struct cmark *cm, struct mark_fifo *f)
{
	while (cm->len && f->n < MARK_PREFETCH) {
		kgc_obj o = cm->stack[--cm->len];

		__builtin_prefetch(o);
		f->o[(f->head + f->n++) % MARK_PREFETCH] = o;
	}
}

static inline kgc_obj fifo_take(struct mark_fifo *f)
{
	kgc_obj o = f->o[f->head];

	f->head = (f->head + 1) % MARK_PREFETCH;
	f->n--;
	return o;
}

static void fifo_flush(struct cmark *cm, struct mark_fifo *f)
{
	while (f->n)
		cm_stack_push(cm, fifo_take(f));
}

static void rr_ref(struct kgc_heap *h, void *ctx, kgc_obj o)
{
	mark_ref(h, ctx, o);
}

/*
 * The root regions (after G1's root region scan): the young objects of the
 * cycle's snapshot, whose references into old space are roots of the cycle
 * (the marker never visits young space). Scanned in the pause that started
 * the cycle, they took 4 ms of it for 4.7 MB of survivors, serially (GCOld
 * 1 GiB live: its longest pause, bench/RESULTS-ab.md 2026-12-07 night).
 * Now the marker scans them first (mark_work), concurrently, and the next
 * young pause the rest before it moves them (kgci_cm_before_young). Sound
 * as the concurrent scan of old objects is: a reference overwritten since
 * the snapshot was logged by the pre-write barrier; nothing allocates in
 * these regions until that pause. True when none is left (bounded: false
 * at a yield request).
 */
static bool rr_scan(struct kgc_heap *h, struct cmark *cm, bool bounded)
{
	unsigned k = 0;

	while (cm->rr_i < cm->nrr) {
		char *p = cm->rr_pos, *top = cm->rr_top[cm->rr_i];

		while (p < top) {
			uint64_t hd = cm_hdr(p);

			cm_obj_refs(h, (kgc_obj)p, hd, rr_ref, cm);
			p += obj_size_h((kgc_obj)p, hd);
			if (bounded && (++k % STEP_WORK) == 0 && p < top && must_yield(h, cm)) {
				cm->rr_pos = p;
				return false;
			}
		}
		if (++cm->rr_i < cm->nrr)
			cm->rr_pos = h->regions[cm->rr[cm->rr_i]].bottom;
	}
	return true;
}

/* Before a young pause moves them (cm->lock held): the root regions the
 * marker has not scanned yet. */
void kgci_cm_before_young(struct kgc_heap *h)
{
	rr_scan(h, h->cm, false);
}

/* Marking work until a yield request (bounded), the clock reads until (0:
 * no deadline) or no work (the root regions, the marker's stack, the
 * assists' pool, SATB buffers); true when out of work. */
static bool mark_work(struct kgc_heap *h, struct cmark *cm, bool bounded, uint64_t until)
{
	struct mark_fifo f = { .n = 0 };
	unsigned k = 0;

	if (!rr_scan(h, cm, bounded))
		return false;
	for (;;) {
		while (cm->len || f.n) {
			fifo_fill(cm, &f);
			scan_obj(h, cm, fifo_take(&f));
			if ((bounded || until) && (++k % STEP_WORK) == 0) {
				if (until && kgci_now_ns() >= until) {
					fifo_flush(cm, &f);
					return false;
				}
				if (!bounded)
					continue;
				if (must_yield(h, cm)) {
					fifo_flush(cm, &f);
					return false;
				}
				if (atomic_load_explicit(&cm->pool.want, memory_order_relaxed)) {
					fifo_flush(cm, &f);
					kgci_cm_pool_donate(cm);
				}
			}
		}
		if (kgci_cm_pool_refill(cm))
			continue;
		struct satb_buf *b = kgci_satb_take(cm);

		if (!b)
			return true;
		while (b) {
			struct satb_buf *n = b->next;

			satb_process(h, cm, b);
			free(b);
			b = n;
		}
	}
}


/* ---------------------------------------------------------- the marker */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *marker_main(void *arg)
{
	struct kgc_heap *h = arg;
	struct cmark *cm = h->cm;

	pthread_mutex_lock(&cm->lock);
	for (;;) {
		while (!cm->stop && (must_yield(h, cm) || cm->held ||
				     (cm->state != CM_MARKING && cm->state != CM_SWEEPING))) {
			struct timespec ts;

			if (cm->held || (!must_yield(h, cm) && cm->state != CM_REMARK_READY)) {
				pthread_cond_wait(&cm->cond, &cm->lock);
				continue;
			}
			/*
			 * A safepoint is being reached (give the CPU to the threads
			 * it waits for), a pause runs, or marking waits for its
			 * remark: look again shortly (draining SATB buffers in the
			 * last case, so the remark pause stays short).
			 */
			timespec_after_ms(&ts, must_yield(h, cm) ? 1 : 2);
			pthread_cond_timedwait(&cm->cond, &cm->lock, &ts);
			if (!must_yield(h, cm) && cm->state == CM_REMARK_READY)
				mark_work(h, cm, true, 0);
		}
		if (cm->stop)
			break;
		if (cm->state == CM_MARKING) {
			uint64_t c0 = thread_cpu_ns();

			if (mark_work(h, cm, true, 0)) {
				cm->state = CM_REMARK_READY;
				/* the rest waits for a pause: no use slowing allocation */
				atomic_store_explicit(&h->alloc.pace_permille, 0, memory_order_relaxed);
			}
			cm->mark_cpu += thread_cpu_ns() - c0;
		} else {
			/* sweep (with the live objects' part of the remembered-set
			 * rebuild), then the rebuild's walk above TAMS */
			uint64_t c0 = thread_cpu_ns(), c1;
			bool swept = kgci_sweep_work(h, cm, true);

			c1 = thread_cpu_ns();
			cm->sweep_cpu += c1 - c0;
			if (swept && kgci_mixed_rebuild_work(h, cm, true)) {
				cm->state = CM_SWEPT;
				atomic_store_explicit(&h->alloc.pace_permille, 0, memory_order_relaxed);
			}
			cm->rebuild_cpu += thread_cpu_ns() - c1;
		}
	}
	pthread_mutex_unlock(&cm->lock);
	return NULL;
}


/* ------------------------------------------------------------- pauses */

int kgci_cm_init(struct kgc_heap *h)
{
	struct cmark *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return -ENOMEM;
	cm->promoted0 = NO_PERIOD;
	cm->tams = calloc(h->nregions, sizeof(*cm->tams));
	cm->live = calloc(h->nregions, sizeof(*cm->live));
	cm->inrefs = calloc(h->nregions, sizeof(*cm->inrefs));
	cm->sweep = calloc(h->nregions, sizeof(uint32_t));
	cm->empty = calloc(h->nregions, sizeof(uint32_t));
	cm->humdead = calloc(h->nregions, sizeof(uint32_t));
	cm->swept = calloc(h->nregions, 1);
	cm->cand = calloc(h->nregions, sizeof(*cm->cand));
	cm->rb_top = calloc(h->nregions, sizeof(*cm->rb_top));
	cm->rr = calloc(h->nregions, sizeof(*cm->rr));
	cm->rr_top = calloc(h->nregions, sizeof(*cm->rr_top));
	if (kgci_markbits_init(&cm->bits, h->base, (size_t)h->nregions << h->region_shift) || !cm->tams || !cm->live || !cm->inrefs || !cm->sweep || !cm->empty || !cm->humdead ||
	    !cm->swept || !cm->cand || !cm->rb_top || !cm->rr || !cm->rr_top || kgci_cm_pool_init(h, cm)) {
		h->cm = cm;
		kgci_cm_destroy(h);
		return -ENOMEM;
	}
	tams_reset(h, cm);
	pthread_mutex_init(&cm->lock, NULL);
	pthread_cond_init(&cm->cond, NULL);
	pthread_mutex_init(&cm->satb_lock, NULL);
	h->cm = cm;
	return 0;
}

void kgci_cm_destroy(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	if (!cm)
		return;
	if (cm->started) {
		atomic_store(&cm->yield_req, 1);	/* out of any long work loop */
		pthread_mutex_lock(&cm->lock);
		cm->stop = true;
		pthread_cond_broadcast(&cm->cond);
		pthread_mutex_unlock(&cm->lock);
		pthread_join(cm->thread, NULL);
	}
	kgci_markbits_destroy(&cm->bits);
	kgci_satb_free_list(cm->full);
	free(cm->tams);
	free(cm->live);
	free(cm->inrefs);
	free(cm->stack);
	free(cm->sweep);
	free(cm->empty);
	free(cm->humdead);
	free(cm->swept);
	free(cm->cand);
	free(cm->rb_top);
	free(cm->rr);
	free(cm->rr_top);
	free(cm->swept_chunks);
	free(cm->chunks);
	kgci_cm_pool_destroy(cm);
	if (cm->started || cm->tams) {
		pthread_mutex_destroy(&cm->lock);
		pthread_cond_destroy(&cm->cond);
		pthread_mutex_destroy(&cm->satb_lock);
	}
	free(cm);
	h->cm = NULL;
}

/* Every collection brackets its pause with these: the marker is off the heap. */
void kgci_cm_pause_begin(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	atomic_store(&cm->yield_req, 1);
	pthread_mutex_lock(&cm->lock);
}

void kgci_cm_pause_end(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	atomic_store(&cm->yield_req, 0);
	pthread_cond_broadcast(&cm->cond);
	pthread_mutex_unlock(&cm->lock);
}

/* Full collection: forget the cycle (and the chunks: compaction moves everything). */
void kgci_cm_abort(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	if (cm->state != CM_IDLE) {
		kgci_markbits_clear_all(&cm->bits);
		kgci_satb_set_active(h, 0);
		kgci_satb_drop(h, cm);
		cm->len = 0;
		cm->nrr = cm->rr_i = 0;
		kgci_cm_pool_reset(h, cm, false);
		tams_reset(h, cm);
		cm->nswept = cm->swept_bytes = 0;
		kgci_log_line(h, LOG_GC, "Concurrent Mark Abort");
		cm->state = CM_IDLE;
	}
	/* compaction moves old objects: the candidates are gone */
	kgci_mixed_clear(h, cm);
	cm->nchunks = 0;
	h->chunk_bytes = 0;
	cm->promoted0 = NO_PERIOD;	/* what was promoted before is compacted now */
	if (h->opt.verify)
		kgci_cm_verify_bits(h, "cycle aborted");
}

static void initial_mark(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		cm->live[i] = 0;
		cm->inrefs[i] = 0;
		cm->tams[i] = (r->type == RT_OLD || r->type == RT_HUM_START) ? r->top : r->bottom;
	}
	/* gaps of the last sweep stay in use: promotion into them is marked
	 * black (kgci_cm_mark_black) until remark */
	cm->len = 0;
	kgci_cm_pool_reset(h, cm, true);
	cm->old0 = kgci_old_used(h);
	cm->promoted_period = cm->promoted0 == NO_PERIOD ? 0 : h->st.bytes_promoted - cm->promoted0;
	cm->promoted0 = h->st.bytes_promoted;
	cm->expect = cm->marked_bytes ? cm->marked_bytes : cm->old0;
	kgci_roots_iterate(h, root_mark, cm);
	kgci_roots_iterate_critical(h, root_mark, cm);
	/* young objects that existed at the snapshot: scanned after this pause (rr_scan) */
	cm->nrr = cm->rr_i = 0;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if ((r->type == RT_SURVIVOR || r->type == RT_EDEN) && r->top > r->bottom) {
			cm->rr_top[cm->nrr] = r->top;
			cm->rr[cm->nrr++] = i;
		}
	}
	cm->rr_pos = cm->nrr ? h->regions[cm->rr[0]].bottom : NULL;
	kgci_satb_set_active(h, 1);
	cm->t_start = kgci_now_ns();
	cm->pace_ns0 = atomic_load_explicit(&h->alloc.pace_ns, memory_order_relaxed);
	cm->assist_ns0 = atomic_load_explicit(&h->alloc.assist_ns, memory_order_relaxed);
	cm->assist_bytes0 = atomic_load_explicit(&h->alloc.assist_bytes, memory_order_relaxed);
	cm->mark_cpu = cm->sweep_cpu = 0;
	cm->state = CM_MARKING;
	if (!cm->started) {
		if (kgci_spawn(&cm->thread, marker_main, h, "kgc-marker") == 0) {
			cm->started = true;
		} else {
			/* no marker thread: finish marking in this pause */
			mark_work(h, cm, false, 0);
			cm->state = CM_REMARK_READY;
		}
	}
	kgci_log_line(h, LOG_GC, "Concurrent Mark Start (%zu gray from roots, %u young regions to scan)",
		      cm->len, cm->nrr);
}

/* Weak cells at remark: an old or humongous referent below TAMS is dead
 * unless marked; everything else is not this cycle's to decide. */
static kgc_obj weak_alive_cycle(struct kgc_heap *h, kgc_obj o, void *ctx)
{
	struct cmark *cm = ctx;

	if ((char *)o >= cm->tams[region_index(h, o)] || cm_marked(cm, o))
		return o;
	return NULL;
}

/* Remark's ephemeron fixed point: a live key's value is marked and traced. */
static void eph_mark(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	mark_ref(h, ctx, *slot);
}

static void eph_drain(struct kgc_heap *h, void *ctx)
{
	mark_work(h, ctx, false, 0);
}

/* In a pause, or with no marker thread: the sweep and the rebuild at once. */
static void sweep_all(struct kgc_heap *h, struct cmark *cm)
{
	kgci_sweep_work(h, cm, false);
	kgci_mixed_rebuild_work(h, cm, false);
	cm->state = CM_SWEPT;
}

/*
 * Remark: marking finished in the pause. The marker declared it done, but
 * an assist may have handed back a subgraph it had no time to trace (its
 * stack goes back to the pool at the safepoint: a whole tree of binary
 * trees' depth 21, 60 ms of marking, in the pause). With a deadline
 * (until, not 0) remark gives up when marking takes longer and the
 * marker goes on concurrently (false: nothing else done); SATB stays on.
 */
static bool remark(struct kgc_heap *h, struct cmark *cm, uint64_t until)
{
	uint64_t marked = 0, t0 = kgci_now_ns();

	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		if (t->satb) {
			satb_process(h, cm, t->satb);
			t->satb->n = 0;
		}
	if (!mark_work(h, cm, false, until)) {
		cm->state = CM_MARKING;
		kgci_log_line(h, LOG_GC, "Remark deferred: marking not done in %.3fms, %zu gray left: "
			      "back to concurrent marking", (kgci_now_ns() - t0) / 1e6, cm->len);
		return false;
	}
	kgci_weak_ephemerons(h, weak_alive_cycle, eph_mark, eph_drain, cm);
	kgci_cm_assist_fold(h, cm);
	kgci_satb_set_active(h, 0);
	kgci_weak_process(h, weak_alive_cycle, cm);	/* before the chunk bits below */
	/* gaps of the last sweep still unused stay in use: marked, the sweep
	 * keeps them whole (and does not list them twice) */
	for (size_t k = 0; k < cm->nchunks; k++) {
		char *c = cm->chunks[k].start;

		/* gaps above TAMS (in regions that became old after the snapshot,
		 * e.g. failed evacuation) are not swept: no bit there */
		if (c < cm->tams[region_index(h, c)])
			mb_set(&cm->bits, c);
	}
	if (h->opt.verify)
		kgci_verify_marking(h);
	kgci_mixed_choose(h, cm);
	kgci_sweep_prepare(h, cm);
	for (uint32_t i = 0; i < h->nregions; i++)
		marked += cm->live[i];
	cm->marked_bytes = marked;
	cm->state = CM_SWEEPING;
	kgci_log_line(h, LOG_GC, "Remark: %lluM marked live in %u old/humongous regions, %u mixed candidates",
		 (unsigned long long)(marked >> 20), cm->nsweep, cm->ncand);
	if (!cm->started)
		sweep_all(h, cm);
	return true;
}

/* The cleanup pause; mixed candidates' remembered sets are complete now. */
static void cleanup(struct kgc_heap *h, struct cmark *cm)
{
	kgci_sweep_cleanup(h, cm);
	kgci_mixed_rebuild_done(h, cm);
	/* gaps inside the candidates left take no promotion from now on (until
	 * now they did: what lands there is marked, as any object promoted
	 * during the cycle, and its references are recorded) */
	if (cm->ncand)
		kgci_cm_chunks_drop_evacuated(h);
}

/*
 * Outside a full collection, a cycle past remark cannot be aborted
 * (kgci_cm_abortable): a pause that needs none running (collect.c: a young
 * pause relocating humongous objects) finishes it instead - the rest of
 * the sweep and the cleanup in the pause. True if it did.
 */
bool kgci_cm_finish_swept(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	if (cm->state != CM_SWEEPING && cm->state != CM_SWEPT)
		return false;
	if (cm->state == CM_SWEEPING)
		sweep_all(h, cm);
	cleanup(h, cm);
	kgci_log_line(h, LOG_GC, "Cycle finished in the pause (sweep and cleanup)");
	if (h->opt.verify)
		kgci_cm_verify_bits(h, "cycle finished in a pause");
	return true;
}

static const char *cycle_step(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	if (cm->state != CM_IDLE && kgci_policy_cycle_urgent(h)) {
		/*
		 * Old space runs out before the cycle would end: finish it in this
		 * pause (a degenerated cycle: longer pause, but no compaction)
		 * rather than fall back to a full collection.
		 */
		if (cm->state == CM_MARKING)
			mark_work(h, cm, false, 0);
		if (cm->state == CM_MARKING || cm->state == CM_REMARK_READY)
			remark(h, cm, 0);
		if (cm->state == CM_SWEEPING)
			sweep_all(h, cm);
		cleanup(h, cm);
		h->st.degenerated_cycles++;
		return "Degenerated Cycle";
	}
	switch (cm->state) {
	case CM_SWEPT:
		cleanup(h, cm);
		return "Cleanup";
	case CM_REMARK_READY:
		/* no deadline without a marker thread to go on */
		if (!remark(h, cm, cm->started ? kgci_now_ns() + kgci_policy_remark_ns(h) : 0))
			return NULL;
		return "Remark";
	case CM_IDLE:
		/* no new cycle while the last one's candidates or retained regions
		 * are being evacuated, unless old space runs short (candidates are
		 * dropped then; retained regions wait for the cycle's end) */
		if (!kgci_policy_start_mark(h, cm->cand_ready || h->retained_pending))
			return NULL;
		kgci_mixed_clear(h, cm);
		initial_mark(h, cm);
		return "Concurrent Start";
	default:
		return NULL;
	}
}

/* At the end of a young collection (pause, h->lock and cm->lock held). */
const char *kgci_cm_after_young(struct kgc_heap *h)
{
	const char *step;

	if (h->opt.verify)
		kgci_cm_verify_bits(h, "after young GC, before its cycle step");
	step = cycle_step(h);
	if (h->opt.verify && step)
		kgci_cm_verify_bits(h, step);
	return step;
}


/* ------------------------------------------------------------ queries */

/* A cycle runs (its remembered-set rebuild included, which ends by
 * cleanup): old objects must not move. */
static bool cm_active(struct kgc_heap *h)
{
	return h->cm->state != CM_IDLE;
}

/* In a pause: no cycle (sweep and remembered-set rebuild included) walks old regions (pinspace.c). */
bool kgci_cm_idle(struct kgc_heap *h)
{
	return !cm_active(h);
}

/*
 * Outside a full collection, may the cycle be aborted (kgci_cm_abort)?
 * Not once remark passed: the sweep has turned dead objects into fillers
 * that other dead objects, not swept yet, still refer to - only the rest
 * of the sweep (or a full collection's marking) makes those fillers too.
 */
bool kgci_cm_abortable(struct kgc_heap *h)
{
	int st = h->cm->state;

	return st == CM_IDLE || st == CM_MARKING || st == CM_REMARK_READY;
}

/* Young collections during a cycle: do promoted objects need marking? */
static bool cm_marking(struct kgc_heap *h)
{
	int st = h->cm->state;

	return st == CM_MARKING || st == CM_REMARK_READY || st == CM_SWEEPING;
}

/* A pause: how far marking got against how far old space grew (policy.c
 * decides from it how much allocating threads assist). */
void kgci_cm_progress(struct kgc_heap *h, struct mark_progress *mp)
{
	struct cmark *cm = h->cm;

	memset(mp, 0, sizeof(*mp));
	if (cm->state != CM_MARKING || !cm->started)
		return;
	mp->marking = true;
	mp->old0 = cm->old0;
	mp->old_now = kgci_old_used(h);
	mp->expect = cm->expect;
	for (uint32_t i = 0; i < h->nregions; i++)
		mp->marked += cm->live[i];
	mp->marked += kgci_cm_assist_marked(h, cm);
}

/* The marker thread marks or sweeps (with the remembered-set rebuild; not: waits for a pause). */
bool kgci_cm_marker_busy(struct kgc_heap *h)
{
	int st = h->cm->state;

	return h->cm->started && (st == CM_MARKING || st == CM_SWEEPING);
}

/*
 * Retained regions during marking. A young collection may evacuate an old
 * region that failed evacuation while pinned (retained) also while the
 * marker traces (CM_MARKING, CM_REMARK_READY), not while it sweeps and
 * rebuilds remembered sets (those walk old regions in place). Then:
 *  - mark stack and SATB entries into the region are roots of that young
 *    collection (kgci_cm_old_cset_refs): the objects they name were reachable at
 *    the snapshot, so they survive it and the entries follow them;
 *  - every copy out of the region is traced again (kgci_cm_push_gray): a copy
 *    above TAMS would otherwise never be scanned, and an object not yet
 *    scanned may be the only path to others the snapshot holds (any other
 *    path to it is a dirty card, an SATB entry or the mark stack, all of
 *    which the young collection updates);
 *  - the freed region is nothing below TAMS from then on (kgci_cm_region_evacuated).
 */
bool kgci_cm_retained_evac_ok(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	return cm->state == CM_IDLE || cm->state == CM_MARKING || cm->state == CM_REMARK_READY;
}


/* ------------------------------------------- the young pause (cm_young.h) */

void kgci_cm_young_begin(struct kgc_heap *h, struct cm_young *cy)
{
	cy->marking = cm_marking(h);
	if (h->cm->state == CM_SWEEPING || h->cm->state == CM_SWEPT)
		kgci_sweep_hand_over(h, h->cm);
	/* a mixed collection: old candidates of the last cycle join the cset */
	cy->nmixed = cm_active(h) ? 0 : kgci_mixed_select(h, &cy->mixed_live);
	cy->retained_ok = kgci_cm_retained_evac_ok(h);
	cy->idle = !cm_active(h);
}

void kgci_cm_young_cset(struct kgc_heap *h)
{
	kgci_cm_chunks_drop_evacuated(h);
}

/*
 * Only entries below TAMS: the marker ignores the others. An entry into a
 * region that was young at the snapshot (retained since) may name an object
 * that died and became part of a filler when the region failed evacuation:
 * it must not be followed.
 */
static inline void old_cset_ref(struct kgc_heap *h, kgc_obj *slot, slot_fn fn, void *ctx)
{
	kgc_obj o = *slot;
	struct region *r;

	if (!is_ref(h, o) || !in_heap(h, o))
		return;
	r = region_of(h, o);
	if (r->type == RT_OLD && (r->flags & RF_CSET) && (char *)o < h->cm->tams[region_index(h, o)])
		fn(h, slot, ctx);
}


struct old_cset_ctx { slot_fn fn; void *ctx; };

static void old_cset_entry(struct kgc_heap *h, kgc_obj *slot, void *arg)
{
	struct old_cset_ctx *c = arg;

	old_cset_ref(h, slot, c->fn, c->ctx);
}

void kgci_cm_young_roots(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	struct cmark *cm = h->cm;
	struct old_cset_ctx c = { fn, ctx };

	if (cm->state != CM_MARKING && cm->state != CM_REMARK_READY)
		return;
	for (size_t i = 0; i < cm->len; i++)
		old_cset_ref(h, &cm->stack[i], fn, ctx);
	kgci_cm_pool_each(h, cm, old_cset_entry, &c);
	kgci_satb_each(h, old_cset_entry, &c);
}

/* At the end of that young collection (the pause holds cm->lock): copies to trace. */
void kgci_cm_young_gray(struct kgc_heap *h, const kgc_obj *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cm_stack_push(h->cm, v[i]);
}

/*
 * Old region idx was evacuated and is free: nothing in it is below TAMS,
 * and no mark bit of this cycle may outlive it. The region is not swept
 * (its TAMS is its bottom at remark), so nothing else would clear them: a
 * later object at a stale bit's address would count as marked in the next
 * cycle, never be scanned, and what only it reaches would be swept.
 */
void kgci_cm_young_freed(struct kgc_heap *h, uint32_t idx)
{
	struct cmark *cm = h->cm;

	kgci_markbits_clear(&cm->bits, h->regions[idx].bottom, h->regions[idx].end);
	cm->tams[idx] = h->regions[idx].bottom;
	cm->live[idx] = 0;
	__atomic_store_n(&cm->inrefs[idx], 0, __ATOMIC_RELAXED);
	atomic_store_explicit(&cm->live_par[idx], 0, memory_order_relaxed);
}

/* A promoted object placed below TAMS (in a gap of the last sweep) before
 * its region is swept is live: mark it (parallel GC workers: atomic). Its
 * references need no tracing: it is either new since the snapshot or a
 * survivor whose references the initial mark took. */
void kgci_cm_young_promoted(struct kgc_heap *h, const void *p)
{
	struct cmark *cm = h->cm;
	uint32_t i = region_index(h, p);

	if ((const char *)p >= cm->tams[i])
		return;
	if (cm->state == CM_SWEEPING && cm->swept[i] != SW_NOT)
		return;	/* the sweep is past this region: its bits are clear */
	mb_set_atomic(&cm->bits, p);
}


/* --------------------------------------------------------- test hooks */

/* Test hook: while held, the marker thread does no work (a cycle started
 * meanwhile stays in CM_MARKING with its gray objects unscanned). */
void kgci_cm_test_hold(struct kgc_heap *h, bool on)
{
	struct cmark *cm = h->cm;

	kgci_cm_pause_begin(h);
	cm->held = on;
	kgci_cm_pause_end(h);
}

/* Test hook: the marker's belief that marking is done while gray objects
 * are left (an assist had them when the marker found its own work gone,
 * and hands them back at the next safepoint): CM_MARKING to CM_REMARK_READY. */
void kgci_cm_test_remark_ready(struct kgc_heap *h)
{
	kgci_cm_pause_begin(h);
	if (h->cm->state == CM_MARKING)
		h->cm->state = CM_REMARK_READY;
	kgci_cm_pause_end(h);
}

/* Test hook: the cycle's state as a name ("idle", "marking", ...); the
 * marker thread changes it too (marking done): read with it off the heap. */
const char *kgci_cm_test_state(struct kgc_heap *h)
{
	const char *name;

	kgci_cm_pause_begin(h);
	name = cm_state_name(h->cm);
	kgci_cm_pause_end(h);
	return name;
}

/* Test hook: bytes the last remark found marked (the marker's and assists'). */
uint64_t kgci_cm_test_marked_bytes(struct kgc_heap *h)
{
	return h->cm->marked_bytes;
}

/* Test hook: root regions of the cycle not scanned yet (rr_scan). */
uint32_t kgci_cm_test_rr_left(struct kgc_heap *h)
{
	uint32_t n;

	kgci_cm_pause_begin(h);
	n = h->cm->nrr - h->cm->rr_i;
	kgci_cm_pause_end(h);
	return n;
}

/* Test hook: mark bits set in region idx. */
size_t kgci_cm_test_bits(struct kgc_heap *h, uint32_t idx)
{
	const struct region *r = &h->regions[idx];

	return kgci_markbits_count(&h->cm->bits, r->bottom, r->end);
}
