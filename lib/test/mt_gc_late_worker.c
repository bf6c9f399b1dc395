/* SPDX-License-Identifier: MIT */
/*
 * A GC pool thread that wakes late does not hold the pause up: a hook
 * keeps the pool thread from joining until the collection has returned
 * (or 5 s pass). The young collection completes on the pausing thread
 * alone, every list survives it, and the next collection runs with the
 * pool thread again. It fails when the pause waits for every pool thread
 * (the hook then times out, and the collection took those 5 s).
 */
#include <stdatomic.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

#define NLISTS 512
#define LEN 16

static atomic_int released, timed_out, woke;
static _Atomic uint64_t held_gen;	/* the pause whose wake-up is held */

static void hold_until_released(uint64_t gen)
{
	/* a wake-up for an earlier pause, come late, is not this test's */
	if (gen != atomic_load(&held_gen))
		return;
	atomic_fetch_add(&woke, 1);
	for (int i = 0; i < 5000 && !atomic_load(&released); i++) {
		struct timespec ts = { 0, 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (!atomic_load(&released))
		atomic_store(&timed_out, 1);
}

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;

	t_opts_small(&o, 64, 16);
	o.gc_threads = 2;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLISTS);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* the table in old space */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* the pool threads exist */
	for (int i = 0; i < NLISTS; i++)
		kgc_array_set_ref(t, slots[0], (size_t)i, t_list(t, node, &slots[1], LEN, (int64_t)i * LEN));
	slots[1] = NULL;

	atomic_store(&held_gen, kgci_gang_test_gen((struct kgc_heap *)h) + 1);
	kgci_young_test_wake_hook = hold_until_released;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	atomic_store(&released, 1);
	printf("young collection with the pool thread held: copied %zuK; hook woke %d, timed out %d\n",
	       h->last_young.copied >> 10, atomic_load(&woke), atomic_load(&timed_out));
	T_ASSERT(atomic_load(&woke) <= 1);
	T_ASSERT_EQ(atomic_load(&timed_out), 0);
	T_ASSERT(h->last_young.copied >= (size_t)NLISTS * LEN * 32);
	for (int i = 0; i < NLISTS; i++) {
		kgc_obj n = kgc_array_get_ref(slots[0], (size_t)i);

		T_ASSERT(n && region_of(h, n)->type != RT_EDEN);
		T_ASSERT_EQ(KGC_FIELD(n, N_VALUE, int64_t), (int64_t)i * LEN + LEN - 1);
		t_list_check(n, LEN);
	}
	/* the held thread is back: it takes part in the next pauses */
	kgci_young_test_wake_hook = NULL;
	for (int k = 0; k < 4; k++) {
		for (int i = 0; i < NLISTS; i += 2)
			kgc_array_set_ref(t, slots[0], (size_t)i, t_list(t, node, &slots[1], LEN, (int64_t)i * LEN));
		slots[1] = NULL;
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	}
	for (int i = 0; i < NLISTS; i++)
		t_list_check(kgc_array_get_ref(slots[0], (size_t)i), LEN);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	puts("PASS");
	return 0;
}
