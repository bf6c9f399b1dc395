/* SPDX-License-Identifier: MIT */
/*
 * GCOld (issue 15): an old-generation mutation benchmark after Hans Boehm
 * and David Detlefs' GCOld.java. Each of 2 mutator threads keeps a live set
 * of perfect binary trees (height 14: 32767 nodes of 32 bytes, 1 MiB per
 * tree; 64 MiB per thread, 128 MiB in all) in an array, then runs steps.
 * One step of one thread:
 *   - work: 1 MiB of short-lived garbage, int[100] arrays (416 bytes each,
 *     kgc and HotSpot alike) passed through a 64-slot ring;
 *   - promotion: 1/PROMOTE of that (PROMOTE = 10: ~100 KiB) as new trees
 *     that replace subtrees of the same height in the old trees, taken in
 *     turn (GCOld's oldGenAlloc/replaceTree): old space turns over slowly
 *     and old nodes point to young ones;
 *   - pointer mutation: MUT (1000) swaps of two subtrees at the same random
 *     depth of two random old trees (GCOld's oldGenSwapSubtree).
 * Every tree stays perfect, so the live set stays at 128 MiB of nodes.
 * bench/GCOld.java does the same on HotSpot, with the same PRNG (a 64-bit
 * LCG per thread), so both do the same work and compute the same check
 * value (a hash of every tree's node ids plus a sum over the garbage).
 * kgc against HotSpot 17 G1 and Parallel, JDK 25 G1 and ZGC, at 128 MiB
 * live in 1 GiB, 1 GiB in 3 GiB and 3 GiB in 8 GiB (GCOLD_SIZES); median of 3
 * runs (1 for the large sizes), each in a fresh process. Times are measured
 * in-process (JVM start-up not counted, JIT warm-up is), building the live
 * set included. BENCH_SCALE scales the steps (1000 per thread at 1).
 *
 * `gcold` = driver; `gcold <variant>` = one run.
 */
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include "common.h"
#ifdef HAVE_KGC
#include <kgc.h>
#endif

enum {
	NTHREADS = 2,
	HEIGHT = 14,		/* tree height: 2^15 - 1 nodes */
	NODE_BYTES = 32,	/* kgc: 8 header + 2 refs + 2 ints; HotSpot: 12 + 4 + 4 + 4 + 4 */
	STEP_BYTES = 1 << 20,	/* short-lived garbage per step and thread */
	DEAD_INTS = 100,	/* int[100]: 416 bytes */
	ARR_BYTES = 16 + 4 * DEAD_INTS,
	RING = 64,
	PROMOTE = 10,		/* 1 byte of new old data per PROMOTE bytes of garbage */
	MUT = 1000,		/* subtree swaps per step */
	STEPS = 1000,		/* per thread at BENCH_SCALE=1 */
	INSIGNIFICANT = 999,	/* GCOld's: a promotion remainder below this is dropped */
};

/* Live set and heap in MiB: GCOLD_LIVE_MB, GCOLD_HEAP_MB (the driver sets
 * them for each size; GCOld.java reads the first, -Xmx is the second). */
static long env_mb(const char *name, long dflt)
{
	const char *s = getenv(name);

	return s && atol(s) > 0 ? atol(s) : dflt;
}

static long live_mb(void)
{
	return env_mb("GCOLD_LIVE_MB", 128);
}

static long heap_mb(void)
{
	return env_mb("GCOLD_HEAP_MB", 1024);
}

static long steps(void)
{
	long s = (long)(STEPS * bench_scale() + 0.5);

	return s < 1 ? 1 : s;
}

static long tree_bytes(int h)
{
	return ((2L << h) - 1) * NODE_BYTES;
}

static int bytes_to_height(long b)
{
	int h = 0;

	while (tree_bytes(h + 1) <= b)
		h++;
	return h;
}

static int ntrees(void)
{
	return (int)(live_mb() * 1048576 / NTHREADS / tree_bytes(HEIGHT));
}

/* The PRNG both languages use: 31 bits from a 64-bit LCG. */
static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

