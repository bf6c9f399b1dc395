/* SPDX-License-Identifier: MIT */
/* types.c - the type registry: instance oop maps, predefined array types. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

static const char *const prim_names[KGC_PRIM_COUNT] = {
	"boolean[]", "byte[]", "char[]", "short[]", "int[]", "float[]", "long[]", "double[]",
};
static const uint8_t prim_shift[KGC_PRIM_COUNT] = { 0, 0, 1, 1, 2, 2, 3, 3 };

/* The header kgc.h's inline allocation stores for a fresh object of ti. */
static uint64_t fresh_header(const struct type_info *ti, uint32_t id)
{
	switch (ti->kind) {
	case KIND_INSTANCE: return hdr_make(KIND_INSTANCE, ti->size_words, id);
	case KIND_PRIM_ARRAY: return hdr_make(KIND_PRIM_ARRAY, ti->elem_shift, id);
	case KIND_REF_ARRAY: return hdr_make(KIND_REF_ARRAY, 0, id);
	default: return 0;
	}
}

/* How many of ti's first reference fields are its first payload words
 * (kgc_alloc_init stores refs[i] at offset 8 + 8 i inline up to this). */
static uint8_t init_refs(const struct type_info *ti)
{
	uint32_t i = 0;

	if (ti->kind == KIND_INSTANCE)
		while (i < ti->nrefs && i < UINT8_MAX && ti->ref_offsets[i] == KGC_HEADER_SIZE + i * WORD)
			i++;
	return (uint8_t)i;
}

/* Doubles the table: new slot, header and init_refs arrays, the old ones
 * retired (a reader may still hold them; entries never change once
 * published). */
static int types_grow(struct type_table *tt, uint32_t n)
{
	uint32_t ncap = tt->cap ? tt->cap * 2 : 64;
	struct type_info **s = atomic_load(&tt->slots), **ns = calloc(ncap, sizeof(*ns));
	uint64_t *hd = atomic_load(&tt->hdrs), *nh = calloc(ncap, sizeof(*nh));
	uint8_t *ir = atomic_load(&tt->init_refs), *ni = calloc(ncap, 1);
	void **nr = realloc(tt->retired, (tt->nretired + 3) * sizeof(void *));

	if (nr)
		tt->retired = nr;
	if (!ns || !nh || !ni || !nr) {
		free(ns);
		free(nh);
		free(ni);
		return -ENOMEM;
	}
	if (s) {
		memcpy(ns, s, n * sizeof(*ns));
		memcpy(nh, hd, n * sizeof(*nh));
		memcpy(ni, ir, n);
		tt->retired[tt->nretired++] = s;
		tt->retired[tt->nretired++] = hd;
		tt->retired[tt->nretired++] = ir;
	}
	atomic_store_explicit(&tt->slots, ns, memory_order_release);
	atomic_store_explicit(&tt->hdrs, nh, memory_order_release);
	atomic_store_explicit(&tt->init_refs, ni, memory_order_release);
	tt->cap = ncap;
	return 0;
}

static int types_add(struct kgc_heap *h, struct type_info *ti, uint32_t *id)
{
	struct type_table *tt = &h->types;
	uint32_t n = atomic_load(&tt->count);
	int err;

	if (n >= TYPE_FILLER)
		return -ENOSPC;
	if (n == tt->cap && (err = types_grow(tt, n)))
		return err;
	atomic_load(&tt->slots)[n] = ti;
	atomic_load(&tt->hdrs)[n] = fresh_header(ti, n);
	atomic_load(&tt->init_refs)[n] = init_refs(ti);
	atomic_store_explicit(&tt->count, n + 1, memory_order_release);
	*id = n;
	return 0;
}

/* A new type (scan.c's registrations): its id in *id, or -ENOSPC/-ENOMEM. */
int kgci_types_add(struct kgc_heap *h, struct type_info *ti, uint32_t *id)
{
	int err;

	pthread_mutex_lock(&h->types.lock);
	err = types_add(h, ti, id);
	pthread_mutex_unlock(&h->types.lock);
	return err;
}

