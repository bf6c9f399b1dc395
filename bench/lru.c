/* SPDX-License-Identifier: MIT */
/*
 * LRU cache (issue 15): 2 threads, per thread a cache of 500k entries (1M in
 * all) - a chained hash table of 2^19 buckets and a doubly linked recency
 * list through the entries, each entry holding a byte array value of 16..79
 * bytes. A request for a key in [0, 1M) moves a hit to the front (old
 * entries relinked to new ones: old->young references all the time) and
 * inserts a miss, evicting the least recently used entry. Phases per
 * thread: fill, 2M requests as fast as possible (throughput), then 20k
 * requests/s for 5 s, started by both threads together (a barrier), each
 * request's latency measured from its scheduled start (a pause delays every
 * request queued behind it). kgc against
 * HotSpot G1 running bench/Lru.java (the same structure, keys and phases),
 * 1 GiB heaps, collectors' defaults. BENCH_SCALE scales the request count
 * and the fixed-rate seconds.
 *
 * `lru` = driver; `lru <variant>` = one run.
 */
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include "common.h"
#ifdef HAVE_KGC
#include <kgc.h>
#endif

enum { NTHREADS = 2, BITS = 19, CAP = 500000, RATE = 20000 };

static uint64_t nops, nsecs;
static long build_mb;		/* LRU_BUILD_MB: thread 1 builds instead (build_phase) */

static void sizes(void)
{
	nops = (uint64_t)(2e6 * bench_scale());
	nsecs = (uint64_t)(5 * bench_scale() + 0.5);
	if (nsecs < 1)
		nsecs = 1;
	build_mb = getenv("LRU_BUILD_MB") ? atol(getenv("LRU_BUILD_MB")) : 0;
}

static uint32_t hash(uint64_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - BITS));
}

static uint64_t next_key(uint64_t *rng)
{
	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	return (*rng >> 33) % (2ull * CAP);
}

