/* SPDX-License-Identifier: MIT */
/*
 * mt_pin_shared: several threads pin the same and different regions
 * (kgc_critical_get/release, single, nested and overlapping) while other
 * threads allocate and force young and full collections (issue 4, pin mode).
 *
 * Checked, per critical section:
 *  - the elements are byte-identical to the expected pattern when the
 *    section starts, while it is held (re-checked after collections ran) and
 *    at its end;
 *  - the array did not move while pinned: a nested get on the same root,
 *    after collections ran, returns the same elements pointer;
 *  - a private array written through the critical pointer keeps what was
 *    written, across later collections.
 * Checked at the end: collections really ran while sections were held,
 * regions failed evacuation because of pins, no GCLocker stall happened, and
 * all shared arrays are intact after a final full collection.
 * Event counts only; no timing assertion (time is used only as a run length
 * and as a hang guard).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "test.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

enum { NPINNERS = 3, NALLOCATORS = 2, NSHARED = 8 };

static const size_t prim_size[KGC_PRIM_COUNT] = { 1, 1, 2, 2, 4, 4, 8, 8 };

static kgc_heap *heap;
static size_t region_size;
static uint64_t deadline_ns;
static atomic_int stop_all;

struct shared_array {
	kgc_handle h;
	int prim;
	size_t len;
	const char *what;
};
static struct shared_array shared[NSHARED];

static atomic_ulong sections_total, sections_across_gc, gets_total;

static uint64_t kgci_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t gc_count(void)
{
	struct kgc_stats st;

	T_ASSERT_EQ(kgc_stats_get(heap, &st, sizeof(st)), 0);
	return st.young_gcs + st.full_gcs;
}

/* Expected byte i of an array with identity `key`. */
static inline unsigned char pattern(uint64_t key, size_t i)
{
	uint64_t z = key * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	return (unsigned char)((z ^ (z >> 31)) >> 17);
}

static void fill(unsigned char *p, size_t bytes, uint64_t key)
{
	for (size_t i = 0; i < bytes; i++)
		p[i] = pattern(key, i);
}

static void check(const unsigned char *p, size_t bytes, uint64_t key, const char *who, const char *when)
{
	for (size_t i = 0; i < bytes; i++)
		if (p[i] != pattern(key, i))
			T_FAIL("%s: array %#llx byte %zu of %zu is %#x, expected %#x (%s)", who,
			       (unsigned long long)key, i, bytes, p[i], pattern(key, i), when);
}

/* ------------------------------------------------------------- pinners */

struct pinner {
	int id;
	unsigned long long rng;
	kgc_thread *t;
	char name[32];
	kgc_obj slots[4];	/* 0,1: shared arrays being pinned; 2: private; 3: spare */
	struct kgc_frame frame;
	uint64_t priv_key;	/* pattern written into the private array */
	int open;		/* critical sections currently held */
};

static size_t rndn(struct pinner *p, size_t n) { return (size_t)(t_rand(&p->rng) % n); }

/* Hold the current critical sections for a while: until a collection has
 * happened (bounded) or briefly; re-check contents meanwhile. */
static void hold(struct pinner *p, int wait_gc, unsigned char **elems, size_t *bytes,
		 uint64_t *keys, int n)
{
	uint64_t g0 = gc_count(), t0 = kgci_now_ns();
	uint64_t limit = (SANITIZED ? 400 : 100) * 1000000ull;

	for (;;) {
		if (!wait_gc && rndn(p, 2))
			break;
		usleep((useconds_t)(50 + rndn(p, 500)));
		if (gc_count() != g0) {
			atomic_fetch_add(&sections_across_gc, 1);
			break;
		}
		if (kgci_now_ns() - t0 > limit || atomic_load(&stop_all))
			break;
	}
	for (int i = 0; i < n; i++)
		check(elems[i], bytes[i], keys[i], p->name, "while pinned, after collections");
}

