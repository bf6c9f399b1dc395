/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kgc kselftests (selftests/kgc_*.c).
 */
#ifndef _KGC_UTIL_H
#define _KGC_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kgc.h"

_Static_assert(sizeof(struct kgc_info) == KGC_INFO_SIZE, "kgc_info");
_Static_assert(sizeof(struct kgc_heap_create) == KGC_HEAP_CREATE_SIZE, "heap_create");
_Static_assert(sizeof(struct kgc_region_rec) == KGC_REGION_REC_SIZE, "region_rec");
_Static_assert(sizeof(struct kgc_region_range) == KGC_REGION_RANGE_SIZE, "region_range");
_Static_assert(sizeof(struct kgc_pin_query) == KGC_PIN_QUERY_SIZE, "pin_query");
_Static_assert(sizeof(struct kgc_dev_stats) == KGC_STATS_SIZE, "stats");
_Static_assert(sizeof(struct kgc_pin_watch) == KGC_PIN_WATCH_SIZE, "pin_watch");

#define KGC_DEV		"/dev/kgc"
#define KGC_PAGES_HELD	"/sys/module/kgc/parameters/pages_held"
#define KGC_DEBUGFS	"/sys/kernel/debug/kgc"
#define MiB		(1UL << 20)

/* 0 or -errno, so tests can ASSERT_EQ(-EINVAL, kgc_ioctl(...)). */
static inline int kgc_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int kgc_open(void)
{
	return open(KGC_DEV, O_RDWR | O_CLOEXEC);
}

static inline int kgc_create(int fd, uint64_t region_size, uint32_t nr,
			     struct kgc_heap_create *out)
{
	struct kgc_heap_create hc = {
		.region_size = region_size,
		.nr_regions = nr,
	};
	int ret = kgc_ioctl(fd, KGC_IOC_HEAP_CREATE, &hc);

	if (out)
		*out = hc;
	return ret;
}

static inline int kgc_range(int fd, unsigned long cmd, uint32_t first,
			    uint32_t count, uint32_t flags, uint32_t *busy)
{
	struct kgc_region_range rr = {
		.first = first, .count = count, .flags = flags,
		.busy_region = UINT32_MAX,
	};
	int ret = kgc_ioctl(fd, cmd, &rr);

	if (busy)
		*busy = rr.busy_region;
	return ret;
}

static inline int kgc_uncommit(int fd, uint32_t first, uint32_t count,
			       uint32_t *busy)
{
	return kgc_range(fd, KGC_IOC_REGION_UNCOMMIT, first, count, 0, busy);
}

static inline int kgc_commit(int fd, uint32_t first, uint32_t count,
			     uint32_t flags)
{
	return kgc_range(fd, KGC_IOC_REGION_COMMIT, first, count, flags, NULL);
}

/* Bitmap of kernel-pinned regions among the first 64; -errno on error. */
static inline int64_t kgc_pinned(int fd, uint32_t first, uint32_t count)
{
	uint64_t bm[1] = { 0 };
	struct kgc_pin_query pq = {
		.first = first, .count = count,
		.bitmap_ptr = (uintptr_t)bm,
	};
	int ret = kgc_ioctl(fd, KGC_IOC_PIN_QUERY, &pq);

	return ret ? ret : (int64_t)bm[0];
}

static inline int64_t kgc_heap_pages(int fd)
{
	struct kgc_dev_stats st;
	int ret = kgc_ioctl(fd, KGC_IOC_STATS, &st);

	return ret ? ret : (int64_t)st.heap_pages;
}

/* The module-wide page counter, or -1 when it cannot be read. */
static inline long kgc_pages_held(void)
{
	char buf[32] = "";
	long v = -1;
	int fd = open(KGC_PAGES_HELD, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		v = strtol(buf, NULL, 10);
	close(fd);
	return v;
}

static inline void *kgc_map(int fd, size_t len, off_t off)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
}

/* Writes @val to the file @path: 0 or -errno. */
static inline int kgc_write_file(const char *path, const char *val)
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

/* Writes a swap header (version 1) over the first page of @fd's device. */
static inline int make_swap(int fd, unsigned long pages)
{
	unsigned char *hdr = calloc(1, 4096);
	uint32_t *w = (uint32_t *)(hdr + 1024);
	int ret = 0;

	if (!hdr)
		return -ENOMEM;
	w[0] = 1;		/* version */
	w[1] = pages - 1;	/* last_page */
	w[2] = 0;		/* nr_badpages */
	memcpy(hdr + 4096 - 10, "SWAPSPACE2", 10);
	if (pwrite(fd, hdr, 4096, 0) != 4096)
		ret = -errno;
	free(hdr);
	return ret;
}

/* True when every byte of [p, p + len) is zero. */
static inline int all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i])
			return 0;
	return 1;
}

#endif /* _KGC_UTIL_H */
