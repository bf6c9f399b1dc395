/* SPDX-License-Identifier: MIT */
/*
 * Issue 4 benchmarks (region pinning vs GCLocker), kgc only:
 *
 *  stall  2 allocating threads keep a ~100 MB live set (tables of linked
 *         lists, replaced gradually) and time batches of 1000 allocations;
 *         a third thread repeatedly allocates a fresh 1 MB byte array, holds it
 *         critical for H ms (kgc_critical_get .. nanosleep .. release), then
 *         rests 1 ms. H in {0,1,10,100}, pin mode and GCLocker mode.
 *  pause  same allocating load, no pinner: young pause times in pin mode vs
 *         GCLocker mode, and in pin mode with 5% of the heap's regions pinned
 *         (a thread pins one array in each of N fresh eden regions, holds them
 *         across 2 young collections, releases, repeats).
 *  stall on HotSpot (issue 28: the seed's own comparison): the same
 *         workload in Java (CritStall.java), its critical section a JNI
 *         native holding GetPrimitiveArrayCritical (libcritstall.so), on
 *         JDK 17 G1 (GCLocker) and JDK 25 G1 (JEP 423 region pinning).
 *  pair   one thread, kgc_critical_get + kgc_critical_release on the same
 *         array in a loop: ns per pair (pin and GCLocker mode; plus two arrays
 *         in different regions alternating, which defeats the pin cache).
 *
 * `pinbench` alone is the driver (each configuration in a fresh process);
 * `pinbench stall <pin|gclocker> <H>`, `pinbench pause <pin|gclocker> <pct>`,
 * `pinbench pair <pin|gclocker> <same|alt>` are single runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <math.h>
#include "common.h"
#ifdef HAVE_KGC
#include <kgc.h>
#endif
#include "stall_load.h"

#ifdef HAVE_KGC
#define NODE_BYTES 24	/* header + next + val */

#define HEAP_MAX (768ul << 20)
#define YOUNG_SIZE (64ul << 20)
#define WARMUP_YOUNG_GCS 8	/* untimed young GCs after the fill (touch the heap) */

static void make_heap(int pin_mode, size_t region_size)
{
	static const uint32_t refs[1] = { F_NEXT };
	struct kgc_type_desc desc = { .name = "PNode", .payload_size = 16, .nrefs = 1,
				      .ref_offsets = refs };
	struct kgc_options opts;
	int rc;

	kgc_options_init(&opts);
	opts.pin_mode = pin_mode;
	if (!getenv("KGC_HEAP_MAX"))
		opts.max_heap = HEAP_MAX;
	if (!getenv("KGC_YOUNG_SIZE"))
		opts.young_size = YOUNG_SIZE;
	if (!getenv("KGC_REGION_SIZE") && region_size)
		opts.region_size = region_size;
	if ((rc = kgc_heap_create(&opts, &heap)))
		die("kgc_heap_create: %d %s", rc, kgc_last_error());
	if ((rc = kgc_type_register(heap, &desc, &NODE)))
		die("kgc_type_register: %d %s", rc, kgc_last_error());
}

static void sleep_ms(double msec)
{
	struct timespec ts = { (time_t)(msec / 1000), (long)(fmod(msec, 1000) * 1e6) };

	if (msec > 0)
		nanosleep(&ts, NULL);
}

/* -------------------------------------------------------------- stall */

static double hold_ms;
static atomic_ulong sections;

static void *pinner_main(void *arg)
{
	kgc_obj slot = NULL;
	struct kgc_frame fr;
	kgc_thread *t = attach("pinner");

	kgc_frame_push(t, &fr, &slot, 1, NULL);
	while (!atomic_load(&stop)) {
		size_t len;
		unsigned char *p;

		slot = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1 << 20);
		if (!slot)
			die("pinner alloc: %s", kgc_last_error());
		p = kgc_critical_get(t, &slot, &len);
		if (!p)
			die("critical_get: %s", kgc_last_error());
		p[0] = 1;
		p[len - 1] = 2;
		sleep_ms(hold_ms);
		if (kgc_critical_release(t, &slot, p, KGC_CRITICAL_COMMIT))
			die("critical_release: %s", kgc_last_error());
		atomic_fetch_add(&sections, 1);
		slot = NULL;
		/* resting like a runtime's sleeping thread: in native state, so
		 * that a safepoint does not wait for the sleep */
		kgc_enter_native(t);
		sleep_ms(1);
		kgc_leave_native(t);
	}
	kgc_frame_pop(t, &fr);
	kgc_thread_detach(t);
	return NULL;
}

/*
 * Start the allocators, wait until the live set is built, then let them run
 * untimed for WARMUP_YOUNG_GCS young collections (or 3 s), so that the first
 * touches of fresh heap pages (page faults, expensive in a VM) are not what
 * the timed window measures.
 */