static unsigned char *get(struct pinner *p, kgc_obj *slot, size_t want_len, size_t *len)
{
	unsigned char *e = kgc_critical_get(p->t, slot, len);

	if (!e)
		T_FAIL("%s: kgc_critical_get failed", p->name);
	atomic_fetch_add(&gets_total, 1);
	p->open++;
	T_ASSERT_EQ(*len, want_len);
	return e;
}

/*
 * Address stability, checked through the API while the section is held: a
 * nested kgc_critical_get on the same root makes the thread managed for a
 * moment (waiting out any collection in progress) and returns the array's
 * current elements, which must be where the outer get put them. (Checking the
 * slot after the last release would not do: the release unpins first and
 * only then leaves native state, so a collection may legitimately move the
 * array in between.)
 */
static void check_not_moved(struct pinner *p, kgc_obj *slot, unsigned char *e, size_t len,
			    const char *what)
{
	size_t l;
	unsigned char *e2 = get(p, slot, len, &l);

	if (e2 != e)
		T_FAIL("%s: %s moved while pinned: elements were at %p, now at %p", p->name,
		       what, (void *)e, (void *)e2);
	T_ASSERT_EQ(kgc_critical_release(p->t, slot, e2, KGC_CRITICAL_COMMIT), 0);
	p->open--;
}

static void release(struct pinner *p, kgc_obj *slot, unsigned char *e)
{
	T_ASSERT_EQ(kgc_critical_release(p->t, slot, e, KGC_CRITICAL_COMMIT), 0);
	p->open--;
}

/* One or two shared arrays (possibly the same one twice), nested or overlapping. */
static void pin_shared(struct pinner *p)
{
	int n = 1 + (int)rndn(p, 2), order = (int)rndn(p, 2);
	unsigned char *e[2];
	size_t len[2], bytes[2];
	uint64_t keys[2];
	struct shared_array *s[2];

	for (int i = 0; i < n; i++) {
		s[i] = &shared[rndn(p, NSHARED)];
		p->slots[i] = kgc_handle_get(s[i]->h);	/* managed: no safepoint until get */
	}
	for (int i = 0; i < n; i++) {
		e[i] = get(p, &p->slots[i], s[i]->len, &len[i]);
		bytes[i] = len[i] * prim_size[s[i]->prim];
		keys[i] = (uint64_t)(s[i] - shared) + 1;
		check(e[i], bytes[i], keys[i], p->name, "at critical_get");
	}
	hold(p, (int)rndn(p, 3) == 0, e, bytes, keys, n);
	for (int i = 0; i < n; i++)
		check_not_moved(p, &p->slots[i], e[i], s[i]->len, s[i]->what);
	if (n == 2 && order) {		/* overlapping: release the first one first */
		release(p, &p->slots[0], e[0]);
		release(p, &p->slots[1], e[1]);
	} else {
		for (int i = n; i-- > 0; )
			release(p, &p->slots[i], e[i]);
	}
	for (int i = 0; i < n; i++) {
		check(kgc_array_data(p->slots[i]), bytes[i], keys[i], p->name, "after release");
		p->slots[i] = NULL;
	}
	atomic_fetch_add(&sections_total, 1);
}

/* A fresh private array (young): pin it, write a new pattern through the
 * critical pointer, hold it across a collection, release; keep it around. */
static void pin_private(struct pinner *p)
{
	size_t len = 256 + rndn(p, 8192), got;
	unsigned char *e;
	uint64_t key = ((uint64_t)(p->id + 1) << 40) | t_rand(&p->rng) >> 24;

	if (p->slots[2] && rndn(p, 2)) {
		/* re-pin the previous private array and check what was written */
		len = kgc_array_length(p->slots[2]);	/* managed: read before get */
		e = get(p, &p->slots[2], len, &got);
		check(e, len * 4, p->priv_key, p->name, "private array, re-pinned after later collections");
	} else {
		p->slots[2] = kgc_alloc_array(p->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), len);
		if (!p->slots[2])
			T_FAIL("%s: private allocation failed", p->name);
		e = get(p, &p->slots[2], len, &got);
	}
	fill(e, len * 4, key);
	p->priv_key = key;
	hold(p, 1, &e, &(size_t){ len * 4 }, &key, 1);
	check_not_moved(p, &p->slots[2], e, len, "private int[] array");
	release(p, &p->slots[2], e);
	check(kgc_array_data(p->slots[2]), len * 4, key, p->name, "private array after release");
	atomic_fetch_add(&sections_total, 1);
}

