/* SPDX-License-Identifier: MIT */
/*
 * kpinwatch.c - kmod backend: evacuate retained regions soon after the
 * kernel lets go of them.
 *
 * A young region the kernel pins (io_uring fixed buffers, O_DIRECT) fails
 * evacuation and becomes old in place, retained (young.c); a later young
 * collection evacuates it once it is unpinned - but only a collection that
 * happens to run notices. So after each young collection the regions
 * retained and still kernel-pinned get a pin-drop watch (KGC_IOC_PIN_WATCH
 * ARM, through backend.c); the thread 'kgc-kpinwatch', started on the first
 * watch, sleeps in poll() on the device (and an eventfd that stops it)
 * until a watch fires, collects the FIRED regions and, if some of them are
 * still retained (and not pinned by a user), runs a young collection that
 * evacuates them.
 *
 * The thread is attached as a service thread (kgc_heap_destroy does not
 * count it and stops it) and waits in native state: it never holds up a
 * safepoint. A collection that leaves a fired region retained without
 * kernel pins (the policy's per-collection limit, a concurrent cycle
 * sweeping) is retried every KPW_RETRY_MS, at most KPW_RETRIES times in a
 * row without progress; one that finds it kernel-pinned again has armed a
 * new watch on it.
 *
 * Locks: kpw->arm and kpw->armed under h->lock (the pause arms, the thread
 * clears what fired); kpw->fired and kpw->pending are the thread's.
 * Stats: kpin_watch_armed, kpin_watch_fired, kpin_watch_gcs; log: gc+pin.
 * On the anon backend, or a module without watches, none of this runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

#define KPW_RETRY_MS 100
#define KPW_RETRIES 10

static bool test_off;

void kgci_kpinwatch_test_off(bool off)
{
	test_off = off;
}

struct kpinwatch {
	pthread_t thread;
	bool started, failed;		/* h->lock */
	_Atomic bool stop;
	int event_fd;
	size_t words;
	uint64_t *arm;			/* scratch of the pause (h->lock) */
	uint64_t *armed;		/* armed by us, not yet seen fired (h->lock) */
	uint64_t *fired;		/* the thread's: KPW_FIRED output */
	uint64_t *pending;		/* the thread's: fired, to be evacuated */
};

static void kpw_free(struct kpinwatch *kpw)
{
	kgci_os_event_close(kpw->event_fd);
	free(kpw->arm);
	free(kpw->armed);
	free(kpw->fired);
	free(kpw->pending);
	free(kpw);
}

static struct kpinwatch *kpw_new(struct kgc_heap *h)
{
	struct kpinwatch *kpw = calloc(1, sizeof(*kpw));

	if (!kpw)
		return NULL;
	kpw->words = ((size_t)h->nregions + 63) / 64;
	kpw->event_fd = kgci_os_event_open();
	kpw->arm = calloc(kpw->words, sizeof(uint64_t));
	kpw->armed = calloc(kpw->words, sizeof(uint64_t));
	kpw->fired = calloc(kpw->words, sizeof(uint64_t));
	kpw->pending = calloc(kpw->words, sizeof(uint64_t));
	if (kpw->event_fd < 0 || !kpw->arm || !kpw->armed || !kpw->fired || !kpw->pending) {
		kpw_free(kpw);
		return NULL;
	}
	return kpw;
}

/*
 * Keep in kpw->pending the regions still retained and not pinned by a user;
 * after a collection (after_gc) also drop those it saw kernel-pinned again
 * (it armed a new watch on them). h->lock held. Returns how many are left,
 * the first in *first.
 */
static uint32_t kpw_prune(struct kgc_heap *h, struct kpinwatch *kpw, bool after_gc, uint32_t *first)
{
	uint32_t n = 0;

	for (size_t w = 0; w < kpw->words; w++) {
		uint64_t bits = kpw->pending[w];

		while (bits) {
			uint32_t i = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
			struct region *r = &h->regions[i];
			uint64_t bit = 1ULL << (i % 64);

			bits &= bits - 1;
			if (r->type != RT_OLD || !r->retained ||
			    atomic_load_explicit(region_pins(h, i), memory_order_acquire) ||
			    (after_gc && (r->flags & RF_KPINNED))) {
				kpw->pending[w] &= ~bit;
				continue;
			}
			if (!n++)
				*first = i;
		}
	}
	return n;
}

