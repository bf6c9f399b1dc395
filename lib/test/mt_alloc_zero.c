/* SPDX-License-Identifier: MIT */
/*
 * Large blocks (a big array outside a TLAB, a whole TLAB) are cleared in
 * chunks with safepoint polls between them (alloc.c, alloc_zero):
 *  - a collection requested while a thread clears a 400 KB array completes
 *    during the clearing (the test hook holds the thread between chunks
 *    until the collection has raised the poll word); the allocation is
 *    redone and returns a zeroed array;
 *  - under a stream of collections from another thread, every array comes
 *    back all zero although the memory it reuses was written (and, freed,
 *    poisoned) before;
 *  - with 256 KiB TLABs (cleared in chunks), the object that asked for the
 *    TLAB, placed where the filler header was, reads zero too.
 * Verifier on at every collection: the block being cleared must be
 * parsable (a filler) when a collection walks its region.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define LEN 100000		/* 400 KB: not humongous with 1 MiB regions */
#define ROUNDS 300

static kgc_heap *heap;
static atomic_int armed, go, stop;

/* in the allocating thread, between two chunks */
static void hold_until_poll(struct kgc_heap *h)
{
	if (!atomic_exchange(&armed, 0))
		return;
	atomic_store(&go, 1);
	while (!atomic_load_explicit(&h->sp.poll_word, memory_order_acquire))
		;	/* the collector waits for this (managed) thread */
}

static void *collector(void *arg)
{
	kgc_thread *t;

	(void)arg;
	T_ASSERT_EQ(kgc_thread_attach(heap, "collector", &t), 0);
	kgc_enter_native(t);
	while (!atomic_load(&go))
		;
	kgc_leave_native(t);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	while (!atomic_load(&stop)) {
		/* a dense stream, with a gap in which the allocating thread runs
		 * (back to back, under TSan, each collection left it microseconds) */
		struct timespec ts = { 0, 100 * 1000 };

		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		kgc_enter_native(t);
		nanosleep(&ts, NULL);
		kgc_leave_native(t);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void check_zero(kgc_obj a)
{
	const int32_t *p = kgc_array_data(a);

	T_ASSERT_EQ(kgc_array_length(a), LEN);
	for (int i = 0; i < LEN; i++)
		if (p[i])
			T_FAIL("element %d of a new array is %#x", i, (unsigned)p[i]);
}

/* Verifier and poison on: freed memory is garbage, not zero. */
static kgc_heap *poisoned_heap(size_t max_mb, size_t region_mb, size_t young_mb, kgc_type_id *node)
{
	struct kgc_options o;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = max_mb << 20;
	o.region_size = region_mb << 20;
	o.young_size = young_mb << 20;
	o.verify = 1;
	o.poison = 1;
	return t_heap_opts(&o, node);
}

/*
 * 16 MiB regions: 256 KiB TLABs, cleared in chunks. The object that asked
 * for the TLAB sits where the filler header was: its first fields must
 * read zero too. Memory reused after collections (poisoned when freed).
 */
static void tlab_instances(void)
{
	kgc_type_id node;
	kgc_thread *t;
	kgc_obj slots[1] = { 0 };
	struct kgc_frame f;
	kgc_heap *h = poisoned_heap(128, 16, 32, &node);

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 1, NULL);
	for (int i = 0; i < 4000000; i++) {
		slots[0] = kgc_alloc(t, node);
		T_ASSERT(slots[0]);
		if (KGC_FIELD(slots[0], N_LEFT, kgc_obj) || KGC_FIELD(slots[0], N_RIGHT, kgc_obj) ||
		    KGC_FIELD(slots[0], N_VALUE, int64_t))
			T_FAIL("new node %d has non-zero fields", i);
		KGC_FIELD(slots[0], N_VALUE, int64_t) = -1;
		KGC_FIELD(slots[0], N_LEFT, kgc_obj) = slots[0];	/* young -> young: no barrier needed */
	}
	T_ASSERT(t_stats(h).young_gcs >= 2);	/* eden memory was reused */
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	kgc_type_id node;
	kgc_thread *t;
	kgc_obj slots[1] = { 0 };
	struct kgc_frame f;
	pthread_t th;
	uint64_t gcs0;

	heap = poisoned_heap(64, 1, 8, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 1, NULL);
	/* used and freed regions: later blocks are not fresh (need clearing) */
	for (int i = 0; i < 40; i++) {
		slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), LEN);
		T_ASSERT(slots[0]);
		memset(kgc_array_data(slots[0]), 0x55, LEN * sizeof(int32_t));
	}
	slots[0] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);

	/* a collection in the middle of clearing one array */
	T_ASSERT_EQ(pthread_create(&th, NULL, collector, NULL), 0);
	gcs0 = t_stats(heap).young_gcs;
	kgci_alloc_test_zero_hook = hold_until_poll;
	atomic_store(&armed, 1);
	do {
		slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), LEN);
		T_ASSERT(slots[0]);
		check_zero(slots[0]);
		memset(kgc_array_data(slots[0]), 0x55, LEN * sizeof(int32_t));
	} while (atomic_load(&armed));	/* a fresh region needs no clearing: again */
	T_ASSERT(atomic_load(&go));
	T_ASSERT(t_stats(heap).young_gcs > gcs0);
	T_ASSERT(__atomic_load_n(&heap->alloc.alloc_zero_retries, __ATOMIC_RELAXED) >= 1);

	/* arrays under a stream of collections */
	for (int i = 0; i < ROUNDS; i++) {
		slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), LEN);
		T_ASSERT(slots[0]);
		check_zero(slots[0]);
		memset(kgc_array_data(slots[0]), 0x55, LEN * sizeof(int32_t));
	}
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(t);
	kgci_alloc_test_zero_hook = NULL;
	printf("%llu young GCs, %llu allocations redone after a collection during clearing\n",
	       (unsigned long long)(t_stats(heap).young_gcs - gcs0),
	       (unsigned long long)heap->alloc.alloc_zero_retries);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	tlab_instances();
	return 0;
}
