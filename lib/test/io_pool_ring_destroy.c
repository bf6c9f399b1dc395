/* SPDX-License-Identifier: MIT */
/*
 * A ring destroyed with its provided-buffer pool's arrays everywhere: a
 * multishot recv armed, two arrays taken out by the program, one done but
 * not taken, the rest in the kernel's ring. kgc_io_ring_destroy cancels the
 * recv, waits for it, and frees the pool with the ring (it returns 1: the
 * recv was in flight). The taken arrays are the program's: full
 * collections later they still hold their messages; the arrays the pool
 * held are garbage, and pinned allocations reuse their room (the
 * pinned-object space shrinks back). Data written after the destroy stays
 * in the socket. Verifier on; seeded lengths.
 */
#include <sys/socket.h>
#include "io_test.h"

#define LEN 2048u
#define NBUFS 8

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
	uint64_t before, during;
	char b[8];
	int sv[2];

	alarm(20);
	t_opts_small(&opt, 32, 4);
	opt.verify = 1;
	h = t_heap_opts(&opt, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, a, 2, NULL);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	before = t_stats(h).pinned_space_bytes;
	r = t_ring(t, 8);
	p = t_pool(r, t, NBUFS, LEN);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[0], p, 0, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	for (int i = 0; i < 3; i++) {
		len[i] = 1 + (unsigned)(t_rand(&seed) % LEN);
		t_pat_write(sv[1], len[i], (unsigned)i);
	}
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 3, 3), 3);
	t_multishot_skip(&c[0]);
	for (int i = 0; i < 2; i++)
		T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[i], &a[i]), (int)len[i]);
	T_ASSERT_EQ(kgc_io_pool_avail(p), NBUFS - 3);
	during = t_stats(h).pinned_space_bytes;
	T_ASSERT(during >= before + NBUFS * LEN);

	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), 1);
	t_pat_write(sv[1], 5, 9);	/* no recv left: it stays in the socket */
	for (int i = 0; i < 3; i++) {
		t_io_churn(t, node, &seed);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	}
	for (int i = 0; i < 2; i++)
		t_pat_check(kgc_array_data(a[i]), len[i], (unsigned)i);
	/* the pool's other arrays are gone */
	T_ASSERT(t_stats(h).pinned_space_bytes < during);
	T_ASSERT_EQ(recv(sv[0], b, sizeof(b), MSG_DONTWAIT), 5);
	close(sv[0]);
	close(sv[1]);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
