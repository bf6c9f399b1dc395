/* SPDX-License-Identifier: MIT */
/*
 * Cancelling a multishot recv on a provided-buffer pool: armed on two
 * sockets, one message each is received (F_MORE); kgc_io_cancel_fd ends
 * the first one's recv, kgc_io_cancel_all the second's: each ends with one
 * completion, -ECANCELED, no F_MORE, no F_BUFFER, and nothing is in flight
 * after. Messages written after the cancels stay in the sockets (no
 * recv is left to pick an array: kgc_io_pool_avail unchanged) and the pool
 * can be destroyed. Seeded lengths.
 */
#include <sys/socket.h>
#include "io_test.h"

#define LEN 512u

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_io_pool *p;
	struct kgc_frame f;
	kgc_obj a[1] = { 0 };
	struct kgc_io_cqe c[2];
	int sv[2][2];
	char b[LEN];

	alarm(20);
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, a, 1, NULL);
	r = t_ring(t, 8);
	p = t_pool(r, t, 8, LEN);
	for (int i = 0; i < 2; i++) {
		unsigned len = 1 + (unsigned)(t_rand(&seed) % LEN);

		T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv[i]), 0);
		T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[i][0], p, 0, (uint64_t)i), 0);
		T_ASSERT_EQ(kgc_io_submit(r, t), 1);
		t_pat_write(sv[i][1], len, (unsigned)i);
		c[0] = t_reap1(r, t);
		t_multishot_skip(&c[0]);
		T_ASSERT_EQ(c[0].user_data, (uint64_t)i);
		T_ASSERT_EQ(c[0].res, (int)len);
		T_ASSERT(c[0].flags & IORING_CQE_F_MORE);
		T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[0], &a[0]), (int)len);
		t_pat_check(kgc_array_data(a[0]), len, (unsigned)i);
		T_ASSERT_EQ(kgc_io_pool_put(p, t, &a[0]), 0);
	}
	T_ASSERT_EQ(kgc_io_inflight(r), 2);
	T_ASSERT_EQ(kgc_io_cancel_fd(r, t, sv[0][0]), 1);
	c[0] = t_reap1(r, t);
	T_ASSERT_EQ(c[0].user_data, 0);
	T_ASSERT_EQ(c[0].res, -ECANCELED);
	T_ASSERT_EQ(c[0].flags & (IORING_CQE_F_MORE | IORING_CQE_F_BUFFER), 0);
	T_ASSERT_EQ(kgc_io_inflight(r), 1);
	T_ASSERT_EQ(kgc_io_cancel_all(r, t), 1);
	c[0] = t_reap1(r, t);
	T_ASSERT_EQ(c[0].user_data, 1);
	T_ASSERT_EQ(c[0].res, -ECANCELED);
	T_ASSERT_EQ(c[0].flags & (IORING_CQE_F_MORE | IORING_CQE_F_BUFFER), 0);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	for (int i = 0; i < 2; i++)
		t_pat_write(sv[i][1], 7, 3);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 2, 0), 0);
	T_ASSERT_EQ(kgc_io_pool_avail(p), 8);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(recv(sv[i][0], b, sizeof(b), MSG_DONTWAIT), 7);
		close(sv[i][1]);
	}
	T_ASSERT_EQ(kgc_io_pool_destroy(p, t), 0);
	t_io_end(h, t, r, &f, sv[0]);
	printf("PASS\n");
	return 0;
}
