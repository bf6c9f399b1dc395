/* SPDX-License-Identifier: MIT */
/*
 * pinspace.c - the pinned-object space: kgc_alloc_array_pinned (alloc_pinned.c)
 * puts
 * primitive arrays where no collection ever moves them (.NET's
 * GC.AllocateArray(pinned: true)), for buffers a program hands the kernel
 * for good: kgc_io rings register the space's units as io_uring fixed
 * buffers (io_fixed.c).
 *
 * A unit is an old region of the space (objects up to a region's size,
 * bump-allocated) or the regions of one humongous object. Every region of
 * the space is pinned at every collection (kgci_pins_compute), so young,
 * mixed and full collections leave it in place; the concurrent cycle marks
 * its objects like any old object but does not sweep it concurrently (a
 * mutator may be allocating there): remark and the full collection call
 * kgci_pinspace_reclaim, which turns runs of dead objects into gaps for
 * later pinned allocations and takes a unit with nothing live out of the
 * space. A unit leaves (is freed, PS_NONE) at the end of a pause with no
 * cycle running, once no ring still has it registered (PS_LEAVING until
 * then: the kernel holds its pages). Gaps below a region's top are reused
 * only while no cycle runs (an object placed below TAMS would be unmarked);
 * during a cycle pinned allocations bump above the top or take a region.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

#define PS_GAP_MIN 256	/* smaller dead runs stay fillers until their region empties */

static void gen_bump(struct kgc_heap *h)
{
	atomic_fetch_add_explicit(&h->ps.gen, 1, memory_order_release);
}

static bool is_filler(const void *p)
{
	return hdr_kind(*obj_hdr(p)) == KIND_FILLER;
}

static void fill(struct kgc_heap *h, struct region *r, char *p, size_t n)
{
	kgci_obj_fill(p, n);
	kgci_bot_record(h, r, p, n);
}

static void gap_add(struct pinspace *ps, char *p, size_t n)
{
	if (ps->ngaps == ps->gaps_cap) {
		size_t nc = ps->gaps_cap ? ps->gaps_cap * 2 : 64;
		struct gap *v = realloc(ps->gaps, nc * sizeof(*v));

		if (!v)
			return;	/* it stays a filler */
		ps->gaps = v;
		ps->gaps_cap = nc;
	}
	ps->gaps[ps->ngaps++] = (struct gap){ p, n };
}

/* ------------------------------------------------------------ allocation */

/* h->lock held: a free region joins the space (a leaving empty one first:
 * the rings still have it registered). NULL if none is left. */
static struct region *region_join(struct kgc_heap *h, bool *zeroed)
{
	struct region *r;
	long idx = -1;

	if (h->ps.gaps_ok)
		for (uint32_t i = 0; i < h->nregions && idx < 0; i++)
			if (h->regions[i].pinspace == PS_LEAVING && h->regions[i].type == RT_OLD)
				idx = i;
	if (idx >= 0) {
		r = &h->regions[idx];
		r->top = r->bottom;	/* all filler: nothing below TAMS while no cycle runs */
		r->pinspace = PS_MEMBER;
		*zeroed = false;
		gen_bump(h);
		return r;
	}
	/* like humongous objects, the space leaves the to-space reserve alone */
	if (h->count[RT_FREE] < 1u + (h->alloc.eden_use_reserve ? 0 : 1))
		return NULL;
	idx = kgci_region_alloc_free(h, RT_OLD);
	if (idx < 0)
		return NULL;
	r = &h->regions[idx];
	*zeroed = r->flags & RF_ZEROED;
	r->flags &= ~RF_ZEROED;
	r->pinspace = PS_MEMBER;
	h->ps.nunits++;
	gen_bump(h);
	return r;
}

/* h->lock held: size bytes in a gap of the last reclaim (no cycle runs). */
static char *gap_take(struct kgc_heap *h, size_t size)
{
	struct pinspace *ps = &h->ps;

	for (size_t k = 0; k < ps->ngaps; k++) {
		struct gap *g = &ps->gaps[k];
		char *p = g->start;

		if (g->size < size)
			continue;
		g->start += size;
		g->size -= size;
		if (g->size)
			fill(h, region_of(h, p), g->start, g->size);
		if (g->size < PS_GAP_MIN)
			*g = ps->gaps[--ps->ngaps];
		return p;
	}
	return NULL;
}

/* h->lock held: size bytes (at most a region) of a unit of the space. */
char *kgci_pinspace_alloc(struct kgc_heap *h, size_t size, bool *zeroed)
{
	struct pinspace *ps = &h->ps;
	struct region *r = ps->cur1 ? &h->regions[ps->cur1 - 1] : NULL;
	char *p;

	/* dead arrays' space first (while no cycle runs), then the bump region */
	if (ps->gaps_ok && ps->ngaps && (p = gap_take(h, size))) {
		*zeroed = false;
		kgci_bot_record(h, region_of(h, p), p, size);
		return p;
	}
	if (!r || (size_t)(r->end - r->top) < size) {
		if (!(r = region_join(h, &ps->cur_zeroed)))
			return NULL;
		ps->cur1 = (uint32_t)(r - h->regions) + 1;
	}
	p = r->top;
	r->top += size;
	*zeroed = ps->cur_zeroed;
	kgci_bot_record(h, r, p, size);
	return p;
}

