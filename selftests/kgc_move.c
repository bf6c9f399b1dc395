// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: KGC_IOC_REGION_MOVE - pages of a region range become the
 * pages of another range (uapi/kgc.h), with one behaviour per test.
 */
#include <liburing.h>
#include <pthread.h>
#include <sys/swap.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

_Static_assert(sizeof(struct kgc_region_move) == KGC_REGION_MOVE_SIZE,
	       "region_move");

#define SEED	0x6b67636dU

static int kgc_move(int fd, uint32_t src, uint32_t dst, uint32_t count,
		    struct kgc_region_move *out)
{
	struct kgc_region_move mv = {
		.src = src, .dst = dst, .count = count,
		.busy_region = UINT32_MAX,
	};
	int ret = kgc_ioctl(fd, KGC_IOC_REGION_MOVE, &mv);

	if (out)
		*out = mv;
	return ret;
}

static struct kgc_dev_stats stats(int fd)
{
	struct kgc_dev_stats st;

	memset(&st, 0xff, sizeof(st));
	kgc_ioctl(fd, KGC_IOC_STATS, &st);
	return st;
}

/* The word every 8 bytes of page @i of a pattern @tag holds. */
static uint64_t pat(uint32_t tag, size_t i)
{
	return ((uint64_t)tag << 32) ^ (i * 0x9e3779b97f4a7c15ULL) ^ SEED;
}

static void fill(char *p, size_t pages, long pg, uint32_t tag)
{
	size_t i, w;

	for (i = 0; i < pages; i++)
		for (w = 0; w < pg / 8; w++)
			((uint64_t *)(p + i * pg))[w] = pat(tag, i);
}

/* Index of the first page of @p not holding pattern @tag, or -1. */
static long check(const char *p, size_t pages, long pg, uint32_t tag)
{
	size_t i, w;

	for (i = 0; i < pages; i++)
		for (w = 0; w < pg / 8; w++)
			if (((const uint64_t *)(p + i * pg))[w] != pat(tag, i))
				return i;
	return -1;
}

/* Pages of [p, p + len) resident in the heap's page cache. */
static long resident(void *p, size_t len, long pg)
{
	unsigned char vec[len / pg];
	long n = 0;
	size_t i;

	if (mincore(p, len, vec))
		return -errno;
	for (i = 0; i < len / pg; i++)
		n += vec[i] & 1;
	return n;
}

FIXTURE(move) {
	int fd;
	long pg;
	size_t size;
	char *mem;
	struct kgc_heap_create hc;
	struct kgc_region_rec *table;
	char watch_interval[16];	/* to restore, if changed */
};

FIXTURE_VARIANT(move) {
	uint64_t region;
	uint32_t nr;
};

/* 1 MiB regions: small folios only; 2 MiB: huge folios where THP allows. */
FIXTURE_VARIANT_ADD(move, r1m) { .region = MiB, .nr = 8 };
FIXTURE_VARIANT_ADD(move, r2m) { .region = 2 * MiB, .nr = 8 };

FIXTURE_SETUP(move)
{
	struct kgc_info info;

	self->mem = MAP_FAILED;
	self->table = MAP_FAILED;
	self->pg = sysconf(_SC_PAGESIZE);
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV " (%s): kgc.ko not loaded?",
		     strerror(errno));
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	if (!(info.features & KGC_FEAT_REGION_MOVE))
		SKIP(return, "kgc.ko has no KGC_IOC_REGION_MOVE");
	ASSERT_EQ(0, kgc_create(self->fd, variant->region, variant->nr,
				&self->hc));
	self->size = self->hc.heap_size;
	self->mem = kgc_map(self->fd, self->size, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	self->table = kgc_map(self->fd, self->hc.table_size,
			      self->hc.table_offset);
	ASSERT_NE(MAP_FAILED, self->table);
}

#define WATCH_PARAM "/sys/module/kgc/parameters/watch_interval_ms"

FIXTURE_TEARDOWN(move)
{
	if (self->watch_interval[0])
		kgc_write_file(WATCH_PARAM, self->watch_interval);
	if (self->mem != MAP_FAILED)
		munmap(self->mem, self->size);
	if (self->table != MAP_FAILED)
		munmap(self->table, self->hc.table_size);
	if (self->fd >= 0)
		close(self->fd);
}

