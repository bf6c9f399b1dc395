/* SPDX-License-Identifier: MIT */
/*
 * policy.c - all sizing and triggering decisions: region size (G1-like,
 * ~2048 regions), young generation size, tenuring threshold, when a young
 * collection is followed by a full one, what a failing allocation tries
 * next (a full collection, the reserve), soft heap size.
 */
#include <math.h>
#include <unistd.h>
#include "gc_internal.h"

#define MB (1024u * 1024u)
#define TARGET_REGIONS 2048
#define RESERVE_PERCENT 10	/* free regions kept for survivors/promotion */
#define PAUSE_GOAL_MS_DEFAULT 6
#define MAX_YOUNG_PERCENT 60	/* young may grow to this share of the heap (G1's G1MaxNewSizePercent) */
/*
 * The smallest eden the goal, or the start (INITIAL_EDEN), may ask for.
 * One region: eden already shrinks to one when old space leaves no room
 * (kgci_policy_after_gc), so nothing depends on two. Where everything survives (GCOld building its 3 GiB
 * live set in 4 MiB regions) two regions copy 8 MB a pause, 7-8 ms - over
 * the goal whatever the model says; one halves it (bench/RESULTS-ab.md,
 * 2026-12-07 evening).
 */
#define EDEN_MIN_REGIONS 1
#define INITIAL_EDEN (2 * (size_t)MB)	/* before the first young pause is measured: all of
					 * it may survive (~1.5 ms/MB copied + first touch here,
					 * twice that with a CPU hog: 4 MB took 12 ms); at least
					 * one region (EDEN_MIN_REGIONS) - not two: with 4 MiB
					 * regions (8 GiB heaps) two copied 8 MB in GCOld's first
					 * pauses, 11-13 ms (bench/RESULTS-ab.md, 2026-12-07 night) */

size_t kgci_policy_default_heap(void)
{
	size_t h = kgci_os_phys_mem() / 4;

	if (h < 64 * (size_t)MB)
		h = 64 * (size_t)MB;
	if (h > ((size_t)32 << 30))
		h = (size_t)32 << 30;
	return h;
}

/* G1's rule (about TARGET_REGIONS regions), but never below the size the
 * backend serves best (hint: the kmod backend's huge-folio region size). */
size_t kgci_policy_region_size(size_t max_heap, size_t hint)
{
	size_t r = MB;

	while (r < hint && r < 32 * (size_t)MB)
		r *= 2;

	while (r < 32 * (size_t)MB && r * 2 * TARGET_REGIONS <= max_heap)
		r *= 2;
	return r;
}

static uint32_t reserve_regions(struct kgc_heap *h)
{
	uint32_t r = h->nregions * RESERVE_PERCENT / 100;

	return r ? r : 1;
}

void kgci_policy_init(struct kgc_heap *h)
{
	uint32_t young;

	if (h->opt.young_size) {
		young = (uint32_t)(h->opt.young_size >> h->region_shift);
	} else {
		/* ~15% of the heap, at most 256 MiB of eden: pause stays short */
		young = h->nregions * 15 / 100;
		if (((size_t)young << h->region_shift) > ((size_t)256 << 20))
			young = (uint32_t)(((size_t)256 << 20) >> h->region_shift);
	}
	if (young < 1)
		young = 1;
	if (young > h->nregions / 2 && h->nregions >= 4)
		young = h->nregions / 2;
	h->pol.young_pause_cap = young;
	if (!h->opt.young_size) {
		/* no pause history yet: start small, kgci_policy_young_pause grows it */
		uint32_t init = (uint32_t)(INITIAL_EDEN >> h->region_shift);

		h->pol.young_pause_cap = h->nregions;
		if (init < EDEN_MIN_REGIONS)
			init = EDEN_MIN_REGIONS;
		if (young > init)
			young = init;
	}
	h->pol.young_target = young;
	h->pol.tenure = h->opt.tenure_threshold > HDR_AGE_MAX ? HDR_AGE_MAX : h->opt.tenure_threshold;
	h->alloc.tlab_size = h->region_size / 64 > 256 * 1024 ? 256 * 1024 : h->region_size / 64;
	if (h->alloc.tlab_size < 4096)
		h->alloc.tlab_size = 4096;
	h->alloc.humongous_threshold = h->region_size / 2;
	h->pol.soft_regions = h->nregions;
	/* back the first collection's to-space ahead of time too (pretouch.c) */
	h->tospace_need = h->pol.young_target;	/* worst case: all of eden survives */
}

unsigned kgci_policy_tenure(struct kgc_heap *h)
{
	return h->pol.tenure;
}

/* Survivor regions per young GC; beyond this objects are promoted early. */
uint32_t kgci_policy_survivor_limit(struct kgc_heap *h)
{
	uint32_t s = h->pol.young_target / 4;

	return s ? s : 1;
}

/* Eden regions a mutator may take before the next young collection. */
static uint32_t eden_budget(struct kgc_heap *h)
{
	uint32_t free = h->count[RT_FREE], res = reserve_regions(h), b = h->pol.young_target;

	if (free <= res)
		return 0;
	if (b > free - res)
		b = free - res;
	return b;
}

bool kgci_policy_eden_available(struct kgc_heap *h)
{
	if (h->alloc.eden_use_reserve)
		return h->count[RT_FREE] > 0;
	return h->alloc.eden_regions < h->pol.young_target && eden_budget(h) > 0;
}

/*
 * A humongous object moves by pages (kgci_backend_move_regions) from this
 * size up, else by copying: below it the fixed cost of a page move (the
 * syscall, a VMA of its own, a TLB flush) is more than a copy's. Measured
 * by bench/movebench (bench/RESULTS-move.md, 2026-12-07, anon backend
 * natively, load ~13 on 2 CPUs) against a copy into memory not backed -
 * the collector's usual destination, a region released or never used -
 * the page move won from 256 KiB (0.14x the copy's time; 64 KiB: 2.0x;
 * 1 MiB 0.03x, 64 MiB 0.019x; with KGC_THP 64 MiB 0.049x). Into memory
 * already backed a copy stays cheaper up to ~16 MiB with small pages, but
 * a page move also keeps the object's untouched pages untouched (a copy
 * faults them in): in bench/largecache a threshold of 16 MiB made kgc's one
 * full collection take 11.8 s against 0.47 s with every object moved by
 * pages. So: every humongous object (at least half a 1 MiB region) moves
 * by pages. The kmod backend takes the same number until it is measured
 * in the VM.
 */
