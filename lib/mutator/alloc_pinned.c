/* SPDX-License-Identifier: MIT */
/*
 * alloc_pinned.c - kgc_alloc_array_pinned: the API side of the pinned-object
 * space (heap/pinspace.c), which collects when the space has no room (a young
 * collection frees eden, a full one compacts around the space); the space
 * itself only places objects.
 */
#include <errno.h>
#include <string.h>
#include "gc_internal.h"

KGC_API kgc_obj kgc_alloc_array_pinned(kgc_thread *t, kgc_type_id type, size_t length)
{
	struct kgc_heap *h;
	bool ovf, zeroed = false;
	unsigned shift;
	size_t size;
	char *p = NULL;

	if (!t || ((thread_state(t) != TS_MANAGED || t->magic != THREAD_MAGIC) &&
		   !kgci_thread_check_managed(t, "kgc_alloc_array_pinned")))
		return NULL;
	h = t->heap;
	if (type < 1 || type >= KGC_TYPE_REF_ARRAY) {
		kgci_err_set(EINVAL, "kgc_alloc_array_pinned: type %u is not a primitive array type%s", type,
			     type == KGC_TYPE_REF_ARRAY ? " (a reference array cannot be pinned for good)" : "");
		return NULL;
	}
	shift = type_get(h, type)->elem_shift;
	size = kgci_array_bytes(shift, length, &ovf);
	if (ovf || size > ((size_t)h->nregions << h->region_shift)) {
		kgci_err_set(ENOMEM, "kgc_alloc_array_pinned: %zu elements do not fit in the heap", length);
		return NULL;
	}
	/* no room: a young collection frees eden, a full one compacts around the space */
	for (int kind = -1; !p && kind <= KGC_GC_FULL; kind++) {
		if (kind >= 0 && kgc_collect(t, kind) < 0)
			return NULL;
		pthread_mutex_lock(&h->lock);
		if (size <= h->region_size)
			p = kgci_pinspace_alloc(h, size, &zeroed);
		else if ((p = kgci_alloc_humongous(h, size, &zeroed)))
			kgci_pinspace_adopt(h, p);
		if (p) {
			*(uint64_t *)p = hdr_make(KIND_PRIM_ARRAY, shift, type);
			((uint64_t *)p)[1] = length;
			if (size <= h->region_size)
				h->st.bytes_allocated += size;
		}
		pthread_mutex_unlock(&h->lock);
	}
	if (!p) {
		kgci_err_set(ENOMEM, "kgc_alloc_array_pinned: out of memory: %zu bytes (%u regions free)", size,
			     h->count[RT_FREE]);
		return NULL;
	}
	/* parsable since the header went in; no collection runs before this
	 * thread polls, and none looks into a primitive array's elements */
	if (!zeroed)
		memset(p + KGC_ARRAY_DATA_OFFSET, 0, size - KGC_ARRAY_DATA_OFFSET);
	return (kgc_obj)p;
}
