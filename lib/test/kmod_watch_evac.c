/* kmod backend: the collector learns by itself when the kernel lets go of a
 * retained region. An io_uring fixed-buffer registration over a byte array
 * (a kernel pin only) makes a young collection fail to evacuate the array's
 * region: it is retained, old in place, and the library arms a pin-drop
 * watch on it (KGC_IOC_PIN_WATCH). Once the buffer is unregistered the
 * watch fires, and the thread kgc-kpinwatch runs a young collection that
 * evacuates the array and frees the region - the test neither allocates
 * nor collects after unregistering; it waits in native state, at most
 * WAIT_MS, and then checks the array's contents. Skips unless the backend
 * is kmod (and the module has watches).
 *
 * With KGC_TEST_KPIN_WATCH_OFF=1 the library arms no watch and starts no
 * thread: then the test must fail (it did: "retained region not evacuated").
 */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define PG 4096u
#define ARR_LEN (64u * 1024 + 2 * PG)	/* holds 16 whole pages wherever it lands */
#define BUF_LEN (64u * 1024)
#define WAIT_MS 5000

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

/* ------------------------------------------------------------- test */

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 131 + (i >> 9) * 7 + 1);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* the region's state, read under the heap lock (collections hold it) */
static void region_state(kgc_heap *h, uint32_t idx, int *type, int *retained)
{
	pthread_mutex_lock(&h->lock);
	*type = h->regions[idx].type;
	*retained = h->regions[idx].retained;
	pthread_mutex_unlock(&h->lock);
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[1] = { 0 };
	struct kgc_frame f;
	kgc_obj arr;
	uint8_t *d, *buf;
	uint32_t ridx;
	struct ring ring;
	struct iovec iov;
	struct kgc_stats s0, s;
	int err, type = -1, retained = -1;
	unsigned waited = 0;

	const char *off_env = getenv("KGC_TEST_KPIN_WATCH_OFF");
	bool watch_off = off_env && atoi(off_env);

	kgci_kpinwatch_test_off(watch_off);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = (size_t)32 << 20;
	o.region_size = (size_t)1 << 20;
	o.young_size = (size_t)4 << 20;
	h = t_kmod_heap(&o);
	if (!h->be.pin_watch) {
		T_ASSERT_EQ(kgc_heap_destroy(h), 0);
		T_SKIP_IF(1, "the module has no pin-drop watches (KGC_FEAT_PIN_WATCH)");
	}
	err = ring_init(&ring);
	if (err) {
		T_ASSERT_EQ(kgc_heap_destroy(h), 0);
		printf("SKIP: io_uring unavailable: %s\n", strerror(-err));
		return T_SKIP;
	}
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 1, NULL);

	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARR_LEN);
	T_ASSERT(slots[0]);
	arr = slots[0];
	ridx = region_index(h, arr);
	T_ASSERT_EQ(h->regions[ridx].type, RT_EDEN);
	d = kgc_array_data(arr);
	for (size_t i = 0; i < ARR_LEN; i++)
		d[i] = pat(i);
	buf = (uint8_t *)ALIGN_UP((uintptr_t)d, PG);
	T_ASSERT((size_t)(buf - d) + BUF_LEN <= ARR_LEN);
	iov.iov_base = buf;
	iov.iov_len = BUF_LEN;
	if (syscall(__NR_io_uring_register, ring.fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0)
		T_FAIL("IORING_REGISTER_BUFFERS: %s", strerror(errno));

	/* a young collection: the region fails evacuation (kernel pins), retained */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(slots[0] == arr);
	T_ASSERT_EQ(h->regions[ridx].type, RT_OLD);
	T_ASSERT_EQ(h->regions[ridx].retained, 1);
	s0 = t_stats(h);
	T_ASSERT(s0.evac_fail_kernel_pinned >= 1);
	printf("array %p in region %u: retained, kernel-pinned; watches armed %llu\n", (void *)arr, ridx,
	       (unsigned long long)s0.kpin_watch_armed);
	if (!watch_off)
		T_ASSERT(s0.kpin_watch_armed >= 1);
	/* still pinned: nothing fires, nothing collects */
	kgc_enter_native(t);
	sleep_ms(300);
	kgc_leave_native(t);
	s = t_stats(h);
	T_ASSERT_EQ(s.kpin_watch_fired, 0);
	T_ASSERT_EQ(s.young_gcs, s0.young_gcs);
	T_ASSERT(slots[0] == arr);

	/* the kernel lets go; from now on no allocation and no kgc_collect here:
	 * wait in native state (never holding up the watch's collection) */
	if (syscall(__NR_io_uring_register, ring.fd, IORING_UNREGISTER_BUFFERS, NULL, 0) < 0)
		T_FAIL("IORING_UNREGISTER_BUFFERS: %s", strerror(errno));
	kgc_enter_native(t);
	for (;;) {
		region_state(h, ridx, &type, &retained);
		if (!retained || waited >= WAIT_MS)
			break;
		sleep_ms(10);
		waited += 10;
	}
	kgc_leave_native(t);
	s = t_stats(h);
	printf("after %u ms: region %u %s%s; watches fired %llu, watch collections %llu, young %llu -> %llu\n",
	       waited, ridx, kgci_region_type_name(type), retained ? " (retained)" : "",
	       (unsigned long long)s.kpin_watch_fired, (unsigned long long)s.kpin_watch_gcs,
	       (unsigned long long)s0.young_gcs, (unsigned long long)s.young_gcs);
	if (retained)
		T_FAIL("retained region %u not evacuated %u ms after the kernel's pins dropped", ridx, WAIT_MS);
	T_ASSERT(s.kpin_watch_fired >= 1);
	T_ASSERT(s.kpin_watch_gcs >= 1);
	T_ASSERT(s.young_gcs > s0.young_gcs);
	T_ASSERT_EQ(s.full_gcs, s0.full_gcs);
	/* moved out, freed region, contents intact */
	T_ASSERT(slots[0] != arr);
	T_ASSERT(region_index(h, slots[0]) != ridx);
	T_ASSERT(h->regions[ridx].type != RT_OLD || !h->regions[ridx].retained);
	T_ASSERT_EQ(kgc_array_length(slots[0]), ARR_LEN);
	d = kgc_array_data(slots[0]);
	for (size_t i = 0; i < ARR_LEN; i++)
		if (d[i] != pat(i))
			T_FAIL("array byte %zu: %#x, want %#x", i, d[i], pat(i));

	ring_exit(&ring);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);	/* stops kgc-kpinwatch */
	printf("ok: the watch's collection evacuated the retained region %u ms after unregister\n", waited);
	return 0;
}
