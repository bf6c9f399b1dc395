/* SPDX-License-Identifier: MIT */
/*
 * kgc_cleaner_cancel: for a seeded random set of N cleaners with handles,
 * some cancelled while their objects live (0: their functions never run,
 * even after the objects die), the others after their objects died and
 * their functions ran (1). A cancel racing the running function waits for
 * it (1, the function's effect visible). Cancelled twice: -EINVAL, and
 * checked mode aborts naming the call; from its own function: -EDEADLK.
 */
#include <pthread.h>
#include <stdbool.h>
#include "tgc.h"

enum { N = 100 };

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_thread *t;
static _Atomic int runs[N];

static void count_fn(void *arg)
{
	runs[(intptr_t)arg]++;
}

static void cancel_before_and_after(unsigned long long seed)
{
	kgc_cleaner c[N];
	bool early[N];
	int nearly = 0;

	for (int i = 0; i < N; i++) {
		c[i] = kgc_cleaner_new(t, kgc_alloc(t, NODE), count_fn, (void *)(intptr_t)i, NULL, 0);
		T_ASSERT(c[i]);
		early[i] = t_rand(&seed) % 3 == 0;
	}
	/* the objects are garbage, but no collection has run: cancel wins */
	for (int i = 0; i < N; i++)
		if (early[i]) {
			T_ASSERT_EQ(kgc_cleaner_cancel(t, c[i]), 0);
			nearly++;
		}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	for (int i = 0; i < N; i++) {
		if (runs[i] != (early[i] ? 0 : 1))
			T_FAIL("cleaner %d ran %d times (cancelled early: %d)", i, runs[i], early[i]);
		if (!early[i])
			T_ASSERT_EQ(kgc_cleaner_cancel(t, c[i]), 1);
	}
	printf("%d cancelled before: never ran; %d after: ran once, cancel said so\n", nearly, N - nearly);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int in_fn, slow_done, self_rc = 1;
static kgc_cleaner self_c;

static void slow_fn(void *arg)
{
	struct timespec ts = { 0, 50 * 1000000 };

	pthread_mutex_lock(&mu);
	in_fn = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	nanosleep(&ts, NULL);
	__atomic_store_n(&slow_done, 1, __ATOMIC_RELEASE);
}

static void self_fn(void *arg)
{
	kgc_thread *ct;

	/* the cleaner thread attaches only to try the call */
	T_ASSERT_EQ(kgc_thread_attach(h, "in-cleaner", &ct), 0);
	self_rc = kgc_cleaner_cancel(ct, self_c);
	T_ASSERT_EQ(kgc_thread_detach(ct), 0);
}

static void cancel_while_running(void)
{
	kgc_cleaner c = kgc_cleaner_new(t, kgc_alloc(t, NODE), slow_fn, NULL, NULL, 0);

	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	kgc_enter_native(t);
	pthread_mutex_lock(&mu);
	while (!in_fn)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	kgc_leave_native(t);
	T_ASSERT_EQ(kgc_cleaner_cancel(t, c), 1);
	T_ASSERT_EQ(__atomic_load_n(&slow_done, __ATOMIC_ACQUIRE), 1);	/* it waited */
	self_c = kgc_cleaner_new(t, kgc_alloc(t, NODE), self_fn, NULL, NULL, 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(self_rc, -EDEADLK);
	T_ASSERT_EQ(kgc_cleaner_cancel(t, self_c), 1);
	T_ASSERT_EQ(kgc_cleaner_cancel(t, self_c), -EINVAL);
	printf("cancel during the function waited for it; from itself -EDEADLK; twice -EINVAL\n");
}

static void cancel_twice_checked(void)
{
	kgc_cleaner c;

	h = t_heap(16, 4, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "checked", &t), 0);
	c = kgc_cleaner_new(t, kgc_alloc(t, NODE), count_fn, NULL, NULL, 0);
	kgc_cleaner_cancel(t, c);
	kgc_cleaner_cancel(t, c);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	h = t_heap(32, 4, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	cancel_before_and_after(t_seed());
	cancel_while_running();
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	t_expect_death(cancel_twice_checked, "kgc_cleaner_cancel: thread 'checked'");
	return 0;
}
