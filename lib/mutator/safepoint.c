/* SPDX-License-Identifier: MIT */
/*
 * safepoint.c - stopping the world for a collection (collect.c runs it),
 * GCLocker mode, and a mutator's side of it (the poll, blocking at one).
 *
 * Any thread may request a collection (there is no VM thread). The requester
 * becomes GC-safe itself, takes gc_lock, raises the poll word, waits until
 * every other thread is in native or blocked state, collects, and resumes.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "gc_internal.h"


static void backoff(unsigned *n)
{
	if (++*n < 64) {
		__builtin_ia32_pause();
	} else if (*n < 256) {
		sched_yield();
	} else {
		struct timespec ts = { 0, 20000 };

		nanosleep(&ts, NULL);
	}
}

/* A safepoint has waited long for thread t (h->lock held): say so on stderr,
 * whatever KGC_LOG says - a hang with no word is the worst way to learn of a
 * blocking call made in managed state. t runs: its frames pointer is read
 * atomically (its stores are relaxed atomics), and only its name, set at
 * attach, otherwise. */
static void warn_late(struct kgc_heap *h, struct kgc_thread *t, uint64_t waited_ns)
{
	fprintf(stderr, "kgc: warning: a safepoint (GC(%llu)) has waited %.1f s for thread '%s', "
		"which is managed%s and has not polled: is it blocked in a call made without "
		"kgc_enter_native / kgc_do_blocking?\n", (unsigned long long)h->gc_id, waited_ns / 1e9,
		t->name, __atomic_load_n(&t->frames, __ATOMIC_RELAXED) ? " with frames pushed" : "");
}

static void stop_world(struct kgc_heap *h, struct kgc_thread *self)
{
	unsigned n = 0;
	bool all;
	uint64_t t0 = kgci_now_ns(), warned = 0;
	uint64_t warn_ns = (uint64_t)kgci_policy_safepoint_warn_ms(h) * 1000000ull;
	char last[sizeof(self->name)] = "";	/* a copy: the thread may detach before the log line */

	atomic_store_explicit(&h->sp.poll_word, 1, memory_order_seq_cst);
	kgci_os_membarrier(h);
	do {
		all = true;
		pthread_mutex_lock(&h->lock);
		for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
			if (t != self && __atomic_load_n(&t->pub.state, __ATOMIC_SEQ_CST) == TS_MANAGED) {
				all = false;
				snprintf(last, sizeof(last), "%s", t->name);
				if (warn_ns && kgci_now_ns() - t0 > (warned ? 2 * warned : warn_ns)) {
					warned = kgci_now_ns() - t0;
					warn_late(h, t, warned);
				}
				break;
			}
		pthread_mutex_unlock(&h->lock);
		if (!all)
			backoff(&n);
	} while (!all);
	kgci_log_line(h, LOG_SAFEPOINT, "safepoint: all threads stopped after %.3fms%s%s%s",
		 (kgci_now_ns() - t0) / 1e6, *last ? " (last: '" : "", last, *last ? "')" : "");
}

static void resume_world(struct kgc_heap *h)
{
	pthread_mutex_lock(&h->sp.lock);
	atomic_store_explicit(&h->sp.poll_word, 0, memory_order_release);
	pthread_cond_broadcast(&h->sp.cond);
	pthread_mutex_unlock(&h->sp.lock);
}

static void gclocker_wait(struct kgc_heap *h)
{
	uint64_t t0;

	atomic_store_explicit(&h->sp.locker_needs_gc, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&h->sp.locker_count, memory_order_seq_cst))
		return;
	t0 = kgci_now_ns();
	pthread_mutex_lock(&h->sp.lock);
	while (atomic_load_explicit(&h->sp.locker_count, memory_order_seq_cst)) {
		struct timespec ts;

		timespec_after_ms(&ts, 10);
		pthread_cond_timedwait(&h->sp.locker_cond, &h->sp.lock, &ts);
	}
	pthread_mutex_unlock(&h->sp.lock);
	pthread_mutex_lock(&h->lock);
	h->st.gclocker_stalls++;
	h->st.gclocker_stall_ns += kgci_now_ns() - t0;
	pthread_mutex_unlock(&h->lock);
	kgci_log_line(h, LOG_PIN, "GCLocker: collection stalled %.3fms for critical sections",
		 (kgci_now_ns() - t0) / 1e6);
}

