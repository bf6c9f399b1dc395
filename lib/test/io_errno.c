/* SPDX-License-Identifier: MIT */
/*
 * kgc_io: I/O errors come back as -errno in the completion, not from the
 * prep call: a read from a closed descriptor completes with -EBADF, a write
 * into a pipe without a reader with -EPIPE, a cancelled read with
 * -ECANCELED; each is counted in io_errors, releases its pin, and moves no
 * byte of the array.
 */
#include "io_test.h"
#include "../gc_internal.h"

#define LEN 512u

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c;
	struct kgc_stats s;
	int p[2], q[2];

	signal(SIGPIPE, SIG_IGN);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	kgc_frame_push(t, &f, roots, 1, NULL);
	roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
	T_ASSERT(roots[0]);
	t_pat_fill(kgc_array_data(roots[0]), LEN, 1);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	close(q[0]);		/* q: a pipe without a reader */
	close(100);		/* 100: a closed descriptor */

	T_ASSERT_EQ(kgc_io_prep_read(r, t, 100, &roots[0], 0, LEN, 0, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 1);
	T_ASSERT_EQ(c.res, -EBADF);

	T_ASSERT_EQ(kgc_io_prep_write(r, t, q[1], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 2), 0);
	c = t_reap1(r, t);	/* (reap submits what is queued) */
	T_ASSERT_EQ(c.user_data, 2);
	T_ASSERT_EQ(c.res, -EPIPE);

	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_io_cancel(r, t, 3), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 3);
	T_ASSERT_EQ(c.res, -ECANCELED);

	s = t_stats(h);
	T_ASSERT_EQ(s.io_completed, 3);
	T_ASSERT_EQ(s.io_errors, 3);
	T_ASSERT_EQ(s.io_bytes, 0);
	T_ASSERT_EQ(s.io_cancels, 1);
	T_ASSERT_EQ(s.regions_pinned, 0);
	t_pat_check(kgc_array_data(roots[0]), LEN, 1);
	close(q[1]);
	t_io_end(h, t, r, &f, p);
	return 0;
}
