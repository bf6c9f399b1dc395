/* SPDX-License-Identifier: MIT */
/*
 * weak.c - references the collector clears instead of following: weak
 * references, cleaners, identity hashes and ephemerons.
 *
 * All three are weak cells outside the heap: the cell names an object but
 * does not keep it alive. Each collection that decides liveness asks
 * kgci_weak_process() to settle every cell it is responsible for, with a function
 * that tells, for one referent, its address after the collection or NULL if
 * it died:
 *   young GC      referents in the collection set (forwarded, kept in place
 *                 by an evacuation failure, or dead); old ones untouched;
 *   remark        old / humongous referents below TAMS the cycle left
 *                 unmarked (kgc_weak_get logs its result in the SATB buffer
 *                 while marking, so a referent fetched then is marked);
 *   full GC       unmarked referents after marking, then new addresses.
 * A cleared cell's object is gone: a weak reference reads NULL from then on,
 * a cleaner's function is queued and runs on the thread 'kgc-cleaner',
 * outside any pause, exactly once; a hash cell is freed.
 *
 * Ephemerons: a cell with a key (obj) and a value. The value is kept alive
 * by the cell only while the key is alive otherwise: before settling the
 * cells, each collection runs kgci_weak_ephemerons, which hands the value
 * slot of every cell whose key the collection found alive to the
 * collection's tracing (young: copied like a root; full and remark:
 * marked), lets it finish, and repeats for the keys that made alive, to a
 * fixed point. A cell whose key then is dead is cleared whole (key and
 * value) by kgci_weak_process. kgc_ephemeron_get logs both in the SATB
 * buffer while a cycle marks, as kgc_weak_get does its referent.
 *
 * Identity hashes: the first kgc_identity_hash of an object gives it a cell
 * holding a fresh hash; an index (open addressing, address -> cell) finds it
 * again. The index is rebuilt on the first lookup after a collection moved
 * or cleared a hash cell.
 *
 * Reference queues (refqueue.c): a cleared cell attached to a queue, and
 * every cleaner with a handle, goes on a pending list in the pause; the
 * thread 'kgc-cleaner' runs the cleaner and enqueues the cell after it.
 *
 * Lock: h->weak_lock guards the cells' lists and the index against mutators;
 * collections run at a safepoint and take it too (lock order: h->lock, then
 * h->weak_lock). cleaner_lock guards the queue the cleaner thread drains.
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

#include "weak_internal.h"

int kgci_weak_init(struct kgc_heap *h)
{
	struct weak *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->cleaner_lock, NULL);
	pthread_cond_init(&w->cleaner_cond, NULL);
	w->jobs_tail = &w->jobs;
	kgci_refq_init(w);
	h->weak = w;
	return 0;
}

static void run_jobs(struct kgc_heap *h, struct cleaner_job *j)
{
	while (j) {
		struct cleaner_job *n = j->next;

		j->fn(j->arg);
		atomic_fetch_add_explicit(&h->cleaners_run, 1, memory_order_relaxed);
		free(j);
		j = n;
	}
}

/* Heap destroy: the queued cleaners run (their objects are dead); cleaners
 * of objects still alive do not. Reference queues are freed. */
void kgci_weak_destroy(struct kgc_heap *h)
{
	struct weak *w = h->weak;
	struct cleaner_job *j;

	if (!w)
		return;
	if (w->cleaner_started) {
		pthread_mutex_lock(&w->cleaner_lock);
		w->cleaner_stop = true;
		pthread_cond_broadcast(&w->cleaner_cond);
		pthread_mutex_unlock(&w->cleaner_lock);
		pthread_join(w->cleaner, NULL);
	}
	j = w->jobs;
	w->jobs = NULL;
	run_jobs(h, j);
	kgci_refq_drain_pending(h);	/* cleaners with handles whose objects died run too */
	kgci_refq_destroy_all(h);
	while (w->blocks) {
		struct weak_block *b = w->blocks;

		w->blocks = b->next;
		free(b);
	}
	free(w->index);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->cleaner_lock);
	pthread_cond_destroy(&w->cleaner_cond);
	free(w);
	h->weak = NULL;
}

/* ------------------------------------------------------------- cells */

struct weak_cell *kgci_cell_new(struct weak *w, kgc_obj o, uint32_t kind)
{
	struct weak_cell *c;

	if (!w->free) {
		struct weak_block *b = calloc(1, sizeof(*b));

		if (!b)
			return NULL;
		b->next = w->blocks;
		w->blocks = b;
		for (int i = WEAK_BLOCK - 1; i >= 0; i--) {
			b->cells[i].next_free = w->free;
			w->free = &b->cells[i];
		}
	}
	c = w->free;
	w->free = c->next_free;
	memset(c, 0, sizeof(*c));
	c->obj = o;
	c->kind = kind;
	return c;
}

