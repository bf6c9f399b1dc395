/* SPDX-License-Identifier: MIT */
/*
 * The pinned-object space (kgc_alloc_array_pinned): its arrays never move
 * through young, full and concurrent collections; dead ones are reclaimed
 * in place, at remark and in full collections: later pinned allocations
 * reuse their space (no new region), and a region with nothing live goes
 * back to the heap. A humongous pinned array stays put too and its regions
 * are freed once it dies. Contents survive every collection.
 */
#include "tcycle.h"
#include "../gc_internal.h"

#define N	48
#define LEN	(40u * 1024)	/* 24 of them fill a 1 MiB region */
#define BYTE	KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)

static void fill(kgc_obj a, unsigned gen)
{
	uint8_t *p = kgc_array_data(a);

	for (size_t i = 0; i < kgc_array_length(a); i++)
		p[i] = (uint8_t)(i * 7 + gen);
}

static void check(kgc_obj a, unsigned gen)
{
	const uint8_t *p = kgc_array_data(a);

	for (size_t i = 0; i < kgc_array_length(a); i++)
		if (p[i] != (uint8_t)(i * 7 + gen))
			T_FAIL("array %p byte %zu: %#x, want %#x", a, i, p[i], (uint8_t)(i * 7 + gen));
}

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj roots[N + 2] = { 0 }, was[N], big_was;
	struct kgc_frame f;
	struct kgc_stats s;
	uint32_t regions;
	char *lo = NULL, *hi = NULL;

	t_opts_small(&o, 64, 4);
	o.ihop_percent = 100;	/* cycles only when this test drives one */
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, roots, N + 2, NULL);

	for (unsigned i = 0; i < N; i++) {
		roots[i] = kgc_alloc_array_pinned(t, BYTE, LEN);
		T_ASSERT(roots[i]);
		T_ASSERT_EQ(kgc_array_length(roots[i]), LEN);
		for (size_t k = 0; k < LEN; k++)	/* zeroed */
			if (((uint8_t *)kgc_array_data(roots[i]))[k])
				T_FAIL("pinned array %u byte %zu not zero", i, k);
		fill(roots[i], i);
		was[i] = roots[i];
		if (!lo || (char *)roots[i] < lo)
			lo = (char *)roots[i];
		if ((char *)roots[i] > hi)
			hi = (char *)roots[i];
	}
	/* a humongous one (3 regions) */
	roots[N] = kgc_alloc_array_pinned(t, BYTE, (2u << 20) + 100);
	T_ASSERT(roots[N]);
	fill(roots[N], 99);
	big_was = roots[N];
	s = t_stats(h);
	regions = s.pinned_space_regions;
	T_ASSERT_EQ(regions, 2 + 3);	/* 48 x 40 KiB in two regions, 3 humongous */
	T_ASSERT(s.pinned_space_bytes >= (uint64_t)N * LEN + (2u << 20));

	/* nothing moves: young (garbage around it), full, young again */
	t_churn(t, h, node, 3);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_churn(t, h, node, 2);
	for (unsigned i = 0; i < N; i++) {
		T_ASSERT(roots[i] == was[i]);
		check(roots[i], i);
	}
	T_ASSERT(roots[N] == big_was);
	check(roots[N], 99);

	/* every other array dies; a concurrent cycle reclaims them at remark */
	for (unsigned i = 0; i < N; i += 2)
		roots[i] = NULL;
	kgci_cm_test_hold(h, true);
	h->opt.ihop_percent = 1;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* Concurrent Start */
	h->opt.ihop_percent = 100;
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));
	/* allocated while the cycle marks: bumped above the last region's top,
	 * i.e. above its TAMS (no gap below it is reused now): live */
	roots[N + 1] = kgc_alloc_array_pinned(t, BYTE, LEN);
	T_ASSERT(roots[N + 1]);
	T_ASSERT((char *)roots[N + 1] > hi);
	fill(roots[N + 1], 77);
	kgci_cm_test_hold(h, false);
	t_cycle_finish(t, h);
	check(roots[N + 1], 77);
	s = t_stats(h);
	T_ASSERT_EQ(s.pinned_space_regions, regions);
	/* the tops stay, the dead arrays' runs are gaps now */
	T_ASSERT(s.pinned_space_bytes < (uint64_t)(N / 2 + 2) * (LEN + 16) + (3u << 20));
	T_ASSERT(s.pinned_space_bytes >= (uint64_t)(N / 2) * LEN + (2u << 20));
	/* their space is reused: the new arrays sit between the old ones */
	for (unsigned i = 0; i < N; i += 2) {
		roots[i] = kgc_alloc_array_pinned(t, BYTE, LEN);
		T_ASSERT(roots[i]);
		T_ASSERT((char *)roots[i] >= lo && (char *)roots[i] <= hi);
		fill(roots[i], i + 1);
	}
	T_ASSERT_EQ(t_stats(h).pinned_space_regions, regions);
	for (unsigned i = 0; i < N; i++) {
		if (i % 2)
			T_ASSERT(roots[i] == was[i]);
		check(roots[i], i % 2 ? i : i + 1);
	}

	/* all die: a full collection frees both regions and the humongous one */
	for (unsigned i = 0; i <= N + 1; i++)
		roots[i] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	s = t_stats(h);
	T_ASSERT_EQ(s.pinned_space_regions, 0);
	T_ASSERT_EQ(s.pinned_space_bytes, 0);

	/* and the space starts again */
	roots[0] = kgc_alloc_array_pinned(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 1000);
	T_ASSERT(roots[0]);
	T_ASSERT_EQ(t_stats(h).pinned_space_regions, 1);
	was[0] = roots[0];
	t_churn(t, h, node, 2);
	T_ASSERT(roots[0] == was[0]);

	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("ok: %u pinned arrays never moved, reclaimed at remark and in a full GC\n", N + 1);
	return 0;
}
