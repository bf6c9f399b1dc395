/* SPDX-License-Identifier: MIT */
/*
 * GCBench: the classic binary-trees allocation benchmark of Boehm, Ellis and
 * Kovac, written here from its published description:
 *
 *   - allocate and drop a "stretch" tree of depth 18;
 *   - build a long-lived tree of depth 16 (top-down) and an array of 500000
 *     doubles, both kept live for the whole run;
 *   - for depth d = 4, 6, ..., 16: build and drop NumIters(d) trees of depth
 *     d top-down (Populate), then the same number bottom-up (MakeTree), where
 *     NumIters(d) = 2 * TreeSize(18) / TreeSize(d), TreeSize(d) = 2^(d+1)-1;
 *   - check that the long-lived data survived.
 *
 * A node has two references and two ints. The same program runs on three
 * memory managers, each written the natural way for it:
 *   kgc     kgc_alloc of an instance type with 2 ref + 2 int fields; every
 *           reference held across an allocation lives in a frame slot
 *   boehm   GC_MALLOC (Debian libgc, default settings)
 *   malloc  malloc, with explicit recursive free of dropped trees
 * and, as references, GCBench.java (the same program) on HotSpot's Parallel
 * and G1 collectors with the same 512 MiB maximum heap: time from the JVM
 * (start-up not counted), GCs and pauses from -Xlog:gc.
 *
 * `gcbench` alone is the driver: it runs each variant REPS times in a fresh
 * process and writes the table; `gcbench <variant>` is one run.
 */
#include "common.h"
#include "boehm_pause.h"
#ifdef HAVE_KGC
#include <kgc.h>
#endif

enum { STRETCH_DEPTH = 18, LONG_LIVED_DEPTH = 16, ARRAY_SIZE = 500000,
       MIN_DEPTH = 4, MAX_DEPTH = 16 };

static long tree_size(int d) { return (1L << (d + 1)) - 1; }
static long num_iters(int d) { return 2 * tree_size(STRETCH_DEPTH) / tree_size(d); }

/* ------------------------------------------------------- malloc / Boehm */

struct node {
	struct node *left, *right;
	int i, j;
};

static int use_boehm;

static struct node *node_new(struct node *l, struct node *r)
{
	struct node *n = use_boehm ? GC_MALLOC(sizeof(*n)) : malloc(sizeof(*n));

	if (!n)
		die("out of memory");
	n->left = l;
	n->right = r;
	n->i = n->j = 0;
	return n;
}

static void c_populate(int depth, struct node *n)
{
	if (depth <= 0)
		return;
	depth--;
	n->left = node_new(NULL, NULL);
	n->right = node_new(NULL, NULL);
	c_populate(depth, n->left);
	c_populate(depth, n->right);
}

static struct node *c_make(int depth)
{
	struct node *l, *r;

	if (depth <= 0)
		return node_new(NULL, NULL);
	l = c_make(depth - 1);
	r = c_make(depth - 1);
	return node_new(l, r);
}

/* Dropping a tree: free() for malloc, nothing for the collector. */
static void c_drop(struct node *n)
{
	if (!n || use_boehm)
		return;
	c_drop(n->left);
	c_drop(n->right);
	free(n);
}

static long c_count(const struct node *n)
{
	return n ? 1 + c_count(n->left) + c_count(n->right) : 0;
}

static int run_c(int boehm, uint64_t *depth_ns)
{
	struct node *long_lived, *t;
	double *array;
	long count;
	int di = 0;

	use_boehm = boehm;
	if (boehm) {
		GC_INIT();
		boehm_pause_init();
	}
	t = c_make(STRETCH_DEPTH);	/* stretch */
	c_drop(t);

	long_lived = node_new(NULL, NULL);
	c_populate(LONG_LIVED_DEPTH, long_lived);
	array = boehm ? GC_MALLOC_ATOMIC(ARRAY_SIZE * sizeof(double))
		      : malloc(ARRAY_SIZE * sizeof(double));
	if (!array)
		die("out of memory");
	for (int i = 0; i < ARRAY_SIZE / 2; i++)
		array[i] = 1.0 / (i + 1);

	for (int d = MIN_DEPTH; d <= MAX_DEPTH; d += 2, di++) {
		long n = num_iters(d);
		uint64_t t0 = now_ns();

		for (long i = 0; i < n; i++) {
			t = node_new(NULL, NULL);
			c_populate(d, t);
			c_drop(t);
		}
		for (long i = 0; i < n; i++) {
			t = c_make(d);
			c_drop(t);
		}
		depth_ns[di] = now_ns() - t0;
	}
	count = c_count(long_lived);
	if (count != tree_size(LONG_LIVED_DEPTH) || array[999] != 1.0 / 1000)
		die("long-lived data damaged (count %ld)", count);
	c_drop(long_lived);
	if (!boehm)
		free(array);
	return 0;
}

