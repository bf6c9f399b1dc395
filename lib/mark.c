/* SPDX-License-Identifier: MIT */
/*
 * mark.c - concurrent marking and sweeping of old space (snapshot at the
 * beginning, like G1's concurrent cycle; sweeping like CMS, so old space
 * needs no remembered sets) and, opt-in, G1's mixed collections of sparse
 * old regions with the card table as their remembered set.
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
 *                 regions, see below), the marker walks every old object
 *                 and dirties the card of each reference into a candidate
 *                 (after cleanup, so the gaps are in use meanwhile).
 *   mixed         young collections after the rebuild also evacuate a few
 *                 candidates each, most garbage first (G1's mixed
 *                 collections): every reference into a candidate from
 *                 another old region is on a dirty card (rebuild, then the
 *                 write barrier and the young GC's card rules keep it so),
 *                 so the card table serves as their remembered set. This
 *                 is what frees old regions the sweep leaves fragmented.
 * Until cleanup nothing is freed, so a dead object's references stay valid
 * and card scanning may treat it like a live one.
 *
 * The marker holds cm->lock while it works and gives it up within a few
 * microseconds when a collection asks (yield_req): every pause holds it,
 * so marker and pauses never overlap. Lock order: h->lock, cm->lock,
 * cm->satb_lock. A full collection aborts the cycle.
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "markbits.h"

#define SATB_CAP 1024		/* entries per buffer */
#define STEP_WORK 512		/* objects between checks for a yield request */

enum cm_state { CM_IDLE, CM_MARKING, CM_REMARK_READY, CM_SWEEPING, CM_SWEPT };
enum { SW_NOT = 0, SW_DONE = 1, SW_EMPTY = 2 };	/* sweep progress per region */

struct satb_buf {
	struct satb_buf *next;
	uint32_t n;
	kgc_obj e[SATB_CAP];
};

struct cmark {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stop;
	_Atomic int yield_req;
	int state;
	uint64_t *bits;			/* 1 bit per heap word */
	size_t bits_bytes;
	char **tams;			/* per region; == bottom: nothing to mark */
	size_t *live;			/* marked bytes per region */
	kgc_obj *stack;
	size_t len, cap;
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
	struct cand { size_t live; uint32_t idx; } *cand;	/* live: estimated */
	uint32_t ncand, ncand_cycle;	/* left; chosen at the last remark */
	bool rebuilding;		/* after cleanup: the marker rebuilds their cards */
	bool held;			/* test hook: the marker thread does no work */
	bool cand_ready;		/* cards rebuilt: candidates may be evacuated */
	uint32_t rb_i;			/* rebuild cursor: region, object */
	char *rb_p;
	char **rb_top;			/* per region: what the rebuild walks, [bottom, rb_top),
					 * taken at cleanup (mutators change types and tops) */
	/* cycle stats */
	uint64_t t_start, marked_bytes;
	uint64_t pace_ns0;		/* h->pace_ns at the cycle's start */
	uint64_t mark_cpu, sweep_cpu, rebuild_cpu;	/* marker thread CPU time this cycle */
	uint64_t cycles;
};

/* ------------------------------------------------------------- bitmap */

static inline size_t bit_of(struct kgc_heap *h, const void *p)
{
	return (size_t)((const char *)p - h->base) / WORD;
}
static inline bool cm_marked(struct cmark *cm, struct kgc_heap *h, const void *p)
{
	size_t b = bit_of(h, p);

	return cm->bits[b / 64] >> (b % 64) & 1;
}

static inline void cm_stack_push(struct cmark *cm, kgc_obj o)
{
	if (unlikely(cm->len == cm->cap))
		cm->stack = kgci_array_grow(cm->stack, &cm->cap, sizeof(*cm->stack), "concurrent mark stack");
	cm->stack[cm->len++] = o;
}

/* Mark o if it is an old object below TAMS; true if newly marked. */
static inline void mark_ref(struct kgc_heap *h, struct cmark *cm, kgc_obj o)
{
	uint32_t i;
	size_t b;
	uint64_t m;

	if (!o || !in_heap(h, o))
		return;
	i = region_index(h, o);
	if ((char *)o >= cm->tams[i])
		return;
	b = bit_of(h, o);
	m = 1ull << (b % 64);
	if (cm->bits[b / 64] & m)
		return;
	cm->bits[b / 64] |= m;
	cm_stack_push(cm, o);
}

static inline kgc_obj load_ref(kgc_obj *s)
{
	return __atomic_load_n(s, __ATOMIC_RELAXED);
}

