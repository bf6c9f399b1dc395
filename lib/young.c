/* SPDX-License-Identifier: MIT */
/*
 * young.c - stop-the-world evacuation of eden and survivor regions.
 *
 * Roots (frames, handles, open critical arrays) and the dirty cards of old
 * and humongous regions are processed; every reachable young object is
 * copied (work stack, per-destination allocation regions) to a survivor
 * region, or to an old one once its age reaches the tenuring threshold.
 *
 * Evacuation failure: a region that is pinned (critical sections, or the
 * kernel via PIN_QUERY) is not evacuated at all; when to-space runs out an
 * object is "self-forwarded" in place. Such objects are marked in their
 * header (tag 10), scanned like copied ones, and their region becomes old;
 * unmarked objects in it become fillers.
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

/*
 * Parallel evacuation: the requesting thread is worker 0, KGC_GC_THREADS-1
 * pool threads join it. Each worker has a work stack, survivor and old
 * PLABs and its own counters; objects are claimed by a CAS on the header
 * (copy first, then install the forwarding pointer; the loser retracts its
 * copy). Old-region card scanning is split by claiming regions. Idle
 * workers take work that busy ones donate to a shared queue.
 */
#define PLAB_SIZE (32 * 1024)
#define DONATE_MIN 2

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
	uint64_t cpu_cards, cpu_evac;	/* CPU ns in phase A and B (thread clock) */
	size_t age_bytes[HDR_AGE_MAX + 1];
	uint32_t tospace_regions;
	kgc_obj *gray;			/* copies out of old regions during marking */
	size_t ngray, gray_cap;
};

struct ygc {
	struct kgc_heap *h;
	unsigned tenure, nworkers;
	uint32_t surv_limit;
	bool surv_full, old_full, inject;
	pthread_mutex_t lock;		/* region allocation and the shared queue */
	pthread_cond_t cond;
	kgc_obj *q;
	size_t qlen, qcap;
	unsigned idle;
	_Atomic unsigned idle_hint;
	bool done;
	_Atomic uint32_t card_next;
	unsigned cards_done;		/* workers past the card scan (y->lock) */
	bool use_gaps;			/* swept gaps may take promoted objects */
	bool black;			/* concurrent marking: promoted objects are marked */
	bool old_cset;			/* old (retained) regions in the cset during marking */
	uint32_t *old_list, nold;
	struct yworker *w;
	struct young_facts *facts;	/* what the policy learns (collect.c hands it on) */
};

static void push(struct yworker *w, kgc_obj o)
{
	if (unlikely(w->len == w->cap))
		w->stack = kgci_array_grow(w->stack, &w->cap, sizeof(*w->stack), "young GC work stack");
	w->stack[w->len++] = o;
}

/* y->lock held: carve [min, want] bytes from the current to-space region. */
static char *region_carve(struct yworker *w, size_t min, size_t want, bool old, size_t *got)
{
	struct ygc *y = w->y;
	struct kgc_heap *h = y->h;
	long *cur = old ? &h->old_cur : &h->surv_cur;
	struct region *r;
	long idx;

	if (*cur >= 0) {
		r = &h->regions[*cur];
		if ((size_t)(r->end - r->top) >= min)
			goto carve;
	}
	if (y->inject || (old ? y->old_full : __atomic_load_n(&y->surv_full, __ATOMIC_RELAXED)))
		return NULL;
	if (!old && h->surv_regions >= y->surv_limit) {
		__atomic_store_n(&y->surv_full, true, __ATOMIC_RELAXED);
		return NULL;
	}
	idx = kgci_region_alloc_free(h, old ? RT_OLD : RT_SURVIVOR);
	if (idx < 0) {
		__atomic_store_n(&y->surv_full, true, __ATOMIC_RELAXED);
		y->old_full = true;
		return NULL;
	}
	if (*cur >= 0) {
		/* the rest of the previous region stays unused: keep it parsable */
		struct region *pr = &h->regions[*cur];

		if (pr->top < pr->end) {
			kgci_obj_fill(pr->top, (size_t)(pr->end - pr->top));
			if (old)
				kgci_bot_record(h, pr, pr->top, (size_t)(pr->end - pr->top));
			pr->top = pr->end;
		}
	}
	r = &h->regions[idx];
	r->flags |= RF_GC_ALLOC;
	w->tospace_regions++;
	if (!old)
		h->surv_regions++;
	*cur = idx;
carve:
	if (want > (size_t)(r->end - r->top))
		want = (size_t)(r->end - r->top);
	*got = want;
	r->top += want;
	return r->top - want;
}

