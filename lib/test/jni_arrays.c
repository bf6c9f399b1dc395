/* SPDX-License-Identifier: MIT */
/*
 * jni_arrays: the array functions of libkgc-jni for every primitive type:
 * New<T>Array, Set/Get<T>ArrayRegion, Get<T>ArrayElements released with 0
 * (written back, freed), JNI_COMMIT (written back, kept) and JNI_ABORT
 * (dropped), GetArrayLength, GetPrimitiveArrayCritical; a region out of
 * bounds throws ArrayIndexOutOfBoundsException and a negative length
 * NegativeArraySizeException; object arrays with an initial element,
 * Get/SetObjectArrayElement.
 */
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))

static int exc_is(JNIEnv *env, const char *cls)
{
	jthrowable e = (*env)->ExceptionOccurred(env);
	int ok;

	if (!e)
		return 0;
	(*env)->ExceptionClear(env);
	ok = (*env)->IsInstanceOf(env, e, (*env)->FindClass(env, cls));
	return ok;
}

#define ONE_TYPE(N, T) do { \
	T in[8], out[8], *el; \
	T##Array a = (*env)->New##N##Array(env, 8); \
	jboolean copy = 0; \
	for (int i = 0; i < 8; i++) \
		in[i] = (T)(i * 3 + 1); \
	if (!a || (*env)->GetArrayLength(env, a) != 8) \
		return __LINE__; \
	(*env)->Set##N##ArrayRegion(env, a, 0, 8, in); \
	memset(out, 0, sizeof(out)); \
	(*env)->Get##N##ArrayRegion(env, a, 2, 5, out); \
	if (memcmp(out, in + 2, 5 * sizeof(T))) \
		return __LINE__; \
	el = (*env)->Get##N##ArrayElements(env, a, &copy); \
	if (!el || memcmp(el, in, sizeof(in))) \
		return __LINE__; \
	el[0] = (T)100; \
	(*env)->Release##N##ArrayElements(env, a, el, JNI_ABORT); \
	(*env)->Get##N##ArrayRegion(env, a, 0, 1, out); \
	if (out[0] != in[0]) \
		return __LINE__; \
	el = (*env)->Get##N##ArrayElements(env, a, NULL); \
	el[1] = (T)101; \
	(*env)->Release##N##ArrayElements(env, a, el, JNI_COMMIT); \
	(*env)->Get##N##ArrayRegion(env, a, 1, 1, out); \
	if (out[0] != (T)101) \
		return __LINE__; \
	el[2] = (T)102; \
	(*env)->Release##N##ArrayElements(env, a, el, 0); \
	(*env)->Get##N##ArrayRegion(env, a, 2, 1, out); \
	if (out[0] != (T)102) \
		return __LINE__; \
	el = (*env)->GetPrimitiveArrayCritical(env, a, NULL); \
	el[7] = (T)107; \
	(*env)->ReleasePrimitiveArrayCritical(env, a, el, 0); \
	(*env)->Get##N##ArrayRegion(env, a, 7, 1, out); \
	if (out[0] != (T)107) \
		return __LINE__; \
	(*env)->Get##N##ArrayRegion(env, a, 5, 4, out); \
	if (!exc_is(env, "java/lang/ArrayIndexOutOfBoundsException")) \
		return __LINE__; \
	(*env)->Set##N##ArrayRegion(env, a, -1, 1, in); \
	if (!exc_is(env, "java/lang/ArrayIndexOutOfBoundsException")) \
		return __LINE__; \
	if ((*env)->New##N##Array(env, -1) || !exc_is(env, "java/lang/NegativeArraySizeException")) \
		return __LINE__; \
} while (0)

EXPORT jint Java_kgc_Arrays_prims(JNIEnv *env, jclass c)
{
	ONE_TYPE(Boolean, jboolean);
	ONE_TYPE(Byte, jbyte);
	ONE_TYPE(Char, jchar);
	ONE_TYPE(Short, jshort);
	ONE_TYPE(Int, jint);
	ONE_TYPE(Long, jlong);
	ONE_TYPE(Float, jfloat);
	ONE_TYPE(Double, jdouble);
	return 0;
}

EXPORT jint Java_kgc_Arrays_objects(JNIEnv *env, jclass c)
{
	jstring init = (*env)->NewStringUTF(env, "init"), other = (*env)->NewStringUTF(env, "x");
	jobjectArray a = (*env)->NewObjectArray(env, 5, (*env)->FindClass(env, "java/lang/String"),
						init);
	jobject e;

	if (!a || (*env)->GetArrayLength(env, a) != 5)
		return __LINE__;
	for (int i = 0; i < 5; i++) {
		e = (*env)->GetObjectArrayElement(env, a, i);
		if (!(*env)->IsSameObject(env, e, init))
			return __LINE__;
	}
	(*env)->SetObjectArrayElement(env, a, 3, other);
	(*env)->SetObjectArrayElement(env, a, 4, NULL);
	if (!(*env)->IsSameObject(env, (*env)->GetObjectArrayElement(env, a, 3), other) ||
	    (*env)->GetObjectArrayElement(env, a, 4))
		return __LINE__;
	(*env)->GetObjectArrayElement(env, a, 5);
	if (!exc_is(env, "java/lang/ArrayIndexOutOfBoundsException"))
		return __LINE__;
	/* a byte[] is no Object[]: unchecked mode throws IllegalArgumentException */
	(*env)->GetObjectArrayElement(env, (jobjectArray)(*env)->NewByteArray(env, 2), 0);
	if (!exc_is(env, "java/lang/IllegalArgumentException"))
		return __LINE__;
	return 0;
}

int main(void)
{
	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Arrays", "prims", "()I", KGC_JNI_STATIC), NULL), 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Arrays", "objects", "()I", KGC_JNI_STATIC), NULL), 0);
	jt_teardown();
	printf("jni_arrays: ok\n");
	return 0;
}
