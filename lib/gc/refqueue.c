/* SPDX-License-Identifier: MIT */
/*
 * refqueue.c - reference queues (like java.lang.ref.ReferenceQueue) and
 * cleaners with a handle (kgc_cleaner_new, kgc_cleaner_cancel).
 *
 * A weak reference or an ephemeron attached to a queue, once a collection
 * clears it, and a cleaner with a handle, once a collection finds its
 * object dead, go on w->pending in the pause (kgci_refq_cleared): nothing
 * else happens there. The thread 'kgc-cleaner' takes the list after the
 * pause (kgci_refq_drain_pending): it runs a cleaner's function, then
 * appends the cell to its queue, wakes its waiters and signals its eventfd.
 * So an entry is in its queue only after its cell reads cleared, and a
 * cleaner's entry only after its function returned.
 *
 * The queue links the cells themselves (qnext, qprev): no allocation per
 * entry. A cell freed while pending becomes WK_DEFER and the cleaner thread
 * frees it; a cell freed while queued leaves the queue. w->lock (weak.c)
 * guards the cells, the pending list and every queue; a queue's condition
 * variable waits on it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "weak_internal.h"

struct kgc_refqueue {
	struct kgc_heap *h;
	struct weak_cell *head, *tail;	/* entries, oldest first */
	size_t count;
	pthread_cond_t cond;
	int efd;			/* eventfd: signalled on each enqueue */
	unsigned waiters;		/* threads in kgc_refqueue_wait */
	struct kgc_refqueue *next;	/* w->queues */
};

void kgci_refq_init(struct weak *w)
{
	w->pending_tail = &w->pending;
	pthread_cond_init(&w->ran_cond, NULL);
}

/* In a pause, w->lock held: c was cleared (or its cleaner is due). */
void kgci_refq_cleared(struct weak *w, struct weak_cell *c)
{
	c->qstate = QS_PENDING;
	c->qnext = NULL;
	*w->pending_tail = c;
	w->pending_tail = &c->qnext;
}

static void q_append(struct kgc_refqueue *q, struct weak_cell *c)
{
	c->qstate = QS_QUEUED;
	c->qnext = NULL;
	c->qprev = q->tail;
	if (q->tail)
		q->tail->qnext = c;
	else
		q->head = c;
	q->tail = c;
	q->count++;
	pthread_cond_broadcast(&q->cond);
	if (q->efd >= 0)
		kgci_os_event_signal(q->efd);
}

static void q_unlink(struct kgc_refqueue *q, struct weak_cell *c)
{
	if (c->qprev)
		c->qprev->qnext = c->qnext;
	else
		q->head = c->qnext;
	if (c->qnext)
		c->qnext->qprev = c->qprev;
	else
		q->tail = c->qprev;
	c->qnext = c->qprev = NULL;
	q->count--;
}

/* A cleaner with a handle is due: run its function without the lock. */
static void run_cleaner(struct kgc_heap *h, struct weak *w, struct weak_cell *c)
{
	c->cstate = CS_RUNNING;
	pthread_mutex_unlock(&w->lock);
	c->fn(c->arg);
	atomic_fetch_add_explicit(&h->cleaners_run, 1, memory_order_relaxed);
	pthread_mutex_lock(&w->lock);
	c->cstate = CS_RAN;
	pthread_cond_broadcast(&w->ran_cond);
}

/* The kgc-cleaner thread (and heap destroy): settle the pending cells. */
bool kgci_refq_drain_pending(struct kgc_heap *h)
{
	struct weak *w = h->weak;
	struct weak_cell *list;
	bool any;

	pthread_mutex_lock(&w->lock);
	list = w->pending;
	any = list != NULL;
	w->pending = NULL;
	w->pending_tail = &w->pending;
	while (list) {
		struct weak_cell *c = list;

		list = c->qnext;
		c->qnext = NULL;
		if (c->kind == WK_DEFER) {	/* freed or cancelled meanwhile */
			c->qstate = QS_NONE;
			kgci_cell_free(w, c);
			continue;
		}
		if (c->kind == WK_CLEANER_H)
			run_cleaner(h, w, c);	/* drops the lock: c stays ours (QS_PENDING) */
		if (c->q)
			q_append(c->q, c);
		else
			c->qstate = QS_NONE;
	}
	pthread_mutex_unlock(&w->lock);
	return any;
}

