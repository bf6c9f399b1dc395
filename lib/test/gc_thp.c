/* SPDX-License-Identifier: MIT */
/*
 * KGC_THP / kgc_options.thp: the anon backend madvises the heap
 * MADV_HUGEPAGE only when asked. Checked in /proc/self/smaps: the heap's
 * mapping has the "hg" VmFlag with thp = 1 and not without. SKIP where the
 * kernel has no transparent huge pages.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tgc.h"
#include "../gc_internal.h"

/* 1: the mapping holding addr has VmFlags "hg"; 0: it has not; -1: not found */
static int vma_hugepage(const void *addr)
{
	char flags[256];

	if (t_smaps_value(addr, "VmFlags", flags, sizeof(flags)))
		return -1;
	return strstr(flags, " hg") != NULL;
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK)) {
		printf("SKIP: kernel without transparent huge pages\n");
		return 77;
	}
	for (unsigned thp = 0; thp <= 1; thp++) {
		T_ASSERT_EQ(kgc_options_init(&o), 0);
		o.backend = KGC_BACKEND_ANON;
		o.max_heap = 64 << 20;
		o.thp = thp;
		T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
		T_ASSERT_EQ(vma_hugepage(h->base), (int)thp);
		T_ASSERT_EQ(vma_hugepage(h->base + (o.max_heap - 1)), (int)thp);
		T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	}
	puts("ok: MADV_HUGEPAGE on the heap only with thp = 1");
	return 0;
}
