/* SPDX-License-Identifier: MIT */
/*
 * When the kernel's pins cannot be queried (a failed KGC_IOC_PIN_QUERY,
 * forced here with a test hook on any backend), a collection treats every
 * region in use as kernel-pinned: neither a young nor a full collection
 * moves anything, every object stays intact. Once queries work again,
 * collections move objects as usual.
 */
#include "tgc.h"
#include "../mutator/crit_fast.h"

#define N 6000	/* list nodes: 2/3 made before a full GC (old), 1/3 after (young) */

static void check_list(kgc_obj head, kgc_obj *addr, const char *when)
{
	int64_t want = N - 1;

	for (kgc_obj o = head; o; o = kgc_get_ref(o, N_LEFT), want--) {
		T_ASSERT(want >= 0);
		if (addr && o != addr[want])
			T_FAIL("%s: node %lld moved from %p to %p", when, (long long)want,
			       (void *)addr[want], (void *)o);
		T_ASSERT_EQ(KGC_FIELD(o, N_VALUE, int64_t), want);
	}
	T_ASSERT_EQ(want, -1);
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_obj *addr = calloc(N, sizeof(*addr));
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s0, s;
	kgc_thread *t;
	int moved = 0;

	T_ASSERT(addr);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	for (int i = 0; i < N; i++) {
		if (i == 2 * N / 3)	/* the list spans old and young regions */
			T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		slots[1] = kgc_alloc(t, node);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = i;
		kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
		slots[0] = slots[1];
		T_ASSERT(kgc_alloc(t, node));	/* garbage in between */
	}
	slots[1] = NULL;
	{
		int64_t k = N - 1;

		for (kgc_obj o = slots[0]; o; o = kgc_get_ref(o, N_LEFT))
			addr[k--] = o;
	}
	s0 = t_stats(h);

	kgci_pins_test_fail_kernel_query(h, 2);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check_list(slots[0], addr, "young GC, pin query failing");
	s = t_stats(h);
	T_ASSERT_EQ(s.young_gcs, s0.young_gcs + 1);
	T_ASSERT_EQ(s.bytes_copied, s0.bytes_copied);
	T_ASSERT(s.evac_fail_kernel_pinned > s0.evac_fail_kernel_pinned);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check_list(slots[0], addr, "full GC, pin query failing");
	s0 = t_stats(h);
	T_ASSERT_EQ(s0.full_gcs, s.full_gcs + 1);

	/* the hook is spent: a full GC compacts the garbage out again */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check_list(slots[0], NULL, "full GC");
	{
		int64_t k = N - 1;

		for (kgc_obj o = slots[0]; o; o = kgc_get_ref(o, N_LEFT), k--)
			moved += o != addr[k];
	}
	printf("full GC after the failures moved %d of %d nodes\n", moved, N);
	T_ASSERT(moved > 0);

	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	free(addr);
	puts("ok");
	return 0;
}
