/* SPDX-License-Identifier: MIT */
/*
 * A provided-buffer pool running dry: a pool of 2 arrays, a multishot recv
 * on it, 3 messages. The first two complete into the two arrays (F_MORE);
 * with no array left the recv ends with -ENOBUFS and without F_MORE or
 * F_BUFFER (kgc_io_pool_avail 0, nothing in flight). The third message is
 * still in the socket: after one array is put back and the other place
 * refilled (kgc_io_pool_refill: 1), a new recv gets it whole. Destroying
 * the pool while that recv is armed: -EBUSY; cancelled and reaped: 0.
 * Collections between every step (verifier on). Seeded message lengths.
 */
#include <sys/socket.h>
#include "io_test.h"

#define LEN 1024u

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_options opt;
	kgc_heap *h;
	kgc_type_id node;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_io_pool *p;
	struct kgc_frame f;
	kgc_obj a[2] = { 0 };
	struct kgc_io_cqe c[3];
	unsigned len[3];
	int sv[2];

	alarm(20);
	t_opts_small(&opt, 32, 4);
	opt.verify = 1;
	h = t_heap_opts(&opt, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, a, 2, NULL);
	r = t_ring(t, 8);
	p = t_pool(r, t, 2, LEN);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	for (int i = 0; i < 3; i++) {
		len[i] = 1 + (unsigned)(t_rand(&seed) % LEN);
		t_pat_write(sv[1], len[i], (unsigned)i);
	}
	T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[0], p, 0, 5), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	t_io_churn(t, node, &seed);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 3, 3), 3);
	t_multishot_skip(&c[0]);
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(c[i].res, (int)len[i]);
		T_ASSERT_EQ(c[i].flags & (IORING_CQE_F_MORE | IORING_CQE_F_BUFFER),
			    IORING_CQE_F_MORE | IORING_CQE_F_BUFFER);
	}
	T_ASSERT(t_bid(&c[0]) != t_bid(&c[1]));
	T_ASSERT_EQ(c[2].res, -ENOBUFS);
	T_ASSERT_EQ(c[2].flags & (IORING_CQE_F_MORE | IORING_CQE_F_BUFFER), 0);
	T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[2], &a[0]), -EINVAL);	/* names no buffer */
	T_ASSERT_EQ(kgc_io_pool_avail(p), 0);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	t_io_churn(t, node, &seed);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* done, not taken: still rooted */
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[i], &a[i]), (int)len[i]);
		t_pat_check(kgc_array_data(a[i]), len[i], (unsigned)i);
	}
	T_ASSERT_EQ(kgc_io_pool_refill(p, t), 2);	/* both places were empty */
	T_ASSERT_EQ(kgc_io_pool_put(p, t, &a[0]), -ENOSPC);
	T_ASSERT_EQ(kgc_io_pool_avail(p), 2);

	T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[0], p, 0, 6), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c[0] = t_reap1(r, t);
	T_ASSERT_EQ(c[0].user_data, 6);
	T_ASSERT_EQ(c[0].res, (int)len[2]);
	T_ASSERT(c[0].flags & IORING_CQE_F_MORE);
	T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[0], &a[1]), (int)len[2]);
	t_pat_check(kgc_array_data(a[1]), len[2], 2);
	T_ASSERT_EQ(kgc_io_pool_refill(p, t), 1);
	T_ASSERT_EQ(kgc_io_pool_destroy(p, t), -EBUSY);
	T_ASSERT_EQ(kgc_io_cancel(r, t, 6), 1);
	c[0] = t_reap1(r, t);
	T_ASSERT_EQ(c[0].res, -ECANCELED);
	T_ASSERT_EQ(kgc_io_pool_destroy(p, t), 0);
	t_pat_check(kgc_array_data(a[0]), len[0], 0);
	t_io_end(h, t, r, &f, sv);
	printf("PASS\n");
	return 0;
}