#define MOVE_PAGES_MIN ((size_t)256 << 10)

bool kgci_policy_move_by_pages(struct kgc_heap *h, size_t bytes)
{
	(void)h;
	return bytes >= MOVE_PAGES_MIN;
}

/* Regions the next young collection is expected to copy into: twice what
 * the measured survival predicts (at least the last one's to-space), half
 * of young before anything is measured, never more than young. */
static uint32_t young_need(struct kgc_heap *h)
{
	uint32_t y = h->pol.young_target, need;

	if (!h->pol.survival)
		return y / 2;
	need = (uint32_t)(2 * h->pol.survival * y + 1);
	if (need < h->tospace_need)
		need = h->tospace_need;
	return need < y ? need : y;
}

/*
 * Free regions that should be backed when the next young pause starts (its
 * to-space; pretouch.c backs them ahead, eden leaves them): what the last
 * one used, or what the measured survival predicts for the next eden if
 * more - while eden grows, the last pause's to-space undercounts the next
 * one's: under a CPU hog a pause copied 8.8 MB into 9 regions when 4 had
 * been backed, and faulted the rest in (15 ms against a 5 ms prediction).
 */
uint32_t kgci_policy_tospace_backed(struct kgc_heap *h)
{
	uint32_t need = (uint32_t)(h->pol.survival * h->pol.young_target + 0.999) + 2;

	return need > h->tospace_need ? need : h->tospace_need;
}

/* Regions a young collection must find free (its to-space, reserve). */
static uint32_t room_needed(struct kgc_heap *h)
{
	uint32_t need = young_need(h) + reserve_regions(h);

	return need < 2 ? 2 : need;
}

/* Free regions, swept gaps counted as room for promotion (at half value:
 * fragmentation). */
static uint32_t room_free(struct kgc_heap *h)
{
	return h->count[RT_FREE] + (uint32_t)((h->chunk_bytes / 2) >> h->region_shift);
}

/* After a young collection: is old space so full that the next one cannot work? */
bool kgci_policy_should_full(struct kgc_heap *h)
{
	return h->pol.need_full || room_free(h) < room_needed(h);
}

/*
 * An allocation still fails inside its safepoint, after the collection it
 * asked for (full_ran: a full one ran since; reserve_tried: it already tried
 * the survivor reserve). What next: a full collection if none ran, then the
 * survivor reserve as the last resort (a later young collection may fail
 * evacuation), then nothing (-ENOMEM).
 */
enum alloc_retry kgci_policy_alloc_retry(struct kgc_heap *h, bool full_ran, bool reserve_tried)
{
	if (!full_ran)
		return ALLOC_RETRY_FULL;
	if (!reserve_tried)
		return ALLOC_RETRY_RESERVE;
	return ALLOC_RETRY_NONE;
}

/* Regions held by humongous objects tracked for eager reclaim (young.c). */
static uint32_t tracked_humongous(struct kgc_heap *h)
{
	uint32_t tracked = 0;

	for (uint32_t i = 0; i < h->nregions; i++) {
		const struct region *r = &h->regions[i];

		if (r->type == RT_HUM_START && r->eager == EAGER_TRACKED)
			tracked += r->hum_count;
	}
	return tracked;
}

/*
 * An allocation of size bytes still fails after the collection it asked
 * for: before a full collection, a young one with no cycle running
 * (collect.c: GCR_RELOCATE)? For a humongous one that finds enough regions
 * free (the reserve kept) but no run, *regions is the run it relocates
 * humongous objects for (humreloc.c); for any, while humongous objects are
 * tracked, dead ones are freed (eager reclaim is off while a cycle runs) -
 * unless the last such try did not avoid a full collection.
 */
bool kgci_policy_alloc_relocate(struct kgc_heap *h, size_t size, uint32_t *regions)
{
	uint32_t n = (uint32_t)((size + h->region_size - 1) >> h->region_shift);

	*regions = size >= h->alloc.humongous_threshold && h->count[RT_FREE] >= n + 1 ? n : 0;
	return *regions || (!h->pol.hum_retry_failed && tracked_humongous(h));
}

/*
 * A dead humongous object freed by a young collection (eager reclaim): its
 * pages released at once (the regions then read zero)? A humongous
 * allocation into backed regions clears them whole (alloc.c), touching
 * every page; into released ones it clears nothing and faults in only the
 * pages its program touches - what a full collection's page moves left
 * behind before eager reclaim freed remembered objects (bench/largecache:
 * kgc's RSS 278 MiB with those moves, 983 MiB clearing reused regions,
 * and 0.93x JDK 25 G1's time; released: 170 MiB). Released when the object
 * spans MIN_RELEASE_REGIONS regions or more: a program that fills its
 * arrays pays page faults instead of the clearing, a smaller share the
 * larger the object (mostly huge pages where THP is on).
 */
#define MIN_RELEASE_REGIONS 2

bool kgci_policy_release_humongous(struct kgc_heap *h, uint32_t nregions)
{
	(void)h;
	return nregions >= MIN_RELEASE_REGIONS;
}

/*
 * A young collection left too little room (kgci_policy_should_full): is a
 * second young collection worth trying first? Yes while the humongous
 * objects tracked for eager reclaim (young.c: their references known from
 * roots, young objects and their remembered sets) hold at least the
 * regions missing - dead ones are freed by a young collection with no
 * cycle running (collect.c aborts one), and a humongous allocation that
 * still finds no run relocates the live ones (humreloc.c) - and the last
 * try did not end in a full collection anyway.
 */
bool kgci_policy_hum_retry(struct kgc_heap *h)
{
	uint32_t need = room_needed(h), have = room_free(h);

	if (h->pol.hum_retry_failed || h->pol.need_full)
		return false;
	return have < need && tracked_humongous(h) >= need - have;
}

