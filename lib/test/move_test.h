/* SPDX-License-Identifier: MIT */
/* move_test.h - helpers for the tests of kgci_backend_move_regions. */
#ifndef KGC_MOVE_TEST_H
#define KGC_MOVE_TEST_H

#include "tgc.h"
#include "../gc_internal.h"

/* A heap of n regions of rs_mb MiB on backend be (thp: KGC_THP); NULL
 * when that backend cannot be had (the kmod one without /dev/kgc). */
static inline struct kgc_heap *mt_heap_on(unsigned be, uint32_t n, size_t rs_mb, unsigned thp)
{
	struct kgc_options o;
	kgc_heap *h;
	int err;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.backend = be;
	o.region_size = rs_mb << 20;
	o.max_heap = (size_t)n * o.region_size;
	o.thp = thp;
	err = kgc_heap_create(&o, &h);
	if (err && be == KGC_BACKEND_KMOD)
		return NULL;
	T_ASSERT_EQ(err, 0);
	return h;
}

/* An anon heap of n regions of rs_mb MiB (thp: KGC_THP). */
static inline struct kgc_heap *mt_heap(uint32_t n, size_t rs_mb, unsigned thp)
{
	struct kgc_options o;
	kgc_heap *h;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.backend = KGC_BACKEND_ANON;
	o.region_size = rs_mb << 20;
	o.max_heap = (size_t)n * o.region_size;
	o.thp = thp;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	return h;
}

/* Region i filled with a pattern of seed (every 8-byte word). */
static inline void mt_fill(struct kgc_heap *h, uint32_t i, uint64_t seed)
{
	uint64_t *w = (uint64_t *)(h->base + ((size_t)i << h->region_shift));

	for (size_t k = 0; k < h->region_size / 8; k++)
		w[k] = seed * 0x9e3779b97f4a7c15ULL + k;
}

/* 1: region i holds seed's pattern; 0: it reads zero; -1: neither */
static inline int mt_check(struct kgc_heap *h, uint32_t i, uint64_t seed)
{
	const uint64_t *w = (const uint64_t *)(h->base + ((size_t)i << h->region_shift));
	bool pat = true, zero = true;

	for (size_t k = 0; k < h->region_size / 8; k += h->region_size / 8 / 16 - 1) {	/* 17 pages sampled */
		pat &= w[k] == seed * 0x9e3779b97f4a7c15ULL + k;
		zero &= w[k] == 0;
	}
	return pat ? 1 : zero ? 0 : -1;
}

/* Mappings of /proc/self/maps inside [lo, hi). */
static inline int mt_vmas(const void *lo, const void *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < (uintptr_t)hi && b > (uintptr_t)lo)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * iters random moves of 1-8 regions among the first n (n <= 64; overlapping
 * ones included) from regions a third of which are untouched, checked after
 * each (the regions moved from and to; every 50 moves all of them):
 * destinations hold the source's bytes, what the source left reads zero.
 * Returns the most VMAs the heap had.
 */
static inline int mt_random_moves(struct kgc_heap *h, uint32_t NREG, int iters, unsigned long long seed)
{
	uint64_t tag[64] = { 0 };	/* pattern each region holds, 0: zero */
	int maxv = 0;

	T_ASSERT(NREG <= 64);
	for (uint32_t i = 0; i < NREG; i++) {
		tag[i] = i % 3 ? t_rand(&seed) | 1 : 0;	/* a third stays untouched (a hole) */
		if (tag[i])
			mt_fill(h, i, tag[i]);
	}
	for (int it = 0; it < iters; it++) {
		uint32_t cnt = 1 + (uint32_t)(t_rand(&seed) % 8);
		uint32_t src = (uint32_t)(t_rand(&seed) % (NREG - cnt + 1));
		uint32_t dst = (uint32_t)(t_rand(&seed) % (NREG - cnt + 1));
		uint64_t moved[8];
		int v;

		for (uint32_t k = 0; k < cnt; k++)
			moved[k] = tag[src + k];
		T_ASSERT_EQ(kgci_backend_move_regions(h, src, dst, cnt), 0);
		if (src != dst)
			for (uint32_t k = 0; k < cnt; k++)
				tag[src + k] = 0;
		for (uint32_t k = 0; k < cnt; k++)
			tag[dst + k] = moved[k];
		for (uint32_t i = 0; i < NREG; i++)
			if ((it % 50 == 0 || (i >= src && i < src + cnt) || (i >= dst && i < dst + cnt)) &&
			    mt_check(h, i, tag[i]) != (tag[i] ? 1 : 0))
				T_FAIL("move %d (%u -> %u, %u regions): region %u holds %d, expected %s",
				       it, src, dst, cnt, i, mt_check(h, i, tag[i]), tag[i] ? "its pattern" : "zero");
		/* the pattern of a region that read zero is written again now and then */
		if (it % 7 == 0) {
			uint32_t i = (uint32_t)(t_rand(&seed) % NREG);

			tag[i] = t_rand(&seed) | 1;
			mt_fill(h, i, tag[i]);
		}
		v = mt_vmas(h->base, h->base + ((size_t)NREG << h->region_shift));
		if (v > maxv)
			maxv = v;
	}
	return maxv;
}

#endif
