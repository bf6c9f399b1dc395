/* SPDX-License-Identifier: MIT */
/*
 * A humongous object in a critical section (pinned) never moves in a full
 * collection, though a hole above it would take it, and the object below it
 * does not pass it either; once released, the next full collection moves
 * both up into the hole, contents intact.
 */
#include "tgc.h"

int main(void)
{
	unsigned long long seed = t_seed(), s2;
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 }, x, y;
	struct kgc_frame f;
	void *p;
	size_t n = (5u << 19) / 8, len;

	t_opts_small(&o, 64, 4);
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 4u << 20);	/* top 5 regions */
	slots[0] = x = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), n);	/* 3 below */
	slots[1] = y = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1u << 19);	/* 1 below */
	T_ASSERT(slots[0] && slots[1] && slots[2]);
	s2 = seed;
	for (size_t i = 0; i < n; i++)
		((uint64_t *)kgc_array_data(x))[i] = t_rand(&s2);
	slots[2] = NULL;	/* the hole */
	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(p == kgc_array_data(x));
	t_collect_elsewhere(h, KGC_GC_FULL, 2, node);
	T_ASSERT_EQ(t_stats(h).humongous_moved, 0);
	T_ASSERT(slots[0] == x && slots[1] == y);
	s2 = seed;
	for (size_t i = 0; i < n; i++)
		T_ASSERT_EQ(((uint64_t *)p)[i], t_rand(&s2));
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(t_stats(h).humongous_moved, 2);
	T_ASSERT((char *)slots[0] == (char *)x + (5u << 20) && (char *)slots[1] == (char *)y + (5u << 20));
	s2 = seed;
	for (size_t i = 0; i < n; i++)
		T_ASSERT_EQ(((uint64_t *)kgc_array_data(slots[0]))[i], t_rand(&s2));
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