static int cmp_u(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#ifdef HAVE_KGC
enum { KEY = 8, PREV = 16, NEXT = 24, HNEXT = 32, VAL = 40 };
static kgc_heap *heap;
static kgc_type_id entry_type;
static struct kgc_stats rate_s[2];	/* at the start and end of thread 0's fixed-rate phase */
static pthread_barrier_t phase_barrier;	/* the fixed-rate phase starts when both threads are there */
static pthread_barrier_t done_barrier;	/* LRU_BUILD_MB: thread 0's phase is over */

static void *phase_wait(void *arg)
{
	pthread_barrier_wait(arg ? arg : &phase_barrier);
	return NULL;
}

/*
 * LRU_BUILD_MB (issue 28: a program that builds a large structure at once
 * while requests are timed): in the fixed-rate phase thread 1 does not take
 * requests; it loads a table of that many MiB - BUILD_BUCKETS chains of
 * records, BUILD_NODE_BYTES each in kgc's layout (a 48-byte entry and its
 * 16..79-byte value) - as fast as it can, and holds it until thread 0's
 * phase is over. Thread 0's request latencies are the result. Lru.java
 * does the same.
 */
#define BUILD_NODE_BYTES 112
#define BUILD_BUCKETS 4096
static uint64_t build_ns;

struct cache {
	kgc_thread *t;
	kgc_obj *r;		/* roots: [0] buckets, [1] list head, [2..3] new value, entry */
	long size, sum;
};

#define REF(o, f) kgc_get_ref((o), (f))
#define SET(c, o, f, v) kgc_set_ref((c)->t, (o), (f), (v))

static void unlink_e(struct cache *c, kgc_obj e)
{
	SET(c, REF(e, PREV), NEXT, REF(e, NEXT));
	SET(c, REF(e, NEXT), PREV, REF(e, PREV));
}

static void front(struct cache *c, kgc_obj e)
{
	kgc_obj h = c->r[1], f = REF(h, NEXT);

	SET(c, e, NEXT, f);
	SET(c, e, PREV, h);
	SET(c, f, PREV, e);
	SET(c, h, NEXT, e);
}

static void evict(struct cache *c, kgc_obj v)
{
	uint32_t i = hash((uint64_t)KGC_FIELD(v, KEY, int64_t));
	kgc_obj b = c->r[0], e = kgc_array_get_ref(b, i);

	unlink_e(c, v);
	if (e == v) {
		kgc_array_set_ref(c->t, b, i, REF(v, HNEXT));
	} else {
		while (REF(e, HNEXT) != v)
			e = REF(e, HNEXT);
		SET(c, e, HNEXT, REF(v, HNEXT));
	}
	c->size--;
}

static void request(struct cache *c, uint64_t key)
{
	uint32_t i = hash(key);
	kgc_obj e = kgc_array_get_ref(c->r[0], i);

	while (e && KGC_FIELD(e, KEY, int64_t) != (int64_t)key)
		e = REF(e, HNEXT);
	if (e) {
		unlink_e(c, e);
		front(c, e);
		c->sum += *(int8_t *)kgc_array_data(REF(e, VAL));
		return;
	}
	c->r[2] = kgc_alloc_array(c->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 16 + key % 64);
	c->r[3] = kgc_alloc(c->t, entry_type);
	if (!c->r[2] || !c->r[3])
		die("kgc_alloc: %s", kgc_last_error());
	e = c->r[3];
	*(int8_t *)kgc_array_data(c->r[2]) = (int8_t)key;
	KGC_FIELD(e, KEY, int64_t) = (int64_t)key;
	SET(c, e, VAL, c->r[2]);
	SET(c, e, HNEXT, kgc_array_get_ref(c->r[0], i));
	kgc_array_set_ref(c->t, c->r[0], i, e);
	front(c, e);
	c->r[2] = c->r[3] = NULL;
	if (++c->size > CAP)
		evict(c, REF(c->r[1], PREV));
}

struct targ {
	int id;
	uint64_t tput_ns, *lat;
};

static void *sleep_fn(void *arg)
{
	uint64_t ns = *(uint64_t *)arg;
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
	return NULL;
}

/*
 * The fixed-rate phase: latency of each request from its scheduled start.
 * Between requests the thread sleeps (in native state) when the next one
 * is more than SLEEP_AHEAD_NS away, waking WAKE_EARLY_NS before it; Lru.java
 * does the same with parkNanos. (It used to sleep only beyond 200 us, so
 * at a request every 50 us both threads spun all the time and any third
 * runnable thread oversubscribed 2 CPUs: a ~4 ms p99.9 floor with no
 * collection at all, for both collectors.)
 */
#define SLEEP_AHEAD_NS 20000
#define WAKE_EARLY_NS 10000

static void rate_phase(struct cache *c, uint64_t *rng, uint64_t *lat)
{
	uint64_t n = (uint64_t)RATE * nsecs, start = now_ns(), interval = 1000000000u / RATE;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t sched = start + i * interval, now;

		while ((now = now_ns()) < sched) {
			uint64_t ns = sched - now - WAKE_EARLY_NS;

			if (sched - now > SLEEP_AHEAD_NS)
				kgc_do_blocking(c->t, sleep_fn, &ns);
			else
				kgc_safepoint_poll(c->t);
		}
		request(c, next_key(rng));
		lat[i] = now_ns() - sched;
	}
}

/* Thread 1's build (c->r[2]: the table, c->r[3]: a new value), held
 * until thread 0's phase is over. */
static void build_phase(struct cache *c)
{
	uint64_t n = ((uint64_t)build_mb << 20) / BUILD_NODE_BYTES, t0 = now_ns();

	c->r[2] = kgc_alloc_array(c->t, KGC_TYPE_REF_ARRAY, BUILD_BUCKETS);
	if (!c->r[2])
		die("kgc_alloc_array: %s", kgc_last_error());
	for (uint64_t i = 0; i < n; i++) {
		kgc_obj e, tab;

		c->r[3] = kgc_alloc_array(c->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 16 + i % 64);
		e = c->r[3] ? kgc_alloc(c->t, entry_type) : NULL;
		if (!e)
			die("kgc_alloc: %s", kgc_last_error());
		tab = c->r[2];
		KGC_FIELD(e, KEY, int64_t) = (int64_t)i;
		SET(c, e, VAL, c->r[3]);
		SET(c, e, HNEXT, kgc_array_get_ref(tab, i % BUILD_BUCKETS));
		kgc_array_set_ref(c->t, tab, i % BUILD_BUCKETS, e);
	}
	c->r[3] = NULL;
	build_ns = now_ns() - t0;
	kgc_do_blocking(c->t, phase_wait, &done_barrier);
	c->r[2] = NULL;
}

