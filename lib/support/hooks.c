/* SPDX-License-Identifier: MIT */
/*
 * hooks.c - the runtime's hooks (kgc_hook_set): pause start and end, the
 * cycle's steps taken in pauses, an allocation about to fail, a fatal error.
 *
 * Pause hooks (KGC_HOOK_PAUSE_START/_END, KGC_HOOK_PHASE) run inside the
 * pause on the collecting thread, h->lock held, the world stopped: they may
 * call nothing of kgc. A thread-local names the hook running; in checked
 * mode every kgc call that checks its thread (and kgc_stats_get) aborts
 * with a message naming the call and the hook. The allocation-failure hook
 * runs on the allocating thread in managed state, outside any pause, and
 * may call anything; the fatal hooks run just before abort().
 *
 * Fatal hooks are process-wide (kgci_fatal knows no heap): every heap's
 * runs, with that heap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

struct hook {
	kgc_hook_fn *fn;
	void *arg;
};

struct hooks {
	struct hook ev[KGC_HOOK_FATAL + 1];
};

enum { FATAL_MAX = 16 };
static struct { kgc_heap *h; struct hook hk; } fatal_hooks[FATAL_MAX];
static pthread_mutex_t fatal_lock = PTHREAD_MUTEX_INITIALIZER;

__thread const char *kgci_in_pause_hook;	/* the pause hook running on this thread */

static const char *event_name(unsigned ev)
{
	switch (ev) {
	case KGC_HOOK_PAUSE_START: return "KGC_HOOK_PAUSE_START";
	case KGC_HOOK_PAUSE_END: return "KGC_HOOK_PAUSE_END";
	case KGC_HOOK_PHASE: return "KGC_HOOK_PHASE";
	case KGC_HOOK_ALLOC_FAIL: return "KGC_HOOK_ALLOC_FAIL";
	default: return "KGC_HOOK_FATAL";
	}
}

/* 0, or -ENOSPC: FATAL_MAX heaps have a fatal hook already */
static int fatal_set(kgc_heap *h, kgc_hook_fn *fn, void *arg)
{
	int free_i = -1;

	pthread_mutex_lock(&fatal_lock);
	for (int i = 0; i < FATAL_MAX; i++) {
		if (fatal_hooks[i].h == h) {
			free_i = i;
			break;
		}
		if (!fatal_hooks[i].h && free_i < 0)
			free_i = i;
	}
	if (free_i >= 0) {
		__atomic_store_n(&fatal_hooks[free_i].hk.arg, arg, __ATOMIC_RELAXED);
		__atomic_store_n(&fatal_hooks[free_i].hk.fn, fn, __ATOMIC_RELAXED);
		__atomic_store_n(&fatal_hooks[free_i].h, fn ? h : NULL, __ATOMIC_RELEASE);
		if (fn)
			__atomic_store_n(&kgci_fatal_before_abort, kgci_hook_fatal, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&fatal_lock);
	if (free_i < 0 && fn) {
		kgci_err_set(ENOSPC, "kgc_hook_set: %d heaps have a fatal hook already", FATAL_MAX);
		return -ENOSPC;
	}
	return 0;
}

KGC_API int kgc_hook_set(kgc_heap *h, unsigned event, kgc_hook_fn *fn, void *arg)
{
	if (!h || event < KGC_HOOK_PAUSE_START || event > KGC_HOOK_FATAL) {
		kgci_err_set(EINVAL, "kgc_hook_set: %s", h ? "unknown event" : "NULL heap");
		return -EINVAL;
	}
	if (kgci_hook_forbidden(h, "kgc_hook_set"))
		return -EPERM;
	if (event == KGC_HOOK_FATAL)
		return fatal_set(h, fn, arg);
	pthread_mutex_lock(&h->lock);
	if (!h->hooks && !(h->hooks = calloc(1, sizeof(*h->hooks)))) {
		pthread_mutex_unlock(&h->lock);
		kgci_err_set(ENOMEM, "kgc_hook_set: out of memory");
		return -ENOMEM;
	}
	h->hooks->ev[event].fn = fn;
	h->hooks->ev[event].arg = arg;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

/* A kgc call (what) on a thread running a pause hook: true (plain mode: an
 * error set, the caller refuses), checked mode aborts. */
bool kgci_hook_forbidden_slow(struct kgc_heap *h, const char *what)
{
	if (h && h->opt.check)
		kgci_fatal("%s called from a pause hook (%s): pause hooks run with the world stopped and may "
			   "call nothing of kgc", what, kgci_in_pause_hook);
	kgci_err_set(EPERM, "%s called from a pause hook (%s)", what, kgci_in_pause_hook);
	return true;
}

/* In a pause, h->lock held: the pause hook of event, if any. */
void kgci_hook_pause(struct kgc_heap *h, unsigned event, int kind, uint64_t ns, const char *what)
{
	struct kgc_hook_info in = { 0 };
	struct hook hk;

	if (!h->hooks || !(hk = h->hooks->ev[event]).fn)
		return;
	in.size = sizeof(in);
	in.event = event;
	in.kind = kind;
	in.gc_id = h->gc_id;
	in.duration_ns = ns;
	in.name = what;
	kgci_in_pause_hook = event_name(event);
	hk.fn(h, &in, hk.arg);
	kgci_in_pause_hook = NULL;
}

/* The allocating thread, managed, outside a pause: true if the hook asks
 * for a retry of this allocation (attempt 1..KGC_HOOK_MAX_RETRIES). */
bool kgci_hook_alloc_fail(struct kgc_thread *t, size_t bytes, unsigned attempt)
{
	struct kgc_heap *h = t->heap;
	struct kgc_hook_info in = { 0 };
	struct hook hk = { 0 };

	if (attempt > KGC_HOOK_MAX_RETRIES)
		return false;
	pthread_mutex_lock(&h->lock);
	if (h->hooks)
		hk = h->hooks->ev[KGC_HOOK_ALLOC_FAIL];
	pthread_mutex_unlock(&h->lock);
	if (!hk.fn)
		return false;
	in.size = sizeof(in);
	in.event = KGC_HOOK_ALLOC_FAIL;
	in.attempt = attempt;
	in.bytes = bytes;
	in.gc_id = h->gc_id;
	return hk.fn(h, &in, hk.arg) == KGC_HOOK_RETRY;
}

/* kgci_fatal, before abort(): every heap's fatal hook, once per thread. */
void kgci_hook_fatal(const char *msg)
{
	static __thread bool running;

	if (running)
		return;		/* a fatal error inside a fatal hook */
	running = true;
	kgci_in_pause_hook = NULL;
	for (int i = 0; i < FATAL_MAX; i++) {
		kgc_heap *h = __atomic_load_n(&fatal_hooks[i].h, __ATOMIC_ACQUIRE);
		kgc_hook_fn *fn = __atomic_load_n(&fatal_hooks[i].hk.fn, __ATOMIC_RELAXED);
		struct kgc_hook_info in = { 0 };

		if (!h || !fn)
			continue;
		in.size = sizeof(in);
		in.event = KGC_HOOK_FATAL;
		in.message = msg;
		fn(h, &in, __atomic_load_n(&fatal_hooks[i].hk.arg, __ATOMIC_RELAXED));
	}
}

/* Heap destroy: its hooks go. */
void kgci_hooks_destroy(struct kgc_heap *h)
{
	fatal_set(h, NULL, NULL);
	free(h->hooks);
	h->hooks = NULL;
}