static void gclocker_done(struct kgc_heap *h)
{
	pthread_mutex_lock(&h->sp.lock);
	atomic_store_explicit(&h->sp.locker_needs_gc, 0, memory_order_seq_cst);
	pthread_cond_broadcast(&h->sp.locker_cond);
	pthread_mutex_unlock(&h->sp.lock);
}

/*
 * Collect from thread t (managed). epoch: the gc_count the caller saw when it
 * decided it needs a collection (UINT64_MAX = always collect). With alloc_size,
 * the allocation is retried inside the safepoint (after a young collection,
 * then after a full one) and its result returned in *out. Returns 1 if this
 * call collected, 0 if another thread collected in the meantime.
 */
/* The world stopped for t (gc_lock held): h->lock taken, as a collection has it. */
static void world_stop(struct kgc_heap *h, struct kgc_thread *t)
{
	if (h->opt.pin_mode == KGC_PIN_MODE_GCLOCKER)
		gclocker_wait(h);
	stop_world(h, t);
	pthread_mutex_lock(&h->lock);
}

static void world_resume(struct kgc_heap *h)
{
	pthread_mutex_unlock(&h->lock);
	if (h->opt.pin_mode == KGC_PIN_MODE_GCLOCKER)
		gclocker_done(h);
	resume_world(h);
}

int kgci_sp_collect_alloc(struct kgc_thread *t, int kind, int reason, uint64_t epoch,
		     size_t alloc_size, char **out, size_t *zero)
{
	struct kgc_heap *h = t->heap;
	int did = 0;

	kgci_pin_flush_cache(t);
	thread_set_native(t, TS_BLOCKED);
	pthread_mutex_lock(&h->gc_lock);
	if (epoch == UINT64_MAX || atomic_load(&h->sp.gc_count) == epoch) {
		world_stop(h, t);
		uint64_t full_before = h->st.full_gcs;

		h->sp.collect(h, kind, reason);
		if (alloc_size) {
			bool full_ran = h->st.full_gcs != full_before, reserve_tried = false;
			enum alloc_retry next;

			*out = kgci_alloc_locked(t, alloc_size, zero);
			/* before a full collection: young ones with no cycle running, which
			 * free dead humongous objects and relocate those in a humongous
			 * allocation's way (at most two: the second has the first's room) */
			for (int k = 0; k < 2 && !*out && !full_ran &&
			     kgci_policy_alloc_relocate(h, alloc_size, &h->sp.reloc_regions); k++) {
				h->sp.collect(h, KGC_GC_YOUNG, GCR_RELOCATE);
				h->sp.reloc_regions = 0;
				full_ran = h->st.full_gcs != full_before;
				*out = kgci_alloc_locked(t, alloc_size, zero);
				if (k || *out)
					kgci_policy_hum_retry_done(h, *out != NULL);
			}
			/* not enough: the policy says what to try next (a full collection, the reserve) */
			while (!*out && (next = kgci_policy_alloc_retry(h, full_ran, reserve_tried)) != ALLOC_RETRY_NONE) {
				if (next == ALLOC_RETRY_FULL) {
					h->sp.collect(h, KGC_GC_FULL, reason);
					full_ran = true;
					*out = kgci_alloc_locked(t, alloc_size, zero);
				} else {
					h->alloc.eden_use_reserve = true;
					*out = kgci_alloc_locked(t, alloc_size, zero);
					h->alloc.eden_use_reserve = false;
					reserve_tried = true;
				}
			}
			if (*out) {
				/* clear it now and keep the heap parsable: another collection may
				 * run before this thread is back (then the caller retries) */
				memset(*out, 0, *zero);
				kgci_obj_fill(*out, alloc_size);
				*zero = alloc_size < 16 ? alloc_size : 16;	/* the filler header */
			}
		}
		atomic_fetch_add(&h->sp.gc_count, 1);
		epoch = atomic_load(&h->sp.gc_count);
		world_resume(h);
		did = 1;
	}
	pthread_mutex_unlock(&h->gc_lock);
	thread_to_managed(t);
	if (did && alloc_size && *out && atomic_load(&h->sp.gc_count) != epoch) {
		*out = NULL;	/* another collection ran meanwhile: the space is gone, retry */
		did = 2;
	}
	return did;
}

