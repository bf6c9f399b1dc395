/* SPDX-License-Identifier: MIT */
/*
 * Native code holding a critical array may read its type, size and length
 * while young pauses run (issue 14, defect 5). A pause that finds the array's
 * region pinned keeps the array in place and sets, then clears, the GC tag
 * bits of its header word: atomically, and never the type, kind or length.
 * The holder reads kgc_obj_type, kgc_obj_size and kgc_array_length in a loop
 * while another thread collects; every read must be right (and TSan, which
 * runs every mt_ test, must see no race on the header word).
 */
#include <pthread.h>
#include <stdatomic.h>
#include "tgc.h"

#define LEN 1000

static kgc_heap *h;
static kgc_type_id NODE;
static atomic_int held, stop;

static void *collector(void *arg)
{
	kgc_thread *t;
	int n = 0;

	T_ASSERT_EQ(kgc_thread_attach(h, "collector", &t), 0);
	while (!atomic_load(&held))
		kgc_safepoint_poll(t);
	for (; n < 40; n++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	atomic_store(&stop, 1);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;
	kgc_type_id ty = KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG);
	pthread_t c;
	uint64_t reads = 0;
	size_t len, size;
	int64_t *e;

	h = t_heap(64, 8, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "holder", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc_array(t, ty, LEN);
	T_ASSERT(slot);
	size = kgc_obj_size(slot);
	T_ASSERT_EQ(pthread_create(&c, NULL, collector, NULL), 0);
	e = kgc_critical_get(t, &slot, &len);
	T_ASSERT(e && len == LEN);
	atomic_store(&held, 1);
	while (!atomic_load(&stop)) {
		if (kgc_obj_type(slot) != ty || kgc_obj_size(slot) != size || kgc_array_length(slot) != LEN)
			T_FAIL("held array %p read wrong: type %u size %zu length %zu", (void *)slot,
			       kgc_obj_type(slot), kgc_obj_size(slot), kgc_array_length(slot));
		e[reads % LEN] = (int64_t)reads;
		reads++;
	}
	T_ASSERT_EQ(kgc_critical_release(t, &slot, e, 0), 0);
	T_ASSERT_EQ(pthread_join(c, NULL), 0);
	T_ASSERT(t_stats(h).evac_fail_pinned > 0);
	printf("%llu reads of a held array's header and length during %llu young GCs "
	       "(%llu pinned evacuation failures)\n", (unsigned long long)reads,
	       (unsigned long long)t_stats(h).young_gcs, (unsigned long long)t_stats(h).evac_fail_pinned);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
