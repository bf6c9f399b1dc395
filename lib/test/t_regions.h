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

/* Byte arrays of 1..maxmb MiB (less 64 bytes; seeded) in slots[0..], array
 * n filled with n + 1 and its length in len[n], until the heap holds
 * `regions` humongous regions or max arrays; returns how many. */
static inline int t_fill_humongous(kgc_thread *t, kgc_heap *h, kgc_obj *slots, size_t *len, int max,
				   uint32_t regions, unsigned maxmb, unsigned long long *seed)
{
	int n = 0;

	while (n < max && t_stats(h).regions_humongous < regions) {
		len[n] = ((1 + t_rand(seed) % maxmb) << 20) - 64;
		slots[n] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), len[n]);
		T_ASSERT(slots[n]);
		memset(kgc_array_data(slots[n]), n + 1, len[n]);
		n++;
	}
	return n;
}

#endif
