/* SPDX-License-Identifier: MIT */
/*
 * Binary trees (the Computer Language Benchmarks Game program, single
 * threaded): kgc against HotSpot 17 G1 and Parallel, JDK 25 G1 and ZGC
 * (where the machine has JDK 25) running BinaryTrees.java, the same
 * algorithm, in the same run, at depths 17 and 21 (BENCH_BT_DEPTHS; the
 * worker reads BENCH_DEPTH). At depth 17: a stretch
 * tree of depth 18, a long-lived tree of depth 17, then 2^(21 - d) trees of
 * each depth d = 4, 6, .. 16, built bottom-up and checked: ~0.8 GB of
 * 24-byte nodes in kgc. Every variant: a 1 GiB heap, other settings its
 * collector's defaults; median of 3 runs, each in a fresh process. Java's
 * time is measured inside the JVM (start-up not counted, JIT warm-up is).
 *
 * `bintrees` = driver; `bintrees <variant>` = one run.
 */
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include "common.h"
#ifdef HAVE_KGC
#include <kgc.h>
#endif

static int depth(void)
{
	const char *s = getenv("BENCH_DEPTH");

	return s ? atoi(s) : 17;
}

#ifdef HAVE_KGC
enum { LEFT = 8, RIGHT = 16 };
static kgc_type_id node_type;

static kgc_obj make(kgc_thread *t, int d)
{
	KGC_ROOTS(t, r, 2);
	kgc_obj n;

	if (d > 0) {
		r[0] = make(t, d - 1);
		r[1] = make(t, d - 1);
	}
	n = kgc_alloc(t, node_type);
	if (!n)
		die("kgc_alloc: %s", kgc_last_error());
	if (d > 0) {
		kgc_set_ref(t, n, LEFT, r[0]);
		kgc_set_ref(t, n, RIGHT, r[1]);
	}
	return n;
}

static long check(kgc_obj n)
{
	kgc_obj l = kgc_get_ref(n, LEFT);

	return l ? 1 + check(l) + check(kgc_get_ref(n, RIGHT)) : 1;
}

static void run_kgc(int max, char *extra, size_t len)
{
	static const uint32_t offs[2] = { LEFT, RIGHT };
	struct kgc_type_desc d = { .name = "Node", .payload_size = 16, .nrefs = 2, .ref_offsets = offs };
	struct kgc_options o;
	struct kgc_stats st;
	kgc_heap *h;
	kgc_thread *t;
	long sum = 0;

	if (kgc_options_init(&o) || (o.max_heap = (size_t)1 << 30, kgc_heap_create(&o, &h)) ||
	    kgc_type_register(h, &d, &node_type) || kgc_thread_attach(h, "main", &t))
		die("kgc setup: %s", kgc_last_error());
	{
		KGC_ROOTS(t, r, 1);

		sum += check(make(t, max + 1));
		r[0] = make(t, max);
		for (int dd = 4; dd <= max; dd += 2)
			for (int i = 0; i < 1 << (max - dd + 4); i++)
				sum += check(make(t, dd));
		sum += check(r[0]);
	}
	kgc_stats_get(h, &st, sizeof(st));
	snprintf(extra, len, "check=%ld gcs=%llu full=%llu pause_max_ms=%.3f pause_total_ms=%.1f "
		 "promoted_mb=%.0f", sum, (unsigned long long)(st.young_gcs + st.full_gcs),
		 (unsigned long long)st.full_gcs, ms(st.pause_max_ns), ms(st.pause_total_ns),
		 st.bytes_promoted / 1048576.0);
	kgc_thread_detach(t);
	kgc_heap_destroy(h);
}
#endif

static int worker(const char *v)
{
	char extra[512] = "", log[128];
	const char *gc;
	uint64_t t0;

	v = jdk_select(v);
	snprintf(log, sizeof(log), "bintrees_%s%s_d%d", v, java_bin[0] == '/' ? "25" : "", depth());
	if ((gc = hotspot_gc_flag(v)))
		return run_java_logged("BinaryTrees", log, "-Xmx1g", gc);
#ifdef HAVE_KGC
	uint64_t max, p99, total;

	log_to_file(log);	/* every pause, for the p99 */
	t0 = now_ns();
	run_kgc(depth(), extra, sizeof(extra));
	t0 = now_ns() - t0;
	pause_summary(parse_pauses(), &max, &p99, &total);
	printf("RESULT time_ms=%.1f rss_kb=%ld %s pause_p99_ms=%.3f\n", ms(t0), peak_rss_kb(), extra, ms(p99));
#else
	(void)t0;
	printf("RESULT unavailable=1\n");
#endif
	return 0;
}

