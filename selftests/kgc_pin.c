// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: kernel pins on heap pages - io_uring fixed buffers,
 * O_DIRECT - and what PIN_QUERY, UNCOMMIT and close do about them.
 */
#include <liburing.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define NR_REGIONS	4
#define REGION		MiB
#define RAMDISK		"/dev/ram0"

FIXTURE(pin) {
	int fd;
	long pg;
	size_t size;
	char *mem;
	struct kgc_heap_create hc;
	struct kgc_region_rec *table;
	int ring_ok;
	struct io_uring ring;
};

FIXTURE_SETUP(pin)
{
	self->mem = MAP_FAILED;
	self->table = MAP_FAILED;
	self->ring_ok = 0;
	self->pg = sysconf(_SC_PAGESIZE);
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV " (%s): kgc.ko not loaded?",
		     strerror(errno));
	ASSERT_EQ(0, kgc_create(self->fd, REGION, NR_REGIONS, &self->hc));
	self->size = self->hc.heap_size;
	self->mem = kgc_map(self->fd, self->size, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	self->table = kgc_map(self->fd, self->hc.table_size,
			      self->hc.table_offset);
	ASSERT_NE(MAP_FAILED, self->table);
}

FIXTURE_TEARDOWN(pin)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->mem != MAP_FAILED)
		munmap(self->mem, self->size);
	if (self->table != MAP_FAILED)
		munmap(self->table, self->hc.table_size);
	if (self->fd >= 0)
		close(self->fd);
}

/* Sets up self->ring, or returns a reason to skip. */
static const char *ring_init(FIXTURE_DATA(pin) *self)
{
	static char why[96];
	int ret = io_uring_queue_init(4, &self->ring, 0);

	if (ret < 0) {
		snprintf(why, sizeof(why), "io_uring unavailable: %s",
			 strerror(-ret));
		return why;
	}
	self->ring_ok = 1;
	return NULL;
}

/* IORING_OP_READ_FIXED of @len bytes at @off of @fd into @buf (buffer 0). */
static int read_fixed(struct io_uring *ring, int fd, void *buf, unsigned int len,
		      off_t off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_read_fixed(sqe, fd, buf, len, off, 0);
	ret = io_uring_submit(ring);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* A /tmp file holding @len bytes of pattern @c; returns its fd. */
static int pattern_file(size_t len, int c)
{
	char name[] = "/tmp/kgc_pin.XXXXXX";
	char *buf = malloc(len);
	int fd = mkstemp(name);

	if (fd < 0 || !buf)
		return -1;
	unlink(name);
	memset(buf, c, len);
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	free(buf);
	return fd;
}

TEST_F(pin, io_uring_fixed_buffer_blocks_uncommit)
{
	char *buf = self->mem + REGION + 4 * self->pg;
	size_t len = 4 * self->pg;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	const char *why;
	uint32_t busy = 0;
	int file;

	why = ring_init(self);
	if (why)
		SKIP(return, "%s", why);
	memset(self->mem, 0x10, 2 * REGION);

	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
	ASSERT_EQ(1 << 1, kgc_pinned(self->fd, 0, NR_REGIONS));
	ASSERT_EQ(KGC_RF_COMMITTED | KGC_RF_KPINNED, self->table[1].flags);
	ASSERT_EQ(4, self->table[1].kernel_pins);
	ASSERT_EQ(0, self->table[0].kernel_pins);

	/* The kernel writes through the pinned pages into the heap. */
	file = pattern_file(len, 0x7e);
	ASSERT_GE(file, 0);
	ASSERT_EQ((int)len, read_fixed(&self->ring, file, buf, len, 0));
	ASSERT_EQ(0x7e, buf[0]);
	ASSERT_EQ(0x7e, buf[len - 1]);
	ASSERT_EQ(0x10, buf[len]);
	close(file);

	ASSERT_EQ(-EBUSY, kgc_uncommit(self->fd, 0, NR_REGIONS, &busy));
	ASSERT_EQ(1, busy);
	ASSERT_EQ(0x10, self->mem[0]);	/* nothing released */
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));

	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, NR_REGIONS));
	ASSERT_EQ(KGC_RF_COMMITTED, self->table[1].flags);
	ASSERT_EQ(0, kgc_uncommit(self->fd, 1, 1, NULL));
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
	ASSERT_TRUE(all_zero(self->mem, 2 * REGION));
}