/* How the try went: a failed one is not repeated before a full collection. */
void kgci_policy_hum_retry_done(struct kgc_heap *h, bool avoided)
{
	h->pol.hum_retry_failed = !avoided;
}

/* During a concurrent cycle: would the next young collection leave so little
 * room that a full one follows (kgci_policy_should_full)? Then the cycle is
 * finished in the current pause instead (cmark.c). */
static uint32_t cycle_margin(struct kgc_heap *h)
{
	return room_needed(h) + h->tospace_need + young_need(h) / 2;
}

bool kgci_policy_cycle_urgent(struct kgc_heap *h)
{
	return room_free(h) < cycle_margin(h);
}

/*
 * Allocation pacing (after Shenandoah's pacer), decided after each young
 * collection: allocating threads give part of their time to the cycle
 * (alloc.c) - marking for it while it marks (assist.c), else sleeping, so
 * that where the marker shares CPUs with them it gets those CPUs. Two
 * reasons, the larger share wins, at most KGC_PACING % of their time:
 *  - old space close to kgci_policy_cycle_urgent's margin while the marker
 *    marks or sweeps: from nothing at PACE_ZONE margins of room up to
 *    KGC_PACING at the margin (the cycle should end concurrently rather
 *    than in a long degenerated pause);
 *  - marking behind its schedule (after Go's GC pacer): it should be done
 *    before old space grows by MARK_GROWTH_PERCENT of what it held at the
 *    cycle's start. While old space grew by a larger share of that than
 *    marking progressed (bytes marked against the last cycle's),
 *    ASSIST_GAIN x the difference. Marking done sooner is less old space
 *    promoted meanwhile: a smaller heap at the cycle's end.
 * Returns the share of time, in permille.
 */
#define PACE_ZONE 3
#define PACING_DEFAULT 50	/* KGC_PACING: at most half their time */
/* 10: on 2 CPUs with 2 allocating threads the marker alone got 15-20% of a
 * CPU; at 25 the churn bench's old space grew 20% per cycle while marking
 * and its peak RSS was 569-610 MiB, at 10 it is 495-546 MiB, at 5 488-519
 * MiB, with the same run time (3 alternating runs each, 2026-12-05) */
#define MARK_GROWTH_PERCENT 10
#define ASSIST_GAIN 2

static unsigned pace_behind(const struct mark_progress *mp, unsigned cap)
{
	double grown, done, share;

	if (!mp || !mp->marking || !mp->expect || !mp->old0)
		return 0;
	grown = (double)(mp->old_now > mp->old0 ? mp->old_now - mp->old0 : 0) /
		((double)mp->old0 * MARK_GROWTH_PERCENT / 100);
	done = (double)mp->marked / (double)mp->expect;
	if (grown <= done)
		return 0;
	share = (grown - done) * ASSIST_GAIN * 1000;
	return share >= cap ? cap : (unsigned)share;
}

unsigned kgci_policy_pace(struct kgc_heap *h, bool marking, const struct mark_progress *mp)
{
	uint64_t m = cycle_margin(h), room = room_free(h);
	unsigned pct = h->opt.pacing_percent ? h->opt.pacing_percent : PACING_DEFAULT, zone, behind;

	if (pct >= 100)
		return 0;
	if (pct > 90)
		pct = 90;
	behind = pace_behind(mp, pct * 10);
	if (!marking || room >= PACE_ZONE * m)
		zone = 0;
	else if (room <= m)
		zone = pct * 10;
	else
		zone = (unsigned)((PACE_ZONE * m - room) * pct * 10 / ((PACE_ZONE - 1) * m));
	return zone > behind ? zone : behind;
}

#define IHOP_DEFAULT 35

static double pause_goal_ns(const struct kgc_heap *h)
{
	return (h->opt.pause_goal_ms ? h->opt.pause_goal_ms : PAUSE_GOAL_MS_DEFAULT) * 1e6;
}

/*
 * CPU availability: what a pause's wall time was over its CPU critical path
 * (the pausing thread's serial part plus the busiest worker's card scan and
 * evacuation). About 1 when each worker had a CPU of its own; up to the
 * number of workers when they took turns on one (a CPU hog on 2 CPUs: 10-17
 * ms pauses of 15 ms of the workers' CPU, where the model assumed them side
 * by side, bench/RESULTS-ab.md). The model's terms stay CPU time - a worker
 * off its CPU does not make copying read as expensive - and the whole
 * prediction is stretched by the largest of the last STRETCH_SAMPLES pauses
 * of at least STRETCH_MIN_NS (wake-ups dominate shorter ones), bounded to
 * 1..STRETCH_MAX. The largest, not the median: under a hog the stretch
 * varies 1.0-1.9 from pause to pause and up to 3.1 in one, and eden sized
 * by the median (1.4) still gave 12-13 ms pauses; by the largest, 7-10 ms
 * at the same throughput (bench/RESULTS-ab.md). A preempted pause on a
 * quiet machine shrinks eden for the next STRETCH_SAMPLES pauses only.
 * STRETCH_MAX: two workers and a hog on 2 CPUs, each thread getting 2/3 of
 * one, the workers taking turns: 2 x 1.5 (3.2 was seen).
 */
#define STRETCH_MIN_NS 1000000
#define STRETCH_MAX 3.0

static double policy_stretch(const struct policy_state *p)
{
	return p->stretch ? p->stretch : 1.0;
}

static void stretch_sample(struct policy_state *p, const struct young_facts *f)
{
	double crit = (double)(f->cpu_ns > f->w0_cpu_ns ? f->cpu_ns - f->w0_cpu_ns : 0) +
		      (double)f->crit_cpu_ns, x;
	unsigned n;

	if (f->wall_ns < STRETCH_MIN_NS || crit <= 0)
		return;
	x = (double)f->wall_ns / crit;
	p->stretch_s[p->nstretch++ % STRETCH_SAMPLES] = x < 1 ? 1 : x > STRETCH_MAX ? STRETCH_MAX : x;
	n = p->nstretch < STRETCH_SAMPLES ? p->nstretch : STRETCH_SAMPLES;
	p->stretch = 1;
	for (unsigned i = 0; i < n; i++)
		p->stretch = p->stretch_s[i] > p->stretch ? p->stretch_s[i] : p->stretch;
}

