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
 * The thread (pretouch_thread.c) is attached as a service thread
 * (kgc_heap_destroy does not count it and stops it); it claims and frees
 * regions in managed state, so never while a collection runs, and waits in
 * native state. This file is the backing itself: the heap layer, it starts
 * no thread and calls nothing of the mutator but the state transitions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

#define PRETOUCH_SLICE	(256 * 1024)	/* bytes backed per slice */
#define PRETOUCH_POLL	(64 * 1024)	/* check for a pending collection this often */

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
