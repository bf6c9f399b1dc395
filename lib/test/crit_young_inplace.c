/* A pinned eden region fails evacuation (cause: pinned): it becomes old in
 * place, the pinned array and its neighbours keep their addresses and
 * contents, references out of the region are still updated. */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };
	struct kgc_frame f;
	kgc_obj arr, nb;
	int32_t *p;
	size_t len;
	struct kgc_stats s;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1000);
	for (int i = 0; i < 1000; i++)
		((int32_t *)kgc_array_data(slots[0]))[i] = i * i;
	slots[1] = kgc_alloc(t, node);	/* neighbour in the same region */
	KGC_FIELD(slots[1], N_VALUE, int64_t) = 99;
	for (int i = 0; i < 100; i++)	/* garbage in the same region */
		T_ASSERT(kgc_alloc(t, node));
	arr = slots[0];
	nb = slots[1];
	T_ASSERT(region_of(h, arr) == region_of(h, nb));
	T_ASSERT_EQ(region_of(h, arr)->type, RT_EDEN);

	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(p == kgc_array_data(arr));
	T_ASSERT_EQ(len, 1000);
	/* the thread is in native state now: another thread collects */
	t_collect_elsewhere(h, KGC_GC_YOUNG, 2, node);
	T_ASSERT(slots[0] == arr);
	T_ASSERT(slots[1] == nb);
	for (int i = 0; i < 1000; i++)
		T_ASSERT_EQ(p[i], i * i);
	p[5] = -5;	/* still writable through the raw pointer */
	s = t_stats(h);
	T_ASSERT(s.evac_fail_pinned >= 1);
	T_ASSERT_EQ(s.evac_fail_alloc, 0);
	T_ASSERT(s.pinned_bytes > 0);
	T_ASSERT(s.regions_pinned >= 1);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, KGC_CRITICAL_COMMIT), 0);
	T_ASSERT_EQ(region_of(h, arr)->type, RT_OLD);
	T_ASSERT_EQ(KGC_FIELD(slots[1], N_VALUE, int64_t), 99);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	/* unpinned: a full GC may move it, contents survive */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(((int32_t *)kgc_array_data(slots[0]))[5], -5);
	T_ASSERT_EQ(((int32_t *)kgc_array_data(slots[0]))[999], 999 * 999);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
