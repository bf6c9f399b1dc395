/* SPDX-License-Identifier: MIT */
/*
 * io_reap.c - the completions of a kgc_io ring: reaping (with a wait, a
 * timeout, a callback per completion) and the eventfd an event loop waits
 * on.
 *
 * Release at return: a reap consumes completions from the CQ as they
 * arrive, but each one's slot stays as it was - its arrays rooted and
 * pinned - until the reap returns it (out[], the callback): only then is
 * the slot released, in managed state with r->lock held and no safepoint
 * before the call returns. So a collection that runs while the reap waits
 * for later completions (the lock dropped, native state) neither moves nor
 * frees an array of a completion the reap already holds: the program finds
 * every returned array where the prep found it. A reap keeps what it holds
 * in completion order (struct held, one per reap call).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "io/io_internal.h"

#define RELAXED __ATOMIC_RELAXED
#define NO_LIMIT INT64_MAX

/* One completion a reap holds: its slot, released at return when final
 * (a multishot recv's completions with IORING_CQE_F_MORE leave the slot in
 * flight; the pool place such a completion names is done, rooted by the
 * pool, until the program takes it). */
struct held_ent {
	uint32_t slot;
	bool final;
	struct kgc_io_pool *pool;	/* the slot's (it may be reused once released) */
	struct kgc_io_cqe cqe;
};

/* The completions one reap holds until it returns them, in completion
 * order. */
#define HELD_LOCAL 16
struct held {
	struct held_ent *e;
	uint32_t n, cap;
	struct held_ent local[HELD_LOCAL];
};

static void held_init(struct held *hl)
{
	hl->e = hl->local;
	hl->n = 0;
	hl->cap = HELD_LOCAL;
}

static void held_fini(struct held *hl)
{
	if (hl->e != hl->local)
		free(hl->e);
}

