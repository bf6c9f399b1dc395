/* SPDX-License-Identifier: MIT */
/*
 * full.c - stop-the-world full collection: mark (side bitmap), then sliding
 * compaction region by region (LISP2 style with the forwarding address
 * computed from a per-512-byte-block destination table plus the mark bitmap,
 * so headers are never overwritten). Pinned regions are never moved: their
 * dead objects become fillers. Humongous objects are freed when dead and not
 * pinned; live ones move by pages (compact_humongous.c) unless pinned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "heap/markbits.h"

#define BLOCK_SHIFT 9	/* 512 bytes = 64 words = one bitmap word */

static void mark_push(struct kgc_heap *h, kgc_obj o)
{
	if (unlikely(h->full.stack_len == h->full.stack_cap))
		h->full.stack = kgci_array_grow(h->full.stack, &h->full.stack_cap, sizeof(*h->full.stack), "full GC mark stack");
	h->full.stack[h->full.stack_len++] = (kgc_obj *)o;
}

static void mark_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = *slot;

	(void)ctx;
	if (mb_set(&h->full.mark, o))
		mark_push(h, o);
}

/* Everything reachable from the mark stack. */
static void mark_drain(struct kgc_heap *h, void *ctx)
{
	while (h->full.stack_len) {
		kgc_obj o = (kgc_obj)h->full.stack[--h->full.stack_len];

		kgci_obj_iterate_refs(h, o, mark_slot, ctx);
	}
}

static bool full_live(struct kgc_heap *h, const void *p, void *ctx)
{
	(void)ctx;
	return mb_test(&h->full.mark, p);
}

static inline bool compactable(const struct region *r)
{
	return (r->type == RT_EDEN || r->type == RT_SURVIVOR || r->type == RT_OLD) &&
	       !(r->flags & (RF_PINNED | RF_KPINNED | RF_PRETOUCH));
}

/* New address of p (marked, in a compacted region). */
static char *forwardee(struct kgc_heap *h, char *p)
{
	struct region *r = region_of(h, p);
	size_t b, bit;
	uint64_t bits;
	char *d, *bs;

	if (r->type == RT_HUM_START)
		return kgci_humc_forwardee(h, r, p);
	if (!(r->flags & RF_CSET))
		return p;
	b = (size_t)(p - h->base) >> BLOCK_SHIFT;
	d = h->full.block_dest[b];
	bs = h->base + (b << BLOCK_SHIFT);
	bit = (size_t)(p - bs) / WORD;
	bits = mb_word(&h->full.mark, bs) & ((1ull << bit) - 1);	/* block = exactly one bitmap word */
	while (bits) {
		char *q = bs + (size_t)__builtin_ctzll(bits) * WORD;

		d += obj_size(q);
		bits &= bits - 1;
	}
	return d;
}

/* The object whose slots are adjusted: where it is, where it goes. */
struct adj { char *obj, *to; };

/* A reference into a humongous object tracked for eager reclaim and
 * relocation (young.c): logged for its remembered set, by where both end
 * up (full_remember, once everything moved). */
static void hum_log(struct kgc_heap *h, const struct adj *a, kgc_obj *slot, char *o, char *n)
{
	const struct region *r = region_of(h, o);
	char *fslot = a->to + ((char *)slot - a->obj);

	if (r->type != RT_HUM_START || r->eager != EAGER_TRACKED || o != r->bottom)
		return;
	if (unlikely(h->full.nhlog == h->full.hlog_cap))
		h->full.hlog = kgci_array_grow(h->full.hlog, &h->full.hlog_cap, sizeof(*h->full.hlog),
					       "full GC humongous references");
	h->full.hlog[h->full.nhlog++] = (uint64_t)region_index(h, n) << 32 | card_index(h, fslot);
}

/* ctx: the struct adj of the object holding slot, NULL for roots. */
static void adjust_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	char *o = (char *)*slot, *n = forwardee(h, o);

	if (n != o)
		*slot = (kgc_obj)n;
	if (ctx)
		hum_log(h, ctx, slot, o, n);
}

