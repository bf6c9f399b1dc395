/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_attach: the JNI invocation interface on kgc thread attach. Four
 * OS threads never attached to the heap call AttachCurrentThread (one
 * AsDaemon) and get a JNIEnv (GetEnv returns the same one), then allocate
 * strings and arrays through it - collecting as they go, in native state
 * between calls - and DetachCurrentThread; GetEnv then says
 * JNI_EDETACHED. While they are attached kgc_jni_vm_destroy is -EBUSY. A
 * thread the runtime attached cannot be detached through JNI; an unknown
 * version is JNI_EVERSION.
 */
#include "jni_test.h"

#define NTHREADS 4

static pthread_barrier_t attached, checked;
static atomic_int failures;

static void *worker(void *arg)
{
	long id = (long)arg;
	JavaVMAttachArgs a = { .version = JNI_VERSION_1_8, .name = "jni-worker" };
	JNIEnv *env = NULL, *env2 = NULL;
	jint rc;

	rc = id == 0 ? (*jt_vm)->AttachCurrentThreadAsDaemon(jt_vm, (void **)&env, &a)
		     : (*jt_vm)->AttachCurrentThread(jt_vm, (void **)&env, &a);
	if (rc != JNI_OK || !env ||
	    (*jt_vm)->GetEnv(jt_vm, (void **)&env2, JNI_VERSION_1_6) != JNI_OK || env2 != env)
		atomic_fetch_add(&failures, 1);
	pthread_barrier_wait(&attached);
	pthread_barrier_wait(&checked);
	for (int i = 0; i < 300; i++) {
		char want[32], got[32];
		jstring s;
		jbyteArray b;
		jbyte *p;

		(*env)->PushLocalFrame(env, 8);
		snprintf(want, sizeof(want), "t%ld-%d", id, i);
		s = (*env)->NewStringUTF(env, want);
		b = (*env)->NewByteArray(env, 16384 + i);
		p = (*env)->GetPrimitiveArrayCritical(env, b, NULL);
		p[i] = (jbyte)i;
		(*env)->ReleasePrimitiveArrayCritical(env, b, p, 0);
		(*env)->NewByteArray(env, 100000);	/* garbage: collections */
		(*env)->GetStringUTFRegion(env, s, 0, (*env)->GetStringLength(env, s), got);
		if (strcmp(got, want) || (*env)->GetArrayLength(env, b) != 16384 + i)
			atomic_fetch_add(&failures, 1);
		(*env)->PopLocalFrame(env, NULL);
	}
	if ((*jt_vm)->DetachCurrentThread(jt_vm) != JNI_OK ||
	    (*jt_vm)->GetEnv(jt_vm, (void **)&env2, JNI_VERSION_1_6) != JNI_EDETACHED || env2)
		atomic_fetch_add(&failures, 1);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	struct kgc_stats s0, s1;
	JNIEnv *env, *env2;

	jt_setup(256u << 20, 2u << 20);
	pthread_barrier_init(&attached, NULL, NTHREADS + 1);
	pthread_barrier_init(&checked, NULL, NTHREADS + 1);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s0, sizeof(s0)), 0);
	/* the runtime's own thread */
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	T_ASSERT_EQ((*jt_vm)->GetEnv(jt_vm, (void **)&env2, JNI_VERSION_10), JNI_OK);
	T_ASSERT(env2 == env);
	T_ASSERT_EQ((*jt_vm)->GetEnv(jt_vm, (void **)&env2, 0x7fff0000), JNI_EVERSION);
	T_ASSERT_EQ((*jt_vm)->DetachCurrentThread(jt_vm), JNI_ERR);

	kgc_enter_native(jt_t);
	for (long i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	pthread_barrier_wait(&attached);
	kgc_leave_native(jt_t);
	T_ASSERT_EQ(kgc_jni_vm_destroy(jt_vm, jt_t), -EBUSY);
	T_ASSERT(strstr(kgc_last_error(), "AttachCurrentThread"));
	kgc_enter_native(jt_t);
	pthread_barrier_wait(&checked);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	kgc_leave_native(jt_t);
	T_ASSERT_EQ(atomic_load(&failures), 0);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s1, sizeof(s1)), 0);
	printf("%d attached threads: %llu collections\n", NTHREADS,
	       (unsigned long long)(s1.young_gcs + s1.full_gcs - s0.young_gcs - s0.full_gcs));
	T_ASSERT(s1.young_gcs > s0.young_gcs);
	jt_teardown();
	printf("mt_jni_attach: ok\n");
	return 0;
}
