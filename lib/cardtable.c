/* SPDX-License-Identifier: MIT */
/*
 * cardtable.c - the card table (one byte per 512 bytes, 0 = dirty) written
 * by the inline post-write barrier, and the block offset table that finds
 * the object covering a card's first byte in old regions.
 */
#include <errno.h>
#include <string.h>
#include "gc_internal.h"

int cards_init(struct kgc_heap *h)
{
	size_t heap = (size_t)h->nregions << h->region_shift;

	h->ncards = heap >> KGC_CARD_SHIFT;
	h->cards = os_alloc(h->ncards);
	h->bot = os_alloc(h->ncards * sizeof(uint32_t));
	if (!h->cards || !h->bot)
		return -ENOMEM;
	memset(h->cards, CARD_CLEAN, h->ncards);
	h->card_biased = h->cards - ((uintptr_t)h->base >> KGC_CARD_SHIFT);
	return 0;
}

void cards_clear_region(struct kgc_heap *h, struct region *r)
{
	memset(card_for(h, r->bottom), CARD_CLEAN, h->region_size >> KGC_CARD_SHIFT);
}

void cards_clear_all(struct kgc_heap *h)
{
	memset(h->cards, CARD_CLEAN, h->ncards);
}

/* An object [start, start+size) was placed in old region r: cover the cards
 * whose first byte it spans. */
void bot_record(struct kgc_heap *h, struct region *r, char *start, size_t size)
{
	uintptr_t s = (uintptr_t)start, e = s + size;
	uintptr_t c = ALIGN_UP(s, (uintptr_t)1 << KGC_CARD_SHIFT);
	uint32_t off = (uint32_t)(start - r->bottom);
	uint32_t *b = h->bot + ((start - h->base) >> KGC_CARD_SHIFT);

	if (c == s) {
		*b = off;
		c += (uintptr_t)1 << KGC_CARD_SHIFT;
	}
	b = h->bot + ((c - (uintptr_t)h->base) >> KGC_CARD_SHIFT);
	for (; c < e; c += (uintptr_t)1 << KGC_CARD_SHIFT)
		*b++ = off;
}

void bot_rebuild(struct kgc_heap *h, struct region *r)
{
	for (char *p = r->bottom; p < r->top;) {
		size_t sz = obj_size(p);

		bot_record(h, r, p, sz);
		p += sz;
	}
}

char *bot_block_start(struct kgc_heap *h, struct region *r, const char *card_start)
{
	return r->bottom + h->bot[(card_start - h->base) >> KGC_CARD_SHIFT];
}

/* Checked mode: every reference store comes here. */
__attribute__((visibility("default")))
void kgc__barrier_slow(kgc_thread *t, kgc_obj *slot, kgc_obj val)
{
	struct kgc_heap *h;

	thread_check(t, "reference store");
	h = t->heap;
	thread_check_managed(t, "reference store");
	if (!in_heap(h, slot) || region_of(h, slot)->type == RT_FREE)
		fatal("reference store: thread '%s': slot %p is not inside a heap object", t->name,
		      (void *)slot);
	if (val) {
		uint64_t hd;

		if (!in_heap(h, val) || region_of(h, val)->type == RT_FREE ||
		    region_of(h, val)->type == RT_HUM_CONT)
			fatal("reference store: thread '%s': value %p is not a heap object (stale pointer?)",
			      t->name, (void *)val);
		hd = *obj_hdr(val);
		if ((hd & HDR_TAG_MASK) || hdr_kind(hd) == KIND_FILLER || !type_valid(h, hdr_type(hd)))
			fatal("reference store: thread '%s': value %p has a bad header %#llx (stale pointer "
			      "after a collection?)", t->name, (void *)val, (unsigned long long)hd);
		if (((uintptr_t)slot ^ (uintptr_t)val) >> h->region_shift)
			*card_for(h, slot) = CARD_DIRTY;
	}
}
