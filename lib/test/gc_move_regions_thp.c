/* SPDX-License-Identifier: MIT */
/*
 * kgci_backend_move_regions with transparent huge pages (KGC_THP, 2 MiB
 * regions on the anon backend): a region backed by a huge page, moved
 * 2 MiB-aligned, arrives as a huge page (AnonHugePages of the destination's
 * mapping counts it; mremap moved the PMD whole instead of splitting it),
 * bytes intact, the source reading zero. SKIP without THP or when the
 * kernel gave the source no huge page (memory too fragmented).
 */
#include <unistd.h>
#include "move_test.h"

/* AnonHugePages (kB) of the mapping holding p */
static long huge_kb(const void *p)
{
	char v[64];

	return t_smaps_value(p, "AnonHugePages", v, sizeof(v)) ? -1 : strtol(v, NULL, 10);
}

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_heap *h;
	uint64_t tag = t_rand(&seed) | 1;
	long before, after;

	T_SKIP_IF(access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK), "kernel without transparent huge pages");
	h = mt_heap(16, 2, 1);
	T_SKIP_IF(h->be.move_kind != MOVE_REMAP, "no MREMAP_DONTUNMAP here");
	mt_fill(h, 3, tag);
	before = huge_kb(h->base + ((size_t)3 << h->region_shift));
	T_SKIP_IF(before < 2048, "the kernel backed the region with small pages (no huge page free now)");
	T_ASSERT_EQ(kgci_backend_move_regions(h, 3, 11, 1), 0);
	after = huge_kb(h->base + ((size_t)11 << h->region_shift));
	printf("source mapping AnonHugePages %ld kB before, destination's %ld kB after\n", before, after);
	T_ASSERT(after >= 2048);
	T_ASSERT_EQ(mt_check(h, 11, tag), 1);
	T_ASSERT_EQ(mt_check(h, 3, tag), 0);
	T_ASSERT_EQ(h->be.move_copies, 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
