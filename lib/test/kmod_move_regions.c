/* SPDX-License-Identifier: MIT */
/*
 * kgci_backend_move_regions on the kmod backend: the library's relocation
 * primitive through the module's KGC_IOC_REGION_MOVE (KGC_FEAT_REGION_MOVE
 * in KGC_IOC_INFO). 600 random moves of 1-8 regions among 64 (overlapping
 * ones in disjoint pieces, a third of the regions never touched), each
 * checked: the destination holds the source's bytes, the source reads zero.
 * Every move must go by pages (no copy). Skips without /dev/kgc or on a
 * module without the ioctl. Seeded (KGC_SEED).
 */
#include "move_test.h"

#define NREG 64

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_heap *h = mt_heap_on(KGC_BACKEND_KMOD, NREG, 1, 0);

	T_SKIP_IF(!h, "no /dev/kgc (kgc.ko not loaded)");
	T_SKIP_IF(h->be.move_kind != MOVE_IOCTL, "kgc.ko without KGC_IOC_REGION_MOVE");
	mt_random_moves(h, NREG, 600, seed);
	printf("moves by the module %llu, copies %llu\n",
	       (unsigned long long)h->be.move_calls, (unsigned long long)h->be.move_copies);
	T_ASSERT_EQ(h->be.move_copies, 0);
	T_ASSERT(h->be.move_calls >= 600 - 600 / NREG * 2);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
