/* SPDX-License-Identifier: MIT */
/*
 * young.c - stop-the-world evacuation of eden and survivor regions.
 *
 * Roots (frames, handles, open critical arrays) and the dirty cards of old
 * and humongous regions are processed; every reachable young object is
 * copied (work stack, per-destination allocation regions) to a survivor
 * region, or to an old one once its age reaches the tenuring threshold.
 *
 * Evacuation failure: a region that is pinned (critical sections, or the
 * kernel via PIN_QUERY) is not evacuated at all; when to-space runs out an
 * object is "self-forwarded" in place. Such objects are marked in their
 * header (tag 10), scanned like copied ones, and their region becomes old;
 * unmarked objects in it become fillers.
 */
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

struct ygc {
	struct kgc_heap *h;
	unsigned tenure;
	uint32_t surv_limit;
	bool surv_full, old_full, inject;
	size_t copied, promoted;
	uint32_t tospace_regions;
};

static void push(struct kgc_heap *h, kgc_obj o)
{
	if (unlikely(h->stack_len == h->stack_cap)) {
		size_t nc = h->stack_cap ? h->stack_cap * 2 : 4096;
		kgc_obj **ns = realloc(h->stack, nc * sizeof(*ns));

		if (!ns)
			fatal("young GC: out of memory for the work stack (%zu entries)", nc);
		h->stack = ns;
		h->stack_cap = nc;
	}
	h->stack[h->stack_len++] = (kgc_obj *)o;
}

static char *gc_alloc(struct ygc *y, size_t size, bool old)
{
	struct kgc_heap *h = y->h;
	long *cur = old ? &h->old_cur : &h->surv_cur;
	struct region *r;
	long idx;

	if (*cur >= 0) {
		r = &h->regions[*cur];
		if ((size_t)(r->end - r->top) >= size) {
			r->top += size;
			return r->top - size;
		}
	}
	if (y->inject || (old ? y->old_full : y->surv_full))
		return NULL;
	if (!old && h->surv_regions >= y->surv_limit) {
		y->surv_full = true;
		return NULL;
	}
	idx = region_alloc_free(h, old ? RT_OLD : RT_SURVIVOR);
	if (idx < 0) {
		y->surv_full = y->old_full = true;
		return NULL;
	}
	r = &h->regions[idx];
	r->flags |= RF_GC_ALLOC;
	y->tospace_regions++;
	if (!old)
		h->surv_regions++;
	if (*cur >= 0) {
		struct region *pr = &h->regions[*cur];

		/* keep the previous one parsable up to its end: nothing to do, parsing stops at top */
		(void)pr;
	}
	*cur = idx;
	r->top += size;
	return r->top - size;
}

static kgc_obj evacuate(struct ygc *y, kgc_obj o, uint64_t hd)
{
	struct kgc_heap *h = y->h;
	size_t size = obj_size_h(o, hd);
	unsigned age = hdr_age(hd) + 1;
	bool old = age >= y->tenure;
	char *dst = NULL;

	if (age > HDR_AGE_MAX)
		age = HDR_AGE_MAX;
	if (!old && !(dst = gc_alloc(y, size, false)))
		old = true;
	if (old)
		dst = gc_alloc(y, size, true);
	if (unlikely(!dst)) {
		/* to-space exhausted: keep the object where it is */
		struct region *r = region_of(h, o);

		*obj_hdr(o) = (hd & ~HDR_TAG_MASK) | HDR_TAG_FAILED;
		if (!(r->flags & RF_FAILED)) {
			r->flags |= RF_FAILED;
			r->fail_cause = FAIL_ALLOC;
		}
		push(h, o);
		return o;
	}
	memcpy(dst, o, size);
	*obj_hdr(dst) = hdr_with_age(hd, age);
	if (old) {
		bot_record(h, region_of(h, dst), dst, size);
		y->promoted += size;
	}
	h->age_bytes[age] += size;	/* promoted or not: the age table sees every survivor */
	y->copied += size;
	*obj_hdr(o) = (uint64_t)(uintptr_t)dst | HDR_TAG_FWD;
	push(h, (kgc_obj)dst);
	return (kgc_obj)dst;
}

