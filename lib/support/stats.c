/* SPDX-License-Identifier: MIT */
/* stats.c - counters, pause histogram, kgc_stats_get / kgc_stats_print. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "gc_internal.h"

void kgci_stats_pause(struct kgc_heap *h, bool full, uint64_t ns)
{
	uint64_t us = ns / 1000;
	int b = 0;

	if (full) {
		h->st.full_gcs++;
		h->st.full_pause_ns += ns;
	} else {
		h->st.young_gcs++;
		h->st.young_pause_ns += ns;
	}
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
void kgci_stats_refresh(struct kgc_heap *h)
{
	uint32_t pinned = 0;
	int kp = kgci_backend_kernel_pins(h, h->kpin_bits);	/* kmod; < 0: unknown, not counted */

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
		for (struct kgc_thread *t = h->thr.threads; t && !p; t = t->next) {
			uint32_t idx[2];
			unsigned n = kgci_pins_private(h, t, idx);

			for (unsigned k = 0; k < n && !p; k++)
				p = idx[k] == i;
		}
		if (!p && kp > 0)
			p = h->kpin_bits[i / 64] >> (i % 64) & 1;
		pinned += p;
	}
	h->st.regions_pinned = pinned;
	h->st.heap_capacity = (uint64_t)h->nregions * h->region_size;
	h->st.heap_used = kgci_heap_used_bytes(h);
	h->st.heap_committed = (uint64_t)(h->nregions - h->count[RT_FREE]) * h->region_size;
	for (uint32_t i = 0; i < h->nregions; i++)
		if (h->regions[i].type == RT_FREE && (h->regions[i].flags & RF_COMMITTED))
			h->st.heap_committed += h->region_size;
	h->st.critical_gets = atomic_load(&h->critical_gets);
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		h->st.critical_gets += __atomic_load_n(&t->pub.crit_gets, __ATOMIC_RELAXED);
	h->st.uncommit_busy = h->be.uncommit_busy;
	h->st.region_moves_copied = h->be.move_copies;
	h->st.pacing_stalls = atomic_load_explicit(&h->alloc.pace_stalls, memory_order_relaxed);
	h->st.pacing_stall_ns = atomic_load_explicit(&h->alloc.pace_ns, memory_order_relaxed);
	h->st.mark_assists = atomic_load_explicit(&h->alloc.assists, memory_order_relaxed);
	h->st.mark_assist_ns = atomic_load_explicit(&h->alloc.assist_ns, memory_order_relaxed);
	h->st.mark_assist_bytes = atomic_load_explicit(&h->alloc.assist_bytes, memory_order_relaxed);
	h->st.cleaners_run = atomic_load_explicit(&h->cleaners_run, memory_order_relaxed);
	h->st.kpin_watch_armed = atomic_load_explicit(&h->kpw_armed, memory_order_relaxed);
	h->st.kpin_watch_fired = atomic_load_explicit(&h->kpw_fired, memory_order_relaxed);
	h->st.kpin_watch_gcs = atomic_load_explicit(&h->kpw_gcs, memory_order_relaxed);
	kgci_io_stats_refresh(h);
	kgci_pinspace_stats_refresh(h);
}

/* h->lock held: the numbers now, into *s. */
void kgci_stats_snapshot(struct kgc_heap *h, struct kgc_stats *s)
{
	kgci_stats_refresh(h);
	*s = h->st;
	/* live threads' TLAB bytes are added at detach; report them now too */
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		s->bytes_allocated += __atomic_load_n(&t->bytes_allocated, __ATOMIC_RELAXED);
}

KGC_API
int kgc_stats_get(kgc_heap *h, struct kgc_stats *out, size_t size)
{
	if (h && kgci_hook_forbidden(h, "kgc_stats_get"))
		return -EPERM;	/* it takes h->lock, which the pause holds */
	struct kgc_stats s;

	if (!h || !out || !size) {
		kgci_err_set(EINVAL, "kgc_stats_get: %s", !h ? "heap is NULL" : !out ? "out is NULL" : "size is 0");
		return -EINVAL;
	}
	pthread_mutex_lock(&h->lock);
	kgci_stats_snapshot(h, &s);
	pthread_mutex_unlock(&h->lock);
	memcpy(out, &s, size < sizeof(s) ? size : sizeof(s));
	if (size > sizeof(s))
		memset((char *)out + sizeof(s), 0, size - sizeof(s));
	return 0;
}

/* Every field of the table in kgc.h, name=value, wrapped. */
struct stats_line { FILE *f; int col; };

static void stats_put(struct stats_line *l, const char *name, int idx, unsigned long long v)
{
	char buf[96];
	int n = idx < 0 ? snprintf(buf, sizeof(buf), " %s=%llu", name, v)
			: snprintf(buf, sizeof(buf), " %s[%d]=%llu", name, idx, v);

	if (l->col && l->col + n > 100) {
		fputc('\n', l->f);
		l->col = 0;
	}
	if (!l->col)
		l->col = fprintf(l->f, "kgc:");
	fputs(buf, l->f);
	l->col += n;
}

KGC_API
void kgc_stats_print(kgc_heap *h, void *file)
{
	struct kgc_stats s;
	struct stats_line l = { file ? file : stderr, 0 };

	if (kgc_stats_get(h, &s, sizeof(s)))
		return;
#define PRINT_FIELD(type, name, what) stats_put(&l, #name, -1, (unsigned long long)s.name);
#define PRINT_ARRAY(type, name, n, what) \
	for (int i = 0; i < (n); i++) \
		if (s.name[i]) \
			stats_put(&l, #name, i, (unsigned long long)s.name[i]);
	KGC_STATS_FIELDS(PRINT_FIELD, PRINT_ARRAY)
#undef PRINT_FIELD
#undef PRINT_ARRAY
	if (l.col)
		fputc('\n', l.f);
}