/* h->lock held: the humongous object at p (kgci_alloc_humongous's) becomes a
 * unit of the space. */
void kgci_pinspace_adopt(struct kgc_heap *h, char *p)
{
	uint32_t first = region_index(h, p);

	for (uint32_t i = first; i < first + h->regions[first].hum_count; i++)
		h->regions[i].pinspace = PS_MEMBER;
	h->ps.nunits++;
	gen_bump(h);
}

/* --------------------------------------------------------------- reclaim */

/* The unit at region i (member) has nothing live: out of the space at the
 * next pause with no cycle, once no ring has it registered. */
static void unit_leave(struct kgc_heap *h, uint32_t i)
{
	struct region *r = &h->regions[i];
	uint32_t n = r->type == RT_HUM_START ? r->hum_count : 1;

	if (r->type == RT_OLD && r->top > r->bottom)
		fill(h, r, r->bottom, (size_t)(r->top - r->bottom));
	for (uint32_t k = i; k < i + n; k++)
		h->regions[k].pinspace = PS_LEAVING;
	if (h->ps.cur1 == i + 1)
		h->ps.cur1 = 0;
	gen_bump(h);
}

/* Region r (member, old): runs of dead objects become fillers, the long
 * ones gaps; true if anything is live. */
static bool region_reclaim(struct kgc_heap *h, struct region *r, ps_live_fn live, void *ctx)
{
	char *p = r->bottom, *dead = NULL;
	bool any = false;

	while (p < r->top) {
		size_t sz = obj_size(p);

		if (!is_filler(p) && live(h, p, ctx)) {
			if (dead) {
				fill(h, r, dead, (size_t)(p - dead));
				if ((size_t)(p - dead) >= PS_GAP_MIN)
					gap_add(&h->ps, dead, (size_t)(p - dead));
			}
			dead = NULL;
			any = true;
		} else if (!dead) {
			dead = p;
		}
		p += sz;
	}
	if (any && dead) {
		fill(h, r, dead, (size_t)(r->top - dead));
		if ((size_t)(r->top - dead) >= PS_GAP_MIN)
			gap_add(&h->ps, dead, (size_t)(r->top - dead));
	}
	return any;
}

/*
 * At remark (live: marked or above TAMS) and in a full collection (live:
 * marked), h->lock held: every member unit is reclaimed in place and the
 * gap list rebuilt. Leaving units are left alone.
 */
void kgci_pinspace_reclaim(struct kgc_heap *h, ps_live_fn live, void *ctx)
{
	h->ps.ngaps = 0;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->pinspace != PS_MEMBER)
			continue;
		if (r->type == RT_HUM_START ? !live(h, r->bottom, ctx)
		    : r->type == RT_OLD && !region_reclaim(h, r, live, ctx))
			unit_leave(h, i);
	}
}

/* End of every pause: gaps usable while no cycle runs; leaving units no
 * ring holds any more are freed (only then: their TAMS are all bottom). */
void kgci_pinspace_after_gc(struct kgc_heap *h, bool cycle_idle)
{
	h->ps.gaps_ok = cycle_idle;
	if (!cycle_idle || !h->ps.nunits)
		return;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];
		uint32_t n;

		if (r->pinspace != PS_LEAVING || r->fixed_rings ||
		    (r->type != RT_OLD && r->type != RT_HUM_START))
			continue;
		n = r->type == RT_HUM_START ? r->hum_count : 1;
		for (uint32_t k = i; k < i + n; k++)
			kgci_region_free(h, &h->regions[k]);
		h->ps.nunits--;
		gen_bump(h);
	}
}

size_t kgci_pinspace_unit_bytes(struct kgc_heap *h, uint32_t i)
{
	const struct region *r = &h->regions[i];

	if (r->pinspace != PS_MEMBER)
		return 0;
	if (r->type == RT_OLD)
		return h->region_size;
	return r->type == RT_HUM_START ? (size_t)r->hum_count << h->region_shift : 0;
}

/* h->lock held (kgci_stats_refresh). */
void kgci_pinspace_stats_refresh(struct kgc_heap *h)
{
	uint32_t n = 0;
	uint64_t used = 0;

	for (uint32_t i = 0; i < h->nregions && h->ps.nunits; i++) {
		const struct region *r = &h->regions[i];

		if (!r->pinspace)
			continue;
		n++;
		if (r->pinspace == PS_MEMBER)
			used += (uint64_t)(r->top - r->bottom);
	}
	for (size_t k = 0; k < h->ps.ngaps; k++)
		used -= h->ps.gaps[k].size;
	h->st.pinned_space_regions = n;
	h->st.pinned_space_bytes = used;
}

void kgci_pinspace_destroy(struct kgc_heap *h)
{
	free(h->ps.gaps);
	memset(&h->ps, 0, sizeof(h->ps));
}
