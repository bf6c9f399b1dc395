/* SPDX-License-Identifier: MIT */
/*
 * kgci_backend_move_regions' copy fallback (what a kernel without
 * MREMAP_DONTUNMAP, a module without KGC_IOC_REGION_MOVE, or a refused page
 * move gets): forced here; the same random moves as gc_move_regions give
 * the same bytes, counted as copies, no page move made, and the source's
 * regions outside the destination read zero (released).
 */
#include "move_test.h"

#define NREG 48

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_heap *h = mt_heap(NREG, 1, 0);

	h->be.move_kind = MOVE_COPY;
	mt_random_moves(h, NREG, 150, seed);
	printf("moves by pages %llu, copies %llu\n",
	       (unsigned long long)h->be.move_calls, (unsigned long long)h->be.move_copies);
	T_ASSERT_EQ(h->be.move_calls, 0);
	T_ASSERT(h->be.move_copies >= 150 - 150 / NREG * 2);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
