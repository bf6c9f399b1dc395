/* SPDX-License-Identifier: MIT */
/*
 * Waiting on a reference queue: kgc_refqueue_wait on an empty queue gives
 * -ETIMEDOUT after about its timeout (and 0 ns is a poll); a thread blocked
 * in it (forever, in native state: the collection it waits for runs) wakes
 * with the entry of a weak reference another thread's collection cleared;
 * the queue's eventfd turns readable on that enqueue; destroying a queue a
 * thread waits on is refused (-EBUSY).
 */
#include <poll.h>
#include <pthread.h>
#include "tgc.h"

unsigned kgci_refq_test_waiters(kgc_refqueue *q);

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_refqueue *q;
static struct kgc_ref_event got;
static int got_rc = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void *waiter(void *arg)
{
	kgc_thread *wt;

	T_ASSERT_EQ(kgc_thread_attach(h, "waiter", &wt), 0);
	got_rc = kgc_refqueue_wait(wt, q, &got, sizeof(got), -1);
	T_ASSERT_EQ(kgc_thread_detach(wt), 0);
	return NULL;
}

int main(void)
{
	kgc_thread *t;
	struct kgc_ref_event ev;
	pthread_t th;
	uint64_t t0, waited;
	struct pollfd pfd;
	uint64_t cnt;
	kgc_weak w;
	unsigned long long seed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	h = t_heap(32, 4, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT_EQ(kgc_refqueue_create(h, &q), 0);
	pfd.fd = kgc_refqueue_fd(q);
	pfd.events = POLLIN;
	T_ASSERT(pfd.fd >= 0);
	T_ASSERT_EQ(poll(&pfd, 1, 0), 0);

	t0 = now_ns();
	T_ASSERT_EQ(kgc_refqueue_wait(t, q, &ev, sizeof(ev), 30 * 1000000), -ETIMEDOUT);
	waited = now_ns() - t0;
	T_ASSERT(waited >= 29 * 1000000ull && waited < 2000 * 1000000ull);
	T_ASSERT_EQ(kgc_refqueue_wait(NULL, q, &ev, sizeof(ev), 0), -ETIMEDOUT);

	T_ASSERT_EQ(pthread_create(&th, NULL, waiter, NULL), 0);
	for (int i = 0; i < 5000 && !kgci_refq_test_waiters(q); i++)	/* until it waits */
		t_nap_native(t, 1000);
	T_ASSERT_EQ(kgc_refqueue_destroy(q), -EBUSY);
	T_ASSERT(strstr(kgc_last_error(), "wait in kgc_refqueue_wait"));
	w = kgc_weak_new(t, kgc_alloc(t, NODE));
	T_ASSERT_EQ(kgc_weak_set_queue(t, w, q, seed), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(got_rc, 0);
	T_ASSERT(got.ref == (void *)w && got.tag == seed && got.kind == KGC_REF_WEAK);
	T_ASSERT_EQ(poll(&pfd, 1, 1000), 1);
	T_ASSERT_EQ(read(pfd.fd, &cnt, sizeof(cnt)), (ssize_t)sizeof(cnt));
	T_ASSERT_EQ(cnt, 1);
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, sizeof(ev)), -EAGAIN);
	printf("timeout %.1f ms; a blocked waiter woke with the entry; the eventfd counted 1\n", waited / 1e6);
	kgc_weak_free(t, w);
	T_ASSERT_EQ(kgc_refqueue_destroy(q), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
