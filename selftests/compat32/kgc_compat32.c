// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftest for a 32-bit process (compat ioctls, mmap2()): INFO and
 * HEAP_CREATE report KGC_TABLE_OFFSET_COMPAT as table_offset, and the
 * table maps there, shared with the module (v2 reported 1 << 46, which
 * mmap2()'s 32-bit page offset cannot reach: no table for 32-bit users).
 *
 * Freestanding i386 code on raw system calls, so that building it needs
 * no 32-bit libc (gcc -m32 -nostdlib); TAP output like the other tests.
 */
#include <linux/types.h>
#include <linux/ioctl.h>

#include "kgc.h"

#define NR_exit		1
#define NR_write	4
#define NR_open		5
#define NR_ioctl	54
#define NR_mmap2	192
#define O_RDWR		2
#define EBUSY		16
#define MiB		(1UL << 20)

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	long args[6] = { a, b, c, d, e, f };
	long ret = nr, *p = args;

	/* ebp carries the sixth argument: saved and restored around it. */
	__asm__ volatile("push %%ebp\n\t"
			 "mov 20(%%ecx), %%ebp\n\t"
			 "mov 16(%%ecx), %%edi\n\t"
			 "mov 12(%%ecx), %%esi\n\t"
			 "mov 8(%%ecx), %%edx\n\t"
			 "mov 0(%%ecx), %%ebx\n\t"
			 "mov 4(%%ecx), %%ecx\n\t"
			 "int $0x80\n\t"
			 "pop %%ebp"
			 : "+a"(ret), "+c"(p)
			 : : "ebx", "edx", "esi", "edi", "memory");
	return ret;
}

void *memset(void *p, int c, unsigned long n)
{
	unsigned char *b = p;

	while (n--)
		*b++ = c;
	return p;
}

static unsigned long len(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static void say(const char *s)
{
	sys(NR_write, 1, (long)s, len(s), 0, 0, 0);
}

static __attribute__((noreturn)) void finish(const char *failed)
{
	const char *name = " compat32.table_mapped_by_a_32_bit_process\n";

	if (failed) {
		say("# failed: ");
		say(failed);
		say("\nnot ok 1");
	} else {
		say("ok 1");
	}
	say(name);
	say(failed ? "# FAILED: 0 / 1 tests passed.\n" : "# PASSED: 1 / 1 tests passed.\n");
	sys(NR_exit, failed ? 1 : 0, 0, 0, 0, 0, 0);
	__builtin_unreachable();
}

static int is_err(long ret)
{
	return (unsigned long)ret >= -4095UL;
}

static void run(void)
{
	struct kgc_heap_create hc;
	struct kgc_region_range rr;
	struct kgc_pin_query pq;
	struct kgc_region_rec *table;
	struct kgc_info info;
	__u64 bitmap = 0;
	char *heap;
	long fd;

	fd = sys(NR_open, (long)"/dev/kgc", O_RDWR, 0, 0, 0, 0);
	if (fd < 0) {
		say("ok 1 compat32.table_mapped_by_a_32_bit_process # SKIP cannot open /dev/kgc\n");
		sys(NR_exit, 4, 0, 0, 0, 0, 0);
	}
	memset(&info, 0, sizeof(info));
	if (sys(NR_ioctl, fd, KGC_IOC_INFO, (long)&info, 0, 0, 0))
		finish("INFO");
	if (info.table_offset != KGC_TABLE_OFFSET_COMPAT)
		finish("INFO's table_offset is not KGC_TABLE_OFFSET_COMPAT");
	memset(&hc, 0, sizeof(hc));
	hc.region_size = MiB;
	hc.nr_regions = 4;
	if (sys(NR_ioctl, fd, KGC_IOC_HEAP_CREATE, (long)&hc, 0, 0, 0))
		finish("HEAP_CREATE");
	if (hc.table_offset != KGC_TABLE_OFFSET_COMPAT || hc.table_size != 4096)
		finish("HEAP_CREATE's table_offset/table_size");
	table = (void *)sys(NR_mmap2, 0, 4096, 3, 1, fd, hc.table_offset >> 12);
	if (is_err((long)table))
		finish("mmap2 of the table");
	heap = (void *)sys(NR_mmap2, 0, 4 * MiB, 3, 1, fd, 0);
	if (is_err((long)heap))
		finish("mmap2 of the heap");
	heap[MiB] = 1;
	/* PIN_QUERY refreshes the table: one page in region 1. */
	memset(&pq, 0, sizeof(pq));
	pq.count = 4;
	pq.bitmap_ptr = (unsigned long)&bitmap;
	if (sys(NR_ioctl, fd, KGC_IOC_PIN_QUERY, (long)&pq, 0, 0, 0) || bitmap)
		finish("PIN_QUERY");
	if (table[1].committed_pages != 1 || table[0].committed_pages != 0)
		finish("table: committed_pages of regions 0 and 1");
	/* A user pin written through the table makes UNCOMMIT refuse. */
	table[1].user_pins = 1;
	memset(&rr, 0, sizeof(rr));
	rr.first = 1;
	rr.count = 1;
	if (sys(NR_ioctl, fd, KGC_IOC_REGION_UNCOMMIT, (long)&rr, 0, 0, 0) != -EBUSY ||
	    rr.busy_region != 1)
		finish("UNCOMMIT of a user-pinned region is not EBUSY");
	table[1].user_pins = 0;
	if (sys(NR_ioctl, fd, KGC_IOC_REGION_UNCOMMIT, (long)&rr, 0, 0, 0))
		finish("UNCOMMIT");
	if (heap[MiB] != 0)
		finish("released page reads non-zero");
	finish(0);
}

void __attribute__((noreturn)) _start(void)
{
	say("TAP version 13\n1..1\n");
	run();
	finish("unreachable");
}