/* w->lock held: the runtime frees c (a weak reference, an ephemeron, a
 * cleaner handle whose function ran or never will). */
void kgci_refq_release(struct weak *w, struct weak_cell *c)
{
	switch (c->qstate) {
	case QS_PENDING:	/* the cleaner thread holds it: it frees it */
		if (c->kind == WK_EPHEMERON)
			w->nephemerons--;
		c->kind = WK_DEFER;
		c->q = NULL;
		return;
	case QS_QUEUED:
		q_unlink(c->q, c);
		break;
	}
	kgci_cell_free(w, c);
}

static void q_free(struct kgc_refqueue *q)
{
	kgci_os_event_close(q->efd);
	pthread_cond_destroy(&q->cond);
	free(q);
}

void kgci_refq_destroy_all(struct kgc_heap *h)
{
	struct weak *w = h->weak;

	while (w->queues) {
		struct kgc_refqueue *q = w->queues;

		w->queues = q->next;
		q_free(q);
	}
	pthread_cond_destroy(&w->ran_cond);
}

/* ------------------------------------------------------------- queues */

KGC_API int kgc_refqueue_create(kgc_heap *heap, kgc_refqueue **out)
{
	struct kgc_refqueue *q;
	struct weak *w;
	int err;

	if (!heap || !out) {
		kgci_err_set(EINVAL, "kgc_refqueue_create: NULL argument");
		return -EINVAL;
	}
	w = heap->weak;
	err = kgci_cleaner_start(heap, "kgc_refqueue_create");	/* it enqueues */
	if (err)
		return err;
	q = calloc(1, sizeof(*q));
	if (!q) {
		kgci_err_set(ENOMEM, "kgc_refqueue_create: out of memory");
		return -ENOMEM;
	}
	q->h = heap;
	q->efd = kgci_os_event_open();
	if (q->efd < 0) {
		err = q->efd;
		free(q);
		kgci_err_set(-err, "kgc_refqueue_create: cannot open its eventfd (%s)", strerror(-err));
		return err;
	}
	pthread_cond_init(&q->cond, NULL);
	pthread_mutex_lock(&w->lock);
	q->next = w->queues;
	w->queues = q;
	pthread_mutex_unlock(&w->lock);
	*out = q;
	return 0;
}

/* w->lock held: every cell attached to q forgets it (pending ones are not
 * enqueued); the entries in q leave it. Returns how many entries there were. */