/* After the moves: the logged references go to their objects' remembered sets. */
static void full_remember(struct kgc_heap *h)
{
	uint32_t max = kgci_policy_remset_max(h);

	for (size_t k = 0; k < h->full.nhlog; k++) {
		struct region *t = &h->regions[h->full.hlog[k] >> 32];

		if (t->type == RT_HUM_START && t->eager == EAGER_TRACKED)
			kgci_remset_add(&t->rs, (uint32_t)h->full.hlog[k], max);
	}
	h->full.nhlog = 0;
}

/* Weak cells: dead unless marked; then at their new address. */
static kgc_obj weak_alive_marked(struct kgc_heap *h, kgc_obj o, void *ctx)
{
	(void)ctx;
	return mb_test(&h->full.mark, o) ? o : NULL;
}

static kgc_obj weak_forwardee(struct kgc_heap *h, kgc_obj o, void *ctx)
{
	(void)ctx;
	return (kgc_obj)forwardee(h, (char *)o);
}

static void fill_dead(struct kgc_heap *h, struct region *r)
{
	char *p = r->bottom, *dead = NULL;

	while (p < r->top) {
		size_t sz = obj_size(p);

		if (mb_test(&h->full.mark, p)) {
			if (dead)
				kgci_obj_fill(dead, (size_t)(p - dead));
			dead = NULL;
		} else if (!dead) {
			dead = p;
		}
		p += sz;
	}
	if (dead)
		kgci_obj_fill(dead, (size_t)(r->top - dead));
}

/* One full collection's state, shared by its phases. */
struct full {
	struct kgc_heap *h;
	uint32_t *list, n;	/* compacted regions, in address order */
	uint32_t di;		/* destination: list index of the last one used */
	char **new_top;		/* per destination: its top after compaction */
	uint8_t *was_used;	/* per region: not free when the collection began */
	size_t moved;
};

static void full_prepare(struct full *f, uint32_t *npinned)
{
	struct kgc_heap *h = f->h;

	f->list = malloc(h->nregions * sizeof(uint32_t));
	f->new_top = malloc(h->nregions * sizeof(char *));
	f->was_used = malloc(h->nregions);
	if (!f->list || !f->new_top || !f->was_used)
		kgci_fatal("full GC: out of memory");
	h->young.surv_cur = h->young.old_cur = h->young.old_keep = -1;	/* compaction moves all */
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->retained = 0;	/* compaction handles formerly pinned regions */
		r->candidate = 0;
		/* a tracked humongous object stays tracked: the adjust phase logs
		 * the references into it for its remembered set (hum_log) */
		if (r->type != RT_HUM_START || r->eager != EAGER_TRACKED || r->pinspace ||
		    hdr_kind(*obj_hdr(r->bottom)) != KIND_PRIM_ARRAY)	/* as young.c's eager_select */
			r->eager = EAGER_NO;
		kgci_remset_clear(&r->rs);
		kgci_region_track_update(h, r);
		/* the mark bitmap is all clear outside collections and verification */
		f->was_used[i] = r->type != RT_FREE;
		if (r->flags & (RF_PINNED | RF_KPINNED) && r->type != RT_FREE)
			(*npinned)++;
	}
}

/* 1. mark everything reachable; weak cells of unmarked objects are cleared */
static void full_mark(struct full *f)
{
	struct kgc_heap *h = f->h;

	h->full.stack_len = 0;
	kgci_roots_iterate(h, mark_slot, NULL);
	kgci_roots_iterate_critical(h, mark_slot, NULL);
	mark_drain(h, NULL);
	kgci_weak_ephemerons(h, weak_alive_marked, mark_slot, mark_drain, NULL);
	kgci_weak_process(h, weak_alive_marked, NULL);
}

/* 2. forwarding: slide live objects of compactable regions towards the
 * bottom; per 512-byte block, where its first live object goes */
