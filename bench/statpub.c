/*
 * statpub - what KGC_STATS_PUBLISH costs when nobody reads the page (issue
 * 17: "it must cost nothing measurable when nobody reads it"). One thread
 * keeps a 20000-node live list in a 512 MiB heap of 1 MiB regions (512
 * regions: the page's map has one cell per region) and runs young
 * collections back to back, a few hundred small allocations between them,
 * with publishing off and on in alternating rounds (a fresh heap each).
 * Per collection: wall time and the thread's CPU time; the publishing cost
 * is the on/off ratio of the round medians.
 */
#include "common.h"

#ifdef HAVE_KGC
#include <kgc.h>

#define ROUNDS 8
#define GCS 300
#define LIVE 20000

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One round: ns per collection (wall, cpu). */
static void round_run(int publish, uint64_t *wall, uint64_t *cpu)
{
	static const uint32_t offs[1] = { 8 };
	struct kgc_type_desc d = { .name = "node", .payload_size = 16, .nrefs = 1, .ref_offsets = offs };
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_type_id node;
	kgc_obj roots[2] = { 0 };
	struct kgc_frame f;
	uint64_t w0, c0;
	int gcs = (int)(GCS * bench_scale()) + 1;

	kgc_options_init(&o);
	o.max_heap = 512ul << 20;
	o.region_size = 1ul << 20;
	o.stats_publish = (unsigned)publish;
	if (kgc_heap_create(&o, &h) || kgc_type_register(h, &d, &node) || kgc_thread_attach(h, "main", &t))
		die("setup: %s", kgc_last_error());
	kgc_frame_push(t, &f, roots, 2, NULL);
	for (int i = 0; i < LIVE; i++) {
		if (!(roots[1] = kgc_alloc(t, node)))
			die("alloc: %s", kgc_last_error());
		kgc_set_ref(t, roots[1], 8, roots[0]);
		roots[0] = roots[1];
	}
	kgc_collect(t, KGC_GC_FULL);
	w0 = now_ns();
	c0 = cpu_ns();
	for (int g = 0; g < gcs; g++) {
		for (int i = 0; i < 256; i++)
			if (!kgc_alloc(t, node))
				die("alloc: %s", kgc_last_error());
		if (kgc_collect(t, KGC_GC_YOUNG))
			die("collect: %s", kgc_last_error());
	}
	*wall = (now_ns() - w0) / (uint64_t)gcs;
	*cpu = (cpu_ns() - c0) / (uint64_t)gcs;
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	kgc_heap_destroy(h);
}

int main(void)
{
	uint64_t wall[2][ROUNDS], cpu[2][ROUNDS];
	FILE *md = md_open("statpub");
	char r1[32], r2[32];

	for (int k = 0; k < ROUNDS; k++)
		for (int j = 0; j < 2; j++) {
			int pub = (k + j) % 2;	/* alternate which goes first */

			round_run(pub, &wall[pub][k], &cpu[pub][k]);
		}
	for (int p = 0; p < 2; p++) {
		qsort(wall[p], ROUNDS, sizeof(uint64_t), cmp_u64);
		qsort(cpu[p], ROUNDS, sizeof(uint64_t), cmp_u64);
	}
	both(md, "\n## Cost of KGC_STATS_PUBLISH with no reader (issue 17)\n\n");
	both(md, "`bench/statpub`: young collections back to back (a 20000-node live list, 256 allocations between "
	     "them) in a 512 MiB heap of 1 MiB regions (the page's map: 512 cells), %d rounds of %d collections "
	     "each way, alternating which goes first, a fresh heap per round; medians of the rounds, per collection.\n\n",
	     ROUNDS, (int)(GCS * bench_scale()) + 1);
	both(md, "| KGC_STATS_PUBLISH | wall us / collection | CPU us / collection |\n|---|---:|---:|\n");
	both(md, "| 0 (off) | %.1f | %.1f |\n", wall[0][ROUNDS / 2] / 1e3, cpu[0][ROUNDS / 2] / 1e3);
	both(md, "| 1 (on, nobody reading) | %.1f | %.1f |\n", wall[1][ROUNDS / 2] / 1e3, cpu[1][ROUNDS / 2] / 1e3);
	both(md, "\non / off: wall %s, CPU %s (round spread off: %.1f-%.1f us wall).\n",
	     ratio_str(r1, sizeof(r1), (double)wall[1][ROUNDS / 2], (double)wall[0][ROUNDS / 2]),
	     ratio_str(r2, sizeof(r2), (double)cpu[1][ROUNDS / 2], (double)cpu[0][ROUNDS / 2]),
	     wall[0][0] / 1e3, wall[0][ROUNDS - 1] / 1e3);
	fclose(md);
	return 0;
}
#else
int main(void)
{
	FILE *md = md_open("statpub");

	both(md, "\n## Cost of KGC_STATS_PUBLISH with no reader (issue 17)\n\nnot available: libkgc did not build/link\n");
	fclose(md);
	return 0;
}
#endif