static void *kgc_thread_main(void *arg)
{
	struct targ *a = arg;
	struct cache c = { 0 };
	uint64_t rng = 0x1234 + (uint64_t)a->id, t0;

	if (kgc_thread_attach(heap, "lru", &c.t))
		die("attach: %s", kgc_last_error());
	{
		KGC_ROOTS(c.t, r, 4);

		c.r = r;
		r[0] = kgc_alloc_array(c.t, KGC_TYPE_REF_ARRAY, 1u << BITS);
		r[1] = kgc_alloc(c.t, entry_type);
		if (!r[0] || !r[1])
			die("kgc_alloc: %s", kgc_last_error());
		SET(&c, r[1], NEXT, r[1]);
		SET(&c, r[1], PREV, r[1]);
		for (int i = 0; i < CAP; i++)
			request(&c, next_key(&rng));
		t0 = now_ns();
		for (uint64_t i = 0; i < nops; i++)
			request(&c, next_key(&rng));
		a->tput_ns = now_ns() - t0;
		kgc_do_blocking(c.t, phase_wait, NULL);	/* the other thread's throughput phase is over */
		if (a->id == 0)
			kgc_stats_get(heap, &rate_s[0], sizeof(rate_s[0]));
		if (build_mb && a->id == 1) {
			build_phase(&c);
		} else {
			rate_phase(&c, &rng, a->lat);
			if (a->id == 0)
				kgc_stats_get(heap, &rate_s[1], sizeof(rate_s[1]));
			if (build_mb)
				kgc_do_blocking(c.t, phase_wait, &done_barrier);
		}
	}
	kgc_thread_detach(c.t);
	return NULL;
}