static void plab_retire(struct yworker *w, int k)
{
	char *p = w->plab_top[k], *e = w->plab_end[k];

	if (p && p < e) {
		kgci_obj_fill(p, (size_t)(e - p));
		if (k)
			kgci_bot_record(w->y->h, region_of(w->y->h, p), p, (size_t)(e - p));
	}
	w->plab_top[k] = w->plab_end[k] = NULL;
}

static char *gc_alloc(struct yworker *w, size_t size, bool old)
{
	int k = old;
	char *p = w->plab_top[k];
	size_t got;

	if (p && (size_t)(w->plab_end[k] - p) >= size) {
		w->plab_top[k] = p + size;
		return p;
	}
	/* survivor space used up (sticky for this collection): no lock per object */
	if (!old && __atomic_load_n(&w->y->surv_full, __ATOMIC_RELAXED))
		return NULL;
	if (old && w->nchunks) {
		/* next gap from this worker's batch */
		for (;;) {
			struct gap c = w->chunks[--w->nchunks];

			if (c.size >= size) {
				plab_retire(w, 1);
				w->plab_top[1] = c.start + size;
				w->plab_end[1] = c.start + c.size;
				return c.start;
			}
			/* too small for this object: leave it a filler (it is one) */
			if (!w->nchunks)
				break;
		}
	}
	pthread_mutex_lock(&w->y->lock);
	if (size > PLAB_SIZE / 4) {
		p = region_carve(w, size, size, old, &got);
	} else {
		struct gap c;

		plab_retire(w, k);
		/* promotion refills from swept gaps of old regions first, a batch
		 * of them per lock round trip */
		if (old && w->y->use_gaps && kgci_cm_chunk_take(w->y->h, size, &c)) {
			size_t batch = c.size;

			w->plab_top[k] = c.start + size;
			w->plab_end[k] = c.start + c.size;
			while (w->nchunks < CHUNK_BATCH && batch < PLAB_SIZE &&
			       kgci_cm_chunk_take(w->y->h, 1, &w->chunks[w->nchunks]))
				batch += w->chunks[w->nchunks++].size;
			pthread_mutex_unlock(&w->y->lock);
			return c.start;
		}
		p = region_carve(w, size, PLAB_SIZE, old, &got);
		if (p) {
			w->plab_top[k] = p + size;
			w->plab_end[k] = p + got;
		}
	}
	pthread_mutex_unlock(&w->y->lock);
	return p;
}

