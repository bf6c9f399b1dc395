/* SPDX-License-Identifier: MIT */
/*
 * promote.c - the young pause's to-space allocator: per-worker survivor
 * and old PLABs carved from GC allocation regions (h->young.surv_cur, h->young.old_cur)
 * under the gang's lock, large objects carved directly, and promotion into
 * the gaps the concurrent sweep left in old regions (a batch of them per
 * lock round trip). A copy that lost the race for its object is undone.
 */
#include "gc/young.h"

#define PLAB_SIZE (32 * 1024)

/*
 * The old to-space region a pause ends with is kept for the next pause to
 * go on filling (G1's retained old GC alloc region), while it stays a plain
 * old region with room for a PLAB, and no cycle runs. A new region each pause left the last
 * one's tail unused until a full collection compacted it: with 2 MiB
 * edens promoting ~1 MiB each (the LRU bench filling its cache) that was
 * 0.3-0.5 MiB of resident, unused memory per pause.
 */
void kgci_promote_begin(struct kgc_heap *h, bool keep_ok)
{
	long k = h->young.old_keep;
	const struct region *r = k >= 0 ? &h->regions[k] : NULL;

	h->young.surv_regions = 0;
	h->young.surv_cur = h->young.old_cur = h->young.old_keep = -1;
	/* no cycle: the sweep frees a region it found dead below TAMS at
	 * cleanup, filling it up to its top - objects promoted into it
	 * meanwhile would be lost */
	if (r && keep_ok && r->type == RT_OLD && !r->retained && !r->candidate && !r->quarantined &&
	    r->pinspace == PS_NONE && !(r->flags & (RF_CSET | RF_PINNED | RF_KPINNED | RF_PRETOUCH)) &&
	    (size_t)(r->end - r->top) >= PLAB_SIZE)
		h->young.old_cur = k;
}

void kgci_promote_end(struct kgc_heap *h)
{
	h->young.old_keep = h->young.old_cur;
	h->young.surv_cur = h->young.old_cur = -1;
}

/* y->lock held: carve [min, want] bytes from the current to-space region. */
static char *region_carve(struct yworker *w, size_t min, size_t want, bool old, size_t *got)
{
	struct ygc *y = w->y;
	struct kgc_heap *h = y->h;
	long *cur = old ? &h->young.old_cur : &h->young.surv_cur;
	struct region *r;
	long idx;

	if (*cur >= 0) {
		r = &h->regions[*cur];
		if ((size_t)(r->end - r->top) >= min)
			goto carve;
	}
	if (y->inject || (old ? y->old_full : __atomic_load_n(&y->surv_full, __ATOMIC_RELAXED)))
		return NULL;
	if (!old && h->young.surv_regions >= y->surv_limit) {
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
		h->young.surv_regions++;
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

char *kgci_promote_alloc(struct yworker *w, size_t size, bool old)
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
void kgci_promote_unalloc(struct yworker *w, char *p, size_t size, bool old)
{
	if (w->plab_top[old] == p + size) {
		w->plab_top[old] = p;
		return;
	}
	kgci_obj_fill(p, size);
	if (old)
		kgci_bot_record(w->y->h, region_of(w->y->h, p), p, size);
}

/* End of a worker's run: its PLABs become fillers, its unused gaps go back. */
void kgci_promote_retire(struct yworker *w)
{
	struct ygc *y = w->y;

	plab_retire(w, 0);
	plab_retire(w, 1);
	if (w->nchunks) {
		pthread_mutex_lock(&y->lock);
		while (w->nchunks)
			kgci_cm_chunk_give_back(y->h, w->chunks[--w->nchunks]);
		pthread_mutex_unlock(&y->lock);
	}
}
