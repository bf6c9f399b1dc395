/* SPDX-License-Identifier: MIT */
/*
 * Fragmentation: large arrays of random sizes (1-4 regions) with mixed
 * lifetimes fill the heap, then every other one dies: more than half the
 * regions are free but no run of 16 is. A 16 MiB array then succeeds only
 * because the collection its allocation runs moves the survivors together
 * (without moving humongous objects - the library before issue 32 - it
 * failed with ENOMEM); the survivors keep their contents.
 */
#include "tgc.h"
#include "../gc_internal.h"
#include "t_regions.h"

#define MAXA 64

int main(void)
{
	unsigned long long seed = t_seed(), s2;
	struct kgc_options o;
	kgc_heap *h;
	kgc_type_id node;
	kgc_thread *t;
	kgc_obj slots[MAXA + 1] = { 0 };
	size_t len[MAXA];
	struct kgc_frame f;
	struct kgc_stats st;
	int n = 0;

	t_opts_small(&o, 64, 4);
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, MAXA + 1, NULL);
	s2 = seed;
	/* fill: until about 56 of the 64 regions are humongous */
	n = t_fill_humongous(t, h, slots, len, MAXA, 52, 4, &s2);
	for (int i = 0; i < n; i += 2)
		slots[i] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	st = t_stats(h);
	printf("%d arrays, %u regions free, %u humongous, longest free run %u\n", n, st.regions_free,
	       st.regions_humongous, t_longest_free_run(h));
	T_ASSERT(st.regions_free > 16);
	T_ASSERT(t_longest_free_run(h) < 16);
	slots[MAXA] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 16u << 20);
	st = t_stats(h);
	printf("16 MiB: %s; full collections %llu, humongous moved %llu\n", slots[MAXA] ? "allocated" : "failed",
	       (unsigned long long)st.full_gcs, (unsigned long long)st.humongous_moved);
	T_ASSERT(slots[MAXA]);
	T_ASSERT(st.humongous_moved > 0);
	for (int i = 1; i < n; i += 2) {
		const unsigned char *d = kgc_array_data(slots[i]);

		T_ASSERT_EQ(kgc_array_length(slots[i]), len[i]);
		for (size_t k = 0; k < len[i]; k += 4093)
			T_ASSERT_EQ(d[k], i + 1);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