static void start_allocators(pthread_t *th)
{
	struct kgc_stats st;
	uint64_t y0, t0;

	for (long i = 0; i < NALLOC; i++)
		pthread_create(&th[i], NULL, alloc_main, (void *)i);
	while (atomic_load(&filled) < NALLOC)
		sleep_ms(5);
	kgc_stats_get(heap, &st, sizeof(st));
	y0 = st.young_gcs;
	t0 = now_ns();
	do {
		sleep_ms(5);
		kgc_stats_get(heap, &st, sizeof(st));
	} while (st.young_gcs < y0 + WARMUP_YOUNG_GCS && now_ns() - t0 < 3000000000ull);
	/* start the timed window from a compacted old space (untimed full GC) */
	{
		kgc_thread *t = attach("warmup");

		if (kgc_collect(t, KGC_GC_FULL))
			die("kgc_collect: %s", kgc_last_error());
		kgc_thread_detach(t);
	}
}

static void write_dist(const char *name, uint64_t *v, size_t n)
{
	const char *dir = getenv("BENCH_OUT");
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.dat", dir ? dir : "out", name);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "# percentile  1/(1-p)  latency_ms\n");
	for (double q = 0; q < 1 - 1.0 / (double)n; q = 1 - (1 - q) / 1.05) {
		double p = q * 100;

		fprintf(f, "%.5f %.3f %.4f\n", p, 1 / (1 - q), ms(pct_sorted(v, n, p)));
	}
	fprintf(f, "%.5f %.3f %.4f\n", 100 * (1 - 1.0 / (double)n), (double)n, ms(v[n - 1]));
	fclose(f);
}

static int stall_worker(int mode, double hold, double secs)
{
	pthread_t th[NALLOC], pin;
	struct kgc_stats s0, s1;
	uint64_t *all, wmax = 0, wymax = 0, wystop = 0, wyon = 0;
	size_t woff = 0;
	size_t n = 0, over10 = 0, over50 = 0;
	char name[64];

	hold_ms = hold;
	snprintf(name, sizeof(name), "stall_%s_%g", mode ? "gclocker" : "pin", hold);
	/* time to safepoint before each pause too; gc+heap: each young pause's CPU time */
	setenv("KGC_LOG", "gc+safepoint,gc+heap", 0);
	log_to_file(name);
	make_heap(mode, 4ul << 20);	/* 4 MiB regions: the 1 MB array is not humongous */
	live_lists_per_thread = (size_t)(50e6 / (LIST_LEN * NODE_BYTES));
	start_allocators(th);
	kgc_stats_get(heap, &s0, sizeof(s0));
	atomic_store(&timing, 1);
	pthread_create(&pin, NULL, pinner_main, NULL);
	sleep_ms(secs * 1000);
	atomic_store(&stop, 1);
	pthread_join(pin, NULL);
	for (int i = 0; i < NALLOC; i++)
		pthread_join(th[i], NULL);
	kgc_stats_get(heap, &s1, sizeof(s1));
	for (int i = 0; i < NALLOC; i++)
		n += lats[i].n;
	all = malloc((n ? n : 1) * sizeof(uint64_t));
	n = 0;
	for (int i = 0; i < NALLOC; i++) {
		memcpy(all + n, lats[i].v, lats[i].n * sizeof(uint64_t));
		n += lats[i].n;
	}
	qsort(all, n, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		over10 += all[i] > 10000000;
		over50 += all[i] > 50000000;
	}
	if (n)
		write_dist(name, all, n);
	kgc_heap_destroy(heap);
	{
		size_t np = parse_pauses(), skip = (size_t)(s0.young_gcs + s0.full_gcs);

		for (size_t i = skip; i < np; i++) {
			if (pause_ns[i] > wmax)
				wmax = pause_ns[i];
			if (pause_young[i] && pause_ns[i] > wymax)
				wymax = pause_ns[i];
			if (pause_young[i] && pause_ns[i] + pause_sync_ns[i] > wystop)
				wystop = pause_ns[i] + pause_sync_ns[i];
			if (pause_young[i] && pause_off_cpu(i))
				woff++;
			else if (pause_young[i] && pause_ns[i] > wyon)
				wyon = pause_ns[i];
		}
	}
	printf("RESULT batches=%zu p50=%.4f p99=%.4f p999=%.4f max=%.3f over10=%zu over50=%zu "
	       "young=%lu full=%lu pause_max=%.3f young_pause_max=%.3f young_stop_max=%.3f "
	       "young_offcpu=%zu young_oncpu_max=%.3f run_pause_max=%.3f stalls=%lu "
	       "stall_ms=%.1f evac_fail_pinned=%lu sections=%lu secs=%.2f\n",
	       n, ms(pct_sorted(all, n, 50)), ms(pct_sorted(all, n, 99)), ms(pct_sorted(all, n, 99.9)),
	       n ? ms(all[n - 1]) : 0, over10, over50,
	       (unsigned long)(s1.young_gcs - s0.young_gcs), (unsigned long)(s1.full_gcs - s0.full_gcs),
	       ms(wmax), ms(wymax), ms(wystop), woff, ms(wyon), ms(s1.pause_max_ns),
	       (unsigned long)(s1.gclocker_stalls - s0.gclocker_stalls),
	       ms(s1.gclocker_stall_ns - s0.gclocker_stall_ns),
	       (unsigned long)(s1.evac_fail_pinned - s0.evac_fail_pinned),
	       (unsigned long)atomic_load(&sections), secs);
	return 0;
}

