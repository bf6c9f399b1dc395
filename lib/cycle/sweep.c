/* SPDX-License-Identifier: MIT */
/*
 * sweep.c - the concurrent cycle's sweep and cleanup, and the gaps it
 * hands to promotion. After remark the marker thread walks each old region
 * below TAMS, turns runs of unmarked objects into fillers (block offset
 * table updated) and lists runs of at least CM_CHUNK_MIN bytes; the cleanup
 * pause frees wholly dead regions and dead humongous objects and hands the
 * runs to young pauses (kgci_cm_chunk_take: promotion into swept gaps).
 * Retained and candidate regions are to be evacuated: their gaps are not
 * (a candidate's are dropped at cleanup, once the candidates are final).
 */
#include <stdlib.h>
#include <string.h>
#include "cycle/cm.h"

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
	/* retained regions are to be evacuated: keep them sparse; candidates'
	 * gaps are dropped at cleanup if they stay candidates (mixed.c) */
	if (n >= CM_CHUNK_MIN && !r->retained)
		chunk_add(cm, cm->dead, n);
	cm->dead = NULL;
}

/*
 * Room in the promotion list for every gap the sweep has listed, made by
 * the sweep (the marker thread, outside pauses): the next young pause's
 * hand-over then only copies them into memory already touched. Grown in
 * the pause instead (a realloc of ~1 MB and first touches of its new half)
 * the hand-over cost the churn bench's young pauses 3.6-3.8 ms. On failure
 * the merge grows it or leaves gaps as fillers (chunk_add_to).
 */
static void chunks_reserve(struct cmark *cm)
{
	size_t need = cm->nchunks + cm->nswept, nc = cm->chunks_cap ? cm->chunks_cap : 1024;
	struct gap *nv;

	if (need <= cm->chunks_cap)
		return;
	while (nc < need + need / 2)
		nc *= 2;
	nv = realloc(cm->chunks, nc * sizeof(*nv));
	if (!nv)
		return;
	memset(nv + cm->nchunks, 0, (nc - cm->nchunks) * sizeof(*nv));	/* first touches now */
	cm->chunks = nv;
	cm->chunks_cap = nc;
}

/* Sweep until a yield request or done; true when every region is swept. */
bool kgci_sweep_work(struct kgc_heap *h, struct cmark *cm, bool bounded)
{
	unsigned k = 0;

	while (cm->sweep_i < cm->nsweep) {
		uint32_t idx = cm->sweep[cm->sweep_i];
		struct region *r = &h->regions[idx];
		char *tams = cm->tams[idx];
		bool rb = cm->rb_top[idx] > r->bottom;

		if (!cm->sweep_p) {
			cm->sweep_p = r->bottom;
			cm->sweep_live = 0;
			cm->dead = NULL;
		}
		if (r->type == RT_HUM_START) {
			bool dead = !cm_marked(cm, r->bottom);

			if (dead)
				cm->humdead[cm->nhumdead++] = idx;
			else if (rb)
				kgci_mixed_rebuild_obj(h, (kgc_obj)r->bottom);
			kgci_markbits_clear(&cm->bits, r->bottom, r->bottom + WORD);
			/* dead stays dead until cleanup frees it (kgci_cm_obj_dead): its
			 * references may lead into fillers the sweep made */
			cm->swept[idx] = dead ? SW_EMPTY : SW_DONE;
			cm->sweep_p = NULL;
			cm->sweep_i++;
			continue;
		}
		while (cm->sweep_p < tams) {
			char *p = cm->sweep_p;
			size_t sz = obj_size_h(p, cm_hdr(p));

			if (cm_marked(cm, p)) {
				dead_run_end(h, cm, r, p);
				cm->sweep_live += sz;
				if (rb)		/* mixed candidates' remembered sets */
					kgci_mixed_rebuild_obj(h, (kgc_obj)p);
			} else if (!cm->dead) {
				cm->dead = p;
			}
			cm->sweep_p = p + sz;
			if (bounded && (++k % STEP_WORK) == 0) {
				chunks_reserve(cm);
				if (must_yield(h, cm))
					return false;
			}
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
		kgci_markbits_clear(&cm->bits, r->bottom, tams);
		cm->sweep_p = NULL;
		cm->sweep_i++;
	}
	if (bounded)
		chunks_reserve(cm);
	return true;
}

static bool cm_live(struct kgc_heap *h, const void *p, void *ctx)
{
	struct cmark *cm = ctx;

	return (const char *)p >= cm->tams[region_index(h, p)] || cm_marked(cm, p);
}

/*
 * At remark: every region with anything below TAMS is to be swept, but the
 * pinned-object space's (mutators may be allocating there): it is
 * reclaimed now, in the pause (pinspace.c), and counts as swept.
 */
void kgci_sweep_prepare(struct kgc_heap *h, struct cmark *cm)
{
	cm->nsweep = cm->sweep_i = cm->nempty = cm->nhumdead = 0;
	cm->sweep_p = cm->dead = NULL;
	cm->nswept = cm->swept_bytes = 0;
	memset(cm->swept, SW_NOT, h->nregions);
	if (h->ps.nunits)
		kgci_pinspace_reclaim(h, cm_live, cm);
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->pinspace) {
			kgci_markbits_clear(&cm->bits, r->bottom, cm->tams[i]);
			cm->swept[i] = SW_DONE;
		} else if (cm->tams[i] > r->bottom) {
			cm->sweep[cm->nsweep++] = i;
		}
	}
}