/* Undo a copy that lost the race for the object. */
static void gc_unalloc(struct yworker *w, char *p, size_t size, bool old)
{
	if (w->plab_top[old] == p + size) {
		w->plab_top[old] = p;
		return;
	}
	kgci_obj_fill(p, size);
	if (old)
		kgci_bot_record(w->y->h, region_of(w->y->h, p), p, size);
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

static inline kgc_obj resolved(kgc_obj o, uint64_t hd)
{
	return hdr_is_fwd(hd) ? (kgc_obj)(uintptr_t)(hd & ~HDR_TAG_MASK) : o;
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
	if (!old && !(dst = gc_alloc(w, size, false)))
		old = true;
	if (old)
		dst = gc_alloc(w, size, true);
	if (unlikely(!dst)) {
		/* to-space exhausted: keep the object where it is (self-forward) */
		if (!hdr_cas(o, &hd, (hd & ~HDR_TAG_MASK) | HDR_TAG_FAILED))
			return resolved(o, hd);
		__atomic_store_n(&region_of(h, o)->evac_alloc_failed, 1, __ATOMIC_RELAXED);
		push(w, o);
		return o;
	}
	/* the header word is not copied: another worker may be racing on it */
	memcpy(dst + WORD, (char *)o + WORD, size - WORD);
	*obj_hdr(dst) = hdr_with_age(hd, age);
	if (!hdr_cas(o, &hd, (uint64_t)(uintptr_t)dst | HDR_TAG_FWD)) {
		gc_unalloc(w, dst, size, old);
		return resolved(o, hd);
	}
	if (old) {
		kgci_bot_record(h, region_of(h, dst), dst, size);
		if (unlikely(w->y->black)) {
			kgci_cm_mark_black(h, dst);
			if (from_old) {	/* the marker traces it again (mark.c) */
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
	push(w, (kgc_obj)dst);
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
		push(w, o);
		return o;
	}
	return evacuate(w, o, hd, r);
}

static inline bool young_after(const struct region *r)
{
	return r->type == RT_SURVIVOR && (r->flags & RF_GC_ALLOC);
}

static void root_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = *slot, n = process(ctx, o);

	if (n != o)
		*slot = n;
}

/*
 * Regions that failed evacuation because they were pinned stay old and
 * "retained": every reference into them from another old region keeps its
 * card dirty, so a later young collection can evacuate them once unpinned
 * (JEP 423: retained as candidates, collected once unpinned) without
 * remembered sets between old regions. Mixed-collection candidates
 * (mark.c) are tracked the same way.
 */
static inline bool tracked_target(const struct region *r)
{
	return r->retained || r->candidate ||
	       ((r->flags & RF_FAILED) && r->fail_cause != FAIL_ALLOC);
}

/* A slot inside the heap: keep the card dirty if it still points to young
 * (or to a retained region). */
static void heap_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = *slot, n = process(ctx, o);
	struct region *nr, *sr;

	if (n != o)
		*slot = n;
	nr = region_of(h, n);
	if (!young_after(nr) && !tracked_target(nr))
		return;
	sr = region_of(h, slot);
	if (young_after(nr) ? !young_after(sr) : nr != sr)
		__atomic_store_n(card_for(h, slot), CARD_DIRTY, __ATOMIC_RELAXED);
}

void (*kgci_young_test_drain_hook)(void);	/* test hook: every 64 objects copied */

/*
 * Give half of the local stack to idle workers: the oldest half, nearest the
 * roots of what is being copied (the largest subtrees: a binary tree's DFS
 * stack is only as deep as the tree, so waiting for a long stack would keep
 * a tree's copy on one worker).
 */
static void maybe_donate(struct yworker *w)
{
	struct ygc *y = w->y;
	size_t n;

	if (y->nworkers == 1 || w->len < DONATE_MIN ||
	    !atomic_load_explicit(&y->idle_hint, memory_order_relaxed))
		return;
	n = w->len / 2;
	pthread_mutex_lock(&y->lock);
	if (y->qlen + n > y->qcap) {
		size_t nc = (y->qlen + n) * 2;
		kgc_obj *nq = realloc(y->q, nc * sizeof(*nq));

		if (!nq)
			kgci_fatal("young GC: out of memory for the shared queue");
		y->q = nq;
		y->qcap = nc;
	}
	memcpy(y->q + y->qlen, w->stack, n * sizeof(kgc_obj));
	memmove(w->stack, w->stack + n, (w->len - n) * sizeof(kgc_obj));
	y->qlen += n;
	w->len -= n;
	pthread_cond_broadcast(&y->cond);
	pthread_mutex_unlock(&y->lock);
}

/*
 * Depth-first (LIFO) on purpose: objects are copied next to what they refer
 * to, so a linked structure that dies later leaves one large gap for the
 * sweep instead of many small ones (a FIFO of popped objects, tried for
 * prefetching, interleaved lists and cut the reusable gap size by 5x).
 */
static void drain_local(struct yworker *w)
{
	struct kgc_heap *h = w->y->h;
	unsigned k = 0;

	while (w->len) {
		kgc_obj o = w->stack[--w->len];

		kgci_obj_iterate_refs(h, o, heap_slot, w);
		if ((++k & 63) == 0) {
			if (unlikely(kgci_young_test_drain_hook != NULL))
				kgci_young_test_drain_hook();
			maybe_donate(w);
		}
	}
}

/* Drain until every worker is out of work. */
static void drain_all(struct yworker *w)
{
	struct ygc *y = w->y;

	for (;;) {
		drain_local(w);
		if (y->nworkers == 1)
			return;
		pthread_mutex_lock(&y->lock);
		for (;;) {
			if (y->qlen) {
				size_t n = y->qlen < 256 ? y->qlen : 256;

				y->qlen -= n;
				for (size_t i = 0; i < n; i++)
					push(w, y->q[y->qlen + i]);
				break;
			}
			if (y->done) {
				pthread_mutex_unlock(&y->lock);
				return;
			}
			y->idle++;
			atomic_fetch_add(&y->idle_hint, 1);
			if (y->idle == y->nworkers) {
				y->done = true;
				pthread_cond_broadcast(&y->cond);
				pthread_mutex_unlock(&y->lock);
				return;
			}
			pthread_cond_wait(&y->cond, &y->lock);
			y->idle--;
			atomic_fetch_sub(&y->idle_hint, 1);
		}
		pthread_mutex_unlock(&y->lock);
	}
}

/* Card scan (phase A): remember the slot if it points into the collection set. */
static void card_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	struct yworker *w = ctx;
	struct region *tr = region_of(h, *slot);

	if (!(tr->flags & RF_CSET)) {
		/* a retained region not collected now: the card stays dirty */
		if (tracked_target(tr) && tr != region_of(h, slot))
			__atomic_store_n(card_for(h, slot), CARD_DIRTY, __ATOMIC_RELAXED);
		return;
	}
	if (unlikely(w->nslots == w->slots_cap))
		w->slots = kgci_array_grow(w->slots, &w->slots_cap, sizeof(*w->slots), "young GC card slots");
	w->slots[w->nslots++] = slot;
}