static void full_forward(struct full *f)
{
	struct kgc_heap *h = f->h;
	char *dtop, *dend, *p;

	f->n = f->di = 0;
	for (uint32_t i = 0; i < h->nregions; i++)
		if (compactable(&h->regions[i])) {
			h->regions[i].flags |= RF_CSET;
			f->list[f->n++] = i;
		}
	if (!f->n)
		return;
	dtop = h->regions[f->list[0]].bottom;
	dend = h->regions[f->list[0]].end;
	for (uint32_t k = 0; k < f->n; k++) {
		struct region *r = &h->regions[f->list[k]];
		size_t cur_block = SIZE_MAX, block_bytes = 0;
		char *block_start = NULL;

		MB_FOR_EACH(&h->full.mark, r->bottom, r->top, p) {
			size_t sz = obj_size(p), b = (size_t)(p - h->base) >> BLOCK_SHIFT;

			if (b != cur_block) {
				cur_block = b;
				block_start = dtop;
				block_bytes = 0;
				h->full.block_dest[b] = dtop;
			}
			if (dtop + sz > dend) {
				/* the whole block moves on to the next destination region */
				f->new_top[f->di] = block_start;
				f->di++;
				dtop = h->regions[f->list[f->di]].bottom;
				dend = h->regions[f->list[f->di]].end;
				h->full.block_dest[b] = dtop;
				dtop += block_bytes;
			}
			dtop += sz;
			block_bytes += sz;
			r->live_bytes += sz;
		}
	}
	f->new_top[f->di] = dtop;
}

/* 2b. where humongous objects go: into what the collection leaves free
 * (regions neither kept by compaction nor pinned nor in use otherwise) */
static void full_forward_humongous(struct full *f)
{
	struct kgc_heap *h = f->h;
	uint8_t *busy = malloc(h->nregions);

	if (!busy)
		kgci_fatal("full GC: out of memory");
	for (uint32_t i = 0; i < h->nregions; i++) {
		const struct region *r = &h->regions[i];

		busy[i] = r->type == RT_FREE ? r->quarantined :
			  r->type == RT_HUM_START || r->type == RT_HUM_CONT ? 0 : !(r->flags & RF_CSET);
	}
	for (uint32_t k = 0; k <= f->di && k < f->n; k++)
		busy[f->list[k]] = f->new_top[k] > h->regions[f->list[k]].bottom;
	kgci_humc_plan(h, busy);
	free(busy);
}

/* 3. adjust references everywhere: roots, weak cells, every live object */
static void full_adjust(struct full *f)
{
	struct kgc_heap *h = f->h;
	char *p;

	kgci_roots_iterate(h, adjust_slot, NULL);
	kgci_weak_process(h, weak_forwardee, NULL);
	kgci_weak_values(h, adjust_slot, NULL);
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type == RT_FREE || r->type == RT_HUM_CONT)
			continue;
		if (r->type == RT_HUM_START) {
			struct adj a = { r->bottom, forwardee(h, r->bottom) };

			if (mb_test(&h->full.mark, r->bottom))
				kgci_obj_iterate_refs(h, (kgc_obj)r->bottom, adjust_slot, &a);
			continue;
		}
		MB_FOR_EACH(&h->full.mark, r->bottom, r->top, p) {
			struct adj a = { p, forwardee(h, p) };

			kgci_obj_iterate_refs(h, (kgc_obj)p, adjust_slot, &a);
		}
	}
}

/* 4. compact: move every live object of the compacted regions */
static void full_compact(struct full *f)
{
	struct kgc_heap *h = f->h;
	char *p;

	for (uint32_t k = 0; k < f->n; k++) {
		struct region *r = &h->regions[f->list[k]];
		size_t cur_block = SIZE_MAX;
		char *d = NULL;

		MB_FOR_EACH(&h->full.mark, r->bottom, r->top, p) {
			size_t sz = obj_size(p), b = (size_t)(p - h->base) >> BLOCK_SHIFT;

			if (b != cur_block) {
				cur_block = b;
				d = h->full.block_dest[b];
			}
			if (d != p) {
				memmove(d, p, sz);
				f->moved += sz;
			}
			d += sz;
		}
	}
}

/* 5. regions: compacted ones keep their new top or are freed; dead humongous
 * objects are freed; pinned regions keep their place, dead objects filled */
