/* SPDX-License-Identifier: MIT */
/*
 * A JNI library for jni_onload (built as build/<san>/test-so/libjni_onload.so):
 * JNI_OnLoad keeps a global reference made through GetEnv and returns the
 * version in JNI_ONLOAD_VERSION (default JNI 1.8); JNI_OnUnload deletes it.
 * Counts both for the test.
 */
#include <jni.h>
#include <stdlib.h>

static int loads, unloads;
static jobject kept;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	const char *v = getenv("JNI_ONLOAD_VERSION");
	JNIEnv *env;

	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return JNI_ERR;
	kept = (*env)->NewGlobalRef(env, (*env)->NewStringUTF(env, "kept by JNI_OnLoad"));
	loads++;
	return v ? (jint)strtol(v, NULL, 0) : JNI_VERSION_1_8;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved)
{
	JNIEnv *env;

	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) == JNI_OK && kept) {
		(*env)->DeleteGlobalRef(env, kept);
		kept = NULL;
	}
	unloads++;
}

JNIEXPORT jint JNICALL Java_kgc_OnLoad_keptLength(JNIEnv *env, jclass c)
{
	return kept ? (*env)->GetStringLength(env, kept) : -1;
}

JNIEXPORT int jni_onload_count(int unload)
{
	return unload ? unloads : loads;
}
