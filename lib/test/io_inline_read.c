/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_ring_set_inline: a short read of a cached file at an explicit
 * offset is deferred at prep and done by the library on the thread that
 * next submits (stats io_inline; kgc_io_set_flags flushes it too), counts
 * in kgc_io_inflight until reaped, makes the ring's eventfd readable once
 * done (not before), and a reap with wait_nr 0 returns it with the file's
 * bytes; its array stays pinned until then (a full collection between prep
 * and submit, and between submit and reap, leaves it in place) and is
 * released after. kgc_io_set_flags after it: -ENOENT; a cancel finds
 * nothing (-ENOENT). Not inline: a read longer than the
 * limit, one at the file position (KGC_IO_OFF_CUR), one queued after an
 * operation flagged KGC_IO_LINK, one whose page is not cached (-EAGAIN
 * from RWF_NOWAIT; when the kernel kept the page anyway this part says so
 * and is skipped), and any read with the limit 0. A tmpfs file (no
 * RWF_NOWAIT) is read inline too. Every read gets its bytes. Bad limit:
 * -EINVAL. Seeded offsets.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include "io_test.h"

#define FILE_LEN (256u * 1024)
#define LEN 4096u
#define BYTE KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static kgc_heap *h;
static uint8_t file[FILE_LEN];

static int make_file(const char *dir)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "%s/kgc_inl_XXXXXX", dir);
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	T_ASSERT_EQ(unlink(path), 0);
	T_ASSERT_EQ(write(fd, file, FILE_LEN), (long)FILE_LEN);
	T_ASSERT_EQ(fsync(fd), 0);
	/* no readahead: the uncached part below drops the pages, and a
	 * readahead still in flight from the reads before it cached the page
	 * again between the check and the read (1 CI run in many) */
	T_ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	return fd;
}

/* Prep a read of len at off into *a; inline or not as want says; reap it. */
static void rd(kgc_io_ring *r, kgc_thread *t, int fd, kgc_obj *a, size_t len, uint64_t off,
	       bool want_inline)
{
	uint64_t i0 = t_stats(h).io_inline;
	struct kgc_io_cqe c;

	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, a, 0, len, off, off), 0);
	T_ASSERT_EQ(t_stats(h).io_inline, i0);	/* deferred to the next submit */
	T_ASSERT_EQ(kgc_io_inflight(r), 1);
	if (want_inline) {
		T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_ASYNC), -ENOENT);	/* done by it */
		T_ASSERT_EQ(t_stats(h).io_inline, i0 + 1);
		T_ASSERT_EQ(kgc_io_cancel(r, t, off), -ENOENT);
		T_ASSERT_EQ(kgc_io_reap(r, t, &c, 1, 0), 1);	/* no wait, no submit */
	} else {
		c = t_reap1(r, t);
		T_ASSERT_EQ(t_stats(h).io_inline, i0);
	}
	T_ASSERT_EQ(c.user_data, off);
	T_ASSERT_EQ(c.res, (int)len);
	T_ASSERT_EQ(memcmp(kgc_array_data(*a), file + (off == KGC_IO_OFF_CUR ? 0 : off), len), 0);
}

