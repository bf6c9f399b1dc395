/* SPDX-License-Identifier: MIT */
/*
 * mixed.c - G1's mixed collections: at remark the sparse old regions become
 * candidates (the policy says which, and whether they are worth it); the
 * marker thread builds their remembered sets (remset.c) before cleanup, as
 * G1's Rebuild Remembered Sets phase does: the sweep, which reads every
 * object below TAMS anyway, adds the references of the live ones, and a
 * walk of what lies above TAMS adds the rest;
 * from remark on, young pauses add the cards they find holding references
 * into candidates (a dirty card, a copy into old space), and the write
 * barrier cards every store into one. Once built, the candidates are ranked
 * by the policy's predicted efficiency (garbage reclaimed per predicted ns
 * of copying and remembered-set scanning), and each young pause with no
 * cycle running puts the next ones in its collection set: it dirties their
 * remembered sets' cards, so its card scan finds every reference into them.
 */
#include <stdlib.h>
#include "cycle/cm.h"

static void rb_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = load_ref(slot);	/* again: a mutator may have stored since */
	struct region *tr;

	if (!is_ref(h, o) || !in_heap(h, o))
		return;
	tr = region_of(h, o);
	if (tr->candidate && tr != region_of(h, slot))
		kgci_remset_add(&tr->rs, card_index(h, slot), h->cm->remset_max);	/* overflow: dropped */
}

/* A live object below TAMS, as the sweep finds it: its references into
 * candidates go to their remembered sets. */
void kgci_mixed_rebuild_obj(struct kgc_heap *h, kgc_obj o)
{
	if (hdr_kind(__atomic_load_n(obj_hdr(o), __ATOMIC_RELAXED)) != KIND_FILLER)
		kgci_obj_iterate_refs(h, o, rb_slot, NULL);
}

/*
 * The rest of the rebuild, after the sweep: the objects above TAMS (new
 * since the snapshot: promoted during marking, humongous objects allocated
 * since) up to each region's top at remark; the sweep did the live ones
 * below TAMS (kgci_mixed_rebuild_obj). Add the card of every reference into
 * a candidate from another old or humongous region to the candidate's
 * remembered set; true when done. Runs between pauses only, when every
 * old region is parsable up to its top; pauses may add objects (at a top,
 * or in a gap: the cursor is at an object or gap start either way, and the
 * young GC records their references into candidates) but move or free
 * nothing old while it runs (kgci_cm_active), so the cursor stays valid.
 * References stored meanwhile are carded by the write barrier, and the
 * next young pause's card scan records them. The marker is the only thread
 * that touches a remembered set between pauses.
 */
