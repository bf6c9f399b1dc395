/* SPDX-License-Identifier: MIT */
/*
 * The cycle's root regions (the young objects of its snapshot) are
 * scanned after the pause that starts the cycle, not in it: by the marker,
 * or by the next young pause before it moves them (cmark.c, rr_scan).
 * Old lists are reachable only from survivors when a cycle starts with the
 * marker held: after that pause, the survivor regions are left to scan;
 * the even lists' holders are then cleared (each list moved to an object
 * allocated after the snapshot: the pre-write barrier logs it), the odd
 * ones untouched. The next young pause scans the regions first (none left
 * after it), and every list survives the cycle's sweep (poisoned: a swept
 * node would show). It fails with that scan in the next pause removed (the
 * odd lists are swept) or with the survivors walked in the first pause
 * again (no region is left to scan).
 */
#include "tcycle.h"

#define NLISTS 64
#define LLEN 100

static kgc_type_id NODE;

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };	/* 0: the lists while built; 1: the holders; 2: scratch */
	struct kgc_frame f;
	uint32_t left_after_start, left_after_next;

	t_opts_small(&o, 64, 8);
	o.tenure_threshold = 15;	/* the holders stay young through the test */
	o.ihop_percent = 1;		/* a cycle starts at the first young GC */
	o.verify = 1;
	o.poison = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	/* the lists, old; then each held by a young holder only */
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	for (int i = 0; i < NLISTS; i++)
		kgc_array_set_ref(t, slots[0], (size_t)i, t_list(t, NODE, &slots[2], LLEN, (int64_t)i * LLEN));
	slots[2] = NULL;
	kgci_cm_test_hold(h, true);	/* the marker does no work in the cycle to come */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	slots[1] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[1]);
	for (int i = 0; i < NLISTS; i++) {
		kgc_obj holder = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 1);

		T_ASSERT(holder);
		kgc_array_set_ref(t, holder, 0, kgc_array_get_ref(slots[0], (size_t)i));
		kgc_array_set_ref(t, slots[1], (size_t)i, holder);
	}
	slots[0] = NULL;
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "idle"));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* holders to survivors; the cycle starts */
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));
	left_after_start = kgci_cm_test_rr_left(h);
	for (int i = 0; i < NLISTS; i += 2) {
		kgc_obj holder = kgc_array_get_ref(slots[1], (size_t)i), moved;

		T_ASSERT(region_of(h, holder)->type == RT_SURVIVOR);
		moved = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 1);
		T_ASSERT(moved);
		holder = kgc_array_get_ref(slots[1], (size_t)i);
		kgc_array_set_ref(t, moved, 0, kgc_array_get_ref(holder, 0));
		kgc_array_set_ref(t, holder, 0, NULL);
		kgc_array_set_ref(t, slots[1], (size_t)i, moved);
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	left_after_next = kgci_cm_test_rr_left(h);
	kgci_cm_test_hold(h, false);
	t_cycle_finish(t, h);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	printf("root regions left after the starting pause %u, after the next %u; %llu cycle(s)\n",
	       left_after_start, left_after_next, (unsigned long long)h->st.concurrent_cycles);
	T_ASSERT(left_after_start > 0);
	T_ASSERT_EQ(left_after_next, 0);
	T_ASSERT(h->st.concurrent_cycles >= 1);
	for (int i = 0; i < NLISTS; i++) {
		kgc_obj holder = kgc_array_get_ref(slots[1], (size_t)i);

		T_ASSERT(holder);
		t_list_check(kgc_array_get_ref(holder, 0), LLEN);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	puts("PASS");
	return 0;
}
