/* SPDX-License-Identifier: MIT */
/*
 * mt_pin_gclocker_getwait: in GCLocker mode, kgc_critical_get may have to
 * wait for a pending collection before it enters its critical section ("let
 * the GC run first"). That collection can move the array, so get must return
 * the elements at the array's location after the wait, not before it.
 *
 * Sequence: holder H keeps array X critical; collector C requests a young GC
 * (pending on the GCLocker); reader R, managed, with a young array Y in a
 * frame slot, calls kgc_critical_get(&Y) -> waits; H releases; the GC runs
 * and moves Y; R's get returns. R's elements must hold Y's pattern (from-space
 * is poisoned, so a stale pointer shows) and R's release must succeed.
 * Run twice: Y in a frame slot, then Y only in a local variable (kgc.h:
 * `ref` may be any variable in managed state; get roots the array across
 * its wait and stores the new address in *ref).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "test.h"

#define N 4096

static kgc_heap *heap;
static atomic_int x_held, collector_started, reader_waiting, release_x, reader_done;
static bool local_only;		/* the reader's array in no root */

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
	kgc_obj x = NULL;
	struct kgc_frame f;
	kgc_thread *t;
	size_t len;
	void *e;

	T_ASSERT_EQ(kgc_thread_attach(heap, "holder", &t), 0);
	kgc_frame_push(t, &f, &x, 1, NULL);
	T_ASSERT((x = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 100)));
	T_ASSERT((e = kgc_critical_get(t, &x, &len)));
	atomic_store(&x_held, 1);
	if (!wait_flag(&release_x, 60))
		T_FAIL("holder: never asked to release");
	T_ASSERT_EQ(kgc_critical_release(t, &x, e, KGC_CRITICAL_COMMIT), 0);
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
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static uintptr_t y_before, y_after;

static void *reader_main(void *arg)
{
	kgc_obj y = NULL;
	struct kgc_frame f;
	kgc_thread *t;
	int32_t *e;
	size_t len;
	int rc;

	T_ASSERT_EQ(kgc_thread_attach(heap, "reader", &t), 0);
	kgc_frame_push(t, &f, &y, local_only ? 0 : 1, NULL);
	T_ASSERT((y = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), N)));	/* young */
	for (int i = 0; i < N; i++)
		((int32_t *)kgc_array_data(y))[i] = i * 3 + 1;
	y_before = (uintptr_t)y;
	atomic_store(&reader_waiting, 1);
	e = kgc_critical_get(t, &y, &len);	/* waits for the pending GC */
	T_ASSERT(e != NULL);
	T_ASSERT_EQ(len, N);
	for (int i = 0; i < N; i++)
		if (e[i] != i * 3 + 1)
			T_FAIL("reader: element %d is %#x, expected %#x: kgc_critical_get returned the "
			       "array's pre-collection (stale) location %p", i, (unsigned)e[i], i * 3 + 1, (void *)e);
	rc = kgc_critical_release(t, &y, e, KGC_CRITICAL_COMMIT);
	if (rc)
		T_FAIL("reader: kgc_critical_release = %d: the elements pointer get returned does not "
		       "belong to the array the root now holds (array moved during get's GCLocker wait)", rc);
	y_after = (uintptr_t)y;
	atomic_store(&reader_done, 1);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static int run(void)
{
	struct kgc_options opts;
	struct kgc_stats st;
	pthread_t h, c, r;

	atomic_store(&x_held, 0);
	atomic_store(&collector_started, 0);
	atomic_store(&reader_waiting, 0);
	atomic_store(&release_x, 0);
	atomic_store(&reader_done, 0);
	T_ASSERT_EQ(kgc_options_init(&opts), 0);
	opts.pin_mode = KGC_PIN_MODE_GCLOCKER;
	opts.poison = 1;	/* stale pointers into from-space read poison */
	opts.max_heap = 64ul << 20;
	if (!getenv("KGC_VERIFY") || strcmp(getenv("KGC_VERIFY"), "0"))
		opts.verify = 1;
	T_ASSERT_EQ(kgc_heap_create(&opts, &heap), 0);
	T_ASSERT_EQ(pthread_create(&h, NULL, holder_main, NULL), 0);
	if (!wait_flag(&x_held, 60))
		T_FAIL("holder never got its critical section");
	T_ASSERT_EQ(pthread_create(&c, NULL, collector_main, NULL), 0);
	wait_flag(&collector_started, 60);
	usleep(200000);		/* let the collection become pending on the GCLocker */
	T_ASSERT_EQ(pthread_create(&r, NULL, reader_main, NULL), 0);
	wait_flag(&reader_waiting, 60);
	usleep(200000);		/* let the reader enter kgc_critical_get and wait */
	atomic_store(&release_x, 1);
	if (!wait_flag(&reader_done, 60))
		T_FAIL("reader's critical section never completed");
	T_ASSERT_EQ(pthread_join(h, NULL), 0);
	T_ASSERT_EQ(pthread_join(c, NULL), 0);
	T_ASSERT_EQ(pthread_join(r, NULL), 0);
	T_ASSERT_EQ(kgc_stats_get(heap, &st, sizeof(st)), 0);
	printf("%s: young GCs %llu, gclocker stalls %llu, reader's array %s during its get\n",
	       local_only ? "array in a local variable" : "array in a frame slot",
	       (unsigned long long)st.young_gcs, (unsigned long long)st.gclocker_stalls,
	       y_before != y_after ? "moved" : "did not move");
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return y_before != y_after;
}

int main(void)
{
	int moved = run();

	local_only = true;
	moved += run();
	T_SKIP_IF(moved < 2, "the scenario did not happen (reader's array was not moved during its get)");
	printf("PASS\n");
	return 0;
}
