/* SPDX-License-Identifier: MIT */
/*
 * Two GC workers share the old->young slots one of them found. Every young
 * list hangs off one old reference array: its dirty cards are in one
 * region, so one worker's card scan finds every slot, and each slot leads
 * to a chain copying cannot split. A hook slows that worker down per batch
 * of its own slots; the other must take batches from it (the count of
 * slots taken from another worker's list). All lists keep their contents.
 */
#include <stdatomic.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define NLISTS 2048
#define LEN 16

static atomic_int stolen;

/* The finder is slow on its own batches; the other worker, if it gets there
 * first, waits once so the finder (the requesting thread, woken from the
 * card-scan barrier) takes part at all. */
static void slow_own(bool own)
{
	struct timespec ts = { 0, 200 * 1000 }, first = { 0, 2000 * 1000 };

	if (own)
		nanosleep(&ts, NULL);
	else if (!atomic_exchange(&stolen, 1))
		nanosleep(&first, NULL);
}

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	size_t copied, max;

	t_opts_small(&o, 64, 16);
	o.gc_threads = 2;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);

	/* the array in old space, then young lists stored into it */
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(region_of(h, slots[0])->type, RT_OLD);
	for (int i = 0; i < NLISTS; i++)
		kgc_array_set_ref(t, slots[0], (size_t)i, t_list(t, node, &slots[1], LEN, (int64_t)i * LEN));
	slots[1] = NULL;
	T_ASSERT_EQ(t_stats(h).young_gcs, 0);

	kgci_young_test_batch_hook = slow_own;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	kgci_young_test_batch_hook = NULL;

	copied = h->last_young.copied;
	max = h->last_young.copied_max;
	printf("copied %zuK, at most %zuK by one worker\n", copied >> 10, max >> 10);
	T_ASSERT(copied >= (size_t)NLISTS * LEN * 32);
	printf("%zu card slots, %zu taken from the finder\n", h->last_young.slots, h->last_young.slots_taken);
	T_ASSERT_EQ(h->last_young.slots, NLISTS);
	T_ASSERT(h->last_young.slots_taken > 0);
	for (int i = 0; i < NLISTS; i++) {
		kgc_obj n = kgc_array_get_ref(slots[0], (size_t)i);

		T_ASSERT(n && region_of(h, n)->type == RT_OLD);
		T_ASSERT_EQ(KGC_FIELD(n, N_VALUE, int64_t), (int64_t)i * LEN + LEN - 1);
		t_list_check(n, LEN);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
