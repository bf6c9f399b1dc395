/* SPDX-License-Identifier: MIT */
/*
 * kgc_array_get_region / kgc_array_set_region while collections run (run
 * under TSan too): a copier thread keeps NARR eden arrays of int, long,
 * char and double (each larger than the 64 KiB piece, so one copy has
 * several safepoints in it) and a malloc'd shadow of each; it sets and
 * gets random element ranges, from managed state and from native state,
 * and allocates garbage and now and then a fresh copy of an array, while a collector thread forces young and (1 in
 * 4) full collections without pause. Every get matches the shadow, every
 * array matches its shadow at the end; poison and the verifier are on, so
 * a piece copied from or to an address the array had left would show.
 * Arrays moved inside a call (the root before and after differs) are
 * counted: the run goes on until some did (at most 8 s). Seeded
 * (KGC_TEST_SEED).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "tgc.h"

#define NARR 4
#define ELEMS 40000u	/* 80 KiB (char) .. 320 KiB (long, double) */

static const enum kgc_prim ptype[NARR] = { KGC_PRIM_INT, KGC_PRIM_LONG, KGC_PRIM_CHAR, KGC_PRIM_DOUBLE };
static const size_t esz[NARR] = { 4, 8, 2, 8 };

static kgc_heap *heap;
static kgc_type_id node;
static _Atomic int stop;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *collector(void *arg)
{
	unsigned long long s = *(unsigned long long *)arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(heap, "collector", &t), 0);
	while (!atomic_load(&stop)) {
		T_ASSERT_EQ(kgc_collect(t, t_rand(&s) % 4 ? KGC_GC_YOUNG : KGC_GC_FULL), 0);
		t_nap_native(t, (long)(t_rand(&s) % 300));
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

/* One set or get of a random range of array i, managed or native. Returns
 * whether the array moved during the call. */
static int one_copy(kgc_thread *t, kgc_obj *roots, uint8_t **shadow, uint8_t *buf, int i,
		    unsigned long long *s)
{
	size_t start = t_rand(s) % ELEMS, count = t_rand(s) % (ELEMS - start + 1), bytes = count * esz[i];
	bool set = t_rand(s) & 1, native = t_rand(s) % 3 == 0;
	kgc_obj before = roots[i];
	int err;

	if (set)
		for (size_t k = 0; k < bytes; k++)
			buf[k] = (uint8_t)t_rand(s);
	if (native)
		kgc_enter_native(t);
	err = set ? kgc_array_set_region(t, &roots[i], ptype[i], start, count, buf) :
		    kgc_array_get_region(t, &roots[i], ptype[i], start, count, buf);
	if (native)
		kgc_leave_native(t);
	T_ASSERT_EQ(err, 0);
	if (set)
		memcpy(shadow[i] + start * esz[i], buf, bytes);
	else if (memcmp(buf, shadow[i] + start * esz[i], bytes))
		T_FAIL("array %d: get [%zu, +%zu) differs from the shadow", i, start, count);
	return !native && roots[i] != before;	/* (native: it may move before the call) */
}

/* Array i anew in eden, filled from its shadow. */
static void renew(kgc_thread *t, kgc_obj *roots, uint8_t **shadow, int i)
{
	roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(ptype[i]), ELEMS);
	T_ASSERT(roots[i]);
	T_ASSERT_EQ(kgc_array_set_region(t, &roots[i], ptype[i], 0, ELEMS, shadow[i]), 0);
}

int main(void)
{
	struct kgc_options o;
	unsigned long long seed = t_seed(), cseed = seed ^ 0x5eed;
	kgc_thread *t;
	kgc_obj roots[NARR] = { 0 };
	struct kgc_frame f;
	uint8_t *shadow[NARR], *buf = malloc(ELEMS * 8);
	pthread_t col;
	int64_t t0 = now_ms();
	unsigned moved = 0, calls = 0;

	t_opts_small(&o, 128, 16);
	o.tenure_threshold = 15;	/* young collections keep moving the arrays */
	o.verify = 1;
	o.poison = 1;
	heap = t_heap_opts(&o, &node);
	T_ASSERT(buf);
	T_ASSERT_EQ(kgc_thread_attach(heap, "copier", &t), 0);
	kgc_frame_push(t, &f, roots, NARR, NULL);
	for (int i = 0; i < NARR; i++) {
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(ptype[i]), ELEMS);
		T_ASSERT(roots[i]);
		T_ASSERT(ELEMS * esz[i] > 64 * 1024);
		shadow[i] = calloc(ELEMS, esz[i]);
		T_ASSERT(shadow[i]);
	}
	T_ASSERT_EQ(pthread_create(&col, NULL, collector, &cseed), 0);
	while (calls < 1000 || (moved < 10 && now_ms() - t0 < 8000)) {
		int i = (int)(t_rand(&seed) % NARR);

		moved += one_copy(t, roots, shadow, buf, i, &seed);
		if (++calls % 64 == 0)
			renew(t, roots, shadow, i);
		for (int k = (int)(t_rand(&seed) % 200); k > 0; k--)
			T_ASSERT(kgc_alloc(t, node));
	}
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(col, NULL), 0);
	kgc_leave_native(t);
	printf("%u copies, %u arrays moved inside a call\n", calls, moved);
	T_ASSERT(moved >= 1);
	for (int i = 0; i < NARR; i++) {
		T_ASSERT_EQ(memcmp(kgc_array_data(roots[i]), shadow[i], ELEMS * esz[i]), 0);
		free(shadow[i]);
	}
	free(buf);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
