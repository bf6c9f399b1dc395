/* SPDX-License-Identifier: MIT */
/*
 * refine.c - concurrent refinement: between pauses, the thread
 * 'kgc-refine' turns the dirty cards of old and humongous regions into a
 * log of the reference slots on them that point into regions the young
 * pause needs (kgc.h's region_track: young, retained, mixed candidates,
 * humongous objects tracked for eager reclaim). The next young pause then
 * reads each logged slot where it would have parsed the whole card: a
 * dirty card scattered over a large old space (an LRU cache relinking its
 * entries) costs the pause ~400 ns, a logged slot a prefetched load.
 * After G1's concurrent refinement, without its remembered sets: the log
 * lives until the next pause, which consumes it whole.
 *
 * The hand-off with the write barrier (kgc.h: store the slot, then dirty
 * its card if it is not dirty) is the asymmetric Dekker of G1's
 * StoreLoad-free barrier: the refiner marks a batch of dirty cards
 * CARD_REFINED (not dirty: a later store dirties them again), then
 * membarrier() makes every running thread execute a full barrier, then it
 * reads the cards' slots. A store the refiner cannot see yet was made by
 * a thread that read its card after that barrier - saw it refined - and
 * dirtied it again. Without membarrier there is no refinement.
 *
 * What keeps the log valid until the pause that consumes it:
 *   - only regions that were old or humongous at the last pause's end, not
 *     in the pinned-object space (mutators allocate there) nor held by
 *     kgc-pretouch, are parsed (the snapshot taken then); their objects,
 *     top and block offset table change only in pauses;
 *   - only while no concurrent cycle runs: the sweep rewrites dead objects
 *     as fillers outside pauses, and a cycle starts only in a pause;
 *   - the young pause reads every logged slot in its card scan phase
 *     (kgci_refine_log), before anything moves or fills a gap, and skips
 *     slots in regions of its collection set (their objects are copied
 *     whole); a full pause drops the log and dirties its cards again.
 * A slot logged and dirtied again meanwhile is found twice; the pause's
 * slot visit is idempotent (young.c). The thread attaches as a service
 * thread, parses in managed state a batch at a time, and polls between
 * batches; the log is its own between pauses and the pause's during one.
 * Locks: rf->lock is a leaf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc_internal.h"

#define REFINE_BATCH	128		/* cards per membarrier (and per safepoint poll) */
#define REFINE_SCAN_SHARE 20		/* wait at least 20x what looking for dirty cards took */
#define REFINE_LOG_MAX	((size_t)1 << 21)	/* slots (16 MiB); beyond, cards stay dirty */

struct refine {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, failed, stop, kick;	/* rf->lock */
	uint64_t period_ns;			/* rf->lock: 0 = until the next pause */
	/* The snapshot and the log: set by a pause, used by the thread between
	 * pauses (a safepoint orders the two). */
	uint32_t *regions, nregions, cursor;	/* regions it may parse; the next one */
	size_t keep;				/* dirty cards left for the pause to scan */
	uint64_t start_ns;			/* rf->lock: no refinement before (kgci_now_ns) */
	kgc_obj **log;
	size_t nlog, log_cap;
	bool log_full, sorted;		/* sorted: for the verifier's lookups */
	uint64_t seq;				/* pauses so far: the snapshot's */
	size_t cards;				/* refined since the last pause */
	_Atomic uint64_t total_cards, total_slots, passes;	/* tests, log */
};

/* May r's dirty cards be refined (at a pause's end)? */
static bool refinable(const struct region *r)
{
	return (r->type == RT_OLD || r->type == RT_HUM_START || r->type == RT_HUM_CONT) &&
	       r->pinspace == PS_NONE && !(r->flags & (RF_PRETOUCH | RF_CSET)) && r->top > r->bottom;
}

/* Slot s holds a reference the young pause needs (the barrier's filter). */
static inline bool wanted(struct kgc_heap *h, kgc_obj *s, kgc_obj v)
{
	return is_ref(h, v) && (char *)v >= h->base && (char *)v < h->limit &&
	       (((uintptr_t)s ^ (uintptr_t)v) >> h->region_shift) &&
	       __atomic_load_n(&h->region_track[region_index(h, v)], __ATOMIC_RELAXED);
}

