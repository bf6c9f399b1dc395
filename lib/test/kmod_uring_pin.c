/* kmod backend: an io_uring fixed-buffer registration on a byte array's
 * pages (a kernel pin only - no critical section) keeps the array's region in
 * place across young and full collections (evacuation failure "kernel
 * pinned"); the kernel still writes into the array's bytes (READ_FIXED) after
 * those collections; once unregistered, a full GC compacts the region and
 * slides the array down, contents intact. Skips unless the backend is kmod. */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include "tgc.h"
#include "../gc_internal.h"

#define PG 4096u
#define ARR_LEN (64u * 1024 + 2 * PG)	/* holds 16 whole pages wherever it lands */
#define BUF_LEN (64u * 1024)
#define VICTIM_LEN (16u * 1024)		/* dies before the pinned GCs: dead space below */

/* --------------------------------------------- io_uring, raw syscalls */

struct ring {
	int fd;
	void *sq, *cq;
	size_t sq_sz, cq_sz, sqe_sz;
	struct io_uring_sqe *sqes;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

static int ring_init(struct ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	r->cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqe_sz = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq = mmap(NULL, r->sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		     r->fd, IORING_OFF_SQ_RING);
	T_ASSERT(r->sq != MAP_FAILED);
	r->cq = mmap(NULL, r->cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		     r->fd, IORING_OFF_CQ_RING);
	T_ASSERT(r->cq != MAP_FAILED);
	r->sqes = mmap(NULL, r->sqe_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       r->fd, IORING_OFF_SQES);
	T_ASSERT(r->sqes != MAP_FAILED);
	r->sq_tail = (unsigned *)((char *)r->sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)((char *)r->sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)((char *)r->sq + p.sq_off.array);
	r->cq_head = (unsigned *)((char *)r->cq + p.cq_off.head);
	r->cq_tail = (unsigned *)((char *)r->cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)((char *)r->cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq + p.cq_off.cqes);
	return 0;
}

static void ring_exit(struct ring *r)
{
	munmap(r->sqes, r->sqe_sz);
	munmap(r->cq, r->cq_sz);
	munmap(r->sq, r->sq_sz);
	close(r->fd);
}

/* IORING_OP_READ_FIXED of len bytes at off of fd into buf (fixed buffer 0). */
static int ring_read_fixed(struct ring *r, int fd, void *buf, unsigned len, off_t off)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ_FIXED;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->off = (uint64_t)off;
	sqe->buf_index = 0;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	head = *r->cq_head;
	T_ASSERT(head != __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE));
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* ------------------------------------------------------------- test */

static uint8_t pat(size_t i, unsigned gen)
{
	return (uint8_t)(i * 131 + (i >> 9) * 7 + gen * 29 + 1);
}

static void check_bytes(const uint8_t *d, unsigned gen_lo, size_t lo, size_t hi, unsigned gen)
{
	/* bytes [lo, hi) carry generation gen, the others gen_lo */
	for (size_t i = 0; i < ARR_LEN; i++) {
		uint8_t want = (i >= lo && i < hi) ? pat(i, gen) : pat(i, gen_lo);

		if (d[i] != want)
			T_FAIL("array byte %zu: %#x, want %#x", i, d[i], want);
	}
}

static void churn(kgc_thread *t, kgc_type_id node, int n)
{
	for (int i = 0; i < n; i++) {
		T_ASSERT(kgc_alloc(t, node) != NULL);
		if (i % 64 == 0)
			T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 3000) != NULL);
	}
}

