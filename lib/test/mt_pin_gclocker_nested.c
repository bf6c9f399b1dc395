/* SPDX-License-Identifier: MIT */
/*
 * mt_pin_gclocker_nested: nested critical sections are allowed in both pin
 * modes (issue 4). In GCLocker mode, a thread that already holds a critical
 * section and takes another one while a collection is pending must not wait
 * for that collection: the collection is waiting for this very thread's outer
 * section (HotSpot's GCLocker lets a thread already in a critical region
 * re-enter). Otherwise: deadlock.
 *
 * Sequence: holder gets array A; collector requests a young GC (stalls on
 * the GCLocker); once the stall is pending, holder gets A again and then B
 * (nested), releases all; the collection then completes. A hang guard turns
 * a deadlock into a failure instead of a hung test.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "test.h"

static kgc_heap *heap;
static atomic_int outer_held, collector_started, nested_done, collector_done;

static uint64_t kgci_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int wait_flag(atomic_int *f, double secs)
{
	uint64_t t0 = kgci_now_ns();

	while (!atomic_load(f)) {
		if (kgci_now_ns() - t0 > (uint64_t)(secs * 1e9))
			return 0;
		usleep(1000);
	}
	return 1;
}

static void *holder_main(void *arg)
{
	kgc_obj slots[2] = { NULL, NULL };
	struct kgc_frame f;
	kgc_thread *t;
	size_t len;
	void *a, *a2, *b;

	T_ASSERT_EQ(kgc_thread_attach(heap, "holder", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1000);
	slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1000);
	T_ASSERT(slots[0] && slots[1]);
	a = kgc_critical_get(t, &slots[0], &len);
	T_ASSERT(a);
	atomic_store(&outer_held, 1);
	/* let the collector's request become pending on the GCLocker */
	wait_flag(&collector_started, 60);
	usleep(200000);
	a2 = kgc_critical_get(t, &slots[0], &len);	/* nested, same array */
	b = kgc_critical_get(t, &slots[1], &len);	/* nested, another array */
	atomic_store(&nested_done, 1);
	T_ASSERT(a2 == a && b);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[1], b, KGC_CRITICAL_COMMIT), 0);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], a2, KGC_CRITICAL_COMMIT), 0);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[0], a, KGC_CRITICAL_COMMIT), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void *collector_main(void *arg)
{
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(heap, "collector", &t), 0);
	atomic_store(&collector_started, 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	atomic_store(&collector_done, 1);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	struct kgc_options opts;
	struct kgc_stats st;
	pthread_t h, c;

	T_ASSERT_EQ(kgc_options_init(&opts), 0);
	opts.pin_mode = KGC_PIN_MODE_GCLOCKER;
	opts.max_heap = 64ul << 20;
	T_ASSERT_EQ(kgc_heap_create(&opts, &heap), 0);
	T_ASSERT_EQ(pthread_create(&h, NULL, holder_main, NULL), 0);
	if (!wait_flag(&outer_held, 60))
		T_FAIL("holder never got its first critical section");
	T_ASSERT_EQ(pthread_create(&c, NULL, collector_main, NULL), 0);
	if (!wait_flag(&nested_done, 30))
		T_FAIL("GCLocker mode: nested kgc_critical_get blocks while a collection is pending "
		       "(deadlock: the collection waits for this thread's outer section)");
	if (!wait_flag(&collector_done, 30))
		T_FAIL("GCLocker mode: the pending collection never ran after the sections ended");
	T_ASSERT_EQ(pthread_join(h, NULL), 0);
	T_ASSERT_EQ(pthread_join(c, NULL), 0);
	T_ASSERT_EQ(kgc_stats_get(heap, &st, sizeof(st)), 0);
	T_ASSERT(st.young_gcs >= 1);
	T_ASSERT(st.gclocker_stalls >= 1);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	printf("PASS\n");
	return 0;
}