/* The page at off in the page cache (mincore: asking starts no I/O). */
static bool cached(int fd, uint64_t off)
{
	void *m = mmap(NULL, FILE_LEN, PROT_READ, MAP_SHARED, fd, 0);
	unsigned char v[FILE_LEN / 4096];

	T_ASSERT(m != MAP_FAILED);
	T_ASSERT_EQ(mincore(m, FILE_LEN, v), 0);
	T_ASSERT_EQ(munmap(m, FILE_LEN), 0);
	return v[off / 4096] & 1;
}

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_type_id node;
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_frame f;
	kgc_obj a[2] = { 0 };
	struct kgc_io_cqe c;
	kgc_obj before;
	int fd, shm, efd, p[2] = { -1, -1 };
	uint64_t off;

	alarm(30);
	t_pat_fill(file, FILE_LEN, 7);
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 8);
	kgc_frame_push(t, &f, a, 2, NULL);
	a[0] = kgc_alloc_array(t, BYTE, 2 * LEN);
	a[1] = kgc_alloc_array(t, BYTE, 2 * LEN);
	T_ASSERT(a[0] && a[1]);
	fd = make_file("/tmp");
	T_ASSERT_EQ(kgc_io_ring_set_inline(r, t, (size_t)INT32_MAX + 1), -EINVAL);
	T_ASSERT_EQ(kgc_io_ring_set_inline(NULL, t, LEN), -EINVAL);

	off = t_rand(&seed) % (FILE_LEN - 2 * LEN);
	rd(r, t, fd, &a[0], LEN, off, false);		/* the limit is 0 */
	T_ASSERT_EQ(kgc_io_ring_set_inline(r, t, LEN), 0);
	T_ASSERT(cached(fd, off));
	rd(r, t, fd, &a[0], LEN, off, true);
	rd(r, t, fd, &a[0], LEN + 1, off, false);	/* longer than the limit */
	T_ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	rd(r, t, fd, &a[0], LEN, KGC_IO_OFF_CUR, false);

	/* after a linked operation: io_uring keeps the chain */
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[1], 0, LEN, 0, 1), 0);	/* inline */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &a[1], LEN, 1, KGC_IO_OFF_CUR, 2), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_LINK), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[0], 0, LEN, LEN, 3), 0);
	T_ASSERT_EQ(t_stats(h).io_inline, 2);
	t_pat_write(p[1], 1, 0);
	{
		struct kgc_io_cqe cs[3];

		T_ASSERT_EQ(kgc_io_reap(r, t, cs, 3, 3), 3);
		T_ASSERT_EQ(cs[0].user_data, 1);	/* the inline one first */
	}

	/* pinned from prep to reap, released after: a full GC moves it then */
	efd = kgc_io_ring_eventfd(r, t);
	T_ASSERT(efd >= 0);
	T_ASSERT_EQ(poll(&(struct pollfd){ efd, POLLIN, 0 }, 1, 0), 0);
	off = t_rand(&seed) % (FILE_LEN - LEN);
	before = a[0];
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[0], 0, LEN, off, 9), 0);
	T_ASSERT_EQ(poll(&(struct pollfd){ efd, POLLIN, 0 }, 1, 0), 0);	/* not done yet */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(a[0] == before);
	T_ASSERT_EQ(kgc_io_submit(r, t), 0);	/* done here: nothing for io_uring */
	T_ASSERT_EQ(poll(&(struct pollfd){ efd, POLLIN, 0 }, 1, 0), 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(a[0] == before);
	T_ASSERT(t_stats(h).regions_pinned >= 1);
	T_ASSERT_EQ(kgc_io_reap(r, t, &c, 1, 0), 1);
	T_ASSERT_EQ(c.res, (int)LEN);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	T_ASSERT_EQ(memcmp(kgc_array_data(a[0]), file + off, LEN), 0);

	/* tmpfs: no RWF_NOWAIT, read inline all the same */
	shm = make_file("/dev/shm");
	rd(r, t, shm, &a[1], LEN, LEN * 3, true);
	close(shm);

	/* not cached: RWF_NOWAIT says -EAGAIN, io_uring reads it (the pages
	 * dropped twice, 20 ms apart: any I/O still in flight is over) */
	T_ASSERT_EQ(posix_fadvise(fd, 0, FILE_LEN, POSIX_FADV_DONTNEED), 0);
	usleep(20 * 1000);
	T_ASSERT_EQ(posix_fadvise(fd, 0, FILE_LEN, POSIX_FADV_DONTNEED), 0);
	if (cached(fd, 8 * LEN))
		printf("note: the kernel kept the page cached: the uncached part is skipped\n");
	else
		rd(r, t, fd, &a[1], LEN, 8 * LEN, false);
	close(fd);
	t_io_end(h, t, r, &f, p);
	printf("PASS\n");
	return 0;
}
