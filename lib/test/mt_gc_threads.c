/* Several threads allocate linked lists, enter/leave native state, pin arrays
 * and collect concurrently; every thread's data survives intact. */
#include <stdatomic.h>
#include "tgc.h"

#define NT 4

static kgc_heap *h;
static kgc_type_id node;

static void *worker(void *arg)
{
	long id = (long)arg;
	kgc_thread *t;
	kgc_obj slots[3] = { 0 };
	struct kgc_frame f;
	char name[16];

	snprintf(name, sizeof(name), "w%ld", id);
	T_ASSERT_EQ(kgc_thread_attach(h, name, &t), 0);
	kgc_frame_push(t, &f, slots, 3, NULL);
	slots[2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 256);
	for (int round = 0; round < 6; round++) {
		slots[0] = NULL;
		for (int i = 0; i < 3000; i++) {
			slots[1] = kgc_alloc(t, node);
			T_ASSERT(slots[1]);
			KGC_FIELD(slots[1], N_VALUE, int64_t) = id * 1000000 + i;
			kgc_set_ref(t, slots[1], N_LEFT, slots[0]);
			slots[0] = slots[1];
			for (int g = 0; g < 20; g++)
				T_ASSERT(kgc_alloc(t, node));
			if (i % 500 == 0) {
				int32_t *p = kgc_critical_get(t, &slots[2], NULL);

				p[i % 256] += 1;
				kgc_critical_release(t, &slots[2], p, 0);
				kgc_enter_native(t);
				kgc_leave_native(t);
				kgc_safepoint_poll(t);
			}
		}
		if (round == 3 && id == 0)
			T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		{
			int64_t want = 2999;

			for (kgc_obj o = slots[0]; o; o = kgc_get_ref(o, N_LEFT))
				T_ASSERT_EQ(KGC_FIELD(o, N_VALUE, int64_t), id * 1000000 + want--);
			T_ASSERT_EQ(want, -1);
		}
	}
	{
		int sum = 0;

		for (int i = 0; i < 256; i++)
			sum += ((int32_t *)kgc_array_data(slots[2]))[i];
		T_ASSERT_EQ(sum, 6 * 6);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	pthread_t th[NT];
	struct kgc_stats s;

	h = t_heap(48, 6, &node);
	for (long i = 0; i < NT; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < NT; i++)
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
	s = t_stats(h);
	printf("young %llu full %llu\n", (unsigned long long)s.young_gcs, (unsigned long long)s.full_gcs);
	T_ASSERT(s.young_gcs >= 2);
	T_ASSERT_EQ(s.critical_gets, NT * 6 * 6);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
