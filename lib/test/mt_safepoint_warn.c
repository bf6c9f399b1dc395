/* SPDX-License-Identifier: MIT */
/*
 * A thread that runs in managed state without polling (here it pushes and
 * pops frames for 400 ms) holds up every collection. The
 * safepoint names it on stderr after KGC_SAFEPOINT_WARN_MS (here 100 ms)
 * without any KGC_LOG; the same wait made through kgc_do_blocking holds up
 * nothing and is not named.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include "tgc.h"

static kgc_heap *h;
static atomic_int ready;

static void *sleep_400ms(void *arg)
{
	struct timespec ts = { 0, 400000000 };

	nanosleep(&ts, NULL);
	return arg;
}

/* Busy in managed state for 400 ms without a poll, pushing and popping a
 * frame all the while: the safepoint's warning reads the frames pointer of
 * this running thread (under TSan, a plain read of it was a data race). */
static void spin_400ms(kgc_thread *t)
{
	struct timespec ts, now;
	kgc_obj slot = NULL;
	struct kgc_frame f;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	do {
		for (int i = 0; i < 1000; i++) {
			kgc_frame_push(t, &f, &slot, 1, NULL);
			T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - ts.tv_sec) * 1000000000ll + (now.tv_nsec - ts.tv_nsec) < 400000000ll);
}

static void *sleeper(void *arg)
{
	kgc_thread *t;
	int blocking = *(int *)arg;

	T_ASSERT_EQ(kgc_thread_attach(h, blocking ? "polite-sleeper" : "rude-sleeper", &t), 0);
	atomic_store(&ready, 1);
	if (blocking)
		T_ASSERT(kgc_do_blocking(t, sleep_400ms, arg) == arg);
	else
		spin_400ms(t);			/* managed: the collection waits */
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static double run(int blocking)
{
	kgc_thread *t;
	pthread_t th;
	uint64_t t0;
	struct timespec ts;

	atomic_store(&ready, 0);
	T_ASSERT_EQ(pthread_create(&th, NULL, sleeper, &blocking), 0);
	while (!atomic_load(&ready))
		;
	T_ASSERT_EQ(kgc_thread_attach(h, "collector", &t), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	return (ts.tv_sec * 1000000000ull + ts.tv_nsec - t0) / 1e6;
}

int main(void)
{
	struct kgc_options o;
	int saved = dup(2), pfd[2];
	double rude, polite;
	char buf[4096];
	ssize_t n;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 32 << 20;
	o.safepoint_warn_ms = 100;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	/* stderr into a pipe (the warnings fit its buffer) */
	T_ASSERT_EQ(pipe(pfd), 0);
	dup2(pfd[1], 2);
	polite = run(1);
	rude = run(0);
	fflush(stderr);
	dup2(saved, 2);
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("collection next to kgc_do_blocking: %.1f ms; next to a managed sleep: %.1f ms\n"
	       "stderr:\n%s", polite, rude, buf);
	T_ASSERT(rude >= 300);
	T_ASSERT(strstr(buf, "thread 'rude-sleeper', which is managed"));
	T_ASSERT(!strstr(buf, "polite-sleeper"));
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