/* ------------------------------------------------------------------ kgc */

#ifdef HAVE_KGC
enum { F_LEFT = KGC_HEADER_SIZE, F_RIGHT = KGC_HEADER_SIZE + 8,
       F_I = KGC_HEADER_SIZE + 16, F_J = KGC_HEADER_SIZE + 20 };

static kgc_thread *T;
static kgc_type_id NODE;

static kgc_obj k_new(void)
{
	kgc_obj o = kgc_alloc(T, NODE);

	if (!o)
		die("kgc_alloc: %s", kgc_last_error());
	return o;
}

/*
 * scratch points into the frame: two reference slots per recursion level,
 * so every node under construction is a root across each allocation.
 */
static void k_populate(int depth, kgc_obj *node, kgc_obj *scratch)
{
	if (depth <= 0)
		return;
	depth--;
	scratch[0] = k_new();
	kgc_set_ref(T, *node, F_LEFT, scratch[0]);
	scratch[1] = k_new();
	kgc_set_ref(T, *node, F_RIGHT, scratch[1]);
	k_populate(depth, &scratch[0], scratch + 2);
	k_populate(depth, &scratch[1], scratch + 2);
	scratch[0] = scratch[1] = NULL;
}

static void k_make(int depth, kgc_obj *out, kgc_obj *scratch)
{
	kgc_obj n;

	if (depth <= 0) {
		*out = k_new();
		return;
	}
	k_make(depth - 1, &scratch[0], scratch + 2);
	k_make(depth - 1, &scratch[1], scratch + 2);
	n = k_new();
	kgc_set_ref(T, n, F_LEFT, scratch[0]);
	kgc_set_ref(T, n, F_RIGHT, scratch[1]);
	scratch[0] = scratch[1] = NULL;
	*out = n;
}

static long k_count(kgc_obj n)
{
	return n ? 1 + k_count(kgc_get_ref(n, F_LEFT)) + k_count(kgc_get_ref(n, F_RIGHT)) : 0;
}

enum { S_LONG, S_ARRAY, S_TMP, S_SCRATCH, NSLOTS = S_SCRATCH + 2 * (STRETCH_DEPTH + 2) };

static int run_kgc(uint64_t *depth_ns, struct kgc_stats *st, kgc_heap **hout)
{
	static const uint32_t refs[2] = { F_LEFT, F_RIGHT };
	struct kgc_type_desc desc = { .name = "Node", .payload_size = 24, .nrefs = 2,
				      .ref_offsets = refs };
	struct kgc_options opts;
	struct kgc_frame frame;
	kgc_obj slots[NSLOTS] = { 0 };
	kgc_heap *heap;
	double *array;
	long count;
	int di = 0, rc;

	kgc_options_init(&opts);
	if (!getenv("KGC_HEAP_MAX"))
		opts.max_heap = 512ul << 20;
	if ((rc = kgc_heap_create(&opts, &heap)))
		die("kgc_heap_create: %d %s", rc, kgc_last_error());
	if ((rc = kgc_type_register(heap, &desc, &NODE)))
		die("kgc_type_register: %d %s", rc, kgc_last_error());
	if ((rc = kgc_thread_attach(heap, "gcbench", &T)))
		die("kgc_thread_attach: %d %s", rc, kgc_last_error());
	kgc_frame_push(T, &frame, slots, NSLOTS, NULL);

	k_make(STRETCH_DEPTH, &slots[S_TMP], &slots[S_SCRATCH]);	/* stretch */
	slots[S_TMP] = NULL;

	slots[S_LONG] = k_new();
	k_populate(LONG_LIVED_DEPTH, &slots[S_LONG], &slots[S_SCRATCH]);
	slots[S_ARRAY] = kgc_alloc_array(T, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_DOUBLE), ARRAY_SIZE);
	if (!slots[S_ARRAY])
		die("kgc_alloc_array: %s", kgc_last_error());
	array = kgc_array_data(slots[S_ARRAY]);	/* no safepoint until the loop ends */
	for (int i = 0; i < ARRAY_SIZE / 2; i++)
		array[i] = 1.0 / (i + 1);

	for (int d = MIN_DEPTH; d <= MAX_DEPTH; d += 2, di++) {
		long n = num_iters(d);
		uint64_t t0 = now_ns();

		for (long i = 0; i < n; i++) {
			slots[S_TMP] = k_new();
			k_populate(d, &slots[S_TMP], &slots[S_SCRATCH]);
			slots[S_TMP] = NULL;
		}
		for (long i = 0; i < n; i++) {
			k_make(d, &slots[S_TMP], &slots[S_SCRATCH]);
			slots[S_TMP] = NULL;
		}
		depth_ns[di] = now_ns() - t0;
	}
	count = k_count(slots[S_LONG]);
	array = kgc_array_data(slots[S_ARRAY]);
	if (count != tree_size(LONG_LIVED_DEPTH) || array[999] != 1.0 / 1000)
		die("long-lived data damaged (count %ld)", count);
	kgc_frame_pop(T, &frame);
	kgc_stats_get(heap, st, sizeof(*st));
	kgc_thread_detach(T);
	*hout = heap;
	return 0;
}
#endif

