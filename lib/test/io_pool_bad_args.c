/* SPDX-License-Identifier: MIT */
/*
 * kgc_io pools: each bad argument gets its exact error and a kgc_last_error
 * naming it, and nothing changes. create: NULL out, ring or opts, a short
 * size, a reserved byte or a byte past the known struct set, nbufs 0, not
 * a power of two or over 32768, a reference array / instance / 0 type, a
 * length of 0 or over 2^31-1 bytes (-EINVAL), a thread in native state
 * (-EPERM). prep_recv_multishot: NULL pool, a pool of another ring
 * (-EINVAL). take: NULL completion or root, a completion naming no buffer
 * or a buffer id past the pool (-EINVAL), a buffer the kernel still has
 * (-ENOENT). put: a NULL root, an array that is not pinned, a reference
 * array, an instance, an array the pool holds already (-EINVAL), a full
 * pool (-ENOSPC). destroy: NULL (-EINVAL). Nothing in flight after any.
 */
#include <sys/socket.h>
#include "io_test.h"

#define BYTE KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static kgc_io_ring *ring;

static void expect(int rc, int want, const char *msg, int line)
{
	if (rc != want)
		T_FAIL("line %d: rc %d, want %d (%s)", line, rc, want, kgc_last_error());
	if (!strstr(kgc_last_error(), msg))
		T_FAIL("line %d: kgc_last_error '%s' does not say '%s'", line, kgc_last_error(), msg);
	if (kgc_io_inflight(ring))
		T_FAIL("line %d: %u in flight", line, kgc_io_inflight(ring));
}
#define EXPECT(rc, want, msg) expect((rc), (want), (msg), __LINE__)

int main(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_io_ring *r2;
	kgc_io_pool *p, *p2;
	kgc_obj a[4] = { 0 };
	struct kgc_frame f;
	struct kgc_io_pool_opts o = { .size = sizeof(o), .nbufs = 4, .array_type = BYTE, .length = 64 }, b;
	struct { struct kgc_io_pool_opts o; uint64_t more; } big = { o, 0 };
	struct kgc_io_cqe c;
	int sv[2];

	alarm(20);
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	ring = t_ring(t, 4);
	r2 = t_ring(t, 4);
	kgc_frame_push(t, &f, a, 4, NULL);

	EXPECT(kgc_io_pool_create(ring, t, &o, NULL), -EINVAL, "NULL out");
	EXPECT(kgc_io_pool_create(NULL, t, &o, &p), -EINVAL, "NULL ring");
	EXPECT(kgc_io_pool_create(ring, t, NULL, &p), -EINVAL, "NULL opts");
	b = o; b.size = 8;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "opts size 8");
	b = o; b.reserved[3] = 1;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "reserved");
	big.o.size = sizeof(big); big.more = 1;
	EXPECT(kgc_io_pool_create(ring, t, &big.o, &p), -EINVAL, "reserved");
	b = o; b.nbufs = 0;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "nbufs 0");
	b = o; b.nbufs = 6;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "power of two");
	b = o; b.nbufs = 65536;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "nbufs 65536");
	b = o; b.array_type = KGC_TYPE_REF_ARRAY;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "not a primitive array type");
	b = o; b.array_type = node;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "not a primitive array type");
	b = o; b.array_type = 0;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "not a primitive array type");
	b = o; b.length = 0;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "length 0");
	b = o; b.array_type = KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG); b.length = 1u << 28;
	EXPECT(kgc_io_pool_create(ring, t, &b, &p), -EINVAL, "elements of 8 bytes");
	kgc_enter_native(t);
	EXPECT(kgc_io_pool_create(ring, t, &o, &p), -EPERM, "native state");
	kgc_leave_native(t);

	p = t_pool(ring, t, 4, 64);
	p2 = t_pool(r2, t, 4, 64);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	EXPECT(kgc_io_prep_recv_multishot(ring, t, sv[0], NULL, 0, 1), -EINVAL, "is not one of");
	EXPECT(kgc_io_prep_recv_multishot(ring, t, sv[0], p2, 0, 1), -EINVAL, "is not one of");

	c = (struct kgc_io_cqe){ 1, 10, IORING_CQE_F_BUFFER | (1u << IORING_CQE_BUFFER_SHIFT) };
	EXPECT(kgc_io_pool_take(p, t, NULL, &a[0]), -EINVAL, "cqe (nil)");
	EXPECT(kgc_io_pool_take(p, t, &c, NULL), -EINVAL, "root (nil)");
	EXPECT(kgc_io_pool_take(p, t, &(struct kgc_io_cqe){ 1, 10, 1u << IORING_CQE_BUFFER_SHIFT },
				&a[0]), -EINVAL, "names no buffer");
	EXPECT(kgc_io_pool_take(p, t, &(struct kgc_io_cqe){ 1, 10, IORING_CQE_F_BUFFER |
				(4u << IORING_CQE_BUFFER_SHIFT) }, &a[0]), -EINVAL, "names no buffer");
	EXPECT(kgc_io_pool_take(p, t, &c, &a[0]), -ENOENT, "back in the kernel's ring");
	T_ASSERT(!a[0]);

	a[0] = kgc_alloc_array(t, BYTE, 64);
	a[1] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 4);
	a[2] = kgc_alloc(t, node);
	a[3] = kgc_alloc_array_pinned(t, BYTE, 64);
	T_ASSERT(a[0] && a[1] && a[2] && a[3]);
	EXPECT(kgc_io_pool_put(p, t, NULL), -EINVAL, "array (nil)");
	EXPECT(kgc_io_pool_put(p, t, &a[0]), -EINVAL, "not in the pinned-object space");
	EXPECT(kgc_io_pool_put(p, t, &a[1]), -EINVAL, "not a primitive array");
	EXPECT(kgc_io_pool_put(p, t, &a[2]), -EINVAL, "not a primitive array");
	EXPECT(kgc_io_pool_put(p, t, &a[3]), -ENOSPC, "holds its 4 arrays");
	EXPECT(kgc_io_pool_destroy(NULL, t), -EINVAL, "NULL pool");

	/* an array the pool holds: one it handed out and got back */
	T_ASSERT_EQ(kgc_io_prep_recv_multishot(ring, t, sv[0], p, 0, 7), 0);
	T_ASSERT_EQ(kgc_io_submit(ring, t), 1);
	t_pat_write(sv[1], 10, 1);
	c = t_reap1(ring, t);
	t_multishot_skip(&c);
	T_ASSERT_EQ(kgc_io_pool_take(p, t, &c, &a[0]), 10);
	T_ASSERT_EQ(kgc_io_pool_put(p, t, &a[0]), 0);
	T_ASSERT_EQ(kgc_io_cancel(ring, t, 7), 1);
	T_ASSERT_EQ(t_reap1(ring, t).res, -ECANCELED);
	EXPECT(kgc_io_pool_put(p, t, &a[0]), -EINVAL, "the pool's buffer");
	T_ASSERT_EQ(kgc_io_pool_avail(p), 4);

	T_ASSERT_EQ(kgc_io_pool_destroy(p, t), 0);
	T_ASSERT_EQ(kgc_io_ring_destroy(r2, t), 0);	/* and p2 with it */
	t_io_end(h, t, ring, &f, sv);
	printf("PASS\n");
	return 0;
}