/* Trace one marked object: its size counts as live, its references get marked. */
static void scan_obj(struct kgc_heap *h, struct cmark *cm, kgc_obj o)
{
	uint64_t hd = *obj_hdr(o);

	cm->live[region_index(h, o)] += obj_size_h(o, hd);
	switch (hdr_kind(hd)) {
	case KIND_INSTANCE: {
		const struct type_info *ti = type_get(h, hdr_type(hd));

		for (uint32_t i = 0; i < ti->nrefs; i++)
			mark_ref(h, cm, load_ref((kgc_obj *)((char *)o + ti->ref_offsets[i])));
		break;
	}
	case KIND_REF_ARRAY: {
		kgc_obj *s = kgc_array_data(o);
		size_t n = kgc_array_length(o);

		for (size_t i = 0; i < n; i++)
			mark_ref(h, cm, load_ref(&s[i]));
		break;
	}
	default:
		break;
	}
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

/* Take the buffers mutators handed over. */
static struct satb_buf *satb_take(struct cmark *cm)
{
	struct satb_buf *b;

	pthread_mutex_lock(&cm->satb_lock);
	b = cm->full;
	cm->full = NULL;
	pthread_mutex_unlock(&cm->satb_lock);
	return b;
}

static void satb_free_list(struct satb_buf *b)
{
	while (b) {
		struct satb_buf *n = b->next;

		free(b);
		b = n;
	}
}

/* ------------------------------------------------------ mutator side */

/* The SATB barrier's slow path: old (non-null) is about to be overwritten. */
__attribute__((visibility("default"))) void kgc__satb_slow(kgc_thread *t, kgc_obj old)
{
	struct satb_buf *b = t->satb;

	if (unlikely(!b || b->n == SATB_CAP)) {
		struct cmark *cm = t->heap->cm;
		struct satb_buf *nb = malloc(sizeof(*nb));

		if (!nb)
			kgci_fatal("concurrent mark: out of memory for an SATB buffer (thread '%s')", t->name);
		nb->n = 0;
		nb->next = NULL;
		if (b) {
			pthread_mutex_lock(&cm->satb_lock);
			b->next = cm->full;
			cm->full = b;
			pthread_mutex_unlock(&cm->satb_lock);
		}
		t->satb = b = nb;
	}
	b->e[b->n++] = old;
}

/* Detach: hand the thread's partial buffer over (h->lock held). */
void kgci_cm_thread_detach(struct kgc_thread *t)
{
	struct cmark *cm = t->heap->cm;
	struct satb_buf *b = t->satb;

	t->satb = NULL;
	if (!b)
		return;
	if (!cm || !b->n || !__atomic_load_n(&t->pub.satb_active, __ATOMIC_RELAXED)) {
		free(b);
		return;
	}
	pthread_mutex_lock(&cm->satb_lock);
	b->next = cm->full;
	cm->full = b;
	pthread_mutex_unlock(&cm->satb_lock);
}

static void set_satb_active(struct kgc_heap *h, uint32_t on)
{
	for (struct kgc_thread *t = h->threads; t; t = t->next)
		__atomic_store_n(&t->pub.satb_active, on, __ATOMIC_RELAXED);
	h->satb_active = on;
}

/* ---------------------------------------------------------- the marker */

/*
 * The marker gets off the heap when a pause wants it (yield_req) and off
 * the CPU as soon as a safepoint is requested (poll_word): on a small
 * machine it would otherwise delay the threads the safepoint waits for.
 */
static inline bool must_yield(struct kgc_heap *h, struct cmark *cm)
{
	return atomic_load_explicit(&cm->yield_req, memory_order_relaxed) ||
	       atomic_load_explicit(&h->poll_word, memory_order_relaxed);
}

/* Marking work until a yield request or no work; true when out of work. */
static bool mark_work(struct kgc_heap *h, struct cmark *cm, bool bounded)
{
	unsigned k = 0;

	for (;;) {
		while (cm->len) {
			scan_obj(h, cm, cm->stack[--cm->len]);
			if (bounded && (++k % STEP_WORK) == 0 && must_yield(h, cm))
				return false;
		}
		struct satb_buf *b = satb_take(cm);

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

static void chunk_add_to(struct gap **v, size_t *n, size_t *cap, size_t *bytes, struct gap c)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct gap *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return;		/* the gap just stays a filler */
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = c;
	*bytes += c.size;
}

static void chunk_add(struct cmark *cm, char *start, size_t size)
{
	chunk_add_to(&cm->swept_chunks, &cm->nswept, &cm->swept_cap, &cm->swept_bytes,
		     (struct gap){ start, size });
}

static void dead_run_end(struct kgc_heap *h, struct cmark *cm, struct region *r, char *end)
{
	size_t n;

	if (!cm->dead)
		return;
	n = (size_t)(end - cm->dead);
	kgci_obj_fill(cm->dead, n);
	kgci_bot_record(h, r, cm->dead, n);
	if (h->opt.poison && n > 16)
		memset(cm->dead + 16, 0xde, n - 16);
	/* retained and candidate regions are to be evacuated: keep them sparse */
	if (n >= CM_CHUNK_MIN && !r->retained && !r->candidate)
		chunk_add(cm, cm->dead, n);
	cm->dead = NULL;
}

static void clear_bits_range(struct kgc_heap *h, struct cmark *cm, char *lo, char *hi)
{
	size_t b = bit_of(h, lo), e = bit_of(h, hi);

	/* regions are aligned to far more than 64 words: whole bitmap words */
	memset(&cm->bits[b / 64], 0, ((e - b + 63) / 64) * sizeof(uint64_t));
}

/* Sweep until a yield request or done; true when every region is swept. */
static bool sweep_work(struct kgc_heap *h, struct cmark *cm, bool bounded)
{
	unsigned k = 0;

	while (cm->sweep_i < cm->nsweep) {
		uint32_t idx = cm->sweep[cm->sweep_i];
		struct region *r = &h->regions[idx];
		char *tams = cm->tams[idx];

		if (!cm->sweep_p) {
			cm->sweep_p = r->bottom;
			cm->sweep_live = 0;
			cm->dead = NULL;
		}
		if (r->type == RT_HUM_START) {
			bool dead = !cm_marked(cm, h, r->bottom);

			if (dead)
				cm->humdead[cm->nhumdead++] = idx;
			clear_bits_range(h, cm, r->bottom, r->bottom + WORD);
			/* dead stays dead until cleanup frees it (kgci_cm_obj_dead): its
			 * references may lead into fillers the sweep made */
			cm->swept[idx] = dead ? SW_EMPTY : SW_DONE;
			cm->sweep_p = NULL;
			cm->sweep_i++;
			continue;
		}
		while (cm->sweep_p < tams) {
			char *p = cm->sweep_p;
			size_t sz = obj_size(p);

			if (cm_marked(cm, h, p)) {
				dead_run_end(h, cm, r, p);
				cm->sweep_live += sz;
			} else if (!cm->dead) {
				cm->dead = p;
			}
			cm->sweep_p = p + sz;
			if (bounded && (++k % STEP_WORK) == 0 && must_yield(h, cm))
				return false;
		}
		if (cm->sweep_live == 0 && tams == r->top) {
			/* nothing live and nothing allocated since: free the region at cleanup */
			cm->dead = NULL;
			cm->empty[cm->nempty++] = idx;
			cm->swept[idx] = SW_EMPTY;
		} else {
			dead_run_end(h, cm, r, tams);
			cm->swept[idx] = SW_DONE;
		}
		clear_bits_range(h, cm, r->bottom, tams);
		cm->sweep_p = NULL;
		cm->sweep_i++;
	}
	return true;
}

/* ------------------------------------------------------------ rebuild */

static void rb_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = load_ref(slot);
	struct region *tr;

	if (!o || !in_heap(h, o))
		return;
	tr = region_of(h, o);
	if (tr->candidate && tr != region_of(h, slot))
		__atomic_store_n(card_for(h, slot), CARD_DIRTY, __ATOMIC_RELAXED);
}

/*
 * Dirty the card of every reference into a candidate from another old or
 * humongous region; true when done. Runs between pauses only, when every
 * old region is parsable up to its top; pauses may add objects (at a top,
 * or in a gap: the cursor is at an object or gap start either way, and the
 * young GC cards their references into candidates) but move or free
 * nothing old while it runs (kgci_cm_active), so the cursor stays valid.
 * References stored meanwhile are carded by the write barrier.
 */
static bool rebuild_work(struct kgc_heap *h, struct cmark *cm, bool bounded)
{
	unsigned k = 0;

	while (cm->rb_i < h->nregions) {
		struct region *r = &h->regions[cm->rb_i];
		char *lim = cm->rb_top[cm->rb_i];

		if (lim == r->bottom) {
			cm->rb_i++;
			continue;
		}
		if (!cm->rb_p)
			cm->rb_p = r->bottom;
		while (cm->rb_p < lim) {
			char *p = cm->rb_p;
			uint64_t hd = __atomic_load_n(obj_hdr(p), __ATOMIC_RELAXED);

			if (hdr_kind(hd) != KIND_FILLER)
				kgci_obj_iterate_refs(h, (kgc_obj)p, rb_slot, NULL);
			cm->rb_p = p + obj_size_h(p, hd);
			if (bounded && (++k % STEP_WORK) == 0 && must_yield(h, cm))
				return false;
		}
		cm->rb_p = NULL;
		cm->rb_i++;
	}
	return true;
}

static void rebuild_done(struct kgc_heap *h, struct cmark *cm)
{
	cm->rebuilding = false;
	cm->cand_ready = true;
	kgci_log_line(h, LOG_GC, "Rebuild for mixed collections: %u candidates (marker cpu %.1fms)",
		 cm->ncand, cm->rebuild_cpu / 1e6);
}

/* Forget the candidates (their cards stay dirty until scanned). */
static void cand_clear(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++)
		h->regions[i].candidate = 0;
	cm->ncand = 0;
	cm->rebuilding = cm->cand_ready = false;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->live < y->live ? -1 : x->live > y->live ? 1 : (int)x->idx - (int)y->idx;
}

