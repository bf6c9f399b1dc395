/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_reap_wait's timeout: a read on a pipe nobody writes, waited for
 * with timeout_ns 60 ms, returns -ETIME (kgc_last_error says so) after at
 * least 60 ms and well under a second; timeout 0 returns -ETIME at once;
 * wait_nr 0 returns 0. With one of two reads completed, waiting for both
 * returns the one after the timeout (a count, not -ETIME) and its array is
 * released. The longest timeout (INT64_MAX ns) waits for a completion that
 * comes after 50 ms (it does not overflow into a deadline already past);
 * a size of 2^31 is garbage, not a newer struct: -EINVAL. While the main thread waits 300 ms another thread's full
 * collection finishes (the wait is in native state). Bad structs: NULL,
 * a size too small, a reserved word set, bytes past the struct set (a
 * newer caller's field this library does not know), no out and no
 * callback: -EINVAL, nothing reaped.
 */
#include <pthread.h>
#include "io_test.h"

#define LEN 256u
#define MS 1000000ll

static kgc_heap *heap;
static int64_t gc_done_ns;

static void *gc_main(void *arg)
{
	kgc_thread *t;

	(void)arg;
	T_ASSERT_EQ(kgc_thread_attach(heap, "gc", &t), 0);
	usleep(30000);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	__atomic_store_n(&gc_done_ns, t_now_ns(), __ATOMIC_RELEASE);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

/* kgc_io_reap_wait(wait_nr, timeout) into c[2]: its result; *ns how long. */
static int reap_for(kgc_io_ring *r, kgc_thread *t, struct kgc_io_cqe *c, unsigned wait_nr,
		    int64_t timeout_ns, int64_t *ns)
{
	struct kgc_io_wait w = { .size = sizeof(w), .wait_nr = wait_nr, .timeout_ns = timeout_ns };
	int64_t t0 = t_now_ns();
	int n = kgc_io_reap_wait(r, t, c, 2, &w);

	*ns = t_now_ns() - t0;
	return n;
}

static void bad_structs(kgc_io_ring *r, kgc_thread *t)
{
	struct big { struct kgc_io_wait w; uint64_t newer; } b = { .w = { .size = sizeof(b) }, .newer = 0 };
	struct kgc_io_wait w = { .size = sizeof(w) };
	struct kgc_io_cqe c[2];

	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 2, NULL), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "NULL wait"));
	w.size = 8;
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 2, &w), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "size 8"));
	w.size = 1u << 31;	/* garbage, not a newer struct */
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 2, &w), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "size 2147483648"));
	w.size = sizeof(w);
	w.reserved[3] = 1;
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 2, &w), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "reserved"));
	w.reserved[3] = 0;
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, NULL, 2, &w), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "NULL out"));
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, NULL, 0, &w), 0);	/* max 0: nothing to store */
	b.newer = 1;
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 2, &b.w), -EINVAL);
	b.newer = 0;
	T_ASSERT_EQ(kgc_io_reap_wait(r, t, c, 2, &b.w), 0);	/* zero: as this struct */
	T_ASSERT_EQ(kgc_io_reap_wait(NULL, t, c, 2, &w), -EINVAL);
}

int main(void)
{
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[3] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c[2];
	int p[2], q[2];
	pthread_t gc, wr;
	int z[2], ctl[2];
	struct t_writer wz;
	struct t_req rq = { LEN, 9, 50000 };
	int64_t ns, gc_ns;

	alarm(20);
	heap = t_heap(64, 4, NULL);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(pipe(q), 0);
	kgc_frame_push(t, &f, roots, 3, NULL);
	for (int i = 0; i < 3; i++)
		T_ASSERT(roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN));
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, q[0], &roots[1], 0, LEN, KGC_IO_OFF_CUR, 2), 0);

	bad_structs(r, t);
	T_ASSERT_EQ(kgc_io_inflight(r), 2);

	T_ASSERT_EQ(reap_for(r, t, c, 1, 60 * MS, &ns), -ETIME);
	T_ASSERT(strstr(kgc_last_error(), "within 60000000 ns"));
	T_ASSERT(ns >= 60 * MS && ns < 1000 * MS);
	T_ASSERT_EQ(reap_for(r, t, c, 1, 0, &ns), -ETIME);
	T_ASSERT(ns < 500 * MS);
	T_ASSERT_EQ(reap_for(r, t, c, 0, 60 * MS, &ns), 0);
	T_ASSERT(ns < 500 * MS);
	/* the longest timeout does not overflow into one already past: it waits
	 * for a read another thread completes after 50 ms */
	T_ASSERT_EQ(pipe(z), 0);
	T_ASSERT_EQ(pipe(ctl), 0);
	wz = (struct t_writer){ ctl[0], z[1] };
	T_ASSERT_EQ(kgc_io_prep_read(r, t, z[0], &roots[2], 0, LEN, KGC_IO_OFF_CUR, 5), 0);
	T_ASSERT_EQ(pthread_create(&wr, NULL, t_writer_main, &wz), 0);
	T_ASSERT_EQ(write(ctl[1], &rq, sizeof(rq)), (long)sizeof(rq));
	T_ASSERT_EQ(reap_for(r, t, c, 1, INT64_MAX, &ns), 1);
	T_ASSERT_EQ(c[0].user_data, 5);
	close(ctl[1]);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(wr, NULL), 0);
	kgc_leave_native(t);
	close(ctl[0]);
	close(z[0]);
	close(z[1]);
	T_ASSERT_EQ(kgc_io_inflight(r), 2);

	/* a collection on another thread finishes while this one waits */
	T_ASSERT_EQ(pthread_create(&gc, NULL, gc_main, NULL), 0);
	T_ASSERT_EQ(reap_for(r, t, c, 1, 300 * MS, &ns), -ETIME);
	gc_ns = __atomic_load_n(&gc_done_ns, __ATOMIC_ACQUIRE);
	T_ASSERT(gc_ns && gc_ns < t_now_ns() - ns + 300 * MS);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(gc, NULL), 0);
	kgc_leave_native(t);

	/* one of two: the count after the timeout */
	t_pat_write(q[1], LEN, 7);
	T_ASSERT_EQ(reap_for(r, t, c, 2, 60 * MS, &ns), 1);
	T_ASSERT(ns < 1000 * MS);
	T_ASSERT_EQ(c[0].user_data, 2);
	T_ASSERT_EQ(c[0].res, LEN);
	t_pat_check(kgc_array_data(roots[1]), LEN, 7);
	T_ASSERT_EQ(kgc_io_inflight(r), 1);

	t_pat_write(p[1], LEN, 8);
	T_ASSERT_EQ(reap_for(r, t, c, 1, -1, &ns), 1);
	T_ASSERT_EQ(c[0].user_data, 1);
	t_pat_check(kgc_array_data(roots[0]), LEN, 8);
	T_ASSERT_EQ(t_stats(heap).regions_pinned, 0);

	close(q[0]);
	close(q[1]);
	t_io_end(heap, t, r, &f, p);
	return 0;
}