static size_t q_detach(struct weak *w, struct kgc_refqueue *q)
{
	size_t n = q->count;

	for (struct weak_block *b = w->blocks; b; b = b->next)
		for (int i = 0; i < WEAK_BLOCK; i++)
			if (b->cells[i].q == q)
				b->cells[i].q = NULL;
	while (q->head) {
		struct weak_cell *c = q->head;

		q_unlink(q, c);
		c->qstate = QS_NONE;
	}
	for (struct kgc_refqueue **p = &w->queues; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	return n;
}

KGC_API int kgc_refqueue_destroy(kgc_refqueue *q)
{
	struct weak *w;
	size_t n;

	if (!q)
		return 0;
	w = q->h->weak;
	pthread_mutex_lock(&w->lock);
	if (q->waiters) {
		unsigned k = q->waiters;

		pthread_mutex_unlock(&w->lock);
		kgci_err_set(EBUSY, "kgc_refqueue_destroy: %u thread(s) wait in kgc_refqueue_wait on it", k);
		return -EBUSY;
	}
	n = q_detach(w, q);
	pthread_mutex_unlock(&w->lock);
	q_free(q);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

KGC_API int kgc_refqueue_fd(kgc_refqueue *q)
{
	if (!q) {
		kgci_err_set(EINVAL, "kgc_refqueue_fd: NULL queue");
		return -EINVAL;
	}
	return q->efd;
}

static int event_size_ok(const struct kgc_ref_event *ev, size_t size, const char *what)
{
	if (!ev || size < KGC_REF_EVENT_SIZE_V1) {
		kgci_err_set(EINVAL, "%s: event %p of %zu bytes (at least %u)", what, (void *)ev, size,
			     (unsigned)KGC_REF_EVENT_SIZE_V1);
		return -EINVAL;
	}
	return 0;
}

/* w->lock held, q not empty: take the oldest entry into ev. */
static void q_take(struct kgc_refqueue *q, struct kgc_ref_event *ev, size_t size)
{
	struct weak_cell *c = q->head;
	struct kgc_ref_event e = { 0 };

	q_unlink(q, c);
	c->qstate = QS_TAKEN;
	e.size = (uint32_t)(size < sizeof(e) ? size : sizeof(e));
	e.kind = c->kind == WK_WEAK ? KGC_REF_WEAK : c->kind == WK_EPHEMERON ? KGC_REF_EPHEMERON : KGC_REF_CLEANER;
	e.ref = c;
	e.tag = c->tag;
	memcpy(ev, &e, e.size);
	if (size > sizeof(e))
		memset((char *)ev + sizeof(e), 0, size - sizeof(e));
}

KGC_API int kgc_refqueue_poll(kgc_refqueue *q, struct kgc_ref_event *ev, size_t size)
{
	struct weak *w;
	int err = event_size_ok(ev, size, "kgc_refqueue_poll");

	if (err)
		return err;
	if (!q) {
		kgci_err_set(EINVAL, "kgc_refqueue_poll: NULL queue");
		return -EINVAL;
	}
	w = q->h->weak;
	pthread_mutex_lock(&w->lock);
	if (q->head)
		q_take(q, ev, size);
	else
		err = -EAGAIN;
	pthread_mutex_unlock(&w->lock);
	return err;
}

static void deadline(struct timespec *ts, int64_t ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ns / 1000000000;
	ts->tv_nsec += ns % 1000000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

KGC_API int kgc_refqueue_wait(kgc_thread *t, kgc_refqueue *q, struct kgc_ref_event *ev, size_t size,
			      int64_t timeout_ns)
{
	struct weak *w;
	struct timespec ts;
	int err = event_size_ok(ev, size, "kgc_refqueue_wait");

	if (err)
		return err;
	if (!q) {
		kgci_err_set(EINVAL, "kgc_refqueue_wait: NULL queue");
		return -EINVAL;
	}
	if (t) {
		kgci_thread_check(t, "kgc_refqueue_wait");
		if (t->heap != q->h) {
			kgci_err_set(EINVAL, "kgc_refqueue_wait: thread '%s' and the queue are of different heaps",
				     t->name);
			return -EINVAL;
		}
		kgc_enter_native(t);	/* collections go on while it sleeps */
	}
	if (timeout_ns > 0)
		deadline(&ts, timeout_ns);
	w = q->h->weak;
	pthread_mutex_lock(&w->lock);
	q->waiters++;
	while (!q->head && timeout_ns != 0 && !err) {
		if (timeout_ns < 0)
			pthread_cond_wait(&q->cond, &w->lock);
		else if (pthread_cond_timedwait(&q->cond, &w->lock, &ts) == ETIMEDOUT)
			err = -ETIMEDOUT;
	}
	q->waiters--;
	if (q->head) {
		q_take(q, ev, size);
		err = 0;
	} else if (!err) {
		err = -ETIMEDOUT;	/* timeout 0: a poll */
	}
	pthread_mutex_unlock(&w->lock);
	if (t)
		kgc_leave_native(t);
	return err;
}

/* ------------------------------------------------------------ attaching */

static int attach(kgc_thread *t, struct weak_cell *c, unsigned kind, kgc_refqueue *q, uint64_t tag,
		  const char *what)
{
	struct weak *w = t->heap->weak;
	int err = 0;

	kgci_thread_check(t, what);
	if (!c || (q && q->h != t->heap)) {
		kgci_err_set(EINVAL, "%s: thread '%s': %s", what, t->name,
			     c ? "the queue is another heap's" : "NULL reference");
		return -EINVAL;
	}
	pthread_mutex_lock(&w->lock);
	if (c->kind != kind) {
		pthread_mutex_unlock(&w->lock);
		if (t->heap->opt.check)
			kgci_fatal("%s: thread '%s': %p is freed or of another kind", what, t->name, (void *)c);
		kgci_err_set(EINVAL, "%s: thread '%s': %p is freed or of another kind", what, t->name, (void *)c);
		return -EINVAL;
	}
	if (!c->obj || c->qstate != QS_NONE) {
		err = -ENOENT;	/* cleared already: no entry will come */
		kgci_err_set(ENOENT, "%s: thread '%s': %p is cleared already", what, t->name, (void *)c);
	} else {
		c->q = q;
		c->tag = tag;
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

KGC_API int kgc_weak_set_queue(kgc_thread *t, kgc_weak ref, kgc_refqueue *q, uint64_t tag)
{
	return attach(t, (struct weak_cell *)ref, WK_WEAK, q, tag, "kgc_weak_set_queue");
}

KGC_API int kgc_ephemeron_set_queue(kgc_thread *t, kgc_ephemeron e, kgc_refqueue *q, uint64_t tag)
{
	return attach(t, (struct weak_cell *)e, WK_EPHEMERON, q, tag, "kgc_ephemeron_set_queue");
}

/* ---------------------------------------------------- cleaner handles */

KGC_API kgc_cleaner kgc_cleaner_new(kgc_thread *t, kgc_obj obj, void (*fn)(void *arg), void *arg,
				    kgc_refqueue *q, uint64_t tag)
{
	struct weak *w;
	struct weak_cell *c;

	kgci_thread_check(t, "kgc_cleaner_new");
	if (!kgci_weak_arg_ok(t, obj, "kgc_cleaner_new"))
		return NULL;
	if (!fn || (q && q->h != t->heap)) {
		kgci_err_set(EINVAL, "kgc_cleaner_new: %s", fn ? "the queue is another heap's" : "fn is NULL");
		return NULL;
	}
	if (kgci_cleaner_start(t->heap, "kgc_cleaner_new"))
		return NULL;
	w = t->heap->weak;
	pthread_mutex_lock(&w->lock);
	c = kgci_cell_new(w, obj, WK_CLEANER_H);
	if (c) {
		c->fn = fn;
		c->arg = arg;
		c->q = q;
		c->tag = tag;
		c->cstate = CS_ARMED;
	}
	pthread_mutex_unlock(&w->lock);
	if (!c)
		kgci_err_set(ENOMEM, "kgc_cleaner_new: out of memory");
	return (kgc_cleaner)c;
}

KGC_API int kgc_cleaner_cancel(kgc_thread *t, kgc_cleaner cl)
{
	struct weak_cell *c = (struct weak_cell *)cl;
	struct weak *w = t->heap->weak;
	int ran;

	kgci_thread_check(t, "kgc_cleaner_cancel");
	if (!c) {
		kgci_err_set(EINVAL, "kgc_cleaner_cancel: NULL cleaner");
		return -EINVAL;
	}
	pthread_mutex_lock(&w->lock);
	if (c->kind != WK_CLEANER_H) {
		pthread_mutex_unlock(&w->lock);
		if (t->heap->opt.check)
			kgci_fatal("kgc_cleaner_cancel: thread '%s': %p cancelled twice or not a cleaner", t->name,
				   (void *)c);
		kgci_err_set(EINVAL, "kgc_cleaner_cancel: %p cancelled twice or not a cleaner", (void *)c);
		return -EINVAL;
	}
	if (c->cstate == CS_RUNNING) {
		if (w->cleaner_started && pthread_equal(pthread_self(), w->cleaner)) {
			pthread_mutex_unlock(&w->lock);
			kgci_err_set(EDEADLK, "kgc_cleaner_cancel: called from its own function");
			return -EDEADLK;
		}
		/* wait for it to finish, in native state (a pause takes w->lock) */
		pthread_mutex_unlock(&w->lock);
		kgc_enter_native(t);
		pthread_mutex_lock(&w->lock);
		while (c->cstate == CS_RUNNING)
			pthread_cond_wait(&w->ran_cond, &w->lock);
		pthread_mutex_unlock(&w->lock);
		kgc_leave_native(t);
		pthread_mutex_lock(&w->lock);
	}
	ran = c->cstate == CS_RAN;
	kgci_refq_release(w, c);	/* pending: the cleaner thread drops it unrun */
	pthread_mutex_unlock(&w->lock);
	return ran;
}

/* tests: threads in kgc_refqueue_wait on q now */
unsigned kgci_refq_test_waiters(kgc_refqueue *q)
{
	struct weak *w = q->h->weak;
	unsigned n;

	pthread_mutex_lock(&w->lock);
	n = q->waiters;
	pthread_mutex_unlock(&w->lock);
	return n;
}
