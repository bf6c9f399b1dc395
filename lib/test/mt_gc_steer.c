/* SPDX-License-Identifier: MIT */
/*
 * The pool thread runs on other CPUs than the pausing thread's during a
 * young pause, and gets its own CPU set back afterwards (gang.c, spawn.c:
 * where the kernel sees no shared cache, a woken pool thread otherwise
 * queues behind the pausing thread on its CPU). While it copies, its
 * affinity is the test's set less exactly one CPU, which it is not on;
 * after the collection it is the whole set again. It fails with the
 * steering removed (the set is whole during the pause) or the restore
 * removed (one CPU still missing after it). SKIP with fewer than 2 CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tgc.h"
#include "../gc_internal.h"

#define NLISTS 512
#define LEN 32

static pthread_t main_thread;
static cpu_set_t all;
static atomic_int samples, whole, bad_count, on_excluded, pool_tid;

/* every 64 objects a worker copies: the pool thread looks at its own set */
static void sample(void)
{
	cpu_set_t s;
	int cpu;

	if (pthread_equal(pthread_self(), main_thread))
		return;
	atomic_store(&pool_tid, (int)syscall(SYS_gettid));
	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return;
	cpu = sched_getcpu();
	atomic_fetch_add(&samples, 1);
	if (CPU_EQUAL(&s, &all))
		atomic_fetch_add(&whole, 1);
	else if (CPU_COUNT(&s) != CPU_COUNT(&all) - 1)
		atomic_fetch_add(&bad_count, 1);
	if (cpu >= 0 && !CPU_ISSET(cpu, &s))
		atomic_fetch_add(&on_excluded, 1);
}

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	cpu_set_t after;
	int rounds = 0;

	main_thread = pthread_self();
	T_ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	T_SKIP_IF(CPU_COUNT(&all) < 2, "needs 2 CPUs (the pool thread has nowhere else to go)");
	t_opts_small(&o, 64, 16);
	o.gc_threads = 2;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* the table in old space */
	kgci_young_test_drain_hook = sample;
	/* until the pool thread took part in a few pauses (it may wake late) */
	while (atomic_load(&samples) < 8 && rounds++ < 200) {
		for (int i = 0; i < NLISTS; i++)
			kgc_array_set_ref(t, slots[0], (size_t)i, t_list(t, node, &slots[1], LEN, (int64_t)i * LEN));
		slots[1] = NULL;
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	}
	kgci_young_test_drain_hook = NULL;
	T_ASSERT(atomic_load(&pool_tid) != 0);
	T_ASSERT_EQ(sched_getaffinity(atomic_load(&pool_tid), sizeof(after), &after), 0);
	printf("%d rounds: %d samples on the pool thread, %d with every CPU, %d with a set of another size, "
	       "%d on an excluded CPU; after the pause its set is %s\n",
	       rounds, atomic_load(&samples), atomic_load(&whole), atomic_load(&bad_count),
	       atomic_load(&on_excluded), CPU_EQUAL(&after, &all) ? "whole" : "NOT whole");
	T_ASSERT(atomic_load(&samples) >= 8);
	T_ASSERT_EQ(atomic_load(&whole), 0);
	T_ASSERT_EQ(atomic_load(&bad_count), 0);
	T_ASSERT_EQ(atomic_load(&on_excluded), 0);
	T_ASSERT(CPU_EQUAL(&after, &all));
	for (int i = 0; i < NLISTS; i++)
		t_list_check(kgc_array_get_ref(slots[0], (size_t)i), LEN);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	puts("PASS");
	return 0;
}
