/* SPDX-License-Identifier: MIT */
/*
 * Weak references in every kind of collection: a young GC clears one whose
 * young referent died and updates one whose referent moved; a concurrent
 * cycle clears one whose old referent died (at remark) and keeps one whose
 * referent was fetched with kgc_weak_get while the cycle marked (SATB), even
 * if that was its only path; a full GC clears dead ones and updates moved
 * ones. The verifier runs at every pause and checks every weak referent.
 */
#include <time.h>
#include "tcycle.h"

static kgc_type_id NODE;

static kgc_obj node(kgc_thread *t, int64_t v)
{
	kgc_obj n = kgc_alloc(t, NODE);

	T_ASSERT(n);
	KGC_FIELD(n, N_VALUE, int64_t) = v;
	return n;
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj r[2] = { 0 };
	struct kgc_frame f;
	kgc_weak dead, moved, old_dead, fetched, full_dead;
	kgc_obj before;

	t_opts_small(&o, 64, 4);
	o.ihop_percent = 100;	/* cycles only when this test starts one */
	o.verify = 1;
	o.poison = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, r, 2, NULL);

	/* young GC */
	dead = kgc_weak_new(t, node(t, 1));
	r[0] = node(t, 2);
	moved = kgc_weak_new(t, r[0]);
	T_ASSERT(dead && moved);
	before = r[0];
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(r[0] != before);
	T_ASSERT(kgc_weak_get(t, dead) == NULL);
	T_ASSERT(kgc_weak_get(t, moved) == r[0]);
	T_ASSERT_EQ(KGC_FIELD(kgc_weak_get(t, moved), N_VALUE, int64_t), 2);
	T_ASSERT(region_of(h, r[0])->type == RT_OLD);	/* tenure 1: promoted */

	/* concurrent cycle: an old referent dies; another is only reachable
	 * weakly at the snapshot and fetched while the cycle marks */
	old_dead = kgc_weak_new(t, r[0]);
	r[1] = node(t, 3);
	fetched = kgc_weak_new(t, r[1]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* r[1] old too */
	T_ASSERT(region_of(h, r[1])->type == RT_OLD);
	r[0] = r[1] = NULL;
	kgci_cm_test_hold(h, true);
	h->opt.ihop_percent = 1;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* Concurrent Start */
	h->opt.ihop_percent = 100;
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));
	r[1] = kgc_weak_get(t, fetched);	/* strong again: must survive the cycle */
	T_ASSERT(r[1]);
	kgci_cm_test_hold(h, false);
	t_cycle_finish(t, h);
	T_ASSERT(kgc_weak_get(t, old_dead) == NULL);
	T_ASSERT(kgc_weak_get(t, fetched) == r[1]);
	T_ASSERT_EQ(KGC_FIELD(r[1], N_VALUE, int64_t), 3);
	T_ASSERT(kgc_weak_get(t, moved) == NULL);	/* same referent as old_dead */

	/* full GC: one dies, one moves (compaction slides it down) */
	full_dead = kgc_weak_new(t, node(t, 4));
	r[0] = node(t, 5);
	kgc_weak_free(t, moved);
	moved = kgc_weak_new(t, r[0]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(kgc_weak_get(t, full_dead) == NULL);
	T_ASSERT(kgc_weak_get(t, moved) == r[0]);
	T_ASSERT_EQ(KGC_FIELD(r[0], N_VALUE, int64_t), 5);
	T_ASSERT(kgc_weak_get(t, fetched) == r[1]);
	T_ASSERT(t_stats(h).weak_cleared >= 4);
	printf("weak references cleared in young, concurrent and full collections "
	       "(%llu cleared), updated when their referents moved\n",
	       (unsigned long long)t_stats(h).weak_cleared);
	kgc_weak_free(t, dead);
	kgc_weak_free(t, moved);
	kgc_weak_free(t, old_dead);
	kgc_weak_free(t, fetched);
	kgc_weak_free(t, full_dead);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