/* --------------------------------------------------------------- driver */

#define NDEPTHS ((MAX_DEPTH - MIN_DEPTH) / 2 + 1)

static int worker(const char *variant)
{
	uint64_t depth_ns[NDEPTHS] = { 0 }, t0, t;
	char extra[512] = "";

	int rc;

	if ((rc = hotspot_worker("GCBench", "gcbench", variant, "-Xmx512m")) >= 0)
		return rc;
	t0 = now_ns();
	if (!strcmp(variant, "malloc")) {
		run_c(0, depth_ns);
		t = now_ns() - t0;
	} else if (!strcmp(variant, "boehm")) {
		run_c(1, depth_ns);
		t = now_ns() - t0;
		snprintf(extra, sizeof(extra), "gcs=%lu pause_max_ms=%.3f pause_total_ms=%.3f heap_mb=%.1f",
			 (unsigned long)GC_get_gc_no(), ms(boehm_pause_max), ms(boehm_pause_total),
			 GC_get_heap_size() / 1048576.0);
	} else if (!strcmp(variant, "kgc")) {
#ifdef HAVE_KGC
		struct kgc_stats st;
		kgc_heap *heap;

		run_kgc(depth_ns, &st, &heap);
		t = now_ns() - t0;
		snprintf(extra, sizeof(extra),
			 "gcs=%lu young=%lu full=%lu pause_max_ms=%.3f pause_total_ms=%.3f region_mb=%u backend=%s",
			 (unsigned long)(st.young_gcs + st.full_gcs), (unsigned long)st.young_gcs,
			 (unsigned long)st.full_gcs, ms(st.pause_max_ns), ms(st.pause_total_ns),
			 st.region_size >> 20, kgc_heap_backend(heap));
		kgc_heap_destroy(heap);
#else
		printf("RESULT unavailable=1\n");
		return 0;
#endif
	} else {
		die("unknown variant %s", variant);
	}
	for (int i = 0; i < NDEPTHS; i++)
		fprintf(stderr, "  %s depth %2d: %8.1f ms\n", variant, MIN_DEPTH + 2 * i, ms(depth_ns[i]));
	printf("RESULT time_ms=%.3f rss_kb=%ld %s\n", ms(t), peak_rss_kb(), extra);
	return 0;
}

