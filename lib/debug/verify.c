/* SPDX-License-Identifier: MIT */
/*
 * verify.c - KGC_VERIFY=1: walk the heap before and after every collection.
 * Checks headers, that every reference points at an object start in a
 * non-free region (never at a filler: a filler is freed space), that every old->young reference is covered by a dirty
 * card, humongous chains and region accounting. Any failure is fatal with
 * one message.
 */
#include <string.h>
#include "heap/markbits.h"

struct vctx {
	const char *when;
	struct region *src;
	const void *obj;
};

static void check_header(struct kgc_heap *h, const char *when, const char *p, const char *lim)
{
	uint64_t hd = *obj_hdr(p);
	size_t sz;

	if (hd & HDR_TAG_MASK)
		kgci_fatal("verify (%s): object %p in region %u has a stale GC tag (header %#llx)", when,
		      (void *)p, region_index(h, p), (unsigned long long)hd);
	if (hdr_kind(hd) == KIND_FILLER) {
		if (hdr_type(hd) != TYPE_FILLER)
			kgci_fatal("verify (%s): bad filler at %p (header %#llx)", when, (void *)p,
			      (unsigned long long)hd);
	} else if (!kgci_type_valid(h, hdr_type(hd)) || type_get(h, hdr_type(hd))->kind != hdr_kind(hd)) {
		kgci_fatal("verify (%s): object %p in region %u (%s): bad header %#llx", when, (void *)p,
		      region_index(h, p), kgci_region_type_name(region_of(h, p)->type), (unsigned long long)hd);
	}
	sz = obj_size_h(p, hd);
	if (sz < WORD || sz % WORD || (size_t)(lim - p) < sz)
		kgci_fatal("verify (%s): object %p (type %u) has bad size %zu (limit %p)", when, (void *)p,
		      hdr_type(hd), sz, (void *)lim);
}

/* The next young pause finds slot: its card is dirty (and its summary
 * byte, unless the summary is off), or refined with the slot in the
 * refinement log (refine.c). */
static bool remembered(struct kgc_heap *h, kgc_obj *slot)
{
	uint8_t c = *card_for(h, slot);

	/* a dirty card whose summary byte is clean is one the scan skips */
	if (c == CARD_DIRTY && !atomic_load(&h->card_sum_off) && *card_sum_for(h, slot) != CARD_DIRTY)
		return false;
	return c == CARD_DIRTY || (c == CARD_REFINED && kgci_refine_logged(h, slot));
}

static void check_ref(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	struct vctx *v = ctx;
	kgc_obj o = *slot;
	struct region *r;

	if (!in_heap(h, o))
		kgci_fatal("verify (%s): slot %p (object %p) holds %p, outside the heap", v->when,
		      (void *)slot, v->obj, (void *)o);
	r = region_of(h, o);
	if (r->type == RT_FREE || r->type == RT_HUM_CONT || (char *)o >= r->top || !mb_test(&h->full.mark, o))
		kgci_fatal("verify (%s): slot %p (object %p) holds %p: not an object start (a filler, i.e. "
		      "freed space, or inside an object; region %u %s)",
		      v->when, (void *)slot, v->obj, (void *)o, region_index(h, o),
		      kgci_region_type_name(r->type));
	if (v->src && !region_is_young(v->src) && region_is_young(r) && !remembered(h, slot))
		kgci_fatal("verify (%s): old->young reference without a dirty card (with a dirty summary byte), "
		      "or a refined one logging it (missing write barrier?): "
		      "slot %p in %s region %u (object %p) -> %p in %s region %u", v->when,
		      (void *)slot, kgci_region_type_name(v->src->type), (unsigned)(v->src - h->regions),
		      v->obj, (void *)o, kgci_region_type_name(r->type), region_index(h, o));
	/* retained regions: the card table is their remembered set; mixed
	 * candidates (once rebuilt): a dirty card or their remembered set */
	if (v->src && !region_is_young(v->src) && v->src != r &&
	    (r->retained || (r->candidate && kgci_cm_candidates_tracked(h))) && !remembered(h, slot) &&
	    !(r->candidate && (r->rs.overflow || kgci_remset_has(&r->rs, card_index(h, slot)))))
		kgci_fatal("verify (%s): reference into %s region %u without a dirty card%s: "
		      "slot %p in %s region %u (object %p) -> %p", v->when,
		      r->retained ? "retained" : "mixed candidate", region_index(h, o),
		      r->retained ? "" : " or a remembered card",
		      (void *)slot, kgci_region_type_name(v->src->type), (unsigned)(v->src - h->regions),
		      v->obj, (void *)o);
	/* humongous objects tracked for eager reclaim and relocation: a dirty
	 * card or their remembered set (young.c) */
	if (v->src && !region_is_young(v->src) && v->src != r && r->type == RT_HUM_START &&
	    r->eager == EAGER_TRACKED && !remembered(h, slot) && !r->rs.overflow &&
	    !kgci_remset_has(&r->rs, card_index(h, slot)))
		kgci_fatal("verify (%s): reference into tracked humongous region %u without a dirty or "
		      "remembered card: slot %p in %s region %u (object %p) -> %p", v->when, region_index(h, o),
		      (void *)slot, kgci_region_type_name(v->src->type), (unsigned)(v->src - h->regions),
		      v->obj, (void *)o);
}

