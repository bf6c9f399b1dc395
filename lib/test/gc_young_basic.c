/* Young GC moves a rooted list; frame slots are updated; contents intact. */
#include "tgc.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 8, &node);
	kgc_thread *t;
	kgc_obj slots[2] = { NULL, NULL };
	struct kgc_frame f;
	kgc_obj before;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	for (int i = 0; i < 20000; i++) {
		slots[1] = kgc_alloc(t, node);
		T_ASSERT(slots[1]);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = i;
		kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
		slots[0] = slots[1];
	}
	slots[1] = NULL;
	before = slots[0];
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(slots[0] != before);
	T_ASSERT_EQ(t_stats(h).young_gcs, 1);
	t_churn(t, h, node, 5);
	{
		kgc_obj o = slots[0];
		int64_t want = 19999;

		while (o) {
			T_ASSERT_EQ(KGC_FIELD(o, N_VALUE, int64_t), want);
			T_ASSERT_EQ(kgc_obj_type(o), node);
			want--;
			o = kgc_get_ref(o, N_LEFT);
		}
		T_ASSERT_EQ(want, -1);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("ok\n");
	return 0;
}
