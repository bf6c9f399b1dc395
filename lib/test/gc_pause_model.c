/* SPDX-License-Identifier: MIT */
/*
 * The young pause cost model (policy.c), fed recorded facts as collect.c
 * hands them over: (1) a pause that scans many dirty cards but copies
 * little (an LRU cache relinking old entries) does not read as expensive
 * copying - eden stays well above its one-region floor; (2) the same work in
 * twice the wall time, pause after pause (workers taking turns on one CPU),
 * keeps the per-card and per-byte costs - the model counts the workers' CPU
 * time - and sizes eden for the longer pauses; one such pause among quiet
 * ones shrinks eden until 5 pauses later (policy_stretch), and eden then
 * grows back (here by 1/8 per pause: no committed free memory); (3) with little
 * surviving, eden grows
 * (by 1/8 per pause into fresh memory while pauses take a large share of
 * the time) to 60% of the heap and no further, but (4) not while pauses take little of the
 * time; (5) a mixed pause teaches it nothing; (6) when one worker does most
 * of the copying (linked lists copied from their heads, or a worker off its
 * CPU), eden is sized by that worker's share, not by an even split; (7) the
 * next pause's to-space, backed ahead (pretouch.c), is what the survival
 * predicts for the next eden when that is more than the last pause used;
 * (8) on a busy machine a mixed pause's candidates are priced stretched,
 * but which regions are candidates is decided on their CPU cost; (9) eden
 * is sized on survival plus a margin of its standard deviations: where
 * survival swings from pause to pause, eden is smaller than where it holds
 * steady at the same average; (10) where all of eden survives and even
 * two regions copy over the goal (a large live set being built on a busy
 * machine), eden goes down to one region, not two; (11) before any pause
 * is measured eden is INITIAL_EDEN (2 MiB) in whole regions, at least one:
 * one 4 MiB region, not two (8 MB all surviving: 11-13 ms), and two of
 * 1 MiB; (12) the survivor regions the last pause left are part of the
 * next pause's collection set: eden is sized so that both fit the goal.
 */
#define _GNU_SOURCE
#include <math.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define MB (1u << 20)

/* the mutator's time between two pauses, and the pause's own */
static void nap(long ms, uint64_t pause_ns)
{
	struct timespec ts = { 0, ms * 1000 * 1000 + (long)pause_ns };

	nanosleep(&ts, NULL);
}

static double copy_share;	/* of the bytes, the busiest worker copied (0: not reported) */

/* A young pause over eden_mb of eden: cards dirty cards at card_ns each, copied
 * bytes at 1.5 ns/B, 2 workers; wall = stretch x the CPU critical path (the
 * serial part and the busiest worker's share). */
static void feed(kgc_heap *hh, uint32_t eden_mb, size_t cards, double card_ns, size_t copied,
		 double stretch, long nap_ms)
{
	struct kgc_heap *h = (struct kgc_heap *)hh;
	struct young_facts f = { 0 };

	f.nworkers = 2;
	f.cset_regions = eden_mb;
	f.cset_bytes = (size_t)eden_mb * MB;
	f.dirty_cards = cards;
	f.cards_cpu_ns = (uint64_t)(cards * card_ns);
	f.copied = copied;
	f.copied_max = (size_t)((double)copied * copy_share);
	f.evac_cpu_ns = (uint64_t)(copied * 1.5);
	f.w0_cpu_ns = (f.cards_cpu_ns + f.evac_cpu_ns) / 2;
	f.cpu_ns = f.w0_cpu_ns + 200 * 1000;	/* 200 us serial */
	f.crit_cpu_ns = f.cards_cpu_ns / 2 + (uint64_t)((double)f.evac_cpu_ns * (copy_share > 0.5 ? copy_share : 0.5));
	f.wall_ns = (uint64_t)(stretch * (double)(200 * 1000 + f.crit_cpu_ns));
	nap(nap_ms, f.wall_ns);
	h->gc_id++;
	kgci_policy_young_pause(h, &f);
	kgci_policy_after_gc(h, false);
}

static double lru_card_ns, lru_byte_ns;	/* the model's per-unit costs after cap_after_lru */

/* LRU-like pauses, each stretched by `stretch`, except the one at `odd`
 * (stretched 2.5x): the eden cap they leave. */
static uint32_t cap_after_lru(double stretch, int odd)
{
	kgc_heap *hh = t_heap(256, 0, NULL);
	struct kgc_heap *h = (struct kgc_heap *)hh;
	uint32_t cap;

	for (int i = 0; i < 20; i++)	/* 801 KB copied, ~8000 slots on dirty cards */
		feed(hh, 2, 8000, 300, 801 * 1024, i == odd ? 2.5 : stretch, 5);	/* GC time share > 40% */
	cap = h->pol.young_pause_cap;
	lru_card_ns = h->pol.card_ns;
	lru_byte_ns = h->pol.byte_ns;
	T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
	return cap;
}

