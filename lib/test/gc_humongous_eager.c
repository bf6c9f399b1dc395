/* SPDX-License-Identifier: MIT */
/*
 * Eager reclaim of humongous objects (young.c; G1's): a young collection
 * frees a dead humongous primitive array - no full collection, no cycle -
 * and only a dead one:
 *  1. dropped: freed by the next young GC (stats humongous_eager, regions);
 *  2. held by a root: kept, contents intact, across young GCs;
 *  3. held only by a young object: kept; once that object is promoted (old
 *     space refers to it) never freed eagerly, even after it dies - a full
 *     GC frees it;
 *  4. stored into an old object (write barrier), its root dropped: kept;
 *  5. only a weak reference left: freed, and the weak reference cleared;
 *  6. dropped while a concurrent cycle marks: kept (the marking may hold
 *     it), freed by a young GC once no cycle runs;
 *  7. a humongous reference array is never freed eagerly.
 * The verifier runs at every collection: a freed array still referenced is
 * a slot into a free region. Fails with the roots' or the young objects'
 * references not counted (2, 3), or the old ones' (4).
 */
#include "tgc.h"
#include "../gc_internal.h"

#define ARR_LEN ((2u << 20) / 8)	/* 2 MiB of longs: 3 regions */

static kgc_heap *h;
static kgc_thread *t;
static kgc_type_id NODE;

static struct kgc_stats st(void)
{
	return t_stats(h);
}

static kgc_obj new_array(int64_t seed)
{
	kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), ARR_LEN);

	T_ASSERT(a != NULL);
	for (size_t i = 0; i < ARR_LEN; i += 512)
		((int64_t *)kgc_array_data(a))[i] = seed + (int64_t)i;
	return a;
}

static void check_array(kgc_obj a, int64_t seed)
{
	T_ASSERT(a != NULL);
	for (size_t i = 0; i < ARR_LEN; i += 512)
		if (((int64_t *)kgc_array_data(a))[i] != seed + (int64_t)i)
			T_FAIL("array of seed %lld damaged at %zu", (long long)seed, i);
}

static void young(int n)
{
	for (int i = 0; i < n; i++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
}

int main(void)
{
	kgc_obj slots[4] = { 0 };
	struct kgc_frame f;
	struct kgc_options o;
	struct kgc_stats s0;
	kgc_weak w;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_opts_small(&o, 64, 4);
	o.tenure_threshold = 3;		/* case 3: a survivor for two young GCs */
	o.verify = 1;
	o.ihop_percent = 100;		/* no cycles but case 6's */
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "eager", &t), 0);
	kgc_frame_push(t, &f, slots, 4, NULL);

	/* 1: dropped */
	s0 = st();
	slots[0] = new_array(1);
	T_ASSERT_EQ(st().regions_humongous, s0.regions_humongous + 3);
	slots[0] = NULL;
	young(1);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager + 1);
	T_ASSERT_EQ(st().regions_humongous, s0.regions_humongous);
	T_ASSERT_EQ(st().full_gcs, s0.full_gcs);

	/* 2: a root */
	s0 = st();
	slots[0] = new_array(2);
	young(3);
	check_array(slots[0], 2);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager);
	slots[0] = NULL;
	young(1);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager + 1);

	/* 3: a young object, then the same object promoted */
	s0 = st();
	slots[1] = kgc_alloc(t, NODE);
	slots[0] = new_array(3);
	kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
	slots[0] = NULL;
	young(2);	/* the node survives (survivor), the array with it */
	check_array(kgc_get_ref(slots[1], N_LEFT), 3);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager);
	young(3);	/* the node is promoted: old space refers to the array */
	check_array(kgc_get_ref(slots[1], N_LEFT), 3);
	slots[1] = NULL;
	young(2);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager);	/* remembered: left to a full GC */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(st().regions_humongous, s0.regions_humongous);

	/* 4: an old object (after a full GC, old space is the node) */
	s0 = st();
	slots[1] = kgc_alloc(t, NODE);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	slots[0] = new_array(4);
	kgc_set_ref(t, slots[1], N_RIGHT, slots[0]);	/* carded by the write barrier */
	slots[0] = NULL;
	young(2);
	check_array(kgc_get_ref(slots[1], N_RIGHT), 4);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager);
	slots[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);

	/* 5: a weak reference only */
	s0 = st();
	slots[0] = new_array(5);
	w = kgc_weak_new(t, slots[0]);
	T_ASSERT(w != NULL);
	young(1);
	T_ASSERT(kgc_weak_get(t, w) == slots[0]);
	slots[0] = NULL;
	young(1);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager + 1);
	T_ASSERT(kgc_weak_get(t, w) == NULL);
	kgc_weak_free(t, w);

	/* 6: while a cycle marks (held: it stays marking) */
	{
		struct kgc_heap *hi = (struct kgc_heap *)h;

		t_list(t, NODE, &slots[2], 40000, 0);	/* ~1.6 MiB of old space to mark */
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		s0 = st();
		hi->opt.ihop_percent = 1;
		kgci_cm_test_hold(hi, true);
		for (int k = 0; k < 50 && strcmp(kgci_cm_test_state(hi), "marking"); k++)
			young(1);
		T_ASSERT(!strcmp(kgci_cm_test_state(hi), "marking"));
		slots[0] = new_array(6);
		slots[0] = NULL;
		young(2);
		T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager);
		hi->opt.ihop_percent = 100;
		kgci_cm_test_hold(hi, false);
		for (int k = 0; k < 2000 && strcmp(kgci_cm_test_state(hi), "idle"); k++) {
			young(1);
			t_nap_native(t, 1000);
		}
		T_ASSERT(!strcmp(kgci_cm_test_state(hi), "idle"));
		/* the cycle itself may have freed it (dead at its remark) */
		young(1);
		T_ASSERT_EQ(st().regions_humongous, s0.regions_humongous);
	}

	/* 7: a humongous reference array */
	s0 = st();
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, ARR_LEN);
	T_ASSERT(slots[0] != NULL);
	slots[0] = NULL;
	young(2);
	T_ASSERT_EQ(st().humongous_eager, s0.humongous_eager);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(st().regions_humongous, s0.regions_humongous);

	printf("eager: %llu humongous arrays freed by young GCs\n", (unsigned long long)st().humongous_eager);
	kgc_frame_pop(t, &f);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
