/* SPDX-License-Identifier: MIT */
/*
 * Reference queues: a weak reference or an ephemeron attached to a queue is
 * enqueued exactly when a collection clears it - in young, full and
 * concurrent (remark) collections. A seeded random subset of N referents
 * stays rooted; after the collection (and kgc_cleaners_drain: enqueueing
 * is the kgc-cleaner thread's, after the pause) the queue holds one entry
 * per dead referent - right kind, right tag, its cell reads cleared - and
 * none for a live one; before the collection it is empty.
 */
#include <stdbool.h>
#include "tgc.h"

enum { N = 64 };

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_thread *t;
static unsigned long long seed;

static void heap_up(unsigned ihop, int ballast)
{
	struct kgc_options o;

	t_opts_small(&o, 96, 4);
	o.tenure_threshold = 1;
	o.ihop_percent = ihop;
	o.verify = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	if (!ballast)
		return;
	t_ballast(t, NODE);
}

static void heap_down(void)
{
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

static void collect_kind(int kind)
{
	t_collect_kind(t, h, NODE, kind);
}

static void scenario(int kind, const char *name)
{
	kgc_obj roots[N] = { 0 };
	struct kgc_frame f;
	void *cell[N];
	bool live[N], seen[N] = { 0 };
	kgc_refqueue *q;
	struct kgc_ref_event ev;
	int ndead = 0, got = 0;

	T_ASSERT_EQ(kgc_refqueue_create(h, &q), 0);
	kgc_frame_push(t, &f, roots, N, NULL);
	for (int i = 0; i < N; i++) {
		roots[i] = kgc_alloc(t, NODE);
		if (i % 2) {
			cell[i] = kgc_ephemeron_new(t, roots[i], kgc_alloc(t, NODE));
			T_ASSERT(cell[i]);
			T_ASSERT_EQ(kgc_ephemeron_set_queue(t, cell[i], q, 1000 + i), 0);
		} else {
			cell[i] = kgc_weak_new(t, roots[i]);
			T_ASSERT(cell[i]);
			T_ASSERT_EQ(kgc_weak_set_queue(t, cell[i], q, 1000 + i), 0);
		}
		live[i] = t_rand(&seed) & 1;
	}
	if (kind < 0)	/* the cycle decides about old referents */
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(kgc_refqueue_poll(q, &ev, sizeof(ev)), -EAGAIN);	/* all alive so far */
	for (int i = 0; i < N; i++)
		if (!live[i]) {
			roots[i] = NULL;
			ndead++;
		}
	collect_kind(kind);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	while (kgc_refqueue_poll(q, &ev, sizeof(ev)) == 0) {
		int i = (int)ev.tag - 1000;
		kgc_obj k, v;

		T_ASSERT(i >= 0 && i < N);
		if (live[i] || seen[i])
			T_FAIL("%s: entry for %s cell %d (tag %llu)", name, live[i] ? "live" : "twice-seen", i,
			       (unsigned long long)ev.tag);
		seen[i] = true;
		got++;
		T_ASSERT(ev.ref == cell[i]);
		T_ASSERT_EQ(ev.size, sizeof(ev));
		if (i % 2) {
			T_ASSERT_EQ(ev.kind, KGC_REF_EPHEMERON);
			T_ASSERT_EQ(kgc_ephemeron_get(t, cell[i], &k, &v), -ENOENT);
		} else {
			T_ASSERT_EQ(ev.kind, KGC_REF_WEAK);
			T_ASSERT(kgc_weak_get(t, cell[i]) == NULL);
		}
	}
	if (got != ndead)
		T_FAIL("%s: %d entries, %d referents died", name, got, ndead);
	for (int i = 0; i < N; i++)
		if (live[i])
			T_ASSERT(i % 2 || kgc_weak_get(t, cell[i]) == roots[i]);
	printf("%s: %d of %d cleared and enqueued, once each\n", name, got, N);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_refqueue_destroy(q), 0);
	for (int i = 0; i < N; i++) {
		if (i % 2)
			kgc_ephemeron_free(t, cell[i]);
		else
			kgc_weak_free(t, cell[i]);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	heap_up(100, 0);
	scenario(KGC_GC_YOUNG, "young");
	scenario(KGC_GC_FULL, "full");
	heap_down();
	heap_up(1, 1);
	scenario(-1, "concurrent");
	heap_down();
	return 0;
}