/*
 * Mixed collections (after G1's G1MixedGCLiveThresholdPercent,
 * G1HeapWastePercent, G1MixedGCCountTarget, G1OldCSetRegionThresholdPercent):
 * an old region is a candidate when less than KGC_MIXED_LIVE % of it is
 * live (denser ones cost more to copy than their gaps are worth: the sweep
 * reuses those). The default, 30, is far below G1's 85: G1 cannot allocate
 * into a region's gaps, kgc's promotion reuses them, so only sparse regions
 * are worth copying. Where old regions are evenly about half live (the churn
 * bench) evacuating them kept a larger heap than reusing their gaps in place
 * (peak RSS +4-14% at 50 and 85, bench/RESULTS-ab.md); at 30 no bench run
 * has enough candidates for a mixed phase and their figures are unchanged
 * (run 4x longer, churn does: kgci_policy_mixed_surplus), while a live set
 * that shrank leaves sparse regions that are evacuated and freed without a
 * full collection (RESULTS-ab.md, "compaction on by default").
 * KGC_MIXED_LIVE=100 turns it off. A cycle whose candidates would reclaim less than
 * MIXED_MIN_RECLAIM_PERCENT of the heap has none: the rebuild they need
 * costs the marker about as much as marking. Each mixed collection
 * takes at least 1/MIXED_COUNT_TARGET of the cycle's candidates, so the
 * mixed phase ends within that many collections, and more while their live
 * bytes fit a quarter of the pause goal (the rest is eden's), at most
 * MIXED_MAX_PERCENT of the heap's regions.
 */
#define MIXED_LIVE_DEFAULT 30
#define MIXED_MIN_RECLAIM_PERCENT 10
#define MIXED_COUNT_TARGET 8
#define MIXED_MAX_PERCENT 10
#define MIXED_WASTE_PERCENT 5

bool kgci_policy_mixed_candidate(struct kgc_heap *h, size_t live)
{
	unsigned pct = h->opt.mixed_live_percent ? h->opt.mixed_live_percent : MIXED_LIVE_DEFAULT;

	return pct < 100 && live * 100 < h->region_size * pct;
}

bool kgci_policy_mixed_worth(struct kgc_heap *h, size_t reclaimable)
{
	return reclaimable * 100 >= ((size_t)h->nregions << h->region_shift) * MIXED_MIN_RECLAIM_PERCENT;
}

/*
 * Old space a mixed phase may evacuate, chosen at remark: what the cycle
 * leaves free in old regions (free_after: their size less the live bytes
 * marked and promoted since the snapshot) beyond what promotion refills
 * before the next cycle's sweep - MIXED_REFILL_PERIODS x what it promoted
 * from the last cycle's start to this one's. A region's gaps are reused in
 * place for free; evacuating it costs pause time, and its gaps are no
 * promotion space while it waits. Where promotion refills every gap anyway
 * (the churn bench run 4x longer: ~200 MB promoted per cycle, cycles back
 * to back) evacuation only moved the footprint up: peak RSS 709-743 MiB
 * with candidates chosen in every cycle, 596-664 MiB with mixed collections
 * off, 647-710 MiB with this limit (no mixed phase then; 3 alternating runs
 * each, RESULTS-ab.md). No cycle started since the heap's creation or the
 * last full collection (promoted_period 0): no limit.
 */
#define MIXED_REFILL_PERIODS 2

size_t kgci_policy_mixed_surplus(struct kgc_heap *h, size_t free_after, uint64_t promoted_period)
{
	uint64_t refill = promoted_period * MIXED_REFILL_PERIODS;

	if (!promoted_period)
		return SIZE_MAX;
	return free_after > refill ? free_after - (size_t)refill : 0;
}

/* Old regions one young GC may evacuate: at most MIXED_MAX_PERCENT of the
 * heap's regions (at least one), their live bytes within a quarter of the
 * pause goal. */
static void old_evac_limits(struct kgc_heap *h, uint32_t *max, size_t *budget)
{
	*max = h->nregions * MIXED_MAX_PERCENT / 100;
	if (*max < 1)
		*max = 1;
	*budget = h->pol.byte_ns ? (size_t)(pause_goal_ns(h) * 0.25 / (h->pol.byte_ns * policy_stretch(&h->pol)))
				 : 2 * h->region_size;
}

/*
 * A mixed candidate's predicted evacuation cost: copying its live bytes and
 * scanning the cards of its remembered set, at the pause model's measured
 * CPU ns per byte and per dirty card (before any was measured: 2 ns/B and
 * 500 ns per card, this machine's order). CPU, not divided among workers:
 * the remembered cards of one region are scanned by one worker when they
 * fall in one source region.
 */
double kgci_policy_mixed_cost_ns(struct kgc_heap *h, size_t live, size_t cards)
{
	const struct policy_state *p = &h->pol;

	return (double)live * (p->byte_ns ? p->byte_ns : 2.0) + (double)cards * (p->card_ns ? p->card_ns : 500.0) +
	       1000.0;	/* per region: at least the serial part's share */
}

/*
 * The same in a pause on this machine now: stretched by its CPU
 * availability (policy_stretch). How many candidates one mixed pause takes
 * follows it; whether a region is a candidate at all (remark, cleanup)
 * does not - under two CPU hogs every region priced over the budget, none
 * was ever chosen, and 4000 young pauses ran 1000 cycles that compacted
 * nothing (gc_mixed).
 */
double kgci_policy_mixed_pause_ns(struct kgc_heap *h, size_t live, size_t cards)
{
	return policy_stretch(&h->pol) * kgci_policy_mixed_cost_ns(h, live, cards);
}

/* Garbage in candidates that may be left unreclaimed: the least efficient
 * ones up to MIXED_WASTE_PERCENT of the heap are dropped (G1HeapWastePercent). */
size_t kgci_policy_mixed_waste(struct kgc_heap *h)
{
	return ((size_t)h->nregions << h->region_shift) * MIXED_WASTE_PERCENT / 100;
}