/* At remark (marked bytes per region known): choose the candidates. */
static void cand_select(struct kgc_heap *h, struct cmark *cm)
{
	uint32_t n = 0;
	size_t reclaim = 0;

	cand_clear(h, cm);
	cm->rb_i = 0;
	cm->rb_p = NULL;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];
		size_t live = cm->live[i] + (size_t)(r->top - cm->tams[i]);

		if (r->type != RT_OLD || r->retained || (r->flags & RF_PRETOUCH) ||
		    cm->tams[i] == r->bottom || !cm->live[i])
			continue;	/* new since the snapshot, or freed at cleanup */
		if (kgci_policy_mixed_candidate(h, live)) {
			cm->cand[n++] = (struct cand){ live, i };
			reclaim += h->region_size - live;
		}
	}
	if (!kgci_policy_mixed_worth(h, reclaim))
		n = 0;
	qsort(cm->cand, n, sizeof(*cm->cand), cand_cmp);
	for (uint32_t j = 0; j < n; j++)
		h->regions[cm->cand[j].idx].candidate = 1;
	cm->ncand = cm->ncand_cycle = n;
	/* gaps of earlier sweeps inside candidates are not promoted into any more */
	kgci_cm_chunks_drop_evacuated(h);
}

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
				     (cm->state != CM_MARKING && cm->state != CM_SWEEPING &&
				      !cm->rebuilding))) {
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
				mark_work(h, cm, true);
		}
		if (cm->stop)
			break;
		if (cm->state == CM_MARKING) {
			uint64_t c0 = thread_cpu_ns();

			if (mark_work(h, cm, true)) {
				cm->state = CM_REMARK_READY;
				/* the rest waits for a pause: no use slowing allocation */
				atomic_store_explicit(&h->pace_permille, 0, memory_order_relaxed);
			}
			cm->mark_cpu += thread_cpu_ns() - c0;
		} else if (cm->state == CM_SWEEPING) {
			uint64_t c0 = thread_cpu_ns();

			if (sweep_work(h, cm, true)) {
				cm->state = CM_SWEPT;
				atomic_store_explicit(&h->pace_permille, 0, memory_order_relaxed);
			}
			cm->sweep_cpu += thread_cpu_ns() - c0;
		} else {
			uint64_t c0 = thread_cpu_ns();

			if (rebuild_work(h, cm, true))
				rebuild_done(h, cm);
			cm->rebuild_cpu += thread_cpu_ns() - c0;
		}
	}
	pthread_mutex_unlock(&cm->lock);
	return NULL;
}

