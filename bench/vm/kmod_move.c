/* SPDX-License-Identifier: MIT */
/*
 * kmod_move: moving 2, 16, 64 and 256 MiB of a kgc.ko heap by
 * KGC_IOC_REGION_MOVE against memcpy() of the same, resident bytes
 * (issue 32: a 64 MiB move should cost <= 2% of memcpy's time). Inside the
 * VM rig only (TCG: compare the ratios, not the times):
 *   cc -O2 -static -Iuapi bench/vm/kmod_move.c -o /tmp/kmod_move
 *   KGC_VM_MEM=2048 KGC_VM_FILES=/tmp/kmod_move \
 *       bash selftests/vm/run.sh --demo kmod_move
 * Arguments: region size in MiB (2), largest size in MiB (256), runs (3).
 * Each size, best of the runs: memcpy (src -> dst, both resident); the
 * move into a resident destination (its old pages are released by the
 * move: with the rig's page_poison=1 that is a write of every freed byte);
 * the move into an empty (uncommitted) destination, the collector's case;
 * and that move followed by a read of one word per page of the moved
 * range (its page faults: the move leaves both ranges unmapped).
 * "release" is UNCOMMIT of the same resident bytes: the part of a move
 * into a resident destination that is freeing its old pages.
 * ShmemHugePages (/proc/meminfo) after filling src says whether the heap
 * got huge folios.
 */
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

#define MiB (1UL << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int move(int fd, uint32_t src, uint32_t dst, uint32_t n)
{
	struct kgc_region_move mv = { .src = src, .dst = dst, .count = n };

	if (ioctl(fd, KGC_IOC_REGION_MOVE, &mv)) {
		perror("KGC_IOC_REGION_MOVE");
		exit(1);
	}
	return mv.moved_pages;
}

static long shmem_huge_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ShmemHugePages: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void uncommit(int fd, uint32_t first, uint32_t n)
{
	struct kgc_region_range rr = { .first = first, .count = n };

	ioctl(fd, KGC_IOC_REGION_UNCOMMIT, &rr);
}

static void touch(char *p, size_t len, long pg)
{
	size_t i;

	for (i = 0; i < len; i += pg)
		(void)*(volatile char *)(p + i);
}

int main(int argc, char **argv)
{
	size_t region = (argc > 1 ? strtoul(argv[1], NULL, 0) : 2) * MiB;
	size_t max = (argc > 2 ? strtoul(argv[2], NULL, 0) : 256) * MiB;
	int runs = argc > 3 ? atoi(argv[3]) : 3;
	static const size_t sizes[] = { 2, 16, 64, 256 };
	struct kgc_heap_create hc = { .region_size = region };
	struct kgc_dev_stats st0, st1;
	long pg = sysconf(_SC_PAGESIZE);
	uint32_t half;
	unsigned int k;
	char *mem;
	int fd, r;

	fd = open("/dev/kgc", O_RDWR);
	if (fd < 0) {
		perror("/dev/kgc");
		return 1;
	}
	half = max / region;
	hc.nr_regions = 2 * half;
	if (ioctl(fd, KGC_IOC_HEAP_CREATE, &hc)) {
		perror("KGC_IOC_HEAP_CREATE");
		return 1;
	}
	mem = mmap(NULL, hc.heap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("region %zu MiB, runs %d; times in ms (TCG: use the ratios)\n",
	       region / MiB, runs);
	printf("%5s %8s %8s %9s %9s %9s %7s %7s %7s %6s %7s\n", "MiB",
	       "memcpy", "release", "mv(full)", "mv(empty)", "mv+read", "r(full)", "r(empty)",
	       "r+read", "copied", "hugeMiB");
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t len = sizes[k] * MiB;
		uint32_t n = len / region;
		char *src = mem, *dst = mem + (size_t)half * region;
		double t, tu = 1e9, tc = 1e9, tm = 1e9, te = 1e9, tr = 1e9;
		long huge;

		if (len > max || n == 0)
			continue;
		memset(src, 0x5a, len);
		memset(dst, 0xa5, len);
		huge = shmem_huge_kb();
		for (r = 0; r < runs; r++) {
			t = now();
			memcpy(dst, src, len);
			t = now() - t;
			tc = t < tc ? t : tc;
		}
		ioctl(fd, KGC_IOC_STATS, &st0);
		for (r = 0; r < runs; r++) {
			/* src -> resident dst; back into an empty src; read. */
			touch(dst, len, pg);
			t = now();
			move(fd, 0, half, n);
			t = now() - t;
			tm = t < tm ? t : tm;
			t = now();
			move(fd, half, 0, n);
			t = now() - t;
			te = t < te ? t : te;
			t = now();
			move(fd, 0, half, n);
			touch(dst, len, pg);
			t = now() - t;
			tr = t < tr ? t : tr;
			move(fd, half, 0, n);
			memset(dst, 0xa5, len);
		}
		ioctl(fd, KGC_IOC_STATS, &st1);
		for (r = 0; r < runs; r++) {
			memset(dst, 0xa5, len);
			t = now();
			uncommit(fd, half, n);
			t = now() - t;
			tu = t < tu ? t : tu;
		}
		if (src[0] != 0x5a || src[len - 1] != 0x5a) {
			fprintf(stderr, "wrong bytes after the moves\n");
			return 1;
		}
		printf("%5zu %8.2f %8.2f %9.2f %9.2f %9.2f %6.2f%% %6.2f%% %6.2f%% %6llu %7ld\n",
		       sizes[k], tc * 1e3, tu * 1e3, tm * 1e3, te * 1e3, tr * 1e3,
		       100 * tm / tc, 100 * te / tc, 100 * tr / tc,
		       (unsigned long long)(st1.move_copied_pages -
					    st0.move_copied_pages),
		       huge < 0 ? -1 : huge / 1024);
		/* Release both ranges before the next size. */
		uncommit(fd, 0, 2 * half);
	}
	return 0;
}