/*
 * A mixed collection's candidates: at least min (1/MIXED_COUNT_TARGET of
 * the cycle's) while their predicted cost fits the whole pause goal
 * (cap_ns), more while it fits a quarter of it (budget_ns: the rest is
 * eden's), at most max; always one. G1 forces the minimum whatever its
 * cost, but with a 200 ms goal: at kgc's few ms, 1/8 of 180 half-live
 * candidates was predicted at 18-22 ms and took up to 39 ms (churn at
 * KGC_MIXED_LIVE=50). The mixed phase then takes more collections.
 */
void kgci_policy_mixed_limits(struct kgc_heap *h, uint32_t ncand_cycle, uint32_t *min, uint32_t *max,
			 double *budget_ns, double *cap_ns)
{
	size_t unused;

	*min = (ncand_cycle + MIXED_COUNT_TARGET - 1) / MIXED_COUNT_TARGET;
	old_evac_limits(h, max, &unused);
	if (*max < *min)
		*max = *min;
	*budget_ns = kgci_policy_mixed_budget_ns(h);
	*cap_ns = pause_goal_ns(h);
}

double kgci_policy_mixed_budget_ns(struct kgc_heap *h)
{
	return pause_goal_ns(h) * 0.25;
}

/* A candidate referenced from more cards than one mixed pause's budget can
 * scan is dropped at cleanup: its set stops there (1024..REMSET_MAX_CARDS). */
uint32_t kgci_policy_remset_max(struct kgc_heap *h)
{
	double n = kgci_policy_mixed_budget_ns(h) / (h->pol.card_ns ? h->pol.card_ns : 500.0);

	return n < 1024 ? 1024 : n > REMSET_MAX_CARDS ? REMSET_MAX_CARDS : (uint32_t)n;
}

/*
 * Retained regions (old since a pinned evacuation failure, unpinned since):
 * a young collection evacuates them (not while a cycle sweeps or rebuilds
 * remembered sets: kgci_cm_retained_evac_ok), most while their live
 * bytes - counted when they failed, an upper bound - fit a quarter of the
 * pause goal, at least one, at most MIXED_MAX_PERCENT of the heap's regions.
 * A pinned eden region is mostly garbage: left in old space it would fill
 * it and start marking cycles that cannot free it (its few live objects
 * keep it from being empty); no cycle starts while some are pending.
 */
void kgci_policy_retained_limits(struct kgc_heap *h, uint32_t *max, size_t *budget)
{
	old_evac_limits(h, max, budget);
}

/* After a young collection: start a concurrent mark cycle? When old and
 * humongous space (less swept gaps) passes KGC_IHOP % of the heap. While
 * the last cycle's mixed collections are pending (mixed_pending), only when
 * old space would run out before they end. */
bool kgci_policy_start_mark(struct kgc_heap *h, bool mixed_pending)
{
	unsigned ihop = h->opt.ihop_percent ? h->opt.ihop_percent : IHOP_DEFAULT;
	size_t heap = (size_t)h->nregions << h->region_shift;

	if (ihop >= 100)
		return false;
	if (mixed_pending)	/* twice kgci_policy_cycle_urgent's margin */
		return room_free(h) < 2 * cycle_margin(h);
	return kgci_old_used(h) * 100 >= heap * ihop;
}

void kgci_policy_after_gc(struct kgc_heap *h, bool full)
{
	h->alloc.eden_regions = 0;
	if (full)
		h->pol.need_full = h->pol.hum_retry_failed = false;
	/* shrink young when old space leaves too little room */
	if (!h->opt.young_size) {
		uint32_t free = h->count[RT_FREE], res = reserve_regions(h);
		uint32_t cap = free > res ? (free - res) : 1;
		uint32_t want = h->nregions * MAX_YOUNG_PERCENT / 100;

		if (want > h->pol.young_pause_cap)
			want = h->pol.young_pause_cap;
		if (want < 1)
			want = 1;
		h->pol.young_target = want < cap ? want : (cap ? cap : 1);
	}
}

/* A running average: the first sample as it is, then half old, half new. */
static double avg(double old, double sample)
{
	return old ? 0.5 * old + 0.5 * sample : sample;
}

/*
 * The serial part of a pause - what the pausing thread does beyond its
 * share of the workers' phases: pins, cset choice, freeing regions, weak
 * cells - as fixed + per region, by least squares over the recent pauses
 * (sums decayed by SERIAL_DECAY per pause, like G1's TruncatedSeq).
 */
#define SERIAL_DECAY 0.8

static void serial_fit(struct policy_state *p, double regions, double ns)
{
	double det;

	p->sn = p->sn * SERIAL_DECAY + 1;
	p->sx = p->sx * SERIAL_DECAY + regions;
	p->sy = p->sy * SERIAL_DECAY + ns;
	p->sxx = p->sxx * SERIAL_DECAY + regions * regions;
	p->sxy = p->sxy * SERIAL_DECAY + regions * ns;
	/* a slope only from pauses whose region counts differ (variance >= 1) */
	det = p->sn * p->sxx - p->sx * p->sx;
	p->serial_region = p->sn >= 3 && det >= p->sn * p->sn ? (p->sn * p->sxy - p->sx * p->sy) / det : 0;
	if (p->serial_region < 0)
		p->serial_region = 0;
	p->serial_fixed = (p->sy - p->serial_region * p->sx) / p->sn;
	if (p->serial_fixed < 0)
		p->serial_fixed = 0;
}

/*
 * The pause (ns) the model predicts for an eden of e bytes: the serial
 * part, plus the workers' card scan shared by n workers, plus the copying
 * as long as its busiest worker takes. Copying splits unevenly: a linked
 * list is copied by one worker from its head, and a worker that waits for
 * its CPU leaves its share to the others (stealing). Dividing by n alone
 * predicted 3.8 ms for churn pauses that took 11 ms, one worker copying
 * 83% of the bytes.
 */
static double copy_share(const struct policy_state *p, unsigned n)
{
	double even = 1.0 / n;

	return p->copy_share > even ? p->copy_share : even;
}

