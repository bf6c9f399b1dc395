/* SPDX-License-Identifier: MIT */
/*
 * Churn: 2 threads keep a pointer-rich live set of ~200 MB (per thread a
 * table of linked lists) and allocate ~4 GB in total. Each step builds a new
 * list of LIST_LEN nodes; one step in REPLACE_EVERY installs it in a random
 * table slot (the old list becomes garbage: the live set is replaced
 * gradually), the others drop it at once (short-lived garbage).
 *
 * A node has two references (next, head-of-list) and two longs: 40 bytes in
 * kgc (8-byte header), 32 bytes in Boehm (no header). The live set is the same
 * number of nodes in both; its size below is given for kgc's layout.
 *
 * Reported: wall time, peak RSS (VmHWM), collections, pause max and p99.
 *   kgc:   kgc_stats pause_max_ns (exact) and pause_hist (p99 = upper bound of
 *          its log2 bucket, so within 2x).
 *   Boehm: stop-the-world windows from the GC event callback (exact; see
 *          boehm_pause.h), p99 exact and also bucketed like kgc's.
 *
 *   HotSpot (reference, when a JDK is installed): Churn.java, the same
 *          workload, on G1 with its default pause goal and with a 10 ms goal
 *          (kgc's target); pauses from its -Xlog:gc file (every pause: young,
 *          remark, cleanup, full), peak RSS of the JVM process.
 *
 * `churn` = driver (runs every variant in a fresh process); `churn <variant>`.
 * CHURN_LENGTH=n allocates n times as much with the same live set: a long
 * run, where old-space footprint shows (bench/RESULTS-ab.md); not in make bench.
 */
#define GC_THREADS
#define GC_NO_THREAD_REDIRECTS
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include "common.h"
#include "boehm_pause.h"
#ifdef HAVE_KGC
#include <kgc.h>
#endif

enum { NTHREADS = 2, LIST_LEN = 32, REPLACE_EVERY = 4 };

static size_t slots_per_thread;		/* lists kept live per thread */
static uint64_t steps_per_thread;	/* lists built after the fill */

struct cnode {
	struct cnode *next, *head;
	long a, b;
};

/* ---------------------------------------------------------------- Boehm */

static void *boehm_thread(void *arg)
{
	unsigned long long rng = 0x1234 + (uintptr_t)arg;
	struct GC_stack_base sb;
	struct cnode **table;
	long check = 0;

	GC_get_stack_base(&sb);
	GC_register_my_thread(&sb);
	table = GC_MALLOC(slots_per_thread * sizeof(*table));
	for (uint64_t s = 0; s < slots_per_thread + steps_per_thread; s++) {
		struct cnode *head = NULL, *tail = NULL;

		for (int i = 0; i < LIST_LEN; i++) {
			struct cnode *n = GC_MALLOC(sizeof(*n));

			n->next = head;
			n->a = (long)s;
			n->b = i;
			head = n;
			if (!tail)
				tail = n;
			n->head = tail;
		}
		if (s < slots_per_thread) {
			table[s] = head;
		} else {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			if ((rng >> 33) % REPLACE_EVERY == 0)
				table[(rng >> 20) % slots_per_thread] = head;
		}
	}
	for (size_t i = 0; i < slots_per_thread; i++)
		for (struct cnode *n = table[i]; n; n = n->next)
			check++;
	if (check != (long)(slots_per_thread * LIST_LEN))
		die("boehm: live set damaged");
	GC_unregister_my_thread();
	return NULL;
}

static void run_boehm(char *extra, size_t n)
{
	pthread_t th[NTHREADS];

	GC_INIT();
	boehm_pause_init();
	GC_allow_register_threads();
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, boehm_thread, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	snprintf(extra, n, "gcs=%lu pause_max_ms=%.3f pause_p99_ms=%.3f pause_p99b_ms=%.3f "
		 "pause_total_ms=%.3f heap_mb=%.1f",
		 (unsigned long)GC_get_gc_no(), ms(boehm_pause_max), ms(boehm_pause_pct(99)),
		 ms(hist_pct_upper_ns(boehm_pause_hist, 99)), ms(boehm_pause_total),
		 GC_get_heap_size() / 1048576.0);
}

/* ------------------------------------------------------------------ kgc */

#ifdef HAVE_KGC
enum { F_NEXT = KGC_HEADER_SIZE, F_HEAD = KGC_HEADER_SIZE + 8,
       F_A = KGC_HEADER_SIZE + 16, F_B = KGC_HEADER_SIZE + 24 };
static kgc_heap *heap;
static kgc_type_id NODE;