bool kgci_mixed_rebuild_work(struct kgc_heap *h, struct cmark *cm, bool bounded)
{
	unsigned k = 0;

	while (cm->rb_i < h->nregions) {
		char *lim = cm->rb_top[cm->rb_i];

		if (lim <= cm->tams[cm->rb_i]) {
			cm->rb_i++;
			continue;
		}
		if (!cm->rb_p)
			cm->rb_p = cm->tams[cm->rb_i];
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

/* Most garbage per predicted ns first. */
static int cand_rank_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->eff > y->eff ? -1 : x->eff < y->eff ? 1 : (int)x->idx - (int)y->idx;
}

static void cand_drop(struct kgc_heap *h, struct region *r)
{
	r->candidate = 0;
	kgci_remset_clear(&r->rs);
	kgci_region_track_update(h, r);
}

/*
 * At cleanup, once ranked (G1's candidate pruning): drop the overflowed
 * candidates and those one pause's old budget cannot take (a region alone predicted
 * over it), then, from the least efficient end, those whose garbage adds up
 * to no more than the heap waste the policy accepts: they stay old, and
 * while they are candidates every store into them is carded. The minimum
 * per collection is then counted from the candidates left.
 */
static void mixed_prune(struct kgc_heap *h, struct cmark *cm, double budget)
{
	uint32_t w = 0, n0 = cm->ncand;
	size_t waste = 0, allowed = kgci_policy_mixed_waste(h);

	for (uint32_t j = 0; j < cm->ncand; j++) {
		struct cand *c = &cm->cand[j];
		struct region *r = &h->regions[c->idx];

		if (r->rs.overflow || kgci_policy_mixed_cost_ns(h, c->live, r->rs.n) > budget)
			cand_drop(h, r);
		else
			cm->cand[w++] = *c;
	}
	while (w) {
		const struct cand *c = &cm->cand[w - 1];

		if (waste + (h->region_size - c->live) > allowed)
			break;
		waste += h->region_size - c->live;
		cand_drop(h, &h->regions[c->idx]);
		w--;
	}
	cm->ncand = cm->ncand_cycle = w;
	kgci_log_line(h, LOG_HEAP, "mixed: %u of %u candidates kept (dropped: over the %.2fms budget, "
		      "or %zuK of garbage in the least efficient)", w, n0, budget / 1e6, waste >> 10);
}

/*
 * At cleanup, the remembered sets built (sweep and rebuild done): rank the
 * candidates and prune them; from now on young pauses with no cycle running
 * take them. A region whose set overflowed (kgci_policy_remset_max) is
 * referenced from too many places to be worth it: ranked last, dropped.
 */
void kgci_mixed_rebuild_done(struct kgc_heap *h, struct cmark *cm)
{
	size_t cards = 0;
	uint32_t n = cm->ncand, over = 0;

	if (!n)
		return;
	for (uint32_t j = 0; j < n; j++) {
		struct cand *c = &cm->cand[j];
		const struct region *r = &h->regions[c->idx];

		over += r->rs.overflow;
		cards += r->rs.n;
		c->eff = r->rs.overflow ? -1.0 :
			 (double)(h->region_size - c->live) / kgci_policy_mixed_cost_ns(h, c->live, r->rs.n);
	}
	qsort(cm->cand, n, sizeof(*cm->cand), cand_rank_cmp);
	mixed_prune(h, cm, kgci_policy_mixed_budget_ns(h));
	cm->cand_ready = true;
	kgci_log_line(h, LOG_GC, "Rebuild remembered sets: %u candidates, %zu cards, %u overflowed "
		      "(marker cpu %.1fms)", n, cards, over, cm->rebuild_cpu / 1e6);
}

/* Forget the candidates and their remembered sets (not the humongous
 * objects': young.c's eager reclaim and relocation keep those). */
void kgci_mixed_clear(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++) {
		h->regions[i].candidate = 0;
		if (h->regions[i].type != RT_HUM_START)
			kgci_remset_clear(&h->regions[i].rs);
		kgci_region_track_update(h, &h->regions[i]);
	}
	cm->ncand = 0;
	cm->cand_ready = false;
}

/* At remark, after choosing: what the rebuild walks (old and humongous
 * regions as they are now: regions that become old later get their
 * references into candidates recorded by the young pauses that fill them,
 * or carded by the write barrier - a mutator's humongous object; the
 * pinned-object space holds primitive arrays only, and a mutator may be
 * allocating in its gaps meanwhile: not walked). The sweep does the live
 * objects below TAMS, kgci_mixed_rebuild_work the rest before cleanup. */
static void rebuild_start(struct kgc_heap *h, struct cmark *cm)
{
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		cm->rb_top[i] = (r->type == RT_OLD || r->type == RT_HUM_START) && !r->pinspace && cm->ncand ?
				r->top : r->bottom;
	}
	cm->rb_i = 0;
	cm->rb_p = NULL;
	cm->rebuild_cpu = 0;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->live < y->live ? -1 : x->live > y->live ? 1 : (int)x->idx - (int)y->idx;
}

