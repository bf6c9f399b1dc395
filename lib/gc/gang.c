/* SPDX-License-Identifier: MIT */
/*
 * gang.c - the young pause's worker gang: KGC_GC_THREADS-1 pool threads
 * (kgc-gc) that join the requesting thread for each pause, and the work
 * sharing between them: an idle worker takes objects a busy one donated
 * (the oldest half of its stack) to a shared queue, and the old->young
 * slots the card scan found are claimed in batches by any worker. What a
 * worker does (y->task) and how a copied object's slots are visited
 * (y->heap_slot) are the pause's (young.c); the gang knows neither.
 * A pool thread that wakes late (its CPU busy: on 2 vCPUs one woke 6.7 ms
 * into a churn pause) joins the work still open or none of it; the pause
 * waits only for threads that joined.
 */
#include <stdlib.h>
#include <string.h>
#include "gc/young.h"

#define DONATE_MIN 2

void (*kgci_young_test_drain_hook)(void);	/* test hook: every 64 objects copied */
void (*kgci_young_test_wake_hook)(uint64_t gen);	/* test hook: a pool thread woke for pause gen */

/*
 * Give half of the local stack to idle workers: the oldest half, nearest the
 * roots of what is being copied (the largest subtrees: a binary tree's DFS
 * stack is only as deep as the tree, so waiting for a long stack would keep
 * a tree's copy on one worker).
 */
static void maybe_donate(struct yworker *w)
{
	struct ygc *y = w->y;
	size_t n;

	if (y->nworkers == 1 || w->len < DONATE_MIN ||
	    !atomic_load_explicit(&y->idle_hint, memory_order_relaxed))
		return;
	n = w->len / 2;
	pthread_mutex_lock(&y->lock);
	if (y->qlen + n > y->qcap) {
		size_t nc = (y->qlen + n) * 2;
		kgc_obj *nq = realloc(y->q, nc * sizeof(*nq));

		if (!nq)
			kgci_fatal("young GC: out of memory for the shared queue");
		y->q = nq;
		y->qcap = nc;
	}
	memcpy(y->q + y->qlen, w->stack, n * sizeof(kgc_obj));
	memmove(w->stack, w->stack + n, (w->len - n) * sizeof(kgc_obj));
	y->qlen += n;
	w->len -= n;
	pthread_cond_broadcast(&y->cond);
	pthread_mutex_unlock(&y->lock);
}

/*
 * Depth-first (LIFO) on purpose: objects are copied next to what they refer
 * to, so a linked structure that dies later leaves one large gap for the
 * sweep instead of many small ones (a FIFO of popped objects, tried for
 * prefetching, interleaved lists and cut the reusable gap size by 5x).
 */
void kgci_gang_drain_local(struct yworker *w)
{
	struct kgc_heap *h = w->y->h;
	unsigned k = 0;

	while (w->len) {
		kgc_obj o = w->stack[--w->len];

		kgci_obj_iterate_refs(h, o, w->y->heap_slot, w);
		if ((++k & 63) == 0) {
			if (unlikely(kgci_young_test_drain_hook != NULL))
				kgci_young_test_drain_hook();
			maybe_donate(w);
		}
	}
}

/* Drain until every worker is out of work. */
void kgci_gang_drain_all(struct yworker *w)
{
	struct ygc *y = w->y;

	for (;;) {
		kgci_gang_drain_local(w);
		if (y->nworkers == 1)
			return;
		pthread_mutex_lock(&y->lock);
		for (;;) {
			if (y->qlen) {
				size_t n = y->qlen < 256 ? y->qlen : 256;

				y->qlen -= n;
				for (size_t i = 0; i < n; i++)
					ygc_push(w, y->q[y->qlen + i]);
				break;
			}
			if (y->done) {
				pthread_mutex_unlock(&y->lock);
				return;
			}
			y->idle++;
			atomic_fetch_add(&y->idle_hint, 1);
			if (y->idle == y->active) {
				y->done = true;
				pthread_cond_broadcast(&y->cond);
				pthread_mutex_unlock(&y->lock);
				return;
			}
			pthread_cond_wait(&y->cond, &y->lock);
			y->idle--;
			atomic_fetch_sub(&y->idle_hint, 1);
		}
		pthread_mutex_unlock(&y->lock);
	}
}

/*
 * Phase B's card slots: every worker's, in batches any worker may claim
 * (its own first). A worker may find most of them, all slots of one large
 * reference array on dirty cards, say; each one may lead to a long chain
 * of objects (a linked list's head) that copying cannot split, so they
 * are shared before they are followed, not after.
 */
#define SLOT_BATCH 64

void (*kgci_young_test_batch_hook)(bool own);	/* test hook: before each batch */

void kgci_gang_share_slots(struct yworker *w)
{
	struct ygc *y = w->y;
	unsigned self = (unsigned)(w - y->w);

	for (unsigned k = 0; k < y->nworkers; k++) {
		struct yworker *v = &y->w[(self + k) % y->nworkers];
		size_t i, e;

		while ((i = atomic_fetch_add_explicit(&v->slot_next, SLOT_BATCH,
						      memory_order_relaxed)) < v->nslots) {
			e = i + SLOT_BATCH < v->nslots ? i + SLOT_BATCH : v->nslots;
			if (v != w)
				w->slots_taken += e - i;
			if (unlikely(kgci_young_test_batch_hook != NULL))
				kgci_young_test_batch_hook(v == w);
			for (; i < e; i++) {
				if (i + 8 < e)
					__builtin_prefetch(__atomic_load_n(v->slots[i + 8], __ATOMIC_RELAXED));
				y->heap_slot(y->h, v->slots[i], w);
			}
			kgci_gang_drain_local(w);
		}
	}
}

