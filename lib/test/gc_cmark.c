/* SPDX-License-Identifier: MIT */
/*
 * Concurrent marking and sweeping of old space (cmark.c, sweep.c):
 *  - SATB: an old object moved between table slots while the marker runs
 *    (its only reference overwritten, re-stored elsewhere) survives;
 *  - steady replacement of a live set is absorbed by concurrent cycles
 *    (swept gaps take the promoted objects): no full collection;
 *  - dead humongous objects are freed by a cycle, not by a full GC.
 * Every list carries a checksum; the verifier runs at every pause and checks
 * marking completeness at every remark.
 */
#include <stdlib.h>
#include "tgc.h"

enum { LIST = 16, SLOTS = 4096 };

static kgc_heap *heap;
static kgc_type_id NODE;
static kgc_thread *t;

static kgc_heap *cm_heap(size_t heap_mb, unsigned ihop, unsigned tenure)
{
	struct kgc_options o;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = heap_mb << 20;
	o.region_size = 1ul << 20;
	o.young_size = 4ul << 20;
	o.tenure_threshold = tenure;
	o.ihop_percent = ihop;
	o.verify = 1;
	return t_heap_opts(&o, &NODE);
}

/* A list of LIST nodes whose values sum to a known value (slot[1] = head). */
static kgc_obj make_list(kgc_obj *slots, long seed)
{
	slots[1] = NULL;
	for (int i = 0; i < LIST; i++) {
		kgc_obj n = kgc_alloc(t, NODE);

		T_ASSERT(n != NULL);
		kgc_set_ref(t, n, N_LEFT, slots[1]);
		KGC_FIELD(n, N_VALUE, int64_t) = seed * 100 + i;
		slots[1] = n;
	}
	return slots[1];
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

static kgc_obj holder(kgc_obj table, long i)
{
	return kgc_array_get_ref(table, i);
}

/*
 * Each list hangs off its own holder object, so the marker scans holders one
 * at a time while lists move between them: a list taken from a holder not
 * yet scanned and stored into one already scanned is found only through the
 * SATB log (the verifier checks marking at every remark).
 */
static void test_satb_move(void)
{
	kgc_obj slots[3] = { 0 };	/* 0: table of holders, 1: scratch, 2: moved list */
	struct kgc_frame f;
	uint64_t c0;
	unsigned moves = 0;

	heap = cm_heap(96, 1, 1);
	T_ASSERT_EQ(kgc_thread_attach(heap, "cm", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, SLOTS);
	T_ASSERT(slots[0]);
	for (long i = 0; i < SLOTS; i++) {
		kgc_obj hd = kgc_alloc(t, NODE);

		T_ASSERT(hd);
		kgc_array_set_ref(t, slots[0], i, hd);
		kgc_set_ref(t, holder(slots[0], i), N_LEFT, make_list(slots, i));
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* promoted: old space */
	c0 = t_stats(heap).concurrent_cycles;
	/* keep collecting (starting, remarking, sweeping cycles) while moving lists:
	 * the only reference is cleared first, the list sits in a frame slot,
	 * then it is stored into another holder */
	for (unsigned round = 0; t_stats(heap).concurrent_cycles < c0 + 4; round++) {
		T_ASSERT(round < 100000);
		for (int k = 0; k < 64; k++) {
			long a = rand() % SLOTS, b = rand() % SLOTS;

			slots[2] = kgc_get_ref(holder(slots[0], a), N_LEFT);
			kgc_set_ref(t, holder(slots[0], a), N_LEFT, NULL);
			for (int i = 0; i < 8; i++)	/* garbage: young GCs happen meanwhile */
				T_ASSERT(kgc_alloc(t, NODE));
			/* swap: a gets b's list, b gets the list that was at a */
			kgc_set_ref(t, holder(slots[0], a), N_LEFT,
				    kgc_get_ref(holder(slots[0], b), N_LEFT));
			kgc_set_ref(t, holder(slots[0], b), N_LEFT, slots[2]);
			moves++;
		}
		if (round % 8 == 0)
			T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		for (long i = 0; i < SLOTS; i++) {
			kgc_obj l = kgc_get_ref(holder(slots[0], i), N_LEFT);

			check_list(l, KGC_FIELD(l, N_VALUE, int64_t) / 100);
		}
	}
	printf("satb: %u moves over %llu cycles, no damage\n", moves,
	       (unsigned long long)(t_stats(heap).concurrent_cycles - c0));
	T_ASSERT_EQ(t_stats(heap).full_gcs, 0);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

/* ~8 MB live in a 160 MB heap, replaced over and over (~1 GB promoted in total): each
 * cycle starts with ~60 MB of garbage, more than is promoted while it runs (the
 * verifier's pauses slow the marker down a lot). */
static void test_steady_replacement(void)
{
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s;
	size_t max_old = 0;

	heap = cm_heap(160, 45, 2);
	T_ASSERT_EQ(kgc_thread_attach(heap, "cm", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, SLOTS * 4);
	T_ASSERT(slots[0]);
	for (long i = 0; i < SLOTS * 4; i++)
		kgc_array_set_ref(t, slots[0], i, make_list(slots, i));
	for (long k = 0; k < 1500000; k++) {
		long i = rand() % (SLOTS * 4);

		kgc_array_set_ref(t, slots[0], i, make_list(slots, i));
		if (k % 100000 == 0) {
			s = t_stats(heap);
			if (s.regions_old > max_old)
				max_old = s.regions_old;
		}
	}
	for (long i = 0; i < SLOTS * 4; i++)
		check_list(kgc_array_get_ref(slots[0], i), i);
	s = t_stats(heap);
	printf("steady: %llu young, %llu full, %llu concurrent cycles, old regions max %zu of %u\n",
	       (unsigned long long)s.young_gcs, (unsigned long long)s.full_gcs,
	       (unsigned long long)s.concurrent_cycles, max_old, s.regions_total);
	T_ASSERT(s.concurrent_cycles >= 2);
	T_ASSERT_EQ(s.full_gcs, 0);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

static void test_humongous_reclaimed(void)
{
	kgc_obj slots[1] = { 0 };
	struct kgc_frame f;
	uint64_t c0;

	heap = cm_heap(96, 1, 1);
	T_ASSERT_EQ(kgc_thread_attach(heap, "cm", &t), 0);
	kgc_frame_push(t, &f, slots, 1, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 64);
	for (int i = 0; i < 8; i++)
		kgc_array_set_ref(t, slots[0], i, kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 300000));
	T_ASSERT_EQ(t_stats(heap).regions_humongous, 8 * 3);
	for (int i = 0; i < 8; i++)
		kgc_array_set_ref(t, slots[0], i, NULL);
	c0 = t_stats(heap).concurrent_cycles;
	while (t_stats(heap).concurrent_cycles < c0 + 2)
		t_churn(t, heap, NODE, 1);
	printf("humongous: %u regions left after 2 cycles, full GCs %llu\n",
	       t_stats(heap).regions_humongous, (unsigned long long)t_stats(heap).full_gcs);
	T_ASSERT_EQ(t_stats(heap).regions_humongous, 0);
	T_ASSERT_EQ(t_stats(heap).full_gcs, 0);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(0x6b67);
	test_satb_move();
	test_humongous_reclaimed();
	test_steady_replacement();
	printf("PASS\n");
	return 0;
}
