/* SPDX-License-Identifier: MIT */
/*
 * scanbench - what a runtime-defined layout (kgc_type_register_scanned, a
 * scan function reporting the reference slots) costs a young pause per
 * object, against the same layout as a layout-map type (kgc_type_register
 * with ref_offsets): issue 31 item 8, target <= 1.5x.
 *
 * One heap, both types: node { ref a, ref b, int64 x, int64 y }. A round
 * allocates a graph of N nodes of one type (node i refers to nodes i-1 and
 * i-2, the last one held by a handle), then forces a young collection that
 * copies all of it; the young pause (kgc_stats.young_pause_ns) over N is
 * the round's cost per object. Rounds alternate layout-map and scanned
 * (after a warm-up round of each), and the graph is dropped before the
 * next round (so each round's pause copies exactly its own graph). A round
 * that collected during the build is discarded. The median of each kind is
 * reported, with an empty round (no graph) as the fixed part of a pause.
 */
#include "common.h"

#ifdef HAVE_KGC
#include <kgc.h>

enum { NODE_A = 8, NODE_B = 16, NODE_X = 24, NODE_Y = 32, NODE_PAYLOAD = 32 };
static const uint32_t node_refs[] = { NODE_A, NODE_B };

static void node_scan(kgc_obj o, struct kgc_slot_visitor *v, void *ctx)
{
	kgc_visit_slot(v, (kgc_obj *)((char *)o + NODE_A));
	kgc_visit_slot(v, (kgc_obj *)((char *)o + NODE_B));
}

static kgc_heap *heap;
static kgc_type_id t_map, t_scan;

static void stats(struct kgc_stats *st)
{
	if (kgc_stats_get(heap, st, sizeof(*st)))
		die("kgc_stats_get: %s", kgc_last_error());
}

/* Builds n nodes of type ty (n 0: none), collects young; the pause in ns,
 * or 0 if a collection ran during the build (the round does not count). */
static uint64_t round_once(kgc_thread *t, kgc_type_id ty, size_t n)
{
	struct kgc_stats s0, s1, s2;
	kgc_handle h;
	KGC_ROOTS(t, r, 2);

	stats(&s0);
	for (size_t i = 0; i < n; i++) {
		kgc_obj o = kgc_alloc(t, ty);

		if (!o)
			die("kgc_alloc: %s", kgc_last_error());
		kgc_set_ref(t, o, NODE_A, r[0]);
		kgc_set_ref(t, o, NODE_B, r[1]);
		KGC_FIELD(o, NODE_X, int64_t) = (int64_t)i;
		KGC_FIELD(o, NODE_Y, int64_t) = (int64_t)(i * 3);
		r[1] = r[0];
		r[0] = o;
	}
	if (!(h = kgc_handle_new(t, r[0])) && r[0])
		die("kgc_handle_new: %s", kgc_last_error());
	r[0] = r[1] = NULL;
	stats(&s1);
	if (kgc_collect(t, KGC_GC_YOUNG))
		die("kgc_collect: %s", kgc_last_error());
	stats(&s2);
	/* the graph came through: a chain of n a's, each b its a's a, x intact */
	size_t len = 0;
	for (kgc_obj o = h ? kgc_handle_get(h) : NULL; o; o = kgc_get_ref(o, NODE_A), len++) {
		kgc_obj a = kgc_get_ref(o, NODE_A);

		if (KGC_FIELD(o, NODE_X, int64_t) != (int64_t)(n - 1 - len) ||
		    kgc_get_ref(o, NODE_B) != (a ? kgc_get_ref(a, NODE_A) : NULL))
			die("%s graph: node %zu is wrong after the young collection",
			    kgc_type_name(heap, ty), n - 1 - len);
	}
	if (len != n)
		die("%s graph of %zu nodes came back with %zu", kgc_type_name(heap, ty), n, len);
	kgc_handle_free(t, h);
	if (kgc_collect(t, KGC_GC_FULL))	/* the graph gone: the next round starts alike */
		die("kgc_collect: %s", kgc_last_error());
	if (s1.young_gcs + s1.full_gcs != s0.young_gcs + s0.full_gcs || s2.young_gcs != s1.young_gcs + 1)
		return 0;
	return s2.young_pause_ns - s1.young_pause_ns;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n ? v[n / 2] : -1;
}

