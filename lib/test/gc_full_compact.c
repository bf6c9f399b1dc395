/* Full GC: mark + sliding compaction; live data intact, old space shrinks, handles updated. */
#include "tgc.h"

static uint64_t checksum(kgc_obj arr)
{
	uint64_t s = 0;

	for (size_t i = 0; i < kgc_array_length(arr); i++) {
		kgc_obj n = kgc_array_get_ref(arr, i);

		if (n)
			s = s * 31 + (uint64_t)KGC_FIELD(n, N_VALUE, int64_t) +
			    (kgc_get_ref(n, N_LEFT) ? (uint64_t)KGC_FIELD(kgc_get_ref(n, N_LEFT), N_VALUE, int64_t) : 7);
	}
	return s;
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };
	struct kgc_frame f;
	kgc_handle hd;
	uint64_t sum;
	struct kgc_stats s1, s2;
	const size_t N = 40000;

	setenv("KGC_TENURE", "0", 1);	/* everything surviving a young GC goes old */
	h = t_heap(64, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, N);
	T_ASSERT(slots[0]);
	for (size_t i = 0; i < N; i++) {
		slots[1] = kgc_alloc(t, node);
		T_ASSERT(slots[1]);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = (int64_t)i * 3;
		if (i)
			kgc_set_ref(t, slots[1], N_LEFT, kgc_array_get_ref(slots[0], i - 1));
		kgc_array_set_ref(t, slots[0], i, slots[1]);
	}
	hd = kgc_handle_new(t, kgc_array_get_ref(slots[0], 12345));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* promote everything */
	/* drop every other node (but the chain through LEFT keeps some alive) */
	for (size_t i = 0; i < N; i += 2)
		kgc_array_set_ref(t, slots[0], i, NULL);
	for (size_t i = 1; i < N; i += 2)
		kgc_set_ref(t, kgc_array_get_ref(slots[0], i), N_LEFT, NULL);
	sum = checksum(slots[0]);
	s1 = t_stats(h);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	s2 = t_stats(h);
	printf("old regions %u -> %u, used %llu -> %llu\n", s1.regions_old, s2.regions_old,
	       (unsigned long long)s1.heap_used, (unsigned long long)s2.heap_used);
	T_ASSERT(s2.heap_used < s1.heap_used * 3 / 4);
	T_ASSERT_EQ(s2.full_gcs, 1);
	T_ASSERT_EQ(checksum(slots[0]), sum);
	T_ASSERT_EQ(KGC_FIELD(kgc_handle_get(hd), N_VALUE, int64_t), 12345 * 3);
	T_ASSERT(kgc_handle_get(hd) == kgc_array_get_ref(slots[0], 12345));
	/* young objects referenced from compacted old ones survive the next GCs */
	for (int round = 0; round < 3; round++) {
		slots[1] = kgc_alloc(t, node);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = 777 + round;
		kgc_array_set_ref(t, slots[0], 2 * round, slots[1]);
		slots[1] = NULL;
		t_churn(t, h, node, 2);
		T_ASSERT_EQ(KGC_FIELD(kgc_array_get_ref(slots[0], 2 * round), N_VALUE, int64_t), 777 + round);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		T_ASSERT_EQ(KGC_FIELD(kgc_array_get_ref(slots[0], 2 * round), N_VALUE, int64_t), 777 + round);
	}
	kgc_handle_free(t, hd);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
