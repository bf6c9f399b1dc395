/* SPDX-License-Identifier: MIT */
/*
 * kgc_io and the pinned-object space: a ring registers the space's units
 * as io_uring fixed buffers, and reads and writes into pinned arrays use
 * them by themselves (stats io_fixed), a humongous pinned array too, while
 * an ordinary array's read names its buffer by address (io_plain). A fixed
 * read held in flight by a pipe lands right after young and full
 * collections. A unit the ring still has registered is not freed when its
 * arrays die; the ring's next call lets go of it, and the next collection
 * frees it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include "io_test.h"

#define LEN	(64u * 1024)
#define BIG	((2u << 20) + 4096)	/* humongous with 1 MiB regions */
#define BYTE	KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static struct kgc_stats st(kgc_heap *h)
{
	return t_stats(h);
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_io_cqe c;
	kgc_obj roots[3] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s0, s;
	kgc_obj was;
	int p[2], q[2];
	uint8_t *buf;

	T_SKIP_IF(!t_fixed_supported(), "io_uring sparse fixed buffers not available (kernel < 5.19, RLIMIT_MEMLOCK)");
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 8);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	T_ASSERT_EQ(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (int)LEN, 1);
	kgc_frame_push(t, &f, roots, 3, NULL);
	roots[0] = kgc_alloc_array_pinned(t, BYTE, LEN);
	roots[1] = kgc_alloc_array(t, BYTE, LEN);
	roots[2] = kgc_alloc_array_pinned(t, BYTE, BIG);
	T_ASSERT(roots[0] && roots[1] && roots[2]);
	was = roots[0];
	s0 = st(h);

	/* a fixed read in flight while young and full collections run */
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	s = st(h);
	T_ASSERT_EQ(s.io_fixed, s0.io_fixed + 1);
	T_ASSERT_EQ(s.io_plain, s0.io_plain);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_churn(t, h, node, 2);
	t_pat_write(p[1], LEN, 3);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 1);
	T_ASSERT_EQ(c.res, LEN);
	T_ASSERT(roots[0] == was);
	t_pat_check(kgc_array_data(roots[0]), LEN, 3);

	/* an ordinary array: plain */
	t_pat_write(p[1], LEN, 4);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &roots[1], 0, LEN, KGC_IO_OFF_CUR, 2), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.res, LEN);
	t_pat_check(kgc_array_data(roots[1]), LEN, 4);
	s = st(h);
	T_ASSERT_EQ(s.io_fixed, s0.io_fixed + 1);
	T_ASSERT_EQ(s.io_plain, s0.io_plain + 1);

	/* a fixed write out of the humongous pinned array, at an offset */
	t_pat_fill((uint8_t *)kgc_array_data(roots[2]) + BIG - LEN, LEN, 5);
	T_ASSERT_EQ(kgc_io_prep_write(r, t, q[1], &roots[2], BIG - LEN, LEN, KGC_IO_OFF_CUR, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.res, LEN);
	buf = malloc(LEN);
	T_ASSERT(buf);
	for (size_t got = 0; got < LEN;) {
		ssize_t n = read(q[0], buf + got, LEN - got);

		T_ASSERT(n > 0);
		got += (size_t)n;
	}
	t_pat_check(buf, LEN, 5);
	free(buf);
	T_ASSERT_EQ(st(h).io_fixed, s0.io_fixed + 2);

	/* all pinned arrays die: the ring still has both units registered */
	roots[0] = roots[2] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(st(h).pinned_space_regions, 1 + 3);	/* leaving, not freed */
	T_ASSERT_EQ(st(h).pinned_space_bytes, 0);
	/* the ring's next call lets go; the next collection frees them */
	T_ASSERT_EQ(kgc_io_submit(r, t), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(st(h).pinned_space_regions, 0);

	c.res = 0;
	roots[1] = NULL;
	t_io_end(h, t, r, &f, p);
	close(q[0]);
	close(q[1]);
	printf("ok: fixed reads and writes into pinned arrays, registration followed the space\n");
	return 0;
}
