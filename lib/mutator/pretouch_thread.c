/* SPDX-License-Identifier: MIT */
/*
 * pretouch_thread.c - the kgc-pretouch service thread: started the first
 * time a mutator asks (kgci_pretouch_kick), it waits in native state and,
 * woken, backs regions a slice at a time (kgci_pretouch_slice, pretouch.c)
 * until none is wanted, polling for a collection between slices. Stopped by
 * kgc_heap_destroy; detaching hands back the region it held.
 * Locks: pt->lock is a leaf (never held with h->lock).
 */
#include <errno.h>
#include <stdlib.h>
#include "gc_internal.h"

struct pretouch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, failed, want, stop;	/* pt->lock */
	_Atomic uint64_t regions;		/* backed by the thread (tests, log) */
};

static bool stop_requested(struct pretouch *pt)
{
	bool stop;

	pthread_mutex_lock(&pt->lock);
	stop = pt->stop;
	pthread_mutex_unlock(&pt->lock);
	return stop;
}

static void *pretouch_main(void *arg)
{
	struct kgc_heap *h = arg;
	struct pretouch *pt = h->pretouch;
	struct kgc_thread *t;

	if (kgci_thread_attach_service(h, "kgc-pretouch", &t)) {
		pthread_mutex_lock(&pt->lock);
		pt->failed = true;	/* mutators back regions themselves */
		pthread_mutex_unlock(&pt->lock);
		return NULL;
	}
	kgc_enter_native(t);	/* never holds up a safepoint while it waits */
	pthread_mutex_lock(&pt->lock);
	for (;;) {
		while (!pt->want && !pt->stop)
			pthread_cond_wait(&pt->cond, &pt->lock);
		if (pt->stop)
			break;
		pt->want = false;
		pthread_mutex_unlock(&pt->lock);
		kgc_leave_native(t);
		/* regions until none is wanted; a pending collection runs first */
		while (!stop_requested(pt)) {
			bool held = t->pt_region;

			if (!kgci_pretouch_slice(t))
				break;
			if (held && !t->pt_region)
				atomic_fetch_add_explicit(&pt->regions, 1, memory_order_relaxed);
			kgc_safepoint_poll(t);
		}
		kgc_enter_native(t);
		pthread_mutex_lock(&pt->lock);
	}
	pthread_mutex_unlock(&pt->lock);
	kgc_thread_detach(t);
	return NULL;
}

/*
 * A mutator started a new eden region and a region should be backed
 * (alloc.c, h->lock not held): wake the thread, starting it the first
 * time. False if there is no thread to do it: the mutator backs it.
 */
bool kgci_pretouch_kick(struct kgc_heap *h)
{
	struct pretouch *pt = h->pretouch;
	bool ok;

	if (!pt || !kgci_policy_pretouch_thread(h))
		return false;
	pthread_mutex_lock(&pt->lock);
	if (!pt->started && !pt->failed && !pt->stop) {
		pt->failed = kgci_spawn(&pt->thread, pretouch_main, h, "kgc-pretouch") != 0;
		pt->started = !pt->failed;
	}
	ok = pt->started && !pt->failed && !pt->stop;
	if (ok) {
		pt->want = true;
		pthread_cond_signal(&pt->cond);
	}
	pthread_mutex_unlock(&pt->lock);
	return ok;
}

/* Regions the thread has backed so far. */
uint64_t kgci_pretouch_regions(struct kgc_heap *h)
{
	return h->pretouch ? atomic_load_explicit(&h->pretouch->regions, memory_order_relaxed) : 0;
}

int kgci_pretouch_init(struct kgc_heap *h)
{
	struct pretouch *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return -ENOMEM;
	pthread_mutex_init(&pt->lock, NULL);
	pthread_cond_init(&pt->cond, NULL);
	h->pretouch = pt;
	return 0;
}

/* kgc_heap_destroy (no user thread attached) or a failed create: stop the
 * thread; it detaches, handing back the region it held. */
void kgci_pretouch_destroy(struct kgc_heap *h)
{
	struct pretouch *pt = h->pretouch;
	bool started;

	if (!pt)
		return;
	pthread_mutex_lock(&pt->lock);
	pt->stop = true;
	started = pt->started;
	pthread_cond_signal(&pt->cond);
	pthread_mutex_unlock(&pt->lock);
	if (started)
		pthread_join(pt->thread, NULL);
	pthread_mutex_destroy(&pt->lock);
	pthread_cond_destroy(&pt->cond);
	free(pt);
	h->pretouch = NULL;
}
