/* SPDX-License-Identifier: MIT */
/*
 * Retained regions are evacuated in bulk once unpinned: arrays pinned in
 * NREG distinct eden regions make all of them fail evacuation (old,
 * retained); an old table references every array (stored before the
 * failure, so the failing collection itself must keep those cards dirty).
 * After the release, ONE young collection evacuates all NREG regions (their
 * live bytes are far below the policy's budget; NREG is below its cap of
 * 10% of the regions), the arrays keep their contents, and no region stays
 * retained. Verifier on.
 */
#include "tgc.h"
#include "../gc_internal.h"

#define NREG 12
#define LEN 1000

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(256, 32, &node);
	kgc_thread *t;
	kgc_obj slots[NREG + 2] = { 0 };	/* 0..NREG-1: arrays, NREG: table, NREG+1: scratch */
	void *elems[NREG];
	uint32_t ridx[NREG];
	struct kgc_frame f;
	struct kgc_stats s0;
	size_t len;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, NREG + 2, NULL);
	slots[NREG] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NREG);
	T_ASSERT(slots[NREG]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(region_of(h, slots[NREG])->type, RT_OLD);

	/* one array per eden region: garbage in between moves to the next one */
	for (int i = 0; i < NREG; i++) {
		do {
			slots[NREG + 1] = kgc_alloc(t, node);
			T_ASSERT(slots[NREG + 1]);
		} while (i && region_index(h, slots[NREG + 1]) == ridx[i - 1]);
		slots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), LEN);
		T_ASSERT(slots[i]);
		ridx[i] = region_index(h, slots[i]);
		T_ASSERT(!i || ridx[i] != ridx[i - 1]);
		T_ASSERT_EQ(region_of(h, slots[i])->type, RT_EDEN);
		for (int j = 0; j < LEN; j++)
			((int32_t *)kgc_array_data(slots[i]))[j] = i * 1000 + j;
		kgc_array_set_ref(t, slots[NREG], i, slots[i]);
	}
	T_ASSERT_EQ(t_stats(h).young_gcs, 0);	/* all still in eden */

	for (int i = 0; i < NREG; i++) {
		elems[i] = kgc_critical_get(t, &slots[i], &len);
		T_ASSERT(elems[i] && len == LEN);
	}
	t_collect_elsewhere(h, KGC_GC_YOUNG, 1, node);
	for (int i = 0; i < NREG; i++) {
		T_ASSERT_EQ(h->regions[ridx[i]].type, RT_OLD);
		T_ASSERT_EQ(h->regions[ridx[i]].retained, 1);
		T_ASSERT(kgc_array_data(slots[i]) == elems[i]);	/* not moved */
	}
	for (int i = NREG - 1; i >= 0; i--)
		T_ASSERT_EQ(kgc_critical_release(t, &slots[i], elems[i], KGC_CRITICAL_COMMIT), 0);
	for (int i = 0; i < NREG; i++)
		slots[i] = NULL;	/* only the old table refers to them now */

	s0 = t_stats(h);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(t_stats(h).young_gcs, s0.young_gcs + 1);
	T_ASSERT_EQ(t_stats(h).full_gcs, s0.full_gcs);
	for (int i = 0; i < NREG; i++)
		if (h->regions[ridx[i]].retained)
			T_FAIL("region %u (array %d) still retained after one young GC", ridx[i], i);
	T_ASSERT_EQ(h->retained_pending, 0);
	for (int i = 0; i < NREG; i++) {
		kgc_obj a = kgc_array_get_ref(slots[NREG], i);

		T_ASSERT(a && region_index(h, a) != ridx[i]);
		T_ASSERT_EQ(kgc_array_length(a), LEN);
		for (int j = 0; j < LEN; j++)
			T_ASSERT_EQ(((int32_t *)kgc_array_data(a))[j], i * 1000 + j);
	}
	printf("%d retained regions evacuated by one young GC after release; contents intact\n", NREG);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
