/* SPDX-License-Identifier: MIT */
/*
 * KGC_IO_SKIP_SUCCESS: a send with no completion of its own when it
 * succeeds, the recv linked after it releasing its array.
 * - success: send (LINK | SKIP_SUCCESS) then recv on a socket pair; the
 *   peer reads the request and answers; one completion comes (the recv's)
 *   and a reap asking for 2 returns it without waiting out its timeout
 *   (the send is not counted); until then the sent array stays pinned (a
 *   young collection leaves it in place) and in flight; after it, nothing
 *   is in flight and no region is pinned;
 * - a chain of two skip sends and a recv: only the recv completes, all
 *   three released;
 * - failure: the peer closed, the send fails (-EPIPE, returned); the
 *   kernel cancels the linked recv with no completion: both released;
 *   after a hard link instead, the recv runs and completes (0, end of
 *   stream): two completions;
 * - no follower before the submit: the send completes like any other;
 * - KGC_IO_DRAIN on the ring afterwards: -EOPNOTSUPP, as kgc.h says;
 * - bad uses: SKIP_SUCCESS without a link flag, on a multishot recv: -EINVAL.
 */
#include <sys/socket.h>
#include "io_test.h"

#define LEN 4096u
#define MS 1000000ll

static struct kgc_io_wait wait2 = { .size = sizeof(wait2), .wait_nr = 2, .timeout_ns = 2000 * MS };

static void send_skip(kgc_io_ring *r, kgc_thread *t, int fd, kgc_obj *a, uint64_t ud)
{
	T_ASSERT_EQ(kgc_io_prep_send(r, t, fd, a, 0, LEN, MSG_NOSIGNAL, ud), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_LINK | KGC_IO_SKIP_SUCCESS), 0);
}

/* The peer's side, in native state: read n bytes, check them, answer. */
static void peer(kgc_thread *t, int fd, size_t n, unsigned gen, unsigned reply)
{
	uint8_t buf[2 * LEN], ans[LEN];

	kgc_enter_native(t);
	T_ASSERT_EQ(recv(fd, buf, n, MSG_WAITALL), (ssize_t)n);
	for (size_t off = 0; off < n; off += LEN)
		t_pat_check(buf + off, LEN, gen);
	t_pat_fill(ans, LEN, reply);
	T_ASSERT_EQ(send(fd, ans, LEN, 0), (ssize_t)LEN);
	kgc_leave_native(t);
}