TEST_F(pin, io_uring_register_faults_in_untouched_region)
{
	struct iovec iov = { .iov_base = self->mem + 3 * REGION,
			     .iov_len = REGION };
	const char *why = ring_init(self);

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
	ASSERT_EQ(REGION / self->pg, kgc_heap_pages(self->fd));
	/* Uncommit finds the pin without a query and records it. */
	ASSERT_EQ(0, self->table[3].kernel_pins);
	ASSERT_EQ(-EBUSY, kgc_uncommit(self->fd, 3, 1, NULL));
	ASSERT_EQ(REGION / self->pg, self->table[3].kernel_pins);
	ASSERT_EQ(KGC_RF_COMMITTED | KGC_RF_KPINNED, self->table[3].flags);
	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 3, 1, NULL));
}

TEST_F(pin, odirect_read_from_ramdisk_lands_in_heap)
{
	size_t len = 16 * self->pg;
	/* Straddles the boundary between regions 0 and 1. */
	char *dst = self->mem + REGION - 8 * self->pg;
	unsigned char *src;
	size_t i;
	int rfd;

	rfd = open(RAMDISK, O_RDWR | O_DIRECT);
	if (rfd < 0)
		SKIP(return, RAMDISK ": %s (brd not loaded?)", strerror(errno));
	ASSERT_EQ(0, posix_memalign((void **)&src, self->pg, len));
	for (i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	ASSERT_EQ((ssize_t)len, pwrite(rfd, src, len, 0));

	ASSERT_EQ((ssize_t)len, pread(rfd, dst, len, 0));
	ASSERT_EQ(0, memcmp(dst, src, len));

	/* And back out of the heap with O_DIRECT writes. */
	memset(dst, 0xc3, len);
	ASSERT_EQ((ssize_t)len, pwrite(rfd, dst, len, 1 << 20));
	ASSERT_EQ((ssize_t)len, pread(rfd, src, len, 1 << 20));
	for (i = 0; i < len; i++)
		ASSERT_EQ(0xc3, src[i]);
	/* The DIO pins are gone once the syscalls return. */
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, NR_REGIONS));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	free(src);
	close(rfd);
}

TEST_F(pin, close_with_kernel_pin_leaks_nothing)
{
	char *buf = self->mem + 2 * REGION;
	size_t len = 8 * self->pg;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	long held0 = kgc_pages_held();
	const char *why;
	int file;

	if (held0 < 0)
		SKIP(return, KGC_PAGES_HELD ": %s", strerror(errno));
	why = ring_init(self);
	if (why)
		SKIP(return, "%s", why);
	memset(self->mem, 0x21, 3 * REGION);
	ASSERT_EQ(held0 + 3 * REGION / self->pg, kgc_pages_held());
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));

	/* Drop every reference to the heap: fd and mappings. */
	ASSERT_EQ(0, munmap(self->mem, self->size));
	ASSERT_EQ(0, munmap(self->table, self->hc.table_size));
	ASSERT_EQ(0, close(self->fd));
	self->mem = MAP_FAILED;
	self->table = MAP_FAILED;
	self->fd = -1;
	ASSERT_EQ(held0, kgc_pages_held());

	/* The pinned pages outlive the heap and still take I/O. */
	file = pattern_file(len, 0x42);
	ASSERT_GE(file, 0);
	ASSERT_EQ((int)len, read_fixed(&self->ring, file, buf, len, 0));
	close(file);

	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	io_uring_queue_exit(&self->ring);
	self->ring_ok = 0;
	ASSERT_EQ(held0, kgc_pages_held());
}

/* PIN_QUERY with KGC_PIN_QUERY_SELECT; bm is in/out. 0 or -errno. */
static int pin_select(int fd, uint32_t first, uint32_t count, uint64_t *bm,
		      uint32_t *nr)
{
	struct kgc_pin_query pq = {
		.first = first, .count = count, .flags = KGC_PIN_QUERY_SELECT,
		.bitmap_ptr = (uintptr_t)bm, .nr_pinned = UINT32_MAX,
	};
	int ret = kgc_ioctl(fd, KGC_IOC_PIN_QUERY, &pq);

	if (nr)
		*nr = pq.nr_pinned;
	return ret;
}

