/* SPDX-License-Identifier: MIT */
/*
 * A cleaner runs once, on the kgc-cleaner thread, after its object died:
 * not while the object lives (collections come and go), once after the
 * young GC that finds it dead, never again; an old object's cleaner runs
 * after a full GC. mt_: the cleaner thread is a thread (TSan).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include "tgc.h"

static kgc_type_id NODE;
static atomic_int runs[3];
static pthread_t ran_on[3];

static void clean(void *arg)
{
	int i = (int)(intptr_t)arg;

	ran_on[i] = pthread_self();
	atomic_fetch_add(&runs[i], 1);
}

int main(void)
{
	kgc_heap *h = t_heap(32, 4, &NODE);
	kgc_thread *t;
	kgc_obj r[2] = { 0 };
	struct kgc_frame f;
	char name[32];

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, r, 2, NULL);
	r[0] = kgc_alloc(t, NODE);
	r[1] = kgc_alloc(t, NODE);
	T_ASSERT_EQ(kgc_cleaner_register(t, r[0], clean, (void *)0), 0);
	T_ASSERT_EQ(kgc_cleaner_register(t, r[1], clean, (void *)1), 0);
	T_ASSERT_EQ(kgc_cleaner_register(t, kgc_alloc(t, NODE), clean, (void *)2), 0);
	T_ASSERT_EQ(kgc_cleaner_register(t, NULL, clean, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_cleaner_register(t, r[0], NULL, NULL), -EINVAL);

	/* object 2 dies young; 0 and 1 live through young and full GCs */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(atomic_load(&runs[2]), 1);
	T_ASSERT(!pthread_equal(ran_on[2], pthread_self()));
	T_ASSERT_EQ(pthread_getname_np(ran_on[2], name, sizeof(name)), 0);
	T_ASSERT(!strcmp(name, "kgc-cleaner"));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(atomic_load(&runs[0]) + atomic_load(&runs[1]), 0);
	T_ASSERT_EQ(atomic_load(&runs[2]), 1);

	/* object 1 dies old: the full GC finds it */
	r[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(atomic_load(&runs[1]), 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_cleaners_drain(t), 0);
	T_ASSERT_EQ(atomic_load(&runs[1]), 1);
	T_ASSERT_EQ(atomic_load(&runs[0]), 0);
	T_ASSERT_EQ(t_stats(h).cleaners_run, 2);
	printf("cleaners ran once each on '%s', after their objects died\n", name);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	T_ASSERT_EQ(atomic_load(&runs[0]), 0);	/* alive at destroy: never runs */
	return 0;
}