/* New location of young object o (copying or marking it in place). */
static inline kgc_obj process(struct ygc *y, kgc_obj o)
{
	struct region *r = region_of(y->h, o);
	uint64_t hd;

	if (!(r->flags & RF_CSET))
		return o;
	hd = *obj_hdr(o);
	if (hdr_is_fwd(hd))
		return (kgc_obj)(uintptr_t)(hd & ~HDR_TAG_MASK);
	if ((hd & HDR_TAG_MASK) == HDR_TAG_FAILED)
		return o;
	if (r->flags & RF_FAILED && r->fail_cause != FAIL_ALLOC) {
		/* pinned region: mark in place, scan later */
		*obj_hdr(o) = hd | HDR_TAG_FAILED;
		push(y->h, o);
		return o;
	}
	return evacuate(y, o, hd);
}

static inline bool young_after(const struct region *r)
{
	return r->type == RT_SURVIVOR && (r->flags & RF_GC_ALLOC);
}

static void root_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = *slot, n = process(ctx, o);

	if (n != o)
		*slot = n;
}

/* A slot inside the heap: keep the card dirty if it still points to young. */
static void heap_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	kgc_obj o = *slot, n = process(ctx, o);

	if (n != o)
		*slot = n;
	if (young_after(region_of(h, n)) && !young_after(region_of(h, slot)))
		*card_for(h, slot) = CARD_DIRTY;
}

static void drain(struct ygc *y)
{
	struct kgc_heap *h = y->h;

	while (h->stack_len) {
		kgc_obj o = (kgc_obj)h->stack[--h->stack_len];

		obj_iterate_refs(h, o, heap_slot, y);
	}
}

static void scan_card(struct ygc *y, struct region *r, char *cs)
{
	struct kgc_heap *h = y->h;
	char *ce = cs + (1u << KGC_CARD_SHIFT), *top = r->top;

	if (cs >= top)
		return;
	if (r->type == RT_HUM_START || r->type == RT_HUM_CONT) {
		kgc_obj o = (kgc_obj)h->regions[r->hum_start].bottom;

		obj_iterate_refs_range(h, o, cs, ce, heap_slot, y);
		return;
	}
	for (char *p = bot_block_start(h, r, cs); p < ce && p < top;) {
		size_t sz = obj_size(p);

		if (p + sz > cs)
			obj_iterate_refs_range(h, (kgc_obj)p, cs, ce, heap_slot, y);
		p += sz;
	}
}

static void scan_cards(struct ygc *y, uint32_t *list, uint32_t n)
{
	struct kgc_heap *h = y->h;

	for (uint32_t k = 0; k < n; k++) {
		struct region *r = &h->regions[list[k]];
		uint8_t *c = card_for(h, r->bottom);
		size_t nc = (size_t)(r->top - r->bottom + (1u << KGC_CARD_SHIFT) - 1) >> KGC_CARD_SHIFT;

		for (size_t i = 0; i < nc; i++) {
			if ((i & 7) == 0 && i + 8 <= nc) {
				uint64_t w;

				memcpy(&w, c + i, 8);
				if (w == ~0ull) {
					i += 7;
					continue;
				}
			}
			if (c[i] == CARD_DIRTY) {
				c[i] = CARD_CLEAN;
				scan_card(y, r, r->bottom + (i << KGC_CARD_SHIFT));
				drain(y);
			}
		}
	}
}

/* Objects left in a failed region: live ones keep their place, dead ones become fillers. */
static size_t fixup_failed(struct kgc_heap *h, struct region *r)
{
	char *p = r->bottom, *dead = NULL;
	size_t live = 0;

	while (p < r->top) {
		uint64_t hd = *obj_hdr(p);
		size_t sz;

		if (hdr_is_fwd(hd)) {
			char *n = (char *)(uintptr_t)(hd & ~HDR_TAG_MASK);

			sz = obj_size_h(p, *obj_hdr(n));
		} else {
			sz = obj_size_h(p, hd);
		}
		if ((hd & HDR_TAG_MASK) == HDR_TAG_FAILED) {
			if (dead) {
				obj_fill(dead, (size_t)(p - dead));
				dead = NULL;
			}
			*obj_hdr(p) = hd & ~HDR_TAG_MASK;
			live += sz;
		} else if (!dead) {
			dead = p;
		}
		p += sz;
	}
	if (dead) {
		obj_fill(dead, (size_t)(r->top - dead));
		if (h->opt.poison && r->top - dead > 16)
			memset(dead + 16, 0xde, (size_t)(r->top - dead) - 16);
	}
	return live;
}