void kgci_cell_free(struct weak *w, struct weak_cell *c)
{
	if (c->kind == WK_EPHEMERON)
		w->nephemerons--;
	c->kind = WK_FREE;
	c->obj = NULL;
	c->value = NULL;
	c->next_free = w->free;
	w->free = c;
}

bool kgci_weak_arg_ok(kgc_thread *t, kgc_obj o, const char *what)
{
	if (!kgci_thread_check_managed(t, what))
		return false;
	if (o && ((uintptr_t)o & t->heap->opt.tag_mask)) {
		/* no object: an immediate is its own identity, and never dies */
		kgci_err_set(EINVAL, "%s: thread '%s': %p is a tagged immediate (tag mask %#x), not an object",
			     what, t->name, (void *)o, t->heap->opt.tag_mask);
		return false;
	}
	if (!o || !in_heap(t->heap, o)) {
		if (t->heap->opt.check)
			kgci_fatal("%s: thread '%s': %p is not a heap object", what, t->name, (void *)o);
		kgci_err_set(EINVAL, "%s: thread '%s': %p is not a heap object", what, t->name, (void *)o);
		return false;
	}
	return true;
}

KGC_API kgc_weak kgc_weak_new(kgc_thread *t, kgc_obj o)
{
	struct weak *w;
	struct weak_cell *c;

	kgci_thread_check(t, "kgc_weak_new");
	if (!kgci_weak_arg_ok(t, o, "kgc_weak_new"))
		return NULL;
	w = t->heap->weak;
	pthread_mutex_lock(&w->lock);
	c = kgci_cell_new(w, o, WK_WEAK);
	pthread_mutex_unlock(&w->lock);
	if (!c)
		kgci_err_set(ENOMEM, "kgc_weak_new: out of memory");
	return (kgc_weak)c;
}

KGC_API kgc_obj kgc_weak_get(kgc_thread *t, kgc_weak ref)
{
	struct weak_cell *c = (struct weak_cell *)ref;
	kgc_obj o;

	if (unlikely(t->pub.checked)) {
		kgci_thread_check_managed(t, "kgc_weak_get");
		if (!c || c->kind != WK_WEAK)
			kgci_fatal("kgc_weak_get: thread '%s': %p is not a live weak reference", t->name,
			      (void *)ref);
	}
	o = c->obj;
	/* while a cycle marks, the referent may be one it has not reached: now
	 * that the caller holds it strongly, it must survive the cycle (SATB) */
	if (o && unlikely(__atomic_load_n(&t->pub.satb_active, __ATOMIC_RELAXED)))
		kgc__satb_slow(t, o);
	return o;
}

KGC_API void kgc_weak_free(kgc_thread *t, kgc_weak ref)
{
	struct weak_cell *c = (struct weak_cell *)ref;
	struct weak *w = t->heap->weak;

	if (!c)
		return;
	pthread_mutex_lock(&w->lock);
	if (c->kind != WK_WEAK) {
		pthread_mutex_unlock(&w->lock);
		if (t->heap->opt.check)
			kgci_fatal("kgc_weak_free: thread '%s': %p freed twice or not a weak reference", t->name,
			      (void *)ref);
		return;
	}
	kgci_refq_release(w, c);	/* out of its queue, if it is in one */
	pthread_mutex_unlock(&w->lock);
}

/* --------------------------------------------------------- ephemerons */

KGC_API kgc_ephemeron kgc_ephemeron_new(kgc_thread *t, kgc_obj key, kgc_obj value)
{
	struct weak *w;
	struct weak_cell *c;

	kgci_thread_check(t, "kgc_ephemeron_new");
	if (!kgci_weak_arg_ok(t, key, "kgc_ephemeron_new"))
		return NULL;
	if (value && !((uintptr_t)value & t->heap->opt.tag_mask) &&
	    (((uintptr_t)value & 7) || !in_heap(t->heap, value))) {
		if (t->heap->opt.check)
			kgci_fatal("kgc_ephemeron_new: thread '%s': value %p is not a heap object", t->name,
				   (void *)value);
		kgci_err_set(EINVAL, "kgc_ephemeron_new: thread '%s': value %p is neither a heap object, NULL "
			     "nor a tagged immediate", t->name, (void *)value);
		return NULL;
	}
	w = t->heap->weak;
	pthread_mutex_lock(&w->lock);
	c = kgci_cell_new(w, key, WK_EPHEMERON);
	if (c) {
		c->value = value;
		w->nephemerons++;
	}
	pthread_mutex_unlock(&w->lock);
	if (!c)
		kgci_err_set(ENOMEM, "kgc_ephemeron_new: out of memory");
	return (kgc_ephemeron)c;
}

