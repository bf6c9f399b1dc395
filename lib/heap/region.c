/* SPDX-License-Identifier: MIT */
/* region.c - region types, checked transitions, free-region search. */
#include "gc_internal.h"

static const char *const names[RT_COUNT] = {
	"free", "eden", "survivor", "old", "humongous-start", "humongous-continues",
};

const char *kgci_region_type_name(int t)
{
	return t >= 0 && t < RT_COUNT ? names[t] : "?";
}

/* Allowed transitions: from -> bitmask of to. */
static const uint8_t allowed[RT_COUNT] = {
	[RT_FREE] = 1 << RT_EDEN | 1 << RT_SURVIVOR | 1 << RT_OLD | 1 << RT_HUM_START | 1 << RT_HUM_CONT,
	[RT_EDEN] = 1 << RT_FREE | 1 << RT_OLD,		/* evacuated / failed or full GC */
	[RT_SURVIVOR] = 1 << RT_FREE | 1 << RT_OLD,
	[RT_OLD] = 1 << RT_FREE,
	[RT_HUM_START] = 1 << RT_FREE,
	[RT_HUM_CONT] = 1 << RT_FREE,
};

void kgci_region_set_type(struct kgc_heap *h, struct region *r, int type)
{
	if (type == r->type)
		return;
	if (!(allowed[r->type] & (1u << type)))
		kgci_fatal("region %u: illegal transition %s -> %s", (unsigned)(r - h->regions),
		      kgci_region_type_name(r->type), kgci_region_type_name(type));
	h->count[r->type]--;
	h->count[type]++;
	r->type = (uint8_t)type;
	kgci_region_track_update(h, r);
}

/*
 * The write barrier's filter (kgc.h): references into a region are carded
 * unless it is plain old or humongous - young, free (about to be eden),
 * retained and mixed candidates need their incoming references found by the
 * card scan. Set when a region's type, retained or candidate changes: by a
 * pause, or by the thread that takes a free region (already nonzero) or
 * starts a humongous object (no reference to it exists yet). A stale
 * nonzero only cards a store more; a region becomes tracked only from
 * nonzero free, or in a pause (retained, candidates at remark).
 */
void kgci_region_track_update(struct kgc_heap *h, struct region *r)
{
	uint8_t t = !(r->type == RT_OLD || r->type == RT_HUM_START || r->type == RT_HUM_CONT) ||
		    r->retained || r->candidate || r->eager == EAGER_TRACKED;

	__atomic_store_n(&h->region_track[r - h->regions], t, __ATOMIC_RELAXED);
}

static void region_take(struct kgc_heap *h, struct region *r, int type)
{
	kgci_region_set_type(h, r, type);
	r->top = r->bottom;
	r->flags |= RF_COMMITTED;
	r->flags &= ~(RF_CSET | RF_FAILED | RF_PINNED | RF_KPINNED);
	/* RF_ZEROED stays until the caller has looked at it (eden, humongous) */
	r->fail_cause = FAIL_NONE;
	r->live_bytes = 0;
	r->pinspace = PS_NONE;
	r->eager = EAGER_NO;
	r->eager_reached = 0;
}

/* More than `limit` free regions backed by memory (kgci_region_backed)? */
static bool backed_free_above(const struct kgc_heap *h, uint32_t limit)
{
	uint32_t backed = 0;

	for (uint32_t i = h->next_free_hint; i < h->nregions; i++)
		if (h->regions[i].type == RT_FREE && kgci_region_backed(&h->regions[i]) && ++backed > limit)
			return true;
	return false;
}

/*
 * With h->lock held (or at a safepoint). Prefers low addresses (compaction)
 * and regions already backed by memory: a first touch costs page faults,
 * and reusing backed regions keeps the footprint small. Except eden while
 * the backed free regions are no more than the next pause's to-space needs
 * (kgci_policy_tospace_backed): those stay for the pause, and eden takes
 * fresh memory, whose first touches its mutators pay outside pauses (and
 * which needs no clearing). Otherwise eden took every region pretouch.c
 * had just backed, and a growing heap's pauses faulted their to-space in:
 * the first pause of GCBench and churn copied at ~4 ns/B against ~2.5
 * afterwards.
 * Among backed regions eden prefers those backed ahead of it and still
 * zero (pretouch.c: no faults and no clearing), everything else those
 * used before (the zero ones are eden's).
 */