static bool log_slot(struct refine *rf, kgc_obj *s)
{
	if (rf->nlog == rf->log_cap) {
		size_t nc = rf->log_cap ? rf->log_cap * 2 : 4096;
		kgc_obj **nl;

		if (nc > REFINE_LOG_MAX || !(nl = realloc(rf->log, nc * sizeof(*nl))))
			return false;
		rf->log = nl;
		rf->log_cap = nc;
	}
	rf->log[rf->nlog++] = s;
	rf->sorted = false;
	return true;
}

/* A reference slot on a card being refined: into the log if the young
 * pause needs it. The log full: rf->log_full, the card stays dirty. */
static void refine_slot(struct kgc_heap *h, kgc_obj *s, void *ctx)
{
	struct refine *rf = ctx;

	if (!rf->log_full && wanted(h, s, __atomic_load_n(s, __ATOMIC_RELAXED)) && !log_slot(rf, s))
		rf->log_full = true;
}

/* Refine n dirty cards: mark them, the barrier handshake, log their slots.
 * With the log full, the card and the rest are dirty again. */
static void refine_batch(struct kgc_heap *h, struct refine *rf, char **cs, unsigned n)
{
	size_t slots = rf->nlog;

	if (!n)
		return;
	for (unsigned i = 0; i < n; i++)
		__atomic_store_n(card_for(h, cs[i]), CARD_REFINED, __ATOMIC_RELAXED);
	kgci_os_membarrier(h);
	for (unsigned i = 0; i < n; i++) {
		size_t mark = rf->nlog;

		/* slots are read atomically: mutators store to them meanwhile */
		kgci_card_refs_inline(h, region_of(h, cs[i]), cs[i], refine_slot, rf);
		if (!rf->log_full)
			continue;
		rf->nlog = mark;
		for (; i < n; i++)
			kgci_card_dirty(h, cs[i]);
		break;
	}
	rf->cards += n;
	atomic_fetch_add_explicit(&rf->total_cards, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&rf->total_slots, rf->nlog - slots, memory_order_relaxed);
}

/* Between batches: false if a pause ran (its end took a new snapshot). */
static bool refine_poll(struct refine *rf, struct kgc_thread *t, uint64_t seq)
{
	kgc_safepoint_poll(t);
	return rf->seq == seq;
}

/* Dirty cards of r below its top (mode: card_sum_mode's). */
static size_t dirty_cards(struct kgc_heap *h, struct region *r, int mode)
{
	uint8_t *c = card_for(h, r->bottom), *s = card_sum_for(h, r->bottom);
	size_t nc = region_ncards(r), n = 0;

	for (size_t i = card_next_unclean_sum(c, s, 0, nc, mode); i < nc; i = card_next_unclean_sum(c, s, i + 1, nc, mode))
		n += __atomic_load_n(&c[i], __ATOMIC_RELAXED) == CARD_DIRTY;
	return n;
}

/*
 * One pass over the snapshot's dirty cards (managed state). Only the
 * excess: while more are dirty than the pause may scan (rf->keep, the
 * policy's), down to half that. A card refined now and dirtied again
 * before the pause is work done twice; the ones left the pause scans.
 */
