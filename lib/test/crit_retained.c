/* SPDX-License-Identifier: MIT */
/*
 * JEP 423 "retained" regions: a pinned eden region fails evacuation and
 * becomes old in place; references into it stored afterwards in an old
 * table survive a young collection while it is pinned again (their cards
 * stay dirty); once unpinned, the next young collection evacuates its live
 * objects and frees the region, without a full collection. Verifier on.
 */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_obj slots[4] = { 0 };	/* 0: array, 1: neighbour, 2: old table, 3: scratch */
	struct kgc_frame f;
	kgc_obj arr, nb;
	uint32_t ridx;
	int32_t *p;
	size_t len;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 4, NULL);
	/* an old table (promoted by a full GC) */
	slots[2] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 64);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(region_of(h, slots[2])->type, RT_OLD);
	/* an array and a neighbour in one eden region */
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1000);
	for (int i = 0; i < 1000; i++)
		((int32_t *)kgc_array_data(slots[0]))[i] = 3 * i;
	slots[1] = kgc_alloc(t, node);
	KGC_FIELD(slots[1], N_VALUE, int64_t) = 1234;
	arr = slots[0];
	nb = slots[1];
	ridx = region_index(h, arr);
	T_ASSERT_EQ(region_of(h, nb), region_of(h, arr));

	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(p);
	t_collect_elsewhere(h, KGC_GC_YOUNG, 1, node);
	T_ASSERT_EQ(h->regions[ridx].type, RT_OLD);
	T_ASSERT_EQ(h->regions[ridx].retained, 1);
	T_ASSERT(slots[0] == arr && slots[1] == nb);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, KGC_CRITICAL_COMMIT), 0);

	/* old -> retained references made after the failure, only there */
	kgc_array_set_ref(t, slots[2], 7, slots[1]);
	kgc_array_set_ref(t, slots[2], 8, slots[0]);
	slots[1] = NULL;
	/* pinned again across a young GC: the region stays where it is, and that
	 * GC's card scan must leave the cards of the table's slots dirty */
	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(p && slots[0] == arr);
	t_collect_elsewhere(h, KGC_GC_YOUNG, 1, node);
	T_ASSERT_EQ(h->regions[ridx].retained, 1);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, KGC_CRITICAL_COMMIT), 0);
	slots[0] = NULL;
	/* unpinned now: the next young GC evacuates it, through those cards */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(h->regions[ridx].retained, 0);	/* evacuated and freed */
	slots[1] = kgc_array_get_ref(slots[2], 7);
	slots[0] = kgc_array_get_ref(slots[2], 8);
	T_ASSERT(region_index(h, slots[1]) != ridx && region_index(h, slots[0]) != ridx);
	T_ASSERT_EQ(KGC_FIELD(slots[1], N_VALUE, int64_t), 1234);
	for (int i = 0; i < 1000; i++)
		T_ASSERT_EQ(((int32_t *)kgc_array_data(slots[0]))[i], 3 * i);
	T_ASSERT_EQ(t_stats(h).full_gcs, 1);	/* only the one above */
	printf("retained region %u evacuated after release; contents intact\n", ridx);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
