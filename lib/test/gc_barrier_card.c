/* Write barrier: a young object reachable only from an old object survives
 * young GCs through the dirty card; the card stays dirty while the reference
 * points into young space. */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;

	setenv("KGC_TENURE", "3", 1);
	h = t_heap(64, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc(t, node);
	KGC_FIELD(slots[0], N_VALUE, int64_t) = 1;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* full GC: everything becomes old */
	T_ASSERT_EQ(region_of(h, slots[0])->type, RT_OLD);
	slots[1] = kgc_alloc(t, node);
	KGC_FIELD(slots[1], N_VALUE, int64_t) = 42;
	T_ASSERT(region_is_young(region_of(h, slots[1])));
	kgc_set_ref(t, slots[0], N_RIGHT, slots[1]);
	T_ASSERT_EQ(*card_for(h, (char *)slots[0] + N_RIGHT), CARD_DIRTY);
	slots[1] = NULL;	/* only the old object refers to it now */
	for (int i = 0; i < 2; i++) {
		kgc_obj y;

		t_churn(t, h, node, 1);
		y = kgc_get_ref(slots[0], N_RIGHT);
		T_ASSERT(y);
		T_ASSERT_EQ(KGC_FIELD(y, N_VALUE, int64_t), 42);
		T_ASSERT_EQ(region_of(h, y)->type, RT_SURVIVOR);
		/* still old->young: the card must stay dirty */
		T_ASSERT_EQ(*card_for(h, (char *)slots[0] + N_RIGHT), CARD_DIRTY);
	}
	t_churn(t, h, node, 2);	/* reaches the tenuring threshold */
	T_ASSERT_EQ(region_of(h, kgc_get_ref(slots[0], N_RIGHT))->type, RT_OLD);
	T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(slots[0], N_RIGHT), N_VALUE, int64_t), 42);
	t_churn(t, h, node, 1);
	T_ASSERT_EQ(*card_for(h, (char *)slots[0] + N_RIGHT), CARD_CLEAN);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
