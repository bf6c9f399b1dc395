/* SPDX-License-Identifier: MIT */
/*
 * compact_humongous.c - a full collection moves humongous objects too: the
 * live ones slide towards the top of the heap (where humongous allocation
 * takes its runs: region.c), into the holes dead ones and compacted old
 * regions left, so the free regions between them and the old space that
 * full.c slides down become one contiguous run. A move is a page move
 * (kgci_backend_move_regions: mremap on anonymous memory, the module's
 * REGION_MOVE) above policy.c's threshold, a copy below it.
 *
 * Plan (after full.c's forwarding, before its adjust phase, so every
 * reference - roots, objects, weak cells, identity hashes - is adjusted by
 * kgci_humc_forwardee with the rest): in descending address order, each
 * movable object takes the highest run of regions, at or above its own
 * start and below the last one placed, that the collection leaves free
 * (one that spans page tables at a distance the backend moves whole page
 * tables by: aligned_run).
 * Moves (after full.c's region bookkeeping: dead objects freed, compacted
 * regions emptied) run in the same order, so a destination only ever holds
 * regions already vacated. Objects with a pinned region (library pins,
 * critical sections, kernel pins), in the pinned-object space or registered
 * as kgc_io fixed buffers never move.
 */
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"
#include "heap/markbits.h"

static bool movable(struct kgc_heap *h, uint32_t s)
{
	const struct region *r = &h->regions[s];

	if (r->pinspace != PS_NONE || !mb_test(&h->full.mark, r->bottom))
		return false;
	for (uint32_t k = 0; k < r->hum_count; k++)
		if (kgci_region_pinned_now(h, s + k) || h->regions[s + k].fixed_rings)
			return false;
	return true;
}

/* Highest start in [lo, hi - n] of n regions free after the collection, or lo. */
static uint32_t highest_run(const uint8_t *busy, uint32_t lo, uint32_t hi, uint32_t n)
{
	uint32_t run = 0;

	for (uint32_t i = hi; i > lo; i--) {
		run = busy[i - 1] ? 0 : run + 1;
		if (run == n)
			return i - 1;
	}
	return lo;
}

/*
 * A page move is cheapest by a multiple of the backend's granule (whole
 * page tables move: kgci_backend_move_granule); an object that spans page
 * tables takes the highest free start at or below d that is, leaving at
 * most granule - 1 regions of the run above it, or stays where it is.
 * Objects below two page tables' worth move PTE by PTE anyway.
 */
static uint32_t aligned_run(struct kgc_heap *h, const uint8_t *busy, uint32_t i, uint32_t d, uint32_t n)
{
	uint32_t e = kgci_backend_move_start(h, i, d, n);

	if (e == d)
		return d;
	return e > i && !memchr(busy + e, 1, n) ? e : i;	/* a slide under g regions: stay */
}

/* Pinned and dead: stays, freed by a later collection (full.c). */
static bool kept_dead(struct kgc_heap *h, uint32_t s)
{
	for (uint32_t k = 0; k < h->regions[s].hum_count; k++)
		if (kgci_region_pinned_now(h, s + k))
			return true;
	return false;
}

void kgci_humc_plan(struct kgc_heap *h, const uint8_t *busy_in)
{
	uint8_t *busy = malloc(h->nregions);
	uint32_t hi = h->nregions;

	h->full.hum_planned = 0;
	memset(h->full.hum_dest, 0, h->nregions * sizeof(uint32_t));
	if (!busy)
		return;	/* nothing moves: compaction of humongous objects is an optimisation */
	memcpy(busy, busy_in, h->nregions);
	for (uint32_t i = h->nregions; i-- > 0;) {
		struct region *r = &h->regions[i];
		uint32_t n, d;

		if (r->type != RT_HUM_START)
			continue;
		n = r->hum_count;
		if (!movable(h, i)) {
			if (mb_test(&h->full.mark, r->bottom) || kept_dead(h, i)) {
				memset(busy + i, 1, n);	/* stays: a wall the ones below do not pass */
				hi = i;
			}
			continue;
		}
		d = aligned_run(h, busy, i, highest_run(busy, i, hi, n), n);
		memset(busy + d, 1, n);
		if (d != i) {
			h->full.hum_dest[i] = d + 1;
			h->full.hum_planned++;
		}
		hi = d;
	}
	free(busy);
}

/* Where the humongous object at p (start region r) goes this collection. */
char *kgci_humc_forwardee(struct kgc_heap *h, const struct region *r, char *p)
{
	uint32_t d = h->full.hum_dest[r - h->regions];

	return d ? h->base + ((size_t)(d - 1) << h->region_shift) : p;
}

/* The regions follow one object's move from s to d (n regions). */
static void move_regions_meta(struct kgc_heap *h, uint32_t s, uint32_t d, uint32_t n, size_t live)
{
	char *tops[n];
	uint8_t eager = h->regions[s].eager;	/* tracked: full.c builds its remembered set */

	for (uint32_t k = 0; k < n; k++)
		tops[k] = h->regions[s + k].top - h->regions[s + k].bottom + h->regions[d + k].bottom;
	for (uint32_t k = 0; k < n; k++) {
		struct region *r = &h->regions[s + k];

		kgci_region_free(h, r);
		r->flags = (r->flags & ~RF_COMMITTED) | RF_ZEROED;	/* released: reads zero */
	}
	for (uint32_t k = 0; k < n; k++) {
		struct region *r = &h->regions[d + k];

		kgci_region_set_type(h, r, k ? RT_HUM_CONT : RT_HUM_START);
		r->flags = RF_COMMITTED;
		r->top = tops[k];
		r->hum_start = d;
		r->hum_count = k ? 0 : n;
		r->live_bytes = k ? 0 : live;
		r->eager = k ? EAGER_NO : eager;
		kgci_region_track_update(h, r);
	}
	if (d < h->next_free_hint && d + n > h->next_free_hint)
		h->next_free_hint = d + n;
}

void kgci_humc_move(struct kgc_heap *h)
{
	for (uint32_t i = h->nregions; h->full.hum_planned && i-- > 0;) {
		struct region *r = &h->regions[i];
		uint32_t d = h->full.hum_dest[i], n;
		size_t bytes;
		int err;

		if (!d || r->type != RT_HUM_START)
			continue;
		d--;
		n = r->hum_count;
		bytes = obj_size(r->bottom);
		if (kgci_policy_move_by_pages(h, bytes))
			err = kgci_backend_move_regions(h, i, d, n);
		else
			err = kgci_backend_copy_regions(h, i, d, n);
		if (err)	/* the bytes are there all the same; only the release failed */
			kgci_log_line(h, LOG_GC, "humongous move %u -> %u: source not released: %s",
				      i, d, strerror(-err));
		move_regions_meta(h, i, d, n, r->live_bytes);
		h->full.hum_dest[i] = 0;
		h->full.hum_planned--;
		h->st.humongous_moved++;
		h->st.humongous_moved_bytes += bytes;
	}
}