void young_collect(struct kgc_heap *h, uint32_t *npinned, unsigned *fail_mask)
{
	struct ygc y = { .h = h };
	uint32_t *old_list = malloc(h->nregions * sizeof(uint32_t)), nold = 0;
	size_t freed = 0;
	uint32_t fails[4] = { 0 };

	if (!old_list)
		fatal("young GC: out of memory");
	y.tenure = policy_tenure(h);
	y.surv_limit = policy_survivor_limit(h);
	if (h->evac_fail_inject > 0) {
		y.inject = true;
		h->evac_fail_inject--;
	}
	h->surv_regions = 0;
	h->surv_cur = h->old_cur = -1;
	memset(h->age_bytes, 0, sizeof(h->age_bytes));
	*npinned = 0;
	*fail_mask = 0;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->fail_cause = FAIL_NONE;
		if (region_is_young(r)) {
			r->flags |= RF_CSET;
			cards_clear_region(h, r);
			if (r->flags & (RF_PINNED | RF_KPINNED)) {
				r->flags |= RF_FAILED;
				r->fail_cause = (r->flags & RF_PINNED) ? FAIL_PINNED : FAIL_KPINNED;
				(*npinned)++;
				h->st.pinned_bytes += 0;
			}
		} else if (r->type == RT_OLD || r->type == RT_HUM_START || r->type == RT_HUM_CONT) {
			old_list[nold++] = i;
			if (r->flags & (RF_PINNED | RF_KPINNED))
				(*npinned)++;
		}
	}
	roots_iterate(h, root_slot, &y);
	roots_iterate_critical(h, root_slot, &y);
	drain(&y);
	scan_cards(&y, old_list, nold);
	drain(&y);

	h->st.pinned_bytes = 0;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->flags & (RF_PINNED | RF_KPINNED))
			h->st.pinned_bytes += (size_t)(r->top - r->bottom);
		if (r->flags & RF_CSET) {
			if (r->flags & RF_FAILED) {
				size_t live = fixup_failed(h, r);

				fails[r->fail_cause]++;
				*fail_mask |= 1u << r->fail_cause;
				freed += (size_t)(r->top - r->bottom) - live;
				region_set_type(h, r, RT_OLD);
				bot_rebuild(h, r);
				log_line(h, LOG_PIN, "region %u: evacuation failed (%s), %zuK live kept in place",
					 i, r->fail_cause == FAIL_ALLOC ? "allocation" :
					 r->fail_cause == FAIL_PINNED ? "pinned" : "kernel pinned", live >> 10);
			} else {
				freed += (size_t)(r->top - r->bottom);
				if (h->opt.poison)
					memset(r->bottom, 0xde, (size_t)(r->top - r->bottom));
				region_free(h, r);
			}
		}
		r->flags &= ~(RF_CSET | RF_FAILED | RF_GC_ALLOC);
		r->fail_cause = FAIL_NONE;
	}
	h->surv_cur = h->old_cur = -1;
	h->tospace_need = y.tospace_regions + 2;
	policy_adapt_tenure(h);
	h->st.bytes_copied += y.copied;
	h->st.bytes_promoted += y.promoted;
	h->st.bytes_freed += freed > y.copied ? freed - y.copied : 0;
	h->st.evac_fail_pinned += fails[FAIL_PINNED];
	h->st.evac_fail_kernel_pinned += fails[FAIL_KPINNED];
	h->st.evac_fail_alloc += fails[FAIL_ALLOC];
	log_line(h, LOG_HEAP, "copied %zuK promoted %zuK; regions: eden %u survivor %u old %u humongous %u free %u",
		 y.copied >> 10, y.promoted >> 10, h->count[RT_EDEN], h->count[RT_SURVIVOR],
		 h->count[RT_OLD], h->count[RT_HUM_START] + h->count[RT_HUM_CONT], h->count[RT_FREE]);
	free(old_list);
}
