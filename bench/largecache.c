/* SPDX-License-Identifier: MIT */
/*
 * largecache (issue 32): a cache of byte arrays from 256 KiB to 32 MiB
 * (log-uniform sizes) with mixed lifetimes at high heap occupancy: each of
 * LC_STEPS insertions evicts random entries until the new array fits under
 * the live target (LC_LIVE_PCT, default 80, of LC_HEAP_MB, default 1024),
 * then takes a random slot. Every array is humongous; freed ones leave
 * holes of every size, so the heap fragments until a large allocation
 * finds no contiguous run although enough is free - HotSpot G1 then runs a
 * full GC or throws OutOfMemoryError; kgc's full collection relocates its
 * humongous objects by pages (compact_humongous.c). `LargeCache.java` is
 * the same program for HotSpot (same PRNG, same check value when no
 * allocation failed), run on JDK 17 G1 and JDK 25 G1 with the same heap.
 * Allocation failures (kgc: NULL/-ENOMEM; Java: OutOfMemoryError) are
 * counted and the insertion dropped.
 */
#include "common.h"
#include <math.h>
#ifdef HAVE_KGC
#include <kgc.h>
#endif

#define SLOTS 512

static long env_l(const char *k, long d)
{
	const char *v = getenv(k);

	return v ? atol(v) : d;
}

static uint64_t s;
static uint64_t next(void)	/* xorshift64*, as in LargeCache.java */
{
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return s * 0x2545F4914F6CDD1DULL;
}

static long heap_mb(void) { return env_l("LC_HEAP_MB", 1024); }
static long steps(void) { return (long)(env_l("LC_STEPS", 600) * bench_scale()); }

#ifdef HAVE_KGC
static void run_kgc(char *extra, size_t len, double *ms_out)
{
	struct kgc_options o;
	struct kgc_stats st;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	int64_t target = (heap_mb() << 20) * env_l("LC_LIVE_PCT", 80) / 100, live = 0;
	long fails = 0, n = steps();
	uint64_t check = 0, t0;
	int32_t lens[SLOTS] = { 0 };

	if (kgc_options_init(&o) || (o.max_heap = (size_t)heap_mb() << 20, kgc_heap_create(&o, &h)) ||
	    kgc_thread_attach(h, "main", &t))
		die("kgc setup: %s", kgc_last_error());
	kgc_frame_push(t, &f, roots, 1, NULL);
	roots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, SLOTS);
	s = 0x6b6763;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint64_t r = next() >> 11;
		int32_t size = (int32_t)(256.0 * 1024 * pow(128.0, (double)(r & 0xffff) / 65536.0));
		uint32_t slot;
		kgc_obj b;

		while (live + size > target) {
			uint32_t v = (uint32_t)(next() % SLOTS);

			if (lens[v]) {
				live -= lens[v];
				lens[v] = 0;
				kgc_array_set_ref(t, roots[0], v, NULL);
			}
		}
		slot = (uint32_t)(next() % SLOTS);
		if (lens[slot]) {
			live -= lens[slot];
			lens[slot] = 0;
			kgc_array_set_ref(t, roots[0], slot, NULL);
		}
		b = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), (size_t)size);
		if (!b) {
			fails++;
			continue;
		}
		((int8_t *)kgc_array_data(b))[0] = (int8_t)i;
		((int8_t *)kgc_array_data(b))[size - 1] = (int8_t)(i >> 8);
		kgc_array_set_ref(t, roots[0], slot, b);
		lens[slot] = size;
		live += size;
	}
	for (int k = 0; k < SLOTS; k++) {
		kgc_obj b = kgc_array_get_ref(roots[0], k);
		const uint8_t *d;

		if (!b)
			continue;
		d = kgc_array_data(b);
		check = check * 31 + d[0] + ((uint64_t)d[kgc_array_length(b) - 1] << 8) + kgc_array_length(b);
	}
	*ms_out = ms(now_ns() - t0);
	kgc_stats_get(h, &st, sizeof(st));
	snprintf(extra, len, "check=%llu alloc_failures=%ld young=%llu full_gcs=%llu hum_moved=%llu hum_moved_mb=%.0f "
		 "copied_ranges=%llu pause_max_ms=%.3f pause_total_ms=%.1f",
		 (unsigned long long)check, fails, (unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs,
		 (unsigned long long)st.humongous_moved, st.humongous_moved_bytes / 1048576.0,
		 (unsigned long long)st.region_moves_copied, ms(st.pause_max_ns), ms(st.pause_total_ns));
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	kgc_heap_destroy(h);
}
#endif