/* Pauses where all of eden survives (a live set being built), the
 * busiest of 2 workers copying `share` of it, each stretched `stretch`
 * times: the eden cap they leave. */
static uint32_t cap_after_fill(double share, double stretch)
{
	kgc_heap *hh = t_heap(256, 0, NULL);
	struct kgc_heap *h = (struct kgc_heap *)hh;
	uint32_t cap;

	copy_share = share;
	for (int i = 0; i < 16; i++)
		feed(hh, h->pol.young_target, 10, 300, (size_t)h->pol.young_target * MB, stretch, 5);
	copy_share = 0;
	cap = h->pol.young_pause_cap;
	T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
	return cap;
}

/* (9) Pauses over 16 MB of eden, 30% of it surviving on average: steadily,
 * or swinging between 5% and 55% pause after pause (a program that builds
 * and drops structures): the eden cap they leave. */
static uint32_t cap_after_survival(bool swing, double *sd, uint32_t survivors)
{
	kgc_heap *hh = t_heap(256, 0, NULL);
	struct kgc_heap *h = (struct kgc_heap *)hh;
	uint32_t cap;

	for (int i = 0; i < 20; i++) {
		double surv = swing ? (i % 2 ? 0.55 : 0.05) : 0.3;

		/* as the pause leaves them (no region behind the count: the
		 * policy reads only the count here) */
		h->count[RT_SURVIVOR] += survivors;
		feed(hh, 16, 10, 300, (size_t)(surv * 16 * MB), 1.0, 5);
		h->count[RT_SURVIVOR] -= survivors;
	}
	cap = h->pol.young_pause_cap;
	*sd = sqrt(h->pol.survival_var);
	T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
	return cap;
}