/* ------------------------------------------------------------- pauses */

/* No cycle: nothing anywhere is below TAMS. */
static void tams_reset(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++)
		cm->tams[i] = h->regions[i].bottom;
}

int kgci_cm_init(struct kgc_heap *h)
{
	struct cmark *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return -ENOMEM;
	cm->bits_bytes = (((size_t)h->nregions << h->region_shift) / WORD + 7) / 8;
	cm->bits = kgci_os_alloc(cm->bits_bytes);
	cm->tams = calloc(h->nregions, sizeof(*cm->tams));
	cm->live = calloc(h->nregions, sizeof(*cm->live));
	cm->sweep = calloc(h->nregions, sizeof(uint32_t));
	cm->empty = calloc(h->nregions, sizeof(uint32_t));
	cm->humdead = calloc(h->nregions, sizeof(uint32_t));
	cm->swept = calloc(h->nregions, 1);
	cm->cand = calloc(h->nregions, sizeof(*cm->cand));
	cm->rb_top = calloc(h->nregions, sizeof(*cm->rb_top));
	if (!cm->bits || !cm->tams || !cm->live || !cm->sweep || !cm->empty || !cm->humdead ||
	    !cm->swept || !cm->cand || !cm->rb_top) {
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
	if (cm->bits)
		kgci_os_free(cm->bits, cm->bits_bytes);
	satb_free_list(cm->full);
	free(cm->tams);
	free(cm->live);
	free(cm->stack);
	free(cm->sweep);
	free(cm->empty);
	free(cm->humdead);
	free(cm->swept);
	free(cm->cand);
	free(cm->rb_top);
	free(cm->swept_chunks);
	free(cm->chunks);
	if (cm->started || cm->bits) {
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

static void drop_satb(struct kgc_heap *h, struct cmark *cm)
{
	for (struct kgc_thread *t = h->threads; t; t = t->next)
		if (t->satb)
			t->satb->n = 0;
	satb_free_list(satb_take(cm));
}

/* Full collection: forget the cycle (and the chunks: compaction moves everything). */
void kgci_cm_abort(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;

	if (cm->state != CM_IDLE) {
		memset(cm->bits, 0, cm->bits_bytes);
		set_satb_active(h, 0);
		drop_satb(h, cm);
		cm->len = 0;
		tams_reset(h, cm);
		cm->nswept = cm->swept_bytes = 0;
		kgci_log_line(h, LOG_GC, "Concurrent Mark Abort");
		cm->state = CM_IDLE;
	}
	/* compaction moves old objects: the candidates are gone */
	cand_clear(h, cm);
	cm->nchunks = 0;
	h->chunk_bytes = 0;
	if (h->opt.verify)
		kgci_cm_verify_bits(h, "cycle aborted");
}

static const char *cycle_step(struct kgc_heap *h);

static void initial_mark(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		cm->live[i] = 0;
		cm->tams[i] = (r->type == RT_OLD || r->type == RT_HUM_START) ? r->top : r->bottom;
	}
	/* gaps of the last sweep stay in use: promotion into them is marked
	 * black (kgci_cm_mark_black) until remark */
	cm->len = 0;
	kgci_roots_iterate(h, root_mark, cm);
	kgci_roots_iterate_critical(h, root_mark, cm);
	/* young objects that existed at the snapshot: the marker never visits young space */
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type != RT_SURVIVOR && r->type != RT_EDEN)
			continue;
		for (char *p = r->bottom; p < r->top; p += obj_size(p))
			kgci_obj_iterate_refs(h, (kgc_obj)p, root_mark, cm);
	}
	set_satb_active(h, 1);
	cm->t_start = kgci_now_ns();
	cm->pace_ns0 = atomic_load_explicit(&h->pace_ns, memory_order_relaxed);
	cm->mark_cpu = cm->sweep_cpu = 0;
	cm->state = CM_MARKING;
	if (!cm->started) {
		if (pthread_create(&cm->thread, NULL, marker_main, h) == 0) {
			pthread_setname_np(cm->thread, "kgc-marker");	/* top, perf, gdb */
			cm->started = true;
		} else {
			/* no marker thread: finish marking in this pause */
			mark_work(h, cm, false);
			cm->state = CM_REMARK_READY;
		}
	}
	kgci_log_line(h, LOG_GC, "Concurrent Mark Start (%zu gray from roots and survivors)", cm->len);
}

