/* SPDX-License-Identifier: MIT */
/*
 * kgc_io, many threads and rings at once (run under TSan too): three threads
 * with a ring each and two threads sharing one ring recv into fresh arrays
 * of random sizes from socket pairs whose writers (unattached threads)
 * write after a random delay, while those threads and an allocator churn
 * and request young and full collections. Every array gets exactly its
 * bytes; on the shared ring a thread may reap the other's completion and
 * hands it over. At the end every operation completed and nothing is
 * pinned. Seeded (KGC_TEST_SEED); IO_MT_ITERS operations per thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include "io_test.h"

#define NOWN 3
#define NSHARED 2
#define NIO (NOWN + NSHARED)
#define MAXLEN (24u * 1024)

struct io_th {
	int id, sv[2], ctl[2];
	kgc_io_ring *ring;
	unsigned long long seed;
	pthread_t th, writer;
	struct t_writer wr;
};

static kgc_heap *heap;
static kgc_type_id node;
static int iters = 150;
static kgc_io_ring *shared;
static _Atomic uint32_t handed[NSHARED];	/* shared ring: iteration + 1 reaped */
static _Atomic int32_t handed_res[NSHARED];
static _Atomic int stop;

static void churn(kgc_thread *t, unsigned long long *s)
{
	t_io_churn(t, node, s);
}

/* The result of this thread's operation it (shared ring: maybe reaped by the other). */
static int32_t result(struct io_th *w, kgc_thread *t, uint32_t it)
{
	struct kgc_io_cqe c[4];
	int n;

	if (w->ring != shared)
		return t_reap1(w->ring, t).res;
	while (atomic_load(&handed[w->id - NOWN]) != it + 1) {
		n = kgc_io_reap(shared, t, c, 4, 1);
		T_ASSERT(n >= 0);
		for (int i = 0; i < n; i++) {
			int who = (int)(c[i].user_data >> 32) - NOWN;

			T_ASSERT(who >= 0 && who < NSHARED);
			atomic_store(&handed_res[who], c[i].res);
			atomic_store(&handed[who], (uint32_t)c[i].user_data + 1);
		}
	}
	return atomic_load(&handed_res[w->id - NOWN]);
}

static void *io_main(void *arg)
{
	struct io_th *w = arg;
	kgc_thread *t;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	char name[16];

	snprintf(name, sizeof(name), "io%d", w->id);
	T_ASSERT_EQ(kgc_thread_attach(heap, name, &t), 0);
	kgc_frame_push(t, &f, roots, 1, NULL);
	for (uint32_t it = 0; it < (uint32_t)iters; it++) {
		struct t_req q = { 1 + (uint32_t)(t_rand(&w->seed) % MAXLEN), it * NIO + w->id,
				 (uint32_t)(t_rand(&w->seed) % 1500) };
		uint64_t ud = (uint64_t)w->id << 32 | it;

		roots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), q.len + 64);
		T_ASSERT(roots[0]);
		T_ASSERT_EQ(kgc_io_prep_recv(w->ring, t, w->sv[1], &roots[0], 32, q.len, MSG_WAITALL, ud), 0);
		T_ASSERT(kgc_io_submit(w->ring, t) >= 0);
		T_ASSERT_EQ(write(w->ctl[1], &q, sizeof(q)), sizeof(q));
		churn(t, &w->seed);
		T_ASSERT_EQ(result(w, t, it), q.len);
		t_pat_check((uint8_t *)kgc_array_data(roots[0]) + 32, q.len, q.gen);
		roots[0] = NULL;
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
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
	kgc_thread *t;
	kgc_io_ring *own[NOWN];
	struct kgc_stats s;
	pthread_t at;

	if (getenv("IO_MT_ITERS"))
		iters = atoi(getenv("IO_MT_ITERS"));
	heap = t_heap(128, 8, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	shared = t_ring(t, 4);
	for (int i = 0; i < NOWN; i++)
		own[i] = t_ring(t, 2);
	for (int i = 0; i < NIO; i++) {
		w[i] = (struct io_th){ .id = i, .seed = seed + (unsigned long long)i * 7919,
				       .ring = i < NOWN ? own[i] : shared };
		T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, w[i].sv), 0);
		T_ASSERT_EQ(pipe(w[i].ctl), 0);
		w[i].wr = (struct t_writer){ w[i].ctl[0], w[i].sv[0] };
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
		close(w[i].sv[0]);
		close(w[i].sv[1]);
	}
	s = t_stats(heap);
	T_ASSERT_EQ(s.io_submitted, (uint64_t)NIO * iters);
	T_ASSERT_EQ(s.io_completed, (uint64_t)NIO * iters);
	T_ASSERT_EQ(s.io_errors, 0);
	T_ASSERT_EQ(s.regions_pinned, 0);
	printf("%d ops, %llu young, %llu full collections\n", NIO * iters,
	       (unsigned long long)s.young_gcs, (unsigned long long)s.full_gcs);
	for (int i = 0; i < NOWN; i++)
		T_ASSERT_EQ(kgc_io_ring_destroy(own[i], t), 0);
	T_ASSERT_EQ(kgc_io_ring_destroy(shared, t), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
