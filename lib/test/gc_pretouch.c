/* SPDX-License-Identifier: MIT */
/*
 * Pre-touch (alloc.c, kgci_backend_back): a mutator starting new eden
 * regions backs a fresh free region for the next pause's to-space, a slice
 * per slow-path entry, and hands it back to the free list with every page
 * resident (mincore) and no longer flagged zeroed. Twice: with
 * MADV_POPULATE_WRITE, and with the fallback that only stores (as after the
 * kernel refused populate once). Then eden leaves backed free regions to
 * the next pause's to-space: it takes a backed region only while more of
 * them are free than that pause needs (tospace_need), else fresh memory.
 * Verifier on.
 */
#include <sys/mman.h>
#include "tgc.h"
#include "../gc_internal.h"

static kgc_heap *heap;
static kgc_thread *th;
static kgc_type_id node;

/* Allocates until this thread backs a region, then until it is done with it. */
static struct region *backed_region(void)
{
	struct region *r = NULL;

	for (int i = 0; i < 2000000 && !r; i++) {
		T_ASSERT(kgc_alloc(th, node));
		r = th->pt_region;
	}
	T_ASSERT(r);
	for (int i = 0; i < 20000000 && th->pt_region == r; i++)
		T_ASSERT(kgc_alloc(th, node));
	T_ASSERT(th->pt_region != r);
	return r;
}

static void check_resident(struct region *r, const char *how)
{
	size_t len = heap->region_size, npages = len / 4096, in = 0;
	unsigned char *vec = malloc(npages);

	T_ASSERT(vec);
	T_ASSERT_EQ(mincore(r->bottom, len, vec), 0);
	for (size_t i = 0; i < npages; i++)
		in += vec[i] & 1;
	printf("%s: region %ld: %zu of %zu pages resident, type %d\n", how,
	       (long)(r - heap->regions), in, npages, r->type);
	T_ASSERT(!(r->flags & RF_ZEROED));
	/* a collection that came meanwhile may have used or freed it, never
	 * uncommitted it (free regions stay committed for 16 collections) */
	T_ASSERT_EQ(in, npages);
	free(vec);
}

static uint32_t backed_free(void)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < heap->nregions; i++)
		n += heap->regions[i].type == RT_FREE && !(heap->regions[i].flags & RF_ZEROED);
	return n;
}

/* Every new eden region between collections: a backed one only if more
 * backed free regions than tospace_need were left for it to take from. */
static void eden_leaves_tospace_backed(void)
{
	unsigned fresh_over_backed = 0, checked = 0;

	for (int round = 0; round < 40; round++) {
		uint64_t gcs = t_stats(heap).young_gcs;
		long cur = heap->alloc.eden_cur;

		while (heap->alloc.eden_cur == cur)
			T_ASSERT(kgc_alloc(th, node));
		if (t_stats(heap).young_gcs != gcs)
			continue;	/* a collection took and freed regions meanwhile */
		checked++;
		uint32_t backed = backed_free();

		if (heap->alloc.eden_cur_zeroed) {
			fresh_over_backed += backed > 0;
		} else if (backed + 1 <= heap->tospace_need) {
			printf("eden took backed region %ld with %u backed free, to-space needs %u\n",
			       heap->alloc.eden_cur, backed + 1, heap->tospace_need);
			T_FAIL("eden took a region the next pause's to-space needs");
		}
	}
	printf("eden regions checked: %u; fresh ones taken while backed ones were free: %u\n", checked,
	       fresh_over_backed);
	T_ASSERT(checked >= 10);
	T_ASSERT(fresh_over_backed >= 1);
}

int main(void)
{
	struct kgc_options o;

	t_opts_small(&o, 256, 8);
	heap = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &th), 0);
	check_resident(backed_region(), "populate");
	atomic_store(&heap->be.no_populate, true);
	check_resident(backed_region(), "stores only");
	eden_leaves_tospace_backed();
	printf("%llu young collections\n", (unsigned long long)t_stats(heap).young_gcs);
	T_ASSERT_EQ(kgc_thread_detach(th), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
