/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_entry: the prepared (I)I entry (kgc_native_entry, KGC_NATIVE_SHAPE_I_I)
 * of a JNI native - the bridge's hooked stub that gives it the thread's
 * JNIEnv and its class - while another thread allocates and collects: the
 * native gets its class (IsSameObject with FindClass), makes more locals
 * than the 16 a call promises (its local frame ends with the call: the
 * locals of 20000 calls do not pile up), a ThrowNew comes back as -EPROTO
 * with the class and message, the next call is clean; results equal
 * kgc_native_call's. Debian's lz4-java LZ4_compressBound through the entry
 * equals the formula, where liblz4-jni is installed.
 */
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))
#define LZ4_SO "/usr/lib/x86_64-linux-gnu/jni/liblz4-java.so"

EXPORT jint Java_kgc_Entry_scale(JNIEnv *env, jclass cls, jint x)
{
	jstring s = NULL;

	if (!(*env)->IsSameObject(env, cls, (*env)->FindClass(env, "kgc/Entry")))
		return -1;
	if (x < 0) {
		(*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalArgumentException"),
				 "negative");
		return 0;
	}
	for (int i = 0; i < 20; i++)	/* more than the 16 locals promised */
		s = (*env)->NewStringUTF(env, "local");
	if (!s || (*env)->GetStringUTFLength(env, s) != 5)
		return -2;
	return 3 * x + 1;
}

int main(void)
{
	unsigned long long seed = t_seed();
	union kgc_native_entry e;
	kgc_method *m;
	pthread_t gc;
	int32_t got;

	jt_setup(256u << 20, 8u << 20);
	m = jt_method("kgc/Entry", "scale", "(I)I", KGC_JNI_STATIC);
	T_ASSERT_EQ(kgc_native_entry(m, KGC_NATIVE_SHAPE_I_I, &e), 0);
	T_ASSERT_EQ(kgc_native_entry(m, KGC_NATIVE_SHAPE_V, &(union kgc_native_entry){ 0 }), -EINVAL);
	T_ASSERT_EQ(pthread_create(&gc, NULL, jt_gc_thread, (void *)(uintptr_t)(seed + 1)), 0);
	for (int i = 0; i < 20000; i++) {
		int32_t x = (int32_t)(t_rand(&seed) % 100000);

		got = -3;
		T_ASSERT_EQ(e.i_i(jt_t, m, x, &got), 0);
		if (got != 3 * x + 1)
			T_FAIL("call %d: scale(%d) = %d, want %d", i, x, got, 3 * x + 1);
		if (!(i % 1000))
			T_ASSERT_EQ(jt_call_i(m, (union kgc_value[]){ { .i = x } }), got);
	}
	jt_wait_gcs(2);		/* collections ran meanwhile */
	T_ASSERT_EQ(e.i_i(jt_t, m, -5, &got), -EPROTO);
	T_ASSERT(jt_exc_class() && !strcmp(jt_exc_class(), "java/lang/IllegalArgumentException"));
	T_ASSERT(!strcmp(kgc_native_exception_message(jt_t), "negative"));
	kgc_native_exception_clear(jt_t);
	T_ASSERT_EQ(e.i_i(jt_t, m, 4, &got), 0);
	T_ASSERT_EQ(got, 13);
	if (!access(LZ4_SO, R_OK)) {
		kgc_method *b;

		T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, LZ4_SO), 0);
		b = jt_method("net/jpountz/lz4/LZ4JNI", "LZ4_compressBound", "(I)I", KGC_JNI_STATIC);
		T_ASSERT_EQ(kgc_native_entry(b, KGC_NATIVE_SHAPE_I_I, &e), 0);
		for (int32_t n = 0; n < 1 << 20; n += 4099) {
			T_ASSERT_EQ(e.i_i(jt_t, b, n, &got), 0);
			T_ASSERT_EQ(got, n + n / 255 + 16);
		}
	} else {
		printf("%s not installed: its part skipped (apt-get install liblz4-jni)\n", LZ4_SO);
	}
	atomic_store(&jt_stop, 1);
	kgc_enter_native(jt_t);
	pthread_join(gc, NULL);
	kgc_leave_native(jt_t);
	jt_teardown();
	printf("mt_jni_entry: ok\n");
	return 0;
}