static void full_regions(struct full *f)
{
	struct kgc_heap *h = f->h;

	for (uint32_t k = 0; k < f->n; k++) {
		struct region *r = &h->regions[f->list[k]];

		if (k <= f->di && f->new_top[k] > r->bottom) {
			if (h->opt.poison && r->top > f->new_top[k])
				memset(f->new_top[k], 0xde, (size_t)(r->top - f->new_top[k]));
			r->top = f->new_top[k];
			kgci_region_set_type(h, r, RT_OLD);
		} else {
			if (h->opt.poison)
				memset(r->bottom, 0xde, (size_t)(r->top - r->bottom));
			kgci_region_free(h, r);
		}
	}
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type == RT_HUM_START) {
			bool pinned = false;

			for (uint32_t k = 0; k < r->hum_count; k++)
				pinned |= kgci_region_pinned_now(h, i + k);
			if (!mb_test(&h->full.mark, r->bottom) && !pinned) {
				uint32_t cnt = r->hum_count;

				for (uint32_t k = 0; k < cnt; k++)
					kgci_region_free(h, &h->regions[i + k]);
			}
		} else if (r->type != RT_FREE && r->type != RT_HUM_CONT && !(r->flags & RF_CSET)) {
			fill_dead(h, r);
			if (r->type != RT_OLD)
				kgci_region_set_type(h, r, RT_OLD);
		}
	}
	kgci_pinspace_reclaim(h, full_live, h);	/* pinned: never moved, reclaimed in place */
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (f->was_used[i]) {
			kgci_markbits_clear(&h->full.mark, r->bottom, r->end);
			kgci_cards_clear_region(h, r);	/* no young objects are left */
		}
		r->flags &= ~RF_CSET;
		if (r->type == RT_OLD)
			kgci_bot_rebuild(h, r);
	}
}

void kgci_full_collect(struct kgc_heap *h, uint32_t *npinned)
{
	struct full f = { .h = h };
	size_t used_before = kgci_heap_used_bytes(h), after;
	uint64_t hum_before = h->st.humongous_moved, hum_bytes_before = h->st.humongous_moved_bytes;
	uint64_t copies_before = h->be.move_copies;

	full_prepare(&f, npinned);
	full_mark(&f);
	full_forward(&f);
	full_forward_humongous(&f);
	full_adjust(&f);
	full_compact(&f);
	full_regions(&f);
	kgci_humc_move(h);
	full_remember(h);
	h->alloc.eden_cur = -1;
	after = kgci_heap_used_bytes(h);
	h->st.bytes_freed += used_before > after ? used_before - after : 0;
	kgci_log_line(h, LOG_HEAP, "full: moved %zuK, humongous %llu (%lluK, %llu by copying); "
		      "regions: old %u humongous %u free %u", f.moved >> 10,
		      (unsigned long long)(h->st.humongous_moved - hum_before),
		      (unsigned long long)((h->st.humongous_moved_bytes - hum_bytes_before) >> 10),
		      (unsigned long long)(h->be.move_copies - copies_before), h->count[RT_OLD], h->count[RT_HUM_START] + h->count[RT_HUM_CONT],
		      h->count[RT_FREE]);
	free(f.list);
	free(f.new_top);
	free(f.was_used);
}

int kgci_full_init(struct kgc_heap *h)
{
	size_t heap = (size_t)h->nregions << h->region_shift;

	h->full.block_dest = kgci_os_alloc((heap >> BLOCK_SHIFT) * sizeof(char *));
	h->full.hum_dest = calloc(h->nregions, sizeof(uint32_t));
	if (kgci_markbits_init(&h->full.mark, h->base, heap) || !h->full.block_dest || !h->full.hum_dest) {
		kgci_full_destroy(h);
		return -ENOMEM;
	}
	return 0;
}

void kgci_full_destroy(struct kgc_heap *h)
{
	size_t heap = (size_t)h->nregions << h->region_shift;

	kgci_markbits_destroy(&h->full.mark);
	if (h->full.block_dest)
		kgci_os_free(h->full.block_dest, (heap >> BLOCK_SHIFT) * sizeof(char *));
	free(h->full.stack);
	free(h->full.hum_dest);
	free(h->full.hlog);
	memset(&h->full, 0, sizeof(h->full));
}
