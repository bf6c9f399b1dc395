/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_reap releases a completion's arrays when it returns it, not when
 * the completion arrives: one reap with wait_nr 3 for three reads, two of
 * which complete at once and one much later. In between (the first two
 * consumed from the CQ, the reaping thread waiting in native state) another
 * thread forces a young and a full collection. Array A is still held by a
 * frame root, array B only by the ring (the program dropped it after the
 * prep), both in eden with dead arrays around them, in a region the third
 * read does not pin. When the reap returns, A and B are where they were at
 * prep time with their bytes: not evacuated or slid down (A), not freed and
 * poisoned (B). Verifier and poison on.
 */
#include <pthread.h>
#include "io_test.h"
#include "../io/io_internal.h"

#define LEN 8192u

static kgc_heap *heap;
static kgc_io_ring *ring;
static int pa[2], pb[2], pc[2];
static uint64_t gcs_young, gcs_full;
static unsigned inflight_mid;	/* kgc_io_inflight during the reap */

/* The CQ head: how many completions the reaping thread has consumed. */
static unsigned cq_head(void)
{
	return __atomic_load_n(ring->ur.cq.khead, __ATOMIC_ACQUIRE);
}

static void *gc_main(void *arg)
{
	kgc_thread *t;
	struct kgc_stats s0, s;
	int waited = 0;

	(void)arg;
	T_ASSERT_EQ(kgc_thread_attach(heap, "gc", &t), 0);
	t_pat_write(pa[1], LEN, 1);
	t_pat_write(pb[1], LEN, 2);
	/* until the reap has consumed both completions (and waits for the third) */
	while (cq_head() < 2) {
		T_ASSERT(waited++ < 5000);
		t_nap_native(t, 1000);
	}
	s0 = t_stats(heap);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	s = t_stats(heap);
	gcs_young = s.young_gcs - s0.young_gcs;
	gcs_full = s.full_gcs - s0.full_gcs;
	inflight_mid = kgc_io_inflight(ring);
	t_pat_write(pc[1], LEN, 3);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static kgc_obj bytes(kgc_thread *t, size_t n)
{
	kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n);

	T_ASSERT(a);
	return a;
}

/* The array at its prep-time address p: a byte array of LEN holding pattern gen. */
static void check_at(kgc_obj p, unsigned gen)
{
	T_ASSERT(region_of(heap, p)->type != RT_FREE);
	T_ASSERT_EQ(kgc_obj_type(p), KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE));
	T_ASSERT_EQ(kgc_array_length(p), LEN);
	t_pat_check(kgc_array_data(p), LEN, gen);
}

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_thread *t;
	kgc_obj roots[3] = { 0 }, a0, b0, c0;
	struct kgc_frame f;
	struct kgc_io_cqe out[3];
	pthread_t gc;
	unsigned seen = 0;

	t_opts_small(&o, 64, 8);
	o.verify = 1;
	o.poison = 1;
	heap = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	ring = t_ring(t, 8);
	T_ASSERT_EQ(pipe(pa), 0);
	T_ASSERT_EQ(pipe(pb), 0);
	T_ASSERT_EQ(pipe(pc), 0);
	kgc_frame_push(t, &f, roots, 3, NULL);

	/* C first; then dead arrays until the next region: A and B there,
	 * with dead arrays below and above them */
	roots[2] = bytes(t, LEN);
	do
		a0 = bytes(t, 64 * 1024);
	while (region_index(heap, a0) == region_index(heap, roots[2]));
	roots[0] = bytes(t, LEN);
	bytes(t, 4096);
	roots[1] = bytes(t, LEN);
	bytes(t, 4096);
	T_ASSERT(region_index(heap, roots[0]) != region_index(heap, roots[2]));
	T_ASSERT(region_index(heap, roots[1]) != region_index(heap, roots[2]));
	T_ASSERT_EQ(region_of(heap, roots[0])->type, RT_EDEN);
	T_ASSERT_EQ(region_of(heap, roots[1])->type, RT_EDEN);
	for (int i = 0; i < 3; i++)
		memset(kgc_array_data(roots[i]), 0xee, LEN);
	a0 = roots[0];
	b0 = roots[1];
	c0 = roots[2];

	T_ASSERT_EQ(kgc_io_prep_read(ring, t, pa[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, pb[0], &roots[1], 0, LEN, KGC_IO_OFF_CUR, 2), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, pc[0], &roots[2], 0, LEN, KGC_IO_OFF_CUR, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(ring, t), 3);
	roots[1] = NULL;	/* B: only the ring holds it */
	T_ASSERT_EQ(cq_head(), 0);

	T_ASSERT_EQ(pthread_create(&gc, NULL, gc_main, NULL), 0);
	T_ASSERT_EQ(kgc_io_reap(ring, t, out, 3, 3), 3);
	/* no safepoint from here to the checks: what the reap returned is as it was */
	for (int i = 0; i < 3; i++) {
		T_ASSERT(out[i].user_data >= 1 && out[i].user_data <= 3);
		T_ASSERT_EQ(out[i].res, LEN);
		seen |= 1u << out[i].user_data;
	}
	T_ASSERT_EQ(seen, 0xe);
	T_ASSERT(roots[0] == a0);
	T_ASSERT(roots[2] == c0);
	check_at(a0, 1);
	check_at(b0, 2);
	check_at(c0, 3);
	T_ASSERT_EQ(kgc_io_inflight(ring), 0);

	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(gc, NULL), 0);
	kgc_leave_native(t);
	T_ASSERT(gcs_young >= 1);
	T_ASSERT(gcs_full >= 1);
	T_ASSERT_EQ(inflight_mid, 3);	/* consumed, not returned: still counted */
	/* released: the regions are unpinned, a full GC compacts them (verified) */
	T_ASSERT_EQ(t_stats(heap).regions_pinned, 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_pat_check(kgc_array_data(roots[0]), LEN, 1);
	t_pat_check(kgc_array_data(roots[2]), LEN, 3);

	close(pa[0]);
	close(pa[1]);
	close(pb[0]);
	close(pb[1]);
	t_io_end(heap, t, ring, &f, pc);
	return 0;
}
