/* SPDX-License-Identifier: MIT */
/* io_test.h - helpers for the kgc_io ring tests (io_*.c): a ring or SKIP,
 * a byte pattern, one completion. */
#ifndef KGC_IO_TEST_H
#define KGC_IO_TEST_H

#include <signal.h>
#include <unistd.h>
#include "tgc.h"

/* A ring of entries on t's heap; SKIP when the kernel offers no io_uring. */
static inline kgc_io_ring *t_ring(kgc_thread *t, unsigned entries)
{
	kgc_io_ring *r = NULL;
	int err = kgc_io_ring_create(t, entries, 0, &r);

	T_SKIP_IF(err == -ENOSYS || err == -EPERM || err == -EACCES,
		  "io_uring not available (io_uring_setup refused; kernel.io_uring_disabled?)");
	T_ASSERT_EQ(err, 0);
	T_ASSERT(r);
	return r;
}

static inline uint8_t t_pat(size_t i, unsigned gen)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + gen * 29 + 1);
}

static inline void t_pat_fill(uint8_t *p, size_t n, unsigned gen)
{
	for (size_t i = 0; i < n; i++)
		p[i] = t_pat(i, gen);
}

/* p[0..n) holds pattern gen. */
static inline void t_pat_check(const uint8_t *p, size_t n, unsigned gen)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != t_pat(i, gen))
			T_FAIL("byte %zu: %#x, want %#x (pattern %u)", i, p[i], t_pat(i, gen), gen);
}

/* Write n bytes of pattern gen to fd (a pipe or socket with room for them). */
static inline void t_pat_write(int fd, size_t n, unsigned gen)
{
	uint8_t *b = malloc(n);

	T_ASSERT(b);
	t_pat_fill(b, n, gen);
	T_ASSERT_EQ(write(fd, b, n), (long long)n);
	free(b);
}

/* Wait for and reap exactly one completion. */
static inline struct kgc_io_cqe t_reap1(kgc_io_ring *r, kgc_thread *t)
{
	struct kgc_io_cqe c = { 0 };

	T_ASSERT_EQ(kgc_io_reap(r, t, &c, 1, 1), 1);
	return c;
}

/* The end of a one-thread test: ring (nothing in flight), pipe p, frame f,
 * thread t and heap h go. */
static inline void t_io_end(kgc_heap *h, kgc_thread *t, kgc_io_ring *r, struct kgc_frame *f,
			    const int p[2])
{
	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), 0);
	close(p[0]);
	close(p[1]);
	T_ASSERT_EQ(kgc_frame_pop(t, f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

#endif
