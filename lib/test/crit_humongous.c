/* A pinned humongous array is never reclaimed while pinned, even unreachable. */
#include "tgc.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_obj tmp;
	char *p;
	size_t len;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	tmp = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 2u << 20);
	T_ASSERT(tmp);
	T_ASSERT_EQ(t_stats(h).regions_humongous, 3);
	memset(kgc_array_data(tmp), 0x5a, 2u << 20);
	p = kgc_critical_get(t, &tmp, &len);
	T_ASSERT_EQ(len, 2u << 20);
	t_collect_elsewhere(h, KGC_GC_FULL, 2, node);
	T_ASSERT_EQ(t_stats(h).regions_humongous, 3);
	for (size_t i = 0; i < len; i += 4096)
		T_ASSERT_EQ(p[i], 0x5a);
	T_ASSERT_EQ(kgc_critical_release(t, &tmp, p, 0), 0);
	tmp = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(t_stats(h).regions_humongous, 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
