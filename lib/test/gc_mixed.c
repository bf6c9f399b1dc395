/* SPDX-License-Identifier: MIT */
/*
 * Mixed collections (mixed.c, young.c, remset.c): old regions left sparse
 * by a concurrent cycle are evacuated by later young collections, through
 * their remembered sets (built by the marker after cleanup, kept by young
 * pauses from the cards the write barrier dirties).
 *  - a dense old live set (compacted by a full GC) loses 4 of 5 lists: its
 *    regions become candidates, mixed collections evacuate them and old
 *    regions are freed, with no full collection, at KGC_MIXED_LIVE=50 and
 *    at the library's default (mixed collections are on by default: it
 *    fails with the default off); while this runs, surviving
 *    lists keep moving between table slots (write barrier during the rebuild
 *    and the mixed phase);
 *  - a candidate holding an array another thread's critical section pins
 *    is not evacuated while pinned (the others are): the array stays put and
 *    intact (it fails with the pinned check in kgci_mixed_select left out);
 *  - sparse regions stay in place while promotion refills more than they
 *    free, and are evacuated once it does not (test_refilled_sparse_kept).
 * The verifier runs at every pause and, once the rebuild is done, checks
 * that every reference into a candidate from another region has a dirty
 * card or is in the candidate's remembered set (it fails with the young
 * pause's remembered-set log, the rebuild's adds, or the mixed pause's
 * dirtying of remembered cards left out).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

enum { LIST = 16, NLISTS = 32768 };

static kgc_heap *heap;
static kgc_type_id NODE;
static kgc_thread *t;
static long seed_of[NLISTS];

/* live_pct 0: the library's default threshold */
static kgc_heap *mixed_heap_mb(unsigned live_pct, size_t heap_mb)
{
	struct kgc_options o;

	t_opts_small(&o, heap_mb, 4);
	o.ihop_percent = 1;
	o.mixed_live_percent = live_pct;
	o.verify = 1;
	return t_heap_opts(&o, &NODE);
}

static kgc_heap *mixed_heap(unsigned live_pct)
{
	return mixed_heap_mb(live_pct, 64);
}

static kgc_obj make_list(kgc_obj *scratch, long seed)
{
	*scratch = NULL;
	for (int i = 0; i < LIST; i++) {
		kgc_obj n = kgc_alloc(t, NODE);

		T_ASSERT(n != NULL);
		kgc_set_ref(t, n, N_LEFT, *scratch);
		KGC_FIELD(n, N_VALUE, int64_t) = seed * 100 + i;
		*scratch = n;
	}
	return *scratch;
}

static void check_list(kgc_obj l, long seed)
{
	int64_t sum = 0;
	int n = 0;

	for (; l; l = kgc_get_ref(l, N_LEFT), n++)
		sum += KGC_FIELD(l, N_VALUE, int64_t);
	if (n != LIST || sum != seed * 100 * LIST + LIST * (LIST - 1) / 2)
		T_FAIL("list of seed %ld damaged: %d nodes, sum %lld", seed, n, (long long)sum);
}

/* Swap two live table entries (their seeds move along). */
static void swap_lists(kgc_obj table)
{
	long i = (rand() % (NLISTS / 5)) * 5, j = (rand() % (NLISTS / 5)) * 5, s;
	kgc_obj a = kgc_array_get_ref(table, i), b = kgc_array_get_ref(table, j);

	kgc_array_set_ref(t, table, i, b);
	kgc_array_set_ref(t, table, j, a);
	s = seed_of[i];
	seed_of[i] = seed_of[j];
	seed_of[j] = s;
}

