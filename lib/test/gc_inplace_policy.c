/* The policy's evacuation budget (kgci_policy_evac_budget), which decides
 * when a young pause stops copying and promotes the rest in place:
 *  - before copying was ever measured: 0.8x the goal, 1 MiB;
 *  - after a garbage phase (survival near 0): still 1 MiB - a pause that
 *    copies more than that is a surprise, whatever its length;
 *  - after a phase in which everything survives: 1.25x the expected
 *    survivors, and at least 0.8x the goal;
 *  - KGC_PAUSE_BUDGET=off (the default): none.
 * (The pause's side, promoting in place once past it: gc_inplace_budget.) */
#include "tgc.h"
#include "../gc_internal.h"

enum { GOAL_MS = 4 };

static kgc_heap *heap(unsigned pause_budget, kgc_type_id *node)
{
	struct kgc_options o;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 128ul << 20;
	o.region_size = 1ul << 20;
	o.pause_goal_ms = GOAL_MS;
	o.verify = 1;
	o.pause_budget = pause_budget;
	return t_heap_opts(&o, node);
}

static struct evac_budget budget(kgc_heap *h)
{
	struct evac_budget b;

	pthread_mutex_lock(&h->lock);
	kgci_policy_evac_budget(h, &b);
	pthread_mutex_unlock(&h->lock);
	return b;
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = heap(KGC_PAUSE_BUDGET_ON, &node);
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;
	struct evac_budget b;
	struct kgc_options o;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	b = budget(h);
	T_ASSERT_EQ(b.ns, GOAL_MS * 800000ull);
	T_ASSERT_EQ(b.bytes, 1u << 20);
	t_churn(t, h, node, 20);	/* nothing survives */
	b = budget(h);
	T_ASSERT(b.ns >= GOAL_MS * 800000ull);
	T_ASSERT_EQ(b.bytes, 1u << 20);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	/* every young object survives: one list that only grows */
	h = heap(KGC_PAUSE_BUDGET_ON, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	while (t_stats(h).young_gcs < 6) {
		kgc_obj n = kgc_alloc(t, node);

		T_ASSERT(n);
		kgc_set_ref(t, n, N_LEFT, slot);
		slot = n;
	}
	b = budget(h);
	T_ASSERT(h->pol.survival > 0.5);
	T_ASSERT(b.ns >= GOAL_MS * 800000ull);
	T_ASSERT(b.bytes > 1u << 20);
	T_ASSERT(b.bytes >= (size_t)(1.25 * h->pol.survival * h->pol.young_target * h->region_size));
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	h = heap(KGC_PAUSE_BUDGET_OFF, &node);
	T_ASSERT_EQ(budget(h).ns, 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	T_ASSERT_EQ(kgc_options_init(&o), 0);	/* the default */
	T_ASSERT_EQ(o.pause_budget, KGC_PAUSE_BUDGET_OFF);
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(budget(h).ns, 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