static void *kgc_thread_main(void *arg)
{
	unsigned long long rng = 0x1234 + (uintptr_t)arg;
	enum { S_TABLE, S_HEAD, S_TAIL, NS };
	kgc_obj slots[NS] = { 0 };
	struct kgc_frame fr;
	kgc_thread *t;
	long check = 0;

	if (kgc_thread_attach(heap, "churn", &t))
		die("attach: %s", kgc_last_error());
	kgc_frame_push(t, &fr, slots, NS, NULL);
	slots[S_TABLE] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, slots_per_thread);
	if (!slots[S_TABLE])
		die("kgc: table: %s", kgc_last_error());
	for (uint64_t s = 0; s < slots_per_thread + steps_per_thread; s++) {
		slots[S_HEAD] = slots[S_TAIL] = NULL;
		for (int i = 0; i < LIST_LEN; i++) {
			kgc_obj n = kgc_alloc(t, NODE);

			if (!n)
				die("kgc: alloc: %s", kgc_last_error());
			kgc_set_ref(t, n, F_NEXT, slots[S_HEAD]);
			KGC_FIELD(n, F_A, long) = (long)s;
			KGC_FIELD(n, F_B, long) = i;
			if (!slots[S_TAIL])
				slots[S_TAIL] = n;
			kgc_set_ref(t, n, F_HEAD, slots[S_TAIL]);
			slots[S_HEAD] = n;
		}
		if (s < slots_per_thread) {
			kgc_array_set_ref(t, slots[S_TABLE], s, slots[S_HEAD]);
		} else {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			if ((rng >> 33) % REPLACE_EVERY == 0)
				kgc_array_set_ref(t, slots[S_TABLE], (rng >> 20) % slots_per_thread,
						  slots[S_HEAD]);
		}
	}
	for (size_t i = 0; i < slots_per_thread; i++)
		for (kgc_obj n = kgc_array_get_ref(slots[S_TABLE], i); n; n = kgc_get_ref(n, F_NEXT))
			check++;
	if (check != (long)(slots_per_thread * LIST_LEN))
		die("kgc: live set damaged (%ld nodes)", check);
	kgc_frame_pop(t, &fr);
	kgc_thread_detach(t);
	return NULL;
}

static void run_kgc(char *extra, size_t n)
{
	static const uint32_t refs[2] = { F_NEXT, F_HEAD };
	struct kgc_type_desc desc = { .name = "ChurnNode", .payload_size = 32, .nrefs = 2,
				      .ref_offsets = refs };
	struct kgc_options opts;
	struct kgc_stats st;
	pthread_t th[NTHREADS];

	setenv("KGC_LOG", "gc,gc+heap", 0);	/* gc+heap: each young pause's CPU time too */
	log_to_file("churn_kgc");	/* KGC_LOG=gc -> file: every pause, exact */
	kgc_options_init(&opts);
	if (!getenv("KGC_HEAP_MAX"))
		opts.max_heap = 1024ul << 20;
	if (kgc_heap_create(&opts, &heap))
		die("kgc_heap_create: %s", kgc_last_error());
	if (kgc_type_register(heap, &desc, &NODE))
		die("kgc_type_register: %s", kgc_last_error());
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, kgc_thread_main, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	kgc_stats_get(heap, &st, sizeof(st));
	kgc_heap_destroy(heap);
	{
		size_t np = parse_pauses(), noff = 0;
		uint64_t ymax = 0, oncpu_max = 0;

		for (size_t i = 0; i < np; i++) {
			if (pause_young[i] && pause_ns[i] > ymax)
				ymax = pause_ns[i];
			if (!pause_cpu_ns[i])
				continue;
			if (pause_off_cpu(i))
				noff++;
			else if (pause_ns[i] > oncpu_max)
				oncpu_max = pause_ns[i];
		}
		qsort(pause_ns, np, sizeof(uint64_t), cmp_u64);
		snprintf(extra, n, "gcs=%lu young=%lu full=%lu pause_max_ms=%.3f pause_p99_ms=%.3f "
			 "pause_p99b_ms=%.3f young_max_ms=%.3f pause_total_ms=%.3f heap_mb=%.1f region_mb=%u "
			 "evac_fail_alloc=%lu logged=%zu offcpu_pauses=%zu oncpu_max_ms=%.3f degenerated=%lu "
			 "paced_ms=%.1f cycles=%lu assist_ms=%.1f assist_mb=%.0f",
			 (unsigned long)(st.young_gcs + st.full_gcs), (unsigned long)st.young_gcs,
			 (unsigned long)st.full_gcs, ms(st.pause_max_ns), ms(pct_sorted(pause_ns, np, 99)),
			 ms(hist_pct_upper_ns(st.pause_hist, 99)), ms(ymax), ms(st.pause_total_ns),
			 st.heap_committed / 1048576.0, st.region_size >> 20,
			 (unsigned long)st.evac_fail_alloc, np, noff, ms(oncpu_max),
			 (unsigned long)st.degenerated_cycles, ms(st.pacing_stall_ns),
			 (unsigned long)st.concurrent_cycles, ms(st.mark_assist_ns), st.mark_assist_bytes / 1048576.0);
	}
}
#endif

