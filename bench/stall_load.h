/* SPDX-License-Identifier: MIT */
/*
 * stall_load.h - the allocating threads of kgc's stall benches (pinbench.c,
 * jnibench.c; StallLoad.java is their HotSpot side). Each keeps its share
 * of the live set - live_lists_per_thread lists of LIST_LEN NODE objects
 * (a reference at F_NEXT, a u64 at F_VAL) in a table; one new list in
 * REPLACE_EVERY replaces a random entry - then times batches of BATCH
 * allocations into lats[id] while timing is set, until stop. The program
 * sets heap, NODE and live_lists_per_thread before it starts them
 * (pthread_create(..., alloc_main, (void *)id)). Include once, after
 * common.h and (with HAVE_KGC) <kgc.h>; without HAVE_KGC only the
 * workload's constants are defined.
 */
#ifndef KGC_BENCH_STALL_LOAD_H
#define KGC_BENCH_STALL_LOAD_H

#include <stdatomic.h>

enum { LIST_LEN = 16, REPLACE_EVERY = 64, BATCH = 1000, NALLOC = 2 };

#ifdef HAVE_KGC
enum { F_NEXT = KGC_HEADER_SIZE, F_VAL = KGC_HEADER_SIZE + 8 };

static kgc_heap *heap;
static kgc_type_id NODE;
static atomic_int stop;
static atomic_int filled;	/* allocators whose live set is built */
static atomic_int timing;	/* allocators record batch latencies */
static size_t live_lists_per_thread;

struct lat {
	uint64_t *v;
	size_t n, cap;
};
static struct lat lats[NALLOC];

static void lat_add(struct lat *l, uint64_t x)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1 << 16;
		l->v = realloc(l->v, l->cap * sizeof(uint64_t));
		if (!l->v)
			die("oom");
	}
	l->v[l->n++] = x;
}

static kgc_thread *attach(const char *name)
{
	kgc_thread *t;

	if (kgc_thread_attach(heap, name, &t))
		die("attach: %s", kgc_last_error());
	return t;
}

struct allocator {
	kgc_thread *t;
	kgc_obj slots[2];	/* 0: table, 1: list under construction */
	unsigned long long rng;
	uint64_t seq;
	int inlist;
};

static inline void alloc_one(struct allocator *a)
{
	kgc_obj n = kgc_alloc(a->t, NODE);

	if (!n)
		die("alloc: %s", kgc_last_error());
	kgc_set_ref(a->t, n, F_NEXT, a->slots[1]);
	KGC_FIELD(n, F_VAL, uint64_t) = a->seq;
	a->slots[1] = n;
	if (++a->inlist < LIST_LEN)
		return;
	a->inlist = 0;
	if (a->seq < live_lists_per_thread) {
		kgc_array_set_ref(a->t, a->slots[0], a->seq, a->slots[1]);
	} else {
		a->rng = a->rng * 6364136223846793005ull + 1442695040888963407ull;
		if ((a->rng >> 33) % REPLACE_EVERY == 0)
			kgc_array_set_ref(a->t, a->slots[0], (a->rng >> 20) % live_lists_per_thread,
					  a->slots[1]);
	}
	a->seq++;
	a->slots[1] = NULL;
}

static void *alloc_main(void *arg)
{
	long id = (long)arg;
	struct allocator a = { .rng = 0x9e37 + (unsigned long long)id };
	struct kgc_frame fr;

	a.t = attach("alloc");
	kgc_frame_push(a.t, &fr, a.slots, 2, NULL);
	a.slots[0] = kgc_alloc_array(a.t, KGC_TYPE_REF_ARRAY, live_lists_per_thread);
	if (!a.slots[0])
		die("table: %s", kgc_last_error());
	while (a.seq < live_lists_per_thread)
		alloc_one(&a);
	atomic_fetch_add(&filled, 1);
	while (!atomic_load(&stop)) {
		/* only batches that start inside the timed window count (the one
		 * running across an untimed warm-up full GC does not) */
		int timed = atomic_load_explicit(&timing, memory_order_relaxed);
		uint64_t t0 = now_ns();

		for (int i = 0; i < BATCH; i++)
			alloc_one(&a);
		if (timed && atomic_load_explicit(&timing, memory_order_relaxed))
			lat_add(&lats[id], now_ns() - t0);
	}
	kgc_frame_pop(a.t, &fr);
	kgc_thread_detach(a.t);
	return NULL;
}
#endif /* HAVE_KGC */

#endif
