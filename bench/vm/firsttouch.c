// SPDX-License-Identifier: MIT
/*
 * firsttouch: time to first-touch (write one byte per 4 KiB page) N MiB of
 * /dev/kgc heap vs anonymous memory, median of R repetitions each, and the
 * cost of a KGC_IOC_PIN_QUERY per region (all regions vs a selection).
 * With a third argument, a directory on a tmpfs mounted huge=within_size,
 * also a file there (plain shmem with huge folios, what kgc's heap is built
 * on: the peer that shows how much of the gap is shmem's own).
 * Static (cc -O2 -static -Iuapi bench/vm/firsttouch.c -o /tmp/firsttouch), for the VM rig:
 *   bash selftests/vm/run.sh --demo 'firsttouch 256 9 [DIR]'
 * Prints ratios; under TCG only ratios mean anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "kgc.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void touch(char *p, size_t len)
{
	for (size_t off = 0; off < len; off += 4096)
		p[off] = 1;
}

static double anon_once(size_t len)
{
	char *p = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a = (char *)(((uintptr_t)p + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
	double t;

	if (p == MAP_FAILED)
		exit(2);
	t = now();
	touch(a, len);
	t = now() - t;
	munmap(p, len + (2 << 20));
	return t;
}

static double kgc_once(size_t len, size_t region)
{
	struct kgc_heap_create hc = { .region_size = region, .nr_regions = len / region };
	int fd = open("/dev/kgc", O_RDWR | O_CLOEXEC);
	double t;
	char *p;

	if (fd < 0 || ioctl(fd, KGC_IOC_HEAP_CREATE, &hc))
		exit(3);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(4);
	t = now();
	touch(p, len);
	t = now() - t;
	munmap(p, len);
	close(fd);
	return t;
}

/* The peer: a file on a huge=within_size tmpfs, mapped shared. */
static double shmem_once(size_t len, const char *dir)
{
	char path[256];
	int fd;
	double t;
	char *p;

	snprintf(path, sizeof(path), "%s/firsttouch.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)len))
		exit(8);
	p = mmap(NULL, len + (2 << 20), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(9);
	p = (char *)(((uintptr_t)p + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		exit(10);
	t = now();
	touch(p, len);
	t = now() - t;
	munmap(p, len);
	close(fd);
	unlink(path);
	return t;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

/* ns per region of a PIN_QUERY over nsel selected regions (0: all). */
static double pinq(int fd, uint32_t nr, uint32_t nsel, uint64_t *bm, int reps)
{
	struct kgc_pin_query q;
	double t = now();

	for (int i = 0; i < reps; i++) {
		memset(&q, 0, sizeof(q));
		q.first = 0;
		q.count = nr;
		q.bitmap_ptr = (uintptr_t)bm;
		if (nsel) {
			memset(bm, 0, (nr + 63) / 64 * 8);
			for (uint32_t r = 0; r < nsel; r++)
				bm[r / 64] |= 1ULL << (r % 64);
			q.flags = KGC_PIN_QUERY_SELECT;
		}
		if (ioctl(fd, KGC_IOC_PIN_QUERY, &q))
			exit(5);
	}
	return (now() - t) / reps / (nsel ? nsel : nr) * 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
	int reps = argc > 2 ? atoi(argv[2]) : 9, i;
	size_t len = mib << 20;
	double a[64], k1[64], k2[64], sh[64];
	const char *dir = argc > 3 ? argv[3] : NULL;
	uint32_t nr = 2048, used = 16;	/* 4 GiB heap of 2 MiB regions */
	struct kgc_heap_create hc = { .region_size = 2 << 20, .nr_regions = nr };
	uint64_t *bm = calloc(nr / 64, 8);
	int fd;
	char *p;

	if (reps > 64)
		reps = 64;
	/* Each repetition starts with the next kind (rotating order), so no kind
	 * always follows the one that just freed 256 MiB of small pages. */
	for (i = 0; i < reps; i++) {
		for (int k = 0; k < 4; k++) {
			switch ((i + k) % 4) {
			case 0: a[i] = anon_once(len); break;
			case 1: k2[i] = kgc_once(len, 2 << 20); break;
			case 2: k1[i] = kgc_once(len, 1 << 20); break;
			case 3: if (dir)
					sh[i] = shmem_once(len, dir);
				break;
			}
		}
	}
	printf("first-touch %zu MiB, median of %d: anon %.3f s, kgc 2M regions %.3f s (%.2fx), kgc 1M regions %.3f s (%.2fx)\n",
	       mib, reps, median(a, reps), median(k2, reps),
	       median(k2, reps) / median(a, reps), median(k1, reps),
	       median(k1, reps) / median(a, reps));

	if (dir)
		printf("peer: shmem file on %s %.3f s (%.2fx anon); kgc 2M regions / shmem file %.2fx\n",
		       dir, median(sh, reps), median(sh, reps) / median(a, reps),
		       median(k2, reps) / median(sh, reps));
	fd = open("/dev/kgc", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, KGC_IOC_HEAP_CREATE, &hc))
		return 6;
	p = mmap(NULL, (size_t)used << 21, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 7;
	touch(p, (size_t)used << 21);
	printf("pin query, 4 GiB heap (%u x 2 MiB), %u regions touched: all regions %.0f ns/region (%.1f us total); %u selected (touched) %.0f ns/region\n",
	       nr, used, pinq(fd, nr, 0, bm, 50), pinq(fd, nr, 0, bm, 50) * nr / 1000,
	       used, pinq(fd, nr, used, bm, 200));
	return 0;
}