/* -------------------------------------------------------------- pause */

static double pin_pct;
static atomic_ulong pinned_sets;

/* Pins one small array in each of npin distinct fresh regions, holds them
 * across 2 young collections (or 500 ms), releases, repeats. */
static void *pct_pinner_main(void *arg)
{
	kgc_thread *t = attach("pinner5");
	struct kgc_stats st;
	size_t rs = kgc_heap_region_size(heap), npin;
	kgc_obj *slots;
	void **elems;
	uintptr_t *regs;
	struct kgc_frame fr;

	kgc_stats_get(heap, &st, sizeof(st));
	npin = (size_t)(st.regions_total * pin_pct / 100 + 0.5);
	if (!npin)
		npin = 1;
	slots = calloc(npin + 1, sizeof(kgc_obj));
	elems = calloc(npin, sizeof(void *));
	regs = calloc(npin, sizeof(uintptr_t));
	kgc_frame_push(t, &fr, slots, (uint32_t)npin + 1, NULL);
	printf("pinning %zu of %u regions (%.1f%%)\n", npin, st.regions_total, pin_pct);
	while (!atomic_load(&stop)) {
		size_t got = 0, tries = 0;
		uint64_t y0, t0;

		/* one array per distinct region; the arrays in between are garbage */
		while (got < npin && tries++ < npin * 64) {
			kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), rs / 16);
			uintptr_t r;
			size_t j;

			if (!a)
				die("pinner5 alloc: %s", kgc_last_error());
			r = (uintptr_t)a / rs;
			for (j = 0; j < got; j++) {
				if ((uintptr_t)slots[j] / rs == r)
					break;
			}
			if (j == got) {
				slots[got] = a;
				regs[got++] = r;
			}
		}
		for (size_t i = 0; i < got; i++) {
			size_t len;

			elems[i] = kgc_critical_get(t, &slots[i], &len);
			if (!elems[i])
				die("critical_get: %s", kgc_last_error());
		}
		kgc_stats_get(heap, &st, sizeof(st));
		y0 = st.young_gcs;
		t0 = now_ns();
		while (!atomic_load(&stop) && now_ns() - t0 < 500000000ull) {
			kgc_stats_get(heap, &st, sizeof(st));
			if (st.young_gcs >= y0 + 2)
				break;
			sleep_ms(1);
		}
		for (size_t i = got; i-- > 0; )
			if (kgc_critical_release(t, &slots[i], elems[i], KGC_CRITICAL_COMMIT))
				die("critical_release: %s", kgc_last_error());
		for (size_t i = 0; i < got; i++)
			slots[i] = NULL;
		atomic_fetch_add(&pinned_sets, 1);
	}
	kgc_frame_pop(t, &fr);
	kgc_thread_detach(t);
	return NULL;
}

static int pause_worker(int mode, double pct, double secs, int min_young)
{
	pthread_t th[NALLOC], pin;
	struct kgc_stats s0, s1;
	static uint64_t young[MAX_PAUSES];
	size_t np, ny = 0, skip;
	uint64_t t0, sum = 0;
	char name[64];

	snprintf(name, sizeof(name), "pause_%s_%g", mode ? "gclocker" : "pin", pct);
	log_to_file(name);
	pin_pct = pct;
	make_heap(mode, 0);
	live_lists_per_thread = (size_t)(50e6 / (LIST_LEN * NODE_BYTES));
	start_allocators(th);
	kgc_stats_get(heap, &s0, sizeof(s0));
	if (pct > 0)
		pthread_create(&pin, NULL, pct_pinner_main, NULL);
	t0 = now_ns();
	for (;;) {
		sleep_ms(50);
		kgc_stats_get(heap, &s1, sizeof(s1));
		if (now_ns() - t0 > secs * 1e9 && s1.young_gcs - s0.young_gcs >= (uint64_t)min_young)
			break;
		if (now_ns() - t0 > 4 * secs * 1e9)
			break;
	}
	atomic_store(&stop, 1);
	if (pct > 0)
		pthread_join(pin, NULL);
	for (int i = 0; i < NALLOC; i++)
		pthread_join(th[i], NULL);
	kgc_stats_get(heap, &s1, sizeof(s1));
	kgc_heap_destroy(heap);

	/* young pauses after the fill and warm-up */
	np = parse_pauses();
	skip = (size_t)(s0.young_gcs + s0.full_gcs);
	for (size_t i = skip; i < np; i++)
		if (pause_young[i]) {
			young[ny++] = pause_ns[i];
			sum += pause_ns[i];
		}
	qsort(young, ny, sizeof(uint64_t), cmp_u64);
	printf("RESULT young=%lu full=%lu logged=%zu mean=%.4f p50=%.4f p99=%.4f max=%.4f "
	       "evac_fail_pinned=%lu pinned_sets=%lu\n",
	       (unsigned long)(s1.young_gcs - s0.young_gcs), (unsigned long)(s1.full_gcs - s0.full_gcs),
	       ny, ny ? ms(sum) / ny : -1, ms(pct_sorted(young, ny, 50)), ms(pct_sorted(young, ny, 99)),
	       ny ? ms(young[ny - 1]) : -1,
	       (unsigned long)(s1.evac_fail_pinned - s0.evac_fail_pinned),
	       (unsigned long)atomic_load(&pinned_sets));
	return 0;
}

