/* SPDX-License-Identifier: MIT */
/*
 * Two event loops on one ring (run under TSan too): threads L0 and L1 each
 * epoll_wait on the ring's eventfd and reap with wait_nr 0 and a callback;
 * NPIPE pipes each have one read in flight into a fresh eden array, fed by
 * an unattached writer that writes the next message (random length up to
 * PIPE_BUF, seeded) when the callback asks for it. Whichever loop reaps a
 * completion checks, in the callback, that the array is the one the prep
 * named, at its prep-time address, holding exactly that message; then it
 * allocates the next array, preps the next read and asks for the next
 * message. A third thread forces young and full collections throughout.
 * Every message arrives once (how many each loop reaped is printed). A
 * pipe's state passes from loop to loop through the ring's lock (prep,
 * reap). Seeded (KGC_TEST_SEED); IO_EL_ITERS messages per pipe.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include "io_test.h"

#define NPIPE 6

struct pipe_st {
	int fd[2], ctl[2];
	struct t_writer wr;
	pthread_t writer;
	unsigned long long seed;
	uint32_t it, len;		/* the message in flight: its number and length */
	kgc_obj at_prep;		/* its array at prep time (r->lock serializes) */
	kgc_handle root;		/* and a root holding it */
};

static kgc_heap *heap;
static kgc_io_ring *ring;
static struct pipe_st pipes[NPIPE];
static int iters = 400;
static _Atomic int done_pipes, stop;
static _Atomic unsigned reaped_by[2];

static uint32_t gen(int p, uint32_t it) { return it * NPIPE + (uint32_t)p; }

/* Message it of pipe p: a fresh array, the read, then the writer's request. */
static void next(kgc_thread *t, int p)
{
	struct pipe_st *s = &pipes[p];
	struct t_req q;
	kgc_obj a;

	s->len = 1 + (uint32_t)(t_rand(&s->seed) % 4096);
	a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), s->len + 64);
	T_ASSERT(a);
	kgc_handle_set(s->root, a);
	s->at_prep = a;
	/* all of s read before the prep: once it is queued, the loop that reaps
	 * it owns s */
	q = (struct t_req){ s->len, gen(p, s->it), (uint32_t)(t_rand(&s->seed) % 800) };
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, s->fd[0], (kgc_obj *)s->root, 0, q.len, KGC_IO_OFF_CUR,
				     (uint64_t)p << 32 | s->it), 0);
	T_ASSERT_EQ(write(s->ctl[1], &q, sizeof(q)), (long)sizeof(q));
}

static void on_complete(kgc_thread *t, const struct kgc_io_cqe *c, const kgc_obj *arrays,
			unsigned narrays, void *arg)
{
	int p = (int)(c->user_data >> 32), me = *(int *)arg;
	struct pipe_st *s = &pipes[p];

	T_ASSERT(p >= 0 && p < NPIPE);
	atomic_fetch_add(&reaped_by[me], 1);
	/* (the pipe's next read is queued only below: nobody else touches s now) */
	T_ASSERT_EQ((uint32_t)c->user_data, s->it);
	T_ASSERT_EQ(narrays, 1);
	T_ASSERT(arrays[0] == s->at_prep);
	T_ASSERT_EQ(c->res, s->len);
	t_pat_check(kgc_array_data(arrays[0]), s->len, gen(p, s->it));
	if (++s->it == (uint32_t)iters) {
		atomic_fetch_add(&done_pipes, 1);
		return;
	}
	next(t, p);
	(void)kgc_io_submit(ring, t);
}

