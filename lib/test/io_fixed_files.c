/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_register_files and KGC_IO_FIXED_FILE: with a pipe's read end at
 * index 0 and a file at index 1 of the ring's table, a read into an array
 * naming index 0 gets the pipe's bytes, a write naming index 1 lands in
 * the file (and nothing is read from descriptors 0 and 1); an index past
 * the table completes with -EBADF. A second registration replaces the
 * table; n 0 unregisters it, after which a fixed-file operation completes
 * with an error. Bad arguments: NULL fds with n > 0: -EINVAL; a closed
 * descriptor in the table: the kernel's -EBADF.
 */
#include <fcntl.h>
#include "io_test.h"

#define LEN 2048u

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c;
	uint8_t back[LEN];
	int p[2], fd, table[2], bad;

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 2, NULL);
	fd = t_tmpfile();
	for (int i = 0; i < 2; i++)
		T_ASSERT(roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN));
	t_pat_fill(kgc_array_data(roots[1]), LEN, 6);

	T_ASSERT_EQ(kgc_io_register_files(r, t, NULL, 2), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "NULL fds"));
	bad = open("/dev/null", O_RDONLY);
	close(bad);
	table[0] = bad;
	T_ASSERT_EQ(kgc_io_register_files(r, t, table, 1), -EBADF);
	table[0] = p[0];
	table[1] = fd;
	T_ASSERT_EQ(kgc_io_register_files(r, t, table, 2), 0);

	t_pat_write(p[1], LEN, 5);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, 0, &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_FIXED_FILE), 0);
	T_ASSERT_EQ(kgc_io_prep_write(r, t, 1, &roots[1], 0, LEN, 0, 2), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_FIXED_FILE), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	for (int i = 0; i < 2; i++) {
		c = t_reap1(r, t);
		T_ASSERT(c.user_data == 1 || c.user_data == 2);
		T_ASSERT_EQ(c.res, LEN);
	}
	t_pat_check(kgc_array_data(roots[0]), LEN, 5);
	T_ASSERT_EQ(pread(fd, back, LEN, 0), LEN);
	t_pat_check(back, LEN, 6);

	/* an index past the table */
	T_ASSERT_EQ(kgc_io_prep_read(r, t, 7, &roots[0], 0, LEN, 0, 3), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_FIXED_FILE), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(t_reap1(r, t).res, -EBADF);

	/* replaced: index 0 is now the file */
	table[0] = fd;
	T_ASSERT_EQ(kgc_io_register_files(r, t, table, 1), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, 0, &roots[0], 0, LEN, 0, 4), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_FIXED_FILE), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(t_reap1(r, t).res, LEN);
	t_pat_check(kgc_array_data(roots[0]), LEN, 6);

	/* unregistered */
	T_ASSERT_EQ(kgc_io_register_files(r, t, NULL, 0), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, 0, &roots[0], 0, LEN, 0, 5), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_FIXED_FILE), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT(t_reap1(r, t).res < 0);
	T_ASSERT_EQ(kgc_io_register_files(r, t, NULL, 0), 0);	/* none: still 0 */
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);

	close(fd);
	t_io_end(h, t, r, &f, p);
	return 0;
}