/* Weak cells at remark: an old or humongous referent below TAMS is dead
 * unless marked; everything else is not this cycle's to decide. */
static kgc_obj weak_alive_cycle(struct kgc_heap *h, kgc_obj o, void *ctx)
{
	struct cmark *cm = ctx;

	if ((char *)o >= cm->tams[region_index(h, o)] || cm_marked(cm, h, o))
		return o;
	return NULL;
}

static void remark(struct kgc_heap *h, struct cmark *cm)
{
	uint64_t marked = 0;

	for (struct kgc_thread *t = h->threads; t; t = t->next)
		if (t->satb) {
			satb_process(h, cm, t->satb);
			t->satb->n = 0;
		}
	mark_work(h, cm, false);
	set_satb_active(h, 0);
	kgci_weak_process(h, weak_alive_cycle, cm);	/* before the chunk bits below */
	/* gaps of the last sweep still unused stay in use: marked, the sweep
	 * keeps them whole (and does not list them twice) */
	for (size_t k = 0; k < cm->nchunks; k++) {
		char *c = cm->chunks[k].start;
		size_t b = bit_of(h, c);

		/* gaps above TAMS (in regions that became old after the snapshot,
		 * e.g. failed evacuation) are not swept: no bit there */
		if (c < cm->tams[region_index(h, c)])
			cm->bits[b / 64] |= 1ull << (b % 64);
	}
	if (h->opt.verify)
		kgci_verify_marking(h);
	cand_select(h, cm);
	cm->nsweep = cm->sweep_i = cm->nempty = cm->nhumdead = 0;
	cm->sweep_p = cm->dead = NULL;
	cm->nswept = cm->swept_bytes = 0;
	memset(cm->swept, SW_NOT, h->nregions);
	for (uint32_t i = 0; i < h->nregions; i++) {
		marked += cm->live[i];
		if (cm->tams[i] > h->regions[i].bottom)
			cm->sweep[cm->nsweep++] = i;
	}
	cm->marked_bytes = marked;
	cm->state = CM_SWEEPING;
	kgci_log_line(h, LOG_GC, "Remark: %lluM marked live in %u old/humongous regions, %u mixed candidates",
		 (unsigned long long)(marked >> 20), cm->nsweep, cm->ncand);
	if (!cm->started) {
		sweep_work(h, cm, false);
		cm->state = CM_SWEPT;
	}
}