/*
 * The scoped query looks only at the selected regions: it reports their
 * kernel pins, leaves the others' bits 0 and their table records alone.
 */
TEST_F(pin, scoped_query_sees_only_selected_regions)
{
	struct iovec iov[2] = {
		{ .iov_base = self->mem + REGION, .iov_len = 2 * self->pg },
		{ .iov_base = self->mem + 3 * REGION, .iov_len = 3 * self->pg },
	};
	struct kgc_info info;
	const char *why;
	uint64_t bm;
	uint32_t nr;

	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	ASSERT_TRUE(info.features & KGC_FEAT_PIN_SELECT);
	why = ring_init(self);
	if (why)
		SKIP(return, "%s", why);
	memset(self->mem, 0x31, self->size);
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, iov, 2));

	bm = 0x3;		/* regions 0 and 1 */
	ASSERT_EQ(0, pin_select(self->fd, 0, NR_REGIONS, &bm, &nr));
	ASSERT_EQ(1 << 1, bm);
	ASSERT_EQ(1, nr);
	ASSERT_EQ(2, self->table[1].kernel_pins);
	/* Region 3 was not looked at. */
	ASSERT_EQ(0, self->table[3].kernel_pins);
	ASSERT_EQ(0, self->table[3].flags & KGC_RF_KPINNED);

	bm = 1 << 1;		/* region 3, relative to first = 2 */
	ASSERT_EQ(0, pin_select(self->fd, 2, 2, &bm, &nr));
	ASSERT_EQ(1 << 1, bm);
	ASSERT_EQ(1, nr);
	ASSERT_EQ(3, self->table[3].kernel_pins);
	ASSERT_EQ(KGC_RF_COMMITTED | KGC_RF_KPINNED, self->table[3].flags);

	bm = 0;			/* nothing selected: nothing to do */
	ASSERT_EQ(0, pin_select(self->fd, 0, NR_REGIONS, &bm, &nr));
	ASSERT_EQ(0, bm);
	ASSERT_EQ(0, nr);
	bm = 1 << 2 | 1 << 0;	/* unpinned ones only */
	ASSERT_EQ(0, pin_select(self->fd, 0, NR_REGIONS, &bm, &nr));
	ASSERT_EQ(0, bm);
	ASSERT_EQ(0, nr);

	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	bm = 0xf;
	ASSERT_EQ(0, pin_select(self->fd, 0, NR_REGIONS, &bm, &nr));
	ASSERT_EQ(0, bm);
	ASSERT_EQ(0, nr);
	ASSERT_EQ(KGC_RF_COMMITTED, self->table[3].flags);
}

TEST_F(pin, scoped_query_validation)
{
	struct kgc_pin_query pq = {
		.first = 0, .count = NR_REGIONS, .bitmap_ptr = 8,
		.flags = KGC_PIN_QUERY_SELECT,
	};
	uint64_t bm;

	/* A bit past count. */
	bm = 1 << NR_REGIONS;
	ASSERT_EQ(-EINVAL, pin_select(self->fd, 0, NR_REGIONS, &bm, NULL));
	bm = 1 << 2;
	ASSERT_EQ(-EINVAL, pin_select(self->fd, 2, 2, &bm, NULL));
	/* Unknown flag. */
	pq.flags = 2;
	pq.bitmap_ptr = (uintptr_t)&bm;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, &pq));
	/* Selection that cannot be read. */
	pq.flags = KGC_PIN_QUERY_SELECT;
	pq.bitmap_ptr = 8;
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, &pq));
	/* Range checks as without SELECT. */
	bm = 1;
	ASSERT_EQ(-EINVAL, pin_select(self->fd, NR_REGIONS, 1, &bm, NULL));
	ASSERT_EQ(-EINVAL, pin_select(self->fd, 0, 0, &bm, NULL));
}

TEST_HARNESS_MAIN