#ifdef HAVE_KGC
enum { LEFT = 8, RIGHT = 16, HT = 24, ID = 28 };
static kgc_heap *heap;
static kgc_type_id node_type;

#define HEIGHT_OF(n) KGC_FIELD((n), HT, int32_t)

struct ctx {
	kgc_thread *t;
	kgc_obj *r;		/* roots: [0] trees, [1] ring, [2] a new tree */
	uint64_t rng;
	int32_t next_id;
	int where, ntrees;
	long nodes, actually_mut;
	uint64_t young_sum;
};

/* Bottom-up: left subtree, right subtree, then the node (ids in that order). */
static kgc_obj make(struct ctx *c, int h)
{
	KGC_ROOTS(c->t, r, 2);
	kgc_obj n;

	if (h > 0) {
		r[0] = make(c, h - 1);
		r[1] = make(c, h - 1);
	}
	n = kgc_alloc(c->t, node_type);
	if (!n)
		die("kgc_alloc: %s", kgc_last_error());
	if (h > 0) {
		kgc_set_ref(c->t, n, LEFT, r[0]);
		kgc_set_ref(c->t, n, RIGHT, r[1]);
	}
	HEIGHT_OF(n) = h;
	KGC_FIELD(n, ID, int32_t) = c->next_id++;
	return n;
}

static void young_alloc(struct ctx *c, long bytes)
{
	for (long done = 0; done < bytes; done += ARR_BYTES) {
		uint64_t k = c->young_sum;	/* (any value both sides compute alike) */
		kgc_obj a = kgc_alloc_array(c->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), DEAD_INTS), old;
		uint32_t slot;

		if (!a)
			die("kgc_alloc_array: %s", kgc_last_error());
		slot = (uint32_t)(k & (RING - 1));
		((int32_t *)kgc_array_data(a))[0] = (int32_t)(done & 0x7fffffff);
		old = kgc_array_get_ref(c->r[1], slot);
		c->young_sum += 1 + (old ? (uint64_t)((int32_t *)kgc_array_data(old))[0] : 0);
		kgc_array_set_ref(c->t, c->r[1], slot, a);
	}
}

/* Replace the subtree of part's height on a random path of full by part. */
static void replace_tree(struct ctx *c, kgc_obj full, kgc_obj part)
{
	int32_t h = HEIGHT_OF(part);
	uint32_t path = rnd(&c->rng);
	kgc_obj n = full;

	while (HEIGHT_OF(kgc_get_ref(n, LEFT)) > h) {
		n = kgc_get_ref(n, (path & 1) ? RIGHT : LEFT);
		path >>= 1;
	}
	kgc_set_ref(c->t, n, (path & 1) ? RIGHT : LEFT, part);
}

static void old_gen_alloc(struct ctx *c, long bytes)
{
	long full = bytes / tree_bytes(HEIGHT), partial = bytes % tree_bytes(HEIGHT);

	for (long i = 0; i < full; i++) {
		c->r[2] = make(c, HEIGHT);
		kgc_array_set_ref(c->t, c->r[0], (size_t)c->where, c->r[2]);
		c->where = (c->where + 1) % c->ntrees;
	}
	while (partial > INSIGNIFICANT) {
		int h = bytes_to_height(partial);

		c->r[2] = make(c, h);
		replace_tree(c, kgc_array_get_ref(c->r[0], (size_t)c->where), c->r[2]);
		c->where = (c->where + 1) % c->ntrees;
		partial -= tree_bytes(h);
	}
	c->r[2] = NULL;
}

