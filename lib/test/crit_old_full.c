/* A pinned old region survives full GCs unmoved (dead neighbours become
 * fillers), and is compacted once released. Full GCs report it in the
 * pinned stats. */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	kgc_obj arr;
	int64_t *p;
	struct region *r;
	size_t used;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 20000);	/* to die later */
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 5000);
	for (int i = 0; i < 5000; i++)
		((int64_t *)kgc_array_data(slots[0]))[i] = 3 * i + 1;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	arr = slots[0];
	r = region_of(h, arr);
	T_ASSERT_EQ(r->type, RT_OLD);
	T_ASSERT(region_of(h, slots[1]) == r && slots[1] < arr);
	slots[1] = NULL;	/* dead space below the array */
	p = kgc_critical_get(t, &slots[0], NULL);
	used = (size_t)(r->top - r->bottom);
	t_collect_elsewhere(h, KGC_GC_FULL, 3, node);
	T_ASSERT(slots[0] == arr);
	T_ASSERT_EQ(r->type, RT_OLD);
	T_ASSERT_EQ((size_t)(r->top - r->bottom), used);	/* not compacted */
	T_ASSERT_EQ(t_stats(h).pinned_bytes, used);	/* from the full GCs alone */
	T_ASSERT_EQ(t_stats(h).regions_pinned, 1);
	T_ASSERT_EQ(kgc_obj_type((kgc_obj)r->bottom), 0xfffff0u);	/* the dead array is a filler now */
	for (int i = 0; i < 5000; i++)
		T_ASSERT_EQ(p[i], 3 * i + 1);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(slots[0] != arr);	/* slid down once unpinned */
	T_ASSERT_EQ(t_stats(h).pinned_bytes, 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	for (int i = 0; i < 5000; i++)
		T_ASSERT_EQ(((int64_t *)kgc_array_data(slots[0]))[i], 3 * i + 1);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