/* At remark (marked bytes per region known): choose the candidates. */
void kgci_mixed_choose(struct kgc_heap *h, struct cmark *cm)
{
	uint32_t n = 0, nsparse;
	size_t reclaim = 0, free_after = 0, surplus;
	double budget = kgci_policy_mixed_budget_ns(h);

	kgci_mixed_clear(h, cm);
	if (h->ncards >= UINT32_MAX) {
		rebuild_start(h, cm);	/* nothing to walk */
		return;		/* a card index would not fit a remembered set (heaps over 2 TiB) */
	}
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];
		size_t live = cm->live[i] + (size_t)(r->top - cm->tams[i]);

		if (r->type == RT_OLD && !r->pinspace && live < h->region_size)
			free_after += h->region_size - live;
		if (r->type != RT_OLD || r->retained || (r->flags & RF_PRETOUCH) ||
		    cm->tams[i] == r->bottom || !cm->live[i])
			continue;	/* new since the snapshot, or freed at cleanup */
		/* references the marking traced into it: more than one pause
		 * could scan (an LRU cache's entries, linked from everywhere)
		 * and it is not worth tracking */
		if (kgci_policy_mixed_candidate(h, live) &&
		    kgci_policy_mixed_cost_ns(h, live, __atomic_load_n(&cm->inrefs[i], __ATOMIC_RELAXED)) <= budget) {
			cm->cand[n++] = (struct cand){ live, i, 0 };
		}
	}
	/* sparsest first, while their garbage is old space promotion will not refill */
	qsort(cm->cand, n, sizeof(*cm->cand), cand_cmp);
	surplus = kgci_policy_mixed_surplus(h, free_after, cm->promoted_period);
	nsparse = n;
	for (n = 0; n < nsparse && reclaim + (h->region_size - cm->cand[n].live) <= surplus; n++)
		reclaim += h->region_size - cm->cand[n].live;
	if (n < nsparse)
		kgci_log_line(h, LOG_HEAP, "mixed: %u of %u sparse regions chosen (%zuM free after the sweep, "
			      "%lluM promoted in the last cycle's period: promotion reuses the rest in place)",
			      n, nsparse, free_after >> 20, (unsigned long long)(cm->promoted_period >> 20));
	if (!kgci_policy_mixed_worth(h, reclaim))
		n = 0;
	for (uint32_t j = 0; j < n; j++) {
		h->regions[cm->cand[j].idx].candidate = 1;
		kgci_region_track_update(h, &h->regions[cm->cand[j].idx]);
	}
	cm->ncand = cm->ncand_cycle = n;
	cm->remset_max = kgci_policy_remset_max(h);
	rebuild_start(h, cm);
}

/*
 * Young collection, no cycle running: put the next candidates (best ranked
 * first) in the collection set: the policy's minimum count while their
 * predicted cost fits the pause goal, then more while it fits the budget,
 * up to its maximum; at least one. Pinned ones wait
 * for a later collection; overflowed ones are dropped. The cards of the
 * chosen ones' remembered sets are dirtied, and the sets freed: the card
 * scan finds every reference into them. Returns how many.
 */
uint32_t kgci_mixed_select(struct kgc_heap *h, size_t *live_bytes)
{
	struct cmark *cm = h->cm;
	size_t dirtied = 0;
	uint32_t min, max, n = 0, w = 0;
	double budget, cap, cost = 0;
	size_t bytes = 0, cards = 0;

	*live_bytes = 0;
	if (!cm->cand_ready)
		return 0;
	kgci_policy_mixed_limits(h, cm->ncand_cycle, &min, &max, &budget, &cap);
	for (uint32_t j = 0; j < cm->ncand; j++) {
		uint32_t idx = cm->cand[j].idx;
		struct region *r = &h->regions[idx];
		double c;

		if (!r->candidate || r->type != RT_OLD)
			continue;	/* no longer a candidate */
		if (r->rs.overflow) {
			cand_drop(h, r);
			continue;
		}
		c = kgci_policy_mixed_pause_ns(h, cm->cand[j].live, r->rs.n);
		if ((n == 0 || (n < min && cost + c <= cap) || (n < max && cost + c <= budget)) &&
		    !(r->flags & (RF_PINNED | RF_KPINNED))) {
			r->flags |= RF_CSET;
			r->candidate = 0;
			bytes += cm->cand[j].live;
			cards += r->rs.n;
			cost += c;
			n++;
			continue;
		}
		cm->cand[w++] = cm->cand[j];
	}
	cm->ncand = w;
	/* every chosen region is RF_CSET now: cards inside them are not dirtied */
	for (uint32_t i = 0; n && i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if ((r->flags & RF_CSET) && r->type == RT_OLD && r->rs.cap) {
			dirtied += kgci_remset_dirty_cards(h, &r->rs);
			kgci_remset_clear(&r->rs);
			kgci_region_track_update(h, r);
		}
	}
	if (!w || !n)
		kgci_mixed_clear(h, cm);	/* done, or only pinned ones left: the next cycle chooses anew */
	if (n)
		kgci_log_line(h, LOG_HEAP, "mixed: %u candidates (%zuK live, %zu remembered cards, %zu "
			      "dirtied; predicted %.2fms of %.2fms), %u left", n, bytes >> 10, cards,
			      dirtied, cost / 1e6, budget / 1e6, w);
	*live_bytes = bytes;
	return n;
}

/* Verifier: is every reference into a candidate on a dirty card or in its
 * remembered set by now? */
bool kgci_cm_candidates_tracked(struct kgc_heap *h)
{
	return h->cm->cand_ready;
}
