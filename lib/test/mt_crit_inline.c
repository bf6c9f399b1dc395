/* SPDX-License-Identifier: MIT */
/*
 * kgc_critical_get/_release are inline in kgc.h (fast path) and exported by
 * libkgc (the same code compiled out of line). Checked here, in pin mode:
 *  - both names (and the kgc__ slow paths) are exported, and the inline and
 *    the exported versions pair up with each other in any combination;
 *  - the fast path's bookkeeping: state, critical stack, pin cache, stats;
 *  - what goes to the slow path still works: a pin cache miss (two
 *    regions), nested and overlapping sections, a section opened in native
 *    state (the thread stays native after the release), misuse;
 *  - a release that finds a collection pending when it makes the thread
 *    managed again releases, then blocks until the collection ends.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

typedef void *(*get_fn)(kgc_thread *, kgc_obj *, size_t *);
typedef int (*rel_fn)(kgc_thread *, kgc_obj *, void *, int);

static void expect_idle(kgc_thread *t)
{
	T_ASSERT_EQ(thread_state(t), TS_MANAGED);
	T_ASSERT_EQ(__atomic_load_n(&t->pub.crit_top, __ATOMIC_RELAXED), 0);
	T_ASSERT_EQ(t->pub.crit_open, 0);
	T_ASSERT_EQ(__atomic_load_n(&t->pub.pc_count, __ATOMIC_RELAXED), 0);
}

/* ---- a collection pending at the release (poll word set by another thread) */
struct pending {
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj *ref;
	void *elems;
	int rc;
};

static void *releaser(void *arg)
{
	struct pending *p = arg;

	p->rc = kgc_critical_release(p->t, p->ref, p->elems, KGC_CRITICAL_COMMIT);
	return NULL;
}

