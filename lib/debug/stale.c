/* SPDX-License-Identifier: MIT */
/*
 * stale.c - KGC_STALE_CHECK=N, a debug mode that turns a reference left
 * unrooted across a safepoint into an immediate, named failure:
 *  - each thread runs a young collection every N allocations, so objects
 *    move often, not only when eden happens to fill;
 *  - a region a young collection evacuated is not reused at once: it stays
 *    free but quarantined (PROT_NONE, out of the allocator's reach) for
 *    STALE_KEEP_GCS (16) more collections, at most a quarter of the heap at a
 *    time (when full, the oldest region leaves first);
 *  - a fault in a quarantined region stops the process with a message
 *    naming the address, the region and the collection that evacuated it.
 * Without it the old copy is eden reused at once, and the stale pointer
 * reads whatever was allocated there (poison included).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gc_internal.h"

#define STALE_KEEP_GCS	16
#define STALE_HEAPS	16

/* Heaps in stale-check mode, for the SIGSEGV handler (lock-free reads). */
static struct kgc_heap *_Atomic stale_heaps[STALE_HEAPS];
static struct sigaction stale_prev;
static pthread_mutex_t stale_lock = PTHREAD_MUTEX_INITIALIZER;
static int stale_installed;

static void stale_segv(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;

	for (int k = 0; k < STALE_HEAPS; k++) {
		struct kgc_heap *h = atomic_load_explicit(&stale_heaps[k], memory_order_acquire);
		char msg[320];
		uint32_t i;
		int n;

		if (!h || a < h->base || a >= h->limit)
			continue;
		i = (uint32_t)((a - h->base) >> h->region_shift);
		if (!h->regions[i].quarantined)
			continue;
		n = snprintf(msg, sizeof(msg),
			     "kgc: fatal: stale pointer: access to %p in region %u, evacuated by GC(%llu): "
			     "a reference was kept across a safepoint without a root (KGC_STALE_CHECK)\n",
			     (void *)a, i, (unsigned long long)h->regions[i].quarantine_gc);
		if (n > 0 && write(2, msg, (size_t)n) < 0)
			n = 0;
		abort();
	}
	/* not ours: the previous handler, or the default action on return */
	if (stale_prev.sa_flags & SA_SIGINFO && stale_prev.sa_sigaction) {
		stale_prev.sa_sigaction(sig, si, uc);
	} else if (stale_prev.sa_handler != SIG_DFL && stale_prev.sa_handler != SIG_IGN) {
		stale_prev.sa_handler(sig);
	} else {
		signal(sig, SIG_DFL);	/* the faulting access repeats and kills us */
	}
}

int kgci_stale_init(struct kgc_heap *h)
{
	int k;

	if (!h->opt.stale_check)
		return 0;
	pthread_mutex_lock(&stale_lock);
	for (k = 0; k < STALE_HEAPS && atomic_load(&stale_heaps[k]); k++)
		;
	if (k == STALE_HEAPS) {
		pthread_mutex_unlock(&stale_lock);
		kgci_err_set(EMFILE, "kgc_heap_create: KGC_STALE_CHECK: at most %d heaps at once", STALE_HEAPS);
		return -EMFILE;
	}
	if (!stale_installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = stale_segv;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, &stale_prev);
		stale_installed = 1;
	}
	atomic_store(&stale_heaps[k], h);
	pthread_mutex_unlock(&stale_lock);
	return 0;
}

void kgci_stale_destroy(struct kgc_heap *h)
{
	if (!h->opt.stale_check)
		return;
	kgci_stale_release(h, true);
	pthread_mutex_lock(&stale_lock);
	for (int k = 0; k < STALE_HEAPS; k++)
		if (atomic_load(&stale_heaps[k]) == h)
			atomic_store(&stale_heaps[k], NULL);
	pthread_mutex_unlock(&stale_lock);
}

/* The longest-quarantined region back to use (the quarantine is full). */
static void release_oldest(struct kgc_heap *h)
{
	struct region *old = NULL;

	for (uint32_t i = 0; i < h->nregions; i++)
		if (h->regions[i].quarantined &&
		    (!old || h->regions[i].quarantine_gc < old->quarantine_gc))
			old = &h->regions[i];
	if (!old)
		return;
	if (kgci_backend_protect(h, old->bottom, h->region_size, true))
		kgci_fatal("KGC_STALE_CHECK: cannot unprotect region %u", (unsigned)(old - h->regions));
	old->quarantined = 0;
	h->nquarantine--;
}

/* Young GC: region r was evacuated and freed: quarantine it (the newest
 * evacuations are the likeliest targets of a stale pointer: when the
 * quarantine is full, the oldest region leaves it). */
void kgci_stale_quarantine(struct kgc_heap *h, struct region *r)
{
	if (!h->opt.stale_check || h->nregions < 8)
		return;
	if (h->nquarantine >= h->nregions / 4)
		release_oldest(h);
	if (kgci_backend_protect(h, r->bottom, h->region_size, false))
		return;		/* cannot protect: reuse as usual */
	r->quarantined = 1;
	r->quarantine_gc = h->gc_id;
	h->nquarantine++;
}

/* Back to use: regions quarantined STALE_KEEP_GCS collections ago (all). */
void kgci_stale_release(struct kgc_heap *h, bool all)
{
	if (!h->nquarantine)
		return;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (!r->quarantined ||
		    (!all && r->quarantine_gc + STALE_KEEP_GCS > h->gc_id))
			continue;
		if (kgci_backend_protect(h, r->bottom, h->region_size, true))
			kgci_fatal("KGC_STALE_CHECK: cannot unprotect region %u", i);
		r->quarantined = 0;
		h->nquarantine--;
	}
}

/* Allocation: a young collection is due every opt.stale_check allocations
 * (the allocating thread requests it: the heap layer calls no collection). */
bool kgci_stale_alloc_due(struct kgc_thread *t)
{
	return ++t->stale_allocs % t->heap->opt.stale_check == 0;
}
