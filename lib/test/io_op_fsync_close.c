/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_prep_fsync and kgc_io_prep_close: a file written from an array
 * through the ring, then fsync'd (plain and IORING_FSYNC_DATASYNC) with
 * res 0, holds the array's bytes; close through the ring closes the fd
 * (res 0, then fcntl says EBADF) and a second close of it completes with
 * -EBADF, as does an fsync of it: descriptor errors come back in res.
 * Bad fsync_flags: -EINVAL at prep, nothing queued.
 */
#include <fcntl.h>
#include "io_test.h"

#define LEN 8192u

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c;
	uint8_t back[LEN];
	int fd, p[2];

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 1, NULL);
	fd = t_tmpfile();
	roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
	T_ASSERT(roots[0]);
	t_pat_fill(kgc_array_data(roots[0]), LEN, 5);

	T_ASSERT_EQ(kgc_io_prep_fsync(r, t, fd, 2, 9), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "fsync_flags 0x2"));
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	T_ASSERT_EQ(kgc_io_prep_write(r, t, fd, &roots[0], 0, LEN, 0, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.res, LEN);
	T_ASSERT_EQ(kgc_io_prep_fsync(r, t, fd, 0, 2), 0);
	T_ASSERT_EQ(kgc_io_prep_fsync(r, t, fd, IORING_FSYNC_DATASYNC, 3), 0);
	T_ASSERT_EQ(kgc_io_inflight(r), 2);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	for (int i = 0; i < 2; i++) {
		c = t_reap1(r, t);
		T_ASSERT(c.user_data == 2 || c.user_data == 3);
		T_ASSERT_EQ(c.res, 0);
	}
	T_ASSERT_EQ(pread(fd, back, LEN, 0), LEN);
	t_pat_check(back, LEN, 5);

	T_ASSERT_EQ(kgc_io_prep_close(r, t, fd, 4), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 4);
	T_ASSERT_EQ(c.res, 0);
	T_ASSERT(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	T_ASSERT_EQ(kgc_io_prep_close(r, t, fd, 5), 0);
	T_ASSERT_EQ(kgc_io_prep_fsync(r, t, fd, 0, 6), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	for (int i = 0; i < 2; i++) {
		c = t_reap1(r, t);
		T_ASSERT(c.user_data == 5 || c.user_data == 6);
		T_ASSERT_EQ(c.res, -EBADF);
	}
	T_ASSERT_EQ(t_stats(h).io_errors, 2);

	t_io_end(h, t, r, &f, p);
	return 0;
}