#define REG(i)		(self->mem + (size_t)(i) * variant->region)
#define RPAGES		(variant->region / self->pg)

TEST_F(move, bytes_arrive_and_source_reads_zero)
{
	static const uint32_t counts[] = { 1, 2, 3 };
	struct kgc_region_move mv;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		uint32_t n = counts[k];

		fill(REG(0), n * RPAGES, self->pg, 100 + k);
		memset(REG(4), 0x5a, n * variant->region);	/* dst old */
		ASSERT_EQ(0, kgc_move(self->fd, 0, 4, n, &mv));
		ASSERT_EQ(n * RPAGES, mv.moved_pages);
		ASSERT_EQ(-1, check(REG(4), n * RPAGES, self->pg, 100 + k));
		ASSERT_TRUE(all_zero(REG(0), n * variant->region));
		ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 8, NULL));
	}
}

TEST_F(move, moves_without_copying)
{
	struct kgc_dev_stats before, after;
	struct kgc_region_move mv;

	fill(REG(1), 2 * RPAGES, self->pg, 7);
	before = stats(self->fd);
	ASSERT_EQ(0, kgc_move(self->fd, 1, 5, 2, &mv));
	after = stats(self->fd);
	ASSERT_EQ(before.moves + 1, after.moves);
	/* At most the pages a per-CPU LRU batch may still hold (2 x 31). */
	TH_LOG("copied %llu of %u pages",
	       (unsigned long long)(after.move_copied_pages -
				    before.move_copied_pages), mv.moved_pages);
	ASSERT_LE(after.move_copied_pages - before.move_copied_pages, 64);
	ASSERT_EQ(-1, check(REG(5), 2 * RPAGES, self->pg, 7));
}

TEST_F(move, holes_stay_holes)
{
	struct kgc_region_move mv;
	size_t i;

	/* Every third page of region 2 touched, the rest never. */
	for (i = 0; i < RPAGES; i += 3)
		REG(2)[i * self->pg] = (char)(i | 1);
	memset(REG(6), 0x33, variant->region);
	ASSERT_EQ(0, kgc_move(self->fd, 2, 6, 1, &mv));
	/* A huge folio counts as resident at every index it covers. */
	if (resident(REG(6), variant->region, self->pg) == (long)RPAGES &&
	    mv.moved_pages == RPAGES)
		SKIP(return, "region 2 got a huge folio: it has no holes");
	ASSERT_EQ((RPAGES + 2) / 3, mv.moved_pages);
	ASSERT_EQ((long)(RPAGES + 2) / 3,
		  resident(REG(6), variant->region, self->pg));
	ASSERT_EQ(0, resident(REG(2), variant->region, self->pg));
	for (i = 0; i < RPAGES; i++)
		ASSERT_EQ(i % 3 ? 0 : (char)(i | 1), REG(6)[i * self->pg]);
}

TEST_F(move, destination_pages_released_and_table_follows)
{
	struct kgc_dev_stats before, after;
	struct kgc_region_move mv;

	memset(REG(0), 1, variant->region);
	memset(REG(3), 2, variant->region);
	ASSERT_EQ(0, kgc_commit(self->fd, 0, 1, 0));
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, 8));	/* refresh counts */
	ASSERT_EQ(RPAGES, self->table[3].committed_pages);
	before = stats(self->fd);
	ASSERT_EQ(2 * RPAGES, before.heap_pages);
	ASSERT_EQ(0, kgc_move(self->fd, 0, 3, 1, &mv));
	after = stats(self->fd);
	ASSERT_EQ(RPAGES, after.heap_pages);
	ASSERT_EQ(before.pages_freed + RPAGES, after.pages_freed);
	ASSERT_EQ(0, self->table[0].committed_pages);
	ASSERT_EQ(0, self->table[0].flags);
	ASSERT_EQ(RPAGES, self->table[3].committed_pages);
	ASSERT_EQ(KGC_RF_COMMITTED, self->table[3].flags);
	ASSERT_EQ(1, REG(3)[0]);
	ASSERT_EQ(1, REG(3)[variant->region - 1]);
	if (kgc_pages_held() >= 0)
		ASSERT_LE(RPAGES, kgc_pages_held());
}