static void *pinner_main(void *arg)
{
	struct pinner *p = arg;

	snprintf(p->name, sizeof(p->name), "pinner-%d", p->id);
	T_ASSERT_EQ(kgc_thread_attach(heap, p->name, &p->t), 0);
	kgc_frame_push(p->t, &p->frame, p->slots, 4, NULL);
	while (!atomic_load(&stop_all)) {
		if (rndn(p, 3))
			pin_shared(p);
		else
			pin_private(p);
		if (p->slots[2] && !rndn(p, 8))
			check(kgc_array_data(p->slots[2]), kgc_array_length(p->slots[2]) * 4,
			      p->priv_key, p->name, "private array, unpinned, after collections");
		kgc_safepoint_poll(p->t);
	}
	T_ASSERT_EQ(kgc_frame_pop(p->t, &p->frame), 0);
	T_ASSERT_EQ(kgc_thread_detach(p->t), 0);
	return NULL;
}

/* ----------------------------------------------------------- allocators */

static void *allocator_main(void *arg)
{
	unsigned long long rng = 0xa110c + (uintptr_t)arg;
	kgc_obj ring = NULL;
	struct kgc_frame f;
	kgc_thread *t;
	unsigned long n = 0;

	T_ASSERT_EQ(kgc_thread_attach(heap, "allocator", &t), 0);
	kgc_frame_push(t, &f, &ring, 1, NULL);
	ring = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 512);
	T_ASSERT(ring);
	while (!atomic_load(&stop_all)) {
		unsigned long long r = t_rand(&rng);
		kgc_obj o = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 8 + r % 600);

		if (!o)
			T_FAIL("allocator: allocation failed");
		if (r % 4 == 0)	/* some survivors, replaced over time */
			kgc_array_set_ref(t, ring, (r >> 16) % 512, o);
		/* every 6th explicit collection is full (the first too: on a loaded
		 * machine there may be only a few in the run) */
		if (++n % 2000 == 0)
			T_ASSERT_EQ(kgc_collect(t, n % 12000 == 2000 ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

/* ------------------------------------------------------------------ main */

static void make_shared(kgc_thread *t)
{
	static const struct { int prim; size_t len; const char *what; } spec[NSHARED] = {
		{ KGC_PRIM_BYTE, 100, "byte[100]" },		/* these four are allocated back to */
		{ KGC_PRIM_INT, 1000, "int[1000]" },		/* back: the same region */
		{ KGC_PRIM_LONG, 64, "long[64]" },
		{ KGC_PRIM_DOUBLE, 3000, "double[3000]" },
		{ KGC_PRIM_CHAR, 5000, "char[5000]" },		/* these in other regions */
		{ KGC_PRIM_SHORT, 20000, "short[20000]" },
		{ KGC_PRIM_BYTE, 70000, "byte[70000]" },
		{ KGC_PRIM_BYTE, 0, "byte[humongous]" },
	};
	kgc_obj tmp = NULL;
	struct kgc_frame f;

	kgc_frame_push(t, &f, &tmp, 1, NULL);
	for (int i = 0; i < NSHARED; i++) {
		size_t len = spec[i].len ? spec[i].len : region_size / 2 + 1000;

		if (i >= 4) {	/* push the next array into another region */
			for (size_t junk = 0; junk < region_size; junk += 64 * 1024)
				T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 64 * 1024 - 64));
		}
		tmp = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(spec[i].prim), len);
		T_ASSERT(tmp);
		fill(kgc_array_data(tmp), len * prim_size[spec[i].prim], (uint64_t)i + 1);
		shared[i] = (struct shared_array){ kgc_handle_new(t, tmp), spec[i].prim, len, spec[i].what };
		T_ASSERT(shared[i].h);
	}
	tmp = NULL;
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
}