/*
 * The survival the model sizes eden on: the running average plus
 * SURVIVAL_SIGMAS standard deviations of its samples (G1 predicts with its
 * confidence margin, G1ConfidencePercent, the same way). A program whose
 * survival swings - binary trees between building a tree and dropping it:
 * 0.16-0.26 on average, a pause that copies all of a 22 MB eden - gets an
 * eden that the high sample still copies in about twice the goal; one with
 * a steady survival, the eden its average allows. 1.5 against the average
 * alone (bench/RESULTS-ab.md, 2026-12-07 afternoon): binary trees depth 21
 * max young pause 10-13 ms against 14-54, p99 5.3-6.6 ms against 7.2-8.7.
 */
#define SURVIVAL_SIGMAS 1.5

static double survival_pred(const struct policy_state *p)
{
	double s = p->survival + SURVIVAL_SIGMAS * sqrt(p->survival_var);

	return s < 1 ? s : 1;
}

/* A pause's survival (kept bytes included) into the average and variance
 * (both decayed by half per pause). */
static void survival_sample(struct policy_state *p, const struct young_facts *f)
{
	double x = (double)(f->copied + f->kept) / (double)f->cset_bytes, d = x - p->survival;

	p->survival_var = p->survival ? 0.5 * (p->survival_var + 0.5 * d * d) : 0;
	p->survival = avg(p->survival, x);
}

static double predict_pause(const struct kgc_heap *h, double e, unsigned n)
{
	const struct policy_state *p = &h->pol;
	double regions = e / (double)h->region_size;

	return policy_stretch(p) * (p->serial_fixed + p->serial_region * regions +
				    (p->card_ns * p->cards + p->rslot_ns * p->rslots) / n +
				    p->byte_ns * survival_pred(p) * e * copy_share(p, n));
}

/*
 * Eden from the pause goal (KGC_PAUSE_GOAL_MS), after G1's young sizing: a
 * young pause costs a fixed part, a part per cset region, the dirty cards
 * scanned and the bytes copied, each term measured on its own from CPU
 * time on the threads' own clocks - a worker that lost its CPU or a pause
 * full of old->young slots does not read as expensive copying. Eden grows
 * toward MAX_YOUNG_PERCENT of the heap while the predicted pause fits 90%
 * of the goal (the largest eden that does, found by bisection: the model
 * is monotonic in eden). The pause collects the survivor regions with
 * eden (G1's young list): sized on eden alone, GCOld's pauses at 1 GiB
 * live collected 10% more than predicted, 6.1-6.8 ms for 5.3 ms each
 * (bench/RESULTS-ab.md, 2026-12-07 late night). Growth costs first touches of fresh memory, so
 * (like G1's GCTimeRatio heap expansion) eden grows only while pauses take
 * more than GC_TIME_SHARE of the time - below that it keeps its size (the
 * pause goal may still shrink it) - and per collection at most by the
 * committed free regions beyond the next eden's (no page faults: up to
 * doubling) or else by
 * 1/FRESH_STEP into never-touched memory (GCBench ran 1.5-2x slower when
 * eden doubled into fresh memory on this VM).
 */
#define GOAL_SHARE 0.9
#define GC_TIME_SHARE 0.08	/* G1's GCTimeRatio=12: 1/13 */
#define FRESH_STEP 8

/* May eden grow? The running share of wall time spent in young pauses. */
static uint32_t growth_cap(struct kgc_heap *h, const struct young_facts *f)
{
	struct policy_state *p = &h->pol;
	uint64_t now = kgci_now_ns(), span = p->last_pause_end ? now - p->last_pause_end : 0;

	uint32_t y = h->pol.young_target, committed = 0;

	p->last_pause_end = now;
	if (span > f->wall_ns)
		p->gc_share = avg(p->gc_share, (double)f->wall_ns / (double)span);
	if (p->gc_share <= GC_TIME_SHARE)
		return y;
	/* the next eden takes y of them (the last one's, just freed); the rest is room to grow */
	for (uint32_t i = 0; i < h->nregions && committed < 2 * y; i++)
		committed += h->regions[i].type == RT_FREE && (h->regions[i].flags & RF_COMMITTED);
	committed = committed > y ? committed - y : 0;
	return y + (committed > y / FRESH_STEP ? committed : y / FRESH_STEP + 1);
}