static void test_sparse_old_evacuated(unsigned live_pct)
{
	kgc_obj slots[2] = { 0 };	/* 0: table, 1: scratch */
	struct kgc_frame f;
	struct kgc_stats s0, s;
	int rounds = 0;

	heap = mixed_heap(live_pct);
	T_ASSERT_EQ(kgc_thread_attach(heap, "mixed", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	for (long i = 0; i < NLISTS; i++) {
		kgc_array_set_ref(t, slots[0], i, make_list(&slots[1], i));
		seed_of[i] = i;
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* dense old regions */
	for (long i = 0; i < NLISTS; i++)
		if (i % 5)
			kgc_array_set_ref(t, slots[0], i, NULL);
	s0 = t_stats(heap);
	/* a cycle finds the regions 1/5 live; after its rebuild, mixed GCs */
	do {
		t_churn(t, heap, NODE, 1);
		for (int k = 0; k < 64; k++)
			swap_lists(slots[0]);
		s = t_stats(heap);
		if (!s.mixed_gcs) {
			/* the marker (cycle, then card rebuild) needs a CPU: on a
			 * loaded 2-CPU host this thread's churn would starve it */
			struct timespec ts = { 0, 1000000 };

			kgc_enter_native(t);
			nanosleep(&ts, NULL);
			kgc_leave_native(t);
		}
	} while ((s.mixed_gcs == 0 || rounds++ < 16) && s.young_gcs < s0.young_gcs + 4000);
	for (long i = 0; i < NLISTS; i += 5)
		check_list(kgc_array_get_ref(slots[0], i), seed_of[i]);
	printf("sparse, threshold %s: old regions %u -> %u, %llu mixed GCs evacuated %llu regions, %llu cycles, %llu full\n",
	       live_pct ? "50%" : "the default", s0.regions_old, s.regions_old, (unsigned long long)s.mixed_gcs,
	       (unsigned long long)s.mixed_regions, (unsigned long long)s.concurrent_cycles,
	       (unsigned long long)s.full_gcs);
	T_ASSERT(s.mixed_gcs > 0);
	T_ASSERT(s.mixed_regions >= 8);
	T_ASSERT(s.regions_old + 8 <= s0.regions_old);
	T_ASSERT_EQ(s.full_gcs, s0.full_gcs);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

/*
 * A candidate that holds a pinned array is passed over while it is pinned
 * (JEP 423: a pinned region is never evacuated) while mixed collections
 * evacuate the other candidates: the array stays where it is, intact. The
 * pin is another thread's critical section (no allocation inside one).
 */
struct pinner {
	kgc_obj arr;		/* read once the pinner holds its own root */
	int32_t *p;
	atomic_int state;	/* 1: pinned, 2: release now, 3: released */
};

static void *pinner_main(void *arg)
{
	struct pinner *pn = arg;
	kgc_thread *pt;
	kgc_obj root = NULL;
	struct kgc_frame f;
	size_t len;

	T_ASSERT_EQ(kgc_thread_attach(heap, "pinner", &pt), 0);
	kgc_frame_push(pt, &f, &root, 1, NULL);
	root = pn->arr;
	pn->p = kgc_critical_get(pt, &root, &len);
	T_ASSERT(pn->p != NULL && len == 256);
	atomic_store(&pn->state, 1);
	while (atomic_load(&pn->state) != 2) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
	T_ASSERT_EQ(kgc_critical_release(pt, &root, pn->p, 0), 0);
	kgc_frame_pop(pt, &f);
	T_ASSERT_EQ(kgc_thread_detach(pt), 0);
	atomic_store(&pn->state, 3);
	return NULL;
}

static void test_pinned_candidate(void)
{
	kgc_obj slots[3] = { 0 };	/* 0: table, 1: scratch, 2: the array */
	struct kgc_frame f;
	struct kgc_stats s0, s;
	struct pinner pn = { 0 };
	bool was_candidate = false;
	struct region *r;
	pthread_t th;

	heap = mixed_heap(0);
	T_ASSERT_EQ(kgc_thread_attach(heap, "mixed-pin", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	for (long i = 0; i < NLISTS; i++) {
		if (i == NLISTS / 2) {	/* among the lists, in a region that turns sparse */
			slots[2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 256);
			T_ASSERT(slots[2]);
			for (int k = 0; k < 256; k++)
				((int32_t *)kgc_array_data(slots[2]))[k] = 7 * k;
		}
		kgc_array_set_ref(t, slots[0], i, make_list(&slots[1], i));
		seed_of[i] = i;
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (long i = 0; i < NLISTS; i++)
		if (i % 5)
			kgc_array_set_ref(t, slots[0], i, NULL);
	/* the pinner roots it itself before this thread may collect again */
	pn.arr = slots[2];
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_create(&th, NULL, pinner_main, &pn), 0);
	while (atomic_load(&pn.state) != 1)
		sched_yield();
	kgc_leave_native(t);
	T_ASSERT(kgc_array_data(slots[2]) == (void *)pn.p);
	r = region_of(heap, slots[2]);
	s0 = t_stats(heap);
	do {
		t_churn(t, heap, NODE, 1);
		for (int k = 0; k < 64; k++)
			swap_lists(slots[0]);
		was_candidate |= r->candidate;
		s = t_stats(heap);
		if (s.mixed_gcs < s0.mixed_gcs + 2)
			t_nap_native(t, 1000);	/* the marker needs a CPU */
	} while ((s.mixed_gcs < s0.mixed_gcs + 2 || !was_candidate) && s.young_gcs < s0.young_gcs + 4000);
	printf("pinned candidate: %llu mixed GCs evacuated %llu regions while it was pinned; it was a candidate: %s\n",
	       (unsigned long long)(s.mixed_gcs - s0.mixed_gcs),
	       (unsigned long long)(s.mixed_regions - s0.mixed_regions), was_candidate ? "yes" : "no");
	T_ASSERT(was_candidate);
	T_ASSERT(s.mixed_gcs >= s0.mixed_gcs + 2);
	T_ASSERT(kgc_array_data(slots[2]) == (void *)pn.p);
	T_ASSERT(region_of(heap, slots[2]) == r && r->type == RT_OLD);
	for (int k = 0; k < 256; k++)
		T_ASSERT_EQ(pn.p[k], 7 * k);
	atomic_store(&pn.state, 2);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(t);
	T_ASSERT_EQ(atomic_load(&pn.state), 3);
	for (long i = 0; i < NLISTS; i += 5)
		check_list(kgc_array_get_ref(slots[0], i), seed_of[i]);
	for (int k = 0; k < 256; k++)
		T_ASSERT_EQ(((int32_t *)kgc_array_data(slots[2]))[k], 7 * k);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

/*
 * Sparse old regions are left to promotion, which reuses their gaps in
 * place, while it refills more than they free: the cycle that finds them
 * sparse follows a period whose promotion, counted twice, exceeds what the
 * sparse regions and the dead promoted lists free (the marker held while
 * this thread promotes), so it chooses no candidate; the next cycle, after a
 * period with almost no promotion, does, and mixed collections evacuate
 * them. (The churn bench run 4x longer kept a larger heap with candidates
 * chosen in every cycle.) It fails with kgci_policy_mixed_surplus's limit
 * left out: the first of the two cycles chooses the candidates, and mixed
 * collections run before the second ends.
 */
static void test_refilled_sparse_kept(void)
{
	kgc_obj slots[3] = { 0 };	/* 0: table, 1: scratch, 2: the promoted lists' table */
	struct kgc_frame f;
	struct kgc_stats s0, s1, s2, s;
	enum { ROUNDS = 2 };

	heap = mixed_heap_mb(0, 96);	/* candidates worth it: 10% of it */
	T_ASSERT_EQ(kgc_thread_attach(heap, "mixed-refill", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	slots[2] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0] && slots[2]);
	for (long i = 0; i < NLISTS; i++) {
		kgc_array_set_ref(t, slots[0], i, make_list(&slots[1], i));
		seed_of[i] = i;
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* dense old regions, no period known */
	/* cycle A starts with every list live; while it is held, promote the
	 * lists of ROUNDS rounds (each replaces the last), then drop them and
	 * 4 of 5 of the table's: A finds nothing sparse (its period is unknown
	 * after the full GC), and B's start measures all of this as its period */
	kgci_cm_test_hold(heap, true);
	s0 = t_stats(heap);
	while (t_stats(heap).concurrent_cycles == s0.concurrent_cycles &&
	       strcmp(kgci_cm_test_state(heap), "idle") == 0)
		t_churn(t, heap, NODE, 1);
	for (int round = 0; round < ROUNDS; round++)
		for (long i = 0; i < NLISTS; i++)
			kgc_array_set_ref(t, slots[2], i, make_list(&slots[1], -1 - i));
	t_churn(t, heap, NODE, 2);	/* the last round's survivors promoted */
	for (long i = 0; i < NLISTS; i++) {
		kgc_array_set_ref(t, slots[2], i, NULL);
		if (i % 5)
			kgc_array_set_ref(t, slots[0], i, NULL);
	}
	s1 = t_stats(heap);
	kgci_cm_test_hold(heap, false);
	/* A ends, B (the period above) ends, C (little promoted) ends */
	do {
		t_churn(t, heap, NODE, 1);
		s = t_stats(heap);
		t_nap_native(t, 1000);	/* the marker needs a CPU */
	} while (s.concurrent_cycles < s1.concurrent_cycles + 3 && s.young_gcs < s1.young_gcs + 4000);
	s2 = s;
	/* then C's candidates are evacuated */
	while (s.mixed_regions < s2.mixed_regions + 8 && s.young_gcs < s2.young_gcs + 4000) {
		t_churn(t, heap, NODE, 1);
		s = t_stats(heap);
		t_nap_native(t, 1000);
	}
	for (long i = 0; i < NLISTS; i += 5)
		check_list(kgc_array_get_ref(slots[0], i), seed_of[i]);
	printf("refilled: %lluM promoted while cycle A was held; %llu mixed GCs by the end of cycle C, "
	       "then %llu evacuating %llu regions; old regions %u -> %u; %llu full\n",
	       (unsigned long long)((s1.bytes_promoted - s0.bytes_promoted) >> 20),
	       (unsigned long long)(s2.mixed_gcs - s0.mixed_gcs), (unsigned long long)(s.mixed_gcs - s2.mixed_gcs),
	       (unsigned long long)(s.mixed_regions - s2.mixed_regions), s2.regions_old, s.regions_old,
	       (unsigned long long)(s.full_gcs - s0.full_gcs));
	T_ASSERT(s2.concurrent_cycles >= s1.concurrent_cycles + 3);
	T_ASSERT_EQ(s2.mixed_gcs, s0.mixed_gcs);	/* B left the sparse regions to promotion */
	T_ASSERT(s.mixed_gcs > s2.mixed_gcs);		/* C did not */
	T_ASSERT(s.mixed_regions >= s2.mixed_regions + 8);
	T_ASSERT_EQ(s.full_gcs, s0.full_gcs);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(0x6d78);
	test_sparse_old_evacuated(50);
	/* on by default: regions a fifth live are candidates without options */
	test_sparse_old_evacuated(0);
	test_pinned_candidate();
	test_refilled_sparse_kept();
	printf("PASS\n");
	return 0;
}