static void cleanup(struct kgc_heap *h, struct cmark *cm)
{
	uint32_t nfreed = 0, nhum = 0;
	size_t freed = 0;

	for (uint32_t k = 0; k < cm->nempty; k++) {
		struct region *r = &h->regions[cm->empty[k]];

		if (r->type != RT_OLD || (r->flags & (RF_PINNED | RF_KPINNED)) ||
		    cm->tams[cm->empty[k]] != r->top) {
			/* pinned meanwhile (or changed): keep it parsable, sweep it next cycle */
			kgci_obj_fill(r->bottom, (size_t)(r->top - r->bottom));
			kgci_bot_record(h, r, r->bottom, (size_t)(r->top - r->bottom));
			continue;
		}
		freed += (size_t)(r->top - r->bottom);
		kgci_region_free(h, r);
		nfreed++;
	}
	for (uint32_t k = 0; k < cm->nhumdead; k++) {
		uint32_t s = cm->humdead[k];
		struct region *r = &h->regions[s];
		uint32_t n = r->hum_count;
		bool pinned = false;

		if (r->type != RT_HUM_START)
			continue;
		for (uint32_t j = s; j < s + n; j++)
			pinned |= (h->regions[j].flags & (RF_PINNED | RF_KPINNED)) || kgci_region_pinned_now(h, j);
		if (pinned)
			continue;
		for (uint32_t j = s; j < s + n; j++) {
			freed += (size_t)(h->regions[j].top - h->regions[j].bottom);
			kgci_region_free(h, &h->regions[j]);
		}
		nhum++;
	}
	tams_reset(h, cm);
	/* hand the new gaps to promotion, after the old ones still unused */
	for (size_t k = 0; k < cm->nswept; k++)
		chunk_add_to(&cm->chunks, &cm->nchunks, &cm->chunks_cap, &h->chunk_bytes,
			     cm->swept_chunks[k]);
	free(cm->swept_chunks);
	cm->swept_chunks = NULL;
	cm->nswept = cm->swept_cap = cm->swept_bytes = 0;
	cm->cycles++;
	if (cm->ncand) {
		/* old and humongous regions as they are now: regions that become
		 * old later (a mutator's humongous allocation) hold no reference
		 * into a candidate that the write barrier did not card */
		for (uint32_t i = 0; i < h->nregions; i++) {
			struct region *r = &h->regions[i];

			cm->rb_top[i] = r->type == RT_OLD || r->type == RT_HUM_START ? r->top : r->bottom;
		}
		cm->rebuilding = true;
		cm->rebuild_cpu = 0;
		if (!cm->started) {
			rebuild_work(h, cm, false);
			rebuild_done(h, cm);
		}
	}
	h->st.bytes_freed += freed;
	h->st.concurrent_cycles = cm->cycles;
	kgci_log_line(h, LOG_GC, "Concurrent Cycle %.3fms (marker cpu: mark %.1fms, sweep %.1fms; "
		 "allocation paced %.1fms): "
		 "%lluM marked live, freed %u regions + %u humongous (%zuM), %zuM reusable in %zu gaps, "
		 "%u mixed candidates",
		 (kgci_now_ns() - cm->t_start) / 1e6, cm->mark_cpu / 1e6, cm->sweep_cpu / 1e6,
		 (atomic_load_explicit(&h->pace_ns, memory_order_relaxed) - cm->pace_ns0) / 1e6,
		 (unsigned long long)(cm->marked_bytes >> 20), nfreed, nhum,
		 freed >> 20, h->chunk_bytes >> 20, cm->nchunks, cm->ncand);
	cm->state = CM_IDLE;
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
			mark_work(h, cm, false);
		if (cm->state == CM_MARKING || cm->state == CM_REMARK_READY)
			remark(h, cm);
		if (cm->state == CM_SWEEPING) {
			sweep_work(h, cm, false);
			cm->state = CM_SWEPT;
		}
		cleanup(h, cm);
		h->st.degenerated_cycles++;
		return "Degenerated Cycle";
	}
	switch (cm->state) {
	case CM_SWEPT:
		cleanup(h, cm);
		return "Cleanup";
	case CM_REMARK_READY:
		remark(h, cm);
		return "Remark";
	case CM_IDLE:
		/* no new cycle while the last one's candidates or retained regions
		 * are being evacuated, unless old space runs short (candidates are
		 * dropped then; retained regions wait for the cycle's end) */
		if (!kgci_policy_start_mark(h, cm->rebuilding || cm->cand_ready || h->retained_pending))
			return NULL;
		cand_clear(h, cm);
		initial_mark(h, cm);
		return "Concurrent Start";
	default:
		return NULL;
	}
}

/* A cycle or its rebuild runs: old objects must not move. */
bool kgci_cm_active(struct kgc_heap *h)
{
	return h->cm->state != CM_IDLE || h->cm->rebuilding;
}

/* Young collections during a cycle: do promoted objects need kgci_cm_mark_black? */
bool kgci_cm_marking(struct kgc_heap *h)
{
	int st = h->cm->state;

	return st == CM_MARKING || st == CM_REMARK_READY || st == CM_SWEEPING;
}

/* The marker thread marks or sweeps (not: waits for a pause, rebuilds cards). */
bool kgci_cm_marker_busy(struct kgc_heap *h)
{
	int st = h->cm->state;

	return h->cm->started && (st == CM_MARKING || st == CM_SWEEPING);
}

/*
 * Retained regions during marking. A young collection may evacuate an old
 * region that failed evacuation while pinned (retained) also while the
 * marker traces (CM_MARKING, CM_REMARK_READY), not while it sweeps or
 * rebuilds cards (those walk old regions in place). Then:
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

	if (cm->rebuilding)
		return false;
	return cm->state == CM_IDLE || cm->state == CM_MARKING || cm->state == CM_REMARK_READY;
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

	if (!o || !in_heap(h, o))
		return;
	r = region_of(h, o);
	if (r->type == RT_OLD && (r->flags & RF_CSET) && (char *)o < h->cm->tams[region_index(h, o)])
		fn(h, slot, ctx);
}

void kgci_cm_old_cset_refs(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	struct cmark *cm = h->cm;

	if (cm->state != CM_MARKING && cm->state != CM_REMARK_READY)
		return;
	for (size_t i = 0; i < cm->len; i++)
		old_cset_ref(h, &cm->stack[i], fn, ctx);
	pthread_mutex_lock(&cm->satb_lock);
	for (struct satb_buf *b = cm->full; b; b = b->next)
		for (uint32_t i = 0; i < b->n; i++)
			old_cset_ref(h, &b->e[i], fn, ctx);
	pthread_mutex_unlock(&cm->satb_lock);
	for (struct kgc_thread *t = h->threads; t; t = t->next)
		if (t->satb)
			for (uint32_t i = 0; i < t->satb->n; i++)
				old_cset_ref(h, &t->satb->e[i], fn, ctx);
}

/* At the end of that young collection (the pause holds cm->lock): copies to trace. */
void kgci_cm_push_gray(struct kgc_heap *h, const kgc_obj *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cm_stack_push(h->cm, v[i]);
}

