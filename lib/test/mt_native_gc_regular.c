/* SPDX-License-Identifier: MIT */
/*
 * A collection forced from another thread while a regular native runs:
 * the native (in native state) does not hold the collection up; afterwards
 * its handle arguments resolve to the moved objects (checked against a
 * global ref taken before, with from-space poisoned) and the env still
 * allocates and reads.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "native_test.h"

#define OFF_X 8
#define OFF_NEXT 16
#define TIMEOUT_MS 60000

static kgc_type_id point;
static atomic_int phase;		/* 1: native running, 2: GCs done */
static atomic_int gcs;

static int wait_phase(int want)
{
	for (int ms = 0; ms < TIMEOUT_MS; ms++) {
		if (atomic_load(&phase) >= want)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* returns a code: 0 ok, negative: what failed */
static int32_t n_hold(kgc_env *env, kgc_jclass cls, kgc_jobject pt, kgc_jobject arr)
{
	kgc_jobject g_pt = (*env)->NewGlobalRef(env, pt);
	kgc_jobject g_arr = (*env)->NewGlobalRef(env, arr);
	kgc_jobject fresh, inner;
	union kgc_value x;
	int32_t v[64];
	int32_t rc = 0;

	atomic_store(&phase, 1);
	if (wait_phase(2))
		return -1;	/* the collections never completed: they waited for us */
	if (atomic_load(&gcs) < 2)
		return -2;
	/* handles were updated like the global refs */
	if (!(*env)->IsSameObject(env, pt, g_pt) || !(*env)->IsSameObject(env, arr, g_arr))
		rc = -3;
	else if ((*env)->GetField(env, pt, OFF_X, 'I', &x) || x.i != 1234)
		rc = -4;
	else if ((*env)->GetArrayRegion(env, arr, 'I', 0, 64, v))
		rc = -5;
	for (int i = 0; !rc && i < 64; i++)
		if (v[i] != i * 7)
			rc = -6;
	inner = (*env)->GetObjectField(env, pt, OFF_NEXT);
	if (!rc && (!inner || (*env)->GetField(env, inner, OFF_X, 'I', &x) || x.i != 99))
		rc = -7;
	fresh = (*env)->AllocObject(env, point);
	if (!rc && !fresh)
		rc = -8;
	(*env)->DeleteGlobalRef(env, g_pt);
	(*env)->DeleteGlobalRef(env, g_arr);
	return rc;
}

static void *gc_thread(void *arg)
{
	kgc_thread *t;

	if (kgc_thread_attach(nt_heap, "gc", &t))
		abort();
	kgc_enter_native(t);
	while (atomic_load(&phase) < 1)
		usleep(1000);
	kgc_leave_native(t);
	if (kgc_collect(t, KGC_GC_YOUNG))
		abort();
	atomic_fetch_add(&gcs, 1);
	if (kgc_collect(t, KGC_GC_FULL))
		abort();
	atomic_fetch_add(&gcs, 1);
	atomic_store(&phase, 2);
	kgc_thread_detach(t);
	return NULL;
}

int main(void)
{
	struct kgc_type_desc d = { .name = "Point", .payload_size = 16, .nrefs = 1,
				   .ref_offsets = (const uint32_t[]){ OFF_NEXT } };
	struct kgc_stats st0, st1;
	union kgc_value a[2], r;
	uintptr_t before_pt, before_arr;
	struct kgc_frame f;
	kgc_obj s[2], inner;
	kgc_method *m;
	pthread_t th;

	setenv("KGC_POISON", "1", 0);
	nt_setup();
	T_ASSERT_EQ(kgc_type_register(nt_heap, &d, &point), 0);
	m = nt_reg("kgc/test/Gc", "hold", "(Lkgc/test/Point;[I)I", n_hold, KGC_NATIVE_STATIC);

	kgc_frame_push(nt_thread, &f, s, 2, NULL);
	s[0] = kgc_alloc(nt_thread, point);
	KGC_FIELD(s[0], OFF_X, int32_t) = 1234;
	s[1] = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 64);
	for (int i = 0; i < 64; i++)
		((int32_t *)kgc_array_data(s[1]))[i] = i * 7;
	inner = kgc_alloc(nt_thread, point);
	KGC_FIELD(inner, OFF_X, int32_t) = 99;
	kgc_set_ref(nt_thread, s[0], OFF_NEXT, inner);
	before_pt = (uintptr_t)s[0];
	before_arr = (uintptr_t)s[1];
	T_ASSERT_EQ(kgc_stats_get(nt_heap, &st0, sizeof(st0)), 0);

	T_ASSERT_EQ(pthread_create(&th, NULL, gc_thread, NULL), 0);
	a[0].l = s[0];
	a[1].l = s[1];
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	kgc_enter_native(nt_thread);	/* never hold up a collection while joining */
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(nt_thread);
	if (r.i)
		T_FAIL("native reported %d", r.i);
	T_ASSERT_EQ(kgc_stats_get(nt_heap, &st1, sizeof(st1)), 0);
	T_ASSERT(st1.young_gcs > st0.young_gcs);
	T_ASSERT(st1.full_gcs > st0.full_gcs);
	/* the objects did move (young evacuation), so the handles were exercised */
	printf("point %#lx -> %p, array %#lx -> %p\n", (unsigned long)before_pt, (void *)s[0],
	       (unsigned long)before_arr, (void *)s[1]);
	T_ASSERT((uintptr_t)s[0] != before_pt);
	T_ASSERT((uintptr_t)s[1] != before_arr);
	T_ASSERT_EQ(KGC_FIELD(s[0], OFF_X, int32_t), 1234);
	T_ASSERT_EQ(kgc_frame_pop(nt_thread, &f), 0);
	nt_teardown();
	puts("ok");
	return 0;
}