int main(int argc, char **argv)
{
	/* the fourth: kgc with transparent huge pages (opt-in; README: faster
	 * here, slower in churn), for comparison, not the verdict */
	static const char *variants[] = { "malloc", "boehm", "kgc", "kgc", "parallel", "g1", "g1@25",
					  "zgc@25" };
	static const char *envs[] = { NULL, NULL, NULL, "KGC_THP=1", NULL, NULL, NULL, NULL };
	static const char *labels[] = { "malloc", "boehm", "kgc", "kgc, KGC_THP=1", "HotSpot Parallel",
					"HotSpot G1", "JDK 25 G1", "JDK 25 ZGC" };
	enum { MALLOC, BOEHM, KGC, KGC_THP, PAR, G1, G1_25, ZGC_25, NV };
	char res[NV][1024], buf[64], r1[32], r2[32];
	double med[NV], rss[NV];
	int reps = (int)(5 * bench_scale() + 0.5);
	FILE *md;

	if (argc > 1)
		return worker(argv[1]);
	if (reps < 1)
		reps = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("== GCBench (stretch 18, long-lived 16, depths 4..16, 500000 doubles), median of %d runs\n", reps);
	for (int v = 0; v < NV; v++) {
		double times[16];
		int ok = 0;

		med[v] = rss[v] = -1;
		res[v][0] = 0;
		for (int r = 0; r < reps && r < 16; r++) {
			char *args[] = { argv[0], (char *)variants[v], NULL };
			char out[1024];

			if (run_worker(args, envs[v], out, sizeof(out)) || res_get(out, "unavailable") > 0) {
				snprintf(res[v], sizeof(res[v]), "%s", out);
				break;
			}
			times[ok++] = res_get(out, "time_ms");
			snprintf(res[v], sizeof(res[v]), "%s", out);
			if (res_get(out, "rss_kb") > rss[v])
				rss[v] = res_get(out, "rss_kb");
		}
		if (ok) {
			qsort(times, ok, sizeof(double), cmp_double);
			med[v] = times[ok / 2];
		}
		printf("  %-14s %s\n", labels[v], med[v] >= 0 ? res[v] : "FAILED/unavailable");
	}

	md = md_open("gcbench");
	both(md, "\n## GCBench (issue 3)\n\n");
	both(md, "Binary trees of Boehm/Ellis/Kovac: stretch tree depth 18, long-lived tree depth 16,\n"
		 "trees of depth 4..16 step 2 built top-down and bottom-up, 500000 doubles kept live.\n"
		 "Same program, three memory managers, each variant run %d times in a fresh process; median wall time.\n"
		 "kgc heap: max 512 MiB (other settings: library policy); Boehm: Debian libgc defaults.\n"
		 "The extra kgc row opts into transparent huge pages (KGC_THP=1, off by default: the churn bench\n"
		 "runs slower with them, and a first touch may stall on compaction).\n"
		 "References: `bench/GCBench.java`, the same program, on HotSpot Parallel and G1 (`-Xmx512m`,\n"
		 "collectors' defaults; time from the JVM, start-up not counted, JIT warm-up counted; GCs and\n"
		 "pauses from `-Xlog:gc`; peak RSS is the JVM's).\n\n", reps);
	both(md, "| variant | time (ms, median) | peak RSS (MiB) | GCs | max pause (ms) | total pause (ms) |\n");
	both(md, "|---|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < NV; v++) {
		if (med[v] < 0) {
			both(md, "| %s | not available (%s) | | | | |\n", labels[v],
			     fail_reason(res[v]));
			continue;
		}
		both(md, "| %s | %.1f | %.1f | %s | %s | %s |\n", labels[v], med[v], rss[v] / 1024.0,
		     res_get(res[v], "gcs") >= 0 ? res_str(res[v], "gcs", buf, sizeof(buf)) : "-",
		     res_get(res[v], "pause_max_ms") >= 0 ? res_str(res[v], "pause_max_ms", r1, sizeof(r1)) : "-",
		     res_get(res[v], "pause_total_ms") >= 0 ? res_str(res[v], "pause_total_ms", r2, sizeof(r2)) : "-");
	}
	both(md, "\n| ratio | value | target |\n|---|---:|---:|\n");
	both(md, "| kgc / Boehm (time) | %s | <= 0.5x |\n", ratio_str(r1, sizeof(r1), med[KGC], med[BOEHM]));
	both(md, "| kgc / HotSpot Parallel (time) | %s | <= 1.0x |\n",
	     ratio_str(r1, sizeof(r1), med[KGC], med[PAR]));
	both(md, "| kgc / HotSpot G1 (time) | %s | - |\n", ratio_str(r1, sizeof(r1), med[KGC], med[G1]));
	both(md, "| kgc / JDK 25 G1 (time) | %s | - |\n", ratio_str(r1, sizeof(r1), med[KGC], med[G1_25]));
	both(md, "| kgc / JDK 25 ZGC (time) | %s | - |\n", ratio_str(r1, sizeof(r1), med[KGC], med[ZGC_25]));
	both(md, "| kgc / malloc (time) | %s | - |\n", ratio_str(r1, sizeof(r1), med[KGC], med[MALLOC]));
	both(md, "| Boehm / malloc (time) | %s | - |\n", ratio_str(r1, sizeof(r1), med[BOEHM], med[MALLOC]));
	both(md, "| HotSpot Parallel / Boehm (time; reference) | %s | - |\n",
	     ratio_str(r1, sizeof(r1), med[PAR], med[BOEHM]));
	both(md, "| kgc with KGC_THP=1 / Boehm (time; not the default) | %s | - |\n",
	     ratio_str(r1, sizeof(r1), med[KGC_THP], med[BOEHM]));
	if (med[KGC] >= 0) {
		both(md, "\nkgc run detail: `%s`\n", res[KGC]);
		if (med[BOEHM] > 0)
			both(md, "\nVerdict: kgc/Boehm = %.3fx -> target %s.\n", med[KGC] / med[BOEHM],
			     med[KGC] / med[BOEHM] <= 0.5 ? "MET" : "NOT MET");
		if (med[PAR] > 0)
			both(md, "Verdict: kgc/HotSpot Parallel = %.3fx -> target %s.\n", med[KGC] / med[PAR],
			     med[KGC] / med[PAR] <= 1.0 ? "MET" : "NOT MET");
	}
	fclose(md);
	return 0;
}
