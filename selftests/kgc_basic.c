// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: device, INFO and argument validation (no memory touched).
 */
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV " (%s): kgc.ko not loaded?",
		     strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, device_mode_0600)
{
	struct stat st;

	ASSERT_EQ(0, stat(KGC_DEV, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0600, st.st_mode & 07777);
}

TEST_F(dev, info)
{
	struct kgc_info info;
	uint64_t want = KGC_FEAT_REGION_TABLE | KGC_FEAT_PIN_QUERY |
			KGC_FEAT_STATS | KGC_FEAT_DEBUGFS | KGC_FEAT_POPULATE;
	int i;

	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	ASSERT_EQ(KGC_API_VERSION, info.api_version);
	ASSERT_EQ(sysconf(_SC_PAGESIZE), info.page_size);
	ASSERT_EQ(want, info.features & want);
	ASSERT_EQ(KGC_REGION_SHIFT_MIN, info.region_shift_min);
	ASSERT_EQ(KGC_REGION_SHIFT_MAX, info.region_shift_max);
	ASSERT_EQ(4096ULL << 20, info.max_heap_bytes);
	ASSERT_EQ(info.max_heap_bytes >> KGC_REGION_SHIFT_MIN, info.max_regions);
	ASSERT_EQ(sizeof(struct kgc_region_rec), info.region_rec_size);
	ASSERT_EQ(KGC_TABLE_OFFSET, info.table_offset);
	ASSERT_EQ(0, info.reserved0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, info.reserved[i]);
}

TEST_F(dev, create_valid)
{
	struct kgc_heap_create hc;

	ASSERT_EQ(0, kgc_create(self->fd, 2 * MiB, 3, &hc));
	ASSERT_EQ(6 * MiB, hc.heap_size);
	ASSERT_EQ(KGC_TABLE_OFFSET, hc.table_offset);
	ASSERT_EQ((uint64_t)sysconf(_SC_PAGESIZE), hc.table_size);
}

TEST_F(dev, create_bad_region_size)
{
	ASSERT_EQ(-EINVAL, kgc_create(self->fd, 0, 1, NULL));
	ASSERT_EQ(-EINVAL, kgc_create(self->fd, 3 * MiB, 1, NULL));
	ASSERT_EQ(-EINVAL, kgc_create(self->fd, MiB / 2, 1, NULL));
	ASSERT_EQ(-EINVAL, kgc_create(self->fd, 64 * MiB, 1, NULL));
	ASSERT_EQ(-EINVAL, kgc_create(self->fd, 1ULL << 63, 1, NULL));
	/* Nothing was created: a valid create still works. */
	ASSERT_EQ(0, kgc_create(self->fd, MiB, 1, NULL));
}

TEST_F(dev, create_zero_regions)
{
	ASSERT_EQ(-EINVAL, kgc_create(self->fd, MiB, 0, NULL));
}

TEST_F(dev, create_twice_eexist)
{
	ASSERT_EQ(0, kgc_create(self->fd, MiB, 2, NULL));
	ASSERT_EQ(-EEXIST, kgc_create(self->fd, MiB, 2, NULL));
	ASSERT_EQ(-EEXIST, kgc_create(self->fd, 4 * MiB, 1, NULL));
}

TEST_F(dev, create_over_cap_e2big)
{
	struct kgc_info info;
	uint32_t nr;

	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	nr = info.max_heap_bytes / (32 * MiB);
	ASSERT_EQ(-E2BIG, kgc_create(self->fd, 32 * MiB, nr + 1, NULL));
	ASSERT_EQ(-E2BIG, kgc_create(self->fd, 32 * MiB, UINT32_MAX, NULL));
	/* Exactly at the cap is fine (nothing is allocated until touched). */
	ASSERT_EQ(0, kgc_create(self->fd, 32 * MiB, nr, NULL));
}

TEST_F(dev, create_nonzero_reserved_einval)
{
	struct kgc_heap_create hc = { .region_size = MiB, .nr_regions = 1 };

	hc.reserved[2] = 1;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_HEAP_CREATE, &hc));
	memset(&hc, 0, sizeof(hc));
	hc.region_size = MiB;
	hc.nr_regions = 1;
	hc.flags = 1;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_HEAP_CREATE, &hc));
}

