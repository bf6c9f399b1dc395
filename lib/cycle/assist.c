/* SPDX-License-Identifier: MIT */
/*
 * assist.c - mutator marking assists (after Go's gcAssistAlloc). While a
 * cycle marks and falls behind (kgci_policy_pace: old space grows faster
 * than marking progresses, or runs short), an allocating thread spends the
 * share of its time that pacing takes from it marking old space, instead
 * of sleeping (alloc.c). On 2 CPUs the marker thread alone got 15-20% of a
 * CPU against two busy mutators.
 *
 * Work: the marker thread keeps its own mark stack (cm->lock). A thread
 * that wants work takes it from a shared pool; finding the pool empty, it
 * takes half the marker's stack itself if the marker is not at work (a
 * trylock of cm->lock), else asks (pool.want) and waits a little: the
 * marker hands part of its stack over at its next check
 * (kgci_cm_pool_donate). The marker takes
 * the pool's work back when its own runs out (kgci_cm_pool_refill).
 *
 * Marking from several threads at once: mark bits are set atomically, and
 * the thread that set an object's bit traces it. Assists count the bytes
 * they mark apart from the marker (cm->live_par), folded into cm->live at
 * remark. An assist runs in managed state, so no pause overlaps it, and it
 * hands its unfinished work back to the pool before it returns: a pause
 * finds every gray object in the marker's stack or in the pool (remark
 * drains both; a young pause updates both, kgci_cm_young_roots).
 *
 * Lock order: cm->lock, then pool.lock; a mutator takes pool.lock alone,
 * or cm->lock by trylock only.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "cycle/cm.h"

#define POOL_BATCH 256		/* gray objects taken from the pool at a time */
#define ASSIST_LOCAL 1024	/* an assist's own stack; half spills to the pool when full */
#define ASSIST_CHECK 64		/* objects between looks at the clock and at safepoints */
#define ASSIST_PREFETCH 8	/* gray objects prefetched ahead of their scan */

int kgci_cm_pool_init(struct kgc_heap *h, struct cmark *cm)
{
	cm->live_par = calloc(h->nregions, sizeof(*cm->live_par));
	if (!cm->live_par)
		return -ENOMEM;
	pthread_mutex_init(&cm->pool.lock, NULL);
	cm->pool.inited = true;
	return 0;
}

void kgci_cm_pool_destroy(struct cmark *cm)
{
	if (cm->pool.inited)
		pthread_mutex_destroy(&cm->pool.lock);
	free(cm->pool.v);
	free(cm->live_par);
}

/* Append n gray objects (pool.lock held); false if the pool cannot grow. */
static bool pool_put_locked(struct cm_pool *p, const kgc_obj *v, size_t n)
{
	if (p->len + n > p->cap) {
		size_t nc = p->cap ? p->cap : 1024;
		kgc_obj *nv;

		while (nc < p->len + n)
			nc *= 2;
		nv = realloc(p->v, nc * sizeof(*nv));
		if (!nv)
			return false;
		p->v = nv;
		p->cap = nc;
	}
	memcpy(p->v + p->len, v, n * sizeof(*v));
	p->len += n;
	return true;
}

/* Take up to POOL_BATCH gray objects off the pool into dst (pool.lock held). */
static size_t pool_pop_locked(struct cm_pool *p, kgc_obj *dst)
{
	size_t n = p->len < POOL_BATCH ? p->len : POOL_BATCH;

	p->len -= n;
	if (n)	/* p->v may still be NULL */
		memcpy(dst, p->v + p->len, n * sizeof(kgc_obj));
	return n;
}

/* The marker (cm->lock held): a thread asked for work; hand over half of
 * the stack (a lone gray object too), at most 8 batches. */
void kgci_cm_pool_donate(struct cmark *cm)
{
	size_t n = (cm->len + 1) / 2;

	atomic_store_explicit(&cm->pool.want, 0, memory_order_relaxed);
	if (n > 8 * POOL_BATCH)
		n = 8 * POOL_BATCH;
	if (!n)
		return;
	pthread_mutex_lock(&cm->pool.lock);
	if (pool_put_locked(&cm->pool, cm->stack + cm->len - n, n))
		cm->len -= n;
	pthread_mutex_unlock(&cm->pool.lock);
}