void kgci_policy_young_pause(struct kgc_heap *h, const struct young_facts *f)
{
	struct policy_state *p = &h->pol;
	double goal = pause_goal_ns(h) * GOAL_SHARE, lo, hi;
	unsigned n = f->nworkers ? f->nworkers : 1;
	uint32_t grow = growth_cap(h, f);

	/* what the model, as it stood, predicted for this pause's set (log) */
	double was = p->byte_ns && f->cset_bytes && !f->mixed ? predict_pause(h, (double)f->cset_bytes, n) : 0;
	/* the next pause collects the survivors this one made with its eden */
	double surv = (double)h->count[RT_SURVIVOR] * h->region_size;

	stretch_sample(p, f);	/* any pause tells how much CPU the workers got */
	/* a mixed pause also copied old regions: no measure of eden's cost */
	if (h->opt.young_size || !f->cset_bytes || f->mixed)
		return;
	/* with refinement the pause's few dirty cards cost mostly the card
	 * table's scan: not a card's cost */
	if (f->dirty_cards >= 64 && f->dirty_cards >= f->refined_cards)
		p->card_ns = avg(p->card_ns, (double)f->cards_cpu_ns / (double)f->dirty_cards);
	p->cards = avg(p->cards, (double)f->dirty_cards);
	if (f->refined_slots >= 64)
		p->rslot_ns = avg(p->rslot_ns, (double)f->refined_cpu_ns / (double)f->refined_slots);
	p->rslots = avg(p->rslots, (double)f->refined_slots);
	p->card_work = avg(p->card_work, (double)(f->dirty_cards + f->refined_cards));
	/* a pause that promoted in place also scanned what it did not copy:
	 * its cost per byte reads high, taken only when there is no other
	 * (else a budget spent before copying was ever measured would keep
	 * it unmeasured, and every pause promoting after 1 MiB) */
	if (f->copied >= MB / 4 && (!f->kept || !p->byte_ns)) {
		p->byte_ns = avg(p->byte_ns, (double)f->evac_cpu_ns / (double)f->copied);
		p->copy_share = avg(p->copy_share, (double)f->copied_max / (double)f->copied);
	}
	survival_sample(p, f);
	if (p->survival < 0.001)
		p->survival = 0.001;
	serial_fit(p, f->cset_regions, f->cpu_ns > f->w0_cpu_ns ? (double)(f->cpu_ns - f->w0_cpu_ns) : 0);
	if (!p->byte_ns) {	/* too little copied to measure: grow, by the time share only */
		p->young_pause_cap = grow;
		return;
	}
	lo = EDEN_MIN_REGIONS * (double)h->region_size;
	hi = (double)h->nregions * h->region_size * MAX_YOUNG_PERCENT / 100;
	if (predict_pause(h, hi + surv, n) > goal) {
		for (int i = 0; i < 24 && hi - lo > h->region_size; i++) {
			double mid = 0.5 * (lo + hi);

			*(predict_pause(h, mid + surv, n) <= goal ? &lo : &hi) = mid;
		}
		hi = lo;
	}
	p->young_pause_cap = (uint32_t)(hi / h->region_size);
	if (p->young_pause_cap > grow)
		p->young_pause_cap = grow;
	kgci_log_line(h, LOG_HEAP, "pause model: (fixed %.0fus + %.1fus/region + (%.0fns/card x %.0f + "
		      "%.0fns/logged slot x %.0f) / %u + "
		      "%.2fns/B x survival %.3f (sd %.3f) x busiest worker's share %.2f) x cpu stretch %.2f: eden %uM "
		      "+ survivors %.0fM predicted %.2fms (goal %.2fms), gc time %.1f%%; this pause: collection set "
		      "%.1fM, predicted %.2fms, took %.2fms",
		      p->serial_fixed / 1e3, p->serial_region / 1e3, p->card_ns, p->cards, p->rslot_ns, p->rslots,
		      n, p->byte_ns,
		      p->survival, sqrt(p->survival_var), copy_share(p, n), policy_stretch(p),
		      p->young_pause_cap << h->region_shift >> 20, surv / MB,
		      predict_pause(h, (double)p->young_pause_cap * h->region_size + surv, n) / 1e6, goal / 1e6,
		      p->gc_share * 100, f->cset_bytes / 1048576.0, was / 1e6, f->wall_ns / 1e6);
}

/*
 * The evacuation budget of the young pause about to run (young.c): once
 * the pause has run b->ns and copied more than b->bytes, the young objects
 * not copied yet are promoted in place. Eden was sized on the survival of
 * past pauses; when far more survives (a program building a large
 * structure at once), the copying overruns the prediction by as much - 23
 * ms instead of 6 in binary trees.
 *  - ns: the larger of BUDGET_GOAL of the goal and BUDGET_OVERRUN times the
 *    pause predicted for this eden (a slow machine, or a sanitizer build,
 *    has a model of its own costs);
 *  - bytes: BUDGET_OVERRUN times the survivors the model expects, at least
 *    BUDGET_MIN_BYTES: a pause that is late because its threads lost their
 *    CPUs, not because more survived, copies as usual (promoting in place
 *    promotes young garbage with the live objects: old space fills sooner).
 * Before the model has measured copying (nothing survived so far: the very
 * case of a program that starts building), BUDGET_GOAL of the goal and
 * BUDGET_MIN_BYTES. Only with KGC_PAUSE_BUDGET=on (off by default: on
 * binary trees at depth 21 it promoted young garbage in place, old space
 * filled, 1.5x the time for no better max pause; bench/RESULTS-ab.md), and
 * never with a fixed young size (KGC_YOUNG_SIZE: eden is the program's
 * choice, not a prediction).
 */
#define BUDGET_GOAL 0.8
#define BUDGET_OVERRUN 1.25
#define BUDGET_MIN_BYTES MB

void kgci_policy_evac_budget(struct kgc_heap *h, struct evac_budget *b)
{
	/* eden as the next pause finds it (or as full as it will be) */
	uint32_t eden = h->count[RT_EDEN] > h->pol.young_target ? h->count[RT_EDEN] : h->pol.young_target;
	double young = (double)(eden + h->count[RT_SURVIVOR]) * h->region_size;
	double goal = pause_goal_ns(h) * BUDGET_GOAL, pred, bytes;

	b->ns = b->bytes = 0;
	/* a young size the program fixed is no prediction to be surprised by */
	if (h->opt.pause_budget != KGC_PAUSE_BUDGET_ON || h->opt.young_size)
		return;
	b->ns = (uint64_t)goal;
	b->bytes = BUDGET_MIN_BYTES;
	if (!h->pol.byte_ns)
		return;
	pred = predict_pause(h, young, kgci_policy_gc_threads(h)) * BUDGET_OVERRUN;
	bytes = h->pol.survival * young * BUDGET_OVERRUN;
	b->ns = (uint64_t)(pred > goal ? pred : goal);
	b->bytes = bytes > BUDGET_MIN_BYTES ? (size_t)bytes : BUDGET_MIN_BYTES;
}

/*
 * Memory kept hot (after G1's uncommit after shrink): a free region stays
 * committed - the next eden or to-space takes it without page faults -
 * unless it stayed free for UNCOMMIT_GCS collections and KGC_UNCOMMIT_DELAY_MS
 * (a heap whose use shrank for good), and then only beyond what the next
 * collections need: young target, to-space, reserve. Checked after every
 * collection, young or full.
 * backend.c carries the plan out. False: nothing to give back.
 */
#define UNCOMMIT_GCS 16
#define UNCOMMIT_DELAY_MS_DEFAULT 2000