int main(void)
{
	static const uint32_t offs[2] = { N_LEFT, N_RIGHT };
	struct kgc_type_desc nd = { .name = "node", .payload_size = 24, .nrefs = 2, .ref_offsets = offs };
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_type_id node;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	kgc_obj arr;
	uint8_t *d, *buf, *src;
	size_t boff, rs;
	struct ring ring;
	struct iovec iov;
	struct kgc_stats s;
	int err, mfd;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = (size_t)32 << 20;
	o.region_size = (size_t)1 << 20;
	o.young_size = (size_t)4 << 20;
	h = t_kmod_heap(&o);
	err = ring_init(&ring);
	if (err) {
		T_ASSERT_EQ(kgc_heap_destroy(h), 0);
		printf("SKIP: io_uring unavailable: %s\n", strerror(-err));
		return T_SKIP;
	}
	T_ASSERT_EQ(kgc_type_register(h, &nd, &node), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	rs = kgc_heap_region_size(h);
	kgc_frame_push(t, &f, slots, 2, NULL);

	/* victim then array, in the same eden region */
	for (int tries = 0;; tries++) {
		T_ASSERT(tries < 8);
		slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), VICTIM_LEN);
		T_ASSERT(slots[1]);
		slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARR_LEN);
		T_ASSERT(slots[0]);
		if ((uintptr_t)slots[1] / rs == (uintptr_t)slots[0] / rs && slots[1] < slots[0])
			break;
	}
	arr = slots[0];
	T_ASSERT_EQ(region_of(h, arr)->type, RT_EDEN);
	d = kgc_array_data(arr);
	for (size_t i = 0; i < ARR_LEN; i++)
		d[i] = pat(i, 0);
	slots[1] = NULL;	/* the victim dies */

	/* register 16 whole pages inside the elements: the only pin is the kernel's */
	buf = (uint8_t *)ALIGN_UP((uintptr_t)d, PG);
	boff = (size_t)(buf - d);
	T_ASSERT(boff + BUF_LEN <= ARR_LEN);
	iov.iov_base = buf;
	iov.iov_len = BUF_LEN;
	if (syscall(__NR_io_uring_register, ring.fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0)
		T_FAIL("IORING_REGISTER_BUFFERS: %s", strerror(errno));
	printf("array %p, fixed buffer %p+%u (region %zu)\n", (void *)arr, (void *)buf, BUF_LEN,
	       (size_t)(region_of(h, arr) - h->regions));

	/* young and full collections, with garbage around: the array stays put */
	for (int i = 0; i < 6; i++) {
		churn(t, node, 20000);
		T_ASSERT_EQ(kgc_collect(t, (i % 3 == 2) ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
		T_ASSERT(slots[0] == arr);
		check_bytes(kgc_array_data(slots[0]), 0, 0, 0, 0);
		if (i == 0) {
			s = t_stats(h);
			T_ASSERT(s.evac_fail_kernel_pinned >= 1);	/* the eden region failed */
			T_ASSERT(s.pinned_bytes > 0);
			T_ASSERT_EQ(region_of(h, arr)->type, RT_OLD);	/* old in place */
		}
	}
	s = t_stats(h);
	printf("pinned phase: young %llu full %llu, evac_fail_kernel_pinned %llu, evac_fail_pinned %llu\n",
	       (unsigned long long)s.young_gcs, (unsigned long long)s.full_gcs,
	       (unsigned long long)s.evac_fail_kernel_pinned, (unsigned long long)s.evac_fail_pinned);
	T_ASSERT(s.young_gcs >= 4 && s.full_gcs >= 2);
	T_ASSERT_EQ(s.evac_fail_pinned, 0);	/* no user pin was involved */
	T_ASSERT(s.regions_pinned >= 1);	/* counts the kernel's pin too */

	/* the kernel's pages are still the array's: READ_FIXED lands in its bytes */
	src = malloc(BUF_LEN);
	T_ASSERT(src);
	for (size_t i = 0; i < BUF_LEN; i++)
		src[i] = pat(boff + i, 1);
	mfd = (int)syscall(__NR_memfd_create, "kgc-src", 0);
	T_ASSERT(mfd >= 0);
	T_ASSERT_EQ(pwrite(mfd, src, BUF_LEN, 0), BUF_LEN);
	T_ASSERT_EQ(ring_read_fixed(&ring, mfd, buf, BUF_LEN, 0), BUF_LEN);
	T_ASSERT(slots[0] == arr);
	check_bytes(kgc_array_data(slots[0]), 0, boff, boff + BUF_LEN, 1);
	close(mfd);
	free(src);

	/* unregistered: the region is movable again; a full GC slides the array
	 * down over the dead victim below it */
	if (syscall(__NR_io_uring_register, ring.fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
		T_FAIL("IORING_UNREGISTER_BUFFERS: %s", strerror(errno));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(slots[0] != arr);
	T_ASSERT(slots[0] < arr);
	T_ASSERT_EQ(kgc_array_length(slots[0]), ARR_LEN);
	check_bytes(kgc_array_data(slots[0]), 0, boff, boff + BUF_LEN, 1);
	T_ASSERT_EQ(t_stats(h).evac_fail_kernel_pinned, s.evac_fail_kernel_pinned);
	/* and young GCs leave it intact too */
	churn(t, node, 20000);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check_bytes(kgc_array_data(slots[0]), 0, boff, boff + BUF_LEN, 1);

	ring_exit(&ring);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("ok: array kept in place while registered, moved after unregister\n");
	return 0;
}
