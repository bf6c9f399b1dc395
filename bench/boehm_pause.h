/* SPDX-License-Identifier: MIT */
/*
 * Boehm GC pause measurement: the collection-event callback (gc 8.x) marks
 * the stop-the-world window from GC_EVENT_PRE_STOP_WORLD to
 * GC_EVENT_POST_START_WORLD. The default Debian build collects with the world
 * stopped (parallel marking, no incremental mode) and sweeps lazily during
 * allocation, so this window is the pause mutators see.
 */
#ifndef KGC_BENCH_BOEHM_PAUSE_H
#define KGC_BENCH_BOEHM_PAUSE_H

#include <gc/gc.h>
#include "common.h"

#define BOEHM_MAX_PAUSES (1 << 16)
static uint64_t boehm_pause_t0;
static uint64_t boehm_pauses[BOEHM_MAX_PAUSES];
static size_t boehm_npauses;
static uint64_t boehm_pause_hist[HIST_BUCKETS];
static uint64_t boehm_pause_total, boehm_pause_max;

static void boehm_on_event(GC_EventType e)
{
	uint64_t d;

	if (e == GC_EVENT_PRE_STOP_WORLD) {
		boehm_pause_t0 = now_ns();
	} else if (e == GC_EVENT_POST_START_WORLD && boehm_pause_t0) {
		d = now_ns() - boehm_pause_t0;
		boehm_pause_t0 = 0;
		if (boehm_npauses < BOEHM_MAX_PAUSES)
			boehm_pauses[boehm_npauses++] = d;
		hist_add_ns(boehm_pause_hist, d);
		boehm_pause_total += d;
		if (d > boehm_pause_max)
			boehm_pause_max = d;
	}
}

static inline void boehm_pause_init(void)
{
	GC_set_on_collection_event(boehm_on_event);
}

/* Exact p-th percentile of recorded pauses (ns). */
static inline uint64_t boehm_pause_pct(double p)
{
	static uint64_t sorted[BOEHM_MAX_PAUSES];

	memcpy(sorted, boehm_pauses, boehm_npauses * sizeof(uint64_t));
	qsort(sorted, boehm_npauses, sizeof(uint64_t), cmp_u64);
	return pct_sorted(sorted, boehm_npauses, p);
}

#endif
