/* SPDX-License-Identifier: MIT */
/*
 * kgc_io: each bad argument of a prep call gets its exact error and a
 * kgc_last_error naming it, and nothing is queued (no operation in flight,
 * nothing counted, no region pinned): offset+length beyond the array
 * (-EFAULT), a reference array, an instance, a NULL array (-EINVAL), no or
 * too many readv buffers (-EINVAL), a thread of another heap (-EINVAL), a
 * detached thread (-EINVAL; the heap is checked so it keeps the thread's
 * memory), a thread in a critical section (-EPERM); a full ring -EAGAIN;
 * kgc_heap_destroy with a ring open -EBUSY.
 */
#include "io_test.h"
#include "../gc_internal.h"

#define LEN 1000u	/* ints: 4000 bytes */

static kgc_heap *heap;
static kgc_io_ring *ring;

/* rc is want, kgc_last_error contains msg, nothing queued. */
static void expect(int rc, int want, const char *msg, int line)
{
	struct kgc_stats s = t_stats(heap);

	if (rc != want)
		T_FAIL("line %d: rc %d, want %d", line, rc, want);
	if (!strstr(kgc_last_error(), msg))
		T_FAIL("line %d: kgc_last_error '%s' does not say '%s'", line, kgc_last_error(), msg);
	if (kgc_io_inflight(ring) || s.io_submitted || s.regions_pinned)
		T_FAIL("line %d: something was queued: inflight %u, submitted %llu, pinned %u", line,
		       kgc_io_inflight(ring), (unsigned long long)s.io_submitted, s.regions_pinned);
}
#define EXPECT(rc, want, msg) expect((rc), (want), (msg), __LINE__)

int main(void)
{
	kgc_type_id node;
	struct kgc_options o;
	kgc_heap *h2;
	kgc_thread *t, *t2, *dead;
	kgc_obj roots[3] = { 0 };
	struct kgc_frame f;
	struct kgc_io_buf bufs[KGC_IO_IOV_MAX + 1];
	int p[2];
	void *e;
	int rc;

	t_opts_small(&o, 64, 4);
	o.check = 1;	/* detached threads stay readable (zombies) */
	o.tag_mask = 1;	/* a tagged immediate is no array */
	heap = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	ring = t_ring(t, 2);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 3, NULL);
	roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), LEN);
	roots[1] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 16);
	roots[2] = kgc_alloc(t, node);
	T_ASSERT(roots[0] && roots[1] && roots[2]);

	EXPECT(kgc_io_prep_read(ring, t, p[0], &roots[0], 0, 4 * LEN + 1, 0, 1), -EFAULT, "beyond");
	EXPECT(kgc_io_prep_read(ring, t, p[0], &roots[0], 4 * LEN - 10, 11, 0, 1), -EFAULT, "beyond");
	EXPECT(kgc_io_prep_write(ring, t, p[1], &roots[0], 4 * LEN + 1, 0, 0, 1), -EFAULT, "beyond");
	EXPECT(kgc_io_prep_recv(ring, t, p[0], &roots[0], SIZE_MAX, 2, 0, 1), -EFAULT, "beyond");
	EXPECT(kgc_io_prep_read(ring, t, p[0], &roots[1], 0, 8, 0, 1), -EINVAL, "reference array");
	EXPECT(kgc_io_prep_send(ring, t, p[1], &roots[2], 0, 8, 0, 1), -EINVAL, "not a primitive array");
	EXPECT(kgc_io_prep_read(ring, t, p[0], NULL, 0, 8, 0, 1), -EINVAL, "NULL array");
	roots[2] = (kgc_obj)((char *)roots[0] + 1);	/* tagged, and would point into the array */
	EXPECT(kgc_io_prep_read(ring, t, p[0], &roots[2], 0, 8, 0, 1), -EINVAL, "tagged immediate");
	roots[2] = NULL;
	EXPECT(kgc_io_prep_read(ring, t, p[0], &roots[2], 0, 8, 0, 1), -EINVAL, "NULL array");
	EXPECT(kgc_io_prep_read(NULL, t, p[0], &roots[0], 0, 8, 0, 1), -EINVAL, "NULL ring");
	for (int i = 0; i <= KGC_IO_IOV_MAX; i++)
		bufs[i] = (struct kgc_io_buf){ &roots[0], 0, 8 };
	EXPECT(kgc_io_prep_readv(ring, t, p[0], bufs, 0, 0, 1), -EINVAL, "buffers");
	EXPECT(kgc_io_prep_writev(ring, t, p[1], bufs, KGC_IO_IOV_MAX + 1, 0, 1), -EINVAL, "buffers");
	bufs[3].array = &roots[1];
	EXPECT(kgc_io_prep_readv(ring, t, p[0], bufs, 4, 0, 1), -EINVAL, "buffer 3");

	/* a thread of another heap */
	h2 = t_heap(16, 2, NULL);
	T_ASSERT_EQ(kgc_thread_attach(h2, "other", &t2), 0);
	EXPECT(kgc_io_prep_read(ring, t2, p[0], &roots[0], 0, 8, 0, 1), -EINVAL, "not attached to the heap");
	T_ASSERT_EQ(kgc_thread_detach(t2), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h2), 0);
	/* a detached thread */
	T_ASSERT_EQ(kgc_thread_attach(heap, "gone", &dead), 0);
	T_ASSERT_EQ(kgc_thread_detach(dead), 0);
	EXPECT(kgc_io_prep_read(ring, dead, p[0], &roots[0], 0, 8, 0, 1), -EINVAL, "not attached");
	EXPECT(kgc_io_submit(ring, dead), -EINVAL, "not attached");
	/* native state: inside a critical section */
	e = kgc_critical_get(t, &roots[0], NULL);
	T_ASSERT(e);
	rc = kgc_io_prep_read(ring, t, p[0], &roots[0], 0, 8, 0, 1);
	T_ASSERT_EQ(kgc_critical_release(t, &roots[0], e, 0), 0);	/* (its pin, gone) */
	EXPECT(rc, -EPERM, "critical section");

	/* a full ring: two in flight, the third refused */
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, p[0], &roots[0], 0, 8, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, p[0], &roots[0], 8, 8, KGC_IO_OFF_CUR, 2), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, p[0], &roots[0], 16, 8, KGC_IO_OFF_CUR, 3), -EAGAIN);
	T_ASSERT(strstr(kgc_last_error(), "in flight"));
	T_ASSERT_EQ(kgc_io_inflight(ring), 2);
	T_ASSERT_EQ(kgc_io_cancel(ring, t, 77), -ENOENT);
	T_ASSERT_EQ(kgc_heap_destroy(heap), -EBUSY);
	T_ASSERT(strstr(kgc_last_error(), "kgc_io ring"));
	T_ASSERT_EQ(kgc_io_cancel(ring, t, 2), 1);
	T_ASSERT_EQ(t_reap1(ring, t).res, -ECANCELED);
	T_ASSERT_EQ(kgc_io_cancel(ring, t, 1), 1);
	T_ASSERT_EQ(t_reap1(ring, t).res, -ECANCELED);
	t_io_end(heap, t, ring, &f, p);
	return 0;
}