static void scan_card(struct yworker *w, struct region *r, char *cs)
{
	struct kgc_heap *h = w->y->h;
	char *ce = cs + (1u << KGC_CARD_SHIFT), *top = r->top;

	if (cs >= top)
		return;
	if (r->type == RT_HUM_START || r->type == RT_HUM_CONT) {
		kgc_obj o = (kgc_obj)h->regions[r->hum_start].bottom;

		kgci_obj_iterate_refs_range(h, o, cs, ce, card_slot, w);
		return;
	}
	for (char *p = kgci_bot_block_start(h, r, cs); p < ce && p < top;) {
		size_t sz = obj_size(p);

		if (p + sz > cs)
			kgci_obj_iterate_refs_range(h, (kgc_obj)p, cs, ce, card_slot, w);
		p += sz;
	}
}

/* Claim old/humongous regions one at a time and scan their dirty cards. */
static void scan_cards(struct yworker *w)
{
	struct ygc *y = w->y;
	struct kgc_heap *h = y->h;
	uint32_t k;

	while ((k = atomic_fetch_add(&y->card_next, 1)) < y->nold) {
		struct region *r = &h->regions[y->old_list[k]];
		uint8_t *c = card_for(h, r->bottom);
		size_t nc = (size_t)(r->top - r->bottom + (1u << KGC_CARD_SHIFT) - 1) >> KGC_CARD_SHIFT;

		for (size_t i = 0; i < nc; i++) {
			if ((i & 7) == 0 && i + 8 <= nc) {
				uint64_t wd;

				memcpy(&wd, c + i, 8);
				if (wd == ~0ull) {
					i += 7;
					continue;
				}
			}
			if (c[i] == CARD_DIRTY) {
				c[i] = CARD_CLEAN;
				w->dirty_cards++;
				scan_card(w, r, r->bottom + (i << KGC_CARD_SHIFT));
			}
		}
	}
}

