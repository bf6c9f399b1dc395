/* SPDX-License-Identifier: MIT */
/*
 * Two GC workers share the copy of one binary tree reached from one root.
 * Its depth-first stack never holds more than about twice the tree's depth
 * entries, so a worker must hand over part of a short stack (the entries
 * nearest the root: the largest subtrees) when the other one is idle; a
 * hook slows copying down so the other worker is idle while there is work.
 * The tree keeps its shape and values.
 */
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define DEPTH 14

static kgc_type_id node;

static void slow(void)
{
	struct timespec ts = { 0, 100 * 1000 };	/* 512 calls: ~50 ms of copying */

	nanosleep(&ts, NULL);
}

/* A complete tree in *slot (a root); node values are heap-order indices. */
static void build(kgc_thread *t, kgc_obj *slot, kgc_obj *tmp, int64_t idx, int depth)
{
	*slot = kgc_alloc(t, node);
	T_ASSERT(*slot);
	KGC_FIELD(*slot, N_VALUE, int64_t) = idx;
	if (!depth)
		return;
	build(t, tmp, tmp + 1, 2 * idx, depth - 1);
	kgc_set_ref(t, *slot, N_LEFT, *tmp);
	build(t, tmp, tmp + 1, 2 * idx + 1, depth - 1);
	kgc_set_ref(t, *slot, N_RIGHT, *tmp);
}

static size_t check(kgc_obj n, int64_t idx, int depth)
{
	T_ASSERT(n);
	T_ASSERT_EQ(KGC_FIELD(n, N_VALUE, int64_t), idx);
	if (!depth) {
		T_ASSERT(!kgc_get_ref(n, N_LEFT) && !kgc_get_ref(n, N_RIGHT));
		return 1;
	}
	return 1 + check(kgc_get_ref(n, N_LEFT), 2 * idx, depth - 1) +
	       check(kgc_get_ref(n, N_RIGHT), 2 * idx + 1, depth - 1);
}

/* One tree in a fresh heap, one young collection; true if the second
 * worker copied some of it. */
static bool attempt(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[DEPTH + 2] = { 0 };
	struct kgc_frame f;
	size_t copied, max;

	t_opts_small(&o, 64, 16);
	o.gc_threads = 2;
	o.tenure_threshold = 4;	/* copied to survivor space */
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, DEPTH + 2, NULL);
	build(t, &slots[0], &slots[1], 1, DEPTH);
	T_ASSERT_EQ(t_stats(h).young_gcs, 0);

	kgci_young_test_drain_hook = slow;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	kgci_young_test_drain_hook = NULL;

	copied = h->last_young.copied;
	max = h->last_young.copied_max;
	printf("copied %zuK, at most %zuK by one worker\n", copied >> 10, max >> 10);
	T_ASSERT_EQ(copied, ((size_t)2 << DEPTH) * 32 - 32);
	T_ASSERT_EQ(check(slots[0], 1, DEPTH), ((size_t)2 << DEPTH) - 1);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return max < copied;
}

/* The other worker copies some: on a loaded host (ASan, load 10 on 2
 * CPUs) it may not get a CPU during one pause, so up to 5 tries. */
int main(void)
{
	for (int i = 0; i < 5; i++)
		if (attempt())
			return 0;
	T_ASSERT(!"the second worker copied nothing in 5 pauses");
	return 1;
}
