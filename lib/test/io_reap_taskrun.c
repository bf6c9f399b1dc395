/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_reap on a ring whose completions wait for the task to enter the
 * kernel (IORING_SETUP_DEFER_TASKRUN | SINGLE_ISSUER | TASKRUN_FLAG, and
 * COOP_TASKRUN | TASKRUN_FLAG): a read armed on an empty pipe, the pipe
 * then written, and a loop that only calls kgc_io_reap with wait_nr 0
 * must get the completion (the reap enters the kernel when the ring's
 * IORING_SQ_TASKRUN says so) - with DEFER_TASKRUN nothing else ever runs
 * it. The bytes are the pipe's. SKIP where the kernel lacks the flags.
 */
#include <liburing.h>
#include "io_test.h"

#define LEN 64u
#define BYTE KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static void one(kgc_thread *t, unsigned flags, const char *name)
{
	kgc_io_ring *r = NULL;
	kgc_obj a[1] = { 0 };
	struct kgc_io_cqe c;
	struct kgc_frame f;
	int p[2], err, n = 0;
	int64_t end;

	err = kgc_io_ring_create(t, 8, flags, &r);
	if (err == -EINVAL || err == -ENOSYS || err == -EPERM) {
		printf("SKIP %s: io_uring_setup refused it (%d)\n", name, err);
		return;
	}
	T_ASSERT_EQ(err, 0);
	kgc_frame_push(t, &f, a, 1, NULL);
	T_ASSERT((a[0] = kgc_alloc_array(t, BYTE, LEN)) != NULL);
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &a[0], 0, LEN, 0, 42), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);	/* the pipe is empty: armed */
	t_pat_write(p[1], LEN, 5);		/* completes as task work */
	for (end = t_now_ns() + 2000000000ll; t_now_ns() < end;)
		if ((n = kgc_io_reap(r, t, &c, 1, 0)) != 0)
			break;
	T_ASSERT_EQ(n, 1);
	T_ASSERT_EQ(c.user_data, 42);
	T_ASSERT_EQ(c.res, (int)LEN);
	t_pat_check(kgc_array_data(a[0]), LEN, 5);
	printf("%s: completion seen by a reap with wait_nr 0\n", name);
	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), 0);
	close(p[0]);
	close(p[1]);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(16, 4, &node);
	kgc_thread *t;

	alarm(30);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	one(t, IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_TASKRUN_FLAG,
	    "DEFER_TASKRUN");
	one(t, IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG, "COOP_TASKRUN");
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
