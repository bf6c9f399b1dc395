/* SPDX-License-Identifier: MIT */
/*
 * Memory kept hot: regions a full collection frees stay committed through
 * that collection and the next ones while KGC_UNCOMMIT_DELAY_MS has not
 * passed; once it has (and 16 collections), the next collection gives them
 * back to the OS, down to what the young generation needs. With the delay
 * "never" (4294967295) they stay committed. Every GC verified.
 */
#define _GNU_SOURCE
#include <time.h>
#include "tgc.h"

#define LIVE_MB 40

static uint64_t committed_mb(kgc_heap *h)
{
	struct kgc_stats s;

	T_ASSERT_EQ(kgc_stats_get(h, &s, sizeof(s)), 0);
	return s.heap_committed >> 20;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *sleep_ms(void *arg)
{
	struct timespec ts = { 0, 0 };
	uint64_t ms = (uint64_t)(uintptr_t)arg;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	return NULL;
}

/* LIVE_MB of byte arrays promoted to old space, then dropped and collected by a full GC. */
static void grow_and_drop(kgc_thread *t)
{
	KGC_ROOTS(t, r, 1);
	r[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, LIVE_MB * 16);
	T_ASSERT(r[0]);
	for (int i = 0; i < LIVE_MB * 16; i++) {
		kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 60000);

		T_ASSERT(a);
		kgc_array_set_ref(t, r[0], i, a);
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* promoted (tenure 1) */
	r[0] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
}

/* Returns the committed MiB after the delay passed; *hot = right after the full GC. */
static uint64_t run(const char *delay, unsigned delay_ms, uint64_t *hot)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	uint64_t t0, mb;

	t_opts_small(&o, 96, 4);
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_UNCOMMIT_DELAY_MS", delay), 0);
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	t0 = now_ms();
	grow_and_drop(t);
	*hot = committed_mb(h);
	T_ASSERT(*hot >= LIVE_MB);
	for (int i = 0; i < 20; i++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	if (now_ms() - t0 < delay_ms)	/* a loaded host may take longer than the delay */
		T_ASSERT(committed_mb(h) >= LIVE_MB);
	kgc_do_blocking(t, sleep_ms, (void *)(uintptr_t)(delay_ms + 100));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	mb = committed_mb(h);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return mb;
}

int main(void)
{
	uint64_t hot, cold;

	cold = run("400", 400, &hot);
	printf("delay 400 ms: %llu MiB committed after the full GC, %llu MiB after the delay\n",
	       (unsigned long long)hot, (unsigned long long)cold);
	/* kept: young 4 + to-space + reserve 9 regions, nothing live */
	T_ASSERT(cold < LIVE_MB / 2);
	cold = run("4294967295", 400, &hot);
	printf("delay never: %llu MiB, %llu MiB\n", (unsigned long long)hot, (unsigned long long)cold);
	T_ASSERT(cold >= LIVE_MB);
	return 0;
}