static void release_with_gc_pending(kgc_heap *h, kgc_thread *t, kgc_obj *ref)
{
	struct pending p = { .h = h, .t = t, .ref = ref };
	pthread_t th;
	size_t len;

	p.elems = kgc_critical_get(t, ref, &len);
	T_ASSERT(p.elems);
	T_ASSERT_EQ(thread_state(t), TS_NATIVE);
	/* what a collection does first: it now waits for every managed thread */
	atomic_store(&h->sp.poll_word, 1);
	T_ASSERT_EQ(pthread_create(&th, NULL, releaser, &p), 0);
	for (time_t t0 = time(NULL); __atomic_load_n(&t->pub.state, __ATOMIC_SEQ_CST) != TS_BLOCKED;) {
		if (time(NULL) - t0 > 30)
			T_FAIL("the release did not block while a collection was pending");
		sched_yield();
	}
	/* released before blocking: nothing of the section is left */
	T_ASSERT_EQ(__atomic_load_n(&t->pub.crit_top, __ATOMIC_ACQUIRE), 0);
	T_ASSERT(!__atomic_load_n(&t->crit[0], __ATOMIC_ACQUIRE));
	T_ASSERT_EQ(__atomic_load_n(&t->pub.pc_count, __ATOMIC_ACQUIRE), 0);
	/* the collection ends */
	pthread_mutex_lock(&h->sp.lock);
	atomic_store(&h->sp.poll_word, 0);
	pthread_cond_broadcast(&h->sp.cond);
	pthread_mutex_unlock(&h->sp.lock);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(p.rc, 0);
	expect_idle(t);
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };
	struct kgc_frame f;
	get_fn xget = (get_fn)dlsym(RTLD_DEFAULT, "kgc_critical_get");
	rel_fn xrel = (rel_fn)dlsym(RTLD_DEFAULT, "kgc_critical_release");
	uint64_t gets0;
	uint32_t ra, rb;
	size_t len = 0;
	void *p, *q;

	T_ASSERT(xget && xrel);
	T_ASSERT(dlsym(RTLD_DEFAULT, "kgc__critical_get_slow"));
	T_ASSERT(dlsym(RTLD_DEFAULT, "kgc__critical_release_slow"));

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64 << 20;
	o.region_size = 1 << 20;
	o.pin_mode = KGC_PIN_MODE_PIN;
	o.check = 0;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT(t->pub.crit_fast);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100);
	do {	/* a second array in another region */
		slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 1000);
		T_ASSERT(slots[1]);
	} while (region_index(h, slots[1]) == region_index(h, slots[0]));
	ra = region_index(h, slots[0]);
	rb = region_index(h, slots[1]);
	slots[2] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 4);
	gets0 = t_stats(h).critical_gets;

	/* the fast path's bookkeeping (the first get switches the pin cache) */
	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(p == kgc_array_data(slots[0]) && len == 100);
	T_ASSERT_EQ(thread_state(t), TS_NATIVE);
	T_ASSERT_EQ(t->pub.crit_top, 1);
	T_ASSERT_EQ(t->pub.crit_open, 1);
	T_ASSERT(t->crit[0] == slots[0]);
	T_ASSERT_EQ(t->pub.pc_region, ra);
	T_ASSERT_EQ(t->pub.pc_count, 1);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, KGC_CRITICAL_COMMIT), 0);
	expect_idle(t);
	T_ASSERT(!t->crit[0]);

	/* inline and exported versions in every combination */
	for (int i = 0; i < 4; i++) {
		p = (i & 1 ? xget : kgc_critical_get)(t, &slots[0], &len);
		T_ASSERT(p == kgc_array_data(slots[0]));
		T_ASSERT_EQ(t->pub.pc_count, 1);
		T_ASSERT_EQ((i & 2 ? xrel : kgc_critical_release)(t, &slots[0], p, 0), 0);
		expect_idle(t);
	}

	/* pin cache miss: the other region, alternately */
	for (int i = 0; i < 4; i++) {
		p = kgc_critical_get(t, &slots[i & 1], &len);
		T_ASSERT(p == kgc_array_data(slots[i & 1]));
		T_ASSERT_EQ(t->pub.pc_region, i & 1 ? rb : ra);
		T_ASSERT_EQ(kgc_critical_release(t, &slots[i & 1], p, 0), 0);
		expect_idle(t);
	}
	T_ASSERT_EQ(atomic_load(region_pins(h, ra)) + atomic_load(region_pins(h, rb)), 0);

	/* nested, released innermost first and outermost first */
	for (int order = 0; order < 2; order++) {
		p = kgc_critical_get(t, &slots[0], &len);
		q = kgc_critical_get(t, &slots[1], &len);	/* from native: slow path */
		T_ASSERT(p && q && len == 1000);
		T_ASSERT_EQ(t->pub.crit_open, 2);
		if (order) {
			T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), 0);
			T_ASSERT_EQ(thread_state(t), TS_NATIVE);
			T_ASSERT_EQ(kgc_critical_release(t, &slots[1], q, 0), 0);
		} else {
			T_ASSERT_EQ(kgc_critical_release(t, &slots[1], q, 0), 0);
			T_ASSERT_EQ(thread_state(t), TS_NATIVE);
			T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), 0);
		}
		expect_idle(t);
	}
	T_ASSERT_EQ(atomic_load(region_pins(h, ra)) + atomic_load(region_pins(h, rb)), 0);

	/* opened in native state: the thread stays native after the release */
	kgc_enter_native(t);
	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(p);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), 0);
	T_ASSERT_EQ(thread_state(t), TS_NATIVE);
	kgc_leave_native(t);
	expect_idle(t);

	/* misuse still fails with the slow path's messages */
	T_ASSERT(!kgc_critical_get(t, &slots[2], &len));
	T_ASSERT(strstr(kgc_last_error(), "not a primitive array"));
	expect_idle(t);
	p = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], (char *)p + 4, 0), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "not the one critical_get returned"));
	T_ASSERT_EQ(kgc_critical_release(t, &slots[1], p, 0), -EINVAL);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), 0);
	expect_idle(t);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, 0), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "release without a matching critical_get"));

	release_with_gc_pending(h, t, &slots[0]);

	/* every get counted: 1 + 4 + 4 + 2 * 2 + 1 + 1 + 1 */
	T_ASSERT_EQ(t_stats(h).critical_gets - gets0, 16);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("ok\n");
	return 0;
}