TEST_F(move, invalid_arguments)
{
	struct kgc_region_move mv = { .src = 0, .dst = 4, .count = 1 };

	mv.flags = 1;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_REGION_MOVE, &mv));
	mv.flags = 0;
	mv.reserved[1] = 1;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_REGION_MOVE, &mv));
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 0, 4, 0, NULL));
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 0, 8, 1, NULL));
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 8, 0, 1, NULL));
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 0, 5, 4, NULL));	/* dst end */
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, UINT32_MAX, 0, 2, NULL));
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 0, 1, UINT32_MAX, NULL));
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 2, 2, 1, NULL));	/* src == dst */
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 0, 2, 3, NULL));	/* overlap */
	ASSERT_EQ(-EINVAL, kgc_move(self->fd, 3, 1, 3, NULL));
	ASSERT_EQ(0, kgc_move(self->fd, 0, 3, 3, NULL));	/* adjacent */
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_REGION_MOVE,
				     (void *)16));
}

TEST_F(move, read_only_fd_and_no_heap)
{
	struct kgc_region_move mv = { .src = 0, .dst = 1, .count = 1 };
	int ro = open(KGC_DEV, O_RDONLY | O_CLOEXEC);
	int fresh = kgc_open();

	ASSERT_GE(ro, 0);
	ASSERT_GE(fresh, 0);
	/* EBADF before the argument is read: a bad pointer does not matter. */
	ASSERT_EQ(-EBADF, kgc_ioctl(ro, KGC_IOC_REGION_MOVE, (void *)16));
	ASSERT_EQ(-ENODEV, kgc_ioctl(fresh, KGC_IOC_REGION_MOVE, &mv));
	close(ro);
	close(fresh);
}

TEST_F(move, user_pin_refuses_and_nothing_moves)
{
	struct kgc_dev_stats before, after;
	struct kgc_region_move mv;

	memset(REG(0), 0x11, 3 * variant->region);
	memset(REG(4), 0x22, 3 * variant->region);
	__atomic_add_fetch(&self->table[5].user_pins, 1, __ATOMIC_SEQ_CST);
	before = stats(self->fd);
	ASSERT_EQ(-EBUSY, kgc_move(self->fd, 0, 4, 3, &mv));
	ASSERT_EQ(5, mv.busy_region);
	after = stats(self->fd);
	ASSERT_EQ(before.move_busy + 1, after.move_busy);
	ASSERT_EQ(before.heap_pages, after.heap_pages);
	ASSERT_EQ(0x11, REG(0)[0]);
	ASSERT_EQ(0x22, REG(4)[0]);
	ASSERT_EQ(0x22, REG(6)[variant->region - 1]);
	/* The lowest busy region of both ranges. */
	__atomic_add_fetch(&self->table[1].user_pins, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(-EBUSY, kgc_move(self->fd, 4, 0, 3, &mv));
	ASSERT_EQ(1, mv.busy_region);
	__atomic_sub_fetch(&self->table[1].user_pins, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&self->table[5].user_pins, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, kgc_move(self->fd, 0, 4, 3, NULL));
	ASSERT_EQ(0x11, REG(4)[0]);
}

TEST_F(move, kernel_pin_refuses_and_nothing_moves)
{
	struct iovec iov = { .iov_base = NULL, .iov_len = 2 * self->pg };
	struct kgc_region_move mv;
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret < 0)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	memset(REG(0), 0x44, 2 * variant->region);
	memset(REG(2), 0x55, 2 * variant->region);
	iov.iov_base = REG(3) + 8 * self->pg;
	ASSERT_EQ(0, io_uring_register_buffers(&ring, &iov, 1));
	ASSERT_EQ(-EBUSY, kgc_move(self->fd, 0, 2, 2, &mv));
	ASSERT_EQ(3, mv.busy_region);
	ASSERT_NE(0, self->table[3].kernel_pins);
	ASSERT_EQ(0x44, REG(1)[0]);
	ASSERT_EQ(0x55, REG(3)[0]);
	ASSERT_EQ(-EBUSY, kgc_move(self->fd, 3, 6, 1, &mv));
	ASSERT_EQ(3, mv.busy_region);
	ASSERT_EQ(0, io_uring_unregister_buffers(&ring));
	io_uring_queue_exit(&ring);
	ASSERT_EQ(0, kgc_move(self->fd, 2, 6, 2, NULL));
	ASSERT_EQ(0x55, REG(7)[0]);
}

