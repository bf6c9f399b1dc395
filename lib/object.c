/* SPDX-License-Identifier: MIT */
/* object.c - object sizes, type queries, filler objects. */
#include <string.h>
#include "gc_internal.h"

/* A filler: one-word fillers for 8 bytes, else an array-shaped filler whose
 * length word holds its byte size. */
void obj_fill(void *start, size_t bytes)
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

size_t array_bytes(unsigned elem_shift, size_t length, bool *overflow)
{
	if (length > ((SIZE_MAX >> 1) - 64) >> elem_shift) {
		*overflow = true;
		return 0;
	}
	*overflow = false;
	return ALIGN_UP(KGC_ARRAY_DATA_OFFSET + (length << elem_shift), WORD);
}

__attribute__((visibility("default"))) kgc_type_id kgc_obj_type(kgc_obj o)
{
	return hdr_type(*obj_hdr(o));
}

__attribute__((visibility("default"))) size_t kgc_obj_size(kgc_obj o)
{
	return obj_size(o);
}
