/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_reap_wait's callback and a provided-buffer pool: for a multishot
 * recv's completions that name an array the callback gets that array
 * (narrays 1: the pool's, holding the message), may allocate and collect
 * (it stays where it is: the pool roots it) and take it out of the pool
 * there; the cancelled recv's last completion comes with no array
 * (narrays 0). Seeded lengths.
 */
#include <sys/socket.h>
#include "io_test.h"

#define LEN 256u
#define NMSG 3

static kgc_heap *heap;
static kgc_type_id node;
static kgc_io_pool *pool;
static kgc_obj roots[NMSG];
static unsigned lens[NMSG], ncalls;

static void cb(kgc_thread *t, const struct kgc_io_cqe *c, const kgc_obj *arrays, unsigned narrays,
	       void *arg)
{
	kgc_obj before;

	t_multishot_skip(c);
	if (c->res == -ECANCELED) {
		T_ASSERT_EQ(narrays, 0);
		ncalls++;
		return;
	}
	T_ASSERT(ncalls < NMSG);
	T_ASSERT_EQ(narrays, 1);
	T_ASSERT_EQ(c->res, (int)lens[ncalls]);
	before = arrays[0];
	t_churn(t, heap, node, 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(arrays[0] == before);
	t_pat_check(kgc_array_data(arrays[0]), lens[ncalls], ncalls);
	T_ASSERT_EQ(kgc_io_pool_take(pool, t, c, &roots[ncalls]), (int)lens[ncalls]);
	T_ASSERT(roots[ncalls] == before);
	ncalls++;
}

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_frame f;
	struct kgc_io_cqe c[NMSG];
	struct kgc_io_wait w = { .size = sizeof(w), .wait_nr = NMSG, .timeout_ns = -1, .complete = cb };
	int sv[2];

	alarm(20);
	heap = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	kgc_frame_push(t, &f, roots, NMSG, NULL);
	r = t_ring(t, 8);
	pool = t_pool(r, t, 4, LEN);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	for (unsigned i = 0; i < NMSG; i++) {
		lens[i] = 1 + (unsigned)(t_rand(&seed) % LEN);
		t_pat_write(sv[1], lens[i], i);
	}
	T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[0], pool, 0, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, NMSG, &w), NMSG);
	T_ASSERT_EQ(ncalls, NMSG);
	T_ASSERT_EQ(kgc_io_pool_refill(pool, t), NMSG);
	T_ASSERT_EQ(kgc_io_cancel(r, t, 3), 1);
	w.wait_nr = 1;
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 1, &w), 1);
	T_ASSERT_EQ(ncalls, NMSG + 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (unsigned i = 0; i < NMSG; i++)
		t_pat_check(kgc_array_data(roots[i]), lens[i], i);
	t_io_end(heap, t, r, &f, sv);
	printf("PASS\n");
	return 0;
}