/* Room for one more entry (up to max); false: none (out of memory). */
static bool held_room(struct held *hl, unsigned max)
{
	uint32_t nc = hl->cap * 2 < max ? hl->cap * 2 : max;
	struct held_ent *e;

	if (hl->n < hl->cap)
		return true;
	e = hl->e == hl->local ? malloc(nc * sizeof(*e)) : realloc(hl->e, nc * sizeof(*e));
	if (!e)
		return false;
	if (hl->e == hl->local)
		memcpy(e, hl->local, sizeof(hl->local));
	hl->e = e;
	hl->cap = nc;
	return true;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Slot idx has a completion: record it in hl; the last one of the
 * operation leaves the slot done (held until the reap returns). */
static void slot_done(struct kgc_io_ring *r, struct held *hl, uint64_t idx,
		      const struct io_uring_cqe *cqe)
{
	struct io_slot *s = idx < r->nslots ? &r->slots[idx] : NULL;
	bool final = !(cqe->flags & IORING_CQE_F_MORE);

	if (!s || (s->state != SLOT_INFLIGHT && s->state != SLOT_INLINE))
		kgci_fatal("kgc_io_reap: %s: completion for slot %llu not in flight", r->name,
			   (unsigned long long)idx);
	if (s->pool)
		kgci_io_pool_done(s->pool, cqe);
	hl->e[hl->n++] = (struct held_ent){ (uint32_t)idx, final, s->pool,
		{ .user_data = s->user_data, .res = cqe->res, .flags = cqe->flags } };
	if (!final)
		return;
	s->state = SLOT_DONE;
	if (s->skip)	/* it failed: never counted as a completion to come */
		kgci_io_skip_own_cqe(r, s);
	else
		r->kernel--;
}

static void count_cqe(struct kgc_heap *h, const struct kgc_io_cqe *c)
{
	if (c->res < 0)
		atomic_fetch_add_explicit(&h->io_stat[IOS_ERRORS], 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&h->io_stat[IOS_BYTES], (uint64_t)c->res, memory_order_relaxed);
}

/* Slot idx returned: unroot, then unpin its arrays; free it. */
static void slot_release(struct kgc_io_ring *r, uint32_t idx)
{
	struct kgc_heap *h = r->h;
	struct io_slot *s = &r->slots[idx];
	uint32_t n = __atomic_load_n(&s->narr, RELAXED);

	__atomic_store_n(&s->narr, 0, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < n; i++) {
		kgc_obj o = __atomic_load_n(&s->arr[i], RELAXED);

		__atomic_store_n(&s->arr[i], NULL, RELAXED);
		atomic_fetch_sub(region_pins(h, region_index(h, o)), 1);
	}
	if (s->pool)
		s->pool->users--;
	s->pool = NULL;
	s->state = SLOT_FREE;
	s->next_free = r->free_head;
	r->free_head = idx;
	atomic_fetch_sub_explicit(&r->inflight, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->io_stat[IOS_COMPLETED], 1, memory_order_relaxed);
}

/* Release every slot hl holds the last completion of (r->lock held,
 * managed). */
static void release_held(struct kgc_io_ring *r, struct held *hl)
{
	for (uint32_t k = 0; k < hl->n; k++) {
		count_cqe(r->h, &hl->e[k].cqe);
		if (hl->e[k].final) {
			uint32_t i = hl->e[k].slot, next;

			/* and the skip operations before it, which succeeded silently */
			do {
				next = r->slots[i].releases;
				slot_release(r, i);
			} while ((i = next) != IO_NONE);
		}
	}
	hl->n = 0;
}

/* Take the completions there now into hl, until it holds max - the reads
 * done at prep first; r->lock held, managed. Our cancels' completions are
 * consumed silently. */
static void consume(struct kgc_io_ring *r, struct held *hl, unsigned max)
{
	struct io_uring_cqe *cqe, inl = { 0 };
	unsigned head, seen = 0;
	uint32_t i;

	while (r->inl_head != IO_NONE && hl->n < max && held_room(hl, max) &&
	       (i = kgci_io_inline_pop(r, &inl.res)) != IO_NONE) {
		inl.user_data = i;
		slot_done(r, hl, i, &inl);
	}

	io_uring_for_each_cqe(&r->ur, head, cqe) {
		if (cqe->user_data != IO_TAG_CANCEL && (hl->n >= max || !held_room(hl, max)))
			break;
		seen++;
		if (cqe->user_data != IO_TAG_CANCEL)
			slot_done(r, hl, cqe->user_data, cqe);
	}
	io_uring_cq_advance(&r->ur, seen);
}

/*
 * Wait (native state, r->lock not held) until a completion is there, or at
 * most slice_ns: another thread reaping the same ring may take the
 * completion this one was woken for, and then this one looks again.
 */
#define IO_WAIT_SLICE_NS 20000000
static int wait_one(struct kgc_io_ring *r, int64_t slice_ns)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = slice_ns };
	struct io_uring_getevents_arg arg = { .sigmask_sz = _NSIG / 8, .ts = (uintptr_t)&ts };
	int err;

	if (!(r->ur.features & IORING_FEAT_EXT_ARG))
		return io_uring_enter(r->ur.ring_fd, 0, 1, IORING_ENTER_GETEVENTS, NULL);
	err = io_uring_enter2(r->ur.ring_fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			      (sigset_t *)&arg, sizeof(arg));
	return err == -ETIME ? 0 : err;
}

static bool transient(int err)
{
	return err == -EINTR || err == -EAGAIN || err == -EBUSY;
}

/*
 * A ring set up with IORING_SETUP_TASKRUN_FLAG (with COOP_TASKRUN or
 * DEFER_TASKRUN) says when completions wait for this task to enter the
 * kernel; one that overflowed its CQ, when they wait in the kernel's
 * list. Either way a reap that would only look at the CQ (wait_nr 0) must
 * enter the kernel first, or a loop polling it never sees them. Native
 * state, r->lock held.
 */
static void run_task_work(struct kgc_io_ring *r, struct kgc_thread *t)
{
	if (!(IO_URING_READ_ONCE(*r->ur.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)))
		return;
	kgc_enter_native(t);
	(void)io_uring_get_events(&r->ur);	/* an error: the wait reports it */
	kgc_leave_native(t);
}

/*
 * Hold completions in hl until it has target (or max, or nothing is left
 * in the kernel), waiting until end (now_ns() clock; NO_LIMIT). r->lock
 * held on entry and exit, dropped while waiting (native state). 0, -ETIME
 * (end passed first), or io_uring_enter's -errno.
 */
