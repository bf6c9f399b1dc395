/* Forced to-space exhaustion: objects are self-forwarded in place, their
 * regions become old, every reference is still right. */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	kgc_obj first;
	struct kgc_stats s;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	for (int i = 0; i < 5000; i++) {
		slots[1] = kgc_alloc(t, node);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = i;
		kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
		slots[0] = slots[1];
		T_ASSERT(kgc_alloc(t, node));	/* garbage in between */
	}
	first = slots[0];
	kgci_evac_test_inject_failure(h, 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	s = t_stats(h);
	T_ASSERT(s.evac_fail_alloc >= 1);
	T_ASSERT_EQ(s.evac_fail_pinned, 0);
	T_ASSERT(slots[0] == first);	/* stayed in place */
	T_ASSERT_EQ(region_of(h, first)->type, RT_OLD);
	{
		int64_t want = 4999;

		for (kgc_obj o = slots[0]; o; o = kgc_get_ref(o, N_LEFT))
			T_ASSERT_EQ(KGC_FIELD(o, N_VALUE, int64_t), want--);
		T_ASSERT_EQ(want, -1);
	}
	/* normal operation afterwards */
	t_churn(t, h, node, 3);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(KGC_FIELD(slots[0], N_VALUE, int64_t), 4999);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
