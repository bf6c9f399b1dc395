/* SPDX-License-Identifier: MIT */
/* humreloc.h - humongous objects relocated by a young pause (humreloc.c),
 * what young.c uses of it. */
#ifndef KGC_HUMRELOC_H
#define KGC_HUMRELOC_H

#include "gc_internal.h"

#define HR_TRIES 64	/* windows whose objects found no room tried before giving up */

/* One object's move: n regions from src to dst; its header (put back once
 * moved) and size. */
struct hreloc {
	uint32_t src, dst, n;
	uint64_t hdr;
	size_t bytes;
};

uint32_t kgci_humreloc_plan(struct kgc_heap *h, uint32_t need, struct hreloc *out);
void kgci_humreloc_begin(struct kgc_heap *h, struct hreloc *m, uint32_t n);
void kgci_humreloc_finish(struct kgc_heap *h, const struct hreloc *m, uint32_t n);

#endif
