/* Aging: with KGC_TENURE=2 an object is copied to survivor twice, then promoted. */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;

	setenv("KGC_TENURE", "2", 1);
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc(t, node);
	T_ASSERT_EQ(region_of(h, slot)->type, RT_EDEN);
	T_ASSERT_EQ(hdr_age(*obj_hdr(slot)), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(region_of(h, slot)->type, RT_SURVIVOR);
	T_ASSERT_EQ(hdr_age(*obj_hdr(slot)), 1);
	T_ASSERT_EQ(t_stats(h).bytes_promoted, 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(region_of(h, slot)->type, RT_OLD);
	T_ASSERT_EQ(hdr_age(*obj_hdr(slot)), 2);
	T_ASSERT_EQ(t_stats(h).bytes_promoted, 32);
	{
		kgc_obj before = slot;

		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		T_ASSERT(slot == before);	/* old objects do not move in young GCs */
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