int main(void)
{
	unsigned long long seed = t_seed();
	const char *secs_env = getenv("KGC_STRESS_SECS");
	double secs = secs_env ? atof(secs_env) : 8.0;
	static struct pinner pin[NPINNERS];
	pthread_t pt[NPINNERS], at[NALLOCATORS];
	struct kgc_options opts;
	struct kgc_stats st;
	kgc_thread *mt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_ASSERT_EQ(kgc_options_init(&opts), 0);
	opts.pin_mode = KGC_PIN_MODE_PIN;
	if (!getenv("KGC_VERIFY") || strcmp(getenv("KGC_VERIFY"), "0"))
		opts.verify = 1;
	if (!getenv("KGC_HEAP_MAX"))
		opts.max_heap = 256ul << 20;
	if (!getenv("KGC_REGION_SIZE"))
		opts.region_size = 1ul << 20;
	T_ASSERT_EQ(kgc_heap_create(&opts, &heap), 0);
	region_size = kgc_heap_region_size(heap);
	printf("backend %s, region %zu KiB, %d pinners, %d allocators, %.1f s\n",
	       kgc_heap_backend(heap), region_size >> 10, NPINNERS, NALLOCATORS, secs);

	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &mt), 0);
	make_shared(mt);
	T_ASSERT_EQ(kgc_thread_detach(mt), 0);

	deadline_ns = kgci_now_ns() + (uint64_t)(secs * 1e9);
	for (int i = 0; i < NPINNERS; i++) {
		pin[i].id = i;
		pin[i].rng = seed ^ (0x51ed27ull * (unsigned long long)(i + 1));
		T_ASSERT_EQ(pthread_create(&pt[i], NULL, pinner_main, &pin[i]), 0);
	}
	for (long i = 0; i < NALLOCATORS; i++)
		T_ASSERT_EQ(pthread_create(&at[i], NULL, allocator_main, (void *)i), 0);
	while (kgci_now_ns() < deadline_ns)
		usleep(20000);
	atomic_store(&stop_all, 1);
	for (int i = 0; i < NPINNERS; i++)
		T_ASSERT_EQ(pthread_join(pt[i], NULL), 0);
	for (int i = 0; i < NALLOCATORS; i++)
		T_ASSERT_EQ(pthread_join(at[i], NULL), 0);

	T_ASSERT_EQ(kgc_stats_get(heap, &st, sizeof(st)), 0);
	printf("critical sections %lu (gets %lu), held across a collection %lu\n",
	       atomic_load(&sections_total), atomic_load(&gets_total), atomic_load(&sections_across_gc));
	printf("young GCs %llu, full GCs %llu, evac fail pinned %llu, critical_gets %llu, "
	       "gclocker stalls %llu\n", (unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs,
	       (unsigned long long)st.evac_fail_pinned, (unsigned long long)st.critical_gets,
	       (unsigned long long)st.gclocker_stalls);
	T_ASSERT(atomic_load(&sections_total) > 0);
	T_ASSERT(atomic_load(&sections_across_gc) > 0);	/* GC ran while sections were open */
	T_ASSERT(st.young_gcs > 0 && st.full_gcs > 0);
	T_ASSERT(st.evac_fail_pinned > 0);		/* fresh private arrays were pinned in eden */
	T_ASSERT(st.critical_gets >= atomic_load(&gets_total));
	T_ASSERT_EQ(st.gclocker_stalls, 0);

	/* all shared arrays intact after a final full collection */
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &mt), 0);
	T_ASSERT_EQ(kgc_collect(mt, KGC_GC_FULL), 0);
	for (int i = 0; i < NSHARED; i++) {
		kgc_obj a = kgc_handle_get(shared[i].h);

		T_ASSERT_EQ(kgc_array_length(a), shared[i].len);
		check(kgc_array_data(a), shared[i].len * prim_size[shared[i].prim], (uint64_t)i + 1,
		      shared[i].what, "after the final full collection");
		kgc_handle_free(mt, shared[i].h);
	}
	T_ASSERT_EQ(kgc_thread_detach(mt), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	printf("PASS\n");
	return 0;
}
