/* SPDX-License-Identifier: MIT */
/*
 * A dead humongous ref array stays dead between the sweep and the Cleanup
 * pause (issue 14, defect 2). The array and the old nodes it holds die
 * together; the sweep turns the nodes into one filler run and lists the
 * array for cleanup. A young GC in that window verifies the heap first: the
 * verifier must see the array as garbage (kgci_cm_obj_dead) and not follow its
 * references into the filler. Cleanup then frees its regions.
 */
#include <time.h>
#include "tcycle.h"

#define NX 256
#define HLEN (200 * 1024)	/* 1.6 MiB of slots: humongous with 1 MiB regions */

static kgc_type_id NODE;

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	uint32_t hidx, hum_before;

	t_opts_small(&o, 64, 4);
	o.ihop_percent = 1;
	o.verify = 1;
	o.poison = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);

	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, HLEN);
	T_ASSERT(slots[0]);
	hidx = region_index(h, slots[0]);
	T_ASSERT_EQ(h->regions[hidx].type, RT_HUM_START);
	for (int i = 0; i < NX; i++) {
		slots[1] = kgc_alloc(t, NODE);
		T_ASSERT(slots[1]);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = i;
		kgc_array_set_ref(t, slots[0], (size_t)i * 700, slots[1]);
	}
	slots[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* nodes promoted (tenure 1) */
	t_cycle_wait(t, h, "idle", true);
	T_ASSERT_EQ(region_of(h, kgc_array_get_ref(slots[0], 0))->type, RT_OLD);

	/* both die; the next young GC starts a cycle, the marker marks and sweeps */
	slots[0] = NULL;
	hum_before = h->count[RT_HUM_START];
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "marking") || !strcmp(kgci_cm_test_state(h), "remark-ready"));
	t_cycle_wait(t, h, "remark-ready", false);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* remark */
	t_cycle_wait(t, h, "swept", false);
	/* swept, not cleaned up: this young GC's verifier walks the dead array */
	T_ASSERT(kgci_cm_obj_dead(h, h->regions[hidx].bottom));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* cleanup */
	T_ASSERT(!strcmp(kgci_cm_test_state(h), "idle"));
	T_ASSERT_EQ(h->count[RT_HUM_START], hum_before - 1);
	T_ASSERT_EQ(h->regions[hidx].type, RT_FREE);
	printf("dead humongous ref array in region %u: garbage for the verifier between sweep and "
	       "cleanup, freed at cleanup\n", hidx);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
