/* SPDX-License-Identifier: MIT */
/* stats.c - counters, pause histogram, kgc_stats_get / kgc_stats_print. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "gc_internal.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void stats_pause(struct kgc_heap *h, bool full, uint64_t ns)
{
	uint64_t us = ns / 1000;
	int b = 0;

	if (full)
		h->st.full_gcs++;
	else
		h->st.young_gcs++;
	h->st.pause_total_ns += ns;
	if (ns > h->st.pause_max_ns)
		h->st.pause_max_ns = ns;
	while (us >= 2 && b < KGC_PAUSE_HIST_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	h->st.pause_hist[b]++;
}

/* Called with h->lock held. */
void stats_refresh(struct kgc_heap *h)
{
	uint32_t pinned = 0;
	int kp = backend_kernel_pins(h, h->kpin_bits);	/* kmod; < 0: unknown, not counted */

	h->st.region_size = (uint32_t)h->region_size;
	h->st.regions_total = h->nregions;
	h->st.regions_free = h->count[RT_FREE];
	h->st.regions_eden = h->count[RT_EDEN];
	h->st.regions_survivor = h->count[RT_SURVIVOR];
	h->st.regions_old = h->count[RT_OLD];
	h->st.regions_humongous = h->count[RT_HUM_START] + h->count[RT_HUM_CONT];
	for (uint32_t i = 0; i < h->nregions; i++) {
		bool p = atomic_load_explicit(region_pins(h, i), memory_order_relaxed) != 0;

		/* pins still in a thread's pin cache, critical native arrays count too */
		for (struct kgc_thread *t = h->threads; t && !p; t = t->next) {
			uint32_t idx[2];
			unsigned n = pins_private(h, t, idx);

			for (unsigned k = 0; k < n && !p; k++)
				p = idx[k] == i;
		}
		if (!p && kp > 0)
			p = h->kpin_bits[i / 64] >> (i % 64) & 1;
		pinned += p;
	}
	h->st.regions_pinned = pinned;
	h->st.heap_capacity = (uint64_t)h->nregions * h->region_size;
	h->st.heap_used = heap_used_bytes(h);
	h->st.heap_committed = (uint64_t)(h->nregions - h->count[RT_FREE]) * h->region_size;
	for (uint32_t i = 0; i < h->nregions; i++)
		if (h->regions[i].type == RT_FREE && (h->regions[i].flags & RF_COMMITTED))
			h->st.heap_committed += h->region_size;
	h->st.critical_gets = atomic_load(&h->critical_gets);
	for (struct kgc_thread *t = h->threads; t; t = t->next)
		h->st.critical_gets += __atomic_load_n(&t->pub.crit_gets, __ATOMIC_RELAXED);
	h->st.uncommit_busy = h->be.uncommit_busy;
	h->st.pacing_stalls = atomic_load_explicit(&h->pace_stalls, memory_order_relaxed);
	h->st.pacing_stall_ns = atomic_load_explicit(&h->pace_ns, memory_order_relaxed);
}

__attribute__((visibility("default")))
int kgc_stats_get(kgc_heap *h, struct kgc_stats *out, size_t size)
{
	if (!h || !out || size != sizeof(*out)) {
		err_set(EINVAL, "kgc_stats_get: size %zu != %zu", size, sizeof(*out));
		return -EINVAL;
	}
	pthread_mutex_lock(&h->lock);
	stats_refresh(h);
	memcpy(out, &h->st, sizeof(*out));
	/* live threads' TLAB bytes are added at detach; report them now too */
	for (struct kgc_thread *t = h->threads; t; t = t->next)
		out->bytes_allocated += __atomic_load_n(&t->bytes_allocated, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

__attribute__((visibility("default")))
void kgc_stats_print(kgc_heap *h, void *file)
{
	struct kgc_stats s;
	FILE *f = file ? file : stderr;

	if (kgc_stats_get(h, &s, sizeof(s)))
		return;
	fprintf(f, "kgc: %llu young (%llu mixed) + %llu full GCs, %llu concurrent cycles, pause total %.3f ms max %.3f ms\n",
		(unsigned long long)s.young_gcs, (unsigned long long)s.mixed_gcs,
		(unsigned long long)s.full_gcs, (unsigned long long)s.concurrent_cycles,
		s.pause_total_ns / 1e6, s.pause_max_ns / 1e6);
	fprintf(f, "kgc: allocated %llu MB, copied %llu MB, promoted %llu MB, freed %llu MB\n",
		(unsigned long long)(s.bytes_allocated >> 20), (unsigned long long)(s.bytes_copied >> 20),
		(unsigned long long)(s.bytes_promoted >> 20), (unsigned long long)(s.bytes_freed >> 20));
	fprintf(f, "kgc: heap %lluM used / %lluM committed / %lluM capacity; regions %u (%uM): "
		"free %u eden %u survivor %u old %u humongous %u pinned %u\n",
		(unsigned long long)(s.heap_used >> 20), (unsigned long long)(s.heap_committed >> 20),
		(unsigned long long)(s.heap_capacity >> 20), s.regions_total, s.region_size >> 20,
		s.regions_free, s.regions_eden, s.regions_survivor, s.regions_old,
		s.regions_humongous, s.regions_pinned);
	fprintf(f, "kgc: critical gets %llu, evacuation failures: pinned %llu kernel-pinned %llu "
		"allocation %llu; gclocker stalls %llu (%.3f ms)\n",
		(unsigned long long)s.critical_gets, (unsigned long long)s.evac_fail_pinned,
		(unsigned long long)s.evac_fail_kernel_pinned, (unsigned long long)s.evac_fail_alloc,
		(unsigned long long)s.gclocker_stalls, s.gclocker_stall_ns / 1e6);
	fprintf(f, "kgc: concurrent cycles degenerated %llu; allocation pacing %llu sleeps (%.3f ms)\n",
		(unsigned long long)s.degenerated_cycles, (unsigned long long)s.pacing_stalls,
		s.pacing_stall_ns / 1e6);
	fprintf(f, "kgc: pause histogram (us):");
	for (int i = 0; i < KGC_PAUSE_HIST_BUCKETS; i++)
		if (s.pause_hist[i])
			fprintf(f, " [%u,%u):%llu", i ? 1u << i : 0, 1u << (i + 1),
				(unsigned long long)s.pause_hist[i]);
	fprintf(f, "\n");
}
