/* SPDX-License-Identifier: MIT */
/*
 * kgc_io: a thread waiting in kgc_io_reap for a read that has not arrived
 * (a pipe whose writer waits) is in native state: another thread's young
 * and full collections complete while it waits (it holds up no safepoint),
 * and only then does that thread write the pipe and the wait end with the
 * bytes in the array. A reap that blocked collections would hang here
 * (alarm: fails after 60 s).
 */
#include <pthread.h>
#include "io_test.h"

#define LEN 4096u
#define NGCS 6

static kgc_heap *heap;
static int pfd[2];
static int gcs_done;

static void *collector(void *arg)
{
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(heap, "collector", &t), 0);
	usleep(20000);	/* the main thread is waiting by now (or soon: it does not matter) */
	for (int i = 0; i < NGCS; i++)
		T_ASSERT_EQ(kgc_collect(t, i % 3 == 2 ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
	__atomic_store_n(&gcs_done, 1, __ATOMIC_RELEASE);
	t_pat_write(pfd[1], LEN, 7);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	kgc_type_id node;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c;
	pthread_t col;
	uint64_t gcs0;

	alarm(60);
	heap = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	r = t_ring(t, 2);
	T_ASSERT_EQ(pipe(pfd), 0);
	kgc_frame_push(t, &f, roots, 1, NULL);
	T_ASSERT((roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN)));
	T_ASSERT_EQ(kgc_io_prep_read(r, t, pfd[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	gcs0 = t_stats(heap).young_gcs + t_stats(heap).full_gcs;
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_create(&col, NULL, collector, NULL), 0);
	kgc_leave_native(t);
	c = t_reap1(r, t);	/* waits until the collector is done */
	T_ASSERT(__atomic_load_n(&gcs_done, __ATOMIC_ACQUIRE));
	T_ASSERT(t_stats(heap).young_gcs + t_stats(heap).full_gcs >= gcs0 + NGCS);
	T_ASSERT_EQ(c.res, LEN);
	t_pat_check(kgc_array_data(roots[0]), LEN, 7);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(col, NULL), 0);
	kgc_leave_native(t);
	t_io_end(heap, t, r, &f, pfd);
	return 0;
}
