/* SPDX-License-Identifier: MIT */
/*
 * kgc_identity_hash is stable across every move: a young GC (eden ->
 * survivor), promotion, a full GC's compaction; distinct objects get
 * distinct hashes here; a dead object's hash cell is freed (weak_cleared).
 */
#include <errno.h>
#include "tgc.h"

#define N 2000

static kgc_type_id NODE;

int main(void)
{
	kgc_heap *h = t_heap(64, 4, &NODE);
	kgc_thread *t;
	kgc_obj r[2] = { 0 };
	struct kgc_frame f;
	static uint32_t hash[N];
	kgc_obj before;
	uint64_t cleared;
	int moves = 0;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, r, 2, NULL);
	r[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, N);
	for (int i = 0; i < N; i++) {
		kgc_obj n = kgc_alloc(t, NODE);

		T_ASSERT(n);
		kgc_array_set_ref(t, r[0], i, n);
		hash[i] = kgc_identity_hash(t, n);
		T_ASSERT(hash[i] != 0);
		T_ASSERT_EQ(kgc_identity_hash(t, n), hash[i]);
	}
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			if (hash[i] == hash[j])
				T_FAIL("objects %d and %d share hash %#x", i, j, hash[i]);
	/* garbage with hashes, then move everything several ways */
	for (int i = 0; i < 100; i++)
		T_ASSERT(kgc_identity_hash(t, kgc_alloc(t, NODE)) != 0);
	for (int k = 0; k < 6; k++) {
		before = kgc_array_get_ref(r[0], 0);
		T_ASSERT_EQ(kgc_collect(t, k == 3 ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
		moves += kgc_array_get_ref(r[0], 0) != before;
		for (int i = 0; i < N; i++)
			if (kgc_identity_hash(t, kgc_array_get_ref(r[0], i)) != hash[i])
				T_FAIL("object %d: hash changed after collection %d", i, k);
	}
	T_ASSERT(moves >= 2);
	cleared = t_stats(h).weak_cleared;
	T_ASSERT(cleared >= 100);	/* the garbage's hash cells */
	T_ASSERT_EQ(kgc_identity_hash(t, NULL), 0);
	printf("%d identity hashes stable across %d moves; %llu dead objects' hash cells freed\n", N,
	       moves, (unsigned long long)cleared);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