int main(void)
{
	struct kgc_options o;
	struct kgc_type_desc md = { .name = "node-map", .payload_size = NODE_PAYLOAD, .nrefs = 2,
				    .ref_offsets = node_refs };
	struct kgc_scan_type_desc sd = { .size = sizeof(sd), .payload_size = NODE_PAYLOAD,
					 .name = "node-scanned", .scan = node_scan };
	size_t n = (size_t)(400000 * bench_scale());
	int rounds = 11, nm = 0, ns = 0, ne = 0, dropped = 0;
	double map_ns[16], scan_ns[16], empty_ns[16], m, s, e;
	kgc_thread *t;
	FILE *f;

	if (n < 1000)
		n = 1000;
	if (kgc_options_init(&o) || kgc_options_set(&o, "heap_max", "512m") ||
	    kgc_options_set(&o, "young_size", "64m") || kgc_heap_create(&o, &heap))
		die("heap: %s", kgc_last_error());
	if (kgc_type_register(heap, &md, &t_map) || kgc_type_register_scanned(heap, &sd, &t_scan))
		die("types: %s", kgc_last_error());
	if (kgc_thread_attach(heap, "scanbench", &t))
		die("attach: %s", kgc_last_error());
	round_once(t, t_map, n);	/* warm-up: first-touch of to-space, code paths */
	round_once(t, t_scan, n);
	for (int i = 0; i < rounds; i++) {
		uint64_t p;

		if ((p = round_once(t, t_map, n)))
			map_ns[nm++] = (double)p;
		else
			dropped++;
		if ((p = round_once(t, t_scan, n)))
			scan_ns[ns++] = (double)p;
		else
			dropped++;
		if ((p = round_once(t, t_map, 0)))
			empty_ns[ne++] = (double)p;
	}
	m = median(map_ns, nm);
	s = median(scan_ns, ns);
	e = median(empty_ns, ne);
	if (kgc_thread_detach(t) || kgc_heap_destroy(heap))
		die("teardown: %s", kgc_last_error());
	if (nm == 0 || ns == 0)
		die("every round collected during its build (%d dropped)", dropped);

	f = md_open("scanbench");
	both(f, "\n## Scanned types vs layout-map types: young pause per object (issue 31)\n\n");
	both(f, "One heap (`young_size` 64m), node {ref, ref, int64, int64} registered twice: with `ref_offsets`\n"
		"(layout map) and with `kgc_type_register_scanned` (a scan function visiting the same two\n"
		"slots). Each round builds a chain of %zu nodes of one type (node i -> i-1, i-2) and forces a\n"
		"young collection that copies all of it; %d rounds per type, alternating, medians of\n"
		"`young_pause_ns`; `empty` is a round without a graph (the fixed part of a pause).%s\n\n",
		n, rounds, dropped ? " Rounds with a collection during the build were dropped." : "");
	both(f, "| type | young pause (ms) | ns per object | ns per object, empty pause subtracted |\n");
	both(f, "|---|---:|---:|---:|\n");
	both(f, "| layout map | %.2f | %.1f | %.1f |\n", m / 1e6, m / n, (m - e) / n);
	both(f, "| scanned | %.2f | %.1f | %.1f |\n", s / 1e6, s / n, (s - e) / n);
	both(f, "| empty | %.3f | | |\n", e / 1e6);
	both(f, "\nscanned / layout map: **%.2fx** per object (%.2fx with the empty pause subtracted); target <= 1.5x.\n",
	     s / m, (s - e) / (m - e));
	fclose(f);
	return 0;
}
#else
int main(void)
{
	FILE *f = md_open("scanbench");

	both(f, "\n## Scanned types vs layout-map types: young pause per object (issue 31)\n\nnot available (libkgc did not build)\n");
	fclose(f);
	return 0;
}
#endif
