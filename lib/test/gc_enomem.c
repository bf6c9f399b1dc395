/* Filling the heap with live data ends in NULL + ENOMEM reason after a full GC;
 * the heap stays intact and usable once data is dropped. */
#include "tgc.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(16, 2, &node);
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	long n = 0;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	for (;;) {
		kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1000);

		if (!a)
			break;
		((int32_t *)kgc_array_data(a))[999] = (int32_t)n;
		slots[1] = a;
		a = kgc_alloc(t, node);
		if (!a)
			break;
		kgc_set_ref(t, a, N_RIGHT, slots[1]);
		kgc_set_ref(t, a, N_LEFT, slots[0]);
		KGC_FIELD(a, N_VALUE, int64_t) = n++;
		slots[0] = a;
	}
	printf("allocated %ld nodes before ENOMEM: %s\n", n, kgc_last_error());
	T_ASSERT(strstr(kgc_last_error(), "out of memory"));
	T_ASSERT(n > 1000);
	T_ASSERT(t_stats(h).full_gcs >= 1);
	/* everything still there */
	{
		long want = n - 1;

		for (kgc_obj o = slots[0]; o; o = kgc_get_ref(o, N_LEFT), want--) {
			T_ASSERT_EQ(KGC_FIELD(o, N_VALUE, int64_t), want);
			T_ASSERT_EQ(((int32_t *)kgc_array_data(kgc_get_ref(o, N_RIGHT)))[999], want);
		}
		T_ASSERT_EQ(want, -1);
	}
	slots[0] = slots[1] = NULL;
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100000) != NULL);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