/* --------------------------------------------------------------- pair */

static int pair_worker(int mode, int alt, long iters)
{
	kgc_obj slots[3] = { 0 };
	struct kgc_frame fr;
	kgc_thread *t;
	uint64_t t0, dt;
	size_t len, rs;

	make_heap(mode, 0);
	t = attach("pair");
	rs = kgc_heap_region_size(heap);
	kgc_frame_push(t, &fr, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 4096);
	/* a second array in another region (allocate until the region differs) */
	do {
		slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 4096);
		if (!slots[1])
			die("alloc: %s", kgc_last_error());
	} while ((uintptr_t)slots[1] / rs == (uintptr_t)slots[0] / rs);
	/* same: move the array out of eden first (steady state); alt: keep the two
	 * in their distinct eden regions (a full GC could compact them together) */
	if (!alt)
		kgc_collect(t, KGC_GC_FULL);
	else if ((uintptr_t)slots[1] / rs == (uintptr_t)slots[0] / rs)
		die("alt: arrays share a region");
	/* warm-up, then REPS timed chunks: best and median chunk (robust to preemption) */
	enum { REPS = 9 };
	double per[REPS];
	long chunk = iters / REPS;

	for (int rep = -1; rep < REPS; rep++) {
		long n = rep < 0 ? iters / 10 : chunk;

		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			kgc_obj *r = &slots[alt ? (i & 1) : 0];
			void *p = kgc_critical_get(t, r, &len);

			if (__builtin_expect(!p, 0))
				die("critical_get: %s", kgc_last_error());
			if (__builtin_expect(kgc_critical_release(t, r, p, KGC_CRITICAL_COMMIT), 0))
				die("critical_release: %s", kgc_last_error());
		}
		dt = now_ns() - t0;
		if (rep >= 0)
			per[rep] = (double)dt / n;
	}
	for (int i = 1; i < REPS; i++)	/* insertion sort */
		for (int j = i; j > 0 && per[j] < per[j - 1]; j--) {
			double x = per[j];

			per[j] = per[j - 1];
			per[j - 1] = x;
		}
	kgc_frame_pop(t, &fr);
	kgc_thread_detach(t);
	kgc_heap_destroy(heap);
	printf("RESULT ns_per_pair=%.3f median=%.3f iters=%ld\n", per[0], per[REPS / 2], chunk * REPS);
	return 0;
}
#endif /* HAVE_KGC */

/* ------------------------------------------------------------- driver */

static const int holds[] = { 0, 1, 10, 100 };
enum { NH = 4 };

/* `pinbench stall-java <g1|g1@25> <H>`: CritStall.class and libcritstall.so
 * next to this binary, on HotSpot G1 (768 MiB heap, like kgc's). */
static int stall_java_worker(const char *variant, const char *hold, double secs)
{
	char dir[4096], lib[4200], s[32], res[1024];
	const char *v = jdk_select(variant), *gc = hotspot_gc_flag(v);
	bool jdk25 = v != variant;
	char *args[] = { "java", "-Xmx768m", (char *)gc, lib, "-cp", dir,
			 jdk25 ? "--enable-native-access=ALL-UNNAMED" : "-Xshare:auto", "CritStall", (char *)hold,
			 s, NULL };

	exe_dir(dir, sizeof(dir));
	snprintf(lib, sizeof(lib), "-Dcritstall.lib=%s/libcritstall.so", dir);
	snprintf(s, sizeof(s), "%.2f", secs);
	if (!gc || access(lib + strlen("-Dcritstall.lib="), R_OK)) {
		printf("RESULT nojava=1\n");
		return 0;
	}
	if (run_java_class(dir, "CritStall", args, res, sizeof(res)))
		return 0;
	printf("RESULT %s\n", res);
	return 0;
}

