/* SPDX-License-Identifier: MIT */
/*
 * kgcstat_target - a live kgc process for test/run-check.sh. Run with
 * KGC_STATS_PUBLISH=1; reads commands on stdin, answers each on stdout:
 *   alloc N   allocate N MiB of garbage (young collections follow)  -> "ok <young GCs>"
 *   keep      a list that survives into old space and a humongous array -> "ok"
 *   pin       a young list, kgc_critical_get on an array, then another
 *             thread collects (the list to survivor space, the array's
 *             region pinned in place) -> "ok"
 *   unpin     release it -> "ok"
 *   quit
 * Prints "ready <pid>" first.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kgc.h>

static kgc_heap *h;

static void die(const char *what)
{
	fprintf(stderr, "kgcstat_target: %s: %s\n", what, kgc_last_error());
	exit(1);
}

static void *collect_young(void *arg)
{
	kgc_thread *t;

	if (kgc_thread_attach(h, "collector", &t) || kgc_collect(t, KGC_GC_YOUNG) || kgc_thread_detach(t))
		die("collector");
	return NULL;
}

/* n cells pushed on the list *head (a root) */
static void grow_list(kgc_thread *t, kgc_type_id cell, kgc_obj *head, int n)
{
	for (int i = 0; i < n; i++) {
		kgc_obj c = kgc_alloc(t, cell);

		if (!c)
			die("alloc list");
		kgc_set_ref(t, c, 8, *head);
		*head = c;
	}
}

static uint64_t young_gcs(void)
{
	struct kgc_stats s;

	if (kgc_stats_get(h, &s, sizeof(s)))
		die("stats");
	return s.young_gcs;
}

int main(void)
{
	static const uint32_t offs[1] = { 8 };
	struct kgc_type_desc d = { .name = "cell", .payload_size = 16, .nrefs = 1, .ref_offsets = offs };
	struct kgc_options o;
	kgc_type_id cell;
	kgc_thread *t;
	kgc_obj roots[4] = { 0 };	/* old list, humongous, pinned array, young list */
	struct kgc_frame f;
	char line[64];
	void *elems = NULL;

	if (kgc_options_init(&o))
		die("options");
	o.max_heap = 64 << 20;
	o.region_size = 1 << 20;
	o.young_size = 8 << 20;
	o.tenure_threshold = 2;
	if (kgc_heap_create(&o, &h) || kgc_type_register(h, &d, &cell) || kgc_thread_attach(h, "main", &t))
		die("setup");
	kgc_frame_push(t, &f, roots, 4, NULL);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		int n;

		if (sscanf(line, "alloc %d", &n) == 1) {
			for (long i = 0; i < (long)n * (1 << 20) / 24; i++)
				if (!kgc_alloc(t, cell))
					die("alloc");
			printf("ok %llu\n", (unsigned long long)young_gcs());
		} else if (!strncmp(line, "keep", 4)) {
			grow_list(t, cell, &roots[0], 100000);
			roots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 3 << 20);
			if (!roots[1] || kgc_collect(t, KGC_GC_YOUNG) || kgc_collect(t, KGC_GC_YOUNG))
				die("keep");
			printf("ok\n");
		} else if (!strncmp(line, "pin", 3)) {
			pthread_t th;

			grow_list(t, cell, &roots[3], 100000);	/* 3 regions: not all pinned */
			roots[2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1000);
			if (!roots[2] || !(elems = kgc_critical_get(t, &roots[2], NULL)))
				die("pin");
			pthread_create(&th, NULL, collect_young, NULL);
			pthread_join(th, NULL);
			printf("ok\n");
		} else if (!strncmp(line, "unpin", 5)) {
			if (kgc_critical_release(t, &roots[2], elems, 0))
				die("unpin");
			printf("ok\n");
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
		fflush(stdout);
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return kgc_heap_destroy(h) ? 1 : 0;
}
