/* SPDX-License-Identifier: MIT */
/*
 * A young pause goes on filling the old region the last one promoted into
 * (promote.c, G1's retained old GC alloc region), instead of leaving its
 * tail unused and taking a new one: ten pauses that each promote a small
 * list use one old region, every list intact (verifier on). Not once the
 * region is pinned: then the next pause takes another.
 */
#include "tgc.h"
#include "../gc_internal.h"

#define NLISTS 10
#define LLEN 200	/* 200 x 32 bytes: far less than a region */

int main(void)
{
	struct kgc_options o;
	kgc_heap *heap;
	kgc_type_id node;
	kgc_thread *t;
	kgc_obj slots[NLISTS + 1] = { 0 };
	struct kgc_frame f;
	struct region *r;
	uint32_t old0;
	size_t len;
	void *p;

	t_opts_small(&o, 64, 4);
	o.gc_threads = 1;
	o.ihop_percent = 100;	/* no cycle: old regions stay as they are */
	o.verify = 1;
	heap = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	kgc_frame_push(t, &f, slots, NLISTS + 1, NULL);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	old0 = t_stats(heap).regions_old;

	for (int i = 0; i < NLISTS; i++) {
		t_list(t, node, &slots[i], LLEN, (int64_t)i * LLEN);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		T_ASSERT_EQ(region_of(heap, slots[i])->type, RT_OLD);
		if (i)
			T_ASSERT(region_of(heap, slots[i]) == region_of(heap, slots[0]));
	}
	printf("%d pauses promoted a list each: old regions %u -> %u\n", NLISTS, old0, t_stats(heap).regions_old);
	T_ASSERT_EQ(t_stats(heap).regions_old, old0 + 1);
	for (int i = 0; i < NLISTS; i++)
		t_list_check(slots[i], LLEN);

	/* pinned (a critical section on an array in it): the next pause takes another region */
	slots[NLISTS] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 16);
	T_ASSERT(slots[NLISTS]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	r = region_of(heap, slots[NLISTS]);
	T_ASSERT(r == region_of(heap, slots[0]));
	t_list(t, node, &slots[0], LLEN, 0);
	p = kgc_critical_get(t, &slots[NLISTS], &len);
	T_ASSERT(p);
	t_collect_elsewhere(heap, KGC_GC_YOUNG, 1, node);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[NLISTS], p, 0), 0);
	T_ASSERT(region_of(heap, slots[0]) != r);
	T_ASSERT_EQ(region_of(heap, slots[0])->type, RT_OLD);
	t_list_check(slots[0], LLEN);
	printf("pinned: the next list went to region %ld, not %ld\n", (long)(region_of(heap, slots[0]) - heap->regions),
	       (long)(r - heap->regions));
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