int main(void)
{
	kgc_heap *h;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[3] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c[4];
	int sv[2], p[2];
	int64_t t0;
	char *was;

	alarm(30);
	h = t_heap(64, 4, NULL);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 8);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 3, NULL);
	for (int i = 0; i < 3; i++)
		T_ASSERT(roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN));
	t_pat_fill(kgc_array_data(roots[0]), LEN, 1);
	t_pat_fill(kgc_array_data(roots[2]), LEN, 1);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);

	/* bad uses */
	T_ASSERT_EQ(kgc_io_prep_send(r, t, sv[0], &roots[0], 0, LEN, MSG_NOSIGNAL, 9), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_SKIP_SUCCESS), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "without KGC_IO_LINK"));
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(t_reap1(r, t).res, (int)LEN);

	/* no follower before the submit: it completes like any other */
	send_skip(r, t, sv[0], &roots[0], 5);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(t_reap1(r, t).user_data, 5);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	peer(t, sv[1], 2 * LEN, 1, 7);	/* both sends so far */
	{
		uint8_t sink[LEN];

		T_ASSERT_EQ(recv(sv[0], sink, LEN, MSG_WAITALL), (ssize_t)LEN);
	}

	/* success: one completion, the send released with the recv */
	send_skip(r, t, sv[0], &roots[0], 1);
	T_ASSERT_EQ(kgc_io_prep_recv(r, t, sv[0], &roots[1], 0, LEN, MSG_WAITALL, 2), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	T_ASSERT_EQ(kgc_io_inflight(r), 2);
	was = (char *)roots[0];
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT((char *)roots[0] == was);	/* pinned while the kernel may read it */
	T_ASSERT(t_stats(h).regions_pinned >= 1);
	peer(t, sv[1], LEN, 1, 2);
	t0 = t_now_ns();
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 4, &wait2), 1);
	T_ASSERT(t_now_ns() - t0 < 1000 * MS);	/* not waiting for a completion that never comes */
	T_ASSERT_EQ(c[0].user_data, 2);
	T_ASSERT_EQ(c[0].res, (int)LEN);
	t_pat_check(kgc_array_data(roots[1]), LEN, 2);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);

	/* a chain: two skip sends, then the recv */
	send_skip(r, t, sv[0], &roots[0], 11);
	send_skip(r, t, sv[0], &roots[2], 12);
	T_ASSERT_EQ(kgc_io_prep_recv(r, t, sv[0], &roots[1], 0, LEN, MSG_WAITALL, 13), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 3);
	peer(t, sv[1], 2 * LEN, 1, 3);
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 4, &wait2), 1);
	T_ASSERT_EQ(c[0].user_data, 13);
	t_pat_check(kgc_array_data(roots[1]), LEN, 3);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);

	/* failure: the send's completion comes; the kernel cancels the recv
	 * linked after it without a completion, and it is released with it */
	close(sv[1]);
	send_skip(r, t, sv[0], &roots[0], 21);
	T_ASSERT_EQ(kgc_io_prep_recv(r, t, sv[0], &roots[1], 0, LEN, 0, 22), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 4, &wait2), 1);
	T_ASSERT_EQ(c[0].user_data, 21);
	T_ASSERT_EQ(c[0].res, -EPIPE);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);

	/* the same after a hard link: the recv runs (end of stream) and completes */
	T_ASSERT_EQ(kgc_io_prep_send(r, t, sv[0], &roots[0], 0, LEN, MSG_NOSIGNAL, 23), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_HARDLINK | KGC_IO_SKIP_SUCCESS), 0);
	T_ASSERT_EQ(kgc_io_prep_recv(r, t, sv[0], &roots[1], 0, LEN, 0, 24), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	{
		int got = 0, n;
		int32_t res[2] = { 1, 1 };

		while (got < 2) {
			T_ASSERT((n = kgc_io_reap_wait(r, t, c, 4, &wait2)) > 0);
			for (int i = 0; i < n; i++) {
				T_ASSERT(c[i].user_data == 23 || c[i].user_data == 24);
				res[c[i].user_data - 23] = c[i].res;
			}
			got += n;
		}
		T_ASSERT_EQ(res[0], -EPIPE);
		T_ASSERT_EQ(res[1], 0);
	}
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	close(sv[0]);

	/* the kernel turns KGC_IO_DRAIN down on a ring that used skips (kgc.h) */
	T_ASSERT_EQ(kgc_io_prep_timeout(r, t, 1000, 41), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_DRAIN), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(t_reap1(r, t).res, -EOPNOTSUPP);

	/* a multishot recv has no single end for a follower to mark */
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	{
		kgc_io_pool *pool = t_pool(r, t, 2, LEN);

		T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[0], pool, 0, 31), 0);
		T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_LINK | KGC_IO_SKIP_SUCCESS), -EINVAL);
		T_ASSERT(strstr(kgc_last_error(), "multishot"));
		T_ASSERT_EQ(kgc_io_submit(r, t), 1);
		T_ASSERT(kgc_io_cancel_all(r, t) >= 0);
		while (kgc_io_inflight(r))
			T_ASSERT(kgc_io_reap_wait(r, t, c, 4, &wait2) >= 0);
		T_ASSERT_EQ(kgc_io_pool_destroy(pool, t), 0);
	}
	close(sv[0]);
	close(sv[1]);
	t_io_end(h, t, r, &f, p);
	return 0;
}