static void swap_subtree(struct ctx *c)
{
	uint32_t i1 = rnd(&c->rng) % (uint32_t)c->ntrees, i2 = rnd(&c->rng) % (uint32_t)c->ntrees;
	uint32_t depth = rnd(&c->rng) % HEIGHT, path = rnd(&c->rng);
	kgc_obj a = kgc_array_get_ref(c->r[0], i1), b = kgc_array_get_ref(c->r[0], i2), tmp;
	size_t f;

	for (uint32_t i = 0; i < depth; i++) {
		f = (path & 1) ? RIGHT : LEFT;
		a = kgc_get_ref(a, f);
		b = kgc_get_ref(b, f);
		path >>= 1;
	}
	f = (path & 1) ? RIGHT : LEFT;
	tmp = kgc_get_ref(a, f);
	kgc_set_ref(c->t, a, f, kgc_get_ref(b, f));
	kgc_set_ref(c->t, b, f, tmp);
	c->actually_mut++;
}

static uint64_t tree_hash(kgc_obj n, long *nodes)
{
	uint64_t l, r;

	if (!n)
		return 0;
	++*nodes;
	l = tree_hash(kgc_get_ref(n, LEFT), nodes);
	r = tree_hash(kgc_get_ref(n, RIGHT), nodes);
	return (l * 31 + r) * 31 + (uint64_t)(int64_t)KGC_FIELD(n, ID, int32_t);
}

struct targ {
	int id;
	uint64_t check;
	long nodes;
};

static void *kgc_thread_main(void *arg)
{
	struct targ *a = arg;
	struct ctx c = { .rng = 0x5EED0000u + (uint64_t)a->id, .ntrees = ntrees() };
	long n = steps();

	if (kgc_thread_attach(heap, "gcold", &c.t))
		die("attach: %s", kgc_last_error());
	{
		KGC_ROOTS(c.t, r, 3);

		c.r = r;
		r[0] = kgc_alloc_array(c.t, KGC_TYPE_REF_ARRAY, (size_t)c.ntrees);
		r[1] = kgc_alloc_array(c.t, KGC_TYPE_REF_ARRAY, RING);
		if (!r[0] || !r[1])
			die("kgc_alloc_array: %s", kgc_last_error());
		for (int i = 0; i < c.ntrees; i++) {
			r[2] = make(&c, HEIGHT);
			kgc_array_set_ref(c.t, r[0], (size_t)i, r[2]);
		}
		r[2] = NULL;
		for (long s = 0; s < n; s++) {
			young_alloc(&c, STEP_BYTES);
			old_gen_alloc(&c, STEP_BYTES / PROMOTE);
			for (int m = 0; m < MUT; m++)
				swap_subtree(&c);
		}
		a->check = c.young_sum;
		/* a poll per tree, as the JVM's at the loop's back edge: without
		 * it, the other thread's next collection waited for the whole walk
		 * (1 s at 3 GiB live) */
		for (int i = 0; i < c.ntrees; i++) {
			a->check += (uint64_t)(i + 1) * tree_hash(kgc_array_get_ref(r[0], (size_t)i), &a->nodes);
			kgc_safepoint_poll(c.t);
		}
	}
	kgc_thread_detach(c.t);
	return NULL;
}

