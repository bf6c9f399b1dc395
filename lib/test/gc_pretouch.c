/* SPDX-License-Identifier: MIT */
/*
 * Pre-touch (pretouch.c, kgci_backend_back). (1) Without a second CPU's
 * worth of collector threads (KGC_GC_THREADS=1 here) the allocating thread
 * backs a fresh free region for the next pause's to-space, a slice per
 * slow-path entry, and hands it back to the free list with every page
 * resident (mincore); twice: with MADV_POPULATE_WRITE, and with the
 * fallback that only stores (as after the kernel refused populate once).
 * Eden then leaves backed free regions to the next pause's to-space: it
 * takes one only while more of them are free than that pause needs
 * (kgci_policy_tospace_backed), else fresh memory. (2) With 2 threads the kgc-pretouch
 * thread backs them instead - the mutator never does - and the regions it
 * backs are free, resident and still zero (eden takes them uncleared); a
 * heap destroyed while it works stops it. Verifier on.
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

/* Pages of r resident (mincore). */
static size_t resident(struct region *r)
{
	size_t npages = heap->region_size / 4096, in = 0;
	unsigned char *vec = malloc(npages);

	T_ASSERT(vec);
	T_ASSERT_EQ(mincore(r->bottom, heap->region_size, vec), 0);
	for (size_t i = 0; i < npages; i++)
		in += vec[i] & 1;
	free(vec);
	return in;
}

static void check_resident(struct region *r, const char *how)
{
	size_t npages = heap->region_size / 4096, in = resident(r);

	printf("%s: region %ld: %zu of %zu pages resident, type %d\n", how,
	       (long)(r - heap->regions), in, npages, r->type);
	T_ASSERT(r->type != RT_FREE || kgci_region_backed(r));
	/* a collection that came meanwhile may have used or freed it, never
	 * uncommitted it (free regions stay committed for 16 collections) */
	T_ASSERT_EQ(in, npages);
}

static uint32_t backed_free(void)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < heap->nregions; i++)
		n += heap->regions[i].type == RT_FREE && kgci_region_backed(&heap->regions[i]);
	return n;
}

/* Every new eden region between collections: a backed one only if more
 * backed free regions than kgci_policy_tospace_backed were left for it to take from. */
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
		/* zero and resident: backed ahead (pretouch.c), not fresh */
		bool was_backed = !heap->alloc.eden_cur_zeroed ||
				  resident(&heap->regions[heap->alloc.eden_cur]) > heap->region_size / 4096 / 2;

		if (!was_backed) {
			fresh_over_backed += backed > 0;
		} else if (backed + 1 <= kgci_policy_tospace_backed(heap)) {
			printf("eden took backed region %ld with %u backed free, to-space needs %u\n",
			       heap->alloc.eden_cur, backed + 1, kgci_policy_tospace_backed(heap));
			T_FAIL("eden took a region the next pause's to-space needs");
		}
	}
	printf("eden regions checked: %u; fresh ones taken while backed ones were free: %u\n", checked,
	       fresh_over_backed);
	T_ASSERT(checked >= 10);
	T_ASSERT(fresh_over_backed >= 1);
}

/*
 * The kgc-pretouch thread's regions: until it has backed a few, allocate
 * and look for free regions it left zero and resident; the mutator backs
 * none itself.
 */
static void thread_backs(void)
{
	unsigned seen = 0;

	for (int i = 0; i < 20000000 && (kgci_pretouch_regions(heap) < 4 || !seen); i++) {
		T_ASSERT(kgc_alloc(th, node));
		T_ASSERT(!th->pt_region);
		if (i % 4096)
			continue;
		pthread_mutex_lock(&heap->lock);
		for (uint32_t k = 0; k < heap->nregions; k++) {
			struct region *r = &heap->regions[k];

			if (r->type != RT_FREE || (r->flags & (RF_ZEROED | RF_COMMITTED)) !=
						  (RF_ZEROED | RF_COMMITTED))
				continue;
			/* the thread claims only fresh regions: this one stays */
			T_ASSERT_EQ(resident(r), heap->region_size / 4096);
			for (size_t off = 0; off < heap->region_size; off += sizeof(uint64_t))
				if (*(uint64_t *)(r->bottom + off)) {
					printf("region %u: byte %zu not zero\n", k, off);
					T_FAIL("a region backed ahead is not zero");
				}
			seen++;
		}
		pthread_mutex_unlock(&heap->lock);
	}
	printf("kgc-pretouch backed %llu region(s); seen free, zero and resident: %u time(s)\n",
	       (unsigned long long)kgci_pretouch_regions(heap), seen);
	T_ASSERT(kgci_pretouch_regions(heap) >= 4);
	T_ASSERT(seen >= 1);
}

int main(void)
{
	struct kgc_options o;

	/* (1) one collector thread: the mutator backs the to-space */
	t_opts_small(&o, 256, 8);
	o.gc_threads = 1;
	heap = t_heap_opts(&o, &node);
	T_ASSERT(!kgci_policy_pretouch_thread((struct kgc_heap *)heap));
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &th), 0);
	check_resident(backed_region(), "populate");
	atomic_store(&heap->be.no_populate, true);
	check_resident(backed_region(), "stores only");
	eden_leaves_tospace_backed();
	printf("%llu young collections\n", (unsigned long long)t_stats(heap).young_gcs);
	T_ASSERT_EQ(kgci_pretouch_regions(heap), 0);
	T_ASSERT_EQ(kgc_thread_detach(th), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);

	/* (2) two: the kgc-pretouch thread does it */
	t_opts_small(&o, 256, 8);
	o.gc_threads = 2;
	heap = t_heap_opts(&o, &node);
	T_ASSERT(kgci_policy_pretouch_thread((struct kgc_heap *)heap));
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &th), 0);
	thread_backs();
	/* destroyed while the thread may be backing: it stops, detaches */
	for (int i = 0; i < 100000; i++)
		T_ASSERT(kgc_alloc(th, node));
	T_ASSERT_EQ(kgc_thread_detach(th), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
