/* SPDX-License-Identifier: MIT */
/*
 * Marking assists (assist.c): allocating threads mark for a cycle that
 * falls behind instead of sleeping. Verifier on: every remark checks that
 * everything reachable below TAMS is marked.
 *  1. The marker thread held (it does no work): one allocating thread,
 *     paced, marks a 64 x 2000-node old graph alone, in several assists -
 *     it takes the marker's gray objects itself, and each assist leaves its
 *     unfinished work in the pool - and remark finds all of it marked, the
 *     assist's bytes counted in the cycle's live bytes. The lists survive
 *     the sweep and a full collection.
 *  2. Marker running, cycles back to back, two threads paced hard: they
 *     and the marker mark the same graphs at once (TSan runs this), while
 *     each thread replaces its own lists; every list checks out.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "tcycle.h"

#define NLISTS 64
#define LLEN 2000
#define NODE_BYTES (KGC_HEADER_SIZE + 24)	/* t_heap's node type: 24 bytes of payload */

static kgc_heap *heap;
static kgc_type_id NODE;

/* Allocate garbage with pacing forced to permille, until pred() or n allocations. */
static void allocate_paced(kgc_thread *t, unsigned permille, long n, bool (*pred)(void))
{
	for (long i = 0; i < n && !(pred && i % 1024 == 0 && pred()); i++) {
		atomic_store(&heap->alloc.pace_permille, permille);
		T_ASSERT(kgc_alloc(t, NODE));
	}
	atomic_store(&heap->alloc.pace_permille, 0);
}

static bool graph_marked_by_assists(void)
{
	return t_stats(heap).mark_assist_bytes >= (uint64_t)NLISTS * LLEN * NODE_BYTES;
}

static void held_marker(void)
{
	struct kgc_options o;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_stats st;

	t_opts_small(&o, 128, 8);
	o.ihop_percent = 1;
	o.verify = 1;
	heap = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	for (int i = 0; i < NLISTS; i++) {
		t_list(t, NODE, &slots[1], LLEN, (int64_t)i * LLEN);
		kgc_array_set_ref(t, slots[0], (size_t)i, slots[1]);
	}
	slots[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* all of it old */

	kgci_cm_test_hold(heap, true);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(!strcmp(kgci_cm_test_state(heap), "marking"));
	/* 10%: each assist gets 0.2-0.4 ms, less than the graph takes; each
	 * hands its unfinished work to the pool, the next one takes it up */
	allocate_paced(t, 100, 50 * 1000 * 1000, graph_marked_by_assists);
	st = t_stats(heap);
	printf("marker held: assists %llu, %.1f ms, %llu bytes marked (graph %llu bytes)\n",
	       (unsigned long long)st.mark_assists, st.mark_assist_ns / 1e6,
	       (unsigned long long)st.mark_assist_bytes, (unsigned long long)NLISTS * LLEN * NODE_BYTES);
	T_ASSERT(graph_marked_by_assists());
	T_ASSERT(!strcmp(kgci_cm_test_state(heap), "marking"));	/* the marker did nothing */

	kgci_cm_test_hold(heap, false);
	t_cycle_wait(t, heap, "remark-ready", false);	/* nothing left for the marker */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* remark: the verifier checks the marking */
	T_ASSERT(strcmp(kgci_cm_test_state(heap), "marking") && strcmp(kgci_cm_test_state(heap), "remark-ready"));
	printf("remark: %llu bytes marked live\n", (unsigned long long)kgci_cm_test_marked_bytes(heap));
	T_ASSERT(kgci_cm_test_marked_bytes(heap) >= (uint64_t)NLISTS * LLEN * NODE_BYTES);
	t_cycle_finish(t, heap);
	for (int i = 0; i < NLISTS; i++)
		t_list_check(kgc_array_get_ref(slots[0], (size_t)i), LLEN);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (int i = 0; i < NLISTS; i++)
		t_list_check(kgc_array_get_ref(slots[0], (size_t)i), LLEN);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

#define MT_LISTS 32
#define MT_LEN 500
#define MT_ROUNDS 60

static void *mutator(void *arg)
{
	long id = (long)arg;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;

	T_ASSERT_EQ(kgc_thread_attach(heap, "mutator", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, MT_LISTS);
	T_ASSERT(slots[0]);
	for (int round = 0; round < MT_ROUNDS; round++) {
		int i = round % MT_LISTS;
		int64_t first = (id * MT_ROUNDS + round) * MT_LEN;

		t_list(t, NODE, &slots[1], MT_LEN, first);
		kgc_array_set_ref(t, slots[0], (size_t)i, slots[1]);
		slots[1] = NULL;
		allocate_paced(t, 500, 20000, NULL);
		for (int k = 0; k < MT_LISTS; k++) {
			kgc_obj l = kgc_array_get_ref(slots[0], (size_t)k);

			if (l)
				t_list_check(l, MT_LEN);
		}
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void marker_and_two_assisting(void)
{
	struct kgc_options o;
	pthread_t th[2];
	struct kgc_stats st;

	t_opts_small(&o, 128, 4);
	o.ihop_percent = 1;
	o.verify = 1;
	heap = t_heap_opts(&o, &NODE);
	for (long i = 0; i < 2; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, mutator, (void *)i), 0);
	for (int i = 0; i < 2; i++)
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
	st = t_stats(heap);
	printf("marker running: %llu cycles, %llu young GCs; assists %llu (%.1f ms, %llu bytes), "
	       "paced sleeps %llu\n", (unsigned long long)st.concurrent_cycles,
	       (unsigned long long)st.young_gcs, (unsigned long long)st.mark_assists, st.mark_assist_ns / 1e6,
	       (unsigned long long)st.mark_assist_bytes, (unsigned long long)st.pacing_stalls);
	T_ASSERT(st.concurrent_cycles >= 2);
	T_ASSERT(st.mark_assists >= 1);
	T_ASSERT_EQ(st.full_gcs, 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
}

int main(void)
{
	held_marker();
	marker_and_two_assisting();
	return 0;
}