/* The marker or a pause (cm->lock held), out of work: take a batch from
 * the pool into the mark stack; false if it was empty. */
bool kgci_cm_pool_refill(struct cmark *cm)
{
	size_t n;

	if (cm->len + POOL_BATCH > cm->cap)
		cm->stack = kgci_array_grow(cm->stack, &cm->cap, sizeof(*cm->stack), "concurrent mark stack");
	pthread_mutex_lock(&cm->pool.lock);
	n = pool_pop_locked(&cm->pool, cm->stack + cm->len);
	pthread_mutex_unlock(&cm->pool.lock);
	cm->len += n;
	return n != 0;
}

/* A pause: every pooled gray object (kgci_cm_young_roots). */
void kgci_cm_pool_each(struct kgc_heap *h, struct cmark *cm, slot_fn fn, void *ctx)
{
	pthread_mutex_lock(&cm->pool.lock);
	for (size_t i = 0; i < cm->pool.len; i++)
		fn(h, &cm->pool.v[i], ctx);
	pthread_mutex_unlock(&cm->pool.lock);
}

/* A pause: a new cycle, or an aborted one. Assists open or closed. */
void kgci_cm_pool_reset(struct kgc_heap *h, struct cmark *cm, bool open)
{
	pthread_mutex_lock(&cm->pool.lock);
	cm->pool.len = 0;
	pthread_mutex_unlock(&cm->pool.lock);
	for (uint32_t i = 0; i < h->nregions; i++)
		atomic_store_explicit(&cm->live_par[i], 0, memory_order_relaxed);
	atomic_store_explicit(&cm->pool.want, 0, memory_order_relaxed);
	atomic_store_explicit(&cm->pool.open, open, memory_order_relaxed);
}

/* Remark (a pause, marking done): assists close; their marked bytes join the marker's. */
void kgci_cm_assist_fold(struct kgc_heap *h, struct cmark *cm)
{
	atomic_store_explicit(&cm->pool.open, 0, memory_order_relaxed);
	for (uint32_t i = 0; i < h->nregions; i++)
		cm->live[i] += atomic_exchange_explicit(&cm->live_par[i], 0, memory_order_relaxed);
}

/* Bytes assists marked so far this cycle (a pause: kgci_cm_progress). */
uint64_t kgci_cm_assist_marked(struct kgc_heap *h, struct cmark *cm)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < h->nregions; i++)
		sum += atomic_load_explicit(&cm->live_par[i], memory_order_relaxed);
	return sum;
}


/* ------------------------------------------------------------ an assist */

struct assist {
	struct kgc_heap *h;
	struct cmark *cm;
	size_t len;
	uint32_t lreg;		/* live bytes of region lreg not yet added to live_par */
	size_t lbytes;
	size_t bytes;		/* marked by this assist */
	kgc_obj st[ASSIST_LOCAL];
};

static void live_flush(struct assist *a)
{
	if (a->lbytes)
		atomic_fetch_add_explicit(&a->cm->live_par[a->lreg], a->lbytes, memory_order_relaxed);
	a->lbytes = 0;
}

/* Give the upper half of the local stack to the pool (all of it: flush). */
static void spill(struct assist *a, bool all)
{
	size_t n = all ? a->len : a->len / 2;
	struct cm_pool *p = &a->cm->pool;

	if (!n)
		return;
	pthread_mutex_lock(&p->lock);
	if (pool_put_locked(p, a->st + a->len - n, n))
		a->len -= n;
	pthread_mutex_unlock(&p->lock);
	if (all && a->len)
		kgci_fatal("marking assist: out of memory for the mark pool");
}

static inline void assist_mark(struct kgc_heap *h, void *ctx, kgc_obj o)
{
	struct assist *a = ctx;

	uint32_t tr;

	if (!is_ref(h, o) || !in_heap(h, o))
		return;
	tr = region_index(h, o);
	if ((char *)o >= a->cm->tams[tr])
		return;
	cm_count_inref(a->cm, a->lreg, tr);
	if (!mb_set_par(&a->cm->bits, o))
		return;
	if (a->len == ASSIST_LOCAL)
		spill(a, false);
	a->st[a->len++] = o;
}

