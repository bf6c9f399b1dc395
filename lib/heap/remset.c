/* SPDX-License-Identifier: MIT */
/*
 * remset.c - remembered sets of mixed-collection candidates (G1's per-region
 * HeapRegionRemSet, without its coarsening): the set of cards, in other old
 * or humongous regions, that held a reference into the region. An open
 * addressing hash set of card indices (index + 1, 0 = empty slot), grown at
 * half load. Entries go stale (the card's object died, or its region was
 * freed and reused) and are never removed: a mixed collection dirties the
 * cards that are still in old or humongous regions and the card scan finds
 * what is there now. Who adds: the marker's rebuild after cleanup, and young
 * pauses (a card found dirty, a copy into old space) through per-worker logs
 * merged at the pause's end (young.c); nothing else touches a set, so no
 * lock: the marker rebuilds between pauses only.
 */
#include <errno.h>
#include <stdlib.h>
#include "gc_internal.h"

static inline uint32_t rs_hash(uint32_t card, uint32_t mask)
{
	return (card * 2654435761u) & mask;
}

static int rs_grow(struct remset *rs)
{
	uint32_t ncap = rs->cap ? rs->cap * 2 : 64;
	uint32_t *nv, mask = ncap - 1;

	nv = calloc(ncap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	for (uint32_t i = 0; i < rs->cap; i++) {
		uint32_t e = rs->v[i], j;

		if (!e)
			continue;
		for (j = rs_hash(e - 1, mask); nv[j]; j = (j + 1) & mask)
			;
		nv[j] = e;
	}
	free(rs->v);
	rs->v = nv;
	rs->cap = ncap;
	return 0;
}

/* Add a card (index into h->cards) to a set of at most max (<=
 * REMSET_MAX_CARDS) cards; 0, or -E2BIG/-ENOMEM: the set is marked
 * overflowed and the region is dropped as a candidate (at cleanup, or by
 * the mixed collection that comes to it). */
int kgci_remset_add(struct remset *rs, uint32_t card, uint32_t max)
{
	uint32_t mask, j;

	if (rs->overflow)
		return -E2BIG;
	if (rs->n >= max) {
		if (kgci_remset_has(rs, card))
			return 0;
		rs->overflow = 1;
		return -E2BIG;
	}
	if ((rs->n + 1) * 2 > rs->cap) {
		int err = rs_grow(rs);

		if (err) {
			rs->overflow = 1;
			return err;
		}
	}
	mask = rs->cap - 1;
	for (j = rs_hash(card, mask); rs->v[j]; j = (j + 1) & mask)
		if (rs->v[j] == card + 1)
			return 0;
	rs->v[j] = card + 1;
	rs->n++;
	return 0;
}

bool kgci_remset_has(const struct remset *rs, uint32_t card)
{
	uint32_t mask = rs->cap - 1;

	if (!rs->cap)
		return false;
	for (uint32_t j = rs_hash(card, mask); rs->v[j]; j = (j + 1) & mask)
		if (rs->v[j] == card + 1)
			return true;
	return false;
}

/* Call fn on every card of the set (any order). */
void kgci_remset_each(const struct remset *rs, void (*fn)(uint32_t card, void *ctx), void *ctx)
{
	for (uint32_t i = 0; i < rs->cap; i++)
		if (rs->v[i])
			fn(rs->v[i] - 1, ctx);
}

void kgci_remset_clear(struct remset *rs)
{
	free(rs->v);
	*rs = (struct remset){ 0 };
}

struct dirty_ctx { struct kgc_heap *h; size_t dirtied; };

/* A remembered card still in an old or humongous region outside the
 * collection set, below its top: dirty, for the card scan. Stale ones (the
 * region was freed, reused as young, or evacuated now) are left alone. */
static void dirty_card(uint32_t card, void *arg)
{
	struct dirty_ctx *d = arg;
	struct kgc_heap *h = d->h;
	char *cs = h->base + ((size_t)card << KGC_CARD_SHIFT);
	const struct region *sr = region_of(h, cs);

	if ((sr->type != RT_OLD && sr->type != RT_HUM_START && sr->type != RT_HUM_CONT) ||
	    (sr->flags & RF_CSET) || cs >= sr->top)
		return;
	if (h->cards[card] != CARD_DIRTY) {
		kgci_card_dirty_index(h, card);
		d->dirtied++;
	}
}

/* At a pause, before the card scan: dirty every card of the set that the
 * scan will visit (see dirty_card), so it finds every reference the set
 * remembers; how many were not dirty already. */
size_t kgci_remset_dirty_cards(struct kgc_heap *h, const struct remset *rs)
{
	struct dirty_ctx d = { h, 0 };

	kgci_remset_each(rs, dirty_card, &d);
	return d.dirtied;
}
