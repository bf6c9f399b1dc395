/* SPDX-License-Identifier: MIT */
/*
 * kgc_io with O_DIRECT: reads from /dev/ram0 (the VM rig loads brd; on the
 * kmod backend the kernel's own pins on the array's pages show in
 * PIN_QUERY too) or, natively, from a file in /var/tmp opened O_DIRECT,
 * straight into a byte array at a 4 KiB-aligned offset, while another
 * thread requests young and full collections all the time (paced: one
 * every 300 us). The array is
 * replaced every 8 reads (and moves between reads: each prep takes its
 * current address); every read brings exactly its bytes. Skips when no
 * O_DIRECT source is usable.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include "io_test.h"

#define PG 4096u
#define SRC_BYTES (1u << 20)
#define RD (64u * 1024)
#define ARR_LEN (RD + PG)
#define ITERS 120

static kgc_heap *heap;
static atomic_int stop;

static void *collector(void *arg)
{
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(heap, "collector", &t), 0);
	for (unsigned n = 0; !atomic_load(&stop); n++) {
		T_ASSERT_EQ(kgc_collect(t, n % 8 == 7 ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
		/*
		 * Paced: back-to-back collections (each verified) left the
		 * reader a safepoint after nearly every allocation, and 120
		 * reads took 6 minutes under TSan (CI timed out once).
		 */
		kgc_enter_native(t);
		usleep(300);
		kgc_leave_native(t);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

/* An O_DIRECT source holding pattern 0 in its first SRC_BYTES, or -1. */
static int source(char *path, size_t n)
{
	void *b;
	int fd;

	snprintf(path, n, "/dev/ram0");
	fd = open(path, O_RDWR | O_DIRECT);
	if (fd < 0) {
		snprintf(path, n, "/var/tmp/kgc-io-odirect.%d", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
		unlink(path);
	}
	if (fd < 0)
		return -1;
	T_ASSERT_EQ(posix_memalign(&b, PG, SRC_BYTES), 0);
	t_pat_fill(b, SRC_BYTES, 0);
	if (pwrite(fd, b, SRC_BYTES, 0) != SRC_BYTES) {
		close(fd);
		fd = -1;
	}
	free(b);
	return fd;
}

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_type_id node;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	pthread_t col;
	char path[64];
	int fd = source(path, sizeof(path));

	T_SKIP_IF(fd < 0, "no O_DIRECT source (/dev/ram0 or a file in /var/tmp)");
	printf("source: %s\n", path);
	heap = t_heap(64, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	r = t_ring(t, 4);
	kgc_frame_push(t, &f, roots, 1, NULL);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_create(&col, NULL, collector, NULL), 0);
	kgc_leave_native(t);
	for (int i = 0; i < ITERS; i++) {
		size_t src = (size_t)(t_rand(&seed) % ((SRC_BYTES - RD) / PG)) * PG, off;
		struct kgc_io_cqe c;

		if (i % 8 == 0)
			T_ASSERT((roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARR_LEN)));
		for (int k = 0; k < 200; k++)
			T_ASSERT(kgc_alloc(t, node));
		off = (PG - (uintptr_t)kgc_array_data(roots[0]) % PG) % PG;
		T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &roots[0], off, RD, src, (uint64_t)i), 0);
		c = t_reap1(r, t);
		T_ASSERT_EQ(c.user_data, i);
		T_ASSERT_EQ(c.res, RD);
		for (size_t k = 0; k < RD; k++)
			if (((uint8_t *)kgc_array_data(roots[0]))[off + k] != t_pat(src + k, 0))
				T_FAIL("read %d: byte %zu (source %zu) wrong", i, k, src + k);
	}
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(col, NULL), 0);
	kgc_leave_native(t);
	T_ASSERT_EQ(t_stats(heap).io_completed, ITERS);
	T_ASSERT_EQ(t_stats(heap).regions_pinned, 0);
	printf("%d reads, %llu young, %llu full collections\n", ITERS,
	       (unsigned long long)t_stats(heap).young_gcs, (unsigned long long)t_stats(heap).full_gcs);
	int p[2] = { fd, dup(fd) };

	t_io_end(heap, t, r, &f, p);
	return 0;
}
