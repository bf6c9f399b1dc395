/* SPDX-License-Identifier: MIT */
/*
 * mixed.c - G1's mixed collections, opt-in: at remark the sparse old
 * regions become candidates (the policy says which, and whether they are
 * worth it), most garbage first; after cleanup the marker thread rebuilds
 * their remembered set in the card table (the card of every reference into
 * a candidate from another old region is dirtied); from then on each young
 * pause with no cycle running puts the next few in its collection set.
 */
#include <stdlib.h>
#include "cycle/cm.h"

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
bool kgci_mixed_rebuild_work(struct kgc_heap *h, struct cmark *cm, bool bounded)
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

void kgci_mixed_rebuild_done(struct kgc_heap *h, struct cmark *cm)
{
	cm->rebuilding = false;
	cm->cand_ready = true;
	kgci_log_line(h, LOG_GC, "Rebuild for mixed collections: %u candidates (marker cpu %.1fms)",
		 cm->ncand, cm->rebuild_cpu / 1e6);
}

/* Forget the candidates (their cards stay dirty until scanned). */
void kgci_mixed_clear(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++) {
		h->regions[i].candidate = 0;
		kgci_region_track_update(h, &h->regions[i]);
	}
	cm->ncand = 0;
	cm->rebuilding = cm->cand_ready = false;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->live < y->live ? -1 : x->live > y->live ? 1 : (int)x->idx - (int)y->idx;
}

/* At remark (marked bytes per region known): choose the candidates. */
void kgci_mixed_choose(struct kgc_heap *h, struct cmark *cm)
{
	uint32_t n = 0;
	size_t reclaim = 0;

	kgci_mixed_clear(h, cm);
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
	for (uint32_t j = 0; j < n; j++) {
		h->regions[cm->cand[j].idx].candidate = 1;
		kgci_region_track_update(h, &h->regions[cm->cand[j].idx]);
	}
	cm->ncand = cm->ncand_cycle = n;
	/* gaps of earlier sweeps inside candidates are not promoted into any more */
	kgci_cm_chunks_drop_evacuated(h);
}

/* Cleanup: if remark chose candidates, the marker rebuilds their cards. */
void kgci_mixed_rebuild_start(struct kgc_heap *h, struct cmark *cm)
{
	if (!cm->ncand)
		return;
	/* old and humongous regions as they are now: regions that become
	 * old later (a mutator's humongous allocation) hold no reference
	 * into a candidate that the write barrier did not card; the
	 * pinned-object space holds primitive arrays only, and a mutator may
	 * be allocating in its gaps meanwhile: not walked */
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		cm->rb_top[i] = (r->type == RT_OLD || r->type == RT_HUM_START) && !r->pinspace ?
				r->top : r->bottom;
	}
	cm->rebuilding = true;
	cm->rebuild_cpu = 0;
	if (!cm->started) {
		kgci_mixed_rebuild_work(h, cm, false);
		kgci_mixed_rebuild_done(h, cm);
	}
}

/*
 * Young collection, no cycle running: put the next candidates (most garbage
 * first) in the collection set: the policy's minimum count, then more
 * within its live byte budget and maximum. Pinned ones wait for a later
 * collection. Returns how many.
 */
uint32_t kgci_mixed_select(struct kgc_heap *h, size_t *live_bytes)
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
		kgci_mixed_clear(h, cm);	/* done, or only pinned ones left: the next cycle chooses anew */
	*live_bytes = bytes;
	return n;
}

/* Verifier: are references into candidates all on dirty cards by now? */
bool kgci_cm_candidates_tracked(struct kgc_heap *h)
{
	return h->cm->cand_ready;
}