TEST_F(dev, mmap_before_create_enodev)
{
	void *p = kgc_map(self->fd, MiB, 0);

	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(ENODEV, errno);
}

TEST_F(dev, ioctls_before_create_enodev)
{
	ASSERT_EQ(-ENODEV, kgc_commit(self->fd, 0, 1, 0));
	ASSERT_EQ(-ENODEV, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_EQ(-ENODEV, kgc_pinned(self->fd, 0, 1));
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
}

TEST_F(dev, mmap_private_einval)
{
	void *p;

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 2, NULL));
	p = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);
}

TEST_F(dev, mmap_bad_range_einval)
{
	struct kgc_heap_create hc;
	long pg = sysconf(_SC_PAGESIZE);

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 2, &hc));
	/* Past the end of the heap. */
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, pg, 2 * MiB));
	ASSERT_EQ(EINVAL, errno);
	/* Starts inside, runs past the end. */
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, 2 * pg, 2 * MiB - pg));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, 3 * MiB, 0));
	ASSERT_EQ(EINVAL, errno);
	/* Table: only exactly table_size at table_offset. */
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, 2 * hc.table_size,
				      hc.table_offset));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, pg, hc.table_offset + pg));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, pg, hc.table_offset - pg));
	ASSERT_EQ(EINVAL, errno);
}

/*
 * The table also maps at KGC_TABLE_OFFSET_COMPAT (what 32-bit processes
 * are told, selftests/compat32): the same pages, the same size rule.
 */
TEST_F(dev, table_maps_at_compat_offset_too)
{
	struct kgc_region_rec *t, *t32;
	struct kgc_heap_create hc;
	long pg = sysconf(_SC_PAGESIZE);

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 2, &hc));
	t = kgc_map(self->fd, hc.table_size, KGC_TABLE_OFFSET);
	ASSERT_NE(MAP_FAILED, t);
	t32 = kgc_map(self->fd, hc.table_size, KGC_TABLE_OFFSET_COMPAT);
	ASSERT_NE(MAP_FAILED, t32);
	t32[1].user_pins = 7;
	ASSERT_EQ(7, t[1].user_pins);
	t[1].user_pins = 0;
	ASSERT_EQ(0, t32[1].user_pins);
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, 2 * hc.table_size,
				      KGC_TABLE_OFFSET_COMPAT));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, kgc_map(self->fd, pg, KGC_TABLE_OFFSET_COMPAT + pg));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, munmap(t, hc.table_size));
	ASSERT_EQ(0, munmap(t32, hc.table_size));
}

TEST_F(dev, mmap_subrange_ok)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p;

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 2, NULL));
	p = kgc_map(self->fd, 2 * pg, 2 * MiB - 2 * pg);
	ASSERT_NE(MAP_FAILED, p);
	p[pg] = 1;
	ASSERT_EQ(0, munmap(p, 2 * pg));
}

TEST_F(dev, range_validation_einval)
{
	struct kgc_region_range rr = { .first = 0, .count = 1 };

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 4, NULL));
	ASSERT_EQ(-EINVAL, kgc_commit(self->fd, 0, 0, 0));
	ASSERT_EQ(-EINVAL, kgc_commit(self->fd, 4, 1, 0));
	ASSERT_EQ(-EINVAL, kgc_commit(self->fd, 3, 2, 0));
	ASSERT_EQ(-EINVAL, kgc_commit(self->fd, 1, UINT32_MAX, 0));
	ASSERT_EQ(-EINVAL, kgc_uncommit(self->fd, UINT32_MAX, 2, NULL));
	ASSERT_EQ(-EINVAL, kgc_commit(self->fd, 0, 1, 0x80));
	ASSERT_EQ(-EINVAL, kgc_range(self->fd, KGC_IOC_REGION_UNCOMMIT,
				     0, 1, KGC_COMMIT_POPULATE, NULL));
	rr.reserved[1] = 7;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_REGION_COMMIT, &rr));
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_REGION_UNCOMMIT, &rr));
}

