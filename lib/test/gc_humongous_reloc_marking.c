/* SPDX-License-Identifier: MIT */
/*
 * Relocation while a concurrent cycle marks (collect.c no_cycle,
 * humreloc.c): humongous byte arrays (seeded sizes, 1-3 regions) fragment
 * a 64-region heap, every other one dies and is freed eagerly; then a
 * cycle starts over some old space and is held marking, and an allocation
 * larger than the longest free run is made. The relocating young pause
 * aborts the marking cycle (its mark bits and TAMS name the old places;
 * nothing is swept yet) and moves arrays without a full collection; the
 * survivors keep their contents, old space its list, the verifier runs
 * at every collection. Fails if the pause relocates with the cycle still
 * marking (no relocation: a full collection runs) or aborts one already
 * sweeping (slots into the sweep's fillers: the verifier).
 */
#include "tgc.h"
#include "../gc_internal.h"
#include "t_regions.h"

#define MAXA 40

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_options o;
	kgc_heap *h;
	struct kgc_heap *hi;
	kgc_thread *t;
	kgc_type_id node;
	kgc_obj slots[MAXA + 2] = { 0 };	/* [MAXA]: old list, +1: the new array */
	size_t len[MAXA];
	struct kgc_frame f;
	struct kgc_stats st;
	uint32_t run, need;
	int n = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_opts_small(&o, 64, 4);
	o.verify = 1;
	o.ihop_percent = 100;
	h = t_heap_opts(&o, &node);
	hi = (struct kgc_heap *)h;
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, MAXA + 2, NULL);
	t_list(t, node, &slots[MAXA], 20000, 0);	/* old space for the cycle to mark */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	n = t_fill_humongous(t, h, slots, len, MAXA, 44, 3, &seed);
	for (int i = 0; i < n; i += 2)
		slots[i] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* the dead freed eagerly */

	hi->opt.ihop_percent = 1;
	kgci_cm_test_hold(hi, true);
	for (int k = 0; k < 50 && strcmp(kgci_cm_test_state(hi), "marking"); k++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(!strcmp(kgci_cm_test_state(hi), "marking"));
	hi->opt.ihop_percent = 100;	/* no new cycle after the abort */
	st = t_stats(h);
	run = t_longest_free_run(hi);
	need = run + (st.regions_free - run) / 2;
	printf("%d arrays, %u regions free, longest run %u; cycle marking; allocating %u MiB\n", n,
	       st.regions_free, run, need);
	T_ASSERT(st.regions_free > need + 1);
	slots[MAXA + 1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ((size_t)need << 20) - 64);
	st = t_stats(h);
	printf("%s; cycle %s; full collections %llu, relocating young pauses %llu, moved %llu\n",
	       slots[MAXA + 1] ? "allocated" : "failed", kgci_cm_test_state(hi),
	       (unsigned long long)st.full_gcs, (unsigned long long)st.humongous_reloc_pauses,
	       (unsigned long long)st.humongous_moved_young);
	T_ASSERT(slots[MAXA + 1]);
	T_ASSERT_EQ(st.full_gcs, 1);	/* the setup's own */
	T_ASSERT_EQ(st.humongous_reloc_pauses, 1);
	T_ASSERT(strcmp(kgci_cm_test_state(hi), "marking"));	/* aborted */
	kgci_cm_test_hold(hi, false);
	for (int i = 1; i < n; i += 2) {
		const unsigned char *d = kgc_array_data(slots[i]);

		T_ASSERT_EQ(kgc_array_length(slots[i]), len[i]);
		for (size_t k = 0; k < len[i]; k += 4093)
			if (d[k] != (unsigned char)(i + 1))
				T_FAIL("array %d damaged at %zu", i, k);
	}
	t_list_check(slots[MAXA], 20000);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