/*
 * HotSpot reference: run Churn.class (built next to this binary) on G1 and
 * report like the other variants. Time is the JVM's own measurement from
 * starting the threads to joining them (no JVM start-up).
 */
static int run_hotspot(const char *variant, const char *goal_ms, const char *tag)
{
	char dir[PATH_MAX], cls[PATH_MAX + 16], xlog[4200], goal[64], res[1024], *slash;
	const char *v = jdk_select(variant), *gc = hotspot_gc_flag(v);
	char *args[] = { "java", "-Xmx1g", (char *)gc, goal, xlog, "-cp", dir, "Churn", NULL };
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	size_t np;
	struct rusage ru;
	int rc;
	uint64_t steal0 = host_steal_ns();

	if (n <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	dir[n] = 0;
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
	snprintf(cls, sizeof(cls), "%s/Churn.class", dir);
	if (strcmp(java_bin, "java") && access(java_bin, X_OK)) {
		printf("RESULT nojdk25=1\n");
		return 0;
	}
	if (access(cls, R_OK)) {
		printf("RESULT nojava=1\n");
		return 0;
	}
	snprintf(logpath, sizeof(logpath), "%s/churn_%s.log", getenv("BENCH_OUT") ? getenv("BENCH_OUT") : "out",
		 tag);
	/* no rotation; ZGC logs its pauses under gc+phases */
	snprintf(xlog, sizeof(xlog), "-Xlog:gc%s:file=%s::filecount=0", strstr(gc, "ZGC") ? ",gc+phases" : "",
		 logpath);
	snprintf(goal, sizeof(goal), "-XX:MaxGCPauseMillis=%s", goal_ms ? goal_ms : "200");
	rc = run_prog(java_bin, args, NULL, res, sizeof(res));
	if (rc == -3) {
		printf("RESULT nojava=1\n");
		return 0;
	}
	if (rc || res_get(res, "time_ms") < 0)
		die("java Churn failed (%d)", rc);
	getrusage(RUSAGE_CHILDREN, &ru);
	np = parse_pauses();
	{
		uint64_t total = 0, ymax = 0;
		unsigned long young = 0;

		for (size_t i = 0; i < np; i++) {
			total += pause_ns[i];
			young += (unsigned long)pause_young[i];
			if (pause_young[i] && pause_ns[i] > ymax)
				ymax = pause_ns[i];
		}
		qsort(pause_ns, np, sizeof(uint64_t), cmp_u64);
		printf("RESULT time_ms=%.1f rss_kb=%ld steal_ms=%.0f gcs=%zu young=%lu full=%lu pause_max_ms=%.3f "
		       "pause_p99_ms=%.3f young_max_ms=%.3f pause_total_ms=%.3f goal_ms=%s\n",
		       res_get(res, "time_ms"), ru.ru_maxrss, ms(host_steal_ns() - steal0), np, young, (unsigned long)pause_full_n, ms(np ? pause_ns[np - 1] : 0),
		       ms(pct_sorted(pause_ns, np, 99)), ms(ymax), ms(total), goal_ms ? goal_ms : "200");
	}
	return 0;
}

static void setup_sizes(void)
{
	double scale = bench_scale();
	uint64_t live_bytes = (uint64_t)(100e6 * scale);	/* per thread (kgc layout) */
	/* CHURN_LENGTH=n: n times the allocation, the same live set (a long run) */
	const char *len = getenv("CHURN_LENGTH");
	double length = len && atof(len) > 0 ? atof(len) : 1.0;
	uint64_t total_bytes = (uint64_t)(2e9 * scale * length);	/* per thread */
	uint64_t list_bytes = LIST_LEN * 40;

	slots_per_thread = live_bytes / list_bytes;
	steps_per_thread = (total_bytes - live_bytes) / list_bytes;
}

static int worker(const char *v)
{
	char extra[640] = "";
	uint64_t t0, steal0 = host_steal_ns();

	setup_sizes();
	if (!strcmp(v, "g1-10ms"))
		return run_hotspot("g1", "10", v);
	if (strchr(v, '@') ? hotspot_gc_flag(jdk_select(v)) : hotspot_gc_flag(v))
		return run_hotspot(v, NULL, strchr(v, '@') ? (strcmp(v, "zgc@25") ? "g125" : "zgc25") : v);
	t0 = now_ns();
	if (!strcmp(v, "boehm")) {
		run_boehm(extra, sizeof(extra));
	} else if (!strcmp(v, "kgc")) {
#ifdef HAVE_KGC
		run_kgc(extra, sizeof(extra));
#else
		printf("RESULT unavailable=1\n");
		return 0;
#endif
	} else {
		die("unknown variant %s", v);
	}
	printf("RESULT time_ms=%.1f rss_kb=%ld steal_ms=%.0f %s\n", ms(now_ns() - t0), peak_rss_kb(),
	       ms(host_steal_ns() - steal0), extra);
	return 0;
}

int main(int argc, char **argv)
{
	enum { BOEHM, KGC, G1, G1_10, G1_25, ZGC_25, NV };
	static const char *variants[NV] = { "boehm", "kgc", "g1", "g1-10ms", "g1@25", "zgc@25" };
	static const char *label[NV] = { "boehm", "kgc", "HotSpot G1 (default goal, 200 ms)",
					  "HotSpot G1 (MaxGCPauseMillis=10)", "JDK 25 G1 (default goal)",
					  "JDK 25 ZGC" };
	char res[NV][1024], r[64], a[32], b[32];
	int ok[NV];
	FILE *md;

	if (argc > 1)
		return worker(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup_sizes();
	printf("== Churn: %d threads, live %.0f MB, allocated %.2f GB\n", NTHREADS,
	       (double)NTHREADS * slots_per_thread * LIST_LEN * 40 / 1e6,
	       (double)NTHREADS * (slots_per_thread + steps_per_thread) * LIST_LEN * 40 / 1e9);
	for (int v = 0; v < NV; v++) {
		char *args[] = { argv[0], (char *)variants[v], NULL };

		ok[v] = !run_worker(args, NULL, res[v], sizeof(res[v])) &&
			res_get(res[v], "unavailable") < 0 && res_get(res[v], "nojava") < 0 &&
			res_get(res[v], "nojdk25") < 0;
		printf("  %-8s %s\n", variants[v], ok[v] ? res[v] : "FAILED/unavailable");
	}

	md = md_open("churn");
	both(md, "\n## Churn (issue 3)\n\n");
	both(md, "%d threads; per thread a reference table of %zu lists x %d nodes (2 refs + 2 longs per node);\n"
		 "live set %.0f MB in kgc's layout (%.1f M nodes), %.2f GB allocated in total. Each step builds a list;\n"
		 "1 in %d replaces a random table entry (gradual replacement of the live set), the rest die young.\n"
		 "kgc heap: max 1 GiB, other settings library policy. Boehm: Debian libgc defaults, threads registered.\n"
		 "Pauses (exact, per collection): kgc from its own gc log (`KGC_LOG=gc`, every young and full pause);\n"
		 "Boehm: stop-the-world windows, GC_EVENT_PRE_STOP_WORLD..POST_START_WORLD (collection event callback).\n"
		 "Reference: the same workload in Java (`bench/Churn.java`) on HotSpot's G1, the collector kgc is modelled on\n"
		 "(`java -Xmx1g -XX:+UseG1GC`, default and 10 ms pause goals; 2 parallel GC threads on this machine):\n"
		 "its time from the JVM (threads started to joined), pauses from `-Xlog:gc` (young, remark, cleanup, full).\n\n",
	     NTHREADS, slots_per_thread, LIST_LEN,
	     (double)NTHREADS * slots_per_thread * LIST_LEN * 40 / 1e6,
	     NTHREADS * slots_per_thread * LIST_LEN / 1e6,
	     (double)NTHREADS * (slots_per_thread + steps_per_thread) * LIST_LEN * 40 / 1e9,
	     REPLACE_EVERY);
	both(md, "| variant | time (s) | peak RSS (MiB) | GCs | max pause (ms) | p99 pause (ms) | total pause (ms) |\n");
	both(md, "|---|---:|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < NV; v++) {
		if (!ok[v]) {
			both(md, "| %s | not available (%s) | | | | | |\n", label[v],
			     fail_reason(res[v]));
			continue;
		}
		snprintf(r, sizeof(r), "%.2f", res_get(res[v], "pause_p99_ms"));
		if (res_get(res[v], "full") > 0)
			snprintf(a, sizeof(a), "%s (%.0f full)", res_str(res[v], "gcs", b, sizeof(b)),
				 res_get(res[v], "full"));
		else
			res_str(res[v], "gcs", a, sizeof(a));
		both(md, "| %s | %.2f | %.0f | %s | %.2f | %s | %.1f |\n", label[v],
		     res_get(res[v], "time_ms") / 1000, res_get(res[v], "rss_kb") / 1024,
		     a, res_get(res[v], "pause_max_ms"), r,
		     res_get(res[v], "pause_total_ms"));
	}
	if (ok[BOEHM] && ok[KGC]) {
		double tr = res_get(res[KGC], "time_ms") / res_get(res[BOEHM], "time_ms");
		double mp = res_get(res[KGC], "pause_max_ms");

		both(md, "\n| ratio | value | target |\n|---|---:|---:|\n");
		both(md, "| kgc / Boehm (time) | %s | <= 0.2x |\n",
		     ratio_str(a, sizeof(a), res_get(res[KGC], "time_ms"), res_get(res[BOEHM], "time_ms")));
		both(md, "| kgc / Boehm (peak RSS) | %s | - |\n",
		     ratio_str(a, sizeof(a), res_get(res[KGC], "rss_kb"), res_get(res[BOEHM], "rss_kb")));
		both(md, "| kgc / Boehm (max pause) | %s | - |\n",
		     ratio_str(b, sizeof(b), mp, res_get(res[BOEHM], "pause_max_ms")));
		both(md, "| kgc / Boehm (p99 pause) | %s | - |\n",
		     ratio_str(b, sizeof(b), res_get(res[KGC], "pause_p99_ms"), res_get(res[BOEHM], "pause_p99_ms")));
		for (int v = G1; v < NV; v++) {
			if (!ok[v])
				continue;
			both(md, "| %s / Boehm (time) | %s | reference |\n", label[v],
			     ratio_str(a, sizeof(a), res_get(res[v], "time_ms"), res_get(res[BOEHM], "time_ms")));
			both(md, "| kgc / %s (time) | %s | - |\n", label[v],
			     ratio_str(a, sizeof(a), res_get(res[KGC], "time_ms"), res_get(res[v], "time_ms")));
			both(md, "| kgc / %s (max pause) | %s | - |\n", label[v],
			     ratio_str(b, sizeof(b), mp, res_get(res[v], "pause_max_ms")));
		}
		both(md, "\nkgc: longest young pause %.2f ms; %s young + %.0f full collections.\n",
		     res_get(res[KGC], "young_max_ms"), res_str(res[KGC], "young", a, sizeof(a)), res_get(res[KGC], "full"));
		both(md, "kgc pauses with > 2 ms of wall time off the requesting thread's CPU (waiting for the other\n"
			 "GC worker, or preempted): %.0f; the longest pause without: %.2f ms. Host steal time during the\n"
			 "kgc run (/proc/stat): %.0f ms. Concurrent cycles: %.0f, finished in a pause (degenerated): %.0f;\n"
			 "allocating threads marked for them (assists) %.1f ms (%.0f MB), slept for them (paced) %.1f ms.\n",
		     res_get(res[KGC], "offcpu_pauses"), res_get(res[KGC], "oncpu_max_ms"),
		     res_get(res[KGC], "steal_ms"), res_get(res[KGC], "cycles"), res_get(res[KGC], "degenerated"),
		     res_get(res[KGC], "assist_ms"), res_get(res[KGC], "assist_mb"), res_get(res[KGC], "paced_ms"));
		both(md, "\nkgc detail: `%s`\n", res[KGC]);
		both(md, "\nVerdict: time ratio %.3fx -> %s; kgc max pause %.2f ms -> %s (target <= 10 ms).\n",
		     tr, tr <= 0.2 ? "MET" : "NOT MET", mp, mp <= 10 ? "MET" : "NOT MET");
		for (int v = G1; v < NV; v++) {
			double g = ok[v] ? res_get(res[v], "time_ms") / res_get(res[BOEHM], "time_ms") : -1;

			if (g > 0)
				both(md, "Reference: %s took %.3fx Boehm's time (%s the 0.2x target), max pause %.2f ms%s.\n",
				     label[v], g, g <= 0.2 ? "within" : "also above", res_get(res[v], "pause_max_ms"),
				     res_get(res[v], "full") > 0 ? " (a full GC)" : "");
		}
	}
	fclose(md);
	return 0;
}
