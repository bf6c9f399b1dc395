/* An array reachable only from native code (an open critical section) survives
 * many young and full collections byte-identical at the same address. */
#include "tgc.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_obj tmp, arr;
	unsigned char *p, copy[4096];
	size_t len;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	arr = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), sizeof(copy));
	for (size_t i = 0; i < sizeof(copy); i++)
		((unsigned char *)kgc_array_data(arr))[i] = (unsigned char)(i * 13 + 1);
	memcpy(copy, kgc_array_data(arr), sizeof(copy));
	tmp = arr;	/* a plain variable: no frame, no handle */
	p = kgc_critical_get(t, &tmp, &len);
	T_ASSERT(p);
	tmp = NULL;	/* native code holds the only reference */
	t_collect_elsewhere(h, KGC_GC_YOUNG, 10, node);
	t_collect_elsewhere(h, KGC_GC_FULL, 3, node);
	T_ASSERT_EQ(memcmp(p, copy, sizeof(copy)), 0);
	T_ASSERT_EQ(kgc_obj_type(arr), KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE));
	T_ASSERT_EQ(kgc_array_length(arr), sizeof(copy));
	T_ASSERT(t_stats(h).young_gcs >= 10);
	tmp = arr;
	T_ASSERT_EQ(kgc_critical_release(t, &tmp, p, 0), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
