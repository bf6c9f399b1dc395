/* SPDX-License-Identifier: MIT */
/*
 * cardtable.c - the card table (one byte per 512 bytes, 0 = dirty) written
 * by the inline post-write barrier, and the block offset table that finds
 * the object covering a card's first byte in old regions.
 */
#include <errno.h>
#include <string.h>
#include "gc_internal.h"

int kgci_cards_init(struct kgc_heap *h)
{
	size_t heap = (size_t)h->nregions << h->region_shift;

	h->ncards = heap >> KGC_CARD_SHIFT;
	h->cards = kgci_os_alloc(h->ncards);
	h->card_sum = kgci_os_alloc(h->ncards / CARDS_PER_SUM);
	h->bot = kgci_os_alloc(h->ncards * sizeof(uint32_t));
	if (!h->cards || !h->card_sum || !h->bot)
		return -ENOMEM;
	memset(h->cards, CARD_CLEAN, h->ncards);
	memset(h->card_sum, CARD_CLEAN, h->ncards / CARDS_PER_SUM);
	h->card_biased = h->cards - ((uintptr_t)h->base >> KGC_CARD_SHIFT);
	h->card_sum_biased = h->card_sum - ((uintptr_t)h->base >> KGC_CARD_SUM_SHIFT);
	return 0;
}

/* Regions are 1 MiB or more: each has summary bytes of its own. */
void kgci_cards_clear_region(struct kgc_heap *h, struct region *r)
{
	memset(card_for(h, r->bottom), CARD_CLEAN, h->region_size >> KGC_CARD_SHIFT);
	memset(card_sum_for(h, r->bottom), CARD_CLEAN, h->region_size >> KGC_CARD_SUM_SHIFT);
}

void kgci_cards_clear_all(struct kgc_heap *h)
{
	memset(h->cards, CARD_CLEAN, h->ncards);
	memset(h->card_sum, CARD_CLEAN, h->ncards / CARDS_PER_SUM);
}

/* An object [start, start+size) was placed in old region r: cover the cards
 * whose first byte it spans. */
void kgci_bot_record(struct kgc_heap *h, struct region *r, char *start, size_t size)
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

void kgci_bot_rebuild(struct kgc_heap *h, struct region *r)
{
	for (char *p = r->bottom; p < r->top;) {
		size_t sz = obj_size(p);

		kgci_bot_record(h, r, p, sz);
		p += sz;
	}
}

char *kgci_bot_block_start(struct kgc_heap *h, struct region *r, const char *card_start)
{
	return r->bottom + h->bot[(card_start - h->base) >> KGC_CARD_SHIFT];
}

/* Checked mode: the holder of a reference field (what kgc.h's store inlines
 * get as o) must be a live heap object. */
static const struct type_info *checked_holder(struct kgc_thread *t, kgc_obj o, const char *what)
{
	struct kgc_heap *h = t->heap;
	uint64_t hd;

	kgci_thread_check(t, what);
	kgci_thread_check_managed(t, what);
	if (!o || !in_heap(h, o) || region_of(h, o)->type == RT_FREE || region_of(h, o)->type == RT_HUM_CONT)
		kgci_fatal("%s: thread '%s': %p is not a heap object", what, t->name, (void *)o);
	hd = *obj_hdr(o);
	if ((hd & HDR_TAG_MASK) || hdr_kind(hd) == KIND_FILLER || !kgci_type_valid(h, hdr_type(hd)))
		kgci_fatal("%s: thread '%s': object %p has a bad header %#llx (stale pointer?)", what, t->name,
		      (void *)o, (unsigned long long)hd);
	return type_get(h, hdr_type(hd));
}

KGC_API
void kgc__set_ref_checked(kgc_thread *t, kgc_obj o, size_t off, kgc_obj val)
{
	const struct type_info *ti = checked_holder(t, o, "kgc_set_ref");
	kgc_obj *slot = (kgc_obj *)((char *)o + off);
	bool ok = false;

	if (ti->kind == KIND_INSTANCE && ti->scan)	/* any word of the payload (kgc_scan.3) */
		ok = off >= KGC_HEADER_SIZE && off % WORD == 0 && off < ti->size_words * WORD;
	else if (ti->kind == KIND_INSTANCE)
		for (uint32_t i = 0; i < ti->nrefs && !ok; i++)
			ok = ti->ref_offsets[i] == off;
	else if (ti->kind == KIND_REF_ARRAY)
		ok = (char *)slot >= (char *)kgc_array_data(o) && off % sizeof(kgc_obj) == 0 &&
		     (size_t)(slot - (kgc_obj *)kgc_array_data(o)) < kgc_array_length(o);
	if (!ok)
		kgci_fatal("kgc_set_ref: thread '%s': offset %zu of object %p (type '%s') is not a reference field",
		      t->name, off, (void *)o, ti->name);
	kgc__pre_barrier(t, slot);
	__atomic_store_n(slot, val, __ATOMIC_RELAXED);
	kgc__barrier_slow(t, slot, val);
}

KGC_API
void kgc__array_set_ref_checked(kgc_thread *t, kgc_obj a, size_t i, kgc_obj val)
{
	const struct type_info *ti = checked_holder(t, a, "kgc_array_set_ref");
	kgc_obj *slot = (kgc_obj *)kgc_array_data(a) + i;

	if (ti->kind != KIND_REF_ARRAY)
		kgci_fatal("kgc_array_set_ref: thread '%s': %p (type '%s') is not a reference array", t->name,
		      (void *)a, ti->name);
	if (i >= kgc_array_length(a))
		kgci_fatal("kgc_array_set_ref: thread '%s': index %zu out of bounds of array %p (length %zu)",
		      t->name, i, (void *)a, kgc_array_length(a));
	kgc__pre_barrier(t, slot);
	__atomic_store_n(slot, val, __ATOMIC_RELAXED);
	kgc__barrier_slow(t, slot, val);
}

/* Checked mode: every reference store comes here (after the checks above). */
KGC_API
void kgc__barrier_slow(kgc_thread *t, kgc_obj *slot, kgc_obj val)
{
	struct kgc_heap *h;

	kgci_thread_check(t, "reference store");
	h = t->heap;
	kgci_thread_check_managed(t, "reference store");
	if (!in_heap(h, slot) || region_of(h, slot)->type == RT_FREE)
		kgci_fatal("reference store: thread '%s': slot %p is not inside a heap object", t->name,
		      (void *)slot);
	if ((uintptr_t)val & 7) {
		/* a tagged immediate: no card, nothing to check but its tag */
		if (!((uintptr_t)val & h->opt.tag_mask))
			kgci_fatal("reference store: thread '%s': value %p is misaligned: neither a heap object nor "
			      "a tagged immediate (tag mask %#x)", t->name, (void *)val, h->opt.tag_mask);
	} else if (val) {
		uint64_t hd;

		if (!in_heap(h, val) || region_of(h, val)->type == RT_FREE ||
		    region_of(h, val)->type == RT_HUM_CONT)
			kgci_fatal("reference store: thread '%s': value %p is not a heap object (stale pointer?)",
			      t->name, (void *)val);
		hd = *obj_hdr(val);
		if ((hd & HDR_TAG_MASK) || hdr_kind(hd) == KIND_FILLER || !kgci_type_valid(h, hdr_type(hd)))
			kgci_fatal("reference store: thread '%s': value %p has a bad header %#llx (stale pointer "
			      "after a collection?)", t->name, (void *)val, (unsigned long long)hd);
		if (((uintptr_t)slot ^ (uintptr_t)val) >> h->region_shift)
			kgci_card_dirty(h, slot);	/* atomic: other threads too */
	}
}