/* Test hook: while held, the marker thread does no work (a cycle started
 * meanwhile stays in CM_MARKING with its gray objects unscanned). */
void kgci_cm_test_hold(struct kgc_heap *h, bool on)
{
	struct cmark *cm = h->cm;

	kgci_cm_pause_begin(h);
	cm->held = on;
	kgci_cm_pause_end(h);
}

/* Test hook: the cycle's state as a name ("idle", "marking", ...). */
const char *kgci_cm_test_state(struct kgc_heap *h)
{
	static const char *const names[] = { "idle", "marking", "remark-ready", "sweeping", "swept" };

	return names[h->cm->state];
}

/* Test hook: mark bits set in region idx. */
size_t kgci_cm_test_bits(struct kgc_heap *h, uint32_t idx)
{
	struct cmark *cm = h->cm;
	const struct region *r = &h->regions[idx];
	size_t b = bit_of(h, r->bottom) / 64, e = bit_of(h, r->end) / 64, n = 0;

	for (; b < e; b++)
		n += (size_t)__builtin_popcountll(cm->bits[b]);
	return n;
}

/*
 * Old region idx was evacuated and is free: nothing in it is below TAMS,
 * and no mark bit of this cycle may outlive it. The region is not swept
 * (its TAMS is its bottom at remark), so nothing else would clear them: a
 * later object at a stale bit's address would count as marked in the next
 * cycle, never be scanned, and what only it reaches would be swept.
 */
void kgci_cm_region_evacuated(struct kgc_heap *h, uint32_t idx)
{
	struct cmark *cm = h->cm;

	clear_bits_range(h, cm, h->regions[idx].bottom, h->regions[idx].end);
	cm->tams[idx] = h->regions[idx].bottom;
	cm->live[idx] = 0;
}

/* A promoted object placed below TAMS (in a gap of the last sweep) before
 * its region is swept is live: mark it (parallel GC workers: atomic). Its
 * references need no tracing: it is either new since the snapshot or a
 * survivor whose references the initial mark took. */
void kgci_cm_mark_black(struct kgc_heap *h, const void *p)
{
	struct cmark *cm = h->cm;
	uint32_t i = region_index(h, p);
	size_t b;

	if ((const char *)p >= cm->tams[i])
		return;
	if (cm->state == CM_SWEEPING && cm->swept[i] != SW_NOT)
		return;	/* the sweep is past this region: its bits are clear */
	b = bit_of(h, p);
	__atomic_fetch_or(&cm->bits[b / 64], 1ull << (b % 64), __ATOMIC_RELAXED);
}

/*
 * Between remark and cleanup: is p an object the sweep has (or will have)
 * found dead? Its references may point into fillers made of other dead
 * objects, so the verifier must not follow them.
 */
bool kgci_cm_obj_dead(struct kgc_heap *h, const void *p)
{
	struct cmark *cm = h->cm;
	uint32_t i;

	if (cm->state != CM_SWEEPING && cm->state != CM_SWEPT)
		return false;
	i = region_index(h, p);
	if ((const char *)p >= cm->tams[i] || cm->swept[i] == SW_DONE)
		return false;
	if (cm->swept[i] == SW_EMPTY)
		return true;
	if (cm->sweep_i < cm->nsweep && cm->sweep[cm->sweep_i] == i && cm->sweep_p &&
	    (const char *)p < cm->sweep_p)
		return cm->dead && (const char *)p >= cm->dead;	/* in the open dead run */
	return !cm_marked(cm, h, p);
}

/* Young collection: take a gap of at least min bytes for old-space promotion. */
bool kgci_cm_chunk_take(struct kgc_heap *h, size_t min, struct gap *out)
{
	struct cmark *cm = h->cm;

	while (cm->nchunks) {
		struct gap c = cm->chunks[cm->nchunks - 1];

		if (c.size < min)
			return false;	/* keep it for smaller objects */
		cm->nchunks--;
		h->chunk_bytes -= c.size;
		/* the kernel may hold pages of dead objects (a registered buffer the
		 * runtime dropped): never reuse space in a kernel-pinned region */
		if (region_of(h, c.start)->flags & RF_KPINNED)
			continue;
		*out = c;
		return true;
	}
	return false;
}

/* Young collection: a gap to promote into (taken but not used, or known dead). */
void kgci_cm_chunk_give_back(struct kgc_heap *h, struct gap g)
{
	struct cmark *cm = h->cm;

	chunk_add_to(&cm->chunks, &cm->nchunks, &cm->chunks_cap, &h->chunk_bytes, g);
}

/* Forget the gaps in regions to be evacuated and freed: in the collection
 * set (RF_CSET) or mixed candidates. */
void kgci_cm_chunks_drop_evacuated(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;
	size_t k = 0;

	for (size_t i = 0; i < cm->nchunks; i++) {
		const struct region *r = region_of(h, cm->chunks[i].start);

		if ((r->flags & RF_CSET) || r->candidate) {
			h->chunk_bytes -= cm->chunks[i].size;
			continue;
		}
		cm->chunks[k++] = cm->chunks[i];
	}
	cm->nchunks = k;
}

