/* SPDX-License-Identifier: MIT */
/*
 * A full collection moves live humongous objects into the holes dead ones
 * left (towards the top of the heap), and every reference follows: a
 * root, an old object's field, a young object's field, a slot of another
 * humongous (moved) reference array, a weak reference; the identity hash
 * stays, the contents arrive intact, the moved-from regions are free and
 * the verifier (on) passes after the pause. Both move by pages where the
 * backend can (policy.c's threshold: 256 KiB), overlapping their old place.
 */
#include "tgc.h"
#include "../gc_internal.h"

#define XLEN ((17u << 20) / 8)	/* 17 MiB of longs: 18 regions, moved by pages (policy.c) */

int main(void)
{
	unsigned long long seed = t_seed(), s2;
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj x;
	kgc_weak w;
	uint32_t hash;
	struct kgc_stats st;

	t_opts_small(&o, 64, 4);
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	{
	KGC_ROOTS(t, r, 5);	/* x, old node, young node, junk, ref array */
	r[3] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 4u << 20);	/* 5 regions, top */
	T_ASSERT(r[3]);
	r[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), XLEN);
	T_ASSERT(r[0]);
	s2 = seed;
	for (size_t i = 0; i < XLEN; i++)
		((uint64_t *)kgc_array_data(r[0]))[i] = t_rand(&s2);
	r[4] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 100000);	/* 800K: 1 region */
	T_ASSERT(r[4]);
	kgc_array_set_ref(t, r[4], 5, r[0]);
	r[1] = kgc_alloc(t, node);
	T_ASSERT(r[1]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* the node is old now; nothing has a hole to go to */
	T_ASSERT_EQ(t_stats(h).humongous_moved, 0);
	kgc_set_ref(t, r[1], N_LEFT, r[0]);
	w = kgc_weak_new(t, r[0]);
	T_ASSERT(w);
	hash = kgc_identity_hash(t, r[0]);
	r[3] = NULL;	/* a 5-region hole above the others */
	r[2] = kgc_alloc(t, node);
	T_ASSERT(r[2]);
	kgc_set_ref(t, r[2], N_LEFT, r[0]);
	x = r[0];
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	st = t_stats(h);
	printf("x %p -> %p; humongous moved %llu (%llu bytes), copied ranges %llu\n", (void *)x, (void *)r[0],
	       (unsigned long long)st.humongous_moved, (unsigned long long)st.humongous_moved_bytes,
	       (unsigned long long)st.region_moves_copied);
	T_ASSERT_EQ(st.humongous_moved, 2);	/* x and the ref array */
	T_ASSERT_EQ(st.region_moves_copied, ((struct kgc_heap *)h)->be.move_kind == MOVE_COPY ? 2 : 0);
	/* slid up by the hole; by 4 of its 5 regions where page tables move
	 * whole only by an even number of 1 MiB regions (mremap) */
	T_ASSERT((char *)r[0] == (char *)x + ((kgci_backend_move_granule(h) == 2 ? 4u : 5u) << 20));
	T_ASSERT(KGC_FIELD(r[1], N_LEFT, kgc_obj) == r[0]);
	T_ASSERT(KGC_FIELD(r[2], N_LEFT, kgc_obj) == r[0]);
	T_ASSERT(kgc_array_get_ref(r[4], 5) == r[0]);
	T_ASSERT(kgc_weak_get(t, w) == r[0]);
	T_ASSERT_EQ(kgc_identity_hash(t, r[0]), hash);
	T_ASSERT_EQ(kgc_array_length(r[0]), XLEN);
	s2 = seed;
	for (size_t i = 0; i < XLEN; i++)
		if (((uint64_t *)kgc_array_data(r[0]))[i] != t_rand(&s2))
			T_FAIL("word %zu of the moved array differs", i);
	T_ASSERT_EQ(st.regions_humongous, 19);
	/* the old place is free: a 9-region object fits only in one run there and below */
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 8u << 20));
	kgc_weak_free(t, w);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