/*
 * Phase B's card slots: every worker's, in batches any worker may claim
 * (its own first). A worker may find most of them, all slots of one large
 * reference array on dirty cards, say; each one may lead to a long chain
 * of objects (a linked list's head) that copying cannot split, so they
 * are shared before they are followed, not after.
 */
#define SLOT_BATCH 64

void (*kgci_young_test_batch_hook)(bool own);	/* test hook: before each batch */

static void evac_slots(struct yworker *w)
{
	struct ygc *y = w->y;
	unsigned self = (unsigned)(w - y->w);

	for (unsigned k = 0; k < y->nworkers; k++) {
		struct yworker *v = &y->w[(self + k) % y->nworkers];
		size_t i, e;

		while ((i = atomic_fetch_add_explicit(&v->slot_next, SLOT_BATCH,
						      memory_order_relaxed)) < v->nslots) {
			e = i + SLOT_BATCH < v->nslots ? i + SLOT_BATCH : v->nslots;
			if (v != w)
				w->slots_taken += e - i;
			if (unlikely(kgci_young_test_batch_hook != NULL))
				kgci_young_test_batch_hook(v == w);
			for (; i < e; i++) {
				if (i + 8 < e)
					__builtin_prefetch(*v->slots[i + 8]);
				heap_slot(y->h, v->slots[i], w);
			}
			drain_local(w);
		}
	}
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
	uint64_t c0 = kgci_thread_cpu_ns();

	scan_cards(w);
	w->cpu_cards = kgci_thread_cpu_ns() - c0;
	pthread_mutex_lock(&y->lock);
	if (++y->cards_done == y->nworkers) {
		y->use_gaps = true;
		pthread_cond_broadcast(&y->cond);
	}
	while (y->cards_done < y->nworkers)
		pthread_cond_wait(&y->cond, &y->lock);
	pthread_mutex_unlock(&y->lock);
	c0 = kgci_thread_cpu_ns();
	if (first) {
		kgci_roots_iterate(y->h, root_slot, w);
		kgci_roots_iterate_critical(y->h, root_slot, w);
		if (y->old_cset)	/* marking: its stack and SATB entries into them */
			kgci_cm_old_cset_refs(y->h, root_slot, w);
		drain_local(w);
	}
	evac_slots(w);
	drain_all(w);
	plab_retire(w, 0);
	plab_retire(w, 1);
	w->cpu_evac = kgci_thread_cpu_ns() - c0;
	if (w->nchunks) {
		pthread_mutex_lock(&y->lock);
		while (w->nchunks)
			kgci_cm_chunk_give_back(y->h, w->chunks[--w->nchunks]);
		pthread_mutex_unlock(&y->lock);
	}
}

/* ------------------------------------------------------------ worker pool */

struct gc_pool {
	pthread_mutex_t lock;
	pthread_cond_t go, done;
	uint64_t gen;
	unsigned nthreads, running;
	bool stop;
	struct ygc *y;
	pthread_t th[];
};

struct pool_arg { struct gc_pool *p; unsigned id; };

static void *pool_main(void *arg)
{
	struct pool_arg *a = arg;
	struct gc_pool *p = a->p;
	unsigned id = a->id;
	uint64_t seen = 0;

	free(a);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->gen == seen && !p->stop)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->stop)
			break;
		seen = p->gen;
		pthread_mutex_unlock(&p->lock);
		worker_run(&p->y->w[id], false);
		pthread_mutex_lock(&p->lock);
		if (--p->running == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static struct gc_pool *pool_get(struct kgc_heap *h, unsigned n)
{
	struct gc_pool *p = h->gc_pool;

	if (p || n < 2)
		return p;
	p = calloc(1, sizeof(*p) + (n - 1) * sizeof(pthread_t));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 1; i < n; i++) {
		struct pool_arg *a = malloc(sizeof(*a));

		if (!a)
			break;
		a->p = p;
		a->id = i;
		if (pthread_create(&p->th[i - 1], NULL, pool_main, a)) {
			free(a);
			break;
		}
		pthread_setname_np(p->th[i - 1], "kgc-gc");
		p->nthreads++;
	}
	h->gc_pool = p;
	return p;
}

