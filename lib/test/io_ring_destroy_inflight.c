/* SPDX-License-Identifier: MIT */
/*
 * kgc_io: destroying a ring with reads in flight (pipes nobody writes, one
 * of them queued but not submitted) cancels them and waits: it returns how
 * many were in flight, every one completed (-ECANCELED, counted in the
 * stats), no region stays pinned and the kernel reads nothing more - the
 * bytes written to the pipes afterwards are all still there.
 */
#include "io_test.h"
#include "../gc_internal.h"

#define NREAD 3
#define LEN 2048u

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[NREAD] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s;
	int p[NREAD][2];
	uint8_t buf[LEN + 1];

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 8);
	kgc_frame_push(t, &f, roots, NREAD, NULL);
	for (int i = 0; i < NREAD; i++) {
		T_ASSERT_EQ(pipe(p[i]), 0);
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
		T_ASSERT(roots[i]);
		T_ASSERT_EQ(kgc_io_prep_read(r, t, p[i][0], &roots[i], 0, LEN, KGC_IO_OFF_CUR, i), 0);
		if (i < NREAD - 1)	/* the last stays queued */
			T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	}
	T_ASSERT_EQ(kgc_io_inflight(r), NREAD);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(t_stats(h).regions_pinned >= 1);

	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), NREAD);
	s = t_stats(h);
	T_ASSERT_EQ(s.regions_pinned, 0);
	T_ASSERT_EQ(s.io_submitted, NREAD);
	T_ASSERT_EQ(s.io_completed, NREAD);
	T_ASSERT_EQ(s.io_errors, NREAD);
	T_ASSERT_EQ(s.io_cancels, NREAD);
	T_ASSERT_EQ(s.io_bytes, 0);
	for (int i = 0; i < NREAD; i++) {
		t_pat_write(p[i][1], LEN, i);
		close(p[i][1]);
		T_ASSERT_EQ(read(p[i][0], buf, sizeof(buf)), LEN);
		t_pat_check(buf, LEN, i);
		close(p[i][0]);
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