int kgci_types_init(struct kgc_heap *h)
{
	uint32_t id;
	int err;

	pthread_mutex_init(&h->types.lock, NULL);
	/* id 0 is invalid */
	for (int i = 0; i < (int)KGC_TYPE_FIRST_USER; i++) {
		struct type_info *ti = calloc(1, sizeof(*ti));

		if (!ti)
			return -ENOMEM;
		if (i == 0) {
			ti->name = strdup("<invalid>");
			ti->kind = KIND_FILLER;
		} else if (i <= KGC_PRIM_COUNT) {
			ti->name = strdup(prim_names[i - 1]);
			ti->kind = KIND_PRIM_ARRAY;
			ti->elem_shift = prim_shift[i - 1];
		} else {
			ti->name = strdup("ref[]");
			ti->kind = KIND_REF_ARRAY;
			ti->elem_shift = 3;
		}
		if ((err = types_add(h, ti, &id)))
			return err;
	}
	return 0;
}

void kgci_types_destroy(struct kgc_heap *h)
{
	struct type_table *tt = &h->types;
	struct type_info **s = atomic_load(&tt->slots);
	uint32_t n = atomic_load(&tt->count);

	for (uint32_t i = 0; i < n; i++) {
		free(s[i]->name);
		free(s[i]->ref_offsets);
		free(s[i]);
	}
	free(s);
	free(atomic_load(&tt->hdrs));
	free(atomic_load(&tt->init_refs));
	for (uint32_t i = 0; i < tt->nretired; i++)
		free(tt->retired[i]);
	free(tt->retired);
	pthread_mutex_destroy(&tt->lock);
}

bool kgci_type_valid(struct kgc_heap *h, uint32_t id)
{
	return id > 0 && id < atomic_load_explicit(&h->types.count, memory_order_acquire);
}

KGC_API
int kgc_type_register(kgc_heap *h, const struct kgc_type_desc *d, kgc_type_id *out)
{
	struct type_info *ti;
	uint64_t words;
	uint32_t id;
	int err;

	if (!h || !d || !out || (d->nrefs && !d->ref_offsets)) {
		kgci_err_set(EINVAL, "kgc_type_register: NULL argument");
		return -EINVAL;
	}
	words = (KGC_HEADER_SIZE + (uint64_t)d->payload_size + WORD - 1) / WORD;
	if (words > INSTANCE_MAX_WORDS || words * WORD >= h->alloc.humongous_threshold) {
		kgci_err_set(EINVAL, "kgc_type_register: '%s': instance of %u bytes is too large",
			d->name ? d->name : "?", d->payload_size);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < d->nrefs; i++) {
		uint32_t off = d->ref_offsets[i];

		if (off < KGC_HEADER_SIZE || off % WORD ||
		    (uint64_t)off + WORD > KGC_HEADER_SIZE + (uint64_t)d->payload_size) {
			kgci_err_set(EINVAL, "kgc_type_register: '%s': bad reference offset %u",
				d->name ? d->name : "?", off);
			return -EINVAL;
		}
	}
	ti = calloc(1, sizeof(*ti));
	if (!ti)
		return -ENOMEM;
	ti->name = strdup(d->name ? d->name : "?");
	ti->kind = KIND_INSTANCE;
	ti->size_words = (uint32_t)words;
	ti->nrefs = d->nrefs;
	ti->ref_offsets = d->nrefs ? malloc(d->nrefs * sizeof(uint32_t)) : NULL;
	if (!ti->name || (d->nrefs && !ti->ref_offsets)) {
		free(ti->name);
		free(ti->ref_offsets);
		free(ti);
		return -ENOMEM;
	}
	if (d->nrefs)
		memcpy(ti->ref_offsets, d->ref_offsets, d->nrefs * sizeof(uint32_t));
	pthread_mutex_lock(&h->types.lock);
	err = types_add(h, ti, &id);
	pthread_mutex_unlock(&h->types.lock);
	if (err) {
		free(ti->name);
		free(ti->ref_offsets);
		free(ti);
		kgci_err_set(-err, "kgc_type_register: type table full");
		return err;
	}
	*out = id;
	return 0;
}

KGC_API
const char *kgc_type_name(const kgc_heap *h, kgc_type_id type)
{
	if (!h || !kgci_type_valid((struct kgc_heap *)h, type))
		return type == TYPE_FILLER ? "<filler>" : NULL;
	return type_get((struct kgc_heap *)h, type)->name;
}
