/* SPDX-License-Identifier: MIT */
/*
 * kgci_backend_move_regions on the anon backend, by pages (mremap with
 * MREMAP_DONTUNMAP): random moves of random lengths (overlapping ones
 * included) between regions; after each the destination holds the
 * source's bytes, the source's regions outside it read zero, and no copy
 * was made. Over 600 moves the heap's mappings stay within one per
 * region plus one (each moved range is a VMA of its own: bounded by the
 * region boundaries, not by the number of moves).
 */
#include "move_test.h"

#define NREG 64

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_heap *h = mt_heap(NREG, 1, 0);
	int maxv = 0;

	T_SKIP_IF(h->be.move_kind != MOVE_REMAP, "no MREMAP_DONTUNMAP here (kernel < 5.7): the copy is tested apart");
	maxv = mt_random_moves(h, NREG, 600, seed);
	printf("moves by pages %llu, copies %llu, heap VMAs at most %d for %d regions\n",
	       (unsigned long long)h->be.move_calls, (unsigned long long)h->be.move_copies, maxv, NREG);
	T_ASSERT_EQ(h->be.move_copies, 0);
	T_ASSERT(h->be.move_calls >= 600 - 600 / NREG * 2);
	T_ASSERT(maxv <= NREG + 1);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