TEST_F(move, second_mapping_and_forked_child_see_the_move)
{
	char *other = kgc_map(self->fd, self->size, 0);
	int to_child[2], to_parent[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, other);
	fill(REG(0), RPAGES, self->pg, 9);
	ASSERT_EQ(-1, check(other, RPAGES, self->pg, 9));
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* Heap mappings are not inherited: map it from the fd. */
		char *mine = kgc_map(self->fd, self->size, 0);

		if (mine == MAP_FAILED || check(mine, RPAGES, self->pg, 9) != -1)
			_exit(1);
		if (write(to_parent[1], &c, 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(2);
		if (check(mine + 5 * variant->region, RPAGES, self->pg, 9) != -1)
			_exit(3);
		_exit(all_zero(mine, variant->region) ? 0 : 4);
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	ASSERT_EQ(0, kgc_move(self->fd, 0, 5, 1, NULL));
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(-1, check(other + 5 * variant->region, RPAGES, self->pg, 9));
	ASSERT_TRUE(all_zero(other, variant->region));
	munmap(other, self->size);
}

static int watch_op(int fd, uint32_t op, uint64_t *bm)
{
	struct kgc_pin_watch w = {
		.first = 0, .count = 8, .bitmap_ptr = (uintptr_t)bm, .op = op,
	};
	int ret = kgc_ioctl(fd, KGC_IOC_PIN_WATCH, &w);

	return ret ? ret : (int)w.nr_armed;
}

TEST_F(move, watch_stays_armed)
{
	uint64_t bm = 1ULL << 2, none = 0;
	struct iovec iov = { .iov_base = REG(2), .iov_len = self->pg };
	struct io_uring ring;
	int ret, fd;

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret < 0)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	/* No recheck during the test: the watch fires only when rechecked. */
	fd = open(WATCH_PARAM, O_RDONLY);
	if (fd < 0 || read(fd, self->watch_interval,
			   sizeof(self->watch_interval) - 1) <= 0 ||
	    kgc_write_file(WATCH_PARAM, "60000")) {
		self->watch_interval[0] = 0;
		SKIP(return, "cannot read and write " WATCH_PARAM);
	}
	close(fd);
	/* Armed while pinned, so it does not fire at once; then unpinned. */
	ASSERT_EQ(0, io_uring_register_buffers(&ring, &iov, 1));
	ASSERT_EQ(1, watch_op(self->fd, KGC_WATCH_ARM, &bm));
	ASSERT_EQ(0, io_uring_unregister_buffers(&ring));
	io_uring_queue_exit(&ring);

	memset(REG(6), 1, variant->region);
	ASSERT_EQ(0, kgc_move(self->fd, 6, 2, 1, NULL));
	/* Region 2's watch is still armed and has not fired. */
	ASSERT_EQ(1, watch_op(self->fd, KGC_WATCH_DISARM, &none));
	ASSERT_EQ(1, watch_op(self->fd, KGC_WATCH_FIRED, &none));
	ASSERT_EQ(0, none);
	ASSERT_EQ(0, watch_op(self->fd, KGC_WATCH_DISARM, &bm));
}

/*
 * Threads reading the whole heap while a 2-region range rotates through
 * four places. A page may change between two reads (moved away: zeros;
 * moved in: the pattern), so a tear is counted only when the page's first
 * word reads the same before and after a word that differs from it: with
 * four places, a page returns only after four moves. A word that is
 * neither zero nor its page's pattern is a misplaced page.
 */
struct racer {
	volatile char *base;
	size_t len;
	size_t range_pages;
	long pg;
	volatile int *stop;
	long torn, misplaced;
};

static void *race_reader(void *arg)
{
	struct racer *r = arg;
	size_t i, w;

	while (!*r->stop) {
		for (i = 0; i < r->len / r->pg; i++) {
			const volatile uint64_t *p =
				(const volatile uint64_t *)(r->base + i * r->pg);
			uint64_t first = p[0], v;

			if (first && first != pat(3, i % r->range_pages))
				r->misplaced++;
			for (w = 1; w < r->pg / 8; w += 61) {
				v = p[w];
				if (v != first && p[0] == first)
					r->torn++;
			}
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(move, racing_readers_never_see_a_torn_page, 240)
{
	struct racer r[2];
	pthread_t t[2];
	volatile int stop = 0;
	int i, ret = 0;

	fill(REG(0), 2 * RPAGES, self->pg, 3);
	for (i = 0; i < 2; i++) {
		r[i] = (struct racer){ .base = REG(i * 4), .pg = self->pg,
				       .len = 4 * variant->region,
				       .range_pages = 2 * RPAGES,
				       .stop = &stop };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, race_reader, &r[i]));
	}
	/* 0 -> 2 -> 4 -> 6 -> 0 ..., ten rounds. */
	for (i = 0; i < 40 && !ret; i++)
		ret = kgc_move(self->fd, (i % 4) * 2, ((i + 1) % 4) * 2, 2, NULL);
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, r[0].misplaced + r[1].misplaced);
	ASSERT_EQ(0, r[0].torn + r[1].torn);
	ASSERT_EQ(-1, check(REG(0), 2 * RPAGES, self->pg, 3));
	ASSERT_TRUE(all_zero(REG(2), 6 * variant->region));
}

#define RAMDISK		"/dev/ram0"
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

/*
 * Source pages swapped out (MADV_PAGEOUT, swap on a ramdisk) are swapped
 * in by the move and arrive intact; the source reads zero. The swap is
 * turned off in the teardown, whatever happened: later tests (kgc_pin,
 * kgc_shmem) use the ramdisk.
 */
FIXTURE(swap) {
	int fd;
	int swap_on;
	char *mem;
};

FIXTURE_SETUP(swap)
{
	int rfd;

	self->mem = MAP_FAILED;
	self->swap_on = 0;
	self->fd = -1;
	if (geteuid())
		SKIP(return, "needs root");
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	rfd = open(RAMDISK, O_RDWR);
	if (rfd < 0)
		SKIP(return, RAMDISK ": %s (no ramdisk for swap)", strerror(errno));
	ASSERT_EQ(0, make_swap(rfd, 32 * MiB / 4096));
	fsync(rfd);
	close(rfd);
	if (swapon(RAMDISK, 0))
		SKIP(return, "swapon " RAMDISK ": %s", strerror(errno));
	self->swap_on = 1;
}

FIXTURE_TEARDOWN(swap)
{
	if (self->mem != MAP_FAILED)
		munmap(self->mem, 4 * MiB);
	if (self->fd >= 0)
		close(self->fd);
	if (self->swap_on && swapoff(RAMDISK))
		TH_LOG("swapoff " RAMDISK ": %s", strerror(errno));
}

TEST_F(swap, swapped_out_source_pages_move)
{
	size_t len = MiB, pages = MiB / 4096;
	struct kgc_region_move mv;
	long pg = sysconf(_SC_PAGESIZE), out;
	char *mem;

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 4, NULL));
	mem = self->mem = kgc_map(self->fd, 4 * MiB, 0);
	ASSERT_NE(MAP_FAILED, mem);
	fill(mem, pages, pg, 21);
	ASSERT_EQ(0, madvise(mem, len, MADV_PAGEOUT));
	out = pages - resident(mem, len, pg);
	TH_LOG("%ld of %zu pages swapped out", out, pages);
	if (out == 0)
		SKIP(return, "MADV_PAGEOUT swapped nothing out");
	ASSERT_EQ(pages, kgc_heap_pages(self->fd));	/* swapped ones count */
	ASSERT_EQ(0, kgc_move(self->fd, 0, 2, 1, &mv));
	ASSERT_EQ(pages, mv.moved_pages);
	/* Swapped in and moved: none left in swap, none at the source. */
	ASSERT_EQ(pages, kgc_heap_pages(self->fd));
	ASSERT_EQ(pages, resident(mem + 2 * MiB, len, pg));
	ASSERT_EQ(0, resident(mem, len, pg));
	ASSERT_EQ(-1, check(mem + 2 * MiB, pages, pg, 21));
	ASSERT_TRUE(all_zero(mem, len));	/* faults zero pages in */
}

TEST_HARNESS_MAIN
