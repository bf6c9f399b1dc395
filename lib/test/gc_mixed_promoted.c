/* SPDX-License-Identifier: MIT */
/*
 * Mixed candidates' remembered sets cover objects promoted while the cycle
 * marked (mixed.c's walk above TAMS): a dense old set (compacted by a full
 * GC) loses 4 of 5 lists; with the marker held, a cycle starts and young
 * pauses promote one holder node per surviving list, pointing at its head
 * (above TAMS in new old regions, promoted before any region is a
 * candidate, so no young pause records them). Then the cycle runs: remark
 * makes the sparse regions candidates, mixed GCs evacuate them. Every
 * holder's reference into a candidate must be in its remembered set - the
 * verifier checks at every pause once the sets are built, and afterwards
 * every holder still leads to its intact list. Fails with the walk above
 * TAMS left out (the sweep alone never sees the holders).
 */
#include "tgc.h"
#include "../gc_internal.h"

enum { LIST = 16, NLISTS = 32768, NHOLD = NLISTS / 5 };

static kgc_type_id NODE;
static kgc_thread *t;

/* List seed: t_list's values seed * 100 .. seed * 100 + LIST - 1. */
static void check_list(kgc_obj l, long seed)
{
	T_ASSERT(l != NULL);
	if (KGC_FIELD(l, N_VALUE, int64_t) != seed * 100 + LIST - 1)
		T_FAIL("list of seed %ld: head holds %lld", seed, (long long)KGC_FIELD(l, N_VALUE, int64_t));
	t_list_check(l, LIST);
}

int main(void)
{
	kgc_obj slots[3] = { 0 };	/* 0: table, 1: holders, 2: scratch */
	struct kgc_frame f;
	struct kgc_options o;
	struct kgc_stats s0, s;
	kgc_heap *heap;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_opts_small(&o, 64, 4);
	o.ihop_percent = 1;
	o.mixed_live_percent = 50;
	o.verify = 1;
	heap = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(heap, "mixed-promoted", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	for (long i = 0; i < NLISTS; i++)
		kgc_array_set_ref(t, slots[0], i, t_list(t, NODE, &slots[2], LIST, i * 100));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* dense old regions */
	for (long i = 0; i < NLISTS; i++)
		if (i % 5)
			kgc_array_set_ref(t, slots[0], i, NULL);

	/* a cycle starts and stays in marking; holders are promoted meanwhile */
	kgci_cm_test_hold((struct kgc_heap *)heap, true);
	for (int k = 0; k < 200 && strcmp(kgci_cm_test_state((struct kgc_heap *)heap), "marking"); k++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(!strcmp(kgci_cm_test_state((struct kgc_heap *)heap), "marking"));
	slots[1] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NHOLD);
	T_ASSERT(slots[1]);
	for (long j = 0; j < NHOLD; j++) {
		kgc_obj hd = kgc_alloc(t, NODE);

		T_ASSERT(hd != NULL);
		kgc_set_ref(t, hd, N_LEFT, kgc_array_get_ref(slots[0], j * 5));
		KGC_FIELD(hd, N_VALUE, int64_t) = j * 5;
		kgc_array_set_ref(t, slots[1], j, hd);
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* tenure 1: promoted */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(!strcmp(kgci_cm_test_state((struct kgc_heap *)heap), "marking"));
	/* the table lets go: the holders are the only path to the lists */
	for (long i = 0; i < NLISTS; i += 5)
		kgc_array_set_ref(t, slots[0], i, NULL);
	kgci_cm_test_hold((struct kgc_heap *)heap, false);

	s0 = t_stats(heap);
	do {
		t_churn(t, heap, NODE, 1);
		s = t_stats(heap);
		if (!s.mixed_gcs)
			t_nap_native(t, 1000);	/* the marker needs a CPU */
	} while (s.mixed_regions < 8 && s.young_gcs < s0.young_gcs + 4000);
	for (long j = 0; j < NHOLD; j++) {
		kgc_obj hd = kgc_array_get_ref(slots[1], j);

		check_list(kgc_get_ref(hd, N_LEFT), KGC_FIELD(hd, N_VALUE, int64_t));
	}
	printf("promoted holders: %llu mixed GCs evacuated %llu regions, %llu cycles, %llu full\n",
	       (unsigned long long)s.mixed_gcs, (unsigned long long)s.mixed_regions,
	       (unsigned long long)s.concurrent_cycles, (unsigned long long)s.full_gcs);
	T_ASSERT(s.mixed_regions >= 8);
	T_ASSERT_EQ(s.full_gcs, s0.full_gcs);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	printf("PASS\n");
	return 0;
}