/* Trace one object this assist marked (cmark.c's scan_obj, counting apart). */
static void assist_scan(struct assist *a, kgc_obj o)
{
	struct kgc_heap *h = a->h;
	uint64_t hd = cm_hdr(o);
	uint32_t r = region_index(h, o);
	size_t size = obj_size_h(o, hd);

	if (r != a->lreg) {
		live_flush(a);
		a->lreg = r;
	}
	a->lbytes += size;
	a->bytes += size;
	cm_obj_refs(h, o, hd, assist_mark, a);
}

/* A batch from the pool into the assist's stack; false if it is empty. */
static bool pool_take(struct assist *a)
{
	struct cm_pool *p = &a->cm->pool;

	pthread_mutex_lock(&p->lock);
	a->len = pool_pop_locked(p, a->st);
	pthread_mutex_unlock(&p->lock);
	return a->len != 0;
}

/*
 * Work for an assist: a batch from the pool; else half the marker's stack
 * while the marker is not at work; else ask the marker, which looks every
 * STEP_WORK objects (some 10-50 us), and wait up to ASSIST_ASK_NS for its
 * answer (the marker is at work on another CPU, or waits for one).
 */
#define ASSIST_ASK_NS (200 * 1000)

static bool assist_take(struct assist *a, uint64_t until)
{
	struct cmark *cm = a->cm;
	struct cm_pool *p = &cm->pool;
	uint64_t t0;

	if (pool_take(a))
		return true;
	if (!pthread_mutex_trylock(&cm->lock)) {
		kgci_cm_pool_donate(cm);
		pthread_mutex_unlock(&cm->lock);
		return pool_take(a);	/* empty: the marker has nothing either */
	}
	atomic_store_explicit(&p->want, 1, memory_order_relaxed);
	t0 = kgci_now_ns();
	if (until > t0 + ASSIST_ASK_NS)
		until = t0 + ASSIST_ASK_NS;
	while (atomic_load_explicit(&p->want, memory_order_relaxed) && kgci_now_ns() < until &&
	       !atomic_load_explicit(&a->h->sp.poll_word, memory_order_relaxed))
		sched_yield();
	return pool_take(a);
}

/*
 * An allocating thread, managed state, no lock held: mark for up to
 * budget_ns while the cycle's marking is open. Returns the bytes marked
 * (0: no work to be had now); *spent_ns: the time it took. Stops early at
 * a safepoint request, giving its unfinished work back to the pool.
 */
size_t kgci_cm_assist(struct kgc_heap *h, uint64_t budget_ns, uint64_t *spent_ns)
{
	struct cmark *cm = h->cm;
	struct assist *a;
	uint64_t t0, now;
	unsigned k = 0;
	size_t bytes;

	*spent_ns = 0;
	if (!cm || !atomic_load_explicit(&cm->pool.open, memory_order_relaxed))
		return 0;
	a = malloc(sizeof(*a));
	if (!a)
		return 0;
	a->h = h;
	a->cm = cm;
	a->len = a->lbytes = a->bytes = 0;
	a->lreg = 0;
	t0 = now = kgci_now_ns();
	while (now - t0 < budget_ns) {
		if (!a->len && !assist_take(a, t0 + budget_ns))
			break;
		while (a->len) {
			/* the gray object ASSIST_PREFETCH pops from now, most likely
			 * (cmark.c's FIFO, without its bookkeeping) */
			if (a->len > ASSIST_PREFETCH)
				__builtin_prefetch(a->st[a->len - 1 - ASSIST_PREFETCH]);
			assist_scan(a, a->st[--a->len]);
			if (++k % ASSIST_CHECK == 0)
				break;
		}
		if (k % ASSIST_CHECK == 0) {
			now = kgci_now_ns();
			if (atomic_load_explicit(&h->sp.poll_word, memory_order_relaxed))
				break;
		}
	}
	spill(a, true);
	live_flush(a);
	bytes = a->bytes;
	free(a);
	*spent_ns = kgci_now_ns() - t0;
	return bytes;
}
