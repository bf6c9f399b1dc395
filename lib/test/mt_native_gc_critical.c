/* SPDX-License-Identifier: MIT */
/*
 * A long critical native (and a regular native inside
 * GetPrimitiveArrayCritical) while another thread allocates and forces
 * collections: the collections complete while the native is still running
 * (they do not wait for it), the pinned array neither moves nor changes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include "nt_gc.h"

#define NGC 4
#define N 1024

static void *seen_elems;

static int64_t sum(const int32_t *p, int32_t n)
{
	int64_t s = 0;

	for (int32_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

/* critical: (len, ptr); returns the sum, or -1 if the collections waited */
static int64_t c_long(int32_t len, int32_t *p, int32_t ngc)
{
	seen_elems = p;
	atomic_store(&nt_running, 1);
	if (nt_wait_gcs(ngc))
		return -1;
	atomic_store(&nt_running, 0);
	return sum(p, len);
}

/* regular, holding the array critical through the env */
static int64_t r_long(kgc_env *env, kgc_jclass c, kgc_jobject arr, int32_t ngc)
{
	size_t n;
	int32_t *p = (*env)->GetPrimitiveArrayCritical(env, arr, &n);
	int64_t s;

	if (!p)
		return -2;
	seen_elems = p;
	atomic_store(&nt_running, 1);
	if (nt_wait_gcs(ngc)) {
		(*env)->ReleasePrimitiveArrayCritical(env, arr, p, 0);
		return -1;
	}
	atomic_store(&nt_running, 0);
	s = sum(p, (int32_t)n);
	(*env)->ReleasePrimitiveArrayCritical(env, arr, p, 0);
	return s;
}

int main(void)
{
	const uint32_t C = KGC_NATIVE_CRITICAL | KGC_NATIVE_STATIC;
	struct kgc_stats st0, st1;
	union kgc_value a[2], r;
	struct kgc_frame f;
	kgc_obj s[1];
	kgc_method *cm, *rm;
	int64_t want = 0;
	pthread_t th;

	setenv("KGC_POISON", "1", 0);
	nt_setup();
	cm = nt_reg("kgc/test/Crit", "hold", "([II)J", c_long, C);
	rm = nt_reg("kgc/test/Crit", "holdRegular", "([II)J", r_long, KGC_NATIVE_STATIC);
	kgc_frame_push(nt_thread, &f, s, 1, NULL);
	s[0] = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), N);
	for (int i = 0; i < N; i++) {
		((int32_t *)kgc_array_data(s[0]))[i] = i * 3 - 100;
		want += i * 3 - 100;
	}
	T_ASSERT_EQ(pthread_create(&th, NULL, nt_gc_thread, NULL), 0);

	/*
	 * round 0: critical native; 1: regular native + critical API; 2: critical
	 * native on an array that is in no root but the call's arguments (the
	 * bridge must keep it alive; from-space and dead space are poisoned).
	 */
	for (int round = 0; round < 3; round++) {
		kgc_method *m = round == 1 ? rm : cm;
		kgc_obj fresh = NULL;

		if (round == 2) {
			fresh = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), N);
			T_ASSERT(fresh);
			memcpy(kgc_array_data(fresh), kgc_array_data(s[0]), N * sizeof(int32_t));
		}
		T_ASSERT_EQ(kgc_stats_get(nt_heap, &st0, sizeof(st0)), 0);
		a[0].l = round == 2 ? fresh : s[0];
		a[1].i = NGC;
		T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
		if (r.j == -1)
			T_FAIL("%s: collections did not complete while the native held the array",
			       round == 1 ? "regular+critical" : "critical");
		T_ASSERT_EQ(r.j, want);
		/* pinned: still where the native saw it */
		if (round < 2)
			T_ASSERT(kgc_array_data(s[0]) == seen_elems);
		T_ASSERT_EQ(kgc_stats_get(nt_heap, &st1, sizeof(st1)), 0);
		printf("%s: %llu young + %llu full collections during the call, "
		       "%llu regions failed evacuation (pinned)\n", round == 1 ? "regular" : round ? "critical (unrooted array)" : "critical",
		       (unsigned long long)(st1.young_gcs - st0.young_gcs),
		       (unsigned long long)(st1.full_gcs - st0.full_gcs),
		       (unsigned long long)(st1.evac_fail_pinned - st0.evac_fail_pinned));
		T_ASSERT(st1.young_gcs + st1.full_gcs >= st0.young_gcs + st0.full_gcs + NGC);
	}
	atomic_store(&nt_stop, 1);
	/* the other thread may be collecting: don't hold it up while joining */
	kgc_enter_native(nt_thread);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(nt_thread);
	/* after release the array may move again */
	T_ASSERT_EQ(kgc_collect(nt_thread, KGC_GC_FULL), 0);
	T_ASSERT_EQ(sum(kgc_array_data(s[0]), N), want);
	T_ASSERT_EQ(kgc_frame_pop(nt_thread, &f), 0);
	nt_teardown();
	puts("ok");
	return 0;
}