/*
 * Two phases: (A) every worker scans dirty cards and only collects the
 * slots that point into the collection set; (B) after all are done, roots
 * and those slots are evacuated. Nothing parses old regions in (B), so
 * promotion may fill swept gaps inside them.
 */

/*
 * A worker takes part in the pause (y->lock): worker 0 from the start
 * (y->active counts it); another only while the work is not over
 * (GANG_LATE: it touches nothing), and without the card scan once every
 * worker that joined has passed it (GANG_EVAC: every region was claimed and
 * scanned, and phase B may be filling swept gaps already).
 */
int kgci_gang_join(struct yworker *w, bool first)
{
	struct ygc *y = w->y;
	uint64_t late;
	int j;

	if (first)
		return GANG_CARDS;
	pthread_mutex_lock(&y->lock);
	late = kgci_now_ns() - y->t_go;
	if (late > y->join_late_ns)
		y->join_late_ns = late;
	if (y->done) {
		j = GANG_LATE;
	} else {
		y->active++;
		j = y->cards_over ? GANG_EVAC : GANG_CARDS;
	}
	pthread_mutex_unlock(&y->lock);
	return j;
}

/* Wait until every worker that joined got here; the last one to arrive
 * sets *set_at_last (under the gang's lock, so the others see it after the
 * wait). */
void kgci_gang_barrier(struct yworker *w, bool *set_at_last)
{
	struct ygc *y = w->y;

	pthread_mutex_lock(&y->lock);
	if (++y->cards_done == y->active) {
		y->cards_over = true;
		*set_at_last = true;
		pthread_cond_broadcast(&y->cond);
	}
	while (!y->cards_over)
		pthread_cond_wait(&y->cond, &y->lock);
	pthread_mutex_unlock(&y->lock);
}

/* ------------------------------------------------------------ worker pool */

/* h->young.pool: the gang's threads, started at the first parallel pause */

struct gc_pool {
	pthread_mutex_t lock;
	pthread_cond_t go, done;
	uint64_t gen;
	unsigned nthreads, running;	/* running: threads that joined the open pause */
	bool stop, open;		/* open: y may be joined (its pause is in kgci_gang_run) */
	struct ygc *y;
	struct kgci_steer *steer;	/* per thread: off the pausing thread's CPU (spawn.c) */
	pthread_t th[];
};

struct pool_arg { struct gc_pool *p; unsigned id; };

static void *pool_main(void *arg)
{
	struct pool_arg *a = arg;
	struct gc_pool *p = a->p;
	unsigned id = a->id;
	uint64_t seen = 0;
	struct ygc *y;

	free(a);
	kgci_steer_self(p->steer, id - 1);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->gen == seen && !p->stop)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->stop)
			break;
		seen = p->gen;
		if (unlikely(kgci_young_test_wake_hook != NULL)) {
			pthread_mutex_unlock(&p->lock);
			kgci_young_test_wake_hook(seen);
			pthread_mutex_lock(&p->lock);
		}
		if (!p->open || p->gen != seen)
			continue;	/* woke after that pause's work was over */
		p->running++;
		y = p->y;
		pthread_mutex_unlock(&p->lock);
		y->task(&y->w[id], false);
		pthread_mutex_lock(&p->lock);
		if (--p->running == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static struct gc_pool *pool_get(struct kgc_heap *h, unsigned n)
{
	struct gc_pool *p = h->young.pool;

	if (p || n < 2)
		return p;
	p = calloc(1, sizeof(*p) + (n - 1) * sizeof(pthread_t));
	if (!p || !(p->steer = kgci_steer_new(n - 1))) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 1; i < n; i++) {
		struct pool_arg *a = malloc(sizeof(*a));

		if (!a)
			break;
		a->p = p;
		a->id = i;
		if (kgci_spawn(&p->th[i - 1], pool_main, a, "kgc-gc")) {
			free(a);
			break;
		}
		p->nthreads++;
	}
	h->young.pool = p;
	return p;
}

void kgci_gang_start(struct kgc_heap *h, unsigned n)
{
	pool_get(h, n);
}

/* Tests: the number of the last gang run (the next one's is this + 1). */
uint64_t kgci_gang_test_gen(struct kgc_heap *h)
{
	struct gc_pool *p = h->young.pool;
	uint64_t gen;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	gen = p->gen;
	pthread_mutex_unlock(&p->lock);
	return gen;
}

void kgci_gang_destroy(struct kgc_heap *h)
{
	struct gc_pool *p = h->young.pool;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	free(p->steer);
	free(p);
	h->young.pool = NULL;
}

/* Run y->task on y->nworkers workers (fewer if threads are missing); the
 * caller is worker 0. The pool threads run on other CPUs than the
 * caller's meanwhile, where they may (spawn.c: woken, they would queue
 * behind it). */
void kgci_gang_run(struct ygc *y)
{
	struct gc_pool *p = pool_get(y->h, y->nworkers);

	if (!p || p->nthreads + 1 < y->nworkers)
		y->nworkers = p ? p->nthreads + 1 : 1;
	y->t_go = kgci_now_ns();
	if (y->nworkers > 1) {
		kgci_steer_away(p->steer, p->nthreads);
		pthread_mutex_lock(&p->lock);
		p->y = y;
		p->open = true;
		p->gen++;
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->lock);
	}
	y->task(&y->w[0], true);
	if (y->nworkers > 1) {
		/* only those that joined: a thread not yet awake stays out */
		pthread_mutex_lock(&p->lock);
		p->open = false;
		while (p->running)
			pthread_cond_wait(&p->done, &p->lock);
		p->y = NULL;
		pthread_mutex_unlock(&p->lock);
		kgci_steer_restore(p->steer, p->nthreads);
	}
}