TEST_F(dev, pin_query_nonzero_reserved_einval)
{
	uint64_t bm = 0;
	struct kgc_pin_query pq = {
		.first = 0, .count = 1, .bitmap_ptr = (uintptr_t)&bm,
	};

	ASSERT_EQ(0, kgc_create(self->fd, MiB, 1, NULL));
	pq.reserved[0] = 1;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, &pq));
	pq.reserved[0] = 0;
	pq.flags = 2;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, &pq));
	pq.flags = 0;
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, &pq));
	ASSERT_EQ(0, pq.nr_pinned);
}

TEST_F(dev, unknown_ioctl_enotty)
{
	char buf[256] = { 0 };

	ASSERT_EQ(-ENOTTY, kgc_ioctl(self->fd, _IOWR(KGC_IOC_MAGIC, 0x3f, struct kgc_dev_stats), buf));
	ASSERT_EQ(-ENOTTY, kgc_ioctl(self->fd, _IO('x', 1), buf));
	/* Right number, wrong size or direction. */
	ASSERT_EQ(-ENOTTY, kgc_ioctl(self->fd, _IOR(KGC_IOC_MAGIC, 0x00, uint64_t), buf));
	ASSERT_EQ(-ENOTTY, kgc_ioctl(self->fd, _IOW(KGC_IOC_MAGIC, 0x01, struct kgc_heap_create), buf));
}

TEST_F(dev, bad_pointer_efault)
{
	uint64_t *bad = (uint64_t *)8;
	struct kgc_pin_query pq = { .first = 0, .count = 1, .bitmap_ptr = 8 };

	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_INFO, bad));
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_HEAP_CREATE, bad));
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_STATS, bad));
	ASSERT_EQ(0, kgc_create(self->fd, MiB, 1, NULL));
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_REGION_COMMIT, bad));
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_REGION_UNCOMMIT, bad));
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, bad));
	/* Valid argument, bad bitmap pointer. */
	ASSERT_EQ(-EFAULT, kgc_ioctl(self->fd, KGC_IOC_PIN_QUERY, &pq));
}

TEST_F(dev, read_write_rejected)
{
	char c;

	ASSERT_EQ(-1, read(self->fd, &c, 1));
	ASSERT_EQ(-1, write(self->fd, &c, 1));
}

/* v1's magic 0xB7 belongs to remoteproc and nsfs: no kgc ioctl answers it. */
TEST_F(dev, v1_magic_is_gone_enotty)
{
	struct kgc_info info;

	ASSERT_EQ(2, KGC_API_VERSION);
	ASSERT_EQ(0xBC, _IOC_TYPE(KGC_IOC_INFO));
	ASSERT_EQ(-ENOTTY, kgc_ioctl(self->fd, _IOR(0xB7, 0x00, struct kgc_info), &info));
	ASSERT_EQ(-ENOTTY, kgc_ioctl(self->fd, _IOR(0xB7, 0x05, struct kgc_dev_stats), &info));
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	ASSERT_EQ(2, info.api_version);
}

/*
 * A read-only fd may look (INFO, STATS, PIN_QUERY, read-only mmap) but not
 * change anything: HEAP_CREATE, COMMIT and UNCOMMIT fail with -EBADF,
 * checked before anything else (even a bad argument pointer).
 */
TEST(rdonly_fd_mutating_ioctls_ebadf)
{
	struct kgc_heap_create hc = { .region_size = MiB, .nr_regions = 1 };
	struct kgc_dev_stats st;
	struct kgc_info info;
	int fd = open(KGC_DEV, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_ioctl(fd, KGC_IOC_INFO, &info));
	ASSERT_EQ(0, kgc_ioctl(fd, KGC_IOC_STATS, &st));
	ASSERT_EQ(-EBADF, kgc_ioctl(fd, KGC_IOC_HEAP_CREATE, &hc));
	ASSERT_EQ(-EBADF, kgc_ioctl(fd, KGC_IOC_HEAP_CREATE, (void *)8));
	ASSERT_EQ(-EBADF, kgc_commit(fd, 0, 1, KGC_COMMIT_POPULATE));
	ASSERT_EQ(-EBADF, kgc_commit(fd, 0, 1, 0));
	ASSERT_EQ(-EBADF, kgc_uncommit(fd, 0, 1, NULL));
	/* Not mutating: answers as on any fd without a heap. */
	ASSERT_EQ(-ENODEV, kgc_pinned(fd, 0, 1));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, MiB, PROT_READ, MAP_SHARED, fd, 0));
	ASSERT_EQ(ENODEV, errno);
	ASSERT_EQ(0, kgc_ioctl(fd, KGC_IOC_STATS, &st));
	ASSERT_EQ(0, st.heap_pages);
	ASSERT_EQ(0, close(fd));

	/* Write-only is writable: allowed. */
	fd = open(KGC_DEV, O_WRONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, kgc_create(fd, MiB, 1, NULL));
	ASSERT_EQ(0, kgc_commit(fd, 0, 1, KGC_COMMIT_POPULATE));
	ASSERT_EQ(0, kgc_uncommit(fd, 0, 1, NULL));
	ASSERT_EQ(0, close(fd));
}

