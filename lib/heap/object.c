/* SPDX-License-Identifier: MIT */
/* object.c - object sizes, type queries, filler objects, an object's reference slots. */
#include "kgc_api.h"
/* kgc.h's inline kgc_obj_type becomes this file's exported definition */
#define KGC_INLINE_OBJ KGC_API

#include <string.h>
#include "gc_internal.h"

/* A filler: one-word fillers for 8 bytes, else an array-shaped filler whose
 * length word holds its byte size. */
void kgci_obj_fill(void *start, size_t bytes)
{
	uint64_t *p = start;

	if (!bytes)
		return;
	if (bytes == WORD) {
		p[0] = hdr_make(KIND_FILLER, 1, TYPE_FILLER);
		return;
	}
	p[0] = hdr_make(KIND_FILLER, 0, TYPE_FILLER);
	p[1] = bytes;
}

size_t kgci_array_bytes(unsigned elem_shift, size_t length, bool *overflow)
{
	if (length > ((SIZE_MAX >> 1) - 64) >> elem_shift) {
		*overflow = true;
		return 0;
	}
	*overflow = false;
	return ALIGN_UP(KGC_ARRAY_DATA_OFFSET + (length << elem_shift), WORD);
}

/*
 * Native code may call these on an array it holds critical while a young
 * pause sets and clears the GC tag bits of the header word in place (the
 * array's region is pinned): an atomic load, and neither the type, kind nor
 * length bits ever change while it is held.
 */
KGC_API size_t kgc_obj_size(kgc_obj o)
{
	return obj_size_h(o, __atomic_load_n(obj_hdr(o), __ATOMIC_RELAXED));
}

/* The reference slots of o (the object walker every collector uses). */
void kgci_obj_iterate_refs(struct kgc_heap *h, kgc_obj o, slot_fn fn, void *ctx)
{
	/* atomic: during a parallel young GC another worker may CAS the header of
	 * an object kept in place (evacuation failure) while this one scans it */
	uint64_t hd = __atomic_load_n(obj_hdr(o), __ATOMIC_RELAXED);

	switch (hdr_kind(hd)) {
	case KIND_INSTANCE: {
		const struct type_info *ti = type_get(h, hdr_type(hd));

		for (uint32_t i = 0; i < ti->nrefs; i++) {
			kgc_obj *s = (kgc_obj *)((char *)o + ti->ref_offsets[i]);

			/* relaxed atomic (a plain load): the mark rebuild reads
			 * fields while mutators store them */
			if (is_ref(h, __atomic_load_n(s, __ATOMIC_RELAXED)))
				fn(h, s, ctx);
		}
		if (unlikely(ti->scan != NULL))
			kgci_scan_refs(h, ti, o, (char *)o, (char *)o + ti->size_words * WORD, fn, ctx);
		break;
	}
	case KIND_REF_ARRAY: {
		kgc_obj *s = kgc_array_data(o);
		size_t n = kgc_array_length(o);

		for (size_t i = 0; i < n; i++)
			if (is_ref(h, __atomic_load_n(&s[i], __ATOMIC_RELAXED)))
				fn(h, &s[i], ctx);
		break;
	}
	default:
		break;
	}
}

/* Only the reference slots of o that lie in [lo, hi). */
void kgci_obj_iterate_refs_range(struct kgc_heap *h, kgc_obj o, char *lo, char *hi, slot_fn fn, void *ctx)
{
	kgci_obj_refs_range_inline(h, o, lo, hi, fn, ctx);
}
