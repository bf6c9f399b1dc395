/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_ring_set_inline batches: reads of one file's consecutive ranges
 * prepared one after another are done in one system call at the next
 * submit (stats io_inline_calls), each completion with its own bytes, in
 * prep order. A gap, another file, or an operation of another kind in
 * between ends a batch; that operation is queued after the reads before it
 * (they are done when it is prepared). A read that ends the file short
 * completes short; the one after it (past the end) goes to io_uring and
 * gets 0. A read the library cannot do (a pipe: ESPIPE) goes to io_uring
 * when kgc_io_set_flags asks for it, and takes the flags (KGC_IO_LINK: the
 * read after it waits for it). A full collection between prep and submit
 * leaves the deferred read's array in place; destroying a ring with
 * deferred reads does them and releases every array. A batch of 512 KiB
 * or more is split: its second half goes to io_uring (a worker copies it
 * meanwhile), the first is done by the library. Seeded offsets.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include "io_test.h"

#define LEN 4096u
#define NPAGES 512u
#define FILE_LEN (NPAGES * LEN + LEN / 2)	/* the last read ends short */
#define NA 8
#define BYTE KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static kgc_heap *h;
static uint8_t file[FILE_LEN];

static void expect(kgc_obj a, uint64_t off, size_t len)
{
	T_ASSERT_EQ(memcmp(kgc_array_data(a), file + off, len), 0);
}