static void run_kgc(char *extra, size_t len)
{
	static const uint32_t offs[2] = { LEFT, RIGHT };
	struct kgc_type_desc d = { .name = "TreeNode", .payload_size = 24, .nrefs = 2, .ref_offsets = offs };
	struct kgc_options o;
	struct kgc_stats st;
	struct targ a[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t check = 0;
	long nodes = 0;

	if (kgc_options_init(&o) || (o.max_heap = (size_t)heap_mb() << 20, kgc_heap_create(&o, &heap)) ||
	    kgc_type_register(heap, &d, &node_type))
		die("kgc setup: %s", kgc_last_error());
	for (int i = 0; i < NTHREADS; i++) {
		a[i] = (struct targ){ .id = i };
		pthread_create(&th[i], NULL, kgc_thread_main, &a[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		check += a[i].check;
		nodes += a[i].nodes;
	}
	if (nodes != (long)NTHREADS * ntrees() * ((2L << HEIGHT) - 1))
		die("kgc: live set damaged (%ld nodes)", nodes);
	kgc_stats_get(heap, &st, sizeof(st));
	snprintf(extra, len, "check=%llu nodes=%ld gcs=%llu young=%llu full=%llu mixed=%llu cycles=%llu "
		 "pause_max_ms=%.3f pause_total_ms=%.1f promoted_mb=%.0f",
		 (unsigned long long)check, nodes, (unsigned long long)(st.young_gcs + st.full_gcs),
		 (unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs,
		 (unsigned long long)st.mixed_gcs, (unsigned long long)st.concurrent_cycles,
		 ms(st.pause_max_ns), ms(st.pause_total_ns), st.bytes_promoted / 1048576.0);
	kgc_heap_destroy(heap);
}
#endif

static int worker(const char *v)
{
	char extra[640] = "", xmx[32], log[64];
	uint64_t t0;
	int rc;

	snprintf(xmx, sizeof(xmx), "-Xmx%ldm", heap_mb());
	snprintf(log, sizeof(log), "gcold%ld", live_mb());
	if ((rc = hotspot_worker("GCOld", log, v, xmx)) >= 0)
		return rc;
#ifdef HAVE_KGC
	uint64_t max, p99, total;

	log_to_file(strcat(log, "_kgc"));	/* every pause, for the p99 */
	t0 = now_ns();
	run_kgc(extra, sizeof(extra));
	t0 = now_ns() - t0;
	pause_summary(parse_pauses(), &max, &p99, &total);
	printf("RESULT time_ms=%.1f rss_kb=%ld %s pause_p99_ms=%.3f\n", ms(t0), peak_rss_kb(), extra, ms(p99));
#else
	(void)t0;
	printf("RESULT unavailable=1\n");
#endif
	return 0;
}

enum { KGC, G1, PAR, G1_25, ZGC_25, NV };
static const char *variants[NV] = { "kgc", "g1", "parallel", "g1@25", "zgc@25" };
static const char *label[NV] = { "kgc", "HotSpot G1", "HotSpot Parallel", "JDK 25 G1", "JDK 25 ZGC" };

/* One live-set size (the environment set for it): every variant, its table
 * and ratios into md; 0 if the variants agree on the check value. */
static int run_size(FILE *md, const char *argv0, int reps)
{
	char res[NV][1024], ck[NV][32], b[32], b2[32], b3[32];
	double med[NV], goal = 6;
	int agree = 1;

	printf("== GCOld: %d threads, live %ld MiB, heap %ld MiB, %ld steps each, median of %d runs\n", NTHREADS,
	       live_mb(), heap_mb(), steps(), reps);
	for (int v = 0; v < NV; v++) {
		med[v] = run_median(argv0, variants[v], reps, res[v], sizeof(res[v]));
		res_str(res[v], "check", ck[v], sizeof(ck[v]));
		printf("  %-18s %s\n", label[v], res[v]);
	}
	for (int v = 1; v < NV; v++)
		if (ck[v][0] && ck[0][0] && strcmp(ck[v], ck[0]))
			agree = 0;
	both(md, "\n### %ld MiB live, %ld MiB heap (%d trees per thread; median of %d)\n\n", live_mb(), heap_mb(),
	     ntrees(), reps);
	both(md, "| variant | time (ms, median) | GCs | full GCs | max pause (ms) | p99 pause (ms) | total pause (ms) | peak RSS (MiB) | check |\n");
	both(md, "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (int v = 0; v < NV; v++) {
		if (med[v] < 0)
			both(md, "| %s | not available (%s) | | | | | | | |\n", label[v], fail_reason(res[v]));
		else
			both(md, "| %s | %.1f | %.0f | %.0f | %.3f | %.3f | %.1f | %.0f | %s |\n", label[v], med[v],
			     res_get(res[v], "gcs"), res_get(res[v], "full"), res_get(res[v], "pause_max_ms"),
			     res_get(res[v], "pause_p99_ms"), res_get(res[v], "pause_total_ms"),
			     res_get(res[v], "rss_kb") / 1024, ck[v]);
	}
	if (med[KGC] <= 0)
		return !agree;
	both(md, "\nkgc detail (last run): `%s`\n", res[KGC]);
	both(md, "\n| ratio | time | max pause | peak RSS |\n|---|---:|---:|---:|\n");
	for (int v = G1; v < NV; v++)
		if (med[v] > 0)
			both(md, "| kgc / %s | %s | %s | %s |\n", label[v], ratio_str(b, sizeof(b), med[KGC], med[v]),
			     ratio_str(b2, sizeof(b2), res_get(res[KGC], "pause_max_ms"), res_get(res[v], "pause_max_ms")),
			     ratio_str(b3, sizeof(b3), res_get(res[KGC], "rss_kb"), res_get(res[v], "rss_kb")));
	both(md, "\nkgc against the %.0f ms goal (issue 28): max pause %.2f ms (<= %.0f: %s), p99 %.2f ms (<= %.0f: %s)%s.\n",
	     goal, res_get(res[KGC], "pause_max_ms"), 2 * goal,
	     res_get(res[KGC], "pause_max_ms") <= 2 * goal ? "MET" : "NOT MET", res_get(res[KGC], "pause_p99_ms"), goal,
	     res_get(res[KGC], "pause_p99_ms") <= goal ? "MET" : "NOT MET",
	     med[G1_25] > 0 ? (med[KGC] / med[G1_25] <= 0.8 ? "; time <= 0.8x JDK 25 G1: MET"
							    : "; time <= 0.8x JDK 25 G1: NOT MET") : "");
	both(md, "Check values %s.\n", agree ? "agree (kgc and HotSpot did the same work)"
					   : "DIFFER: the variants did not do the same work (a bug)");
	return !agree;
}

int main(int argc, char **argv)
{
	const char *sz = getenv("GCOLD_SIZES");
	char sizes[128];
	int bad = 0;
	FILE *md;

	if (argc > 1)
		return worker(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* live:heap MiB; issue 28's 10x and 30x live sets, one run each (the
	 * 3 GiB one takes minutes a variant); a scaled-down pass: the first */
	snprintf(sizes, sizeof(sizes), "%s", sz ? sz : bench_scale() < 1 ? "128:1024" : "128:1024 1024:3072 3072:8192");
	md = md_open("gcold");
	both(md, "\n## GCOld: old-generation mutation (issues 15, 28)\n\n");
	both(md, "After Boehm/Detlefs' GCOld: %d threads, each keeping perfect binary trees of height %d\n"
		 "(1 MiB of 32-byte nodes each), then %ld steps per thread of: %d KiB of short-lived garbage\n"
		 "(int[%d]), 1/%d of that as new subtrees replacing old ones (old nodes pointing to young ones,\n"
		 "old space turning over), and %d swaps of random old subtrees. `bench/GCOld.java` is the same for\n"
		 "HotSpot (same PRNG, same check value), on JDK 17 (G1, Parallel) and JDK 25 (G1, ZGC). Live set and\n"
		 "heap per size (`GCOLD_SIZES`, live:heap MiB: \"%s\"); collectors' defaults otherwise; time\n"
		 "in-process (live-set build included, JVM start-up not), each run in a fresh process. Pauses from\n"
		 "each collector's log of the last run (kgc `KGC_LOG=gc`: young, mixed and full; HotSpot `-Xlog:gc`:\n"
		 "young, remark, cleanup, full; ZGC `gc+phases`: its three pauses per cycle).\n",
	     NTHREADS, HEIGHT, steps(), STEP_BYTES >> 10, DEAD_INTS, PROMOTE, MUT, sizes);
	for (char *tok, *save, *p = sizes; (tok = strtok_r(p, " ", &save)); p = NULL) {
		char *colon = strchr(tok, ':');

		if (!colon)
			die("GCOLD_SIZES: '%s' is not live:heap", tok);
		*colon = 0;
		setenv("GCOLD_LIVE_MB", tok, 1);
		setenv("GCOLD_HEAP_MB", colon + 1, 1);
		bad |= run_size(md, argv[0], live_mb() > 128 ? 1 : 3);
	}
	fclose(md);
	return bad;
}