/*
 * Hand the sweep's gaps to promotion, with the old ones still unused: into
 * the promotion list's room when chunks_reserve made it, else the smaller
 * list is appended to the larger one's array, which becomes the list.
 * Appending 100k new gaps one by one to the old array cost the churn
 * bench's cleanup pauses 1.2-5.3 ms (the array's growth: first touches).
 */
static void chunks_merge(struct kgc_heap *h, struct cmark *cm)
{
	struct gap *big = cm->swept_chunks, *small = cm->chunks;
	size_t nbig = cm->nswept, cap = cm->swept_cap, nsmall = cm->nchunks, added = 0, all = 0;

	/* room made by chunks_reserve (append the sweep's, no growth), or the larger */
	if (cm->chunks_cap - cm->nchunks >= cm->nswept || nsmall > nbig) {
		big = cm->chunks;
		small = cm->swept_chunks;
		nbig = cm->nchunks;
		cap = cm->chunks_cap;
		nsmall = cm->nswept;
	}
	for (size_t k = 0; k < nsmall; k++) {
		all += small[k].size;
		chunk_add_to(&big, &nbig, &cap, &added, small[k]);
	}
	free(small);
	cm->chunks = big;
	cm->nchunks = nbig;
	cm->chunks_cap = cap;
	/* gaps the array could not take stay fillers */
	h->chunk_bytes = h->chunk_bytes + cm->swept_bytes - (all - added);
	cm->swept_chunks = NULL;
	cm->nswept = cm->swept_cap = cm->swept_bytes = 0;
}

/*
 * A young pause while the sweep runs: the gaps it has found so far go to
 * promotion now, not at cleanup (the old space the sweep frees is reused
 * while the rest is swept; otherwise promotion takes fresh regions for the
 * whole sweep). Every listed gap is a finished dead run: the sweep cursor
 * is past it and never comes back. An object promoted into one is below
 * TAMS in a region the sweep is at or past: not marked
 * (kgci_cm_young_promoted), never swept, live; its references into mixed
 * candidates are recorded by the pause.
 */
void kgci_sweep_hand_over(struct kgc_heap *h, struct cmark *cm)
{
	if (cm->nswept)
		chunks_merge(h, cm);
}

/* The cleanup pause: free what the sweep found empty, hand its gaps to promotion. */
void kgci_sweep_cleanup(struct kgc_heap *h, struct cmark *cm)
{
	uint32_t nfreed = 0, nhum = 0;
	size_t freed = 0;

	for (uint32_t k = 0; k < cm->nempty; k++) {
		struct region *r = &h->regions[cm->empty[k]];

		char *tams = cm->tams[cm->empty[k]];

		if (r->type != RT_OLD)
			continue;	/* not old any more: nothing of the sweep's is in it */
		if ((r->flags & (RF_PINNED | RF_KPINNED)) || tams != r->top) {
			/* pinned meanwhile, or objects placed above TAMS since the
			 * sweep: keep the dead part below TAMS parsable (what lies
			 * above is live by definition), sweep it next cycle */
			if (tams > r->bottom) {
				kgci_obj_fill(r->bottom, (size_t)(tams - r->bottom));
				kgci_bot_record(h, r, r->bottom, (size_t)(tams - r->bottom));
			}
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
	chunks_merge(h, cm);
	cm->cycles++;
	h->st.bytes_freed += freed;
	h->st.concurrent_cycles = cm->cycles;
	kgci_log_line(h, LOG_GC, "Concurrent Cycle %.3fms (marker cpu: mark %.1fms, sweep %.1fms; "
		 "assists: %.1fms, %lluM marked; allocation paced %.1fms): "
		 "%lluM marked live, freed %u regions + %u humongous (%zuM), %zuM reusable in %zu gaps, "
		 "%u mixed candidates",
		 (kgci_now_ns() - cm->t_start) / 1e6, cm->mark_cpu / 1e6, cm->sweep_cpu / 1e6,
		 (atomic_load_explicit(&h->alloc.assist_ns, memory_order_relaxed) - cm->assist_ns0) / 1e6,
		 (unsigned long long)((atomic_load_explicit(&h->alloc.assist_bytes, memory_order_relaxed) -
				       cm->assist_bytes0) >> 20),
		 (atomic_load_explicit(&h->alloc.pace_ns, memory_order_relaxed) - cm->pace_ns0) / 1e6,
		 (unsigned long long)(cm->marked_bytes >> 20), nfreed, nhum,
		 freed >> 20, h->chunk_bytes >> 20, cm->nchunks, cm->ncand);
	cm->state = CM_IDLE;
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
	return !cm_marked(cm, p);
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
