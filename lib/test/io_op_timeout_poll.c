/* SPDX-License-Identifier: MIT */
/*
 * kgc_io operations without arrays, timing: a 50 ms kgc_io_prep_timeout
 * completes with -ETIME after at least 50 ms (and well under a second),
 * across a young and a full collection; a 10 s one cancelled by its
 * user_data completes with -ECANCELED at once. kgc_io_prep_poll on an
 * empty pipe stays in flight (a 50 ms reap times out) until the pipe is
 * written, then completes with POLLIN in res. Neither pins anything; each
 * counts in kgc_io_inflight until reaped. Bad arguments: poll_mask 0,
 * a timeout over 2^63 ns: -EINVAL, nothing queued.
 */
#include <poll.h>
#include "io_test.h"

#define MS 1000000ll

/* The timeout's time lives in the ring, not in this frame. */
static void prep_timeout(kgc_io_ring *r, kgc_thread *t, uint64_t ns, uint64_t ud)
{
	T_ASSERT_EQ(kgc_io_prep_timeout(r, t, ns, ud), 0);
}

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_io_cqe c;
	struct kgc_io_wait w = { .size = sizeof(w), .wait_nr = 1, .timeout_ns = 50 * MS };
	int p[2];
	int64_t t0;
	kgc_obj none[1] = { 0 };
	struct kgc_frame f;

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, none, 1, NULL);

	T_ASSERT_EQ(kgc_io_prep_poll(r, t, p[0], 0, 7), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "poll_mask 0"));
	T_ASSERT_EQ(kgc_io_prep_timeout(r, t, (uint64_t)1 << 63, 7), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "ns"));
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	/* a timeout expires: -ETIME, not before its time */
	prep_timeout(r, t, 50 * MS, 1);
	T_ASSERT_EQ(kgc_io_inflight(r), 1);
	t0 = t_now_ns();
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 1);
	T_ASSERT_EQ(c.res, -ETIME);
	T_ASSERT(t_now_ns() - t0 >= 50 * MS && t_now_ns() - t0 < 1000 * MS);

	/* a long one cancelled */
	prep_timeout(r, t, 10000 * MS, 2);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	t0 = t_now_ns();
	T_ASSERT_EQ(kgc_io_cancel(r, t, 2), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 2);
	T_ASSERT_EQ(c.res, -ECANCELED);
	T_ASSERT(t_now_ns() - t0 < 1000 * MS);

	/* poll: in flight until the pipe has data */
	T_ASSERT_EQ(kgc_io_prep_poll(r, t, p[0], POLLIN, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, &c, 1, &w), -ETIME);
	T_ASSERT_EQ(kgc_io_inflight(r), 1);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 3);
	T_ASSERT(c.res > 0 && (c.res & POLLIN));
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);

	t_io_end(h, t, r, &f, p);
	return 0;
}