static int hold_locked(struct kgc_io_ring *r, struct kgc_thread *t, struct held *hl, unsigned max,
		       unsigned target, int64_t end)
{
	int err;

	for (;;) {
		int64_t left;

		kgci_io_defer_flush(r, t);	/* reads deferred at prep: done now */
		run_task_work(r, t);
		consume(r, hl, max);
		/* (other threads may reap what this one waits for) */
		if (hl->n >= target || hl->n >= max || !r->kernel)
			return 0;
		err = kgci_io_submit_locked(r, t);	/* what we wait for may still be queued */
		if (err > 0 && io_uring_cq_ready(&r->ur))
			continue;	/* completed inline (the page cache): no wait */
		if (r->inl_head != IO_NONE && hl->n < max && held_room(hl, max))
			continue;	/* another thread's deferred reads, done meanwhile */
		if (err < 0 && !transient(err))
			return err;
		left = end == NO_LIMIT ? IO_WAIT_SLICE_NS : end - now_ns();
		if (left <= 0)
			return -ETIME;
		pthread_mutex_unlock(&r->lock);
		kgc_enter_native(t);
		err = wait_one(r, left < IO_WAIT_SLICE_NS ? left : IO_WAIT_SLICE_NS);
		kgc_leave_native(t);
		kgci_io_lock(r, t);
		if (err < 0 && !transient(err))
			return err;
	}
}

/* Level-triggered eventfd: reset when a reap starts, set again when it
 * leaves completions in the CQ (r->lock held). */
static void eventfd_reset(struct kgc_io_ring *r)
{
	eventfd_t v;

	if (r->efd >= 0)
		(void)eventfd_read(r->efd, &v);	/* nonblocking: EAGAIN when clear */
}

static void eventfd_rearm(struct kgc_io_ring *r)
{
	if (r->efd >= 0 && (io_uring_cq_ready(&r->ur) || r->inl_head != IO_NONE))
		(void)eventfd_write(r->efd, 1);
}

struct reap_req {
	const char *what;
	struct kgc_io_cqe *out;
	unsigned max, wait_nr;
	int64_t timeout_ns;		/* < 0: no limit */
	kgc_io_complete_fn *complete;
	void *arg;
};

/* The held completions to out and to the callback; the callback runs
 * without r->lock (it may use the ring), the slots still held. A
 * completion that names a pool's array passes that array. */
static void deliver(struct kgc_io_ring *r, struct kgc_thread *t, const struct reap_req *q,
		    const struct held *hl)
{
	for (uint32_t k = 0; k < hl->n && q->out; k++)
		q->out[k] = hl->e[k].cqe;
	if (!q->complete || !hl->n)
		return;
	pthread_mutex_unlock(&r->lock);
	for (uint32_t k = 0; k < hl->n; k++) {
		const struct held_ent *e = &hl->e[k];
		struct io_slot *s = &r->slots[e->slot];
		kgc_obj *pa = e->pool ? kgci_io_pool_place(e->pool, e->cqe.flags) : NULL;

		if (pa)
			q->complete(t, &e->cqe, pa, 1, q->arg);
		else if (e->final)
			q->complete(t, &e->cqe, s->arr, __atomic_load_n(&s->narr, RELAXED), q->arg);
		else
			q->complete(t, &e->cqe, NULL, 0, q->arg);
	}
	kgci_io_lock(r, t);
}

static int reap(struct kgc_io_ring *r, struct kgc_thread *t, const struct reap_req *q)
{
	struct held hl;
	int64_t now = now_ns(), end = q->timeout_ns < 0 || q->timeout_ns >= NO_LIMIT - now ? NO_LIMIT :
				       now + q->timeout_ns;
	uint32_t n;
	int err;

	if ((err = kgci_io_begin(r, t, q->what, true)))
		return err;
	held_init(&hl);
	eventfd_reset(r);
	err = hold_locked(r, t, &hl, q->max, q->wait_nr < r->kernel ? q->wait_nr : r->kernel, end);
	deliver(r, t, q, &hl);
	n = hl.n;
	release_held(r, &hl);
	eventfd_rearm(r);
	pthread_mutex_unlock(&r->lock);
	held_fini(&hl);
	if (n || !err)
		return (int)n;
	if (err == -ETIME)
		return IO_FAIL(ETIME, "%s: %s: none of %u completions within %lld ns", q->what, r->name,
			       q->wait_nr, (long long)q->timeout_ns);
	return IO_FAIL(-err, "%s: %s: io_uring_enter: %s", q->what, r->name, strerror(-err));
}