void kgci_young_pool_destroy(struct kgc_heap *h)
{
	struct gc_pool *p = h->gc_pool;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	free(p);
	h->gc_pool = NULL;
}

static void run_workers(struct ygc *y)
{
	struct gc_pool *p = pool_get(y->h, y->nworkers);

	if (!p || p->nthreads + 1 < y->nworkers)
		y->nworkers = p ? p->nthreads + 1 : 1;
	if (y->nworkers > 1) {
		pthread_mutex_lock(&p->lock);
		p->y = y;
		p->running = y->nworkers - 1;
		p->gen++;
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->lock);
	}
	worker_run(&y->w[0], true);
	if (y->nworkers > 1) {
		pthread_mutex_lock(&p->lock);
		while (p->running)
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
}

/* Objects left in a failed region: live ones keep their place, dead ones become fillers. */
static size_t fixup_failed(struct kgc_heap *h, struct region *r)
{
	char *p = r->bottom, *dead = NULL;
	size_t live = 0;

	while (p < r->top) {
		uint64_t hd = *obj_hdr(p);
		size_t sz;

		if (hdr_is_fwd(hd)) {
			char *n = (char *)(uintptr_t)(hd & ~HDR_TAG_MASK);

			sz = obj_size_h(p, *obj_hdr(n));
		} else {
			sz = obj_size_h(p, hd);
		}
		if ((hd & HDR_TAG_MASK) == HDR_TAG_FAILED) {
			if (dead) {
				kgci_obj_fill(dead, (size_t)(p - dead));
				dead = NULL;
			}
			/* atomic: native code may read a pinned array's header (kgc_obj_type) */
			__atomic_store_n(obj_hdr(p), hd & ~HDR_TAG_MASK, __ATOMIC_RELAXED);
			live += sz;
		} else if (!dead) {
			dead = p;
		}
		p += sz;
	}
	if (dead) {
		kgci_obj_fill(dead, (size_t)(r->top - dead));
		if (h->opt.poison && r->top - dead > 16)
			memset(dead + 16, 0xde, (size_t)(r->top - dead) - 16);
	}
	return live;
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

/*
 * A region whose evacuation failed for lack of to-space becomes old in
 * place; its dead objects (fillers now) are known dead already: promotion
 * may reuse them at once rather than after the next concurrent sweep.
 * (Pinned regions are retained instead; kgci_cm_chunk_take skips kernel pins.)
 */
static void failed_gaps(struct kgc_heap *h, struct region *r)
{
	for (char *p = r->bottom; p < r->top; p += obj_size(p)) {
		uint64_t hd = *obj_hdr(p);

		if (hdr_kind(hd) == KIND_FILLER && obj_size_h(p, hd) >= CM_CHUNK_MIN)
			kgci_cm_chunk_give_back(h, (struct gap){ p, obj_size_h(p, hd) });
	}
}

/* What one young collection did, gathered from its phases. */
struct yres {
	size_t freed, copied, promoted, cset_bytes, rlive, mixed_live;
	uint32_t nretained, nmixed, rleft, tospace;
	uint32_t fails[4];
};

static void ygc_setup(struct ygc *y, struct kgc_heap *h)
{
	y->h = h;
	y->old_list = malloc(h->nregions * sizeof(uint32_t));
	y->nworkers = kgci_policy_gc_threads(h);
	y->w = calloc(y->nworkers, sizeof(*y->w));
	if (!y->old_list || !y->w)
		kgci_fatal("young GC: out of memory");
	pthread_mutex_init(&y->lock, NULL);
	pthread_cond_init(&y->cond, NULL);
	for (unsigned i = 0; i < y->nworkers; i++)
		y->w[i].y = y;
	y->tenure = kgci_policy_tenure(h);
	y->black = kgci_cm_marking(h);
	y->surv_limit = kgci_policy_survivor_limit(h);
	if (h->evac_fail_inject > 0) {
		y->inject = true;
		h->evac_fail_inject--;
	}
	h->surv_regions = 0;
	h->surv_cur = h->old_cur = -1;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->fail_cause = FAIL_NONE;
		r->evac_alloc_failed = 0;
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
	uint32_t rmax;
	size_t rbudget;

	/* a mixed collection: old candidates of the last cycle join the cset */
	res->nmixed = kgci_cm_active(h) ? 0 : kgci_cm_mixed_select(h, &res->mixed_live);
	kgci_policy_retained_limits(h, &rmax, &rbudget);
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (region_is_young(r)) {
			r->flags |= RF_CSET;
			res->cset_bytes += (size_t)(r->top - r->bottom);
			kgci_cards_clear_region(h, r);
			if (r->flags & (RF_PINNED | RF_KPINNED)) {
				r->flags |= RF_FAILED;
				r->fail_cause = (r->flags & RF_PINNED) ? FAIL_PINNED : FAIL_KPINNED;
				(*npinned)++;
			}
		} else if (r->flags & RF_CSET) {
			res->cset_bytes += (size_t)(r->top - r->bottom);	/* mixed candidate */
			kgci_cards_clear_region(h, r);
		} else if (r->type == RT_OLD && r->retained && !(r->flags & (RF_PINNED | RF_KPINNED)) &&
			   kgci_cm_retained_evac_ok(h) && res->nretained < rmax &&
			   (!res->nretained || res->rlive + r->live_bytes <= rbudget)) {
			/* unpinned since it failed evacuation: collect it now */
			r->flags |= RF_CSET;
			res->cset_bytes += (size_t)(r->top - r->bottom);
			res->rlive += r->live_bytes;
			res->nretained++;
		} else if (r->type == RT_OLD || r->type == RT_HUM_START || r->type == RT_HUM_CONT) {
			y->old_list[y->nold++] = i;
			if (r->flags & (RF_PINNED | RF_KPINNED))
				(*npinned)++;
			else if (r->retained)
				res->rleft++;
		}
	}
	h->retained_pending = res->rleft;
	if (res->nretained)
		kgci_cm_chunks_drop_evacuated(h);	/* their gaps are no promotion space now */
	y->old_cset = res->nretained && y->black;
}