bool kgci_policy_uncommit_plan(struct kgc_heap *h, struct uncommit_plan *plan)
{
	unsigned ms = h->opt.uncommit_delay_ms ? h->opt.uncommit_delay_ms : UNCOMMIT_DELAY_MS_DEFAULT;
	uint64_t now = kgci_now_ns(), delay = (uint64_t)ms * 1000000ull;
	uint32_t committed = 0;

	if (ms == UINT32_MAX || h->gc_id < UNCOMMIT_GCS || now < delay)
		return false;
	plan->keep = h->pol.young_target + h->tospace_need + reserve_regions(h);
	for (uint32_t i = 0; i < h->nregions && committed <= plan->keep; i++)
		committed += h->regions[i].type == RT_FREE && (h->regions[i].flags & RF_COMMITTED);
	if (committed <= plan->keep)
		return false;
	plan->gc = h->gc_id - UNCOMMIT_GCS;
	plan->ns = now - delay;
	return true;
}

/*
 * Adaptive tenuring (like HotSpot's age table): the threshold for the next
 * young collection is the lowest age at which the survivors of that age and
 * younger exceed half the survivor budget; never above the configured one.
 */
void kgci_policy_adapt_tenure(struct kgc_heap *h)
{
	size_t desired = ((size_t)kgci_policy_survivor_limit(h) << h->region_shift) / 2, cum = 0;
	unsigned max = h->opt.tenure_threshold > HDR_AGE_MAX ? HDR_AGE_MAX : h->opt.tenure_threshold;
	unsigned t = max;

	for (unsigned age = 1; age <= HDR_AGE_MAX && age < max; age++) {
		cum += h->age_bytes[age];
		if (cum > desired) {
			t = age;
			break;
		}
	}
	if (t != h->pol.tenure)
		kgci_log_line(h, LOG_HEAP, "tenuring threshold %u -> %u (survivors %zuK, desired %zuK)",
			 h->pol.tenure, t, cum >> 10, desired >> 10);
	h->pol.tenure = t;
}

/*
 * Concurrent refinement (refine.c): how often kgc-refine turns dirty cards
 * into logged slots until the next pause; 0: not now (refine.c also
 * waits while a cycle runs, and without membarrier). KGC_REFINE=auto: while the cards that reach a
 * pause, dirty or refined, would take REFINE_SHARE of the pause goal to
 * scan in it (an LRU cache's 24K cards per pause: 10 ms of the workers'
 * CPU in a 6 ms goal). Counting the refined ones keeps it on once it
 * works: the pauses' own dirty cards then fall to the few stored since
 * the last period.
 */
#define REFINE_SHARE 0.2
#define REFINE_PERIOD_NS 5000000ull

uint64_t kgci_policy_refine_period_ns(struct kgc_heap *h)
{
	const struct policy_state *p = &h->pol;
	unsigned n = kgci_policy_gc_threads(h);

	if (h->opt.refine == KGC_REFINE_OFF)
		return 0;
	if (h->opt.refine == KGC_REFINE_ALWAYS)
		return REFINE_PERIOD_NS;
	return p->card_ns * p->card_work / n >= REFINE_SHARE * pause_goal_ns(h) ? REFINE_PERIOD_NS : 0;
}

/* How many dirty cards refinement leaves for the pause (G1's
 * G1RSetUpdatingPauseTimePercent): what its workers scan in REFINE_SHARE / 2
 * of the goal. KGC_REFINE=always: none. */
size_t kgci_policy_refine_keep(struct kgc_heap *h)
{
	const struct policy_state *p = &h->pol;

	if (h->opt.refine == KGC_REFINE_ALWAYS)
		return 0;
	return (size_t)(REFINE_SHARE / 2 * pause_goal_ns(h) * kgci_policy_gc_threads(h) /
			(p->card_ns ? p->card_ns : 500.0));
}

/*
 * Refinement starts REFINE_DELAY_NS after a pause. A collection that comes
 * sooner (mutators allocating at full speed) scans its cards itself: they
 * are few, and most of what refinement did would be redone - its cards
 * dirtied again - on CPUs the mutators use (LRU at full speed: -10%
 * throughput refining from the start). Where collections are far apart
 * (the same cache at a fixed request rate) cards pile up and CPUs idle.
 */
#define REFINE_DELAY_NS 50000000ull

uint64_t kgci_policy_refine_delay_ns(struct kgc_heap *h)
{
	return h->opt.refine == KGC_REFINE_ALWAYS ? 0 : REFINE_DELAY_NS;
}

/*
 * How long remark may go on marking in its pause (cmark.c): REMARK_SHARE
 * of the goal; past that the marker goes on concurrently. Marking that is
 * left at remark is an assist's unfinished subgraph: 60-78 ms of it in
 * binary trees' remark pauses at depth 21, 1.5 ms with the deadline
 * (bench/RESULTS-ab.md, 2026-12-07 afternoon).
 */
#define REMARK_SHARE 0.25

uint64_t kgci_policy_remark_ns(struct kgc_heap *h)
{
	return (uint64_t)(pause_goal_ns(h) * REMARK_SHARE);
}

/* Young GC workers: KGC_GC_THREADS, else one per CPU up to 4 (1 for tiny heaps). */
unsigned kgci_policy_gc_threads(struct kgc_heap *h)
{
	unsigned n = h->opt.gc_threads;

	if (!n) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		n = cpus > 4 ? 4 : cpus > 1 ? (unsigned)cpus : 1;
		if (h->nregions < 16)
			n = 1;
	}
	return n > 64 ? 64 : n;
}

/* First touches of the next pause's to-space on a thread of their own
 * (pretouch.c)? Where the collector has more than one worker: a CPU the
 * mutators may leave idle. With one, the mutator does them between its
 * allocations. */
bool kgci_policy_pretouch_thread(struct kgc_heap *h)
{
	return kgci_policy_gc_threads(h) > 1;
}

/* Regions the thread backs for eden beyond the to-space's: while eden
 * grows into fresh memory (by up to 1/FRESH_STEP per collection), its
 * mutators then find backed, zero regions instead of faulting. */
uint32_t kgci_policy_pretouch_ahead(struct kgc_heap *h)
{
	return 2 + h->pol.young_target / FRESH_STEP;
}

/* How long a safepoint waits for a thread before it warns (ms; 0: never). */
unsigned kgci_policy_safepoint_warn_ms(struct kgc_heap *h)
{
	unsigned ms = h->opt.safepoint_warn_ms;

	return ms == 0 ? 1000 : ms == UINT32_MAX ? 0 : ms;
}
