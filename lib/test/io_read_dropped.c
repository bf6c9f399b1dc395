/* SPDX-License-Identifier: MIT */
/*
 * kgc_io: the program drops its last reference to an array while a read
 * into it is in flight; young and full collections (and garbage allocated
 * over the space they free) do not reclaim it: a weak reference to it stays
 * set, the bytes land in it. Once the completion is reaped the ring no
 * longer holds it: the next full collection clears the weak reference.
 */
#include "io_test.h"
#include "../gc_internal.h"

#define LEN (32u * 1024)

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_io_cqe c;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	kgc_weak w;
	int p[2];

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 1, NULL);
	roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
	T_ASSERT(roots[0]);
	w = kgc_weak_new(t, roots[0]);
	T_ASSERT(w);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 9), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	roots[0] = NULL;	/* the ring's is the only reference now */

	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_churn(t, h, node, 3);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(kgc_weak_get(t, w) != NULL);

	t_pat_write(p[1], LEN, 5);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.user_data, 9);
	T_ASSERT_EQ(c.res, LEN);
	roots[0] = kgc_weak_get(t, w);
	T_ASSERT(roots[0] != NULL);
	T_ASSERT_EQ(kgc_array_length(roots[0]), LEN);
	t_pat_check(kgc_array_data(roots[0]), LEN, 5);
	roots[0] = NULL;
	/* reaped: no longer a root of the ring */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(kgc_weak_get(t, w) == NULL);

	kgc_weak_free(t, w);
	t_io_end(h, t, r, &f, p);
	return 0;
}
