/* SPDX-License-Identifier: MIT */
/*
 * GCLocker mode: gclocker_stalls counts every thread that waited for the
 * GCLocker - the thread requesting a collection while a critical section is
 * open, and a thread entering a critical section while that collection is
 * pending - and gclocker_stall_ns their waiting time.
 *
 * Sequence (each step waits for the previous one's observable state, no
 * sleeps): holder H takes a critical section; collector C requests a young
 * GC (pending: locker_needs_gc); reader R calls kgc_critical_get and blocks;
 * H releases; the GC runs; R gets its section and releases.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "tgc.h"
#include "../gc_internal.h"

static kgc_heap *heap;
static kgc_thread *reader;
static atomic_int held, reader_ready, release_now, reader_done;

static void spin_until(atomic_int *f)
{
	while (!atomic_load(f))
		sched_yield();
}

static void *holder_main(void *arg)
{
	kgc_obj x = NULL;
	struct kgc_frame f;
	kgc_thread *t;
	void *e;

	T_ASSERT_EQ(kgc_thread_attach(heap, "holder", &t), 0);
	kgc_frame_push(t, &f, &x, 1, NULL);
	T_ASSERT((x = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 100)));
	T_ASSERT((e = kgc_critical_get(t, &x, NULL)));
	atomic_store(&held, 1);
	spin_until(&release_now);
	T_ASSERT_EQ(kgc_critical_release(t, &x, e, KGC_CRITICAL_COMMIT), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void *reader_main(void *arg)
{
	kgc_obj y = NULL;
	struct kgc_frame f;
	void *e;

	kgc_frame_push(reader, &f, &y, 1, NULL);
	T_ASSERT((y = kgc_alloc_array(reader, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 64)));
	atomic_store(&reader_ready, 1);
	T_ASSERT((e = kgc_critical_get(reader, &y, NULL)));	/* waits for the pending GC */
	T_ASSERT_EQ(kgc_critical_release(reader, &y, e, KGC_CRITICAL_COMMIT), 0);
	T_ASSERT_EQ(kgc_frame_pop(reader, &f), 0);
	atomic_store(&reader_done, 1);
	return NULL;
}

int main(void)
{
	struct kgc_options o;
	struct kgc_stats s;
	pthread_t h, c, r;
	struct t_gcreq gcreq;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.pin_mode = KGC_PIN_MODE_GCLOCKER;
	o.max_heap = 64u << 20;
	T_ASSERT_EQ(kgc_heap_create(&o, &heap), 0);
	gcreq = (struct t_gcreq){ heap, KGC_GC_YOUNG, 1, 0 };	/* collector C: one young GC */
	T_ASSERT_EQ(pthread_create(&h, NULL, holder_main, NULL), 0);
	spin_until(&held);
	T_ASSERT_EQ(pthread_create(&c, NULL, t_gc_thread, &gcreq), 0);
	while (!atomic_load(&heap->sp.locker_needs_gc))	/* the collection is pending */
		sched_yield();
	/* attached here (managed) so its state can be watched below */
	T_ASSERT_EQ(kgc_thread_attach(heap, "reader", &reader), 0);
	T_ASSERT_EQ(pthread_create(&r, NULL, reader_main, NULL), 0);
	spin_until(&reader_ready);
	while (__atomic_load_n(&reader->pub.state, __ATOMIC_SEQ_CST) != TS_BLOCKED)	/* waiting in kgc_critical_get */
		sched_yield();
	atomic_store(&release_now, 1);
	T_ASSERT_EQ(pthread_join(h, NULL), 0);
	T_ASSERT_EQ(pthread_join(c, NULL), 0);
	T_ASSERT_EQ(pthread_join(r, NULL), 0);
	T_ASSERT(atomic_load(&reader_done));
	T_ASSERT_EQ(kgc_thread_detach(reader), 0);
	T_ASSERT_EQ(kgc_stats_get(heap, &s, sizeof(s)), 0);
	printf("young GCs %llu, gclocker stalls %llu (%.3f ms)\n", (unsigned long long)s.young_gcs,
	       (unsigned long long)s.gclocker_stalls, s.gclocker_stall_ns / 1e6);
	T_ASSERT_EQ(s.young_gcs, 1);
	T_ASSERT_EQ(s.gclocker_stalls, 2);	/* the collector and the reader */
	T_ASSERT(s.gclocker_stall_ns > 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	puts("ok");
	return 0;
}
