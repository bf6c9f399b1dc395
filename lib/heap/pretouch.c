/* SPDX-License-Identifier: MIT */
/*
 * pretouch.c - back the next pause's to-space before the pause needs it.
 *
 * The next young collection copies into free regions; if they were never
 * backed, their page faults (and the kernel's clearing) land in the pause.
 * So when a mutator starts a new eden region while fewer backed free
 * regions exist than the next collection will need (tospace_need, or
 * more when eden grows: kgci_policy_tospace_backed), a fresh
 * free region is backed: held meanwhile as an empty old region marked
 * RF_PRETOUCH (no collection uses or frees it), then handed back to the
 * free list backed and still zero (RF_ZEROED | RF_COMMITTED: eden takes it
 * without faults or clearing, kgci_region_backed).
 *
 * First touches are slow: milliseconds per MiB in a VM, 23% of GCBench's
 * samples when its one mutator did them. So the thread 'kgc-pretouch'
 * does them, on a CPU the mutators leave idle, where there is one
 * (kgci_policy_pretouch_thread); the mutator only wakes it. Elsewhere, or
 * if the thread cannot start, the mutator backs a PRETOUCH_SLICE per
 * slow-path entry as before. Either way the backing runs in native state,
 * a slice at a time, and gives way to a collection that starts meanwhile:
 * its workers need the CPUs more.
 *
 * The thread is attached as a service thread (kgc_heap_destroy does not
 * count it and stops it); it claims and frees regions in managed state, so
 * never while a collection runs, and waits in native state.
 * Locks: pt->lock is a leaf (never held with h->lock).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

#define PRETOUCH_SLICE	(256 * 1024)	/* bytes backed per slice */
#define PRETOUCH_POLL	(64 * 1024)	/* check for a pending collection this often */

struct pretouch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, failed, want, stop;	/* pt->lock */
	_Atomic uint64_t regions;		/* backed by the thread (tests, log) */
};

/* h->lock held. Claims a fresh region to back, if one is wanted: while
 * the backed free regions are no more than the next pause's to-space
 * needs (kgci_policy_tospace_backed), plus `ahead` for eden (the thread's:
 * kgci_policy_pretouch_ahead). */
static struct region *pretouch_claim(struct kgc_heap *h, uint32_t ahead)
{
	uint32_t backed = 0, want = kgci_policy_tospace_backed(h) + ahead;
	long fresh = -1;
	struct region *r;

	for (uint32_t i = 0; i < h->nregions && backed <= want; i++) {
		r = &h->regions[i];
		if (r->type != RT_FREE || r->quarantined)
			continue;
		if (!kgci_region_backed(r)) {
			if (fresh < 0)
				fresh = i;
		} else {
			backed++;
		}
	}
	if (backed > want || fresh < 0 || h->count[RT_FREE] < 2)
		return NULL;
	r = &h->regions[fresh];
	kgci_region_set_type(h, r, RT_OLD);
	r->top = r->bottom;
	r->flags |= RF_PRETOUCH;
	return r;
}

/* h->lock held: the region t was backing goes back to the free list,
 * still zero: backed if t got to its end, else fresh (partly resident). */
void kgci_pretouch_end(struct kgc_thread *t)
{
	struct region *r = t->pt_region;

	if (!r)
		return;
	r->flags &= ~RF_PRETOUCH;
	kgci_region_free(t->heap, r);
	r->flags |= RF_ZEROED | (t->pt_next == r->end ? RF_COMMITTED : 0);
	t->pt_region = NULL;
}

/*
 * One slice of backing by t (managed state on entry and return): claims a
 * region if t holds none and one is wanted. True if t backed something;
 * false if no region is wanted.
 */
bool kgci_pretouch_slice(struct kgc_thread *t)
{
	struct kgc_heap *h = t->heap;
	char *p, *end;

	if (!t->pt_region) {
		pthread_mutex_lock(&h->lock);
		t->pt_region = pretouch_claim(h, t->service ? kgci_policy_pretouch_ahead(h) : 0);
		pthread_mutex_unlock(&h->lock);
		if (!t->pt_region)
			return false;
		t->pt_next = t->pt_region->bottom;
	}
	p = t->pt_next;
	end = p + PRETOUCH_SLICE < t->pt_region->end ? p + PRETOUCH_SLICE : t->pt_region->end;
	thread_set_native(t, TS_NATIVE);
	for (; p < end; p += PRETOUCH_POLL) {
		/* a collection started: its workers need the CPUs more */
		if (atomic_load_explicit(&h->sp.poll_word, memory_order_relaxed))
			break;
		kgci_backend_back(h, p, PRETOUCH_POLL);
	}
	thread_to_managed(t);
	t->pt_next = p;
	if (p == t->pt_region->end) {
		pthread_mutex_lock(&h->lock);
		kgci_pretouch_end(t);
		pthread_mutex_unlock(&h->lock);
	}
	return true;
}

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