static int worker(const char *v)
{
	char xmx[32];
	int rc;

	snprintf(xmx, sizeof(xmx), "-Xmx%ldm", heap_mb());
	if ((rc = hotspot_worker("LargeCache", "largecache", v, xmx)) >= 0)
		return rc;
#ifdef HAVE_KGC
	char extra[640];
	double t;

	log_to_file("largecache_kgc");
	run_kgc(extra, sizeof(extra), &t);
	printf("RESULT time_ms=%.1f rss_kb=%ld %s\n", t, peak_rss_kb(), extra);
#else
	printf("RESULT unavailable=1\n");
#endif
	return 0;
}

enum { KGC, G1, G1_25, NV };
static const char *variants[NV] = { "kgc", "g1", "g1@25" };
static const char *label[NV] = { "kgc", "JDK 17 G1", "JDK 25 G1" };

int main(int argc, char **argv)
{
	char res[NV][1024], b[32], ck[NV][32];
	double med[NV], la[3] = { 0 };
	FILE *md;

	if (argc > 1)
		return worker(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getloadavg(la, 3) < 0)
		la[0] = -1;
	setenv("LC_HEAP_MB", "1024", 0);
	md = md_open("largecache");
	both(md, "\n## Large-array cache at high occupancy (issue 32)\n\n");
	both(md, "`bench/largecache.c` / `LargeCache.java`: %ld insertions of byte arrays of 256 KiB-32 MiB "
	     "(log-uniform) into a %d-slot cache, random evictions keeping %ld%% of a %ld MiB heap live; "
	     "same heap for every variant (-Xmx), collectors' defaults otherwise; one run each; load average "
	     "%.1f on %ld CPUs at the start.\n\n",
	     steps(), SLOTS, env_l("LC_LIVE_PCT", 80), heap_mb(), la[0], sysconf(_SC_NPROCESSORS_ONLN));
	for (int v = 0; v < NV; v++) {
		med[v] = run_median(argv[0], variants[v], 1, res[v], sizeof(res[v]));
		res_str(res[v], "check", ck[v], sizeof(ck[v]));
		printf("  %-10s %s\n", label[v], res[v]);
	}
	both(md, "| variant | time (ms) | allocation failures | full GCs | GCs | max pause (ms) | total pause (ms) | peak RSS (MiB) | check |\n");
	both(md, "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (int v = 0; v < NV; v++) {
		if (med[v] < 0) {
			both(md, "| %s | not available (%s) | | | | | | | |\n", label[v], fail_reason(res[v]));
			continue;
		}
		both(md, "| %s | %.1f | %.0f | %.0f | %.0f | %.3f | %.1f | %.0f | %s |\n", label[v], med[v],
		     res_get(res[v], "alloc_failures"), v == KGC ? res_get(res[v], "full_gcs") : res_get(res[v], "full"),
		     v == KGC ? res_get(res[v], "young") + res_get(res[v], "full_gcs") : res_get(res[v], "gcs"),
		     res_get(res[v], "pause_max_ms"), res_get(res[v], "pause_total_ms"), res_get(res[v], "rss_kb") / 1024,
		     ck[v]);
	}
	if (med[KGC] > 0) {
		both(md, "\nkgc detail: `%s`\n\n", res[KGC]);
		for (int v = G1; v < NV; v++)
			if (med[v] > 0)
				both(md, "- kgc / %s: time %s\n", label[v], ratio_str(b, sizeof(b), med[KGC], med[v]));
	}
	fclose(md);
	return 0;
}