KGC_API int kgc_io_reap(kgc_io_ring *r, kgc_thread *t, struct kgc_io_cqe *out, unsigned max,
		    unsigned wait_nr)
{
	if (!out && max)
		return IO_FAIL(EINVAL, "kgc_io_reap: NULL out, max %u", max);
	return reap(r, t, &(struct reap_req){ "kgc_io_reap", out, max, wait_nr, -1, NULL, NULL });
}

/* w's fields this library knows, and nothing it does not (zero); a size
 * past WAIT_SIZE_MAX is not a newer struct but garbage. */
#define WAIT_SIZE_MAX 4096u
static int wait_check(const struct kgc_io_wait *w)
{
	const char *p = (const char *)w;

	if (!w)
		return IO_FAIL(EINVAL, "kgc_io_reap_wait: NULL wait");
	if (w->size < sizeof(*w) || w->size > WAIT_SIZE_MAX)
		return IO_FAIL(EINVAL, "kgc_io_reap_wait: wait size %u (%zu..%u)", w->size, sizeof(*w),
			       WAIT_SIZE_MAX);
	for (size_t i = offsetof(struct kgc_io_wait, reserved); i < w->size; i++)
		if (p[i])
			return IO_FAIL(EINVAL, "kgc_io_reap_wait: wait byte %zu (reserved) not zero", i);
	return 0;
}

KGC_API int kgc_io_reap_wait(kgc_io_ring *r, kgc_thread *t, struct kgc_io_cqe *out, unsigned max,
			 const struct kgc_io_wait *w)
{
	int err = wait_check(w);

	if (err)
		return err;
	if (!out && !w->complete && max)
		return IO_FAIL(EINVAL, "kgc_io_reap_wait: NULL out and no callback, max %u", max);
	return reap(r, t, &(struct reap_req){ "kgc_io_reap_wait", out, max, w->wait_nr, w->timeout_ns,
					      w->complete, w->arg });
}

int kgci_io_drain_locked(struct kgc_io_ring *r, struct kgc_thread *t)
{
	while (r->kernel) {
		struct held hl;
		int err;

		held_init(&hl);
		err = hold_locked(r, t, &hl, HELD_LOCAL, r->kernel, NO_LIMIT);
		release_held(r, &hl);
		held_fini(&hl);
		if (err < 0)
			return IO_FAIL(-err, "kgc_io_ring_destroy: %s: io_uring_enter: %s", r->name,
				       strerror(-err));
	}
	return 0;
}

KGC_API int kgc_io_ring_eventfd(kgc_io_ring *r, kgc_thread *t)
{
	int err, fd;

	if ((err = kgci_io_begin(r, t, "kgc_io_ring_eventfd", false)))
		return err;
	if ((fd = r->efd) >= 0)
		goto out;
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0) {
		fd = IO_FAIL(errno, "kgc_io_ring_eventfd: %s: eventfd: %s", r->name, strerror(errno));
		goto out;
	}
	kgc_enter_native(t);	/* older kernels quiesce the ring for a registration */
	err = io_uring_register_eventfd(&r->ur, fd);
	kgc_leave_native(t);
	if (err < 0) {
		close(fd);
		fd = IO_FAIL(-err, "kgc_io_ring_eventfd: %s: io_uring_register_eventfd: %s", r->name,
			     strerror(-err));
		goto out;
	}
	r->efd = fd;
	eventfd_rearm(r);	/* completions already there */
out:
	pthread_mutex_unlock(&r->lock);
	return fd;
}

void kgci_io_eventfd_destroy(struct kgc_io_ring *r)
{
	if (r->efd < 0)
		return;
	io_uring_unregister_eventfd(&r->ur);
	close(r->efd);
	r->efd = -1;
}