/* STATS of one heap says nothing about the pages other heaps hold. */
TEST(stats_are_per_heap_only)
{
	struct kgc_dev_stats st;
	char *mem;
	int fd1 = kgc_open(), fd2, i;

	if (fd1 < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	fd2 = kgc_open();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, kgc_create(fd1, MiB, 1, NULL));
	mem = kgc_map(fd1, MiB, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, 1, 3 * sysconf(_SC_PAGESIZE));
	ASSERT_EQ(3, kgc_heap_pages(fd1));

	memset(&st, 0xa5, sizeof(st));
	ASSERT_EQ(0, kgc_ioctl(fd2, KGC_IOC_STATS, &st));
	ASSERT_EQ(0, st.heap_pages);
	ASSERT_EQ(0, st.reserved0);
	ASSERT_EQ(0, st.moves);
	ASSERT_EQ(0, st.move_busy);
	ASSERT_EQ(0, st.move_copied_pages);
	for (i = 0; i < (int)(sizeof(st.reserved) / sizeof(st.reserved[0])); i++)
		ASSERT_EQ(0, st.reserved[i]);
	ASSERT_EQ(0, kgc_ioctl(fd1, KGC_IOC_STATS, &st));
	ASSERT_EQ(3, st.heap_pages);
	ASSERT_EQ(0, st.reserved0);
	munmap(mem, MiB);
	close(fd2);
	close(fd1);
}

#define MAX_HEAP_MB "/sys/module/kgc/parameters/max_heap_mb"

static int write_param(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

FIXTURE(param) {
	int fd;
	char saved[32];
};

FIXTURE_SETUP(param)
{
	int pfd;
	ssize_t n;

	self->saved[0] = 0;
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	pfd = open(MAX_HEAP_MB, O_RDONLY);
	if (pfd < 0)
		SKIP(return, MAX_HEAP_MB ": %s", strerror(errno));
	n = read(pfd, self->saved, sizeof(self->saved) - 1);
	close(pfd);
	ASSERT_GT(n, 0);
	self->saved[n] = 0;
}

FIXTURE_TEARDOWN(param)
{
	if (self->saved[0])
		write_param(MAX_HEAP_MB, self->saved);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(param, max_heap_mb_caps_new_heaps)
{
	struct kgc_info info;
	int fd2;

	ASSERT_EQ(0, write_param(MAX_HEAP_MB, "8"));
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	ASSERT_EQ(8 * MiB, info.max_heap_bytes);
	ASSERT_EQ(8, info.max_regions);
	ASSERT_EQ(-E2BIG, kgc_create(self->fd, 4 * MiB, 3, NULL));
	ASSERT_EQ(-E2BIG, kgc_create(self->fd, 16 * MiB, 1, NULL));
	ASSERT_EQ(0, kgc_create(self->fd, 4 * MiB, 2, NULL));
	/* Out-of-range values are refused and change nothing. */
	ASSERT_EQ(-EINVAL, write_param(MAX_HEAP_MB, "0"));
	ASSERT_EQ(-EINVAL, write_param(MAX_HEAP_MB, "65537"));
	ASSERT_EQ(-EINVAL, write_param(MAX_HEAP_MB, "lots"));
	fd2 = kgc_open();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(-E2BIG, kgc_create(fd2, MiB, 9, NULL));
	close(fd2);
}

TEST_HARNESS_MAIN
