/* The policy's evacuation budget at work: after a phase in which almost
 * nothing survives, a program builds a large structure at once - eden was
 * sized for the old survival, so copying it all would overrun the pause
 * goal many times over. Some pause of the build must run past its budget
 * and promote the rest in place (kgci_policy_evac_budget_ns); the structure
 * stays intact (verifier on every pause, then checked node by node). */
#include "tgc.h"

enum { GARBAGE_GCS = 30, LEN = 1500000 };	/* 48 MB of 32-byte nodes */

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;
	struct kgc_stats s0, s;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 256ul << 20;
	o.region_size = 1ul << 20;
	o.pause_goal_ms = 2;
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	/* the model learns a survival near 0 */
	t_churn(t, h, node, GARBAGE_GCS);
	s0 = t_stats(h);
	T_ASSERT_EQ(s0.evac_fail_budget, 0);	/* nothing overran its budget yet */
	t_list(t, node, &slot, LEN, 0);
	s = t_stats(h);
	T_ASSERT(s.young_gcs > s0.young_gcs);
	T_ASSERT(s.evac_fail_budget > 0);
	T_ASSERT(s.bytes_kept_in_place > 0);
	t_list_check(slot, LEN);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_list_check(slot, LEN);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