static int run_cfg(char *argv0, const char *a, const char *b, const char *c, char *out, size_t n)
{
	char *args[] = { argv0, (char *)a, (char *)b, (char *)c, NULL };

	return run_worker(args, NULL, out, n);
}

int main(int argc, char **argv)
{
	double scale = bench_scale();
	FILE *md;

	if (argc > 3 && !strcmp(argv[1], "stall-java"))
		return stall_java_worker(argv[2], argv[3], 3.0 * scale);
	if (argc > 1) {
#ifdef HAVE_KGC
		int mode = argc > 2 && !strcmp(argv[2], "gclocker");

		setvbuf(stdout, NULL, _IOLBF, 0);
		if (!strcmp(argv[1], "stall") && argc > 3)
			return stall_worker(mode, atof(argv[3]), 3.0 * scale);
		if (!strcmp(argv[1], "pause") && argc > 3)
			return pause_worker(mode, atof(argv[3]), 5.0 * scale, (int)(100 * scale));
		if (!strcmp(argv[1], "pair") && argc > 3)
			return pair_worker(mode, !strcmp(argv[3], "alt"), (long)(2e7 * scale));
		die("usage: pinbench [stall|pause|pair] <pin|gclocker> <arg>");
#else
		printf("RESULT unavailable=1\n");
		return 0;
#endif
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* ---- stall */
	{
		static const char *modes[] = { "pin", "gclocker" };
		/* the seed's own comparison: HotSpot with a JNI native holding the array */
		static const char *jv[] = { "g1", "g1@25" };
		static const char *jlabel[] = { "HotSpot 17 G1 (GCLocker)", "JDK 25 G1 (JEP 423)" };
		char res[2][NH][1024], jres[2][NH][1024], h[16];
		int ok[2][NH], jok[2][NH];

		md = md_open("stall");
		printf("== Critical stall (pin vs GCLocker), %.1f s per configuration\n", 3.0 * scale);
		for (int m = 0; m < 2; m++)
			for (int i = 0; i < NH; i++) {
				snprintf(h, sizeof(h), "%d", holds[i]);
				ok[m][i] = !run_cfg(argv[0], "stall", modes[m], h, res[m][i], sizeof(res[m][i])) &&
					   res_get(res[m][i], "unavailable") < 0;
				printf("  %-8s H=%-3d %s\n", modes[m], holds[i], ok[m][i] ? res[m][i] : "FAILED/unavailable");
			}
		for (int j = 0; j < 2; j++)
			for (int i = 0; i < NH; i++) {
				snprintf(h, sizeof(h), "%d", holds[i]);
				jok[j][i] = !run_cfg(argv[0], "stall-java", jv[j], h, jres[j][i], sizeof(jres[j][i])) &&
					    res_get(jres[j][i], "batches") > 0;
				printf("  %-24s H=%-3d %s\n", jlabel[j], holds[i], jres[j][i]);
			}
		both(md, "\n## Critical stall (issue 4)\n\n");
		both(md, "2 allocating threads keep a ~100 MB live set (tables of 16-node lists, 1 in 64 new lists\n"
			 "replaces a table entry) and time batches of %d node allocations. A third thread loops:\n"
			 "allocate a fresh 1 MB byte array (4 MiB regions, so it sits in eden), kgc_critical_get, hold\n"
			 "H ms, release, rest 1 ms. %.1f s per configuration after the live set is built; each\n"
			 "configuration is a fresh process and heap (max 768 MiB, young 64 MiB, 4 MiB regions), timed after\n"
			 "the live set is built, %d more young GCs and one forced full GC (warm-up; untimed).\n"
			 "Distributions: `stall.png`.\n\n", 1000, 3.0 * scale, WARMUP_YOUNG_GCS);
		both(md, "| mode | H (ms) | batches | p50 | p99 | p99.9 | max | >10ms | >50ms | young GCs | full GCs | max young pause | max young stop | max pause | GCLocker stalls (total ms) | evac fail: pinned | critical sections |\n");
		both(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (int m = 0; m < 2; m++)
			for (int i = 0; i < NH; i++) {
				const char *r = res[m][i];

				if (!ok[m][i]) {
					both(md, "| %s | %d | %s | | | | | | | | | | | | | | |\n", modes[m], holds[i],
					     fail_reason(r));
					continue;
				}
				both(md, "| %s | %d | %.0f | %.3f | %.3f | %.3f | %.2f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.0f (%.0f) | %.0f | %.0f |\n",
				     modes[m], holds[i], res_get(r, "batches"), res_get(r, "p50"), res_get(r, "p99"),
				     res_get(r, "p999"), res_get(r, "max"), res_get(r, "over10"), res_get(r, "over50"),
				     res_get(r, "young"), res_get(r, "full"), res_get(r, "young_pause_max"),
				     res_get(r, "young_stop_max"), res_get(r, "pause_max"),
				     res_get(r, "stalls"), res_get(r, "stall_ms"), res_get(r, "evac_fail_pinned"),
				     res_get(r, "sections"));
			}
		for (int j = 0; j < 2; j++)
			for (int i = 0; i < NH; i++) {
				const char *r = jres[j][i];

				if (!jok[j][i])
					both(md, "| %s | %d | %s | | | | | | | | | | | | | | |\n", jlabel[j], holds[i],
					     fail_reason(r));
				else
					both(md, "| %s | %d | %.0f | %.3f | %.3f | %.3f | %.2f | %.0f | %.0f | | | | | | | | %.0f |\n",
					     jlabel[j], holds[i], res_get(r, "batches"), res_get(r, "p50"), res_get(r, "p99"),
					     res_get(r, "p999"), res_get(r, "max"), res_get(r, "over10"), res_get(r, "over50"),
					     res_get(r, "sections"));
			}
		if (jok[1][0]) {
			both(md, "\nThe same workload on HotSpot (`bench/CritStall.java`, 768 MiB heap, the critical section a JNI\n"
				 "native, `critstall_jni.c`, holding `GetPrimitiveArrayCritical`): kgc's pin mode against JDK 25 G1\n"
				 "(JEP 423) by H (issue 28: p99.9 and max <= JDK 25 G1's, H-independent):\n\n"
				 "| H (ms) | kgc p99.9 | JDK 25 G1 p99.9 | kgc max | JDK 25 G1 max | JDK 17 G1 max |\n"
				 "|---:|---:|---:|---:|---:|---:|\n");
			for (int i = 0; i < NH; i++)
				both(md, "| %d | %.3f | %.3f | %.2f | %.2f | %.2f |\n", holds[i],
				     ok[0][i] ? res_get(res[0][i], "p999") : -1, res_get(jres[1][i], "p999"),
				     ok[0][i] ? res_get(res[0][i], "max") : -1, res_get(jres[1][i], "max"),
				     jok[0][i] ? res_get(jres[0][i], "max") : -1);
		}
		{
			double pmax_lat[NH], pmax_young = 0, pmax_stop = 0, pmax_any = 0;
			int all_pin = 1, under_stop = 1;

			for (int i = 0; i < NH; i++) {
				all_pin &= ok[0][i];
				pmax_lat[i] = ok[0][i] ? res_get(res[0][i], "max") : -1;
				if (ok[0][i] && res_get(res[0][i], "young_pause_max") > pmax_young)
					pmax_young = res_get(res[0][i], "young_pause_max");
				if (ok[0][i] && res_get(res[0][i], "young_stop_max") > pmax_stop)
					pmax_stop = res_get(res[0][i], "young_stop_max");
				if (ok[0][i] && res_get(res[0][i], "pause_max") > pmax_any)
					pmax_any = res_get(res[0][i], "pause_max");
			}
			for (int i = 0; i < NH; i++)
				under_stop &= ok[0][i] && pmax_lat[i] <= 1.25 * res_get(res[0][i], "young_stop_max") + 2;
			both(md, "\nLatencies in ms. \"max young pause\": longest young pause inside the timed window (the\n"
				 "library's gc log); \"max young stop\": longest time threads were stopped for one young\n"
				 "collection = time to safepoint (gc+safepoint log) + pause. GCLocker stalls: collections\n"
				 "that had to wait for critical sections (kgc_stats).\n");
			if (all_pin) {
				both(md, "\nPin mode, max batch latency by H (0/1/10/100 ms): %.2f / %.2f / %.2f / %.2f ms; ratio H=100 vs H=0: %.2fx.\n",
				     pmax_lat[0], pmax_lat[1], pmax_lat[2], pmax_lat[3], pmax_lat[3] / pmax_lat[0]);
				both(md, "Longest in those windows: young pause %.2f ms, young stop (sync + pause) %.2f ms, any pause %.2f ms.\n"
				     "Target \"max latency <= longest young pause, independent of H\": against the pause alone %s;\n"
				     "against each window's longest young stop (+25%% + 2 ms for the batch's own work and the\n"
				     "wake-up of 3 threads on 2 CPUs) %s.\n", pmax_young, pmax_stop, pmax_any,
				     pmax_lat[0] <= pmax_young * 1.1 && pmax_lat[1] <= pmax_young * 1.1 &&
				     pmax_lat[2] <= pmax_young * 1.1 && pmax_lat[3] <= pmax_young * 1.1 ? "MET (within 10%)" : "NOT MET",
				     under_stop ? "MET" : "NOT MET");
				both(md, "Young pauses with > 2 ms of wall time off the requesting thread's CPU (waiting for the other GC\n"
				     "worker, or preempted) by H: %.0f / %.0f / %.0f / %.0f; the longest pause without, by H: %.2f / %.2f / %.2f / %.2f ms.\n",
				     res_get(res[0][0], "young_offcpu"), res_get(res[0][1], "young_offcpu"),
				     res_get(res[0][2], "young_offcpu"), res_get(res[0][3], "young_offcpu"),
				     res_get(res[0][0], "young_oncpu_max"), res_get(res[0][1], "young_oncpu_max"),
				     res_get(res[0][2], "young_oncpu_max"), res_get(res[0][3], "young_oncpu_max"));
			}
			both(md, "Batches > 50 ms by H (0/1/10/100): pin ");
			for (int i = 0; i < NH; i++)
				both(md, "%s%.0f", i ? "/" : "", ok[0][i] ? res_get(res[0][i], "over50") : -1);
			both(md, " (full GCs ");
			for (int i = 0; i < NH; i++)
				both(md, "%s%.0f", i ? "/" : "", ok[0][i] ? res_get(res[0][i], "full") : -1);
			both(md, "), GCLocker ");
			for (int i = 0; i < NH; i++)
				both(md, "%s%.0f", i ? "/" : "", ok[1][i] ? res_get(res[1][i], "over50") : -1);
			both(md, " (full GCs ");
			for (int i = 0; i < NH; i++)
				both(md, "%s%.0f", i ? "/" : "", ok[1][i] ? res_get(res[1][i], "full") : -1);
			both(md, ").\n");
			if (ok[1][0] && ok[1][3] && ok[0][3])
				both(md, "GCLocker mode: max batch latency H=0 %.2f ms -> H=100 %.2f ms; p99.9 %.2f -> %.2f ms; stall time %.0f -> %.0f ms.\n"
				     "GCLocker / pin at H=100: max %.2fx, p99.9 %.2fx, batches > 50 ms %.0f vs %.0f.\n",
				     res_get(res[1][0], "max"), res_get(res[1][3], "max"), res_get(res[1][0], "p999"),
				     res_get(res[1][3], "p999"), res_get(res[1][0], "stall_ms"), res_get(res[1][3], "stall_ms"),
				     res_get(res[1][3], "max") / res_get(res[0][3], "max"),
				     res_get(res[1][3], "p999") / res_get(res[0][3], "p999"),
				     res_get(res[1][3], "over50"), res_get(res[0][3], "over50"));
		}
		fclose(md);
	}

	/* ---- young pause cost */
	{
		static const char *cfg[][3] = { { "pin", "0", "pin mode, no pins" },
						{ "gclocker", "0", "GCLocker mode, no pins" },
						{ "pin", "5", "pin mode, 5% of regions pinned" } };
		enum { ROUNDS = 4 };
		char res[ROUNDS][3][1024];
		int ok[ROUNDS][3];
		double mean[3] = { 0 }, cnt[3] = { 0 }, rlo[3], rhi[3];

		md = md_open("pause");
		if (!getenv("BENCH_WORKER_TIMEOUT"))
			setenv("BENCH_WORKER_TIMEOUT", "90", 1);
		printf("== Young pause cost of pinning (%d rounds, interleaved)\n", ROUNDS);
		for (int c = 0; c < 3; c++)
			rlo[c] = 1e300, rhi[c] = 0;
		for (int round = 0; round < ROUNDS; round++)
			for (int k = 0; k < 3; k++) {
				/* odd rounds in reverse order: no configuration always runs first */
				int c = round & 1 ? 2 - k : k;

				ok[round][c] = !run_cfg(argv[0], "pause", cfg[c][0], cfg[c][1], res[round][c],
							 sizeof(res[round][c])) &&
					       res_get(res[round][c], "unavailable") < 0 &&
					       res_get(res[round][c], "logged") > 0;
				printf("  %-32s %s\n", cfg[c][2], ok[round][c] ? res[round][c] : "FAILED/unavailable");
				if (ok[round][c]) {
					double m = res_get(res[round][c], "mean");

					mean[c] += m * res_get(res[round][c], "logged");
					cnt[c] += res_get(res[round][c], "logged");
					rlo[c] = m < rlo[c] ? m : rlo[c];
					rhi[c] = m > rhi[c] ? m : rhi[c];
				}
			}
		both(md, "\n## Young pause cost of pinning (issue 4)\n\n");
		both(md, "The stall benchmark's allocating load without the H-pinner (~100 MB live, max heap 768 MiB,\n"
			 "young 64 MiB, library-chosen region size), >= %.1f s and >= %d young GCs per run (at most %.0f s).\n"
			 "Young pause times are parsed from the library's own `KGC_LOG=gc` lines (`Pause Young ... <t>ms`);\n"
			 "pauses of the untimed fill and warm-up (%d young GCs + 1 full) are skipped. %d rounds, configurations\n"
			 "interleaved (odd rounds in reverse order); the mean is over all rounds.\n"
			 "5%% pinned: a thread pins one array in each of N fresh eden regions (N = 5%% of all regions),\n"
			 "holds them across 2 young GCs, releases, repeats (so young GCs keep meeting pinned regions).\n\n",
		     5.0 * scale, (int)(100 * scale), 20.0 * scale, WARMUP_YOUNG_GCS, ROUNDS);
		both(md, "| configuration | round | young GCs | full GCs | mean (ms) | p50 | p99 | max | evac fail: pinned |\n");
		both(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (int c = 0; c < 3; c++)
			for (int round = 0; round < ROUNDS; round++) {
				const char *r = res[round][c];

				if (!ok[round][c]) {
					both(md, "| %s | %d | %s | | | | | | |\n", cfg[c][2], round + 1,
					     fail_reason(r));
					continue;
				}
				both(md, "| %s | %d | %.0f | %.0f | %.3f | %.3f | %.3f | %.3f | %.0f |\n", cfg[c][2], round + 1,
				     res_get(r, "logged"), res_get(r, "full"), res_get(r, "mean"), res_get(r, "p50"),
				     res_get(r, "p99"), res_get(r, "max"), res_get(r, "evac_fail_pinned"));
			}
		for (int c = 0; c < 3; c++)
			mean[c] = cnt[c] ? mean[c] / cnt[c] : -1;
		if (mean[0] > 0 && mean[1] > 0) {
			both(md, "\n| ratio (mean young pause) | value | target |\n|---|---:|---:|\n");
			both(md, "| pin, no pins / GCLocker | %.3fx | <= 1.02x |\n", mean[0] / mean[1]);
			if (mean[2] > 0)
				both(md, "| pin, 5%% pinned / pin, no pins | %.3fx | minimal |\n", mean[2] / mean[0]);
			/* the two no-pin configurations run the same pause code (pins_compute
			 * included): the spread of one configuration's round means is the noise */
			both(md, "\nRun-to-run noise: the round means of one configuration span %.3f..%.3f ms (pin, no pins) "
				 "and %.3f..%.3f ms (GCLocker), i.e. +-%.0f%% around their middle; a ratio inside that "
				 "band is not a measured difference.\n",
			     rlo[0], rhi[0], rlo[1], rhi[1],
			     100 * fmax((rhi[0] - rlo[0]) / (rhi[0] + rlo[0]), (rhi[1] - rlo[1]) / (rhi[1] + rlo[1])));
		}
		fclose(md);
	}

	/* ---- critical pair */
	{
		static const char *cfg[][3] = { { "pin", "same", "pin mode, same array" },
						{ "gclocker", "same", "GCLocker mode, same array" },
						{ "pin", "alt", "pin mode, 2 regions alternating" } };
		char res[3][1024];
		int ok[3];

		md = md_open("pair");
		printf("== Critical get+release pair\n");
		for (int c = 0; c < 3; c++) {
			ok[c] = !run_cfg(argv[0], "pair", cfg[c][0], cfg[c][1], res[c], sizeof(res[c])) &&
				res_get(res[c], "unavailable") < 0;
			printf("  %-32s %s\n", cfg[c][2], ok[c] ? res[c] : "FAILED/unavailable");
		}
		both(md, "\n## Critical get+release pair (issue 4)\n\n");
		both(md, "One thread, kgc_critical_get + kgc_critical_release in a loop (%.0f M pairs after a 10%% warm-up),\n"
			 "array already in old space (after a full GC). Alternating = two arrays in different (eden) regions,\n"
			 "which makes the per-thread pin cache flush on every get.\n\n", 20 * scale);
		both(md, "| configuration | ns per pair (best of 9 chunks) | median chunk | target |\n|---|---:|---:|---:|\n");
		for (int c = 0; c < 3; c++) {
			if (!ok[c])
				both(md, "| %s | not available | | |\n", cfg[c][2]);
			else
				both(md, "| %s | %.2f | %.2f | %s |\n", cfg[c][2], res_get(res[c], "ns_per_pair"),
				     res_get(res[c], "median"), c == 0 ? "<= 5 ns" : "-");
		}
		if (ok[0])
			both(md, "\nVerdict: %.2f ns (best chunk; median %.2f ns) per same-region pair -> target %s.\n",
			     res_get(res[0], "ns_per_pair"), res_get(res[0], "median"),
			     res_get(res[0], "median") <= 5 ? "MET" : res_get(res[0], "ns_per_pair") <= 5 ? "MET on the best chunk only" : "NOT MET");
		fclose(md);
	}
	return 0;
}
