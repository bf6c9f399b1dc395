/* SPDX-License-Identifier: MIT */
/*
 * A retained region is evacuated while a concurrent cycle is marking, and
 * the cycle stays complete (the verifier checks at remark that every
 * reachable object below TAMS is marked; poison makes stale pointers into
 * the freed region fatal). Region R holds X_1..X_n (each the only path to
 * an old Y_i, stored in an old table) and X_0, whose table slot is
 * overwritten after the cycle started (so only an SATB entry still names
 * it) while Y_0, loaded from it, sits in a root. With the marker held,
 * nothing was traced when R is evacuated, so:
 *  - X_1..X_n are found through the table's dirty cards and copied above
 *    TAMS: only tracing the copies again marks Y_1..Y_n;
 *  - X_0 is reached only through the SATB entry, a root of that young
 *    collection: without it the entry would name freed memory and Y_0
 *    would stay unmarked.
 */
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define NX 64

static kgc_type_id NODE;

static kgc_heap *heap_marking(void)
{
	struct kgc_options o;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64ul << 20;
	o.region_size = 1ul << 20;
	o.young_size = 8ul << 20;
	o.ihop_percent = 1;	/* a cycle starts after the first young GC */
	o.verify = 1;
	o.poison = 1;
	return t_heap_opts(&o, &NODE);
}

static void check(kgc_obj table, kgc_obj y0)
{
	T_ASSERT_EQ(KGC_FIELD(y0, N_VALUE, int64_t), 1000);
	T_ASSERT(kgc_array_get_ref(table, 0) == NULL);
	for (int i = 1; i < NX; i++) {
		kgc_obj x = kgc_array_get_ref(table, i), y;

		T_ASSERT(x);
		T_ASSERT_EQ(KGC_FIELD(x, N_VALUE, int64_t), i);
		y = KGC_FIELD(x, N_LEFT, kgc_obj);
		T_ASSERT(y);
		T_ASSERT_EQ(KGC_FIELD(y, N_VALUE, int64_t), 1000 + i);
	}
}

int main(void)
{
	kgc_heap *h = heap_marking();
	kgc_thread *t;
	kgc_obj slots[4] = { 0 };	/* 0: table, 1: pinned array, 2: scratch, 3: Y_0 */
	struct kgc_frame f;
	uint32_t ridx;
	size_t len;
	void *p;
	int gcs = 0;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 4, NULL);

	/* the table and Y_i in old space (Y_i held by the table for now) */
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 2 * NX);
	T_ASSERT(slots[0]);
	for (int i = 0; i < NX; i++) {
		slots[2] = kgc_alloc(t, NODE);
		T_ASSERT(slots[2]);
		KGC_FIELD(slots[2], N_VALUE, int64_t) = 1000 + i;
		kgc_array_set_ref(t, slots[0], NX + i, slots[2]);
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(region_of(h, slots[0])->type, RT_OLD);

	/* region R: the array to pin, then X_i -> Y_i; the table keeps only X_i */
	slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100);
	T_ASSERT(slots[1]);
	ridx = region_index(h, slots[1]);
	for (int i = 0; i < NX; i++) {
		slots[2] = kgc_alloc(t, NODE);
		T_ASSERT(slots[2] && region_index(h, slots[2]) == ridx);
		KGC_FIELD(slots[2], N_VALUE, int64_t) = i;
		kgc_set_ref(t, slots[2], N_LEFT, kgc_array_get_ref(slots[0], NX + i));
		kgc_array_set_ref(t, slots[0], i, slots[2]);
		kgc_array_set_ref(t, slots[0], NX + i, NULL);
	}
	slots[2] = NULL;

	/* pinned across a young GC run elsewhere: R fails evacuation; the cycle
	 * starts at its end and, held, traces nothing */
	kgci_cm_test_hold(h, true);
	p = kgc_critical_get(t, &slots[1], &len);
	T_ASSERT(p);
	t_collect_elsewhere(h, KGC_GC_YOUNG, 1, NODE);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[1], p, KGC_CRITICAL_COMMIT), 0);
	slots[1] = NULL;
	T_ASSERT_EQ(h->regions[ridx].type, RT_OLD);
	T_ASSERT_EQ(h->regions[ridx].retained, 1);
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));

	/* X_0: its only reference overwritten (SATB logs it); Y_0 into a root */
	slots[3] = KGC_FIELD(kgc_array_get_ref(slots[0], 0), N_LEFT, kgc_obj);
	kgc_array_set_ref(t, slots[0], 0, NULL);

	/* unpinned: this young GC evacuates R although the cycle is marking */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	if (h->regions[ridx].retained)
		T_FAIL("region %u still retained: not evacuated during marking", ridx);
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking"));
	check(slots[0], slots[3]);

	/* let the cycle finish: remark verifies marking completeness */
	kgci_cm_test_hold(h, false);
	while (strcmp(kgci_cm_test_state(h), "idle") && gcs < 2000) {
		struct timespec ts = { 0, 2000000 };

		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		gcs++;
		kgc_enter_native(t);
		nanosleep(&ts, NULL);
		kgc_leave_native(t);
	}
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "idle"));
	T_ASSERT_EQ(t_stats(h).concurrent_cycles, 1);
	T_ASSERT_EQ(t_stats(h).full_gcs, 1);	/* only the one above */
	check(slots[0], slots[3]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check(slots[0], slots[3]);
	printf("retained region %u evacuated during marking; cycle completed after %d more young GCs\n",
	       ridx, gcs);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
