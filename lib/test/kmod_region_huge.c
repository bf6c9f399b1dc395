/* SPDX-License-Identifier: MIT */
/*
 * kmod backend, default options: the library picks regions of the size the
 * module backs with huge folios (KGC_IOC_INFO huge_region_shift, 2 MiB on
 * x86-64), not G1's 1 MiB for a heap under 4 GiB, so a runtime that does not
 * set KGC_REGION_SIZE gets PMD-mapped huge pages for its heap: after
 * allocating and touching 16 MiB of arrays, smaps shows the heap mapping
 * ShmemPmdMapped. Skips unless the backend is kmod and the guest's THP can
 * serve shmem. (With the hint ignored the region size is 1 MiB and the heap
 * has no PMD mapping: the test fails.)
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	char buf[128] = "";
	struct kgc_options o;
	kgc_obj arr[8] = { 0 };
	struct kgc_frame fr;
	kgc_thread *t;
	kgc_heap *h;
	FILE *f;

	f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
	T_SKIP_IF(!f, "kernel without transparent huge pages");
	T_ASSERT(fgets(buf, sizeof(buf), f));
	fclose(f);
	T_SKIP_IF(strstr(buf, "[deny]"), "shmem_enabled is deny");
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = (size_t)256 << 20;		/* G1's rule alone: 1 MiB regions */
	o.young_size = (size_t)32 << 20;
	h = t_kmod_heap(&o);
	printf("default region size on kmod: %zu KiB\n", kgc_heap_region_size(h) >> 10);
	T_ASSERT_EQ(kgc_heap_region_size(h), (size_t)2 << 20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &fr, arr, 8, NULL);
	for (int i = 0; i < 8; i++) {
		arr[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), (size_t)2 << 20);
		T_ASSERT(arr[i]);
		memset(kgc_array_data(arr[i]), 0x5a, (size_t)2 << 20);
	}
	T_ASSERT_EQ(t_smaps_value(h->base, "ShmemPmdMapped", buf, sizeof(buf)), 0);
	long pmd = strtol(buf, NULL, 10);
	printf("heap mapping: ShmemPmdMapped %ld kB after 16 MiB of arrays\n", pmd);
	/* Fragmented guest memory may refuse some huge folios; most are huge. */
	T_ASSERT(pmd >= 8 * 1024);
	T_ASSERT_EQ(kgc_frame_pop(t, &fr), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	puts("ok: default regions on kmod are huge-folio sized and PMD-mapped");
	return 0;
}
