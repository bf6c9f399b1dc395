/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_ring_eventfd in an epoll loop: the ring's eventfd is not readable
 * while nothing has completed; an unattached writer fills NSPREAD pipes one
 * after another with delays, and the loop (epoll_wait in native state, then
 * kgc_io_reap with wait_nr 0 and max 1) gets every completion exactly once,
 * each reap returning at once, epoll_wait never sleeping its whole bound.
 * Then three reads complete together: a reap takes one, and the eventfd
 * stays readable until the other two are reaped (a reap sets it again when
 * it leaves completions in the ring); then it is not readable. The same fd
 * comes back from a second call; the ring's destroy closes it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>
#include "io_test.h"
#include "../io/io_internal.h"

#define NOPS 8
#define NSPREAD 5
#define LEN 512u

static int pipes[NOPS][2];

/* Pipes 0..NSPREAD-1 one at a time, 20 ms apart. */
static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < NSPREAD; i++) {
		usleep(20000);
		t_pat_write(pipes[i][1], LEN, (unsigned)i);
	}
	return NULL;
}

/* epoll_wait in native state, at most ms; the number of events. */
static int ep_wait(kgc_thread *t, int ep, int ms)
{
	struct epoll_event ev;
	int n;

	kgc_enter_native(t);
	/* EINTR: io_uring ran completion work on this thread (task work) */
	while ((n = epoll_wait(ep, &ev, 1, ms)) < 0 && errno == EINTR)
		;
	kgc_leave_native(t);
	if (n < 0)
		T_FAIL("epoll_wait: %s", strerror(errno));
	return n;
}

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[NOPS] = { 0 };
	struct kgc_frame f;
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned got[NOPS] = { 0 }, total = 0;
	pthread_t w;
	int efd, ep;

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "loop", &t), 0);
	r = t_ring(t, 16);
	kgc_frame_push(t, &f, roots, NOPS, NULL);
	efd = kgc_io_ring_eventfd(r, t);
	T_ASSERT(efd >= 0);
	T_ASSERT_EQ(kgc_io_ring_eventfd(r, t), efd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	T_ASSERT(ep >= 0);
	ev.data.fd = efd;
	T_ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);

	for (int i = 0; i < NOPS; i++) {
		T_ASSERT_EQ(pipe(pipes[i]), 0);
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
		T_ASSERT(roots[i]);
		T_ASSERT_EQ(kgc_io_prep_read(r, t, pipes[i][0], &roots[i], 0, LEN, KGC_IO_OFF_CUR,
					     100 + i), 0);
	}
	T_ASSERT_EQ(kgc_io_submit(r, t), NOPS);
	T_ASSERT_EQ(ep_wait(t, ep, 0), 0);	/* nothing completed: not readable */
	T_ASSERT_EQ(pthread_create(&w, NULL, writer, NULL), 0);

	while (total < NSPREAD) {
		struct kgc_io_cqe c;
		int64_t t0;
		int n;

		T_ASSERT_EQ(ep_wait(t, ep, 5000), 1);
		t0 = t_now_ns();
		n = kgc_io_reap(r, t, &c, 1, 0);
		T_ASSERT(t_now_ns() - t0 < 1000000000);	/* (wait_nr 0: never waits) */
		T_ASSERT(n == 0 || n == 1);
		if (!n)
			continue;	/* a spurious wake-up is allowed */
		T_ASSERT(c.user_data >= 100 && c.user_data < 100 + NOPS);
		T_ASSERT_EQ(c.res, LEN);
		got[c.user_data - 100]++;
		total++;
	}
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(w, NULL), 0);
	kgc_leave_native(t);
	T_ASSERT_EQ(ep_wait(t, ep, 0), 0);

	/* three complete together; each reap takes one */
	for (int i = NSPREAD; i < NOPS; i++)
		t_pat_write(pipes[i][1], LEN, (unsigned)i);
	for (int waited = 0; io_uring_cq_ready(&r->ur) < NOPS - NSPREAD; waited++) {
		T_ASSERT(waited < 5000);
		t_nap_native(t, 1000);
	}
	while (total < NOPS) {
		struct kgc_io_cqe c;

		T_ASSERT_EQ(ep_wait(t, ep, 0), 1);	/* completions left: readable */
		T_ASSERT_EQ(kgc_io_reap(r, t, &c, 1, 0), 1);
		T_ASSERT(c.user_data >= 100 + NSPREAD && c.user_data < 100 + NOPS);
		T_ASSERT_EQ(c.res, LEN);
		got[c.user_data - 100]++;
		total++;
	}
	for (int i = 0; i < NOPS; i++) {
		T_ASSERT_EQ(got[i], 1);
		t_pat_check(kgc_array_data(roots[i]), LEN, (unsigned)i);
	}
	T_ASSERT_EQ(ep_wait(t, ep, 0), 0);	/* all reaped: not readable */
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	T_ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), 0);
	close(ep);
	for (int i = 1; i < NOPS; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	t_io_end(h, t, r, &f, pipes[0]);
	/* the ring closed its eventfd */
	T_ASSERT(fcntl(efd, F_GETFD) == -1 && errno == EBADF);
	return 0;
}
