/* SPDX-License-Identifier: MIT */
/* io_test.h - helpers for the kgc_io ring tests (io_*.c): a ring or SKIP,
 * a byte pattern, one completion. */
#ifndef KGC_IO_TEST_H
#define KGC_IO_TEST_H

#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include <liburing.h>
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

/* CLOCK_MONOTONIC in nanoseconds. */
static inline int64_t t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* An anonymous temporary file (created and unlinked in /tmp). */
static inline int t_tmpfile(void)
{
	char path[] = "/tmp/kgc_io_XXXXXX";
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	T_ASSERT_EQ(unlink(path), 0);
	return fd;
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

/* A request to a writer thread: len bytes of pattern gen, after delay_us. */
struct t_req { uint32_t len, gen, delay_us; };
struct t_writer { int ctl, out; };	/* requests come on ctl, bytes go to out */

/* An unattached writer thread: serves requests until ctl is closed. */
static inline void *t_writer_main(void *arg)
{
	struct t_writer *w = arg;
	struct t_req q;

	while (read(w->ctl, &q, sizeof(q)) == sizeof(q)) {
		usleep(q.delay_us);
		t_pat_write(w->out, q.len, q.gen);
	}
	return NULL;
}

/* Some garbage; now and then a young or (1 in 4) a full collection. */
static inline void t_io_churn(kgc_thread *t, kgc_type_id node, unsigned long long *s)
{
	int n = (int)(t_rand(s) % 3000);

	for (int i = 0; i < n; i++)
		T_ASSERT(kgc_alloc(t, node));
	if (t_rand(s) % 16 == 0)
		T_ASSERT_EQ(kgc_collect(t, t_rand(s) % 4 ? KGC_GC_YOUNG : KGC_GC_FULL), 0);
}

/* Can this process register a sparse io_uring buffer table and a buffer in it? */
static inline bool t_fixed_supported(void)
{
	static char b[4096];
	struct iovec iov = { b, sizeof(b) };
	struct io_uring ur;
	bool ok;

	if (io_uring_queue_init(2, &ur, 0))
		return false;
	ok = io_uring_register_buffers_sparse(&ur, 4) == 0 &&
	     io_uring_register_buffers_update_tag(&ur, 1, &iov, NULL, 1) == 1;
	io_uring_queue_exit(&ur);
	return ok;
}

/* A provided-buffer pool of nbufs byte arrays of len on r; SKIP when the
 * kernel has no provided-buffer rings (before 5.19). */
static inline kgc_io_pool *t_pool(kgc_io_ring *r, kgc_thread *t, unsigned nbufs, unsigned len)
{
	struct kgc_io_pool_opts o = { .size = sizeof(o), .nbufs = nbufs,
				      .array_type = KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), .length = len };
	kgc_io_pool *p = NULL;
	int err = kgc_io_pool_create(r, t, &o, &p);

	T_SKIP_IF(err == -EINVAL && strstr(kgc_last_error(), "io_uring_register_buf_ring"),
		  "no io_uring provided-buffer rings (Linux 5.19+)");
	T_ASSERT_EQ(err, 0);
	T_ASSERT(p);
	return p;
}

/* The buffer id a completion names. */
static inline unsigned t_bid(const struct kgc_io_cqe *c)
{
	return c->flags >> IORING_CQE_BUFFER_SHIFT;
}

/* A multishot recv's first completion: SKIP when the kernel has none
 * (before 6.0: -EINVAL). */
static inline void t_multishot_skip(const struct kgc_io_cqe *c)
{
	T_SKIP_IF(c->res == -EINVAL && !(c->flags & IORING_CQE_F_MORE),
		  "no multishot recv (Linux 6.0+)");
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
