/* SPDX-License-Identifier: MIT */
/*
 * humreloc.c - humongous objects relocated by a young pause (issue 32): a
 * humongous allocation that finds no run of free regions, although enough
 * regions are free, asks for a young pause that moves the objects in the
 * way instead of a full collection (collect.c, policy.c's
 * kgci_policy_alloc_retry).
 *
 * What moves: humongous primitive arrays tracked for eager reclaim
 * (young.c), whose references are all known to a young pause with no
 * cycle running - roots, young objects, and the cards of their remembered
 * sets, which eager_select dirties for the card scan - unpinned (library
 * pins, critical sections, kernel pins, pinned handles: kgci_pins_compute's
 * flags and kgci_region_pinned_now), no kgc_io fixed buffer, not in the
 * pinned-object space. A reference array never moves here: its own slots
 * are on cards and in other remembered sets, and the refinement log.
 *
 * Plan (kgci_humreloc_plan, before the card scan): the window of `need`
 * regions that holds only free regions and movable objects, with the
 * fewest regions to move, whose objects all find a run of free regions
 * outside it (largest first, best fit). Begin: each object's header
 * becomes a forwarding pointer to its destination and its regions join
 * the collection set (RF_CSET: the pause's process() answers the new
 * address for every reference it visits, weak cells included); the
 * destination regions are taken now, so no to-space lands there. Finish
 * (after weak cells, before the collection set's regions are freed): the
 * pages move (kgci_backend_move_regions: mremap on anonymous memory, the
 * module's REGION_MOVE; a copy below policy.c's threshold), the header is
 * put back, the source regions freed.
 */
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"
#include "gc/humreloc.h"

/* Start region s holds an object a young pause may move. */
static bool movable(struct kgc_heap *h, uint32_t s)
{
	const struct region *r = &h->regions[s];

	if (r->type != RT_HUM_START || r->eager != EAGER_TRACKED || r->rs.overflow || r->pinspace ||
	    hdr_kind(*obj_hdr(r->bottom)) != KIND_PRIM_ARRAY)
		return false;
	for (uint32_t k = 0; k < r->hum_count; k++) {
		const struct region *q = &h->regions[s + k];

		if ((q->flags & (RF_PINNED | RF_KPINNED)) || q->fixed_rings || kgci_region_pinned_now(h, s + k))
			return false;
	}
	return true;
}

/* Per region: free (HR_FREE), in a movable object (HR_MOVABLE) or in the way. */
enum { HR_WALL, HR_FREE, HR_MOVABLE };

static void classify(struct kgc_heap *h, uint8_t *cls)
{
	for (uint32_t i = 0; i < h->nregions; i++) {
		const struct region *r = &h->regions[i];

		if (r->type == RT_FREE) {
			cls[i] = r->quarantined || (r->flags & RF_PRETOUCH) ? HR_WALL : HR_FREE;
		} else if (r->type == RT_HUM_START) {
			uint8_t c = movable(h, i) ? HR_MOVABLE : HR_WALL;

			for (uint32_t k = 0; k < r->hum_count; k++)
				cls[i + k] = c;
			i += r->hum_count - 1;
		} else {
			cls[i] = HR_WALL;
		}
	}
}

/* Regions moved to clear [w, w + need): -1 if a wall is in it. */
static long window_cost(struct kgc_heap *h, const uint8_t *cls, uint32_t w, uint32_t need)
{
	long cost = 0;

	for (uint32_t i = w; i < w + need; i++) {
		if (cls[i] == HR_WALL)
			return -1;
		if (cls[i] == HR_MOVABLE && (i == w || h->regions[i].type == RT_HUM_START))
			cost += h->regions[h->regions[i].hum_start].hum_count;
	}
	return cost;
}

/* Where in free run [i, j) an object of n regions from src goes: the run's
 * top (humongous objects gather there), or the highest start below it at
 * a distance from src the backend moves whole page tables by
 * (kgci_backend_move_granule), if the run has one and the object spans
 * two page tables' worth. */
static uint32_t run_start(struct kgc_heap *h, uint32_t i, uint32_t j, uint32_t n, uint32_t src)
{
	uint32_t top = j - n, e = kgci_backend_move_start(h, src, top, n);

	return e >= i ? e : top;
}

/* Best fit: the start of the shortest free run of at least n regions
 * outside [lo, hi) (free[] updated by earlier placements), or -1. */
static long best_run(struct kgc_heap *h, const uint8_t *freeok, uint32_t n, uint32_t src)
{
	long best = -1;
	uint32_t best_len = UINT32_MAX;

	for (uint32_t i = 0; i < h->nregions;) {
		uint32_t j = i;

		if (!freeok[i]) {
			i++;
			continue;
		}
		while (j < h->nregions && freeok[j])
			j++;
		if (j - i >= n && j - i < best_len) {
			best_len = j - i;
			best = (long)run_start(h, i, j, n, src);
		}
		i = j;
	}
	return best;
}

static int by_size_desc(const void *a, const void *b)
{
	const struct hreloc *x = a, *y = b;

	return x->n != y->n ? (x->n < y->n ? 1 : -1) : (x->src < y->src ? -1 : 1);
}

