/* A young pause past its evacuation budget promotes the rest of the young
 * objects in place (young.c over_budget): with the budget forced to 0 no
 * young object moves, their regions become old, dead objects become
 * fillers (the verifier parses them), live bytes are counted as kept, and
 * the next pause (no budget) copies again. */
#include "tgc.h"
#include "../gc_internal.h"

enum { LEN = 20000 };

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	kgc_obj first, moved;
	struct kgc_stats s;

	t_opts_small(&o, 64, 8);
	o.tenure_threshold = 15;
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	for (int i = 0; i < LEN; i++) {
		slots[1] = kgc_alloc(t, node);
		T_ASSERT(slots[1]);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = i;
		kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
		slots[0] = slots[1];
		T_ASSERT(kgc_alloc(t, node));	/* garbage in between */
	}
	slots[1] = NULL;
	first = slots[0];
	T_ASSERT(region_of(h, first)->type == RT_EDEN);
	kgci_young_test_budget(h, 0, 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	s = t_stats(h);
	T_ASSERT(s.evac_fail_budget >= 1);
	T_ASSERT_EQ(s.evac_fail_alloc, 0);
	T_ASSERT_EQ(s.evac_fail_pinned, 0);
	/* the list's nodes (32 bytes each) are live and kept; the garbage is not */
	T_ASSERT(s.bytes_kept_in_place >= (uint64_t)LEN * 32);
	T_ASSERT(s.bytes_kept_in_place < (uint64_t)2 * LEN * 32);
	T_ASSERT(slots[0] == first);	/* promoted in place */
	T_ASSERT_EQ(region_of(h, first)->type, RT_OLD);
	t_list_check(slots[0], LEN);

	/* the next pause has no budget: young objects are copied again */
	kgci_young_test_budget(h, -1, 1);
	slots[1] = kgc_alloc(t, node);
	KGC_FIELD(slots[1], N_VALUE, int64_t) = 42;
	moved = slots[1];
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(slots[1] != moved);
	T_ASSERT_EQ(KGC_FIELD(slots[1], N_VALUE, int64_t), 42);
	T_ASSERT_EQ(t_stats(h).evac_fail_budget, s.evac_fail_budget);

	/* normal operation afterwards: churn, a full collection */
	t_churn(t, h, node, 3);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_list_check(slots[0], LEN);
	T_ASSERT_EQ(KGC_FIELD(slots[1], N_VALUE, int64_t), 42);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