/* The workers' counts; their copies still to trace go to the marker. */
static void ygc_gather(struct ygc *y, struct yres *res)
{
	struct kgc_heap *h = y->h;
	struct young_facts *f = y->facts;

	memset(h->age_bytes, 0, sizeof(h->age_bytes));
	f->nworkers = y->nworkers;
	f->w0_cpu_ns = y->w[0].cpu_cards + y->w[0].cpu_evac;
	for (unsigned i = 0; i < y->nworkers; i++) {
		struct yworker *w = &y->w[i];

		res->copied += w->copied;
		res->promoted += w->promoted;
		f->slots += w->nslots;
		f->slots_taken += w->slots_taken;
		f->dirty_cards += w->dirty_cards;
		f->cards_cpu_ns += w->cpu_cards;
		f->evac_cpu_ns += w->cpu_evac;
		if (w->copied > f->copied_max)
			f->copied_max = w->copied;
		res->tospace += w->tospace_regions;
		for (int a = 0; a <= HDR_AGE_MAX; a++)
			h->age_bytes[a] += w->age_bytes[a];
		free(w->stack);
		free(w->slots);
		if (w->ngray)
			kgci_cm_push_gray(h, w->gray, w->ngray);
		free(w->gray);
	}
}

/* A cset region that failed evacuation stays, old, its dead objects filled. */
static void ygc_keep_failed(struct kgc_heap *h, struct region *r, uint32_t i, struct yres *res,
			    unsigned *fail_mask)
{
	size_t live, used = (size_t)(r->top - r->bottom);

	/* the unused rest of the region is a gap like the dead objects */
	if (r->top < r->end) {
		kgci_obj_fill(r->top, (size_t)(r->end - r->top));
		r->top = r->end;
	}
	live = fixup_failed(h, r);
	r->live_bytes = live;	/* an upper bound from now on */
	res->fails[r->fail_cause]++;
	*fail_mask |= 1u << r->fail_cause;
	res->freed += used > live ? used - live : 0;
	kgci_region_set_type(h, r, RT_OLD);
	kgci_bot_rebuild(h, r);
	if (r->fail_cause == FAIL_ALLOC)
		failed_gaps(h, r);	/* reused in place */
	else
		r->retained = 1;	/* evacuated once unpinned */
	kgci_log_line(h, LOG_PIN, "region %u: evacuation failed (%s), %zuK live kept in place",
		      i, r->fail_cause == FAIL_ALLOC ? "allocation" :
		      r->fail_cause == FAIL_PINNED ? "pinned" : "kernel pinned", live >> 10);
}

