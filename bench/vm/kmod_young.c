/* SPDX-License-Identifier: MIT */
/*
 * kmod_young: young pause on a 4 GiB heap (2 MiB regions) with a small live
 * set (a 20000-node list), for the backend KGC_BACKEND selects. Run in the
 * VM rig once with KGC_BACKEND=kmod and once with KGC_BACKEND=anon
 * (arguments: young GCs to time, region size in MiB):
 *   cc -O2 -static -Ilib/include -Ilib/test bench/vm/kmod_young.c \
 *      lib/build/rel/libkgc.a -lffi -ldl -lpthread -lm -o /tmp/kmod_young
 * Prints the backend, young GCs and the mean/max young pause.
 */
#include "tgc.h"

int main(int argc, char **argv)
{
	int ngc = argc > 1 ? atoi(argv[1]) : 40;
	size_t region_mb = argc > 2 ? strtoul(argv[2], NULL, 0) : 2;
	struct kgc_options o;
	struct kgc_stats st;
	kgc_type_id node;
	kgc_obj slots[2] = { NULL, NULL };
	struct kgc_frame f;
	kgc_heap *h;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = (size_t)4 << 30;
	o.region_size = region_mb << 20;
	o.young_size = (size_t)16 << 20;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	for (int i = 0; i < 20000; i++) {
		slots[1] = kgc_alloc(t, node);
		kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
		slots[0] = slots[1];
	}
	slots[1] = NULL;
	t_churn(t, h, node, 5);		/* warm up: live set tenured */
	memset(&st, 0, sizeof(st));
	T_ASSERT_EQ(kgc_stats_get(h, &st, sizeof(st)), 0);
	{
		uint64_t g0 = st.young_gcs, p0 = st.pause_total_ns;

		t_churn(t, h, node, ngc);
		T_ASSERT_EQ(kgc_stats_get(h, &st, sizeof(st)), 0);
		printf("backend %s, %zu MiB regions: %llu young GCs, mean pause %.3f ms, max %.3f ms\n",
		       kgc_heap_backend(h), region_mb, (unsigned long long)(st.young_gcs - g0),
		       (st.pause_total_ns - p0) / 1e6 / (st.young_gcs - g0),
		       st.pause_max_ns / 1e6);
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	kgc_heap_destroy(h);
	return 0;
}
