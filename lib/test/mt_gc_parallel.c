/* Parallel young evacuation (4 workers): a random graph with shared nodes,
 * a pinned array and a forced to-space failure keeps its exact shape. */
#include "tgc.h"

void kgci_evac_test_inject_failure(kgc_heap *h, int ngcs);

#define N 60000

static uint64_t shape(kgc_obj arr)
{
	uint64_t s = 0;

	/* values are unique per node: hash (value, left value, right value) */
	for (size_t i = 0; i < N; i++) {
		kgc_obj n = kgc_array_get_ref(arr, i), l, r;

		l = kgc_get_ref(n, N_LEFT);
		r = kgc_get_ref(n, N_RIGHT);
		s = s * 1000003 + (uint64_t)KGC_FIELD(n, N_VALUE, int64_t);
		s = s * 31 + (l ? (uint64_t)KGC_FIELD(l, N_VALUE, int64_t) : 77);
		s = s * 37 + (r ? (uint64_t)KGC_FIELD(r, N_VALUE, int64_t) : 99);
	}
	return s;
}

int main(void)
{
	unsigned long long seed = t_seed();
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };
	struct kgc_frame f;
	uint64_t want;
	void *p;

	setenv("KGC_GC_THREADS", "4", 1);
	setenv("KGC_TENURE", "2", 1);
	h = t_heap(96, 16, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, N);
	for (size_t i = 0; i < N; i++) {
		slots[1] = kgc_alloc(t, node);
		KGC_FIELD(slots[1], N_VALUE, int64_t) = (int64_t)i + 1;
		kgc_array_set_ref(t, slots[0], i, slots[1]);
		for (int g = 0; g < 3; g++)
			T_ASSERT(kgc_alloc(t, node));	/* garbage between live nodes */
	}
	for (size_t i = 0; i < N; i++) {
		kgc_obj n = kgc_array_get_ref(slots[0], i);

		kgc_set_ref(t, n, N_LEFT, kgc_array_get_ref(slots[0], t_rand(&seed) % N));
		if (t_rand(&seed) & 1)
			kgc_set_ref(t, n, N_RIGHT, kgc_array_get_ref(slots[0], t_rand(&seed) % N));
	}
	want = shape(slots[0]);
	slots[2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 1000);
	((int64_t *)kgc_array_data(slots[2]))[999] = 4242;
	p = kgc_critical_get(t, &slots[2], NULL);
	t_collect_elsewhere(h, KGC_GC_YOUNG, 3, node);
	T_ASSERT_EQ(((int64_t *)p)[999], 4242);
	T_ASSERT_EQ(kgc_critical_release(t, &slots[2], p, 0), 0);
	T_ASSERT_EQ(shape(slots[0]), want);
	T_ASSERT(t_stats(h).evac_fail_pinned >= 1);
	kgci_evac_test_inject_failure(h, 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(shape(slots[0]), want);
	t_churn(t, h, node, 4);
	T_ASSERT_EQ(shape(slots[0]), want);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(shape(slots[0]), want);
	T_ASSERT_EQ(((int64_t *)kgc_array_data(slots[2]))[999], 4242);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