static void *kpw_main(void *arg)
{
	struct kgc_heap *h = arg;
	struct kpinwatch *kpw = h->kpw;
	struct kgc_thread *t;
	unsigned stuck = 0;
	bool pending = false;

	if (kgci_thread_attach_service(h, "kgc-kpinwatch", &t))
		return NULL;	/* out of memory: retained regions wait for a collection */
	kgc_enter_native(t);	/* never holds up a safepoint while it waits */
	while (!atomic_load(&kpw->stop)) {
		int wake = kgci_backend_watch_wait(h, kpw->event_fd, pending ? KPW_RETRY_MS : -1);
		uint32_t nfired = 0, nwant, left, first = 0;

		if (wake == -EINTR)
			continue;
		if (wake < 0 || atomic_load(&kpw->stop)) {
			if (wake < 0) {
				pthread_mutex_lock(&h->lock);
				kgci_log_line(h, LOG_PIN, "kpin watch: poll failed (%s): thread ends",
					      strerror(-wake));
				pthread_mutex_unlock(&h->lock);
			}
			break;
		}
		if (wake & KPW_WAKE_FIRED) {
			int err = kgci_backend_pin_watch(h, KPW_FIRED, kpw->fired);

			if (err < 0) {
				pthread_mutex_lock(&h->lock);
				kgci_log_line(h, LOG_PIN, "kpin watch: FIRED failed (%s): thread ends",
					      strerror(-err));
				pthread_mutex_unlock(&h->lock);
				break;
			}
			for (size_t w = 0; w < kpw->words; w++) {
				nfired += (uint32_t)__builtin_popcountll(kpw->fired[w]);
				kpw->pending[w] |= kpw->fired[w];
			}
		}
		pthread_mutex_lock(&h->lock);
		if (nfired) {
			for (size_t w = 0; w < kpw->words; w++)
				kpw->armed[w] &= ~kpw->fired[w];
			atomic_fetch_add_explicit(&h->kpw_fired, nfired, memory_order_relaxed);
		}
		nwant = kpw_prune(h, kpw, false, &first);
		if (nwant)	/* counted before it runs: whoever sees its effect sees the count */
			atomic_fetch_add_explicit(&h->kpw_gcs, 1, memory_order_relaxed);
		if (nfired || nwant)
			kgci_log_line(h, LOG_PIN, "kpin watch: %u region(s) unpinned by the kernel; %u retained "
				      "to evacuate (region %u%s)%s", nfired, nwant, nwant ? first : 0,
				      nwant > 1 ? ", ..." : "", nwant ? ": young collection requested" : "");
		pthread_mutex_unlock(&h->lock);
		if (!nwant) {
			pending = false;
			stuck = 0;
			continue;
		}
		kgc_leave_native(t);
		kgc_collect(t, KGC_GC_YOUNG);
		kgc_enter_native(t);
		pthread_mutex_lock(&h->lock);
		left = kpw_prune(h, kpw, true, &first);
		stuck = left < nwant ? 0 : stuck + 1;
		pending = left && stuck < KPW_RETRIES;
		kgci_log_line(h, LOG_PIN, "kpin watch: young collection evacuated %u of %u retained region(s)%s",
			      nwant - left, nwant, !left ? "" : pending ? ", retrying the rest" :
			      ", giving up on the rest for now");
		if (!pending)
			memset(kpw->pending, 0, kpw->words * sizeof(uint64_t));
		pthread_mutex_unlock(&h->lock);
	}
	kgc_thread_detach(t);
	return NULL;
}

static bool kpw_start(struct kgc_heap *h, struct kpinwatch *kpw)
{
	int err = kgci_spawn(&kpw->thread, kpw_main, h, "kgc-kpinwatch");

	if (err) {
		kgci_log_line(h, LOG_PIN, "kpin watch: cannot start thread kgc-kpinwatch (%s): "
			      "retained regions wait for a collection", strerror(err));
		return false;
	}
	return true;
}

/*
 * After a young collection (at the safepoint, h->lock held): arm a watch on
 * every retained region the kernel pins that has none yet; start the thread
 * with the first one.
 */
void kgci_kpinwatch_after_young(struct kgc_heap *h)
{
	struct kpinwatch *kpw = h->kpw;
	uint32_t n = 0, first = 0;
	int armed;

	/* a failed pin query marks every region kernel-pinned: no watches then */
	if (h->be.kind != KGC_BACKEND_KMOD || !h->be.pin_watch || !h->kpin_known ||
	    test_off || (kpw && (kpw->failed || atomic_load(&kpw->stop))))
		return;
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		if (r->type != RT_OLD || !r->retained || !(r->flags & RF_KPINNED) ||
		    (kpw && (kpw->armed[i / 64] >> (i % 64) & 1)))
			continue;
		if (!kpw) {
			kpw = h->kpw = kpw_new(h);
			if (!kpw) {
				kgci_log_line(h, LOG_PIN, "kpin watch: out of memory: no watches");
				return;
			}
		}
		if (!n++) {
			first = i;
			memset(kpw->arm, 0, kpw->words * sizeof(uint64_t));
		}
		kpw->arm[i / 64] |= 1ULL << (i % 64);
	}
	if (!n)
		return;
	if (!kpw->started) {
		if (!kpw_start(h, kpw)) {
			kpw->failed = true;
			return;
		}
		kpw->started = true;
	}
	armed = kgci_backend_pin_watch(h, KPW_ARM, kpw->arm);
	if (armed < 0) {
		kgci_log_line(h, LOG_PIN, "kpin watch: arming %u region(s) failed (%s)", n, strerror(-armed));
		return;
	}
	for (size_t w = 0; w < kpw->words; w++)
		kpw->armed[w] |= kpw->arm[w];
	atomic_fetch_add_explicit(&h->kpw_armed, n, memory_order_relaxed);
	kgci_log_line(h, LOG_PIN, "kpin watch: armed %u retained kernel-pinned region(s) (region %u%s), "
		      "%d armed in all", n, first, n > 1 ? ", ..." : "", armed);
}

/* Heap destroy (no user thread attached): stop the thread, free the rest. */
void kgci_kpinwatch_destroy(struct kgc_heap *h)
{
	struct kpinwatch *kpw = h->kpw;
	bool started;

	if (!kpw)
		return;
	pthread_mutex_lock(&h->lock);
	atomic_store(&kpw->stop, true);
	started = kpw->started;
	pthread_mutex_unlock(&h->lock);
	if (started) {
		kgci_os_event_signal(kpw->event_fd);
		pthread_join(kpw->thread, NULL);
	}
	h->kpw = NULL;
	kpw_free(kpw);
}
