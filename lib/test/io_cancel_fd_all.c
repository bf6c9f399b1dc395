/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_cancel_fd and kgc_io_cancel_all: two reads on pipe A, one on pipe
 * B (each into an eden array the program then drops: only the ring holds
 * them) and a 10 s timeout are in flight. Cancelling fd A matches exactly
 * A's two reads; they complete with -ECANCELED and once reaped their
 * arrays are unpinned while B's stays pinned. Cancelling fd A again:
 * -ENOENT; fd -1: -EINVAL; a NULL ring: -EINVAL. cancel_all matches B's
 * read and the timeout (both -ECANCELED), then nothing is pinned and
 * cancel_all returns 0.
 */
#include "io_test.h"

#define LEN 4096u

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[3] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c[4];
	int a[2], b[2];

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 8);
	T_ASSERT_EQ(pipe(a), 0);
	T_ASSERT_EQ(pipe(b), 0);
	kgc_frame_push(t, &f, roots, 3, NULL);
	for (int i = 0; i < 3; i++) {
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
		T_ASSERT(roots[i]);
	}
	T_ASSERT_EQ(kgc_io_prep_read(r, t, a[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, a[0], &roots[1], 0, LEN, KGC_IO_OFF_CUR, 2), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, b[0], &roots[2], 0, LEN, KGC_IO_OFF_CUR, 3), 0);
	T_ASSERT_EQ(kgc_io_prep_timeout(r, t, 10000000000ull, 4), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 4);
	memset(roots, 0, sizeof(roots));	/* only the ring holds the arrays */
	T_ASSERT(t_stats(h).regions_pinned >= 1);

	T_ASSERT_EQ(kgc_io_cancel_fd(r, t, a[0]), 2);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 4, 2), 2);
	for (int i = 0; i < 2; i++) {
		T_ASSERT(c[i].user_data == 1 || c[i].user_data == 2);
		T_ASSERT_EQ(c[i].res, -ECANCELED);
	}
	T_ASSERT_EQ(kgc_io_inflight(r), 2);
	T_ASSERT_EQ(kgc_io_cancel_fd(r, t, a[0]), -ENOENT);
	T_ASSERT(strstr(kgc_last_error(), "no operation in flight on fd"));
	T_ASSERT_EQ(kgc_io_cancel_fd(r, t, -1), -EINVAL);
	T_ASSERT_EQ(kgc_io_cancel_fd(NULL, t, a[0]), -EINVAL);
	T_ASSERT_EQ(kgc_io_cancel_all(NULL, t), -EINVAL);
	T_ASSERT(t_stats(h).regions_pinned >= 1);	/* B's read */

	T_ASSERT_EQ(kgc_io_cancel_all(r, t), 2);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 4, 2), 2);
	for (int i = 0; i < 2; i++) {
		T_ASSERT(c[i].user_data == 3 || c[i].user_data == 4);
		T_ASSERT_EQ(c[i].res, -ECANCELED);
	}
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	T_ASSERT_EQ(kgc_io_cancel_all(r, t), 0);
	T_ASSERT_EQ(t_stats(h).io_cancels, 4);

	close(b[0]);
	close(b[1]);
	t_io_end(h, t, r, &f, a);
	return 0;
}
