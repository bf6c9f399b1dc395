/* SPDX-License-Identifier: MIT */
/*
 * A critical native called through its prepared entry (kgc_native_entry,
 * KGC_NATIVE_SHAPE_L_I) holds its array while another thread allocates and
 * forces young and full collections: the collections complete during the
 * call (the caller is in native state), the array neither moves nor
 * changes while the native runs (pinned), also when nothing but the call
 * references it, and the regular-native entry holding the array through
 * the env's critical API behaves the same.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include "nt_gc.h"

#define NGC 4
#define N 1024

static void *seen_elems;
static int32_t seen_sum_before;

static int32_t sum(const int32_t *p, int32_t n)
{
	int32_t s = 0;

	for (int32_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

/*
 * -1: collections did not complete; -2: the elements changed under us; -3:
 * the array itself is gone (its header no longer an int[len]: a collection
 * took it for dead and left a filler - the call must keep it alive).
 */
static int32_t c_hold(int32_t len, int32_t *p)
{
	kgc_obj o = (kgc_obj)((char *)p - KGC_ARRAY_DATA_OFFSET);

	seen_elems = p;
	seen_sum_before = sum(p, len);
	atomic_store(&nt_running, 1);
	if (nt_wait_gcs(NGC))
		return -1;
	atomic_store(&nt_running, 0);
	if (sum(p, len) != seen_sum_before)
		return -2;
	if (kgc_obj_type(o) != KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT) || kgc_array_length(o) != (size_t)len)
		return -3;
	return seen_sum_before;
}

static int32_t r_hold(kgc_env *env, kgc_jclass c, kgc_jobject arr)
{
	size_t n;
	int32_t *p = (*env)->GetPrimitiveArrayCritical(env, arr, &n);
	int32_t s;

	if (!p)
		return -4;
	s = c_hold((int32_t)n, p);
	(*env)->ReleasePrimitiveArrayCritical(env, arr, p, 0);
	return s;
}

int main(void)
{
	struct kgc_stats st0, st1;
	union kgc_native_entry ce, re;
	struct kgc_frame f;
	kgc_obj s[1];
	kgc_method *cm, *rm;
	int32_t want = 0, got;
	pthread_t th;

	setenv("KGC_POISON", "1", 0);
	nt_setup();
	cm = nt_reg("kgc/test/EntryGc", "hold", "([I)I", c_hold,
		    KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL);
	rm = nt_reg("kgc/test/EntryGc", "holdRegular", "([I)I", r_hold, KGC_NATIVE_STATIC);
	T_ASSERT_EQ(kgc_native_entry(cm, KGC_NATIVE_SHAPE_L_I, &ce), 0);
	T_ASSERT_EQ(kgc_native_entry(rm, KGC_NATIVE_SHAPE_L_I, &re), 0);
	kgc_frame_push(nt_thread, &f, s, 1, NULL);
	s[0] = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), N);
	T_ASSERT(s[0]);
	for (int i = 0; i < N; i++) {
		((int32_t *)kgc_array_data(s[0]))[i] = i * 3 - 100;
		want += i * 3 - 100;
	}
	T_ASSERT_EQ(pthread_create(&th, NULL, nt_gc_thread, NULL), 0);

	/* 0: critical entry, rooted array; 1: regular entry; 2: critical, unrooted */
	for (int round = 0; round < 3; round++) {
		kgc_obj arg = s[0];

		if (round == 2) {
			arg = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), N);
			T_ASSERT(arg);
			memcpy(kgc_array_data(arg), kgc_array_data(s[0]), N * sizeof(int32_t));
		}
		T_ASSERT_EQ(kgc_stats_get(nt_heap, &st0, sizeof(st0)), 0);
		got = 0;
		if (round == 1)
			T_ASSERT_EQ(re.l_i(nt_thread, rm, arg, &got), 0);
		else
			T_ASSERT_EQ(ce.l_i(nt_thread, cm, arg, &got), 0);
		if (got == -1)
			T_FAIL("round %d: collections did not complete during the call", round);
		if (got == -2)
			T_FAIL("round %d: the array changed while the native held it", round);
		if (got == -3)
			T_FAIL("round %d: a collection freed the array while the native held it", round);
		T_ASSERT_EQ(got, want);
		if (round < 2)	/* pinned: still where the native saw it */
			T_ASSERT(kgc_array_data(s[0]) == seen_elems);
		T_ASSERT_EQ(kgc_stats_get(nt_heap, &st1, sizeof(st1)), 0);
		printf("round %d: %llu young + %llu full collections during the call, "
		       "%llu regions failed evacuation (pinned)\n", round,
		       (unsigned long long)(st1.young_gcs - st0.young_gcs),
		       (unsigned long long)(st1.full_gcs - st0.full_gcs),
		       (unsigned long long)(st1.evac_fail_pinned - st0.evac_fail_pinned));
		T_ASSERT(st1.young_gcs + st1.full_gcs >= st0.young_gcs + st0.full_gcs + NGC);
	}
	atomic_store(&nt_stop, 1);
	kgc_enter_native(nt_thread);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(nt_thread);
	T_ASSERT_EQ(kgc_stats_get(nt_heap, &st1, sizeof(st1)), 0);
	T_ASSERT_EQ(st1.regions_pinned, 0);
	T_ASSERT_EQ(kgc_collect(nt_thread, KGC_GC_FULL), 0);
	T_ASSERT_EQ(sum(kgc_array_data(s[0]), N), want);
	T_ASSERT_EQ(kgc_frame_pop(nt_thread, &f), 0);
	nt_teardown();
	puts("ok");
	return 0;
}
