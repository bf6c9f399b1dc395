/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_ring_set_inline while collections run: a reader thread preps
 * reads of a cached file at random offsets (rarely adjacent: most preps
 * first do the read deferred before them, in native state) into fresh
 * eden arrays that are dropped after each check, while a second thread
 * allocates and forces young and full collections. Every array's bytes
 * must be its block's: a read done for an earlier prep must never land
 * where an array of a later one was before a collection moved it (the
 * prep's arrays are a frame until its slot pins them). Seeded; runs
 * KGC_TEST_SECONDS (default 2) seconds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include "io_test.h"

#define BLK 4096u
#define NBLK 256u
#define QD 8
#define BYTE KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static kgc_heap *h;
static kgc_type_id node;
static atomic_int stop;
static unsigned long long seed0;

/* every 8 bytes of the file: their offset */
static int make_file(void)
{
	char path[] = "/tmp/kgc_inlgc_XXXXXX";
	uint64_t b[BLK / 8];
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	T_ASSERT_EQ(unlink(path), 0);
	for (uint64_t off = 0; off < (uint64_t)NBLK * BLK; off += BLK) {
		for (unsigned i = 0; i < BLK / 8; i++)
			b[i] = off + i * 8;
		T_ASSERT_EQ(write(fd, b, BLK), (long)BLK);
	}
	return fd;
}

static void *churn(void *arg)
{
	unsigned long long s = seed0 ^ 0x5eed;
	kgc_thread *t;

	(void)arg;
	T_ASSERT_EQ(kgc_thread_attach(h, "churn", &t), 0);
	while (!atomic_load(&stop))
		t_io_churn(t, node, &s);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void check(kgc_obj a, uint64_t off)
{
	const uint64_t *p = kgc_array_data(a);

	for (unsigned i = 0; i < BLK / 8; i += 64)
		if (p[i] != off + i * 8)
			T_FAIL("block at %llu: word %u holds %llu", (unsigned long long)off, i,
			       (unsigned long long)p[i]);
}

int main(void)
{
	unsigned long long seed = seed0 = t_seed();
	int secs = getenv("KGC_TEST_SECONDS") ? atoi(getenv("KGC_TEST_SECONDS")) : 2;
	uint64_t off[QD], reads = 0, t_end;
	kgc_obj a[QD] = { 0 };
	struct kgc_io_cqe c[QD];
	struct kgc_frame f;
	kgc_thread *t;
	kgc_io_ring *r;
	pthread_t th;
	int fd;

	alarm((unsigned)secs + 60);
	h = t_heap(64, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "reader", &t), 0);
	r = t_ring(t, 2 * QD);
	T_ASSERT_EQ(kgc_io_ring_set_inline(r, t, BLK), 0);
	kgc_frame_push(t, &f, a, QD, NULL);
	fd = make_file();
	T_ASSERT_EQ(pthread_create(&th, NULL, churn, NULL), 0);
	t_end = (uint64_t)t_now_ns() + (uint64_t)secs * 1000000000ull;
	for (int s = 0; s < QD; s++) {
		T_ASSERT((a[s] = kgc_alloc_array(t, BYTE, BLK)) != NULL);
		off[s] = (t_rand(&seed) % NBLK) * BLK;
		T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[s], 0, BLK, off[s], (uint64_t)s), 0);
	}
	while ((uint64_t)t_now_ns() < t_end) {
		int n = kgc_io_reap(r, t, c, QD, 1);

		T_ASSERT(n > 0);
		for (int i = 0; i < n; i++) {
			int s = (int)c[i].user_data;

			T_ASSERT_EQ(c[i].res, (int)BLK);
			check(a[s], off[s]);
			reads++;
			/* a fresh eden array each time: the next collection moves it */
			T_ASSERT((a[s] = kgc_alloc_array(t, BYTE, BLK)) != NULL);
			off[s] = (t_rand(&seed) % NBLK) * BLK;
			T_ASSERT_EQ(kgc_io_prep_read(r, t, fd, &a[s], 0, BLK, off[s], (uint64_t)s), 0);
		}
	}
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(t);
	{
		struct kgc_stats st = t_stats(h);

		printf("%llu reads checked, %llu done by the library in %llu calls; %llu young, %llu full\n",
		       (unsigned long long)reads, (unsigned long long)st.io_inline,
		       (unsigned long long)st.io_inline_calls, (unsigned long long)st.young_gcs,
		       (unsigned long long)st.full_gcs);
		T_ASSERT(st.io_inline > reads / 2);
		T_ASSERT(st.young_gcs + st.full_gcs > 0);
	}
	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), QD);
	close(fd);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
