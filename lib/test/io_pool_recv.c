/* SPDX-License-Identifier: MIT */
/*
 * Multishot recv into a provided-buffer pool while collections run all the
 * while (another thread forces young and full ones back to back; verifier
 * on): one recv stays armed over ITERS rounds; each round writes 1..4
 * messages of random lengths (a SEQPACKET socket keeps them apart) and
 * reaps as many completions in one reap (so one reap holds several
 * completions of the same operation). Every completion carries
 * IORING_CQE_F_MORE and IORING_CQE_F_BUFFER, res the message's length, and
 * the array it names holds exactly the message; taken out of the pool it
 * is an ordinary array of the pool's length, in the pinned-object space,
 * whose bytes survive the collections while the program keeps it. Half the
 * arrays go back to the pool (kgc_io_pool_put), half are kept a while and
 * dropped (the pool refills). A completion's array taken twice: -ENOENT.
 * The pool stays full for the kernel (kgc_io_pool_avail). At the end a
 * cancel ends the recv with -ECANCELED and no F_MORE. Seeded.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include "io_test.h"

#define NBUFS	8
#define LEN	4096u
#define ITERS	300
#define NKEEP	4
#define UD	77

static kgc_heap *heap;
static kgc_type_id node;
static atomic_int stop;

static void *gc_main(void *arg)
{
	kgc_thread *t;
	unsigned long long s = 0x5eed;

	T_ASSERT_EQ(kgc_thread_attach(heap, "gc", &t), 0);
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 2000; i++)
			T_ASSERT(kgc_alloc(t, node));
		T_ASSERT_EQ(kgc_collect(t, t_rand(&s) % 4 ? KGC_GC_YOUNG : KGC_GC_FULL), 0);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

struct kept { unsigned gen, len; };

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_options opt;
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_io_pool *p;
	struct kgc_frame f;
	kgc_obj keep[NKEEP] = { 0 };
	struct kept kk[NKEEP] = { 0 };
	unsigned lens[4], gen = 0, puts = 0, refills = 0;
	struct kgc_io_cqe c[4];
	pthread_t gc;
	int sv[2];

	alarm(120);
	t_opts_small(&opt, 64, 8);
	opt.verify = 1;
	heap = t_heap_opts(&opt, &node);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	kgc_frame_push(t, &f, keep, NKEEP, NULL);
	r = t_ring(t, 16);
	p = t_pool(r, t, NBUFS, LEN);
	T_ASSERT_EQ(kgc_io_pool_avail(p), NBUFS);
	T_ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	T_ASSERT_EQ(kgc_io_prep_recv_multishot(r, t, sv[0], p, 0, UD), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(pthread_create(&gc, NULL, gc_main, NULL), 0);

	for (int it = 0; it < ITERS; it++) {
		unsigned nm = 1 + (unsigned)(t_rand(&seed) % 4), g0 = gen;

		for (unsigned m = 0; m < nm; m++) {
			lens[m] = 1 + (unsigned)(t_rand(&seed) % LEN);
			t_pat_write(sv[1], lens[m], gen++);
		}
		t_io_churn(t, node, &seed);	/* the data may be in the arrays already */
		T_ASSERT_EQ(kgc_io_reap(r, t, c, nm, nm), (int)nm);
		t_io_churn(t, node, &seed);	/* done, not taken yet: the pool roots them */
		for (unsigned m = 0; m < nm; m++) {
			unsigned k = (unsigned)(t_rand(&seed) % NKEEP);

			if (m == 0 && it == 0)
				t_multishot_skip(&c[0]);
			T_ASSERT_EQ(c[m].user_data, UD);
			T_ASSERT_EQ(c[m].res, (int)lens[m]);
			T_ASSERT(c[m].flags & IORING_CQE_F_MORE);
			T_ASSERT(c[m].flags & IORING_CQE_F_BUFFER);
			T_ASSERT(t_bid(&c[m]) < NBUFS);
			/* the previous array in keep[k] is checked, then dropped */
			if (keep[k])
				t_pat_check(kgc_array_data(keep[k]), kk[k].len, kk[k].gen);
			T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[m], &keep[k]), (int)lens[m]);
			T_ASSERT_EQ(kgc_io_pool_take(p, t, &c[m], &keep[k]), -ENOENT);
			T_ASSERT_EQ(kgc_array_length(keep[k]), LEN);
			t_pat_check(kgc_array_data(keep[k]), lens[m], g0 + m);
			kk[k] = (struct kept){ g0 + m, lens[m] };
			if (t_rand(&seed) % 2) {
				T_ASSERT_EQ(kgc_io_pool_put(p, t, &keep[k]), 0);
				keep[k] = NULL;
				puts++;
			}
		}
		refills += (unsigned)kgc_io_pool_refill(p, t);
		T_ASSERT_EQ(kgc_io_pool_avail(p), NBUFS);
		T_ASSERT_EQ(kgc_io_inflight(r), 1);
	}
	atomic_store(&stop, 1);
	kgc_enter_native(t);	/* its last collection may be waiting for us */
	T_ASSERT_EQ(pthread_join(gc, NULL), 0);
	kgc_leave_native(t);
	T_ASSERT(puts > 0 && refills > 0);
	T_ASSERT(t_stats(heap).young_gcs + t_stats(heap).full_gcs > ITERS / 8);
	T_ASSERT_EQ(puts + refills, gen);
	for (int k = 0; k < NKEEP; k++)
		if (keep[k])
			t_pat_check(kgc_array_data(keep[k]), kk[k].len, kk[k].gen);

	T_ASSERT_EQ(kgc_io_cancel(r, t, UD), 1);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 1, 1), 1);
	T_ASSERT_EQ(c[0].res, -ECANCELED);
	T_ASSERT(!(c[0].flags & IORING_CQE_F_MORE));
	T_ASSERT_EQ(kgc_io_inflight(r), 0);
	T_ASSERT_EQ(kgc_io_pool_destroy(p, t), 0);
	printf("%u messages, %u arrays put back, %u refilled, %llu young / %llu full GCs\n", gen, puts,
	       refills, (unsigned long long)t_stats(heap).young_gcs,
	       (unsigned long long)t_stats(heap).full_gcs);
	close(sv[0]);
	close(sv[1]);
	T_ASSERT_EQ(kgc_io_ring_destroy(r, t), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	printf("PASS\n");
	return 0;
}