void kgci_verify_heap(struct kgc_heap *h, const char *when)
{
	uint32_t count[RT_COUNT] = { 0 };
	struct vctx v = { .when = when };

	/* pass 1: headers, object starts */
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type >= RT_COUNT)
			kgci_fatal("verify (%s): region %u has bad type %u", when, i, r->type);
		count[r->type]++;
		/* the bitmap is clear here (invariant outside collections) */
		if (r->top < r->bottom || r->top > r->end)
			kgci_fatal("verify (%s): region %u top %p out of bounds", when, i, (void *)r->top);
		if (r->type == RT_FREE) {
			if (atomic_load(region_pins(h, i)))
				kgci_fatal("verify (%s): free region %u is pinned", when, i);
			continue;
		}
		if (r->type == RT_HUM_CONT) {
			struct region *s = &h->regions[r->hum_start];

			if (r->hum_start >= i || s->type != RT_HUM_START || i >= r->hum_start + s->hum_count)
				kgci_fatal("verify (%s): humongous continues region %u has no start (%u)", when, i,
				      r->hum_start);
			continue;
		}
		if (r->type == RT_HUM_START) {
			check_header(h, when, r->bottom, r->bottom + ((size_t)r->hum_count << h->region_shift));
			if (r->hum_count != (obj_size(r->bottom) + h->region_size - 1) >> h->region_shift)
				kgci_fatal("verify (%s): humongous region %u spans %u regions for %zu bytes", when,
				      i, r->hum_count, obj_size(r->bottom));
			mb_set(&h->full.mark, r->bottom);
			continue;
		}
		for (char *p = r->bottom; p < r->top; p += obj_size(p)) {
			check_header(h, when, p, r->top);
			if (hdr_kind(*obj_hdr(p)) == KIND_FILLER)
				continue;	/* no reference may point here */
			mb_set(&h->full.mark, p);
		}
	}
	for (int t = 0; t < RT_COUNT; t++)
		if (count[t] != h->count[t])
			kgci_fatal("verify (%s): %u %s regions counted, accounting says %u", when, count[t],
			      kgci_region_type_name(t), h->count[t]);
	/* pass 2: references */
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type == RT_FREE || r->type == RT_HUM_CONT)
			continue;
		v.src = r;
		for (char *p = r->bottom; p < r->top; p += obj_size(p)) {
			v.obj = p;
			if (kgci_cm_obj_dead(h, p))
				continue;	/* garbage awaiting the sweep: may point into fillers */
			kgci_obj_iterate_refs(h, (kgc_obj)p, check_ref, &v);
			if (r->type == RT_HUM_START)
				break;
		}
	}
	v.src = NULL;
	v.obj = NULL;
	kgci_roots_iterate(h, check_ref, &v);
	kgci_roots_iterate_critical(h, check_ref, &v);
	kgci_weak_iterate(h, check_ref, &v);	/* a cleared referent is NULL, never a filler */
	/* leave the bitmap clear for the full collector */
	for (uint32_t i = 0; i < h->nregions; i++)
		if (h->regions[i].type != RT_FREE)
			kgci_markbits_clear(&h->full.mark, h->regions[i].bottom, h->regions[i].end);
}