enum { KGC, G1, PAR, G1_25, ZGC_25, NV, REPS = 3 };
static const char *variants[NV] = { "kgc", "g1", "parallel", "g1@25", "zgc@25" };
static const char *label[NV] = { "kgc", "HotSpot 17 G1", "HotSpot 17 Parallel", "JDK 25 G1", "JDK 25 ZGC" };

/* One depth: every variant, its table and ratios into md. */
static void run_depth(FILE *md, const char *argv0, int d)
{
	char res[NV][1024], b[32], e[32];
	double med[NV], goal = 6;

	setenv("BENCH_DEPTH", (snprintf(b, sizeof(b), "%d", d), b), 1);
	printf("== binary trees, depth %d, median of %d runs\n", d, REPS);
	for (int v = 0; v < NV; v++) {
		med[v] = run_median(argv0, variants[v], REPS, res[v], sizeof(res[v]));
		printf("  %-20s %s\n", label[v], res[v]);
	}
	both(md, "\n### Depth %d (stretch tree %d, long-lived tree %d, 2^(%d-d) trees of each depth d = 4..%d step 2)\n\n",
	     d, d + 1, d, d + 4, d);
	both(md, "| variant | time (ms, median) | peak RSS (MiB) | max pause (ms) | p99 pause (ms) | detail (last run) |\n"
		 "|---|---:|---:|---:|---:|---|\n");
	for (int v = 0; v < NV; v++) {
		if (med[v] < 0)
			both(md, "| %s | not available (%s) | | | | |\n", label[v], fail_reason(res[v]));
		else
			both(md, "| %s | %.1f | %.0f | %.2f | %.2f | `%s` |\n", label[v], med[v],
			     res_get(res[v], "rss_kb") / 1024, res_get(res[v], "pause_max_ms"),
			     res_get(res[v], "pause_p99_ms"), res[v]);
	}
	if (med[KGC] <= 0)
		return;
	both(md, "\n| ratio | time | max pause | target |\n|---|---:|---:|---|\n");
	for (int v = G1; v < NV; v++)
		if (med[v] > 0)
			both(md, "| kgc / %s | %s | %s | %s |\n", label[v], ratio_str(b, sizeof(b), med[KGC], med[v]),
			     ratio_str(e, sizeof(e), res_get(res[KGC], "pause_max_ms"), res_get(res[v], "pause_max_ms")),
			     v == G1 ? "time <= 1.0x (issue 15)" : v == G1_25 ? "time <= 0.9x (issue 28)" : "-");
	both(md, "\nkgc pauses (last run) against the %.0f ms goal: max %.2f ms (target <= %.0f ms: %s), p99 %.2f ms "
		 "(target <= %.0f ms: %s).\n", goal, res_get(res[KGC], "pause_max_ms"), 2 * goal,
	     res_get(res[KGC], "pause_max_ms") <= 2 * goal ? "MET" : "NOT MET", res_get(res[KGC], "pause_p99_ms"),
	     goal, res_get(res[KGC], "pause_p99_ms") <= goal ? "MET" : "NOT MET");
}

int main(int argc, char **argv)
{
	const char *ds = getenv("BENCH_BT_DEPTHS");
	char depths[64];
	FILE *md;

	if (argc > 1)
		return worker(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the Benchmarks Game's depth 21 next to 17; a scaled-down pass (the
	 * CPU hog's) runs 17 alone */
	snprintf(depths, sizeof(depths), "%s", ds ? ds : bench_scale() < 1 ? "17" : "17 21");
	md = md_open("bintrees");
	both(md, "\n## Binary trees (issues 15, 28)\n\n");
	both(md, "The Benchmarks Game program, single threaded; `bench/BinaryTrees.java` is the same for HotSpot,\n"
		 "on JDK 17 (G1, Parallel) and JDK 25 (G1, generational ZGC). 1 GiB heap each, collectors' defaults;\n"
		 "median time of %d runs, each in a fresh process; pauses from each collector's own log\n"
		 "(kgc `KGC_LOG=gc`, HotSpot `-Xlog:gc`, ZGC `-Xlog:gc+phases`: its three pauses per cycle).\n"
		 "Depths: `BENCH_BT_DEPTHS` (\"%s\").\n", REPS, depths);
	for (char *tok, *save, *p = depths; (tok = strtok_r(p, " ", &save)); p = NULL)
		run_depth(md, argv[0], atoi(tok));
	fclose(md);
	return 0;
}
