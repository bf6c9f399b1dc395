/* SPDX-License-Identifier: MIT */
/*
 * Remark's deadline (cmark.c, kgci_policy_remark_ns): a remark pause that
 * finds marking far from done - the marker declared it finished while an
 * assist still held a subgraph, handed back at the safepoint (binary trees
 * at depth 21: 60-76 ms of marking in the pause) - marks for a quarter of
 * the pause goal and hands the rest back to the concurrent marker.
 *  1. Marker held, a 64 x 4000-node old graph all gray-reachable, the
 *     cycle forced to "remark-ready": the young pause marks for 0.25 ms
 *     (goal 1 ms) and leaves the cycle "marking".
 *  2. Marker released: it finishes, the next remark completes; the
 *     verifier checks the marking (everything reachable below TAMS
 *     marked), the cycle ends, the lists check out before and after a
 *     full collection.
 */
#include "tcycle.h"

#define NLISTS 64
#define LLEN 4000
#define NODE_BYTES (KGC_HEADER_SIZE + 24)	/* t_heap's node type: 24 bytes of payload */

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;

	t_opts_small(&o, 128, 8);
	o.ihop_percent = 1;
	o.verify = 1;
	o.pause_goal_ms = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	for (int i = 0; i < NLISTS; i++) {
		t_list(t, node, &slots[1], LLEN, (int64_t)i * LLEN);
		kgc_array_set_ref(t, slots[0], (size_t)i, slots[1]);
	}
	slots[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* all of it old */
	T_ASSERT_EQ(kgci_policy_remark_ns(h), 250000u);

	kgci_cm_test_hold(h, true);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* initial mark */
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));
	kgci_cm_test_remark_ready(h);
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "remark-ready"));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* remark: out of time */
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));

	kgci_cm_test_hold(h, false);
	t_cycle_wait(t, h, "remark-ready", false);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* remark: the verifier checks the marking */
	T_ASSERT(strcmp(kgci_cm_test_state(h), "marking") && strcmp(kgci_cm_test_state(h), "remark-ready"));
	printf("remark: %llu bytes marked live (graph %llu bytes)\n",
	       (unsigned long long)kgci_cm_test_marked_bytes(h), (unsigned long long)NLISTS * LLEN * NODE_BYTES);
	T_ASSERT(kgci_cm_test_marked_bytes(h) >= (uint64_t)NLISTS * LLEN * NODE_BYTES);
	t_cycle_finish(t, h);
	for (int i = 0; i < NLISTS; i++)
		t_list_check(kgc_array_get_ref(slots[0], (size_t)i), LLEN);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (int i = 0; i < NLISTS; i++)
		t_list_check(kgc_array_get_ref(slots[0], (size_t)i), LLEN);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
