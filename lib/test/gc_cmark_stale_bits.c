/* SPDX-License-Identifier: MIT */
/*
 * A retained (formerly pinned) region evacuated while a concurrent cycle
 * marks leaves no mark bit behind. The region was old at the snapshot, so
 * the initial mark set bits in it (the array pinned there is a root); the
 * young GC that evacuates it frees it. A bit left in the free region makes
 * the object a later cycle finds at that address "already marked": never
 * scanned, so everything reachable only through it is swept (issue 14,
 * defect 1). Then the region is reused by promotion and a second cycle
 * runs over lists whose nodes land there; every list must survive.
 */
#include <time.h>
#include "tcycle.h"

#define NLISTS 64
#define LLEN 200

static kgc_type_id NODE;

/* Another thread: a young GC (the array pinned: R stays, a cycle starts),
 * then young GCs until the cycle is over (R pinned all along: not evacuated). */
static void *cycle_elsewhere(void *arg)
{
	kgc_heap *h = arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(h, "gc-helper", &t), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(strcmp(kgci_cm_test_state(h), "idle"));	/* the cycle started */
	t_cycle_finish(t, h);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };	/* 0: table of lists, 1: the array to pin, 2: scratch */
	struct kgc_frame f;
	uint32_t ridx;
	char *at;		/* where the pinned array was */
	pthread_t th;
	uint64_t cycles;
	size_t len, bits;
	void *p;

	t_opts_small(&o, 64, 8);
	o.ihop_percent = 1;	/* a cycle starts at every young GC that can start one */
	o.verify = 1;
	o.poison = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	/* the old list (table[1] until N takes over): built and promoted first,
	 * so that its promotion cannot take R, free and backed later, as to-space */
	t_list(t, NODE, &slots[2], LLEN, 7000);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	t_cycle_finish(t, h);
	T_ASSERT_EQ(region_of(h, slots[2])->type, RT_OLD);
	kgc_array_set_ref(t, slots[0], 1, slots[2]);
	slots[2] = NULL;

	/* R: eden region of the array; pinned across a young GC it stays in
	 * place as an old, retained region, and the cycle that starts at the
	 * end of that GC (marker held: nothing traced) marks the array */
	slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100);
	T_ASSERT(slots[1]);
	ridx = region_index(h, slots[1]);
	at = (char *)slots[1];
	kgci_cm_test_hold(h, true);
	p = kgc_critical_get(t, &slots[1], &len);
	T_ASSERT(p);
	t_collect_elsewhere(h, KGC_GC_YOUNG, 1, NODE);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[1], p, 0), 0);
	T_ASSERT_EQ(h->regions[ridx].retained, 1);
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));
	T_ASSERT(kgci_cm_test_bits(h, ridx) > 0);	/* the root array, marked */

	/* unpinned: the next young GC evacuates R during marking and frees it */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(h->regions[ridx].type, RT_FREE);
	bits = kgci_cm_test_bits(h, ridx);
	if (bits)
		T_FAIL("free region %u still has %zu mark bit(s) of the cycle that evacuated it", ridx, bits);
	kgci_cm_test_hold(h, false);
	t_cycle_finish(t, h);

	/* reuse: a node N lands where the array was, in eden, the only path to an old
	 * list; an array after it is pinned while another thread collects, so R
	 * becomes old in place, stays so for a whole cycle, and the cycle finds
	 * N below TAMS. A stale bit there: N never scanned, the list swept. */
	slots[2] = NULL;
	/* eden takes backed free regions such as R only while more are free
	 * than the next pause's to-space needs: free a young generation's worth */
	for (int i = 0; i < 200000; i++)
		T_ASSERT(kgc_alloc(t, NODE));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	for (int i = 0; i < 200000 && !slots[2]; i++) {
		kgc_obj n = kgc_alloc(t, NODE);

		T_ASSERT(n);
		if ((char *)n == at)
			slots[2] = n;
	}
	if (!slots[2])
		T_SKIP_IF(true, "no allocation landed where the pinned array was");
	kgc_set_ref(t, slots[2], N_LEFT, kgc_array_get_ref(slots[0], 1));
	KGC_FIELD(slots[2], N_VALUE, int64_t) = 7000 + LLEN;
	kgc_array_set_ref(t, slots[0], 0, slots[2]);
	kgc_array_set_ref(t, slots[0], 1, NULL);
	slots[2] = NULL;
	cycles = t_stats(h).concurrent_cycles;
	slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100);
	T_ASSERT(slots[1] && region_index(h, slots[1]) == ridx);
	p = kgc_critical_get(t, &slots[1], &len);
	T_ASSERT(p);
	T_ASSERT_EQ(pthread_create(&th, NULL, cycle_elsewhere, h), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[1], p, 0), 0);
	T_ASSERT_EQ(h->regions[ridx].type, RT_OLD);
	T_ASSERT_EQ(t_stats(h).concurrent_cycles, cycles + 1);
	t_cycle_finish(t, h);
	t_list_check(kgc_array_get_ref(slots[0], 0), LLEN + 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	t_list_check(kgc_array_get_ref(slots[0], 0), LLEN + 1);
	printf("region %u: no stale mark bit after its evacuation during marking; "
	       "a list reachable only from an object later placed at its address survived the next cycle\n", ridx);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
