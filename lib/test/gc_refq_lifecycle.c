/* SPDX-License-Identifier: MIT */
/*
 * Reference queues, the lifetime of entries and queues:
 *  - a cell freed while its entry is on the way to the queue (the
 *    kgc-cleaner thread busy in a cleaner) never shows up; one freed while
 *    queued leaves the queue; the rest come in the order cleared, the
 *    cleaner's entry after its function returned;
 *  - a queue destroyed with entries returns how many it dropped; its cells
 *    stay valid, and a cell still attached to it enqueues nothing later
 *    (ASan: no use of the freed queue);
 *  - attaching a cleared cell: -ENOENT; another heap's queue: -EINVAL; a
 *    short event: -EINVAL; a 24-byte (v1) event is filled to its size;
 *  - checked mode aborts on attaching a freed cell.
 */
#include <pthread.h>
#include <stdbool.h>
#include "tgc.h"

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_thread *t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started, release, ran;

static void blocking_fn(void *arg)
{
	pthread_mutex_lock(&mu);
	started = 1;
	pthread_cond_broadcast(&cv);
	while (!release)
		pthread_cond_wait(&cv, &mu);
	ran = 1;
	pthread_mutex_unlock(&mu);
}

static kgc_weak dying_weak(kgc_refqueue *q, uint64_t tag)
{
	kgc_weak w = kgc_weak_new(t, kgc_alloc(t, NODE));

	T_ASSERT(w);
	T_ASSERT_EQ(kgc_weak_set_queue(t, w, q, tag), 0);
	return w;
}

static void order_and_free(void)
{
	kgc_refqueue *q;
	kgc_cleaner c;
	kgc_weak w1, w2, w3;
	struct kgc_ref_event ev;

	T_ASSERT_EQ(kgc_refqueue_create(h, &q), 0);
	c = kgc_cleaner_new(t, kgc_alloc(t, NODE), blocking_fn, NULL, q, 10);
	T_ASSERT(c);
	w1 = dying_weak(q, 1);
	w2 = dying_weak(q, 2);
	w3 = dying_weak(q, 3);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	/* the cleaner thread runs c's function first: w1..w3 wait behind it */
	pthread_mutex_lock(&mu);
	while (!started)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, sizeof(ev)), -EAGAIN);	/* none before the cleaner returned */
	T_ASSERT(kgc_weak_get(t, w1) == NULL);	/* cleared in the pause */
	kgc_weak_free(t, w1);			/* pending: its entry must never come */
	pthread_mutex_lock(&mu);
	release = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	kgc_weak_free(t, w2);			/* queued: its entry leaves */
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, sizeof(ev)), 0);
	T_ASSERT(ev.kind == KGC_REF_CLEANER && ev.ref == (void *)c && ev.tag == 10 && ran);
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, sizeof(ev)), 0);
	T_ASSERT(ev.kind == KGC_REF_WEAK && ev.ref == (void *)w3 && ev.tag == 3);
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, sizeof(ev)), -EAGAIN);
	T_ASSERT_EQ(kgc_cleaner_cancel(t, c), 1);
	kgc_weak_free(t, w3);
	T_ASSERT_EQ(kgc_refqueue_destroy(q), 0);
	printf("freed while pending: no entry; freed while queued: gone; cleaner first, after it ran\n");
}

static void destroy_with_entries(void)
{
	kgc_refqueue *q, *q2;
	kgc_weak a, b, keep;
	kgc_obj r[1] = { 0 };
	struct kgc_frame f;

	T_ASSERT_EQ(kgc_refqueue_create(h, &q), 0);
	T_ASSERT_EQ(kgc_refqueue_create(h, &q2), 0);
	a = dying_weak(q, 1);
	b = dying_weak(q, 2);
	kgc_frame_push(t, &f, r, 1, NULL);
	r[0] = kgc_alloc(t, NODE);
	keep = kgc_weak_new(t, r[0]);
	T_ASSERT_EQ(kgc_weak_set_queue(t, keep, q2, 3), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(kgc_refqueue_destroy(q), 2);	/* two entries dropped */
	T_ASSERT(kgc_weak_get(t, a) == NULL && kgc_weak_get(t, b) == NULL);
	kgc_weak_free(t, a);
	kgc_weak_free(t, b);
	T_ASSERT_EQ(kgc_refqueue_destroy(q2), 0);	/* keep still attached to it */
	r[0] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);		/* enqueues nowhere */
	T_ASSERT(kgc_weak_get(t, keep) == NULL);
	kgc_weak_free(t, keep);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	printf("destroy: 2 entries dropped, cells valid; a detached cell enqueues nothing\n");
}

static void bad_args(void)
{
	kgc_refqueue *q, *other;
	kgc_heap *h2 = t_heap(16, 4, NULL);
	kgc_weak w = kgc_weak_new(t, kgc_alloc(t, NODE));
	struct kgc_ref_event ev;
	union { struct kgc_ref_event e; unsigned char b[sizeof(struct kgc_ref_event)]; } small;

	T_ASSERT_EQ(kgc_refqueue_create(h, &q), 0);
	T_ASSERT_EQ(kgc_refqueue_create(h2, &other), 0);
	T_ASSERT_EQ(kgc_weak_set_queue(t, w, other, 0), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "another heap"));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_weak_set_queue(t, w, q, 0), -ENOENT);
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, KGC_REF_EVENT_SIZE_V1 - 1), -EINVAL);
	T_ASSERT_EQ(kgc_refqueue_poll(q, NULL, sizeof(ev)), -EINVAL);
	T_ASSERT_EQ(kgc_refqueue_poll(NULL, &ev, sizeof(ev)), -EINVAL);
	T_ASSERT_EQ(kgc_refqueue_create(NULL, &q), -EINVAL);
	kgc_weak_free(t, w);
	/* a v1 caller: 24 bytes filled, nothing past them */
	w = dying_weak(q, 77);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	memset(&small, 0x5a, sizeof(small));
	T_ASSERT_EQ(kgc_refqueue_poll(q, &small.e, KGC_REF_EVENT_SIZE_V1), 0);
	T_ASSERT_EQ(small.e.size, KGC_REF_EVENT_SIZE_V1);
	T_ASSERT_EQ(small.e.tag, 77);
	T_ASSERT_EQ(small.b[KGC_REF_EVENT_SIZE_V1], 0x5a);
	kgc_weak_free(t, w);
	T_ASSERT_EQ(kgc_refqueue_destroy(q), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h2), 0);	/* frees 'other' */
	printf("bad arguments refused\n");
}

static void attach_freed(void)
{
	kgc_refqueue *q;
	kgc_weak w;

	h = t_heap(16, 4, &NODE);	/* KGC_CHECK=1 now */
	T_ASSERT_EQ(kgc_thread_attach(h, "checked", &t), 0);
	T_ASSERT_EQ(kgc_refqueue_create(h, &q), 0);
	w = kgc_weak_new(t, kgc_alloc(t, NODE));
	kgc_weak_free(t, w);
	kgc_weak_set_queue(t, w, q, 0);
}

int main(void)
{
	struct kgc_options o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_opts_small(&o, 32, 4);
	o.verify = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	order_and_free();
	destroy_with_entries();
	bad_args();
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	t_expect_death(attach_freed, "freed or of another kind");	/* no threads left to fork */
	return 0;
}
