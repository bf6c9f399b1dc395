/* SPDX-License-Identifier: MIT */
/*
 * Pinned handles: an object with a kgc_pin_handle never changes address
 * and stays alive (the handle is its only root) through young, full and
 * concurrent/mixed collections the holder itself runs while it allocates -
 * nothing it may call is restricted - while objects in other regions,
 * rooted in a frame, do move. A seeded random half of the second half of N
 * young objects (regions apart from the first half's) is pinned and refers
 * to a child in yet other regions (alive only if the handle is a root);
 * each holds its own index, checked after every collection.
 * After the handles are freed nothing stays pinned (regions_pinned 0 after
 * the next collection) and the pinned objects' regions are collected.
 */
#include <stdbool.h>
#include "tcycle.h"

enum { N = 200, ROUNDS = 6 };

static kgc_type_id NODE;

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj r[N] = { 0 };
	struct kgc_frame f;
	kgc_pin_handle ph[N] = { 0 };
	kgc_obj addr[N];
	unsigned long long seed;
	int npinned = 0, moved = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	t_opts_small(&o, 64, 4);
	o.verify = 1;
	o.ihop_percent = 100;	/* this test starts the cycle */
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, r, N, NULL);
	for (int i = 0; i < N; i++) {
		if (i == N / 2)	/* the second half in other regions than the first */
			for (int k = 0; k < 48000; k++)
				T_ASSERT(kgc_alloc(t, NODE));
		r[i] = kgc_alloc(t, NODE);
		KGC_FIELD(r[i], N_VALUE, int64_t) = i;
		if (i >= N / 2 && (t_rand(&seed) & 1)) {
			ph[i] = kgc_pin_handle_new(t, r[i]);
			T_ASSERT(ph[i] && kgc_pin_handle_get(ph[i]) == r[i]);
			r[i] = NULL;	/* only the handle keeps it */
			npinned++;
		}
		addr[i] = ph[i] ? kgc_pin_handle_get(ph[i]) : r[i];
	}
	/* each pinned object refers to a child in other regions: it lives and
	 * moves only if the handle is a root */
	for (int k = 0; k < 48000; k++)
		T_ASSERT(kgc_alloc(t, NODE));
	for (int i = 0; i < N; i++)
		if (ph[i]) {
			kgc_obj c = kgc_alloc(t, NODE);

			KGC_FIELD(c, N_VALUE, int64_t) = 1000 + i;
			kgc_set_ref(t, kgc_pin_handle_get(ph[i]), N_LEFT, c);
		}
	for (int round = 0; round < ROUNDS; round++) {
		int kind = round % 3;	/* young, full, young with a cycle */

		for (int k = 0; k < 2000; k++)	/* the holder allocates meanwhile */
			T_ASSERT(kgc_alloc(t, NODE));
		if (kind == 2) {
			kgci_cm_test_hold(h, false);
			h->opt.ihop_percent = 1;
			T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
			h->opt.ihop_percent = 100;
			t_cycle_finish(t, h);
		} else {
			T_ASSERT_EQ(kgc_collect(t, kind == 0 ? KGC_GC_YOUNG : KGC_GC_FULL), 0);
		}
		t_nap_native(t, 100);	/* native and back: allowed too */
		for (int i = 0; i < N; i++) {
			kgc_obj x = ph[i] ? kgc_pin_handle_get(ph[i]) : r[i];

			if (ph[i] && x != addr[i])
				T_FAIL("round %d: pinned object %d moved %p -> %p", round, i, (void *)addr[i],
				       (void *)x);
			if (KGC_FIELD(x, N_VALUE, int64_t) != i)
				T_FAIL("round %d: object %d holds %lld", round, i,
				       (long long)KGC_FIELD(x, N_VALUE, int64_t));
			if (ph[i]) {
				kgc_obj c = kgc_get_ref(x, N_LEFT);

				if (!c || KGC_FIELD(c, N_VALUE, int64_t) != 1000 + i)
					T_FAIL("round %d: the child of pinned object %d is lost", round, i);
			}
			if (!ph[i] && x != addr[i]) {
				moved += i < N / 2;
				addr[i] = x;
			}
		}
	}
	T_ASSERT(moved > 0);	/* the collections did move objects */
	T_ASSERT(t_stats(h).evac_fail_pinned > 0);
	for (int i = 0; i < N; i++)
		if (ph[i])
			T_ASSERT_EQ(kgc_pin_handle_free(t, ph[i]), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);
	printf("%d pinned objects never moved in %d collections (unpinned ones moved %d times)\n", npinned,
	       ROUNDS, moved);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