/* Destinations for the objects overlapping window w; false if one finds none. */
static bool place(struct kgc_heap *h, const uint8_t *cls, uint8_t *freeok, uint32_t w, uint32_t need,
		  struct hreloc *out, uint32_t *nout)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < h->nregions; i++)
		freeok[i] = cls[i] == HR_FREE && (i < w || i >= w + need);
	for (uint32_t i = w; i < w + need; i++) {
		const struct region *r = &h->regions[i];

		if (cls[i] == HR_MOVABLE && (i == w || r->type == RT_HUM_START))
			out[n++] = (struct hreloc){ .src = r->hum_start, .n = h->regions[r->hum_start].hum_count };
	}
	qsort(out, n, sizeof(*out), by_size_desc);
	for (uint32_t k = 0; k < n; k++) {
		long d = best_run(h, freeok, out[k].n, out[k].src);

		if (d < 0)
			return false;
		out[k].dst = (uint32_t)d;
		memset(freeok + d, 0, out[k].n);
	}
	*nout = n;
	return true;
}

/*
 * The moves that leave a run of need free regions: the cheapest window
 * (fewest regions to move) whose objects all find room elsewhere. out has
 * room for need entries; returns how many moves (0: none found, or the
 * run exists already).
 */
uint32_t kgci_humreloc_plan(struct kgc_heap *h, uint32_t need, struct hreloc *out)
{
	uint8_t *cls = malloc(h->nregions), *freeok = malloc(h->nregions);
	long best_cost = -1;
	uint32_t n = 0, tried = 0;

	if (!cls || !freeok || !need || need > h->nregions) {
		free(cls);
		free(freeok);
		return 0;
	}
	classify(h, cls);
	/* cheapest first: at most HR_TRIES windows whose placement fails */
	for (long cost = 1; tried < HR_TRIES; cost = best_cost + 1) {
		long w_best = -1;

		best_cost = -1;
		for (uint32_t w = 0; w + need <= h->nregions; w++) {
			long c = window_cost(h, cls, w, need);

			if (c == 0)
				goto out;	/* a free run exists: nothing to move */
			if (c >= cost && (best_cost < 0 || c < best_cost)) {
				best_cost = c;
				w_best = w;
			}
		}
		if (w_best < 0)
			break;
		/* every window of this cost, from the top */
		for (long w = (long)(h->nregions - need); w >= 0 && tried < HR_TRIES; w--) {
			if (window_cost(h, cls, (uint32_t)w, need) != best_cost)
				continue;
			tried++;
			if (place(h, cls, freeok, (uint32_t)w, need, out, &n))
				goto out;
		}
		n = 0;
	}
out:
	free(cls);
	free(freeok);
	return n;
}

/* Before the card scan: forwarding headers, sources in the collection
 * set, destinations taken (humongous, tracked, empty remembered sets). */
void kgci_humreloc_begin(struct kgc_heap *h, struct hreloc *m, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		struct region *s = &h->regions[m[j].src];
		char *dst = h->regions[m[j].dst].bottom;

		m[j].hdr = *obj_hdr(s->bottom);
		m[j].bytes = obj_size_h(s->bottom, m[j].hdr);
		*obj_hdr(s->bottom) = (uint64_t)(uintptr_t)dst | HDR_TAG_FWD;
		for (uint32_t k = 0; k < m[j].n; k++) {
			struct region *d = &h->regions[m[j].dst + k], *q = &h->regions[m[j].src + k];

			q->flags |= RF_CSET;
			kgci_region_set_type(h, d, k ? RT_HUM_CONT : RT_HUM_START);
			d->flags = RF_COMMITTED;
			d->fail_cause = FAIL_NONE;
			d->top = d->bottom + (size_t)(q->top - q->bottom);
			d->hum_start = m[j].dst;
			d->hum_count = k ? 0 : m[j].n;
			d->live_bytes = k ? 0 : s->live_bytes;
			d->pinspace = PS_NONE;
			d->eager = k ? EAGER_NO : EAGER_TRACKED;
			d->eager_reached = 0;
			kgci_region_track_update(h, d);
		}
	}
}

/* After weak cells: the pages move, the header goes back, the sources are freed. */
void kgci_humreloc_finish(struct kgc_heap *h, const struct hreloc *m, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		int err;

		if (kgci_policy_move_by_pages(h, m[j].bytes))
			err = kgci_backend_move_regions(h, m[j].src, m[j].dst, m[j].n);
		else
			err = kgci_backend_copy_regions(h, m[j].src, m[j].dst, m[j].n);
		if (err)	/* the bytes are there all the same; only the release failed */
			kgci_log_line(h, LOG_GC, "humongous move %u -> %u: source not released: %s",
				      m[j].src, m[j].dst, strerror(-err));
		*obj_hdr(h->regions[m[j].dst].bottom) = m[j].hdr;
		for (uint32_t k = 0; k < m[j].n; k++) {
			struct region *q = &h->regions[m[j].src + k];

			kgci_region_free(h, q);
			q->flags &= ~RF_CSET;
			if (!err)	/* released: reads zero */
				q->flags = (q->flags & ~RF_COMMITTED) | RF_ZEROED;
		}
		h->st.humongous_moved++;
		h->st.humongous_moved_bytes += m[j].bytes;
		h->st.humongous_moved_young++;
	}
}