/*
 * Young collection, no cycle running: put the next candidates (most garbage
 * first) in the collection set: the policy's minimum count, then more
 * within its live byte budget and maximum. Pinned ones wait for a later
 * collection. Returns how many.
 */
uint32_t kgci_cm_mixed_select(struct kgc_heap *h, size_t *live_bytes)
{
	struct cmark *cm = h->cm;
	uint32_t min, max, n = 0, w = 0;
	size_t budget, bytes = 0;

	*live_bytes = 0;
	if (!cm->cand_ready)
		return 0;
	kgci_policy_mixed_limits(h, cm->ncand_cycle, &min, &max, &budget);
	for (uint32_t j = 0; j < cm->ncand; j++) {
		uint32_t idx = cm->cand[j].idx;
		struct region *r = &h->regions[idx];

		if (!r->candidate || r->type != RT_OLD)
			continue;	/* no longer a candidate */
		if ((n < min || (n < max && bytes + cm->cand[j].live <= budget)) &&
		    !(r->flags & (RF_PINNED | RF_KPINNED))) {
			r->flags |= RF_CSET;
			r->candidate = 0;
			bytes += cm->cand[j].live;
			n++;
			continue;
		}
		cm->cand[w++] = cm->cand[j];
	}
	cm->ncand = w;
	if (!w || !n)
		cand_clear(h, cm);	/* done, or only pinned ones left: the next cycle chooses anew */
	*live_bytes = bytes;
	return n;
}

/* Verifier: are references into candidates all on dirty cards by now? */
bool kgci_cm_candidates_tracked(struct kgc_heap *h)
{
	return h->cm->cand_ready;
}

/*
 * KGC_VERIFY, at every phase change of a cycle (every young pause's cycle
 * step, and after an abort): TAMS lies in [bottom, top] of an old or
 * humongous start region and is the bottom of every other region; no mark
 * bit lies at or above TAMS, none in a region the sweep is done with, and
 * none at all between cycles (so each initial mark starts from a clear
 * bitmap: a stale bit would hide an object from the next cycle).
 */
void kgci_cm_verify_bits(struct kgc_heap *h, const char *when)
{
	struct cmark *cm = h->cm;

	for (uint32_t i = 0; i < h->nregions; i++) {
		const struct region *r = &h->regions[i];
		const char *tams = cm->tams[i], *from = tams;
		size_t b, e;

		if (tams < r->bottom || tams > r->end ||
		    (tams > r->bottom && r->type != RT_OLD && r->type != RT_HUM_START) ||
		    (r->type == RT_OLD && tams > r->top))
			kgci_fatal("verify (%s, cycle %s): region %u (%s) has TAMS at +%#zx (top +%#zx)", when,
			      kgci_cm_test_state(h), i, kgci_region_type_name(r->type),
			      (size_t)(tams - r->bottom), (size_t)(r->top - r->bottom));
		if (cm->state == CM_IDLE || (cm->state >= CM_SWEEPING && cm->swept[i] != SW_NOT))
			from = r->bottom;
		b = bit_of(h, from);
		e = bit_of(h, r->end);
		for (; b < e; b++) {
			if (b % 64 == 0 && b + 64 <= e && !cm->bits[b / 64]) {
				b += 63;
				continue;
			}
			if (cm->bits[b / 64] >> (b % 64) & 1)
				kgci_fatal("verify (%s, cycle %s): stale mark bit at %p in region %u (%s), "
				      "TAMS +%#zx: nothing there may be marked", when, kgci_cm_test_state(h),
				      (void *)(h->base + b * WORD), i, kgci_region_type_name(r->type),
				      (size_t)(tams - r->bottom));
		}
	}
}

/* KGC_VERIFY at remark: every object reachable from the roots that lies
 * below TAMS in an old or humongous region is marked (uses h->mark). */
struct vm_ctx { struct kgc_heap *h; kgc_obj *st; size_t len, cap; };

static void vm_visit(struct kgc_heap *h, kgc_obj *slot, void *arg)
{
	struct vm_ctx *v = arg;
	kgc_obj o = *slot;

	if (!o || !mb_set(&h->mark, o))
		return;
	if (v->len == v->cap)
		v->st = kgci_array_grow(v->st, &v->cap, sizeof(*v->st), "verify (remark) stack");
	v->st[v->len++] = o;
}

void kgci_verify_marking(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;
	struct vm_ctx v = { .h = h };
	size_t n = 0;

	kgci_markbits_clear_all(&h->mark);
	kgci_roots_iterate(h, vm_visit, &v);
	kgci_roots_iterate_critical(h, vm_visit, &v);
	while (v.len) {
		kgc_obj o = v.st[--v.len];
		uint32_t i = region_index(h, o);

		n++;
		if ((char *)o < cm->tams[i] && !cm_marked(cm, h, o))
			kgci_fatal("verify (remark): reachable object %p in region %u (%s) below TAMS is not marked",
			      (void *)o, i, kgci_region_type_name(h->regions[i].type));
		kgci_obj_iterate_refs(h, o, vm_visit, &v);
	}
	free(v.st);
	kgci_markbits_clear_all(&h->mark);
	kgci_log_line(h, LOG_HEAP, "verify (remark): %zu reachable objects, marking complete", n);
}
