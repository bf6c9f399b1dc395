/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_set_flags: KGC_IO_LINK orders a write before its fsync and a
 * read-back (all three results right, the array read back holds the
 * bytes); a failing head (a read of a closed fd) cancels the read linked
 * after it (-ECANCELED; its array untouched and released once reaped),
 * while with KGC_IO_HARDLINK the next one (a timeout) still runs;
 * KGC_IO_DRAIN holds a 1 ms timeout until an earlier poll completes (a
 * 100 ms reap gets nothing; the pipe written, both come). KGC_IO_ASYNC
 * runs. Bad uses: unknown bits -EINVAL; no operation queued, or the last
 * one already submitted, or queued by another thread: -ENOENT.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include "io_test.h"

#define LEN 4096u
#define MS 1000000ull

static kgc_heap *heap;
static kgc_io_ring *ring;

/* Another thread queues a timeout: main's kgc_io_set_flags then finds
 * the last operation is not its own. */
static void *other(void *arg)
{
	kgc_thread *t;

	(void)arg;
	T_ASSERT_EQ(kgc_thread_attach(heap, "other", &t), 0);
	T_ASSERT_EQ(kgc_io_prep_timeout(ring, t, 1 * MS, 99), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static struct kgc_io_cqe by_ud(const struct kgc_io_cqe *c, int n, uint64_t ud)
{
	for (int i = 0; i < n; i++)
		if (c[i].user_data == ud)
			return c[i];
	T_FAIL("no completion with user_data %llu", (unsigned long long)ud);
}

int main(void)
{
	kgc_thread *t;
	kgc_obj roots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c[4];
	struct kgc_io_wait w = { .size = sizeof(w), .wait_nr = 1, .timeout_ns = 100 * MS };
	int fd, bad, p[2];
	pthread_t th;

	alarm(20);
	heap = t_heap(64, 4, NULL);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	ring = t_ring(t, 8);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 2, NULL);
	fd = t_tmpfile();
	for (int i = 0; i < 2; i++)
		T_ASSERT(roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN));
	t_pat_fill(kgc_array_data(roots[0]), LEN, 3);
	memset(kgc_array_data(roots[1]), 0xee, LEN);

	/* bad uses */
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK), -ENOENT);
	T_ASSERT(strstr(kgc_last_error(), "submitted (or none was)"));
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, 64), -EINVAL);
	T_ASSERT_EQ(kgc_io_set_flags(NULL, t, KGC_IO_LINK), -EINVAL);
	T_ASSERT_EQ(pthread_create(&th, NULL, other, NULL), 0);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(t);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK), -ENOENT);
	T_ASSERT(strstr(kgc_last_error(), "another thread's"));
	T_ASSERT_EQ(kgc_io_submit(ring, t), 1);
	T_ASSERT_EQ(t_reap1(ring, t).res, -ETIME);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK), -ENOENT);

	/* write -> fsync -> read back, in order */
	T_ASSERT_EQ(kgc_io_prep_write(ring, t, fd, &roots[0], 0, LEN, 0, 1), 0);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK | KGC_IO_ASYNC), 0);
	T_ASSERT_EQ(kgc_io_prep_fsync(ring, t, fd, 0, 2), 0);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, fd, &roots[1], 0, LEN, 0, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(ring, t), 3);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK), -ENOENT);	/* submitted */
	T_ASSERT_EQ(kgc_io_reap(ring, t, c, 4, 3), 3);
	T_ASSERT_EQ(by_ud(c, 3, 1).res, LEN);
	T_ASSERT_EQ(by_ud(c, 3, 2).res, 0);
	T_ASSERT_EQ(by_ud(c, 3, 3).res, LEN);
	t_pat_check(kgc_array_data(roots[1]), LEN, 3);

	/* a failing head cancels the linked read; a hard link runs anyway */
	bad = open("/dev/null", O_RDONLY);
	T_ASSERT(bad >= 0);
	close(bad);
	memset(kgc_array_data(roots[1]), 0xee, LEN);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, bad, &roots[0], 0, LEN, 0, 4), 0);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_LINK), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, fd, &roots[1], 0, LEN, 0, 5), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, bad, &roots[0], 0, LEN, 0, 6), 0);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_HARDLINK), 0);
	T_ASSERT_EQ(kgc_io_prep_timeout(ring, t, 1 * MS, 7), 0);
	T_ASSERT_EQ(kgc_io_submit(ring, t), 4);
	T_ASSERT_EQ(kgc_io_reap(ring, t, c, 4, 4), 4);
	T_ASSERT_EQ(by_ud(c, 4, 4).res, -EBADF);
	T_ASSERT_EQ(by_ud(c, 4, 5).res, -ECANCELED);
	T_ASSERT_EQ(by_ud(c, 4, 6).res, -EBADF);
	T_ASSERT_EQ(by_ud(c, 4, 7).res, -ETIME);
	for (size_t i = 0; i < LEN; i++)
		T_ASSERT_EQ(((uint8_t *)kgc_array_data(roots[1]))[i], 0xee);
	T_ASSERT_EQ(t_stats(heap).regions_pinned, 0);

	/* drain: the timeout waits for the poll before it */
	T_ASSERT_EQ(kgc_io_prep_poll(ring, t, p[0], POLLIN, 8), 0);
	T_ASSERT_EQ(kgc_io_prep_timeout(ring, t, 1 * MS, 9), 0);
	T_ASSERT_EQ(kgc_io_set_flags(ring, t, KGC_IO_DRAIN), 0);
	T_ASSERT_EQ(kgc_io_submit(ring, t), 2);
	T_ASSERT_EQ(kgc_io_reap_wait(ring, t, c, 4, &w), -ETIME);
	T_ASSERT_EQ(write(p[1], "x", 1), 1);
	T_ASSERT_EQ(kgc_io_reap(ring, t, c, 4, 2), 2);
	T_ASSERT(by_ud(c, 2, 8).res & POLLIN);
	T_ASSERT_EQ(by_ud(c, 2, 9).res, -ETIME);

	close(fd);
	t_io_end(heap, t, ring, &f, p);
	return 0;
}