/* Reap n completions (none waited for: they are done) into c, in order. */
static void reap_n(kgc_io_ring *r, kgc_thread *t, struct kgc_io_cqe *c, unsigned n)
{
	unsigned got = 0;

	while (got < n) {
		int k = kgc_io_reap(r, t, c + got, n - got, 1);

		T_ASSERT(k > 0);
		got += (unsigned)k;
	}
}

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_type_id node;
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_frame f;
	kgc_obj a[NA] = { 0 };
	struct kgc_io_cqe c[NA];
	struct kgc_stats s0;
	char path[] = "/tmp/kgc_batch_XXXXXX";
	int fd, p[2] = { -1, -1 };
	uint64_t off;

	alarm(30);
	t_pat_fill(file, FILE_LEN, 11);
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 16);
	kgc_frame_push(t, &f, a, NA, NULL);
	for (int i = 0; i < NA; i++)
		T_ASSERT((a[i] = kgc_alloc_array(t, BYTE, LEN)) != NULL);
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	T_ASSERT_EQ(unlink(path), 0);
	T_ASSERT_EQ(write(fd, file, FILE_LEN), (long)FILE_LEN);
	T_ASSERT_EQ(kgc_io_ring_set_inline(r, t, LEN), 0);

	/* NA consecutive reads: one call at the submit, completions in order */
	off = (t_rand(&seed) % (NPAGES - NA)) * LEN;
	s0 = t_stats(h);
	for (int i = 0; i < NA; i++)
		T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[i], 0, LEN, off + i * LEN, (uint64_t)i), 0);
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline);
	T_ASSERT_EQ(kgc_io_inflight(r), NA);
	T_ASSERT_EQ(kgc_io_submit(r, t), 0);	/* nothing went to io_uring */
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline + NA);
	T_ASSERT_EQ(t_stats(h).io_inline_calls, s0.io_inline_calls + 1);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, NA, 0), NA);
	for (int i = 0; i < NA; i++) {
		T_ASSERT_EQ(c[i].user_data, (uint64_t)i);
		T_ASSERT_EQ(c[i].res, (int)LEN);
		expect(a[i], off + i * LEN, LEN);
	}

	/* a gap ends a batch; so does another kind of operation, queued after it */
	s0 = t_stats(h);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[0], 0, LEN, 0, 0), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[1], 0, LEN, 2 * LEN, 1), 0);	/* gap: the first is done */
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline + 1);
	T_ASSERT_EQ(kgc_io_prep_write(r, t, fd, &a[2], 0, LEN, FILE_LEN + 10 * LEN, 2), 0);
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline + 2);	/* the read before the write: done */
	T_ASSERT_EQ(t_stats(h).io_inline_calls, s0.io_inline_calls + 2);
	reap_n(r, t, c, 3);
	T_ASSERT_EQ(c[0].user_data, 0);
	T_ASSERT_EQ(c[1].user_data, 1);
	T_ASSERT_EQ(c[2].user_data, 2);
	T_ASSERT_EQ(c[2].res, (int)LEN);
	expect(a[0], 0, LEN);
	expect(a[1], 2 * LEN, LEN);
	T_ASSERT_EQ(ftruncate(fd, FILE_LEN), 0);

	/* the end of the file: full, short, then 0 from io_uring */
	s0 = t_stats(h);
	off = (NPAGES - 1) * LEN;
	for (int i = 0; i < 3; i++)
		T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[i], 0, LEN, off + i * LEN, (uint64_t)i), 0);
	reap_n(r, t, c, 3);
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline + 2);
	T_ASSERT_EQ(t_stats(h).io_inline_calls, s0.io_inline_calls + 1);
	for (int i = 0; i < 3; i++) {
		int want = i == 0 ? (int)LEN : i == 1 ? (int)(LEN / 2) : 0;

		T_ASSERT_EQ(c[i].res, want);
		expect(a[i], off + i * LEN, (size_t)want);
	}

	/* a read the library cannot do takes its flags: the next read waits */
	T_ASSERT_EQ(pipe(p), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, p[0], &a[0], 0, 16, 0, 100), 0);
	T_ASSERT_EQ(kgc_io_set_flags(r, t, KGC_IO_LINK), 0);	/* ESPIPE: now io_uring's */
	s0 = t_stats(h);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[1], 0, LEN, 0, 101), 0);	/* linked: not deferred */
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 2, 0), 0);	/* the pipe is empty: nothing yet */
	t_pat_write(p[1], 16, 3);
	reap_n(r, t, c, 2);
	T_ASSERT_EQ(c[0].user_data, 100);
	T_ASSERT_EQ(c[0].res, 16);
	t_pat_check(kgc_array_data(a[0]), 16, 3);
	T_ASSERT_EQ(c[1].user_data, 101);
	T_ASSERT_EQ(c[1].res, (int)LEN);
	expect(a[1], 0, LEN);
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline);

	/* pinned while deferred: a full collection leaves the array in place */
	{
		kgc_obj before = a[3];

		off = (t_rand(&seed) % NPAGES) * LEN;
		T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[3], 0, LEN, off, 7), 0);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		T_ASSERT(a[3] == before);
		T_ASSERT(t_stats(h).regions_pinned >= 1);
		c[0] = t_reap1(r, t);
		T_ASSERT_EQ(c[0].res, (int)LEN);
		expect(a[3], off, LEN);
		T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	}

	/* a large batch: half to io_uring, half done here, every byte right */
	{
		size_t big = 256 << 10;
		kgc_obj b[4] = { 0 };
		struct kgc_frame fb;

		kgc_frame_push(t, &fb, b, 4, NULL);
		for (int i = 0; i < 4; i++)
			T_ASSERT((b[i] = kgc_alloc_array(t, BYTE, big)) != NULL);
		T_ASSERT_EQ(kgc_io_ring_set_inline(r, t, big), 0);
		s0 = t_stats(h);
		off = (t_rand(&seed) % (NPAGES - 4 * big / LEN)) * LEN;
		for (int i = 0; i < 4; i++)
			T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &b[i], 0, big, off + i * big, (uint64_t)i), 0);
		reap_n(r, t, c, 4);
		T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline + 2);
		T_ASSERT_EQ(t_stats(h).io_inline_calls, s0.io_inline_calls + 1);
		T_ASSERT_EQ(t_stats(h).io_plain + t_stats(h).io_fixed, s0.io_plain + s0.io_fixed + 2);
		for (int i = 0; i < 4; i++) {
			T_ASSERT_EQ(c[i].res, (int)big);
			expect(b[(int)c[i].user_data], off + c[i].user_data * big, big);
		}
		T_ASSERT_EQ(kgc_frame_pop(t, &fb), 0);
		T_ASSERT_EQ(kgc_io_ring_set_inline(r, t, LEN), 0);
	}

	/* destroy with deferred reads: done, every array released */
	s0 = t_stats(h);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[0], 0, LEN, 0, 0), 0);
	T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[1], 0, LEN, LEN, 1), 0);
	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), 2);
	T_ASSERT_EQ(t_stats(h).io_inline, s0.io_inline + 2);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	expect(a[0], 0, LEN);
	expect(a[1], LEN, LEN);
	close(fd);
	close(p[0]);
	close(p[1]);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