static void run_kgc(void)
{
	static const uint32_t offs[4] = { PREV, NEXT, HNEXT, VAL };
	struct kgc_type_desc d = { .name = "Entry", .payload_size = 40, .nrefs = 4, .ref_offsets = offs };
	struct kgc_options o;
	struct kgc_stats st;
	struct targ a[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t n = (uint64_t)RATE * nsecs, *all = malloc(NTHREADS * n * sizeof(uint64_t)), tmax = 0;

	if (!all || kgc_options_init(&o) || (o.max_heap = (size_t)1 << 30, kgc_heap_create(&o, &heap)) ||
	    kgc_type_register(heap, &d, &entry_type))
		die("kgc setup: %s", kgc_last_error());
	pthread_barrier_init(&phase_barrier, NULL, NTHREADS);
	pthread_barrier_init(&done_barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		a[i] = (struct targ){ .id = i, .lat = all + i * n };
		pthread_create(&th[i], NULL, kgc_thread_main, &a[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		tmax = a[i].tput_ns > tmax ? a[i].tput_ns : tmax;
	}
	n *= build_mb ? 1 : NTHREADS;	/* with a build, thread 0's requests only */
	qsort(all, n, sizeof(uint64_t), cmp_u);
	kgc_stats_get(heap, &st, sizeof(st));
	printf("RESULT ops_per_s=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f rss_kb=%ld "
	       "gcs=%llu full=%llu pause_max_ms=%.3f pause_total_ms=%.1f rate_gcs=%llu rate_pause_ms=%.1f "
	       "build_ms=%.1f\n",
	       NTHREADS * nops / (tmax / 1e9), all[n / 2] / 1e3, all[(size_t)(n * 0.99)] / 1e3,
	       all[(size_t)(n * 0.999)] / 1e3, all[n - 1] / 1e3, peak_rss_kb(),
	       (unsigned long long)(st.young_gcs + st.full_gcs), (unsigned long long)st.full_gcs,
	       ms(st.pause_max_ns), ms(st.pause_total_ns),
	       (unsigned long long)(rate_s[1].young_gcs + rate_s[1].full_gcs - rate_s[0].young_gcs -
				    rate_s[0].full_gcs),
	       ms(rate_s[1].pause_total_ns - rate_s[0].pause_total_ns), build_ns / 1e6);
	kgc_heap_destroy(heap);
	pthread_barrier_destroy(&phase_barrier);
	pthread_barrier_destroy(&done_barrier);
	free(all);
}
#endif

/* Lru.class next to this binary on a HotSpot collector (variant: "g1",
 * "g1@25", "zgc@25"); full GCs from its -Xlog:gc (ZGC's pauses: gc+phases). */
static int run_hotspot(const char *variant)
{
	char dir[PATH_MAX], xlog[PATH_MAX + 160], log[PATH_MAX + 96], res[1024], line[512];
	const char *v = jdk_select(variant), *gc = hotspot_gc_flag(v);
	char *args[] = { "java", "-Xmx1g", (char *)gc, xlog, "-cp", dir, "Lru", NULL };
	struct rusage ru;
	unsigned long full = 0, gcs = 0, rate_gcs = 0;
	double t0, t1, rate_ms = 0;
	FILE *f;

	exe_dir(dir, sizeof(dir));
	snprintf(log, sizeof(log), "%s/lru_%s%s.log", getenv("BENCH_OUT") ? getenv("BENCH_OUT") : dir, v,
		 v != variant ? "25" : "");
	snprintf(xlog, sizeof(xlog), "-Xlog:gc%s:file=%s", strstr(gc, "ZGC") ? ",gc+phases" : "", log);
	if (run_java_class(dir, "Lru", args, res, sizeof(res)))
		return 0;
	getrusage(RUSAGE_CHILDREN, &ru);
	t0 = res_get(res, "rate_t0_ms") / 1e3;
	t1 = res_get(res, "rate_t1_ms") / 1e3;
	if ((f = fopen(log, "r"))) {
		/* "[12.345s][info][gc] GC(7) Pause Young (Normal) ... 3.456ms" */
		while (fgets(line, sizeof(line), f)) {
			char *ms_end = strstr(line, "ms\n"), *num;
			double at;

			if (!strstr(line, " Pause "))
				continue;
			gcs++;
			full += strstr(line, "Pause Full") != NULL;
			if (sscanf(line, "[%lfs]", &at) != 1 || at < t0 || at > t1 || !ms_end)
				continue;
			for (num = ms_end; num > line && num[-1] != ' '; num--)
				;
			rate_gcs++;
			rate_ms += atof(num);
		}
		fclose(f);
	}
	printf("RESULT %s rss_kb=%ld gcs=%lu full=%lu rate_gcs=%lu rate_pause_ms=%.1f\n", res, ru.ru_maxrss,
	       gcs, full, rate_gcs, rate_ms);
	return 0;
}

/* The median over the runs that worked of one RESULT key. */
static double med(char res[][1024], const int *ok, int runs, const char *key)
{
	double v[16];
	int n = 0;

	for (int r = 0; r < runs; r++)
		if (ok[r])
			v[n++] = res_get(res[r], key);
	if (!n)
		return -1;
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The variants both passes run, and how many runs of each at most. */
enum { KGC, G1, G1_25, ZGC_25, NV, MAXRUNS = 9 };
static const char *const variants[NV] = { "kgc", "g1", "g1@25", "zgc@25" };
static const char *const label[NV] = { "kgc", "HotSpot G1", "JDK 25 G1", "JDK 25 ZGC" };

/* runs rounds of every variant, each in a fresh process, the order
 * alternating from round to round; a run worked if its RESULT has key. */
static void run_rounds(const char *argv0, int runs, const char *key, char res[NV][MAXRUNS][1024],
		       int ok[NV][MAXRUNS], int nok[NV])
{
	for (int r = 0; r < runs; r++)
		for (int k = 0; k < NV; k++) {
			int v = r % 2 ? NV - 1 - k : k;
			char *args[] = { (char *)argv0, (char *)variants[v], NULL };

			ok[v][r] = !run_worker(args, NULL, res[v][r], sizeof(res[v][r])) &&
				   res_get(res[v][r], key) > 0;
			nok[v] += ok[v][r];
			printf("  %-12s run %d: %s\n", label[v], r + 1, res[v][r]);
		}
}

/*
 * The same runs with a build phase (LRU_BUILD_PHASE_MB, default 200; 0:
 * none): thread 0's requests while thread 1 loads a table of that size at
 * once (build_phase). What sets their tail is the collector's pauses while
 * most of what is allocated survives.
 */
static void build_pass(const char *argv0, FILE *md, int runs)
{
	static const char *keys[] = { "p50_us", "p99_us", "p999_us", "max_us", "rate_gcs", "rate_pause_ms",
				      "build_ms", "pause_max_ms" };
	enum { P50, P99, P999, MAX, RGCS, RMS, BMS, PMAX, NK };
	static char res[NV][MAXRUNS][1024];
	int ok[NV][MAXRUNS] = { { 0 } }, nok[NV] = { 0 };
	const char *e = getenv("LRU_BUILD_PHASE_MB");
	long mb = e ? atol(e) : 200;
	char mbs[32];
	double m[NV][NK];

	if (mb <= 0)
		return;
	snprintf(mbs, sizeof(mbs), "%ld", mb);
	setenv("LRU_BUILD_MB", mbs, 1);
	printf("== LRU cache with a %ld MB build phase: %d runs each\n", mb, runs);
	run_rounds(argv0, runs, "p999_us", res, ok, nok);
	unsetenv("LRU_BUILD_MB");
	for (int v = 0; v < NV; v++)
		for (int k = 0; k < NK; k++)
			m[v][k] = med(res[v], ok[v], runs, keys[k]);
	both(md, "\n### With a %ld MB build phase (issue 28)\n\n"
		 "The same programs (`LRU_BUILD_MB=%ld`): in the fixed-rate phase thread 1 takes no requests; it loads\n"
		 "a table of %ld MB (in kgc's layout: 4096 chains of 112-byte records, an entry and its 16..79-byte\n"
		 "value) as fast as it can and holds it until thread 0's phase is over. Latencies are thread 0's\n"
		 "requests (%d/s for %llu s); medians of %d runs each, alternating.\n\n",
	     mb, mb, mb, RATE, (unsigned long long)nsecs, runs);
	both(md, "| variant | p50 (us) | p99 (us) | p99.9 (us) | max (us) | GCs in the phase (pauses, ms) | build (ms) |\n");
	both(md, "|---|---:|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < NV; v++) {
		if (!nok[v]) {
			both(md, "| %s | not available (%s) | | | | | |\n", label[v], fail_reason(res[v][0]));
			continue;
		}
		both(md, "| %s | %.1f | %.1f | %.1f | %.1f | %.0f (%.1f) | %.0f |\n", label[v], m[v][P50], m[v][P99],
		     m[v][P999], m[v][MAX], m[v][RGCS], m[v][RMS], m[v][BMS]);
	}
	if (nok[KGC] && nok[G1_25])
		both(md, "\nkgc / JDK 25 G1: p99.9 %.3fx, max %.3fx, build time %.3fx", m[KGC][P999] / m[G1_25][P999],
		     m[KGC][MAX] / m[G1_25][MAX], m[KGC][BMS] / m[G1_25][BMS]);
	if (nok[KGC] && nok[ZGC_25])
		both(md, "; kgc / JDK 25 ZGC: p99.9 %.3fx, max %.3fx, build time %.3fx", m[KGC][P999] / m[ZGC_25][P999],
		     m[KGC][MAX] / m[ZGC_25][MAX], m[KGC][BMS] / m[ZGC_25][BMS]);
	if (nok[KGC])
		both(md, ".\nkgc's longest pause in the run (median of the runs): %.2f ms (issue 28: <= 12 ms).\n",
		     m[KGC][PMAX]);
}

int main(int argc, char **argv)
{
	static const char *keys[] = { "ops_per_s", "p50_us", "p99_us", "p999_us", "max_us", "gcs", "full",
				      "rate_gcs", "rate_pause_ms", "rss_kb" };
	enum { OPS, P50, P99, P999, MAX, GCS, FULL, RGCS, RMS, RSS, NK };
	static char res[NV][MAXRUNS][1024];
	int ok[NV][MAXRUNS] = { { 0 } }, nok[NV] = { 0 }, runs = 3;
	double m[NV][NK];
	const char *rs = getenv("LRU_RUNS");
	FILE *md;

	sizes();
	if (argc > 1) {
		if (strcmp(argv[1], "kgc"))
			return run_hotspot(argv[1]);
#ifdef HAVE_KGC
		run_kgc();
#else
		printf("RESULT unavailable=1\n");
#endif
		return 0;
	}
	if (rs && atoi(rs) > 0)
		runs = atoi(rs) > MAXRUNS ? MAXRUNS : atoi(rs);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("== LRU cache: %d threads x %d entries, %llu requests each, then %d/s for %llu s; %d runs each\n",
	       NTHREADS, CAP, (unsigned long long)nops, RATE, (unsigned long long)nsecs, runs);
	run_rounds(argv[0], runs, "ops_per_s", res, ok, nok);
	for (int v = 0; v < NV; v++)
		for (int k = 0; k < NK; k++)
			m[v][k] = med(res[v], ok[v], runs, keys[k]);
	md = md_open("lru");
	both(md, "\n## LRU cache (issue 15)\n\n");
	both(md, "%d threads, per thread a cache of %d entries (hash chains + a recency list through the entries,\n"
		 "a 16..79-byte array value each); keys uniform over twice the capacity (about half the requests miss,\n"
		 "insert and evict; hits relink old entries to new ones). Per thread: fill, %llu requests as fast as\n"
		 "possible (throughput), then - once both threads are past that - %d requests/s for %llu s, latency\n"
		 "from each request's scheduled start.\n"
		 "`bench/Lru.java` is the same for HotSpot. 1 GiB heaps, collectors' defaults. %d runs of each, in\n"
		 "alternating order, each in a fresh process; the table gives each column's median over the runs.\n"
		 "\"GCs in the fixed-rate phase\": the collections that started inside thread 0's fixed-rate phase\n"
		 "and their pause time (kgc from its stats, HotSpot from `-Xlog:gc` against the phase's JVM uptime):\n"
		 "a pause delays every request scheduled during it, so they set the tail percentiles. JDK 25 where the\n"
		 "machine has it; ZGC's GCs are its pauses (three per cycle, `-Xlog:gc+phases`).\n\n",
	     NTHREADS, CAP, (unsigned long long)nops, RATE, (unsigned long long)nsecs, runs);
	both(md, "| variant | throughput (req/s) | p50 (us) | p99 (us) | p99.9 (us) | max (us) | GCs | full GCs | "
		 "GCs in the fixed-rate phase (their pauses, ms) | peak RSS (MiB) |\n");
	both(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < NV; v++) {
		if (!nok[v]) {
			both(md, "| %s | not available (%s) | | | | | | | | |\n", label[v], fail_reason(res[v][0]));
			continue;
		}
		both(md, "| %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f (%.1f) | %.0f |\n", label[v],
		     m[v][OPS], m[v][P50], m[v][P99], m[v][P999], m[v][MAX], m[v][GCS], m[v][FULL], m[v][RGCS],
		     m[v][RMS], m[v][RSS] / 1024);
	}
	both(md, "\nEach run's p99.9 (us) and fixed-rate-phase GCs (pause ms):\n");
	for (int v = 0; v < NV; v++) {
		both(md, "- %s:", label[v]);
		for (int r = 0; r < runs; r++)
			if (ok[v][r])
				both(md, " %.1f (%.0f GCs, %.1f ms)%s", res_get(res[v][r], "p999_us"),
				     res_get(res[v][r], "rate_gcs"), res_get(res[v][r], "rate_pause_ms"),
				     r + 1 < runs ? ";" : "");
			else
				both(md, " failed%s", r + 1 < runs ? ";" : "");
		both(md, "\n");
	}
	if (nok[KGC] && nok[G1]) {
		double tp = m[KGC][OPS] / m[G1][OPS], lat = m[KGC][P999] / m[G1][P999];
		double full = 0;

		for (int r = 0; r < runs; r++)
			full += ok[KGC][r] ? res_get(res[KGC][r], "full") : 0;
		both(md, "\n| ratio (medians) | value | target |\n|---|---:|---:|\n");
		both(md, "| kgc / G1 throughput | %.3fx | >= 1.2x |\n", tp);
		both(md, "| kgc / G1 p99.9 latency | %.3fx | <= 0.5x |\n", lat);
		/* issue 28's targets against JDK 25 */
		if (nok[G1_25])
			both(md, "| kgc / JDK 25 G1 throughput; p99.9 | %.3fx; %.3fx | >= 1.5x; <= 0.2x |\n",
			     m[KGC][OPS] / m[G1_25][OPS], m[KGC][P999] / m[G1_25][P999]);
		if (nok[ZGC_25])
			both(md, "| kgc / JDK 25 ZGC throughput; p99.9 | %.3fx; %.3fx | >= 1.2x; <= 1.0x |\n",
			     m[KGC][OPS] / m[ZGC_25][OPS], m[KGC][P999] / m[ZGC_25][P999]);
		both(md, "\nVerdict: throughput %.3fx -> %s; p99.9 %.3fx -> %s; kgc full GCs in all runs: %.0f.\n", tp,
		     tp >= 1.2 ? "MET" : "NOT MET", lat, lat <= 0.5 ? "MET" : "NOT MET", full);
	}
	build_pass(argv[0], md, runs);
	if (md)
		fclose(md);
	return 0;
}
