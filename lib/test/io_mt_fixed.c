/* SPDX-License-Identifier: MIT */
/*
 * The pinned-object space and fixed buffers under many threads (run under
 * TSan too): four threads, each with a ring, allocate pinned arrays of
 * random sizes (now and then one larger than a region), keep a random few
 * of them alive and drop the rest, and read into them from pipes whose
 * writers (unattached threads) write after a random delay; meanwhile an
 * allocator churns, concurrent cycles run (a low IHOP), and the threads
 * request young and full collections. So pinned allocations race with the
 * marker, remark's reclaim, young and full pauses, and the rings' tables
 * follow a space that grows and shrinks. Every array gets exactly its
 * bytes and never moves; every read (a pipe returns what is there: one
 * array may take several) used a fixed buffer. At the end, with
 * the rings gone and everything dropped, the space is empty again.
 * Seeded (KGC_TEST_SEED); IO_MT_ITERS reads per thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "io_test.h"

#define NIO	4
#define KEEP	4
#define MAXLEN	(96u * 1024)
#define BYTE	KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

struct io_th {
	int id, pipe[2], ctl[2];
	unsigned long long seed;
	pthread_t th, writer;
	struct t_writer wr;
};

static kgc_heap *heap;
static kgc_type_id node;
static int iters = 120;
static _Atomic int stop;
static _Atomic uint64_t reads;

static void churn(kgc_thread *t, unsigned long long *s)
{
	t_io_churn(t, node, s);
}

static void *io_main(void *arg)
{
	struct io_th *w = arg;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[KEEP + 1] = { 0 }, was[KEEP + 1] = { 0 };
	uint32_t gen[KEEP + 1] = { 0 }, len[KEEP + 1] = { 0 };
	struct kgc_frame f;
	char name[16];

	snprintf(name, sizeof(name), "io%d", w->id);
	T_ASSERT_EQ(kgc_thread_attach(heap, name, &t), 0);
	r = t_ring(t, 2);
	kgc_frame_push(t, &f, roots, KEEP + 1, NULL);
	for (uint32_t it = 0; it < (uint32_t)iters; it++) {
		bool big = t_rand(&w->seed) % 40 == 0;
		struct t_req q = { 1 + (uint32_t)(t_rand(&w->seed) % (big ? 2 * MAXLEN : MAXLEN)),
				 it * NIO + (uint32_t)w->id, (uint32_t)(t_rand(&w->seed) % 1500) };
		size_t alen = big ? (1u << 20) + q.len : q.len + 64;
		int k = (int)(t_rand(&w->seed) % (KEEP + 1));	/* KEEP: read, then drop */
		struct kgc_io_cqe c;

		roots[k] = kgc_alloc_array_pinned(t, BYTE, alen);
		T_ASSERT(roots[k]);
		was[k] = roots[k];
		T_ASSERT_EQ(write(w->ctl[1], &q, sizeof(q)), sizeof(q));
		/* a pipe read returns what is there: read on until all came */
		for (uint32_t got = 0, n = 0; got < q.len; got += (uint32_t)c.res, n++) {
			T_ASSERT_EQ(kgc_io_prep_read(r, t, w->pipe[0], &roots[k], alen - q.len + got,
						     q.len - got, KGC_IO_OFF_CUR, it), 0);
			T_ASSERT(kgc_io_submit(r, t) >= 0);
			if (n == 0)
				churn(t, &w->seed);
			c = t_reap1(r, t);
			T_ASSERT_EQ(c.user_data, it);
			T_ASSERT(c.res > 0);
			reads++;
		}
		gen[k] = q.gen;
		len[k] = q.len;
		for (int i = 0; i <= KEEP; i++)
			if (roots[i]) {
				T_ASSERT(roots[i] == was[i]);	/* never moved */
				t_pat_check((uint8_t *)kgc_array_data(roots[i]) + kgc_array_length(roots[i]) -
					    len[i], len[i], gen[i]);
			}
		roots[KEEP] = NULL;
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void *allocator(void *arg)
{
	unsigned long long s = *(unsigned long long *)arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(heap, "alloc", &t), 0);
	while (!atomic_load(&stop))
		churn(t, &s);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	unsigned long long seed = t_seed(), aseed = seed ^ 0xa110c;
	struct io_th w[NIO];
	struct kgc_options o;
	kgc_thread *t;
	struct kgc_stats s;
	pthread_t at;

	T_SKIP_IF(!t_fixed_supported(), "io_uring sparse fixed buffers not available (kernel < 5.19, RLIMIT_MEMLOCK)");
	if (getenv("IO_MT_ITERS"))
		iters = atoi(getenv("IO_MT_ITERS"));
	t_opts_small(&o, 128, 8);
	o.ihop_percent = 5;	/* cycles keep running */
	heap = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	for (int i = 0; i < NIO; i++) {
		w[i] = (struct io_th){ .id = i, .seed = seed + (unsigned long long)i * 7919 };
		T_ASSERT_EQ(pipe(w[i].pipe), 0);
		T_ASSERT_EQ(pipe(w[i].ctl), 0);
		w[i].wr = (struct t_writer){ w[i].ctl[0], w[i].pipe[1] };
		T_ASSERT_EQ(pthread_create(&w[i].writer, NULL, t_writer_main, &w[i].wr), 0);
	}
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_create(&at, NULL, allocator, &aseed), 0);
	for (int i = 0; i < NIO; i++)
		T_ASSERT_EQ(pthread_create(&w[i].th, NULL, io_main, &w[i]), 0);
	for (int i = 0; i < NIO; i++)
		T_ASSERT_EQ(pthread_join(w[i].th, NULL), 0);
	atomic_store(&stop, 1);
	T_ASSERT_EQ(pthread_join(at, NULL), 0);
	kgc_leave_native(t);
	for (int i = 0; i < NIO; i++) {
		close(w[i].ctl[1]);
		T_ASSERT_EQ(pthread_join(w[i].writer, NULL), 0);
		close(w[i].ctl[0]);
		close(w[i].pipe[0]);
		close(w[i].pipe[1]);
	}
	s = t_stats(heap);
	T_ASSERT_EQ(s.io_completed, atomic_load(&reads));
	T_ASSERT_EQ(s.io_errors, 0);
	T_ASSERT_EQ(s.io_fixed, atomic_load(&reads));
	T_ASSERT_EQ(s.io_plain, 0);
	printf("%llu fixed reads, %llu young, %llu full collections, %llu cycles; pinned space %u regions\n",
	       (unsigned long long)atomic_load(&reads), (unsigned long long)s.young_gcs, (unsigned long long)s.full_gcs,
	       (unsigned long long)s.concurrent_cycles, s.pinned_space_regions);
	/* the rings are gone, every pinned array dropped: the space empties */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	s = t_stats(heap);
	T_ASSERT_EQ(s.pinned_space_regions, 0);
	T_ASSERT_EQ(s.regions_pinned, 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
