/* SPDX-License-Identifier: MIT */
/* t_regions.h - tests that look at the heap's regions (after ../gc_internal.h). */
#ifndef KGC_T_REGIONS_H
#define KGC_T_REGIONS_H

/* The longest run of free regions: what a humongous allocation needs. */
static inline uint32_t t_longest_free_run(struct kgc_heap *h)
{
	uint32_t run = 0, best = 0;

	for (uint32_t i = 0; i < h->nregions; i++) {
		run = h->regions[i].type == RT_FREE ? run + 1 : 0;
		best = run > best ? run : best;
	}
	return best;
}

#endif
