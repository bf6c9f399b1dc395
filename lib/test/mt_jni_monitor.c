/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_monitor: MonitorEnter/MonitorExit exclude each other across four
 * threads attached through the JavaVM while collections move the locked
 * object: an unsynchronised read-modify-write of a field under the
 * monitor (entered twice: reentrant) loses no increment. MonitorExit by a
 * thread that does not own the monitor throws IllegalMonitorStateException.
 */
#include <sched.h>
#include "jni_test.h"

#define NTHREADS 4
#define ROUNDS 3000

static jobject lock_obj;	/* a global ref to a kgc/Counter */
static jfieldID count_f;
static atomic_int failures;

static void *worker(void *arg)
{
	JNIEnv *env;

	if ((*jt_vm)->AttachCurrentThread(jt_vm, (void **)&env, NULL) != JNI_OK)
		abort();
	for (int i = 0; i < ROUNDS; i++) {
		jint v;

		if ((*env)->MonitorEnter(env, lock_obj) || (*env)->MonitorEnter(env, lock_obj))
			atomic_fetch_add(&failures, 1);
		v = (*env)->GetIntField(env, lock_obj, count_f);
		if (!(i & 63)) {
			(*env)->PushLocalFrame(env, 2);
			(*env)->NewByteArray(env, 200000);	/* collections while held */
			(*env)->PopLocalFrame(env, NULL);
			sched_yield();
		}
		(*env)->SetIntField(env, lock_obj, count_f, v + 1);
		if ((*env)->MonitorExit(env, lock_obj) || (*env)->MonitorExit(env, lock_obj))
			atomic_fetch_add(&failures, 1);
	}
	/* not owned any more */
	if ((*env)->MonitorExit(env, lock_obj) != JNI_ERR || !(*env)->ExceptionCheck(env) ||
	    !(*env)->IsInstanceOf(env, (*env)->ExceptionOccurred(env),
				  (*env)->FindClass(env, "java/lang/IllegalMonitorStateException")))
		atomic_fetch_add(&failures, 1);
	(*env)->ExceptionClear(env);
	(*jt_vm)->DetachCurrentThread(jt_vm);
	return NULL;
}

int main(void)
{
	static const struct kgc_jni_field_def f[] = { { .name = "count", .sig = "I" } };
	struct kgc_jni_class_def d = { .size = sizeof(d), .name = "kgc/Counter", .fields = f,
				       .nfields = 1 };
	struct kgc_stats s0, s1;
	pthread_t th[NTHREADS];
	JNIEnv *env;
	jclass c;

	jt_setup(128u << 20, 2u << 20);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &d), 0);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	T_ASSERT_EQ((*env)->PushLocalFrame(env, 4), 0);
	c = (*env)->FindClass(env, "kgc/Counter");
	count_f = (*env)->GetFieldID(env, c, "count", "I");
	lock_obj = (*env)->NewGlobalRef(env, (*env)->AllocObject(env, c));
	(*env)->PopLocalFrame(env, NULL);
	T_ASSERT(lock_obj && count_f);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s0, sizeof(s0)), 0);
	kgc_enter_native(jt_t);
	for (long i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, worker, NULL), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	kgc_leave_native(jt_t);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s1, sizeof(s1)), 0);
	T_ASSERT_EQ(atomic_load(&failures), 0);
	T_ASSERT_EQ((*env)->GetIntField(env, lock_obj, count_f), NTHREADS * ROUNDS);
	printf("%d increments under the monitor, %llu collections meanwhile\n", NTHREADS * ROUNDS,
	       (unsigned long long)(s1.young_gcs - s0.young_gcs));
	T_ASSERT(s1.young_gcs > s0.young_gcs);
	(*env)->DeleteGlobalRef(env, lock_obj);
	jt_teardown();
	printf("mt_jni_monitor: ok\n");
	return 0;
}
