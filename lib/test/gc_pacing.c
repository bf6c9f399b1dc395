/* SPDX-License-Identifier: MIT */
/*
 * Allocation pacing: while a concurrent cycle cannot finish (the marker is
 * held by a test hook) and promotion fills old space, allocating threads
 * are slowed down (pacing sleeps) before old space runs so short that the
 * cycle is finished in a pause (degenerated). A full collection ends the
 * cycle and the pacing. Lists promoted meanwhile keep their contents.
 * KGC_PACING=100 turns pacing off: the cycle degenerates without any.
 */
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define NLISTS 512
#define LEN 32

static void check_lists(kgc_obj table)
{
	for (int i = 0; i < NLISTS; i++)
		if (kgc_array_get_ref(table, (size_t)i))
			t_list_check(kgc_array_get_ref(table, (size_t)i), LEN);
}

/* Promote lists with the marker held until the cycle degenerates; returns
 * the pacing sleeps counted before that. */
static uint64_t run(unsigned pacing_percent)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s;
	int64_t v = 0;
	uint64_t paced = 0, t0, wall;

	t_opts_small(&o, 48, 4);
	o.ihop_percent = 1;	/* a cycle starts at the first young GC */
	o.pacing_percent = pacing_percent;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);

	kgci_cm_test_hold(h, true);
	t0 = kgci_now_ns();
	for (int i = 0; t_stats(h).degenerated_cycles == 0; i++) {
		T_ASSERT(i < 1000000);
		kgc_array_set_ref(t, slots[0], (size_t)i % NLISTS, t_list(t, node, &slots[1], LEN, v));
		v += LEN;
		if (i % 64 == 0)
			paced = t_stats(h).pacing_stalls;
	}
	wall = kgci_now_ns() - t0;
	s = t_stats(h);
	printf("KGC_PACING=%u: degenerated after %.1f ms, %llu pacing sleeps before (%.1f ms), %llu young GCs\n",
	       pacing_percent, wall / 1e6, (unsigned long long)paced, s.pacing_stall_ns / 1e6,
	       (unsigned long long)s.young_gcs);
	T_ASSERT(s.pacing_stall_ns < wall);
	T_ASSERT_EQ(s.full_gcs, 1);
	check_lists(slots[0]);

	kgci_cm_test_hold(h, false);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(atomic_load(&h->alloc.pace_permille), 0);
	s = t_stats(h);
	for (int i = 0; i < 1000; i++)
		T_ASSERT(kgc_alloc(t, node));
	T_ASSERT_EQ(t_stats(h).pacing_stalls, s.pacing_stalls);
	check_lists(slots[0]);

	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return paced;
}

int main(void)
{
	T_ASSERT(run(0) > 0);		/* default: paced before the cycle degenerated */
	T_ASSERT_EQ(run(100), 0);	/* off */
	return 0;
}