static void *loop_main(void *arg)
{
	int me = *(int *)arg, ep, efd;
	struct kgc_io_wait w = { .size = sizeof(w), .complete = on_complete, .arg = arg };
	struct epoll_event ev = { .events = EPOLLIN };
	kgc_thread *t;
	char name[8];

	snprintf(name, sizeof(name), "L%d", me);
	T_ASSERT_EQ(kgc_thread_attach(heap, name, &t), 0);
	efd = kgc_io_ring_eventfd(ring, t);
	T_ASSERT(efd >= 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	T_ASSERT(ep >= 0);
	ev.data.fd = efd;
	T_ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);
	while (atomic_load(&done_pipes) < NPIPE) {
		int n;

		kgc_enter_native(t);
		n = epoll_wait(ep, &ev, 1, 20);
		kgc_leave_native(t);
		T_ASSERT(n >= 0 || errno == EINTR);
		/* (also without an event: the other loop may have taken the wake-up
		 * and left completions it had no room for) */
		T_ASSERT(kgc_io_reap_wait(ring, t, NULL, 4, &w) >= 0);
	}
	close(ep);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void *gc_main(void *arg)
{
	unsigned long long s = *(unsigned long long *)arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(heap, "gc", &t), 0);
	while (!atomic_load(&stop)) {
		T_ASSERT_EQ(kgc_collect(t, t_rand(&s) % 4 ? KGC_GC_YOUNG : KGC_GC_FULL), 0);
		t_nap_native(t, 500 + (long)(t_rand(&s) % 2000));
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	unsigned long long seed = t_seed();
	const char *e = getenv("IO_EL_ITERS");
	kgc_thread *t;
	pthread_t loops[2], gc;
	int ids[2] = { 0, 1 };

	alarm(60);
	if (e)
		iters = atoi(e);
	heap = t_heap(64, 4, NULL);
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	ring = t_ring(t, 16);
	for (int p = 0; p < NPIPE; p++) {
		struct pipe_st *s = &pipes[p];

		T_ASSERT_EQ(pipe(s->fd), 0);
		T_ASSERT_EQ(pipe(s->ctl), 0);
		s->seed = seed + (unsigned long long)p * 7919;
		s->wr = (struct t_writer){ s->ctl[0], s->fd[1] };
		s->root = kgc_handle_new(t, NULL);
		T_ASSERT(s->root);
		T_ASSERT_EQ(pthread_create(&s->writer, NULL, t_writer_main, &s->wr), 0);
		next(t, p);
	}
	T_ASSERT_EQ(kgc_io_submit(ring, t), NPIPE);
	T_ASSERT_EQ(pthread_create(&gc, NULL, gc_main, &seed), 0);
	for (int i = 0; i < 2; i++)
		T_ASSERT_EQ(pthread_create(&loops[i], NULL, loop_main, &ids[i]), 0);
	kgc_enter_native(t);
	for (int i = 0; i < 2; i++)
		T_ASSERT_EQ(pthread_join(loops[i], NULL), 0);
	atomic_store(&stop, 1);
	T_ASSERT_EQ(pthread_join(gc, NULL), 0);
	kgc_leave_native(t);

	printf("%d pipes x %d messages; reaped by L0 %u, L1 %u\n", NPIPE, iters,
	       atomic_load(&reaped_by[0]), atomic_load(&reaped_by[1]));
	T_ASSERT_EQ(atomic_load(&reaped_by[0]) + atomic_load(&reaped_by[1]), NPIPE * iters);
	T_ASSERT_EQ(kgc_io_inflight(ring), 0);
	T_ASSERT_EQ(t_stats(heap).regions_pinned, 0);
	for (int p = 0; p < NPIPE; p++) {
		struct pipe_st *s = &pipes[p];

		T_ASSERT_EQ(s->it, iters);
		close(s->ctl[1]);	/* the writer ends */
		kgc_enter_native(t);
		T_ASSERT_EQ(pthread_join(s->writer, NULL), 0);
		kgc_leave_native(t);
		close(s->ctl[0]);
		close(s->fd[0]);
		close(s->fd[1]);
		kgc_handle_free(t, s->root);
	}
	T_ASSERT_EQ(kgc_io_ring_destroy(ring, t), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	return 0;
}
