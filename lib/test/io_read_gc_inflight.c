/* SPDX-License-Identifier: MIT */
/*
 * kgc_io: a read into an ordinary eden byte array stays in flight (a pipe
 * nobody has written yet) across a young and a full collection: the array
 * is not evacuated (young) and not slid down over the dead array below it
 * (full), the ring's pin shows in the stats; once the pipe is written the
 * bytes land in the array at [OFF, OFF+LEN) and nowhere else. After the
 * completion is reaped the region is unpinned and a full GC moves the
 * array with its contents.
 */
#include "io_test.h"
#include "../gc_internal.h"

#define ARR_LEN (64u * 1024)
#define OFF 100u
#define LEN 4000u

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_stats s0, s;
	struct kgc_io_cqe c;
	int p[2];
	kgc_obj arr, roots[2] = { 0 };
	struct kgc_frame f;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 8);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 2, NULL);
	/* a dead array below the target in the same region: a full GC without
	 * the pin slides the target down over it */
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 128 * 1024));
	roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARR_LEN);
	T_ASSERT(roots[0]);
	T_ASSERT_EQ(region_of(h, roots[0])->type, RT_EDEN);
	memset(kgc_array_data(roots[0]), 0xee, ARR_LEN);
	arr = roots[0];
	s0 = t_stats(h);

	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &roots[0], OFF, LEN, KGC_IO_OFF_CUR, 42), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_io_inflight(r), 1);
	T_ASSERT(t_stats(h).regions_pinned >= 1);

	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	t_churn(t, h, node, 2);
	T_ASSERT(roots[0] == arr);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(roots[0] == arr);
	s = t_stats(h);
	T_ASSERT(s.young_gcs >= s0.young_gcs + 3);
	T_ASSERT(s.full_gcs >= s0.full_gcs + 1);
	T_ASSERT(s.evac_fail_pinned >= 1);
	T_ASSERT_EQ(kgc_io_inflight(r), 1);

	t_pat_write(p[1], LEN, 3);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 42);
	T_ASSERT_EQ(c.res, LEN);
	T_ASSERT(roots[0] == arr);
	for (size_t i = 0; i < ARR_LEN; i++) {
		uint8_t b = ((uint8_t *)kgc_array_data(roots[0]))[i];
		uint8_t want = i >= OFF && i < OFF + LEN ? t_pat(i - OFF, 3) : 0xee;

		if (b != want)
			T_FAIL("array byte %zu: %#x, want %#x", i, b, want);
	}
	s = t_stats(h);
	T_ASSERT_EQ(s.regions_pinned, 0);
	T_ASSERT_EQ(s.io_submitted, 1);
	T_ASSERT_EQ(s.io_completed, 1);
	T_ASSERT_EQ(s.io_errors, 0);
	T_ASSERT_EQ(s.io_bytes, LEN);
	/* unpinned: a full GC compacts the region, contents intact */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(roots[0] != arr);
	t_pat_check((uint8_t *)kgc_array_data(roots[0]) + OFF, LEN, 3);

	t_io_end(h, t, r, &f, p);
	return 0;
}
