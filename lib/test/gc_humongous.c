/* Humongous arrays: >= half a region, contiguous regions, never moved, freed when dead. */
#include "tgc.h"

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };
	struct kgc_frame f;
	kgc_obj a;
	struct kgc_stats s;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), (3u << 20) / 8);	/* 3 MiB: 4 regions */
	T_ASSERT(slots[0]);
	slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 600 << 10);	/* just over half */
	T_ASSERT(slots[1]);
	slots[2] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 100000);	/* 800K ref array */
	T_ASSERT(slots[2]);
	s = t_stats(h);
	T_ASSERT_EQ(s.regions_humongous, 4 + 1 + 1);
	for (size_t i = 0; i < kgc_array_length(slots[0]); i++)
		((int64_t *)kgc_array_data(slots[0]))[i] = (int64_t)i * 7;
	a = slots[0];
	/* a young object reachable only from the humongous ref array */
	kgc_array_set_ref(t, slots[2], 99999, kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 3));
	((int32_t *)kgc_array_data(kgc_array_get_ref(slots[2], 99999)))[2] = 5;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(slots[0] == a);
	for (size_t i = 0; i < kgc_array_length(slots[0]); i++)
		T_ASSERT_EQ(((int64_t *)kgc_array_data(slots[0]))[i], (int64_t)i * 7);
	T_ASSERT_EQ(((int32_t *)kgc_array_data(kgc_array_get_ref(slots[2], 99999)))[2], 5);
	slots[0] = slots[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	s = t_stats(h);
	T_ASSERT_EQ(s.regions_humongous, 1);
	slots[2] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(t_stats(h).regions_humongous, 0);
	/* larger than the heap: clean failure */
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 200u << 20) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "fit") || strstr(kgc_last_error(), "memory"));
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