int kgci_sp_collect(struct kgc_thread *t, int kind, int reason, uint64_t epoch)
{
	return kgci_sp_collect_alloc(t, kind, reason, epoch, 0, NULL, NULL);
}

/* fn(h, ctx) at a safepoint of its own, as a collection runs (h->lock held,
 * every other thread stopped; fn may run one with h->sp.collect). Counts
 * as a collection for the allocation retry's epoch. */
void kgci_sp_run(struct kgc_thread *t, void (*fn)(struct kgc_heap *h, void *ctx), void *ctx)
{
	struct kgc_heap *h = t->heap;

	kgci_pin_flush_cache(t);
	thread_set_native(t, TS_BLOCKED);
	pthread_mutex_lock(&h->gc_lock);
	world_stop(h, t);
	fn(h, ctx);
	atomic_fetch_add(&h->sp.gc_count, 1);
	world_resume(h);
	pthread_mutex_unlock(&h->gc_lock);
	thread_to_managed(t);
}

/*
 * Fairness for explicit collections: threads the last collection stopped run
 * before this one starts. A thread calling kgc_collect back to back would
 * otherwise starve them: each wakes up to find the next collection already
 * started (seen under TSan: a thread made no progress for minutes). Waits in
 * native state (never holding up another collection) until no other thread
 * is blocked, at most FAIR_WAIT_NS.
 */
#define FAIR_WAIT_NS (2 * 1000000ull)

static void let_blocked_run(struct kgc_thread *self)
{
	struct kgc_heap *h = self->heap;
	uint64_t t0 = kgci_now_ns();
	unsigned n = 0;

	thread_set_native(self, TS_NATIVE);
	for (;;) {
		bool blocked = false;

		pthread_mutex_lock(&h->lock);
		for (struct kgc_thread *t = h->thr.threads; t && !blocked; t = t->next)
			blocked = t != self && thread_state(t) == TS_BLOCKED;
		pthread_mutex_unlock(&h->lock);
		if (!blocked || kgci_now_ns() - t0 > FAIR_WAIT_NS)
			break;
		backoff(&n);
	}
	thread_to_managed(self);
}

KGC_API int kgc_collect(kgc_thread *t, int kind)
{
	if (!kgci_thread_check_managed(t, "kgc_collect"))
		return -EPERM;
	if (kind != KGC_GC_YOUNG && kind != KGC_GC_FULL) {
		kgci_err_set(EINVAL, "kgc_collect: bad kind %d", kind);
		return -EINVAL;
	}
	let_blocked_run(t);
	kgci_sp_collect(t, kind, GCR_EXPLICIT, UINT64_MAX);
	return 0;
}

/* Safepoint: the thread is managed and a collection is pending. */
void kgci_sp_block(struct kgc_thread *t)
{
	kgci_pin_flush_cache(t);
	thread_set_native(t, TS_BLOCKED);
	kgci_thread_wait_gc_end(t->heap);
	thread_to_managed(t);
}

KGC_API void kgc__safepoint_slow(kgc_thread *t)
{
	kgci_sp_block(t);
}

KGC_API void kgc_safepoint_poll(kgc_thread *t)
{
	kgci_thread_check(t, "kgc_safepoint_poll");
	if (unlikely(atomic_load_explicit(&t->heap->sp.poll_word, memory_order_acquire))) {
		if (thread_state(t) != TS_MANAGED) {
			kgci_thread_check_managed(t, "kgc_safepoint_poll");
			return;
		}
		kgci_sp_block(t);
	}
}