static int free_rank(const struct region *r, int type, bool eden_backed)
{
	bool zero = r->flags & RF_ZEROED, backed = kgci_region_backed(r);

	if (type != RT_EDEN)
		return !backed ? 2 : zero ? 1 : 0;
	if (eden_backed)
		return !backed ? 2 : zero ? 0 : 1;
	return !backed ? 0 : zero ? 1 : 2;
}

long kgci_region_alloc_free(struct kgc_heap *h, int type)
{
	uint32_t n = h->nregions;

	if (!h->count[RT_FREE])
		return -1;
	/* next_free_hint: no free region below it */
	long first = -1;
	int best = 3;
	bool eden_backed = type == RT_EDEN && backed_free_above(h, kgci_policy_tospace_backed(h));

	for (uint32_t i = h->next_free_hint; i < n && best; i++) {
		struct region *r = &h->regions[i];
		int rank;

		if (r->type != RT_FREE || r->quarantined)
			continue;
		rank = free_rank(r, type, eden_backed);
		if (rank < best) {
			best = rank;
			first = i;
		}
	}
	if (first < 0 && h->nquarantine) {
		kgci_stale_release(h, true);	/* KGC_STALE_CHECK: quarantine gives way */
		return kgci_region_alloc_free(h, type);
	}
	if (first < 0)
		return -1;
	region_take(h, &h->regions[first], type);
	if ((uint32_t)first == h->next_free_hint)
		h->next_free_hint = (uint32_t)first + 1;
	return first;
}

long kgci_region_alloc_contig(struct kgc_heap *h, uint32_t cnt)
{
	uint32_t run = 0;

	if (h->count[RT_FREE] < cnt)
		return -1;
	/* from the top of the heap: keeps humongous objects out of the way of compaction */
	if (h->nquarantine)
		kgci_stale_release(h, true);	/* humongous: rare, wants contiguous space */
	for (long i = (long)h->nregions - 1; i >= 0; i--) {
		if (h->regions[i].type != RT_FREE) {
			run = 0;
			continue;
		}
		if (++run == cnt) {
			for (uint32_t k = 0; k < cnt; k++) {
				struct region *r = &h->regions[i + k];

				region_take(h, r, k ? RT_HUM_CONT : RT_HUM_START);
				r->hum_start = (uint32_t)i;
				r->hum_count = k ? 0 : cnt;
			}
			return i;
		}
	}
	return -1;
}

void kgci_region_free(struct kgc_heap *h, struct region *r)
{
	uint32_t idx = (uint32_t)(r - h->regions);

	kgci_region_set_type(h, r, RT_FREE);
	r->flags &= ~RF_ZEROED;
	if (idx < h->next_free_hint)
		h->next_free_hint = idx;
	r->top = r->bottom;
	r->flags &= RF_COMMITTED;
	r->fail_cause = FAIL_NONE;
	r->hum_count = 0;
	r->live_bytes = 0;
	r->retained = 0;
	r->candidate = 0;
	r->pinspace = PS_NONE;
	kgci_remset_clear(&r->rs);
	r->free_gc = h->gc_id;
	r->free_ns = kgci_now_ns();
	kgci_cards_clear_region(h, r);
}

/* Bytes in use: region tops, humongous regions whole, less the swept gaps
 * waiting for promotion. */
size_t kgci_heap_used_bytes(struct kgc_heap *h)
{
	size_t used = 0;

	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type == RT_HUM_START || r->type == RT_HUM_CONT)
			used += h->region_size;
		else if (r->type != RT_FREE)
			used += (size_t)(r->top - r->bottom);
	}
	/* swept gaps waiting for promotion are free space */
	return used > h->chunk_bytes ? used - h->chunk_bytes : 0;
}