/* Every cset region: kept in place (failed) or freed (evacuated). */
static void ygc_finish_regions(struct ygc *y, struct yres *res, unsigned *fail_mask)
{
	struct kgc_heap *h = y->h;

	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->evac_alloc_failed && !(r->flags & RF_FAILED)) {
			r->flags |= RF_FAILED;
			r->fail_cause = FAIL_ALLOC;
		}
		r->evac_alloc_failed = 0;
		if (r->flags & RF_CSET) {
			if (r->flags & RF_FAILED) {
				ygc_keep_failed(h, r, i, res, fail_mask);
			} else {
				res->freed += (size_t)(r->top - r->bottom);
				if (h->opt.poison)
					memset(r->bottom, 0xde, (size_t)(r->top - r->bottom));
				if (r->type == RT_OLD)
					kgci_cm_region_evacuated(h, i);
				kgci_region_free(h, r);
				kgci_stale_quarantine(h, r);	/* KGC_STALE_CHECK */
			}
		}
		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->fail_cause = FAIL_NONE;
	}
	h->surv_cur = h->old_cur = -1;
}

/* What the policy and the stats learn from this collection. */
static void ygc_record(struct ygc *y, struct yres *res)
{
	struct kgc_heap *h = y->h;

	struct young_facts *f = y->facts;

	h->tospace_need = res->tospace + 2;
	f->mixed = res->nmixed;
	f->cset_bytes = res->cset_bytes;
	f->copied = res->copied;
	f->promoted = res->promoted;
	if (res->nmixed) {
		h->st.mixed_gcs++;
		h->st.mixed_regions += res->nmixed;
		kgci_log_line(h, LOG_HEAP, "mixed: %u old regions evacuated (%zuK live estimated)",
			      res->nmixed, res->mixed_live >> 10);
	}
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
		      "dirty cards %zu, card slots %zu, %zu taken from another worker); "
		      "regions: eden %u survivor %u old %u humongous %u free %u",
		      res->copied >> 10, res->promoted >> 10, y->nworkers, f->copied_max >> 10,
		      f->dirty_cards, f->slots, f->slots_taken, h->count[RT_EDEN], h->count[RT_SURVIVOR],
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

	*npinned = 0;
	*fail_mask = 0;
	ygc_setup(&y, h);
	ygc_select_cset(&y, &res, npinned);
	run_workers(&y);
	ygc_gather(&y, &res);
	kgci_weak_process(h, weak_alive_young, NULL);
	ygc_finish_regions(&y, &res, fail_mask);
	ygc_record(&y, &res);
	pthread_mutex_destroy(&y.lock);
	pthread_cond_destroy(&y.cond);
	free(y.q);
	free(y.w);
	free(y.old_list);
}