int main(void)
{
	struct kgc_heap *h;
	kgc_heap *hh;
	uint32_t quiet, loaded, odd_recent, odd_past, cap;
	double card_ns, byte_ns;

	quiet = cap_after_lru(1.0, -1);
	card_ns = lru_card_ns;
	byte_ns = lru_byte_ns;
	odd_recent = cap_after_lru(1.0, 18);	/* 2 pauses before the end */
	odd_past = cap_after_lru(1.0, 4);	/* 16 pauses before: forgotten, eden regrown */
	loaded = cap_after_lru(2.0, -1);
	printf("LRU-like pauses: eden cap %u regions (quiet), %u and %u (one pause stretched, 2 and 16 "
	       "pauses ago), %u (wall time doubled); per card %.0f ns, per byte %.2f ns (quiet), %.0f and "
	       "%.2f (doubled)\n", quiet, odd_recent, odd_past, loaded, card_ns, byte_ns, lru_card_ns, lru_byte_ns);
	T_ASSERT(quiet >= 8);
	T_ASSERT(odd_recent < quiet);
	T_ASSERT_EQ(odd_past, quiet);
	T_ASSERT(loaded * 10 <= quiet * 7);	/* sized for the longer pauses */
	T_ASSERT(loaded >= 3);	/* above the floor: the cards are not read as copying */
	T_ASSERT(card_ns == lru_card_ns && byte_ns == lru_byte_ns);

	{
		uint32_t even = cap_after_fill(0.5, 1.0), skewed = cap_after_fill(0.9, 1.0);

		/* 1.5 ns/B: 0.75 ns/B split evenly, 1.35 ns/B as the busiest worker's */
		printf("all surviving: eden cap %u regions (copying split evenly), %u (one worker 90%%)\n",
		       even, skewed);
		T_ASSERT(even >= 5);
		T_ASSERT(skewed * 10 <= even * 6 + 10);
	}

	hh = t_heap(256, 0, NULL);
	h = (struct kgc_heap *)hh;
	for (int i = 0; i < 48; i++)	/* no committed free memory: 1/8 per pause */
		feed(hh, h->pol.young_target, 10, 300, 300 * 1024, 4.0, 2);	/* share > 50% */
	printf("low survival: eden cap %u regions, young target %u of %u\n", h->pol.young_pause_cap,
	       h->pol.young_target, h->nregions);
	T_ASSERT_EQ(h->pol.young_target, h->nregions * 60 / 100);
	T_ASSERT(h->pol.young_pause_cap <= h->nregions * 60 / 100);
	cap = h->pol.young_pause_cap;
	{	/* a mixed pause: an expensive one changes nothing */
		struct young_facts f = { .nworkers = 2, .cset_regions = 4, .cset_bytes = 4 * MB,
					 .copied = 4 * MB, .evac_cpu_ns = 400000000, .mixed = 3 };

		f.cpu_ns = f.wall_ns = f.evac_cpu_ns;
		kgci_policy_young_pause(h, &f);
		T_ASSERT_EQ(h->pol.young_pause_cap, cap);
	}
	T_ASSERT_EQ(kgc_heap_destroy(hh), 0);

	{	/* (8) a busy machine prices a mixed pause higher, not a region's candidacy */
		double cost, pause;

		hh = t_heap(256, 0, NULL);
		h = (struct kgc_heap *)hh;
		for (int i = 0; i < 6; i++)
			feed(hh, 4, 100, 300, 2 * MB, 3.0, 5);
		cost = kgci_policy_mixed_cost_ns(h, MB / 2, 100);
		pause = kgci_policy_mixed_pause_ns(h, MB / 2, 100);
		printf("mixed candidate of 512K live, 100 cards: %.2f ms of CPU, %.2f ms in a pause "
		       "(stretch %.2f)\n", cost / 1e6, pause / 1e6, h->pol.stretch);
		T_ASSERT(h->pol.stretch >= 2.9);
		T_ASSERT(cost <= kgci_policy_mixed_budget_ns(h));	/* still a candidate (1.5 ms) */
		T_ASSERT(pause >= 2.9 * cost);
		T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
	}
	{	/* (7) the to-space backed ahead follows the next eden, not only the last pause's */
		hh = t_heap(256, 0, NULL);
		h = (struct kgc_heap *)hh;
		h->tospace_need = 4;	/* the last pause's, eden 4 regions */
		h->pol.survival = 0.9;
		h->pol.young_target = 20;
		printf("to-space to back: %u regions (last pause used %u, next eden %u, survival %.1f)\n",
		       kgci_policy_tospace_backed(h), h->tospace_need, h->pol.young_target, h->pol.survival);
		T_ASSERT_EQ(kgci_policy_tospace_backed(h), 20);
		h->pol.survival = 0.05;
		T_ASSERT_EQ(kgci_policy_tospace_backed(h), 4);
		T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
	}

	{	/* (9) eden sized on survival + SURVIVAL_SIGMAS standard deviations */
		double sd_steady, sd_swing;
		uint32_t steady = cap_after_survival(false, &sd_steady, 0), swing = cap_after_survival(true, &sd_swing, 0);

		printf("survival 30%%: eden cap %u regions (steady, sd %.3f), %u (swinging 5-55%%, sd %.3f)\n",
		       steady, sd_steady, swing, sd_swing);
		T_ASSERT(sd_steady < 0.01);
		T_ASSERT(sd_swing > 0.15);
		T_ASSERT(swing * 10 <= steady * 7);
	}

	{	/* (10) the floor is one region: one worker copying it all, each pause
		 * stretched 3x (1.5 ns/B: 2 MB predicted at ~9 ms against 6) */
		uint32_t slow = cap_after_fill(1.0, 3.0);

		printf("all surviving, one worker, 3x stretched: eden cap %u region(s)\n", slow);
		T_ASSERT_EQ(slow, 1);
	}

	{	/* (12) the next pause collects the survivors with eden: 8 MiB of
		 * them leave eden about 8 MiB smaller than none (the same
		 * pauses: the model predicts the collection set) */
		double sd;
		uint32_t none = cap_after_survival(false, &sd, 0), eight = cap_after_survival(false, &sd, 8);

		printf("survivors: eden %u MiB with none, %u MiB with 8 MiB of them\n", none, eight);
		T_ASSERT(none >= 12);
		T_ASSERT(eight + 6 <= none && eight + 10 >= none);
	}

	{	/* (11) the first eden, before anything is measured */
		struct kgc_options o;
		uint32_t first[2];
		size_t rs[2] = { 4 * MB, MB };

		for (int k = 0; k < 2; k++) {
			T_ASSERT_EQ(kgc_options_init(&o), 0);
			o.max_heap = 64 * (size_t)MB;
			o.region_size = rs[k];
			T_ASSERT_EQ(kgc_heap_create(&o, &hh), 0);
			first[k] = ((struct kgc_heap *)hh)->pol.young_target;
			T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
		}
		printf("first eden: %u region(s) of 4 MiB, %u of 1 MiB\n", first[0], first[1]);
		T_ASSERT_EQ(first[0], 1);
		T_ASSERT_EQ(first[1], 2);
	}

	hh = t_heap(256, 0, NULL);	/* 0.6 ms pauses 40 ms apart: ~1.5% */
	h = (struct kgc_heap *)hh;
	cap = h->pol.young_target;
	for (int i = 0; i < 8; i++)
		feed(hh, h->pol.young_target, 10, 300, 300 * 1024, 1.0, 40);
	printf("low survival, GC time share %.1f%%: young target %u\n", h->pol.gc_share * 100,
	       h->pol.young_target);
	T_ASSERT_EQ(h->pol.young_target, cap);
	T_ASSERT_EQ(kgc_heap_destroy(hh), 0);
	return 0;
}