static void refine_pass(struct kgc_heap *h, struct refine *rf, struct kgc_thread *t, uint64_t *scan_ns)
{
	char *batch[REFINE_BATCH];
	unsigned nb = 0;
	uint64_t seq = rf->seq, t0 = kgci_now_ns();
	size_t dirty = 0, todo;
	int mode = card_sum_mode(h, false);	/* once a pass: stale, it only skips cards the pause reads */

	if (rf->log_full)
		return;		/* until the pause consumes it */
	for (uint32_t k = 0; k < rf->nregions && dirty <= rf->keep; k++)
		dirty += dirty_cards(h, &h->regions[rf->regions[k]], mode);
	*scan_ns = kgci_now_ns() - t0;
	if (dirty <= rf->keep)
		return;
	todo = dirty - rf->keep / 2;
	for (; rf->cursor < rf->nregions && !rf->log_full && todo; rf->cursor++) {
		struct region *r = &h->regions[rf->regions[rf->cursor]];
		uint8_t *c = card_for(h, r->bottom), *s = card_sum_for(h, r->bottom);
		size_t nc = region_ncards(r);

		for (size_t i = card_next_unclean_sum(c, s, 0, nc, mode); i < nc && todo && !rf->log_full;
		     i = card_next_unclean_sum(c, s, i + 1, nc, mode)) {
			if (__atomic_load_n(&c[i], __ATOMIC_RELAXED) != CARD_DIRTY)
				continue;
			batch[nb++] = r->bottom + (i << KGC_CARD_SHIFT);
			todo--;
			if (nb < REFINE_BATCH && todo)
				continue;
			refine_batch(h, rf, batch, nb);
			nb = 0;
			if (!refine_poll(rf, t, seq))
				return;
		}
	}
	refine_batch(h, rf, batch, nb);
	if (rf->cursor == rf->nregions)
		rf->cursor = 0;		/* the next period starts over */
	atomic_fetch_add_explicit(&rf->passes, 1, memory_order_relaxed);
}

static void *refine_main(void *arg)
{
	struct kgc_heap *h = arg;
	struct refine *rf = h->refine;
	struct kgc_thread *t;
	uint64_t scan_ns = 0, wait;

	if (kgci_thread_attach_service(h, "kgc-refine", &t)) {
		pthread_mutex_lock(&rf->lock);
		rf->failed = true;	/* every dirty card is scanned in the pause */
		pthread_mutex_unlock(&rf->lock);
		return NULL;
	}
	kgc_enter_native(t);	/* never holds up a safepoint while it waits */
	pthread_mutex_lock(&rf->lock);
	for (;;) {
		if (!rf->kick && !rf->stop) {
			if (rf->period_ns) {
				struct timespec ts;

				/* a large heap's card table takes long to look
				 * through: keep that to 1/REFINE_SCAN_SHARE of a CPU */
				wait = rf->period_ns > scan_ns * REFINE_SCAN_SHARE ? rf->period_ns
										   : scan_ns * REFINE_SCAN_SHARE;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				ts.tv_sec += (time_t)(wait / 1000000000ull);
				ts.tv_nsec += (long)(wait % 1000000000ull);
				ts.tv_sec += ts.tv_nsec / 1000000000L;
				ts.tv_nsec %= 1000000000L;
				pthread_cond_timedwait(&rf->cond, &rf->lock, &ts);
			} else {
				pthread_cond_wait(&rf->cond, &rf->lock);
			}
		}
		if (rf->stop)
			break;
		rf->kick = false;
		if (!rf->period_ns || kgci_now_ns() < rf->start_ns)
			continue;
		pthread_mutex_unlock(&rf->lock);
		kgc_leave_native(t);
		refine_pass(h, rf, t, &scan_ns);
		kgc_enter_native(t);
		pthread_mutex_lock(&rf->lock);
	}
	pthread_mutex_unlock(&rf->lock);
	kgc_thread_detach(t);
	return NULL;
}

/*
 * At every pause's end (the world stopped, h->lock held): the log was
 * consumed or dropped; snapshot the regions the thread may parse and ask
 * the policy how often (0: not until the next pause).
 */