KGC_API int kgc_ephemeron_get(kgc_thread *t, kgc_ephemeron e, kgc_obj *key, kgc_obj *value)
{
	struct weak_cell *c = (struct weak_cell *)e;
	kgc_obj k, v;

	if (unlikely(t->pub.checked)) {
		kgci_thread_check_managed(t, "kgc_ephemeron_get");
		if (!c || c->kind != WK_EPHEMERON)
			kgci_fatal("kgc_ephemeron_get: thread '%s': %p is not a live ephemeron", t->name, (void *)e);
	}
	if (!c || !key || !value) {
		kgci_err_set(EINVAL, "kgc_ephemeron_get: NULL argument");
		return -EINVAL;
	}
	k = c->obj;
	v = c->value;
	/* as kgc_weak_get: what the caller now holds strongly survives the cycle (SATB) */
	if (k && unlikely(__atomic_load_n(&t->pub.satb_active, __ATOMIC_RELAXED))) {
		kgc__satb_slow(t, k);
		if (is_ref(t->heap, v))
			kgc__satb_slow(t, v);
	}
	*key = k;
	*value = k ? v : NULL;
	return k ? 0 : -ENOENT;
}

KGC_API void kgc_ephemeron_free(kgc_thread *t, kgc_ephemeron e)
{
	struct weak_cell *c = (struct weak_cell *)e;
	struct weak *w = t->heap->weak;

	if (!c)
		return;
	pthread_mutex_lock(&w->lock);
	if (c->kind != WK_EPHEMERON) {
		pthread_mutex_unlock(&w->lock);
		if (t->heap->opt.check)
			kgci_fatal("kgc_ephemeron_free: thread '%s': %p freed twice or not an ephemeron", t->name,
				   (void *)e);
		return;
	}
	kgci_refq_release(w, c);
	pthread_mutex_unlock(&w->lock);
}

/* ----------------------------------------------------------- cleaners */

static void *cleaner_main(void *arg)
{
	struct kgc_heap *h = arg;
	struct weak *w = h->weak;

	pthread_mutex_lock(&w->cleaner_lock);
	for (;;) {
		struct cleaner_job *j;

		while (!w->jobs && !w->has_pending && !w->cleaner_stop)
			pthread_cond_wait(&w->cleaner_cond, &w->cleaner_lock);
		if (w->has_pending) {	/* cleared cells for reference queues (refqueue.c) */
			w->has_pending = false;
			w->running++;
			pthread_mutex_unlock(&w->cleaner_lock);
			kgci_refq_drain_pending(h);
			pthread_mutex_lock(&w->cleaner_lock);
			w->running--;
			pthread_cond_broadcast(&w->cleaner_cond);
			continue;
		}
		if (!w->jobs)
			break;
		j = w->jobs;
		w->jobs = NULL;
		w->jobs_tail = &w->jobs;
		w->running++;
		pthread_mutex_unlock(&w->cleaner_lock);
		run_jobs(h, j);
		pthread_mutex_lock(&w->cleaner_lock);
		w->running--;
		pthread_cond_broadcast(&w->cleaner_cond);
	}
	pthread_mutex_unlock(&w->cleaner_lock);
	return NULL;
}

/* Start the thread 'kgc-cleaner' if it is not running: 0 or -errno. */
int kgci_cleaner_start(struct kgc_heap *h, const char *what)
{
	struct weak *w = h->weak;
	int err = 0;

	pthread_mutex_lock(&w->cleaner_lock);
	if (!w->cleaner_started) {
		err = pthread_create(&w->cleaner, NULL, cleaner_main, h);
		if (!err) {
			pthread_setname_np(w->cleaner, "kgc-cleaner");
			w->cleaner_started = true;
		}
	}
	pthread_mutex_unlock(&w->cleaner_lock);
	if (err)
		kgci_err_set(err, "%s: cannot start the cleaner thread", what);
	return -err;
}

