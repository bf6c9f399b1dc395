/* SPDX-License-Identifier: MIT */
/*
 * Registered buffers for readv and writev (IORING_OP_READV_FIXED /
 * WRITEV_FIXED, Linux 6.15): a readv or writev whose arrays all lie in one
 * unit of the pinned-object space (one registered buffer) uses it by
 * itself (stats io_fixed), at offsets inside the arrays too; one whose
 * arrays lie in two units (a small and a humongous pinned array) or not in
 * the space at all names its buffers by address (io_plain). Every byte
 * lands where it should, after collections while the readv waits on an
 * empty pipe. SKIP where the kernel has no registered buffers or no
 * vectored fixed operations. Seeded lengths.
 */
#include "io_test.h"

#define LEN	4096u
#define BIG	((2u << 20) + 4096)	/* humongous with 1 MiB regions */
#define BYTE	KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static bool vec_fixed_ops(void)
{
	struct io_uring ur;
	struct io_uring_probe *p;
	bool ok;

	if (io_uring_queue_init(2, &ur, 0))
		return false;
	p = io_uring_get_probe_ring(&ur);
	ok = p && io_uring_opcode_supported(p, 60) && io_uring_opcode_supported(p, 61);
	if (p)
		io_uring_free_probe(p);
	io_uring_queue_exit(&ur);
	return ok;
}

/* readv (or writev) of bufs[0..n) on fd; res want, counted fixed or plain. */
static void vec(kgc_heap *h, kgc_io_ring *r, kgc_thread *t, bool write, int fd,
		const struct kgc_io_buf *b, unsigned n, unsigned want, bool fixed)
{
	struct kgc_stats s0 = t_stats(h), s;
	struct kgc_io_cqe c;

	if (write)
		T_ASSERT_EQ(kgc_io_prep_writev(r, t, fd, b, n, KGC_IO_OFF_CUR, 1), 0);
	else
		T_ASSERT_EQ(kgc_io_prep_readv(r, t, fd, b, n, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	c = t_reap1(r, t);
	T_ASSERT_EQ(c.res, (int)want);
	s = t_stats(h);
	T_ASSERT_EQ(s.io_fixed, s0.io_fixed + fixed);
	T_ASSERT_EQ(s.io_plain, s0.io_plain + !fixed);
}

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_io_ring *r;
	struct kgc_frame f;
	kgc_obj a[4] = { 0 };
	struct kgc_io_buf b[2];
	unsigned off = (unsigned)(t_rand(&seed) % 100), l0 = 1 + (unsigned)(t_rand(&seed) % (LEN - off)),
		 l1 = 1 + (unsigned)(t_rand(&seed) % LEN);
	uint8_t buf[2 * LEN];
	int p[2];

	alarm(30);
	T_SKIP_IF(!t_fixed_supported(), "no io_uring registered buffers here (RLIMIT_MEMLOCK?)");
	T_SKIP_IF(!vec_fixed_ops(), "no IORING_OP_READV_FIXED/WRITEV_FIXED (Linux 6.15+)");
	h = t_heap(64, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	kgc_frame_push(t, &f, a, 4, NULL);
	T_ASSERT_EQ(pipe(p), 0);
	a[0] = kgc_alloc_array_pinned(t, BYTE, LEN);
	a[1] = kgc_alloc_array_pinned(t, BYTE, LEN);	/* the same region: one unit */
	a[2] = kgc_alloc_array(t, BYTE, LEN);
	a[3] = kgc_alloc_array_pinned(t, BYTE, BIG);	/* a unit of its own */
	T_ASSERT(a[0] && a[1] && a[2] && a[3]);

	/* readv into one unit, at an offset, waiting over collections */
	b[0] = (struct kgc_io_buf){ &a[0], off, l0 };
	b[1] = (struct kgc_io_buf){ &a[1], 0, l1 };
	T_ASSERT_EQ(kgc_io_prep_readv(r, t, p[0], b, 2, KGC_IO_OFF_CUR, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	t_churn(t, h, node, 2);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_pat_write(p[1], l0 + l1, 1);
	{
		struct kgc_io_cqe c = t_reap1(r, t);

		T_ASSERT_EQ(c.res, (int)(l0 + l1));
		T_ASSERT_EQ(t_stats(h).io_fixed, 1);
	}
	t_pat_fill(buf, l0 + l1, 1);
	T_ASSERT_EQ(memcmp((uint8_t *)kgc_array_data(a[0]) + off, buf, l0), 0);
	T_ASSERT_EQ(memcmp(kgc_array_data(a[1]), buf + l0, l1), 0);

	/* writev out of the same unit: the bytes come back in order */
	vec(h, r, t, true, p[1], b, 2, l0 + l1, true);
	T_ASSERT_EQ(read(p[0], buf, sizeof(buf)), (long)(l0 + l1));
	t_pat_check(buf, l0 + l1, 1);

	/* two units, or an array outside the space: by address */
	b[1] = (struct kgc_io_buf){ &a[3], BIG - l1, l1 };
	t_pat_write(p[1], l0 + l1, 2);
	vec(h, r, t, false, p[0], b, 2, l0 + l1, false);
	t_pat_fill(buf, l0 + l1, 2);
	T_ASSERT_EQ(memcmp((uint8_t *)kgc_array_data(a[3]) + BIG - l1, buf + l0, l1), 0);
	b[1] = (struct kgc_io_buf){ &a[2], 0, l1 };
	t_pat_write(p[1], l0 + l1, 3);
	vec(h, r, t, false, p[0], b, 2, l0 + l1, false);
	t_pat_fill(buf, l0 + l1, 3);
	T_ASSERT_EQ(memcmp(kgc_array_data(a[2]), buf + l0, l1), 0);
	/* one humongous array alone is one unit */
	b[0] = (struct kgc_io_buf){ &a[3], 0, l0 };
	b[1] = (struct kgc_io_buf){ &a[3], BIG - l1, l1 };
	t_pat_write(p[1], l0 + l1, 4);
	vec(h, r, t, false, p[0], b, 2, l0 + l1, true);
	t_pat_fill(buf, l0 + l1, 4);
	T_ASSERT_EQ(memcmp(kgc_array_data(a[3]), buf, l0), 0);
	T_ASSERT_EQ(memcmp((uint8_t *)kgc_array_data(a[3]) + BIG - l1, buf + l0, l1), 0);
	t_io_end(h, t, r, &f, p);
	printf("PASS\n");
	return 0;
}