void kgci_refine_after_pause(struct kgc_heap *h)
{
	struct refine *rf = h->refine;
	uint64_t period;

	if (!rf)
		return;
	rf->nlog = 0;
	rf->log_full = false;
	rf->cards = 0;
	rf->cursor = 0;
	rf->nregions = 0;
	rf->seq++;
	/* not while a cycle runs (its sweep rewrites old regions outside
	 * pauses), nor without the barrier hand-off */
	period = kgci_cm_idle(h) && kgci_os_membarrier_ok(h) ? kgci_policy_refine_period_ns(h) : 0;
	rf->keep = kgci_policy_refine_keep(h);
	if (period && rf->regions)
		for (uint32_t i = 0; i < h->nregions; i++)
			if (refinable(&h->regions[i]))
				rf->regions[rf->nregions++] = i;
	pthread_mutex_lock(&rf->lock);
	if (period && !rf->started && !rf->failed && !rf->stop) {
		rf->failed = kgci_spawn(&rf->thread, refine_main, h, "kgc-refine") != 0;
		rf->started = !rf->failed;
	}
	rf->period_ns = rf->regions ? period : 0;
	rf->start_ns = kgci_now_ns() + kgci_policy_refine_delay_ns(h);
	rf->kick = true;
	pthread_cond_signal(&rf->cond);
	pthread_mutex_unlock(&rf->lock);
}

/* The young pause's card scan phase: the slots logged since the last pause. */
kgc_obj **kgci_refine_log(struct kgc_heap *h, size_t *n)
{
	struct refine *rf = h->refine;

	*n = rf ? rf->nlog : 0;
	return rf ? rf->log : NULL;
}

/* Cards refined since the last pause (the policy's count of card work). */
size_t kgci_refine_cards(struct kgc_heap *h)
{
	return h->refine ? h->refine->cards : 0;
}

/* A full pause (world stopped): the log is not consumed; its cards are
 * dirty again, as if never refined. */
void kgci_refine_drop(struct kgc_heap *h)
{
	struct refine *rf = h->refine;

	if (!rf)
		return;
	for (size_t i = 0; i < rf->nlog; i++)
		kgci_card_dirty(h, rf->log[i]);
	rf->nlog = 0;
}

static int cmp_slot(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(kgc_obj *const *)a, y = (uintptr_t)*(kgc_obj *const *)b;

	return x < y ? -1 : x > y;
}

/* The verifier (world stopped): is slot in the log? Sorts it. */
bool kgci_refine_logged(struct kgc_heap *h, kgc_obj *slot)
{
	struct refine *rf = h->refine;

	if (!rf || !rf->nlog)
		return false;
	if (!rf->sorted)
		qsort(rf->log, rf->nlog, sizeof(*rf->log), cmp_slot);
	rf->sorted = true;
	return bsearch(&slot, rf->log, rf->nlog, sizeof(*rf->log), cmp_slot) != NULL;
}

/* Tests: cards refined, slots logged and passes finished since the heap was created. */
void kgci_refine_test_counts(struct kgc_heap *h, uint64_t *cards, uint64_t *slots, uint64_t *passes)
{
	struct refine *rf = h->refine;

	*cards = rf ? atomic_load(&rf->total_cards) : 0;
	*slots = rf ? atomic_load(&rf->total_slots) : 0;
	*passes = rf ? atomic_load(&rf->passes) : 0;
}

int kgci_refine_init(struct kgc_heap *h)
{
	struct refine *rf = calloc(1, sizeof(*rf));
	pthread_condattr_t ca;

	if (!rf)
		return -ENOMEM;
	/* without the snapshot's array the thread never starts (period 0) */
	rf->regions = malloc(h->nregions * sizeof(*rf->regions));
	pthread_mutex_init(&rf->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rf->cond, &ca);
	pthread_condattr_destroy(&ca);
	h->refine = rf;
	return 0;
}

/* kgc_heap_destroy (no user thread attached) or a failed create: stop the thread. */
void kgci_refine_destroy(struct kgc_heap *h)
{
	struct refine *rf = h->refine;
	bool started;

	if (!rf)
		return;
	pthread_mutex_lock(&rf->lock);
	rf->stop = true;
	started = rf->started;
	pthread_cond_signal(&rf->cond);
	pthread_mutex_unlock(&rf->lock);
	if (started)
		pthread_join(rf->thread, NULL);
	pthread_mutex_destroy(&rf->lock);
	pthread_cond_destroy(&rf->cond);
	free(rf->regions);
	free(rf->log);
	free(rf);
	h->refine = NULL;
}