KGC_API int kgc_cleaner_register(kgc_thread *t, kgc_obj o, void (*fn)(void *arg), void *arg)
{
	struct weak *w;
	struct weak_cell *c;
	int err = 0;

	kgci_thread_check(t, "kgc_cleaner_register");
	if (!kgci_weak_arg_ok(t, o, "kgc_cleaner_register"))
		return -EINVAL;
	if (!fn) {
		kgci_err_set(EINVAL, "kgc_cleaner_register: fn is NULL");
		return -EINVAL;
	}
	w = t->heap->weak;
	err = kgci_cleaner_start(t->heap, "kgc_cleaner_register");
	if (err)
		return err;
	pthread_mutex_lock(&w->lock);
	c = kgci_cell_new(w, o, WK_CLEANER);
	if (c) {
		c->fn = fn;
		c->arg = arg;
	}
	pthread_mutex_unlock(&w->lock);
	if (!c) {
		kgci_err_set(ENOMEM, "kgc_cleaner_register: out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Wait until the cleaners queued by past collections have run. */
KGC_API int kgc_cleaners_drain(kgc_thread *t)
{
	struct weak *w = t->heap->weak;

	kgci_thread_check(t, "kgc_cleaners_drain");
	if (!w->cleaner_started)
		return 0;
	kgc_enter_native(t);
	pthread_mutex_lock(&w->cleaner_lock);
	while (w->jobs || w->running || w->has_pending)
		pthread_cond_wait(&w->cleaner_cond, &w->cleaner_lock);
	pthread_mutex_unlock(&w->cleaner_lock);
	kgc_leave_native(t);
	return 0;
}

/* -------------------------------------------------------- identity hash */

static inline size_t addr_slot(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p >> 3;

	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 17) & (cap - 1);
}

static int index_put(struct weak *w, struct weak_cell *c)
{
	size_t i;

	if ((w->nhash + 1) * 2 > w->index_cap) {
		size_t cap = w->index_cap ? w->index_cap * 2 : 256;
		struct weak_cell **n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t k = 0; k < w->index_cap; k++)
			if (w->index[k])
				for (i = addr_slot(w->index[k]->obj, cap); ; i = (i + 1) & (cap - 1))
					if (!n[i]) {
						n[i] = w->index[k];
						break;
					}
		free(w->index);
		w->index = n;
		w->index_cap = cap;
	}
	for (i = addr_slot(c->obj, w->index_cap); w->index[i]; i = (i + 1) & (w->index_cap - 1))
		;
	w->index[i] = c;
	w->nhash++;
	return 0;
}

static void index_rebuild(struct weak *w)
{
	if (w->index)
		memset(w->index, 0, w->index_cap * sizeof(*w->index));
	w->nhash = 0;
	for (struct weak_block *b = w->blocks; b; b = b->next)
		for (int i = 0; i < WEAK_BLOCK; i++)
			if (b->cells[i].kind == WK_HASH && index_put(w, &b->cells[i]))
				kgci_fatal("identity hash: out of memory for its index");
	w->index_stale = false;
}

KGC_API uint32_t kgc_identity_hash(kgc_thread *t, kgc_obj o)
{
	struct weak *w;
	struct weak_cell *c = NULL;
	uint32_t hash;

	kgci_thread_check(t, "kgc_identity_hash");
	if (!kgci_weak_arg_ok(t, o, "kgc_identity_hash"))
		return 0;
	w = t->heap->weak;
	pthread_mutex_lock(&w->lock);
	if (w->index_stale)
		index_rebuild(w);
	if (w->index_cap)
		for (size_t i = addr_slot(o, w->index_cap); w->index[i]; i = (i + 1) & (w->index_cap - 1))
			if (w->index[i]->obj == o) {
				c = w->index[i];
				break;
			}
	if (!c) {
		uint64_t z = ++w->hash_seq * 0x9e3779b97f4a7c15ull;

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		hash = (uint32_t)(z ^ (z >> 31)) | 1;	/* never 0 */
		c = kgci_cell_new(w, o, WK_HASH);
		if (!c || index_put(w, c))
			kgci_fatal("kgc_identity_hash: out of memory");
		c->hash = hash;
	}
	hash = c->hash;
	pthread_mutex_unlock(&w->lock);
	return hash;
}

/* ------------------------------------------------------- collections */

/*
 * At a safepoint: settle every cell with alive(), which returns a referent's
 * address after this collection, the referent itself if this collection does
 * not decide about it, or NULL if it is dead.
 */
void kgci_weak_process(struct kgc_heap *h, kgc_obj (*alive)(struct kgc_heap *h, kgc_obj o, void *ctx),
		  void *ctx)
{
	struct weak *w = h->weak;
	struct cleaner_job *jobs = NULL, **tail = &jobs;
	uint64_t cleared = 0;
	bool pending;

	pthread_mutex_lock(&w->lock);
	for (struct weak_block *b = w->blocks; b; b = b->next)
		for (int i = 0; i < WEAK_BLOCK; i++) {
			struct weak_cell *c = &b->cells[i];
			kgc_obj n;

			if (c->kind == WK_FREE || !c->obj)
				continue;
			n = alive(h, c->obj, ctx);
			if (n == c->obj)
				continue;
			if (c->kind == WK_HASH)
				w->index_stale = true;
			if (n) {
				c->obj = n;
				continue;
			}
			cleared++;
			if (c->kind == WK_WEAK || c->kind == WK_EPHEMERON) {
				c->obj = NULL;		/* an ephemeron: key and value together */
				c->value = NULL;
				if (c->q)
					kgci_refq_cleared(w, c);	/* enqueued after the pause */
			} else if (c->kind == WK_CLEANER_H) {
				c->obj = NULL;
				c->cstate = CS_PENDING;
				kgci_refq_cleared(w, c);	/* run (and enqueued) after the pause */
			} else if (c->kind == WK_HASH) {
				kgci_cell_free(w, c);
			} else {
				struct cleaner_job *j = malloc(sizeof(*j));

				if (!j)
					kgci_fatal("cleaner: out of memory for a job");
				j->fn = c->fn;
				j->arg = c->arg;
				j->next = NULL;
				*tail = j;
				tail = &j->next;
				kgci_cell_free(w, c);
			}
		}
	pending = w->pending != NULL;
	pthread_mutex_unlock(&w->lock);
	h->st.weak_cleared += cleared;
	if (jobs || pending) {
		pthread_mutex_lock(&w->cleaner_lock);
		if (jobs) {
			*w->jobs_tail = jobs;
			w->jobs_tail = tail;
		}
		w->has_pending |= pending;
		pthread_cond_broadcast(&w->cleaner_cond);
		pthread_mutex_unlock(&w->cleaner_lock);
	}
}

/* Verifier: every cell's referent and ephemeron value (fn as for a root,
 * on a copy). */
void kgci_weak_iterate(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	struct weak *w = h->weak;

	for (struct weak_block *b = w->blocks; b; b = b->next)
		for (int i = 0; i < WEAK_BLOCK; i++) {
			kgc_obj o = b->cells[i].obj, v = b->cells[i].value;

			if (b->cells[i].kind != WK_FREE && o)
				fn(h, &o, ctx);
			if (b->cells[i].kind == WK_EPHEMERON && is_ref(h, v))
				fn(h, &v, ctx);
		}
}

/* Full collection: every ephemeron's value slot holding a reference (its
 * new address stored in place). */
void kgci_weak_values(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	struct weak *w = h->weak;

	for (struct weak_block *b = w->blocks; b && w->nephemerons; b = b->next)
		for (int i = 0; i < WEAK_BLOCK; i++)
			if (b->cells[i].kind == WK_EPHEMERON && is_ref(h, b->cells[i].value))
				fn(h, &b->cells[i].value, ctx);
}

/*
 * At a safepoint, before kgci_weak_process: the ephemerons' fixed point.
 * Each round hands trace() the value slot of every cell not yet handed on
 * whose key alive() finds alive (not NULL) - the collection copies or marks
 * it (and may update the slot) - then drain() finishes that tracing, which
 * may make more keys alive. Ends when a round hands nothing on.
 */
void kgci_weak_ephemerons(struct kgc_heap *h, kgc_obj (*alive)(struct kgc_heap *h, kgc_obj o, void *ctx),
			  slot_fn trace, void (*drain)(struct kgc_heap *h, void *ctx), void *ctx)
{
	struct weak *w = h->weak;
	struct weak_cell **v = NULL;
	size_t n = 0, cap = 0;
	bool more;

	pthread_mutex_lock(&w->lock);
	for (struct weak_block *b = w->blocks; b && w->nephemerons; b = b->next)
		for (int i = 0; i < WEAK_BLOCK; i++) {
			struct weak_cell *c = &b->cells[i];

			if (c->kind != WK_EPHEMERON || !c->obj || !is_ref(h, c->value))
				continue;
			if (n == cap)
				v = kgci_array_grow(v, &cap, sizeof(*v), "ephemeron list");
			v[n++] = c;
		}
	do {
		more = false;
		for (size_t i = 0; i < n; i++) {
			if (!v[i] || !alive(h, v[i]->obj, ctx))
				continue;
			trace(h, &v[i]->value, ctx);
			v[i] = NULL;	/* once */
			more = true;
		}
		if (more)
			drain(h, ctx);
	} while (more);
	pthread_mutex_unlock(&w->lock);
	free(v);
}
