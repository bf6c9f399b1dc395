/* SPDX-License-Identifier: MIT */
/*
 * Binary trees (the Computer Language Benchmarks Game program, single
 * threaded): kgc against HotSpot G1 and Parallel running BinaryTrees.java,
 * the same algorithm, in the same run. Depth 17 (BENCH_DEPTH): a stretch
 * tree of depth 18, a long-lived tree of depth 17, then 2^(21 - d) trees of
 * each depth d = 4, 6, .. 16, built bottom-up and checked: ~0.8 GB of
 * 24-byte nodes in kgc. Every variant: a 1 GiB heap, other settings its
 * collector's defaults; median of 3 runs, each in a fresh process. Java's
 * time is measured inside the JVM (start-up not counted, JIT warm-up is).
 *
 * `bintrees` = driver; `bintrees <variant>` = one run.
 */
#include <limits.h>
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

/* BinaryTrees.class next to this binary, on HotSpot with collector flag gc. */
static int run_java(const char *gc)
{
	char dir[PATH_MAX], res[1024];
	char *args[] = { "java", "-Xmx1g", (char *)gc, "-cp", dir, "BinaryTrees", NULL };
	struct rusage ru;

	exe_dir(dir, sizeof(dir));
	if (run_java_class(dir, "BinaryTrees", args, res, sizeof(res)))
		return 0;
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("RESULT %s rss_kb=%ld\n", res, ru.ru_maxrss);
	return 0;
}

static int worker(const char *v)
{
	char extra[512] = "";
	uint64_t t0;

	if (!strcmp(v, "g1"))
		return run_java("-XX:+UseG1GC");
	if (!strcmp(v, "parallel"))
		return run_java("-XX:+UseParallelGC");
#ifdef HAVE_KGC
	t0 = now_ns();
	run_kgc(depth(), extra, sizeof(extra));
	printf("RESULT time_ms=%.1f rss_kb=%ld %s\n", ms(now_ns() - t0), peak_rss_kb(), extra);
#else
	(void)t0;
	printf("RESULT unavailable=1\n");
#endif
	return 0;
}

int main(int argc, char **argv)
{
	enum { KGC, G1, PAR, NV, REPS = 3 };
	static const char *variants[NV] = { "kgc", "g1", "parallel" };
	static const char *label[NV] = { "kgc", "HotSpot G1", "HotSpot Parallel" };
	char res[NV][1024];
	double med[NV];
	FILE *md;

	if (argc > 1)
		return worker(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("== binary trees, depth %d, median of %d runs\n", depth(), REPS);
	for (int v = 0; v < NV; v++) {
		med[v] = run_median(argv[0], variants[v], REPS, res[v], sizeof(res[v]));
		printf("  %-18s %s\n", label[v], res[v]);
	}
	md = md_open("bintrees");
	both(md, "\n## Binary trees (issue 15)\n\n");
	both(md, "The Benchmarks Game program, single threaded, depth %d (stretch tree %d, long-lived tree %d,\n"
		 "2^(%d-d) trees of each depth d = 4..%d step 2); `bench/BinaryTrees.java` is the same for HotSpot.\n"
		 "1 GiB heap each, collectors' defaults; median of %d runs, each in a fresh process.\n\n",
	     depth(), depth() + 1, depth(), depth() + 4, depth(), REPS);
	both(md, "| variant | time (ms, median) | peak RSS (MiB) | detail (last run) |\n|---|---:|---:|---|\n");
	for (int v = 0; v < NV; v++) {
		if (med[v] < 0)
			both(md, "| %s | not available | | `%s` |\n", label[v], res[v]);
		else
			both(md, "| %s | %.1f | %.0f | `%s` |\n", label[v], med[v], res_get(res[v], "rss_kb") / 1024,
			     res[v]);
	}
	if (med[KGC] > 0 && med[G1] > 0) {
		both(md, "\n| ratio | value | target |\n|---|---:|---:|\n");
		both(md, "| kgc / HotSpot G1 (time) | %.3fx | <= 1.0x |\n", med[KGC] / med[G1]);
		if (med[PAR] > 0)
			both(md, "| kgc / HotSpot Parallel (time) | %.3fx | - |\n", med[KGC] / med[PAR]);
		both(md, "\nVerdict: kgc/G1 = %.3fx -> target %s.\n", med[KGC] / med[G1],
		     med[KGC] / med[G1] <= 1.0 ? "MET" : "NOT MET");
	}
	if (md)
		fclose(md);
	return 0;
}
